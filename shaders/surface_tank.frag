#version 330 core
// Pool tiles on the tank's floor and walls: light tiles, darker grout lines,
// diffuse light; they are what the water refracts.
in vec3 vWorld;
in vec3 vNormal;
uniform float uTile;      // tile size (world units)
uniform vec3 uLightDir;   // world space, towards the light
uniform vec3 uTileColor;
out vec4 fragColor;
void main() {
    vec3 n = normalize(vNormal);
    vec3 a = abs(n);
    vec2 t = a.y > 0.5 ? vWorld.xz : (a.x > 0.5 ? vWorld.zy : vWorld.xy);
    vec2 f = fract(t / uTile);
    vec2 g = min(f, 1.0 - f);
    float grout = smoothstep(0.02, 0.045, min(g.x, g.y));
    vec2 cell = floor(t / uTile);
    float check = mod(cell.x + cell.y, 2.0) * 0.06;
    vec3 c = uTileColor * (0.94 - check);
    c = mix(c * 0.45, c, grout);
    float light = 0.55 + 0.45 * max(dot(n, uLightDir), 0.0);
    fragColor = vec4(c * light, 1.0);
}
