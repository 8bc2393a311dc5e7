#version 330 core
// Surface pass 4 (thickness): the chord length of each particle's sphere
// through the pixel, summed additively (blend ONE, ONE; no depth test). The
// sprites are uSpread times the particle radius and their chords scaled by
// 1 / uSpread^3, so each particle adds the same volume but the lattice's
// pattern of sprite centres and gaps is blurred out of the sum. Particles
// behind the opaque scene (uSceneDepth: a solid) are left out.
in vec3 vColor;
in vec3 vCenter;
in float vRadius;
in float vSubPixel;

uniform float uSpread;
uniform mat4 uProj;
uniform sampler2D uSceneDepth;  // full-resolution window depth of the opaque scene (tank, solids)

out float outThickness;

void main() {
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p);
    if (r2 > 1.0) discard;
    // A particle whose centre is hidden by the opaque scene at the centre's
    // own pixel (behind a solid) adds nothing to the water in front of it.
    // (Tested at the centre, not at this fragment: a sprite of the bottom
    // layer spreads over floor that lies in front of its centre.)
    vec4 clip = uProj * vec4(vCenter, 1.0);
    vec3 ndc = clip.xyz / clip.w;
    float depth = 0.5 * (gl_DepthRange.diff * ndc.z + gl_DepthRange.near + gl_DepthRange.far);
    ivec2 size = textureSize(uSceneDepth, 0);
    ivec2 px = clamp(ivec2((ndc.xy * 0.5 + 0.5) * vec2(size)), ivec2(0), size - 1);
    if (depth >= texelFetch(uSceneDepth, px, 0).r) discard;
    outThickness = vSubPixel * 2.0 * vRadius * sqrt(1.0 - r2) / (uSpread * uSpread * uSpread);
}
