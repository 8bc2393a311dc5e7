#version 330 core
// Glow: the additive sum of the bodies' light (a float texture) mapped to the
// screen with 1 - exp(-x): dense cores stay coloured instead of clipping.
in vec2 vUv;
uniform sampler2D uHdr;
out vec4 fragColor;
void main() {
    vec3 x = texture(uHdr, vUv).rgb;
    fragColor = vec4(vec3(1.0) - exp(-x), 1.0);
}
