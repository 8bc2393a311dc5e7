#version 330 core
// Surface pass 4 (thickness): the chord length of each particle's sphere
// through the pixel, summed additively (blend ONE, ONE; no depth test).
in vec3 vColor;
in vec3 vCenter;
in float vRadius;

out float outThickness;

void main() {
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p);
    if (r2 > 1.0) discard;
    outThickness = 2.0 * vRadius * sqrt(1.0 - r2);
}
