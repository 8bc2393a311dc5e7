#version 330 core
// Surface pass 5 (shading), into the window: Fresnel (Schlick) mix of the
// reflected environment (sky gradient above the horizon, the floor's tone
// below) and the refracted scene (the background, floor, walls and solids,
// offset by the normal) attenuated by Beer-Lambert absorption along the
// thickness, plus a Blinn-Phong highlight. Writes the fluid's window depth, so the box lines
// drawn afterwards are hidden behind the water. uMode shows one pass alone.
in vec2 vUv;

uniform sampler2D uScene;      // background + floor + walls + solids (RGBA8)
uniform sampler2D uDepth;      // smoothed eye depth
uniform sampler2D uNormals;    // view-space normals
uniform sampler2D uThickness;  // summed chord lengths
uniform mat4 uProj, uInvProj;
uniform mat3 uViewToWorld;     // rotation part of the inverse view matrix
uniform vec3 uWaterColor;      // colour of the light that survives deep water
uniform float uAbsorption;     // Beer-Lambert coefficient (1 / world unit)
uniform float uRefraction;     // screen offset per unit normal (fraction of the screen)
uniform vec3 uLightDir;        // view space, towards the light
uniform vec2 uDepthRange;      // eye depths shown black .. white in the depth view
uniform float uThicknessScale; // thickness view: 1 - exp(-t * scale)
uniform float uRadius;         // particle radius (world)
uniform int uMode;             // 0 final, 1 depth, 2 thickness, 3 normals

out vec4 fragColor;

vec3 environment(vec3 dirWorld) {
    float y = dirWorld.y;
    vec3 horizon = vec3(0.78, 0.84, 0.9), zenith = vec3(0.32, 0.52, 0.82);
    vec3 floorTone = vec3(0.42, 0.44, 0.46);
    if (y >= 0.0) return mix(horizon, zenith, pow(y, 0.6));
    return mix(horizon * 0.8, floorTone, clamp(-y * 4.0, 0.0, 1.0));
}

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    float z = texelFetch(uDepth, p, 0).r;
    vec3 scene = texelFetch(uScene, p, 0).rgb;
    if (z <= 0.0) {
        fragColor = vec4(uMode == 0 ? scene : vec3(0.0), 1.0);
        gl_FragDepth = 1.0;
        return;
    }
    vec4 nn = texelFetch(uNormals, p, 0);
    vec3 n = nn.w > 0.0 ? normalize(nn.xyz) : vec3(0.0, 0.0, 1.0);
    float thick = texture(uThickness, vUv).r;  // half resolution, filtered

    vec2 ndc = vUv * 2.0 - 1.0;
    vec4 q = uInvProj * vec4(ndc, -1.0, 1.0);
    vec3 dir = q.xyz / q.w;
    vec3 pos = dir * (z / -dir.z);
    vec4 clip = uProj * vec4(pos, 1.0);
    gl_FragDepth = 0.5 * (gl_DepthRange.diff * clip.z / clip.w + gl_DepthRange.near + gl_DepthRange.far);

    if (uMode == 1) {
        float g = clamp(1.0 - (z - uDepthRange.x) / max(uDepthRange.y - uDepthRange.x, 1e-6), 0.0, 1.0);
        fragColor = vec4(vec3(0.25 + 0.75 * g), 1.0);
        return;
    }
    if (uMode == 2) {
        float t = 1.0 - exp(-thick * uThicknessScale);
        fragColor = vec4(vec3(0.15 + 0.85 * t), 1.0);
        return;
    }
    if (uMode == 3) {
        fragColor = vec4(n * 0.5 + 0.5, 1.0);
        return;
    }

    vec3 v = normalize(-pos);
    float cosT = max(dot(n, v), 0.0);
    float fresnel = 0.02 + 0.98 * pow(1.0 - cosT, 5.0);
    vec3 reflected = environment(normalize(uViewToWorld * reflect(-v, n)));

    vec2 uv = vUv + n.xy * uRefraction * clamp(thick / max(z * 0.05, 1e-6), 0.0, 1.0);
    vec3 behind = texture(uScene, clamp(uv, vec2(0.0), vec2(1.0))).rgb;
    vec3 transmit = exp(-uAbsorption * thick * (vec3(1.0) - uWaterColor));
    // Light scattered towards the eye inside the water: the water colour,
    // growing with what the water absorbs (kept dim so absorption darkens).
    vec3 refracted = behind * transmit + 0.12 * uWaterColor * (vec3(1.0) - transmit);

    vec3 h = normalize(uLightDir + v);
    // The highlight fades out over the thin rim, whose normals come from a
    // few pixels only (else the silhouette sparkles).
    float spec = pow(max(dot(n, h), 0.0), 240.0) * 1.6 * smoothstep(0.0, 4.0 * uRadius, thick);
    vec3 c = mix(refracted, reflected, fresnel) + vec3(spec);
    fragColor = vec4(c, 1.0);
}
