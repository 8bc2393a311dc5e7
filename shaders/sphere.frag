#version 330 core
// Sphere impostor: per-pixel normal and depth of the sphere, Blinn-Phong light.
in vec3 vColor;
in vec3 vCenter;
in float vRadius;

uniform mat4 uProj;
uniform vec3 uLightDir;  // view space, unit, towards the light
// uClip != 0: only the part of the sphere inside the world box [uClipLo,
// uClipHi] is drawn (the solids' boundary particles that continue a solid
// through the tank's wall it rests on lie outside the tank).
uniform int uClip;
uniform mat4 uViewToWorld;
uniform vec3 uClipLo, uClipHi;

out vec4 fragColor;

void main() {
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    p.y = -p.y;
    float r2 = dot(p, p);
    if (r2 > 1.0) discard;
    vec3 n = vec3(p, sqrt(1.0 - r2));
    vec3 posView = vCenter + n * vRadius;
    if (uClip != 0) {
        vec3 w = (uViewToWorld * vec4(posView, 1.0)).xyz;
        if (any(lessThan(w, uClipLo)) || any(greaterThan(w, uClipHi))) discard;
    }
    vec4 clip = uProj * vec4(posView, 1.0);
    float ndcZ = clip.z / clip.w;
    gl_FragDepth = 0.5 * (gl_DepthRange.diff * ndcZ + gl_DepthRange.near + gl_DepthRange.far);

    float diffuse = max(dot(n, uLightDir), 0.0);
    vec3 h = normalize(uLightDir + vec3(0.0, 0.0, 1.0));
    float spec = pow(max(dot(n, h), 0.0), 48.0);
    float rim = pow(1.0 - n.z, 3.0);
    vec3 c = vColor * (0.28 + 0.72 * diffuse) + vec3(0.35 * spec) + 0.12 * rim * vColor;
    fragColor = vec4(c, 1.0);
}
