/*
 * interact.cl: kernels for interactive front ends (the desktop app), shared by
 * every simulation that keeps float4 positions (x, y, z, w) and float4
 * velocities. Launched between steps only.
 */

/* Phase "push": a velocity change at the cursor ray. For each particle, d is its
 * distance from the ray (the part in front of the origin; behind it, the
 * distance to the origin). Within radius R it gets v += dv * (1 - d^2/R^2)^2,
 * a smooth weight that is 1 on the ray and falls to 0 (with zero slope) at R. */
__kernel void eddy_push(__global const float4* restrict pos,
                        __global float4* restrict vel,
                        const uint n, const float4 origin, const float4 dir,
                        const float radius, const float4 dv)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float3 d = pos[i].xyz - origin.xyz;
    const float t = fmax(dot(d, dir.xyz), 0.0f);
    const float3 perp = d - t * dir.xyz;
    const float q = dot(perp, perp) / (radius * radius);
    if (q < 1.0f) {
        const float w = (1.0f - q) * (1.0f - q);
        float4 v = vel[i];
        v.xyz += w * dv.xyz;
        vel[i] = v;
    }
}

/* Phase "color": out_i = |v_i| (xyz part). */
__kernel void eddy_speed(__global const float4* restrict vel, __global float* restrict out,
                         const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    out[i] = length(vel[i].xyz);
}

/* Phase "color": out_i = w component of a float4 (N-body: the mass). */
__kernel void eddy_component_w(__global const float4* restrict v, __global float* restrict out,
                               const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    out[i] = v[i].w;
}

/* Phase "color": out_i = component `c` (0 = x, 1 = y) of a float2 (SPH: the
 * (density, pressure) pair of each particle). */
__kernel void eddy_component2(__global const float2* restrict v, __global float* restrict out,
                              const uint n, const uint c)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float2 x = v[i];
    out[i] = c == 0 ? x.x : x.y;
}
