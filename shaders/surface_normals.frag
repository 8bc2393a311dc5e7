#version 330 core
// Surface pass 3 (normals): view-space normal of the smoothed depth surface.
// Positions are rebuilt from the eye depth through the inverse projection; of
// the forward and backward differences the smaller one is used, so normals
// at a silhouette do not bend towards the background (van der Laan, Green &
// Sainz 2009).
in vec2 vUv;

uniform sampler2D uDepth;
uniform mat4 uInvProj;

out vec4 outNormal;  // xyz = normal (view space), w = 1 where there is fluid

vec3 viewPos(ivec2 p, float z) {
    vec2 size = vec2(textureSize(uDepth, 0));
    vec2 ndc = (vec2(p) + 0.5) / size * 2.0 - 1.0;
    vec4 q = uInvProj * vec4(ndc, -1.0, 1.0);
    vec3 dir = q.xyz / q.w;
    return dir * (z / -dir.z);
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    ivec2 size = textureSize(uDepth, 0);
    float z = texelFetch(uDepth, p, 0).r;
    if (z <= 0.0) { outNormal = vec4(0.0); return; }
    vec3 c = viewPos(p, z);
    vec3 d[2];
    for (int a = 0; a < 2; ++a) {
        ivec2 e = a == 0 ? ivec2(1, 0) : ivec2(0, 1);
        ivec2 pf = min(p + e, size - 1), pb = max(p - e, ivec2(0));
        float zf = texelFetch(uDepth, pf, 0).r, zb = texelFetch(uDepth, pb, 0).r;
        vec3 f = zf > 0.0 ? viewPos(pf, zf) - c : vec3(0.0);
        vec3 b = zb > 0.0 ? c - viewPos(pb, zb) : vec3(0.0);
        if (zf <= 0.0) d[a] = b;
        else if (zb <= 0.0) d[a] = f;
        else d[a] = abs(f.z) < abs(b.z) ? f : b;
        if (dot(d[a], d[a]) == 0.0) d[a] = a == 0 ? vec3(1.0, 0.0, 0.0) : vec3(0.0, 1.0, 0.0);
    }
    vec3 n = normalize(cross(d[0], d[1]));
    if (n.z < 0.0) n = -n;
    outNormal = vec4(n, 1.0);
}
