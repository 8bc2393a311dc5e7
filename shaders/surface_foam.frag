#version 330 core
// Surface pass 6 (foam, optional): particles whose field (the speed) lies
// above uThreshold of its range, as small soft white sprites over the water.
// Drawn with the depth test against the water's depth, pulled towards the
// camera by two radii so foam on the surface is not hidden by it.
in vec3 vColor;
in vec3 vCenter;
in float vRadius;
in float vField01;

uniform mat4 uProj;
uniform float uThreshold;  // fraction of the field's range

out vec4 fragColor;

void main() {
    if (vField01 < uThreshold) discard;
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    float r2 = dot(p, p);
    if (r2 > 1.0) discard;
    vec3 posView = vCenter + vec3(0.0, 0.0, 2.0 * vRadius);
    vec4 clip = uProj * vec4(posView, 1.0);
    gl_FragDepth = 0.5 * (gl_DepthRange.diff * clip.z / clip.w + gl_DepthRange.near + gl_DepthRange.far);
    float strength = clamp((vField01 - uThreshold) / max(1.0 - uThreshold, 1e-3) * 2.0 + 0.35, 0.0, 1.0);
    fragColor = vec4(0.96, 0.98, 1.0, 0.95 * strength * (1.0 - r2 * r2));
}
