//! Unit meshes of the primitive shapes, and how a scene's visuals become
//! instances of them (a capsule is a cylinder and two spheres).

use bytemuck::{Pod, Zeroable};
use glam::{Mat3, Mat4, Quat, Vec3};
use proprio_core::{Pose, Shape, Visual};
use std::f32::consts::{PI, TAU};

/// One vertex of a unit mesh.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Vertex {
    position: [f32; 3],
    normal: [f32; 3],
    uv: [f32; 2],
}

/// How many unit meshes there are.
pub const MESHES: usize = 5;

/// The primitive meshes every shape is drawn with; `mesh as usize` indexes [`Meshes::ranges`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mesh {
    /// The cube `[-1, 1]³`.
    Cube,
    /// The sphere of radius 1.
    Sphere,
    /// The half of the unit sphere with z ≥ 0 (a capsule's ends).
    Hemisphere,
    /// The cylinder of radius 1 along z, `z ∈ [-1, 1]`, with caps.
    Cylinder,
    /// The square `[-1, 1]²` in the x-y plane, facing +z, uv from its top-left corner.
    Quad,
}

impl Mesh {
    /// Every mesh, in the order of [`Meshes::ranges`].
    pub const ALL: [Self; MESHES] = [
        Self::Cube,
        Self::Sphere,
        Self::Hemisphere,
        Self::Cylinder,
        Self::Quad,
    ];
}

/// All unit meshes in one vertex and one index buffer.
pub struct Meshes {
    /// Vertices of every mesh, back to back.
    pub vertices: Vec<Vertex>,
    /// Indices of every mesh, each relative to its mesh's first vertex.
    pub indices: Vec<u32>,
    /// (first vertex, first index, index count) of each mesh in [`Mesh::ALL`] order.
    pub ranges: [(i32, u32, u32); MESHES],
}

impl Meshes {
    /// Builds the unit meshes; `segments` around the sphere and cylinder.
    pub fn new(segments: u32) -> Self {
        let mut meshes = Self {
            vertices: Vec::new(),
            indices: Vec::new(),
            ranges: [(0, 0, 0); MESHES],
        };
        for (k, mesh) in Mesh::ALL.into_iter().enumerate() {
            let (first_vertex, first_index) = (meshes.vertices.len(), meshes.indices.len());
            let (v, i) = (&mut meshes.vertices, &mut meshes.indices);
            match mesh {
                Mesh::Cube => cube(v, i),
                Mesh::Sphere => sphere(segments, PI, v, i),
                Mesh::Hemisphere => sphere(segments, PI / 2.0, v, i),
                Mesh::Cylinder => cylinder(segments, v, i),
                Mesh::Quad => quad(v, i),
            }
            for index in &mut i[first_index..] {
                *index -= first_vertex as u32;
            }
            meshes.ranges[k] = (
                first_vertex as i32,
                first_index as u32,
                (meshes.indices.len() - first_index) as u32,
            );
        }
        meshes
    }
}

fn vertex(position: Vec3, normal: Vec3, uv: [f32; 2]) -> Vertex {
    Vertex {
        position: position.into(),
        normal: normal.into(),
        uv,
    }
}

/// Appends the quad `a, b, c, d` (counter-clockwise) as two triangles.
fn face(first: usize, indices: &mut Vec<u32>) {
    let f = first as u32;
    indices.extend_from_slice(&[f, f + 1, f + 2, f, f + 2, f + 3]);
}

fn cube(vertices: &mut Vec<Vertex>, indices: &mut Vec<u32>) {
    for axis in 0..3 {
        for sign in [-1.0f32, 1.0] {
            let mut n = Vec3::ZERO;
            n[axis] = sign;
            let (mut u, mut w) = (Vec3::ZERO, Vec3::ZERO);
            u[(axis + 1) % 3] = 1.0;
            w[(axis + 2) % 3] = 1.0;
            if sign < 0.0 {
                std::mem::swap(&mut u, &mut w);
            }
            face(vertices.len(), indices);
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let uv = [(a + 1.0) / 2.0, (1.0 - b) / 2.0];
                vertices.push(vertex(n + u * a + w * b, n, uv));
            }
        }
    }
}

/// The part of the unit sphere within `max_polar` of +z, `segments` around.
fn sphere(segments: u32, max_polar: f32, vertices: &mut Vec<Vertex>, indices: &mut Vec<u32>) {
    let rings = ((segments as f32 * max_polar / TAU).round() as u32).max(2);
    let first = vertices.len() as u32;
    for r in 0..=rings {
        let polar = max_polar * r as f32 / rings as f32;
        for s in 0..=segments {
            let azimuth = TAU * s as f32 / segments as f32;
            let p = Vec3::new(
                polar.sin() * azimuth.cos(),
                polar.sin() * azimuth.sin(),
                polar.cos(),
            );
            let uv = [s as f32 / segments as f32, r as f32 / rings as f32];
            vertices.push(vertex(p, p, uv));
        }
    }
    let row = segments + 1;
    for r in 0..rings {
        for s in 0..segments {
            let a = first + r * row + s;
            indices.extend_from_slice(&[a, a + row, a + row + 1, a, a + row + 1, a + 1]);
        }
    }
}

fn cylinder(segments: u32, vertices: &mut Vec<Vertex>, indices: &mut Vec<u32>) {
    let first = vertices.len() as u32;
    for s in 0..=segments {
        let azimuth = TAU * s as f32 / segments as f32;
        let n = Vec3::new(azimuth.cos(), azimuth.sin(), 0.0);
        let u = s as f32 / segments as f32;
        vertices.push(vertex(n - Vec3::Z, n, [u, 1.0]));
        vertices.push(vertex(n + Vec3::Z, n, [u, 0.0]));
    }
    for s in 0..segments {
        let a = first + 2 * s;
        indices.extend_from_slice(&[a, a + 2, a + 3, a, a + 3, a + 1]);
    }
    for z in [-1.0f32, 1.0] {
        let centre = vertices.len() as u32;
        let n = Vec3::Z * z;
        vertices.push(vertex(n, n, [0.5, 0.5]));
        for s in 0..=segments {
            let azimuth = TAU * s as f32 / segments as f32;
            let (sin, cos) = azimuth.sin_cos();
            let p = Vec3::new(cos, sin, z);
            vertices.push(vertex(p, n, [(cos + 1.0) / 2.0, (1.0 - sin) / 2.0]));
        }
        for s in 0..segments {
            let (a, b) = (centre + 1 + s, centre + 2 + s);
            let tri = if z > 0.0 {
                [centre, a, b]
            } else {
                [centre, b, a]
            };
            indices.extend_from_slice(&tri);
        }
    }
}

fn quad(vertices: &mut Vec<Vertex>, indices: &mut Vec<u32>) {
    face(vertices.len(), indices);
    for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
        let uv = [(a + 1.0) / 2.0, (1.0 - b) / 2.0];
        vertices.push(vertex(Vec3::new(a, b, 0.0), Vec3::Z, uv));
    }
}

/// One drawn primitive: per-instance vertex data of the shader.
#[repr(C)]
#[derive(Debug, Clone, Copy, Pod, Zeroable)]
pub struct Instance {
    /// Unit mesh → world, columns.
    model: [[f32; 4]; 4],
    /// Normal transform (inverse transpose of the model's 3×3), columns padded to 4.
    normal: [[f32; 4]; 3],
    /// Linear RGB and opacity.
    colour: [f32; 4],
    /// Which camera (the env's slot), atlas cell + 1 (0 = none), checkered floor flag,
    /// texture width | height << 16.
    extra: [u32; 4],
}

impl Instance {
    /// `mesh`-space → world via `pose` after scaling by `scale`.
    pub fn new(pose: &Pose, scale: Vec3, colour: [f32; 4], slot: u32) -> Self {
        let rotation = Quat::from_array(pose.rotation).normalize();
        let translation = Vec3::from(pose.translation);
        let model = Mat4::from_scale_rotation_translation(scale, rotation, translation);
        let normal = Mat3::from_quat(rotation) * Mat3::from_diagonal(scale.recip());
        let pad = |v: Vec3| [v.x, v.y, v.z, 0.0];
        Self {
            model: model.to_cols_array_2d(),
            normal: [pad(normal.x_axis), pad(normal.y_axis), pad(normal.z_axis)],
            colour: linear(colour),
            extra: [slot, 0, 0, 0],
        }
    }

    /// Shows the `width × height` texels at atlas cell `cell`.
    pub fn with_texture(mut self, cell: u32, width: u32, height: u32) -> Self {
        self.extra[1] = cell + 1;
        self.extra[3] = width | height << 16;
        self
    }

    /// The same primitive seen by the camera of env slot `slot`.
    pub fn in_slot(mut self, slot: u32) -> Self {
        self.extra[0] = slot;
        self
    }

    /// Draws a checkerboard (the floor).
    pub fn checkered(mut self) -> Self {
        self.extra[2] = 1;
        self
    }
}

/// sRGB colour with straight alpha → linear RGB with the same alpha.
fn linear(c: [f32; 4]) -> [f32; 4] {
    let f = |x: f32| {
        let x = x.clamp(0.0, 1.0);
        if x <= 0.04045 {
            x / 12.92
        } else {
            ((x + 0.055) / 1.055).powf(2.4)
        }
    };
    [f(c[0]), f(c[1]), f(c[2]), c[3].clamp(0.0, 1.0)]
}

/// Smallest scale on any axis, so a degenerate shape (zero radius) stays invertible.
const MIN_SCALE: f32 = 1e-6;

/// Calls `emit(mesh, pose, scale)` for each primitive `visual` is drawn with.
pub fn primitives(visual: &Visual, mut emit: impl FnMut(Mesh, Pose, Vec3)) {
    let s = |v: Vec3| v.max(Vec3::splat(MIN_SCALE));
    let pose = visual.pose;
    match visual.shape {
        Shape::Cuboid { half_extents } => emit(Mesh::Cube, pose, s(half_extents.into())),
        Shape::Sphere { radius } => emit(Mesh::Sphere, pose, s(Vec3::splat(radius))),
        Shape::Cylinder {
            radius,
            half_height,
        } => emit(
            Mesh::Cylinder,
            pose,
            s(Vec3::new(radius, radius, half_height)),
        ),
        Shape::Capsule {
            radius,
            half_length,
        } => {
            emit(
                Mesh::Cylinder,
                pose,
                s(Vec3::new(radius, radius, half_length)),
            );
            let rotation = Quat::from_array(pose.rotation).normalize();
            for (end, flip) in [
                (half_length, Quat::IDENTITY),
                (-half_length, Quat::from_rotation_x(PI)),
            ] {
                let centre = Vec3::from(pose.translation) + rotation * Vec3::Z * end;
                let cap = Pose {
                    translation: centre.into(),
                    rotation: (rotation * flip).to_array(),
                };
                emit(Mesh::Hemisphere, cap, s(Vec3::splat(radius)));
            }
        }
        Shape::Rectangle { half_size } => emit(
            Mesh::Quad,
            pose,
            s(Vec3::new(half_size[0], half_size[1], 1.0)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Back faces are culled, so every triangle of the closed meshes must
    /// wind counter-clockwise seen from outside.
    #[test]
    fn closed_meshes_wind_outwards() {
        let meshes = Meshes::new(12);
        for (k, mesh) in Mesh::ALL.into_iter().enumerate() {
            if mesh == Mesh::Quad {
                continue;
            }
            let (first_vertex, first_index, count) = meshes.ranges[k];
            let indices = &meshes.indices[first_index as usize..(first_index + count) as usize];
            let mut checked = 0;
            for tri in indices.as_chunks::<3>().0 {
                let p = tri.map(|i| {
                    Vec3::from(meshes.vertices[(first_vertex as u32 + i) as usize].position)
                });
                let normal = (p[1] - p[0]).cross(p[2] - p[0]);
                if normal.length() < 1e-6 {
                    continue;
                }
                let centroid = (p[0] + p[1] + p[2]) / 3.0;
                assert!(normal.dot(centroid) > 0.0, "{mesh:?}: {p:?} winds inwards");
                checked += 1;
            }
            assert!(checked >= 2, "{mesh:?}: {checked} triangles");
        }
    }
}
