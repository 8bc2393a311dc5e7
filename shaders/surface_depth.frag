#version 330 core
// Surface pass 1 (depth): each particle as a sphere sprite; writes the eye
// depth (distance along -z, world units) of the sphere's front surface into
// an R32F target and the matching window depth for the depth test. 0 = no fluid.
in vec3 vColor;
in vec3 vCenter;
in float vRadius;

uniform mat4 uProj;

out float outDepth;

void main() {
    vec2 p = gl_PointCoord * 2.0 - 1.0;
    p.y = -p.y;
    float r2 = dot(p, p);
    if (r2 > 1.0) discard;
    vec3 posView = vCenter + vec3(p, sqrt(1.0 - r2)) * vRadius;
    vec4 clip = uProj * vec4(posView, 1.0);
    gl_FragDepth = 0.5 * (gl_DepthRange.diff * clip.z / clip.w + gl_DepthRange.near + gl_DepthRange.far);
    outDepth = -posView.z;
}
