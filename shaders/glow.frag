#version 330 core
// Additive glow: a Gaussian blob per body (blended with ONE, ONE, no depth).
in vec3 vColor;
in vec3 vCenter;
in float vRadius;

uniform float uGlow;  // intensity

out vec4 fragColor;

void main() {
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p);
    if (r2 > 1.0) discard;
    // A sharp core plus a faint halo, both falling to zero at the sprite's edge.
    float a = 0.75 * (exp(-18.0 * r2) - exp(-18.0)) + 0.25 * (exp(-4.0 * r2) - exp(-4.0));
    fragColor = vec4(vColor * (a * uGlow), 1.0);
}
