#version 330 core
// Surface pass 2 (smoothing): one separable direction of a narrow-range
// filter on the eye depth (after Truong & Yuksel 2018, "A Narrow-Range Filter
// for Screen-Space Fluid Rendering", Proc. ACM Comput. Graph. Interact. Tech.
// 1(1)): Gaussian spatial weights, samples farther behind than the threshold
// (another layer or the background) are ignored, samples nearer than it are
// clamped to it, so the filter smooths within one surface and keeps its
// silhouette. The filter radius is the particle radius in screen space times
// uFilterRadii, so it holds from near to far. The range grows with the
// sample's distance by up to uSlope world units per world unit across the
// screen, so a surface seen obliquely is still one surface (a fixed range
// would cut its far side off and leave steps).
// A background pixel with fluid on both sides within about one particle
// diameter is a hole between sprites: it takes the mean depth of the two sides
// and is filtered like fluid (two passes, x then y, close holes of any shape).
in vec2 vUv;

uniform sampler2D uDepth;
uniform ivec2 uDir;          // (1, 0) or (0, 1)
uniform float uPxPerUnit;    // pixels per world unit at eye depth 1
uniform float uRadius;       // particle radius (world)
uniform float uFilterRadii;  // filter radius in particle radii
uniform float uThreshold;    // range threshold in particle radii
uniform int uMaxPx;          // cap on the filter radius in pixels
uniform float uSlope;        // depth change per unit of screen distance still "the same surface"
uniform int uHoleMaxPx;      // widest hole closed: a particle diameter at the nearest depth

out float outDepth;

float fetch(ivec2 p) {
    ivec2 size = textureSize(uDepth, 0);
    if (p.x < 0 || p.y < 0 || p.x >= size.x || p.y >= size.y) return 0.0;
    return texelFetch(uDepth, p, 0).r;
}

void main() {
    ivec2 px = ivec2(gl_FragCoord.xy);
    float z0 = fetch(px);
    if (z0 <= 0.0) {
        // Hole filling: nearest fluid on both sides along uDir.
        float zl = 0.0, zr = 0.0;
        int dl = 0, dr = 0;
        for (int i = 1; i <= uHoleMaxPx && (zl == 0.0 || zr == 0.0); ++i) {
            if (zl == 0.0) { zl = fetch(px - i * uDir); dl = i; }
            if (zr == 0.0) { zr = fetch(px + i * uDir); dr = i; }
        }
        if (zl <= 0.0 || zr <= 0.0) { outDepth = 0.0; return; }
        float zm = 0.5 * (zl + zr);
        float diameterPx = 2.0 * uRadius * uPxPerUnit / zm;
        if (float(dl + dr) > diameterPx + 1.0 || abs(zl - zr) > uThreshold * uRadius) {
            outDepth = 0.0;
            return;
        }
        z0 = zm;
    }
    float rpx = uFilterRadii * uRadius * uPxPerUnit / z0;
    int n = int(clamp(ceil(rpx), 1.0, float(uMaxPx)));
    float sigma = max(rpx, 1.0) * 0.5;
    float inv2s2 = 1.0 / (2.0 * sigma * sigma);
    float thr = uThreshold * uRadius;
    float pixelWorld = z0 / uPxPerUnit;  // world size of one pixel at this depth
    float sum = z0, wsum = 1.0;
    for (int i = -n; i <= n; ++i) {
        if (i == 0) continue;
        float z = fetch(px + i * uDir);
        float range = thr + uSlope * float(abs(i)) * pixelWorld;
        if (z <= 0.0 || z > z0 + range) continue;
        z = max(z, z0 - range);
        float w = exp(-float(i * i) * inv2s2);
        sum += w * z;
        wsum += w;
    }
    outDepth = sum / wsum;
}
