/*
 * eddy_shared.h: constants shared by the host code and the OpenCL kernels.
 *
 * This one header is included by the C++ sources and is prepended (embedded at
 * build time) to every kernel source handed to the OpenCL compiler, so no value
 * is ever written twice. Keep it plain C preprocessor + integer/float literals.
 */
#ifndef EDDY_SHARED_H
#define EDDY_SHARED_H

/* ---- N-body ---------------------------------------------------------------- */
/* Default work-group size of the tiled gravity kernel (one tile = one group). */
#define EDDY_NBODY_DEFAULT_WG 256
/* Default number of bodies each work-item integrates (register blocking). */
#define EDDY_NBODY_DEFAULT_BPI 1
/* Work-group size of the simple per-body kernels (drift, potential). */
#define EDDY_LINEAR_WG 64
/* Flags of nbody_gravity_part (multi-device N-body): the first block of sources
 * starts the sum from zero, the last one applies G and the closing half kick. */
#define EDDY_NBODY_PART_FIRST 1u
#define EDDY_NBODY_PART_LAST 2u

#endif /* EDDY_SHARED_H */
