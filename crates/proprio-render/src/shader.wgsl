// Batched scene renderer: instanced unit meshes, Lambert shading with one
// directional light, linear depth in metres as a second target.
// Everything per draw comes from vertex and storage buffers, never uniforms:
// lavapipe inlines uniform values and recompiles the shader per draw.

struct Camera {
    view_projection: mat4x4<f32>,
    // xyz: eye; w unused.
    eye: vec4<f32>,
    // xyz: unit forward; w unused.
    forward: vec4<f32>,
}

@group(0) @binding(0) var<storage, read> cameras: array<Camera>;
// Every texture of a batch, in 32 × 32 cells (texture.rs).
@group(0) @binding(1) var atlas: texture_2d<f32>;
@group(0) @binding(2) var texture_sampler: sampler;

// Towards the light (the sun above, behind the default cameras' left shoulder).
const LIGHT: vec3<f32> = vec3<f32>(0.3505, -0.4673, 0.8119);
const AMBIENT: f32 = 0.35;
const CELL: u32 = 32u;
const ATLAS: u32 = 2048u;
const CELLS_PER_ROW: u32 = 64u;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) model0: vec4<f32>,
    @location(4) model1: vec4<f32>,
    @location(5) model2: vec4<f32>,
    @location(6) model3: vec4<f32>,
    @location(7) normal0: vec4<f32>,
    @location(8) normal1: vec4<f32>,
    @location(9) normal2: vec4<f32>,
    @location(10) colour: vec4<f32>,
    @location(11) extra: vec4<u32>,
}

struct VertexOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) colour: vec4<f32>,
    @location(4) @interpolate(flat) extra: vec4<u32>,
}

@vertex
fn vs_main(v: VertexIn) -> VertexOut {
    let model = mat4x4<f32>(v.model0, v.model1, v.model2, v.model3);
    let normal = mat3x3<f32>(v.normal0.xyz, v.normal1.xyz, v.normal2.xyz);
    let world = model * vec4<f32>(v.position, 1.0);
    var out: VertexOut;
    out.clip = cameras[v.extra.x].view_projection * world;
    out.world = world.xyz;
    out.normal = normal * v.normal;
    out.uv = v.uv;
    out.colour = v.colour;
    out.extra = v.extra;
    return out;
}

struct FragmentOut {
    @location(0) colour: vec4<f32>,
    // The f32 distance's bits (R32Float is not renderable on GL).
    @location(1) depth: u32,
}

// Colour and depth, when the batch asks for depth.
@fragment
fn fs_main(f: VertexOut) -> FragmentOut {
    var out: FragmentOut;
    out.colour = shade(f);
    let camera = cameras[f.extra.x];
    out.depth = bitcast<u32>(dot(f.world - camera.eye.xyz, camera.forward.xyz));
    return out;
}

// Colour only: a batch without depth writes one target.
@fragment
fn fs_rgb(f: VertexOut) -> @location(0) vec4<f32> {
    return shade(f);
}

fn shade(f: VertexOut) -> vec4<f32> {
    var base = f.colour;
    if f.extra.y > 0u {
        // extra.y: cell + 1; extra.w: the texture's width | height << 16, texels.
        let cell = f.extra.y - 1u;
        let origin = vec2<f32>(f32(cell % CELLS_PER_ROW), f32(cell / CELLS_PER_ROW)) * f32(CELL);
        let size = vec2<f32>(f32(f.extra.w & 0xffffu), f32(f.extra.w >> 16u));
        let texel = origin + min(floor(max(f.uv, vec2<f32>(0.0)) * size), size - 1.0) + 0.5;
        base = base * textureSampleLevel(atlas, texture_sampler, texel / f32(ATLAS), 0.0);
    }
    if f.extra.z > 0u {
        // A 0.5 m checkerboard, so motion over the floor is visible.
        let cell = vec2<i32>(floor(f.world.xy * 2.0));
        if ((cell.x + cell.y) & 1) == 0 {
            base = vec4<f32>(base.rgb * 0.8, base.a);
        }
    }
    let camera = cameras[f.extra.x];
    // Two-sided: a surface seen from behind (a card's back) is lit as its front.
    var n = normalize(f.normal);
    if dot(n, camera.eye.xyz - f.world) < 0.0 {
        n = -n;
    }
    let light = AMBIENT + (1.0 - AMBIENT) * max(dot(n, LIGHT), 0.0);
    return vec4<f32>(base.rgb * light, base.a);
}
