/* sph_solid.cl: the signed distance of a solid (static obstacle or body) on
 * the device, from its record (sim/sph/boundary.hpp: EDDY_SOLID_STRIDE float4
 * a solid) and its SDF grid. Needs only eddy_shared.h: every SPH program
 * builds it after sph_common.cl, and the bodies' program (body_contact)
 * before sph_bodies.cl. */

/* ---- Solids (sim/sph/boundary.hpp: EDDY_SOLID_STRIDE float4 a solid) ---- */

/* The exact signed distance of solid s at the local point l when it is a
 * box, a sphere or a cylinder (EDDY_SOLID_SHAPE), with its gradient (local
 * frame, not normalised); false for a mesh (only its grid is known: see
 * sph_solid_sdf). The grid's trilinear interpolation is exact on a flat
 * face but rounds a box's edges, and of a convex solid it never reads less
 * than the exact distance (a convex combination of a convex function's
 * values): at the SPHERIC box's edges (grid cell 7.5 mm, H200,
 * docs/PERFORMANCE.md, session 17) it read fluid up to 0.9 mm inside the
 * box as outside. sph_boundary_guard counts and puts out what this finds
 * inside. */
inline bool sph_solid_exact_sdf(__global const float4* restrict solid, const float3 l, float* dist,
                                float3* grad)
{
    const float4 shape = solid[EDDY_SOLID_SHAPE];
    const uint kind = as_uint(shape.w);
    if (kind == EDDY_SOLID_KIND_BOX) {
        const float3 q = fabs(l) - shape.xyz;
        const float qm = fmax(q.x, fmax(q.y, q.z));
        const float3 o = fmax(q, (float3)(0.0f));
        const float3 sg = copysign((float3)(1.0f), l);
        *dist = length(o) + fmin(qm, 0.0f);
        if (qm > 0.0f) /* outside: towards the nearest surface point */
            *grad = sg * o;
        else /* inside: out through the nearest face */
            *grad = q.x == qm ? (float3)(sg.x, 0.0f, 0.0f)
                  : q.y == qm ? (float3)(0.0f, sg.y, 0.0f) : (float3)(0.0f, 0.0f, sg.z);
        return true;
    }
    if (kind == EDDY_SOLID_KIND_SPHERE) {
        const float r = length(l);
        *dist = r - shape.x;
        *grad = r > 0.0f ? l : (float3)(0.0f, 1.0f, 0.0f);
        return true;
    }
    if (kind == EDDY_SOLID_KIND_CYLINDER) {
        const float rho = hypot(l.x, l.z);
        const float dr = rho - shape.x, dy = fabs(l.y) - shape.y;
        const float3 radial = rho > 0.0f ? (float3)(l.x / rho, 0.0f, l.z / rho) : (float3)(1.0f, 0.0f, 0.0f);
        const float3 axial = (float3)(0.0f, copysign(1.0f, l.y), 0.0f);
        *dist = fmin(fmax(dr, dy), 0.0f) + hypot(fmax(dr, 0.0f), fmax(dy, 0.0f));
        if (dr > 0.0f || dy > 0.0f)
            *grad = fmax(dr, 0.0f) * radial + fmax(dy, 0.0f) * axial;
        else
            *grad = dr >= dy ? radial : axial;
        return true;
    }
    return false;
}

/* Trilinear signed distance of the SDF grid of solid s at the local point l,
 * with its gradient (local frame); false outside the grid (then: outside). */
inline bool sph_solid_sdf(__global const float4* restrict solid, __global const float* restrict sdf,
                          const float3 l, float* dist, float3* grad)
{
    const float4 o = solid[EDDY_SOLID_SDF];
    const uint4 g = as_uint4(solid[EDDY_SOLID_GRID]);
    const float3 u = (l - o.xyz) / o.w;
    if (!(u.x >= 0.0f && u.y >= 0.0f && u.z >= 0.0f)) return false;
    const int3 c = convert_int3(floor(u));
    if (c.x >= (int)g.x - 1 || c.y >= (int)g.y - 1 || c.z >= (int)g.z - 1) return false;
    const float3 t = u - convert_float3(c);
    const uint sx = 1u, sy = g.x, sz = g.x * g.y;
    const uint base = g.w + (uint)c.x + sy * (uint)c.y + sz * (uint)c.z;
    const float v000 = sdf[base], v100 = sdf[base + sx];
    const float v010 = sdf[base + sy], v110 = sdf[base + sx + sy];
    const float v001 = sdf[base + sz], v101 = sdf[base + sx + sz];
    const float v011 = sdf[base + sy + sz], v111 = sdf[base + sx + sy + sz];
    const float x00 = mix(v000, v100, t.x), x10 = mix(v010, v110, t.x);
    const float x01 = mix(v001, v101, t.x), x11 = mix(v011, v111, t.x);
    const float y0 = mix(x00, x10, t.y), y1 = mix(x01, x11, t.y);
    *dist = mix(y0, y1, t.z);
    const float dx0 = mix(mix(v100 - v000, v110 - v010, t.y), mix(v101 - v001, v111 - v011, t.y), t.z);
    const float dy0 = mix(mix(v010 - v000, v110 - v100, t.x), mix(v011 - v001, v111 - v101, t.x), t.z);
    const float dz0 = y1 - y0;
    *grad = (float3)(dx0, dy0, dz0);
    return true;
}

/* The point p (world) in solid's local frame, R^T (p - c): R's columns are
 * the local axes in the world. */
inline float3 sph_solid_local(__global const float4* restrict solid, const float3 p)
{
    const float3 w = p - solid[EDDY_SOLID_POS].xyz;
    return w.x * solid[EDDY_SOLID_ROT].xyz + w.y * solid[EDDY_SOLID_ROT + 1].xyz +
           w.z * solid[EDDY_SOLID_ROT + 2].xyz;
}

/* Whether p lies inside one of the nsolids solids or within `margin` of its
 * surface (the trilinear SDF of each at its current pose, in world units
 * as sph_boundary_guard reads it). */
inline bool sph_in_solids(__global const float4* restrict solids, __global const float* restrict sdf,
                          const uint nsolids, const float3 p, const float margin)
{
    for (uint s = 0; s < nsolids; ++s) {
        __global const float4* solid = solids + (size_t)s * EDDY_SOLID_STRIDE;
        float dist;
        float3 g;
        if (sph_solid_sdf(solid, sdf, sph_solid_local(solid, p), &dist, &g) && dist < margin)
            return true;
    }
    return false;
}
