#version 330 core
// Surface pass 4 (thickness): the chord length of each particle's sphere
// through the pixel, summed additively (blend ONE, ONE; no depth test). The
// sprites are uSpread times the particle radius and their chords scaled by
// 1 / uSpread^3, so each particle adds the same volume but the lattice's
// pattern of sprite centres and gaps is blurred out of the sum.
in vec3 vColor;
in vec3 vCenter;
in float vRadius;
in float vSubPixel;

uniform float uSpread;

out float outThickness;

void main() {
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p);
    if (r2 > 1.0) discard;
    outThickness = vSubPixel * 2.0 * vRadius * sqrt(1.0 - r2) / (uSpread * uSpread * uSpread);
}
