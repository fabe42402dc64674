//! Draws the shown envs' scenes: one bevy entity per visual, meshes and
//! materials cached by shape and colour, envs of a grid laid side by side, a
//! lit ground with shadows, and lines as gizmos.
//!
//! Scenes are z-up; bevy is y-up: a scene point `(x, y, z)` is bevy's `(x, z, −y)`.

use crate::SimShared;
use bevy::asset::RenderAssetUsages;
use bevy::light::CascadeShadowConfigBuilder;
use bevy::prelude::*;
use bevy::render::render_resource::{Extent3d, TextureDimension, TextureFormat};
use proprio_core::{Framing, Pose, Shape, Visual};
use std::collections::HashMap;

/// Render settings fitted to the adapter in use.
#[derive(Resource, Clone, Copy)]
pub struct RenderFit {
    /// A CPU rasteriser (lavapipe): no MSAA and one shadow cascade, which halve
    /// a frame's cost there (pick-cube at 960×540: 290 → 143 ms, docs/benchmarks.md).
    pub software: bool,
    /// GL: no shadow maps. There (Mesa's GL, wgpu 29, bevy 0.19) every
    /// shadow-map comparison reads as occluded, which leaves only ambient light.
    pub gl: bool,
}

/// Systems that read the scenes run after this set.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub struct DrawSet;

/// Scene point → bevy point.
pub fn to_bevy(p: [f32; 3]) -> Vec3 {
    Vec3::new(p[0], p[2], -p[1])
}

fn rotation(q: [f32; 4]) -> Quat {
    Quat::from_xyzw(q[0], q[2], -q[1], q[3]).normalize()
}

/// Where env `k` of a grid of `n` sits, in scene coordinates.
pub fn grid_offset(k: usize, n: usize, framing: &Framing) -> [f32; 3] {
    let cols = (n as f32).sqrt().ceil().max(1.0) as usize;
    let spacing = 2.4 * framing.half_extent;
    [
        (k % cols) as f32 * spacing,
        -((k / cols) as f32) * spacing,
        0.0,
    ]
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct MeshKey(u8, [u32; 3]);

fn mesh_key(shape: &Shape) -> MeshKey {
    let b = |v: f32| v.to_bits();
    match *shape {
        Shape::Cuboid { half_extents: h } => MeshKey(0, [b(h[0]), b(h[1]), b(h[2])]),
        Shape::Sphere { radius } => MeshKey(1, [b(radius), 0, 0]),
        Shape::Capsule {
            radius,
            half_length,
        } => MeshKey(2, [b(radius), b(half_length), 0]),
        Shape::Cylinder {
            radius,
            half_height,
        } => MeshKey(3, [b(radius), b(half_height), 0]),
        Shape::Rectangle { half_size } => MeshKey(4, [b(half_size[0]), b(half_size[1]), 0]),
    }
}

/// The shape as a bevy mesh in bevy axes (scene-local z becomes bevy-local y).
fn mesh_of(shape: &Shape) -> Mesh {
    match *shape {
        Shape::Cuboid { half_extents: h } => Cuboid::new(2.0 * h[0], 2.0 * h[2], 2.0 * h[1]).into(),
        Shape::Sphere { radius } => Sphere::new(radius).mesh().uv(24, 16),
        Shape::Capsule {
            radius,
            half_length,
        } => Capsule3d::new(radius, 2.0 * half_length).into(),
        Shape::Cylinder {
            radius,
            half_height,
        } => Cylinder::new(radius, 2.0 * half_height).into(),
        Shape::Rectangle { half_size } => {
            Plane3d::new(Vec3::Y, Vec2::new(half_size[0], half_size[1])).into()
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct MaterialKey([u32; 4], Option<u64>, bool);

/// Meshes, materials and textures made so far.
#[derive(Resource, Default)]
struct Caches {
    meshes: HashMap<MeshKey, Handle<Mesh>>,
    materials: HashMap<MaterialKey, Handle<StandardMaterial>>,
    textures: HashMap<u64, Handle<Image>>,
}

/// The entities drawing each shown env's visuals, in scene order.
#[derive(Resource, Default)]
struct Drawn(Vec<Vec<Entity>>);

/// Marks an entity that draws a scene visual.
#[derive(Component)]
struct SceneVisual;

/// Draws scenes.
pub struct DrawPlugin;

impl Plugin for DrawPlugin {
    fn build(&self, app: &mut App) {
        app.init_resource::<Caches>()
            .init_resource::<Drawn>()
            .insert_resource(ClearColor(Color::srgb(0.55, 0.65, 0.78)))
            .insert_resource(GlobalAmbientLight {
                brightness: 400.0,
                ..default()
            })
            .add_systems(Startup, setup)
            .add_systems(Update, (sync, lines).in_set(DrawSet));
    }
}

fn setup(
    mut commands: Commands,
    fit: Res<RenderFit>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
) {
    commands.spawn((
        DirectionalLight {
            illuminance: 9000.0,
            shadow_maps_enabled: !fit.gl,
            ..default()
        },
        Transform::from_xyz(3.0, 8.0, 4.0).looking_at(Vec3::ZERO, Vec3::Y),
        CascadeShadowConfigBuilder {
            num_cascades: if fit.software { 1 } else { 4 },
            maximum_distance: 40.0,
            ..default()
        }
        .build(),
    ));
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::new(Vec3::Y, Vec2::splat(200.0)))),
        MeshMaterial3d(materials.add(StandardMaterial {
            base_color: Color::srgb(0.42, 0.44, 0.46),
            perceptual_roughness: 0.95,
            ..default()
        })),
        Transform::from_xyz(0.0, -0.001, 0.0),
    ));
}

impl Caches {
    fn mesh(&mut self, shape: &Shape, meshes: &mut Assets<Mesh>) -> Handle<Mesh> {
        self.meshes
            .entry(mesh_key(shape))
            .or_insert_with(|| meshes.add(mesh_of(shape)))
            .clone()
    }

    fn material(
        &mut self,
        visual: &Visual,
        marker: bool,
        materials: &mut Assets<StandardMaterial>,
        images: &mut Assets<Image>,
    ) -> Handle<StandardMaterial> {
        let c = visual.colour;
        let key = MaterialKey(
            c.map(f32::to_bits),
            visual.texture.as_ref().map(|t| t.key),
            marker,
        );
        if let Some(m) = self.materials.get(&key) {
            return m.clone();
        }
        let texture = visual.texture.as_ref().map(|t| {
            self.textures
                .entry(t.key)
                .or_insert_with(|| {
                    images.add(Image::new(
                        Extent3d {
                            width: t.width,
                            height: t.height,
                            depth_or_array_layers: 1,
                        },
                        TextureDimension::D2,
                        t.rgba.to_vec(),
                        TextureFormat::Rgba8UnormSrgb,
                        RenderAssetUsages::RENDER_WORLD,
                    ))
                })
                .clone()
        });
        let translucent = marker || c[3] < 1.0;
        let material = materials.add(StandardMaterial {
            base_color: Color::srgba(c[0], c[1], c[2], c[3]),
            base_color_texture: texture,
            alpha_mode: if translucent {
                AlphaMode::Blend
            } else {
                AlphaMode::Opaque
            },
            unlit: visual.texture.is_some(),
            double_sided: visual.texture.is_some(),
            cull_mode: None,
            perceptual_roughness: 0.6,
            ..default()
        });
        self.materials.insert(key, material.clone());
        material
    }
}

fn place(pose: &Pose, offset: [f32; 3]) -> Transform {
    let t = pose.translation;
    Transform {
        translation: to_bevy([t[0] + offset[0], t[1] + offset[1], t[2] + offset[2]]),
        rotation: rotation(pose.rotation),
        scale: Vec3::ONE,
    }
}

#[allow(clippy::too_many_arguments)]
fn sync(
    mut commands: Commands,
    sim: Res<SimShared>,
    mut caches: ResMut<Caches>,
    mut drawn: ResMut<Drawn>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    mut images: ResMut<Assets<Image>>,
) {
    let sim = sim.0.get();
    let shown = sim.scenes.len();
    let keep = shown.min(drawn.0.len());
    for extra in drawn.0.drain(keep..).flatten() {
        commands.entity(extra).despawn();
    }
    drawn.0.resize_with(shown, Vec::new);
    for (k, (scene, entities)) in sim.scenes.iter().zip(drawn.0.iter_mut()).enumerate() {
        let offset = grid_offset(k, shown, &sim.scenes[0].framing);
        let visuals = scene
            .bodies
            .iter()
            .map(|v| (v, false))
            .chain(scene.markers.iter().map(|v| (v, true)));
        let count = scene.bodies.len() + scene.markers.len();
        let keep = count.min(entities.len());
        for extra in entities.drain(keep..) {
            commands.entity(extra).despawn();
        }
        for (j, (visual, marker)) in visuals.enumerate() {
            let bundle = (
                Mesh3d(caches.mesh(&visual.shape, &mut meshes)),
                MeshMaterial3d(caches.material(visual, marker, &mut materials, &mut images)),
                place(&visual.pose, offset),
            );
            match entities.get(j) {
                Some(&e) => {
                    commands.entity(e).insert(bundle);
                }
                None => entities.push(commands.spawn((bundle, SceneVisual)).id()),
            }
        }
    }
}

fn lines(sim: Res<SimShared>, mut gizmos: Gizmos) {
    let sim = sim.0.get();
    let shown = sim.scenes.len();
    let Some(first) = sim.scenes.first() else {
        return;
    };
    let framing = first.framing;
    for (k, scene) in sim.scenes.iter().enumerate() {
        let o = grid_offset(k, shown, &framing);
        for line in &scene.lines {
            let at = |p: [f32; 3]| to_bevy([p[0] + o[0], p[1] + o[1], p[2] + o[2]]);
            let c = line.colour;
            gizmos.line(
                at(line.from),
                at(line.to),
                Color::srgba(c[0], c[1], c[2], c[3]),
            );
        }
        let centre = to_bevy([o[0] + framing.target[0], o[1] + framing.target[1], 0.0]);
        let cells = (2.0 * framing.half_extent / grid_step(framing.half_extent)).ceil() as u32;
        gizmos.grid(
            Isometry3d::new(
                centre + Vec3::Y * 0.002,
                Quat::from_rotation_x(-std::f32::consts::FRAC_PI_2),
            ),
            UVec2::splat(cells.max(1)),
            Vec2::splat(grid_step(framing.half_extent)),
            Color::srgba(0.85, 0.85, 0.85, 0.35),
        );
    }
}

/// A round grid spacing for a region of this half size: 0.1, 0.25, 0.5 or 1 m.
fn grid_step(half_extent: f32) -> f32 {
    [0.1, 0.25, 0.5, 1.0]
        .into_iter()
        .find(|s| half_extent / s <= 12.0)
        .unwrap_or(1.0)
}
