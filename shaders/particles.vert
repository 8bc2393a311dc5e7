#version 330 core
// Particles as point sprites: the sprite covers the sphere of world radius
// uRadius (times the mass scaling) around each centre; the fragment shader
// makes it a sphere (sphere.frag) or a soft glow (glow.frag).
layout(location = 0) in vec4 aPos;    // x, y, z, w (N-body: mass)
layout(location = 1) in float aField; // colour field value

uniform mat4 uView;
uniform mat4 uProj;
uniform float uRadius;       // world radius of one particle
uniform float uViewportH;    // framebuffer height in pixels
uniform float uMassScale;    // > 0: radius *= (w / uMassScale)^(1/3)
uniform vec2 uRange;         // field value mapped to 0 and 1
uniform int uLogField;       // map log10(field)
uniform int uHasField;       // 0: uniform colour
uniform vec3 uColor;         // used without a field
uniform sampler2D uColormap; // 256 x 1

out vec3 vColor;
out vec3 vCenter;  // view space
out float vRadius;
out float vField01;  // the field mapped to [0, 1] by uRange; -1 without a field
out float vSubPixel; // s^2 for a sprite of s < 1 pixel drawn as one pixel, else 1

void main() {
    vec4 v = uView * vec4(aPos.xyz, 1.0);
    float r = uRadius;
    if (uMassScale > 0.0) r *= clamp(pow(max(aPos.w, 0.0) / uMassScale, 1.0 / 3.0), 0.3, 8.0);
    vec3 c = uColor;
    vField01 = -1.0;
    if (uHasField != 0) {
        float f = aField;
        if (uLogField != 0) f = log(max(f, 1e-30)) / log(10.0);
        float t = clamp((f - uRange.x) / max(uRange.y - uRange.x, 1e-30), 0.0, 1.0);
        vField01 = t;
        c = texture(uColormap, vec2(t * (255.0 / 256.0) + 0.5 / 256.0, 0.5)).rgb;
    }
    vColor = c;
    vCenter = v.xyz;
    vRadius = r;
    gl_Position = uProj * v;
    // Diameter in pixels of a sphere of radius r at depth -v.z.
    float size = uViewportH * uProj[1][1] * r / max(-v.z, 1e-6);
    gl_PointSize = max(size, 1.0);
    // A sprite smaller than a pixel is drawn one pixel wide: the pixel centre
    // lands at a random place of the sprite, so its sample is, on average,
    // s^-2 times the sprite's true share of that pixel (the thickness pass
    // weights its chord by s^2; larger sprites sample their disc unbiased).
    vSubPixel = size < 1.0 ? size * size : 1.0;
}
