#version 330 core
// Vertical gradient with a soft vignette.
in vec2 vUv;
uniform vec3 uTop;
uniform vec3 uBottom;
out vec4 fragColor;
void main() {
    vec3 c = mix(uBottom, uTop, clamp(vUv.y, 0.0, 1.0));
    vec2 d = vUv - 0.5;
    c *= 1.0 - 0.35 * dot(d, d);
    fragColor = vec4(c, 1.0);
}
