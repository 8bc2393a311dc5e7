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

/* N-body tree (kernels/nbody_tree.cl, sim/nbody_tree.cpp). */
/* The group walk (kernels/nbody/nbody_tree.cl, tree_walk): work-group size,
 * most bodies per group (a multiple of the work-group size), the largest
 * opened node whose bodies go to the body list instead of its children, and
 * the entries of the node stack in local memory (ints). H200, 1M Plummer
 * bodies, theta 0.5, walk ms: 4.33 as (64, 64, 16); 4.16 with 32 items x 2
 * bodies; 4.73 with 32-body groups; 4.26 with 128 (64 x 2); 4.51 with 128
 * x 1; 4.11 with buckets of 8, 5.14 of 32 (docs/PERFORMANCE.md). */
#define EDDY_TREE_W 64
#define EDDY_TREE_NCRIT 64
#define EDDY_TREE_NLEAF 8
#define EDDY_TREE_STACK 2048
/* Work-group size and number of work-groups of the bounding-box reduction. */
#define EDDY_TREE_BOUNDS_WG 256
#define EDDY_TREE_BOUNDS_GROUPS 256
/* Morton key: bits per axis (3 x 21 = 63-bit keys) and the key width. */
#define EDDY_TREE_AXIS_BITS 21
#define EDDY_TREE_KEY_BITS 63
/* method=auto takes the tree from this many bodies on (measured step times at
 * theta 0.5, docs/PERFORMANCE.md): GPUs (H200: direct 0.59 ms / tree 0.73 ms
 * at 32768, direct 2.33 ms / tree 0.87 ms at 65536) and CPU devices (PoCL on
 * 2 shared cores: about equal at 3072, tree 55-61 / direct 79-82 ms at 4096). */
#define EDDY_TREE_AUTO_MIN_GPU 65536
#define EDDY_TREE_AUTO_MIN_CPU 4096
/* The diagnostics of the tree method take the potential from the tree walk
 * from this many bodies on, where the direct sum's N^2 double-precision pair
 * terms get too slow for a diagnostics row (host only; docs/PERFORMANCE.md). */
#define EDDY_TREE_PHI_MIN_GPU 262144
#define EDDY_TREE_PHI_MIN_CPU 16384
/* parent[] of the root. */
#define EDDY_TREE_NONE 0xffffffffu

/* ---- SPH ------------------------------------------------------------------- */
/* Work-group size of the per-particle SPH kernels (hash, reorder, cells,
 * neighbours, density, forces, integrate). */
#define EDDY_SPH_WG 128
/* Radix sort: digit width, buckets, work-group size of the sort kernels and
 * the most work-groups one pass uses (the scan kernel sees RADIX * groups
 * entries in one work-group). */
#define EDDY_RADIX_BITS 4
#define EDDY_RADIX (1 << EDDY_RADIX_BITS)
#define EDDY_SORT_WG 256
#define EDDY_SORT_MAX_GROUPS 1024
/* Up to this many keys one work-group sorts in one launch (radix_sort_local). */
#define EDDY_SORT_LOCAL_MAX 8192
/* ... and up to this many by the bitonic network (bitonic_sort_chunks: one
 * packed word of key bits and position per key), when the key bits and the
 * position fit one 32-bit word, in chunks of EDDY_SORT_CHUNK words sorted in
 * local memory by one work-group each (4 bytes a word) and merged by rank. */
#define EDDY_SORT_BITONIC_MAX 16384
#define EDDY_SORT_CHUNK 1024
/* Cell table entry of an empty cell: (start, end) = (EMPTY, 0), so that the
 * min/max of starts/ends over a row of cells skips it and a loop
 * "for j = start; j < end" runs zero times. */
#define EDDY_SPH_EMPTY_CELL 0xffffffffu
/* Cells per work-group of the counting sort's tile kernels (sph_cell_sums,
 * sph_cell_table: kernels/sph/sph_cells.cl); a multiple of EDDY_SPH_WG. */
#define EDDY_SPH_CELL_TILE 2048
/* Default capacity of the neighbour list (entries per particle, self included). */
#define EDDY_SPH_NLIST_CAP 96
/* Where entry k of particle i's neighbour list lies (and its pair gradient,
 * sph_dfsph.cl), n particles: column-major in groups of G =
 * EDDY_SPH_LIST_GROUP entries (a power of two),
 *
 *     slot(k, i) = ((k / G) n + i) G + k mod G
 *
 *     G = 1: k n + i, the k-th entries of consecutive particles adjacent:
 *            a list round of 32 particles reads one 128-byte line, each
 *            round from a place n entries on;
 *     G = 2 (the default): entries 0-1 of particle i are 8 contiguous
 *            bytes, those of i + 1 the next 8, ...; entries 2-3 follow
 *            n G entries on: two rounds of 32 particles read the same
 *            256 contiguous bytes;
 *     G = 4: the same with 16-byte groups: four rounds, 512 bytes.
 *
 * Chosen by measurement (docs/PERFORMANCE.md, session 45, H100): against
 * G = 1, G = 2 took 7.6-9.7 % off DFSPH's velocity passes and about 4 % off
 * spheric_dam_break's DFSPH wall time; G = 4 made the rate passes and the
 * neighbours phase slower (a net loss); G = 8 was not measured. A
 * developer may try another group (#ifndef: EDDY_CL_OPTIONS=-DEDDY_SPH_LIST_GROUP=4u sets it for the
 * kernels of a binary built with the default; only host code that reads a
 * list, i.e. the tests, then disagrees). Buffers hold
 * n * EDDY_SPH_LIST_ROUNDUP(cap) entries, a multiple of
 * EDDY_SPH_LIST_GROUP_MAX, so that any group up to that fits. Plain
 * unsigned arithmetic: the host (tests, readers) and the kernels use the
 * same macro. */
#ifndef EDDY_SPH_LIST_GROUP
#define EDDY_SPH_LIST_GROUP 2u
#endif
#define EDDY_SPH_LIST_GROUP_MAX 8u
#define EDDY_SPH_LIST_SLOT(k, i, n)                                                             \
    (((size_t)((k) / EDDY_SPH_LIST_GROUP) * (size_t)(n) + (size_t)(i)) * EDDY_SPH_LIST_GROUP + \
     (size_t)((k) % EDDY_SPH_LIST_GROUP))
#define EDDY_SPH_LIST_ROUNDUP(cap)                                                              \
    (((cap) + EDDY_SPH_LIST_GROUP_MAX - 1u) / EDDY_SPH_LIST_GROUP_MAX * EDDY_SPH_LIST_GROUP_MAX)
/* Indices into the SPH counter buffer (uint each). */
#define EDDY_SPH_CNT_ESCAPED 0     /* integrate: outside the tank or non-finite, put back */
#define EDDY_SPH_CNT_OUT_OF_GRID 1 /* hash: outside the grid, clamped into it */
#define EDDY_SPH_CNT_OVERFLOW 2    /* neighbours: entries beyond the list capacity */
#define EDDY_SPH_CNT_MAX_A2 3      /* forces: max |a|^2 of this step (float bits) */
#define EDDY_SPH_CNT_MAX_V2 4      /* forces: max |v|^2 of this step (float bits; WCSPH: max (|v| + c_i - c0)^2, sph_forces.cl) */
#define EDDY_SPH_CNT_PENETRATIONS 5 /* boundary_guard: inside a solid, put back outside */
/* forces: the fluid's extent along gravity (y), as the largest y and the largest
 * tank_height - y of this step (float bits, y clamped to the tank; 0 = none);
 * H = max_y + max_drop - tank_height for DFSPH's time step (sph_dfsph_dt). */
#define EDDY_SPH_CNT_MAX_Y 6
#define EDDY_SPH_CNT_MAX_DROP 7
/* integrate: of the ESCAPED ones, those that were non-finite (NaN or inf):
 * a blow-up (Simulation's finite check reports it; never only put back). */
#define EDDY_SPH_CNT_NONFINITE 8
#define EDDY_SPH_NUM_COUNTERS 9
/* Snapshots written before EDDY_SPH_CNT_NONFINITE existed hold this many. */
#define EDDY_SPH_NUM_COUNTERS_V1 8
/* Device clock (float each): time as a compensated (Kahan) sum hi + lo, the dt
 * of the last step, and the number of steps taken on the device. */
#define EDDY_SPH_CLOCK_T_HI 0
#define EDDY_SPH_CLOCK_T_LO 1
#define EDDY_SPH_CLOCK_DT 2
#define EDDY_SPH_CLOCK_SIZE 4
/* Cells are this much larger than the support radius h, so float rounding in
 * floor(x / cell) can never put two particles closer than h two cells apart. */
#define EDDY_SPH_CELL_SLACK 1.0001f

/* ---- Probes (kernels/sph/sph_probes.cl, sim/sph/probes.hpp) ------------- */
/* Work-group size of sph_probes: one work-group per probe. */
#define EDDY_PROBE_WG 64
/* Probe kinds (w of the probe's float4). */
#define EDDY_PROBE_PRESSURE 0
#define EDDY_PROBE_LEVEL 1
/* A pressure probe whose kernel sum sum_j V_j W_ij is below this reads 0
 * (dry): 1 % of a full support's sum (which is 1 in the bulk). */
#define EDDY_PROBE_DRY_SUM 0.01f
/* Level probe: the free surface is where the fluid fraction sum_j V_j W
 * crosses this value. */
#define EDDY_PROBE_LEVEL_FRACTION 0.5f
/* Words of a ring row before the probe values: step (uint bits), time hi, lo. */
#define EDDY_PROBE_ROW_HEAD 3
/* Probe state words (two copies, ping-pong): rows written, next sample index
 * of the --probe-dt cadence. */
#define EDDY_PROBE_ST_ROWS 0
#define EDDY_PROBE_ST_NEXT 1
#define EDDY_PROBE_STATE_SIZE 4
/* ---- Boundary particles and solids (kernels/sph/sph_boundary.cl) ------- */
/* The boundary particles' volume and pressure term (sph_boundary.cl,
 * SPH_BOUNDARY_BEGIN): psi_b = EDDY_SPH_BOUNDARY_VOLUME_SCALE x rho0 /
 * sum_k W_bk (Akinci et al. 2012 eq. 4: scale 1) and the pair term
 * f psi_b k_i grad W_ib with f = EDDY_SPH_BOUNDARY_PRESSURE_FACTOR = 2
 * (pressure mirroring: the boundary particle carries the fluid particle's
 * p / rho^2, as a mirror image does). Measured on a box 4 dx across in a
 * settled tank (tests/test_sph_obstacles.cpp, PoCL, 2026-12-01):
 *   scale 1, f = 2: pressure beside/above within 2.3 %, no penetration in
 *                   the dam break, force on the box +77 % of rho g V;
 *   scale 1, f = 1 (eq. 10 as printed): first layer above the box -13 %,
 *                   force +58 %;
 *   scale 1/2, f = 2 (the sheet weighing as a half-space): force +17 %,
 *                   but 171 penetrations in the dam break.
 * A sheet with Akinci's psi weighs rho0 at its surface, a whole fluid
 * half-space, so the fluid keeps a gap that adds to the solid's volume. */
#define EDDY_SPH_BOUNDARY_VOLUME_SCALE 1.0f
/* WCSPH's carried density (delta-SPH, sph_continuity.cl) never falls below
 * this fraction of rho0. Spray that breaks off the water expands in the
 * continuity equation: its carried density fell below 0 (-47 kg/m^3 in a slab
 * of spheric_dam_break, dx = 0.015 m, the jet against the ceiling), where the
 * delta-SPH weight V_j = m / rho_j is singular; a neighbour then jumped to
 * 3.3 rho0 at 22 m/s and the time step collapsed. Below rho0 the Tait pressure
 * is 0 anyway, so the floor only bounds V_j (at 2 m / rho0). Measured on the
 * dam break against a box (PoCL, 2026-12-01): densities 0.118 .. 1.097 rho0
 * without it, 0.5 .. 1.099 with it; a floor at rho0 pumped the splash up to
 * 1.38 rho0 (each expansion clipped, each compression kept). */
#define EDDY_SPH_CARRIED_DENSITY_FLOOR 0.5f
#define EDDY_SPH_BOUNDARY_PRESSURE_FACTOR 2.0f
/* One solid on the device: EDDY_SOLID_STRIDE float4 (sim/sph/boundary.hpp):
 * world position of the local origin, the rows of R (x_world = c + R x_local),
 * linear and angular velocity (world), the SDF grid's origin (xyz) and cell
 * (w), its dims (xyz) and first value (w) as uint bits, and the primitive
 * whose exact SDF the guard evaluates besides the grid's
 * (sph_solid_exact_sdf, sph_boundary_guard): xyz its sizes (box: half
 * extents; sphere: x the radius; cylinder along local y: x the radius, y
 * the half height), w the kind (EDDY_SOLID_KIND_*) as uint bits. */
/* The fluid keeps this many spacings outside a solid's geometric surface
 * (sph_boundary_guard puts a particle found closer back at that distance,
 * sph_boundary_contact slows one about to cross the surface so that it
 * arrives there). The same 0.25 dx as DFSPH's tank walls
 * (EDDY_DFSPH_WALL_CLEARANCE); a settled fluid's first layer rests about
 * 1.1 dx off the boundary particles, 0.4 dx off the surface at
 * boundary_inset 0.7, so the band only acts on fluid pressed against the
 * solid. */
#define EDDY_SOLID_CLEARANCE 0.25
#define EDDY_SOLID_STRIDE 9
#define EDDY_SOLID_POS 0
#define EDDY_SOLID_ROT 1
#define EDDY_SOLID_VEL 4
#define EDDY_SOLID_OMEGA 5
#define EDDY_SOLID_SDF 6
#define EDDY_SOLID_GRID 7
#define EDDY_SOLID_SHAPE 8
#define EDDY_SOLID_KIND_GRID 0u /* a mesh: the trilinear SDF grid */
#define EDDY_SOLID_KIND_BOX 1u
#define EDDY_SOLID_KIND_SPHERE 2u
#define EDDY_SOLID_KIND_CYLINDER 3u
/* sph_boundary_force: which pressure the fluid carries (WCSPH: rhop's p /
 * rho^2; DFSPH: the pressures its two solves applied this step, k + kv / dt). */
#define EDDY_BOUNDARY_FORCE_WCSPH 0u
#define EDDY_BOUNDARY_FORCE_DFSPH 1u

/* ---- DFSPH (kernels/sph/sph_dfsph.cl) ----------------------------------- */
/* Solver state (uint each): per solve (slot DIV or DEN) the iterations applied,
 * the "done" flag that turns the rest of the solve's launches into no-ops, the
 * last average error in percent (float bits), and the iterations the solve
 * applied in the step before (the host sizes a step's batches from the state
 * of two steps back: it never waits for the step just enqueued). */
#define EDDY_DFSPH_ST_ITER 0
#define EDDY_DFSPH_ST_DONE 1
#define EDDY_DFSPH_ST_ERR 2
#define EDDY_DFSPH_ST_PREV 3
#define EDDY_DFSPH_SLOT_DIV 0
#define EDDY_DFSPH_SLOT_DEN 4
#define EDDY_DFSPH_ST_DIV_ITER (EDDY_DFSPH_SLOT_DIV + EDDY_DFSPH_ST_ITER)
#define EDDY_DFSPH_ST_DIV_DONE (EDDY_DFSPH_SLOT_DIV + EDDY_DFSPH_ST_DONE)
#define EDDY_DFSPH_ST_DIV_ERR (EDDY_DFSPH_SLOT_DIV + EDDY_DFSPH_ST_ERR)
#define EDDY_DFSPH_ST_DIV_PREV (EDDY_DFSPH_SLOT_DIV + EDDY_DFSPH_ST_PREV)
#define EDDY_DFSPH_ST_DEN_ITER (EDDY_DFSPH_SLOT_DEN + EDDY_DFSPH_ST_ITER)
#define EDDY_DFSPH_ST_DEN_DONE (EDDY_DFSPH_SLOT_DEN + EDDY_DFSPH_ST_DONE)
#define EDDY_DFSPH_ST_DEN_ERR (EDDY_DFSPH_SLOT_DEN + EDDY_DFSPH_ST_ERR)
#define EDDY_DFSPH_ST_DEN_PREV (EDDY_DFSPH_SLOT_DEN + EDDY_DFSPH_ST_PREV)
#define EDDY_DFSPH_STATE_SIZE 8
/* The solver's control words, one uint buffer (one kernel argument: on
 * NVIDIA's OpenCL every buffer argument adds about 0.4 us to a launch's host
 * time, docs/PERFORMANCE.md): the state at 0, the rate kernel's two tickets
 * (finished work-groups, per solve) at EDDY_DFSPH_CTL_TICKET, its per-group
 * error sums (float bits) from EDDY_DFSPH_CTL_PARTIAL. */
#define EDDY_DFSPH_CTL_TICKET EDDY_DFSPH_STATE_SIZE
/* dfsph_density's ticket (the gradient renormalisation's sums). */
#define EDDY_DFSPH_CTL_TICKET_GRAD (EDDY_DFSPH_CTL_TICKET + 2)
/* The residual each solve's last check found (float bits, percent; the
 * divergence solve's, then the density solve's): what the solve stops on,
 * beside the error in its EDDY_DFSPH_ST_ERR (they differ only for the density
 * solve with density_relaxation < 1; sph_dfsph_rate). A diagnostic: not part
 * of the solver state a snapshot keeps. */
#define EDDY_DFSPH_CTL_RESIDUAL (EDDY_DFSPH_CTL_TICKET_GRAD + 1)
/* The pressure-gradient renormalisation C (float bits, a symmetric 3 x 3
 * matrix as xx, yy, zz, xy, xz, yz; the identity when off), the one the
 * kernels apply (CTL_GRAD) and the one dfsph_density measured this step
 * (CTL_GRAD_NEXT, made current by sph_dfsph_dt); see dfsph_gradient_measure. */
#define EDDY_DFSPH_CTL_GRAD 16
/* Its value when off or not yet measured (an initializer, host and device). */
#define EDDY_DFSPH_GRAD_IDENTITY {1.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f}
#define EDDY_DFSPH_CTL_GRAD_NEXT 22
/* Per-group sums from here: the rate kernel's (1 a group) and, earlier in
 * the step, dfsph_density's (EDDY_DFSPH_GRAD_SUMS a group). */
#define EDDY_DFSPH_CTL_PARTIAL 32
#define EDDY_DFSPH_GRAD_SUMS 8
/* Gradient renormalisation (gradient_correction = packing): the particles
 * whose sums enter the mean second moment have a full support, taken as a
 * summation density of at least EDDY_DFSPH_GRAD_FULL_SUPPORT rho0, no
 * boundary particle within h, and a moment s M_i whose smallest eigenvalue
 * is at least EDDY_DFSPH_GRAD_MIN_EIGEN (the free-surface test of Marrone et
 * al. 2010, "Fast free-surface detection and level-set function definition
 * in SPH solvers", JCP 229:3652: about 0.5 on a flat surface, 1 inside; a
 * settled column's surface layer sinks until its density reaches rho0 and
 * passes the density test alone, 0.44 along gravity in the hydrostatic
 * tank); the mean needs EDDY_DFSPH_GRAD_MIN_SAMPLES of them, and a C with
 * an entry off the identity's by more than EDDY_DFSPH_GRAD_LIMIT is not
 * applied (the identity is). */
#define EDDY_DFSPH_GRAD_FULL_SUPPORT 0.995f
#define EDDY_DFSPH_GRAD_MIN_EIGEN 0.75f
#define EDDY_DFSPH_GRAD_MIN_SAMPLES 64
#define EDDY_DFSPH_GRAD_LIMIT 0.1f
/* The per-particle values, one float buffer per order (the pipeline's
 * reorder writes the other) in rows of `kstride` floats (the capacity
 * rounded up to EDDY_DFSPH_K_ALIGN): from row EDDY_DFSPH_K_AUX the factor
 * pairs (float2, two rows), then the divergence unknown kv, the density
 * unknown k and the last change dk, and from row EDDY_DFSPH_K_BND the
 * boundary's sums of the step (float4, four rows; sph_dfsph_density). */
#define EDDY_DFSPH_K_ALIGN 64
#define EDDY_DFSPH_K_AUX 0
#define EDDY_DFSPH_K_DIV 2
#define EDDY_DFSPH_K_DEN 3
#define EDDY_DFSPH_K_DK 4
#define EDDY_DFSPH_K_BND 5
#define EDDY_DFSPH_K_ROWS 9
/* Iteration count before the first step (the host then gives a solve
 * max_iterations rounds). */
#define EDDY_DFSPH_UNKNOWN_ITER 0xffffffffu
/* The divergence solve leaves out particles with fewer neighbours than this
 * (real and wall images, self excluded; 32 on the lattice at h = 2.2 dx), as
 * SPlisHSPlasH does (20 in 3-D). */
#define EDDY_DFSPH_MIN_NEIGHBOURS 20
/* DFSPH wall clearance, in particle spacings: after the move, a particle
 * closer than this to a tank wall plane is reflected at that distance
 * (sph_walls_after_move with tank.w = clearance x spacing). Without it a
 * particle pressed into a wall or corner (the front of a dam break hitting
 * the far wall) comes to lie almost on its own mirror images: its density
 * counts itself two to four times while the kernel gradient towards the
 * images vanishes (Wendland: grad W -> 0 as r -> 0), so the Jacobi
 * updates, linear in that gradient, ask for huge k and eject it. Measured
 * (H200, SPHERIC-size dam break, dx = 0.01 m, docs/PERFORMANCE.md): without
 * it hundreds of particles left the impact at 40-64 m/s and the time step
 * fell to 7e-5 s (3 080 steps and 22 s for 1 simulated s); 0.25 dx: at
 * most 6.9 m/s, 1 134 steps, 10.4 s. Scenes start particles 0.5 dx from
 * the walls, so a clearance of 0.25 dx does not touch a settled fluid.
 * WCSPH keeps 0 (its Tait forces do not have the linearisation). */
#define EDDY_DFSPH_WALL_CLEARANCE 0.25
/* Warm start: the fraction of last step's k each solve starts from (the error
 * only counts compression, so an over-pressure carried over would go unseen:
 * SPlisHSPlasH also starts from half). Measured (PoCL, the hydrostatic tank of
 * tests/test_sph_physics.cpp): a density fraction of 0.8 or 1 halves the
 * iterations of a dam break but keeps the settled column oscillating (the
 * carried k integrates the compression step after step, an undamped loop),
 * also with an error that counts expansion where k > 0; 0.5 damps it.
 * (#ifndef: a developer may try others with EDDY_CL_OPTIONS=-D..., which the
 * kernels see; the host's tests then disagree.) */
#ifndef EDDY_DFSPH_WARM_DIV
#define EDDY_DFSPH_WARM_DIV 0.5f
#endif
#ifndef EDDY_DFSPH_WARM_DENSITY
#define EDDY_DFSPH_WARM_DENSITY 0.5f
#endif
/* Chebyshev acceleration (chebyshev_rho > 0) starts after this many plain
 * Jacobi iterations of a solve: a short solve (a settled tank's 2) stays
 * plain, a long one is accelerated. */
#ifndef EDDY_DFSPH_CHEB_DELAY
#define EDDY_DFSPH_CHEB_DELAY 3
#endif
/* Relaxation of the Jacobi updates (SPlisHSPlasH and IISPH use 0.5). */
#ifndef EDDY_DFSPH_OMEGA
#define EDDY_DFSPH_OMEGA 0.5f
#endif

/* ---- Lanes (kernels/sph/sph_common.cl) ----------------------------------- */
/* Neighbour-sum kernels give a particle several work-items on GPUs
 * (sim/sph/particles.cpp, sphLaneBits): up to 4 lanes while fewer than
 * EDDY_SPH_LANE_ITEMS_PER_CU work-items per compute unit would otherwise run,
 * then up to 2^EDDY_SPH_MAX_LANE_BITS while the launch stays within
 * EDDY_SPH_WIDE_LANE_ITEMS_PER_CU per compute unit. H200, 2026-12-01
 * (docs/PERFORMANCE.md): 4 lanes beat 1 at 6 750 - 101 306 particles; once
 * profiling events were sampled (the host no longer the limit), 16 lanes
 * were best at 6 750 particles, 8 at 9 826 - 16 000 and 4 from 24 334 on
 * (3 runs each, both solvers). */
#define EDDY_SPH_MAX_LANE_BITS 4
#define EDDY_SPH_LANE_ITEMS_PER_CU 2048
#define EDDY_SPH_WIDE_LANE_ITEMS_PER_CU 1024
/* The most lanes any launch uses (the developer aid EDDY_SPH_LANES included). */
#define EDDY_SPH_LANE_BITS_LIMIT 5

/* ---- Rigid bodies (kernels/sph/sph_bodies.cl, sim/sph/bodies.cpp) ------- */
/* Work-group size of the per-body kernels (body_reduce, body_contact: one
 * work-group per body) and of body_update_particles / body_integrate. */
#define EDDY_BODY_WG 128
/* Motion of a body (uint4 info.z): two-way coupled 6-DOF, a piston
 * x(t) = x0 + A sin(2 pi t / T + phase) along an axis, or a rotation at a
 * constant angular velocity about an axis through a point. */
#define EDDY_BODY_FLOATING 0u
#define EDDY_BODY_PISTON 1u
#define EDDY_BODY_ROTATE 2u
/* Shape of a body for body-body contact (uint4 info.w): the analytic signed
 * distance of the primitive; any other shape (a mesh) its bounding sphere. */
#define EDDY_BODY_SHAPE_BOX 0u
#define EDDY_BODY_SHAPE_SPHERE 1u
#define EDDY_BODY_SHAPE_CYLINDER 2u
#define EDDY_BODY_SHAPE_OTHER 3u
/* The device state of body b: EDDY_BODY_STRIDE float4 from b * STRIDE; the
 * static part of each (info) is a uint4 (first boundary particle, count,
 * motion, shape). World frame, SI units; quaternions are (x, y, z, w). */
#define EDDY_BODY_POS 0       /* centroid xyz; w = 1 / mass (0: kinematic) */
#define EDDY_BODY_QUAT 1      /* orientation, local -> world */
#define EDDY_BODY_VEL 2       /* centroid velocity xyz; w = mass */
#define EDDY_BODY_OMEGA 3     /* angular velocity xyz; w = bounding radius about the centroid */
#define EDDY_BODY_ANGMOM 4    /* angular momentum about the centroid (floating) */
#define EDDY_BODY_FORCE 5     /* fluid force (+ gravity if floating) of the last reduce */
#define EDDY_BODY_TORQUE 6    /* fluid torque about the centroid */
#define EDDY_BODY_INERTIA_D 7 /* local inertia about the centroid: Ixx, Iyy, Izz */
#define EDDY_BODY_INERTIA_O 8 /*   and Ixy, Ixz, Iyz */
#define EDDY_BODY_INVI_D 9    /* its inverse, diagonal */
#define EDDY_BODY_INVI_O 10   /*   and off-diagonal (symmetric) */
#define EDDY_BODY_SHAPE 11    /* box: half extents; sphere: radius in x; cylinder: radius, half height */
#define EDDY_BODY_CENTROID 12 /* centroid in the shape's local frame (blocal's frame) */
#define EDDY_BODY_M0 13       /* kinematic: centroid at t = 0 (x0); w = amplitude A / angular speed */
#define EDDY_BODY_M1 14       /* unit axis; w = period T (piston) */
#define EDDY_BODY_M2 15       /* rotation: point on the axis; w = phase (piston, rad) */
#define EDDY_BODY_M3 16       /* orientation at t = 0 */
#define EDDY_BODY_STRIDE 20

#endif /* EDDY_SHARED_H */
