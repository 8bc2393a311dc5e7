/*
 * health.cl: cheap on-device check that a simulation has not blown up.
 *
 * Phase "check": counts in count[0] the particles i < n whose a[i].xyz or
 * b[i].xyz holds a NaN or an infinity (a, b: float4 per particle, e.g.
 * positions and velocities; b may be the same buffer as a), and in count[1]
 * the finite ones whose |b[i].xyz|^2 exceeds speed2 (b the velocities: a
 * blow-up whose values stay finite; speed2 = INFINITY: none). Only a bad
 * particle touches a counter, so the atomics are uncontended in the normal
 * (healthy) case.
 */
__kernel void check_finite(__global const float4* restrict a,
                           __global const float4* restrict b,
                           const uint n,
                           const float speed2,
                           __global uint* restrict count)
{
    const uint i = get_global_id(0);
    if (i >= n) return;
    const float4 p = a[i], q = b[i];
    if (!all(isfinite(p.xyz)) || !all(isfinite(q.xyz)))
        atomic_inc(&count[0]);
    else if (dot(q.xyz, q.xyz) > speed2)
        atomic_inc(&count[1]);
}
