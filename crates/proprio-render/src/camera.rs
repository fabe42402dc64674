//! Cameras: the named viewpoints of a scene and their matrices.
//!
//! Every scene offers `default` (its framing) and `top` (straight down over
//! the framing's target); an env adds its own in [`Scene::cameras`] (a
//! drone's `follow`). Scenes are z-up, as in `proprio_core::scene`.

use crate::RenderError;
use glam::{Mat4, Vec3};
use proprio_core::Scene;

/// Vertical field of view of the `default` and `top` cameras, degrees (bevy's default).
pub const DEFAULT_FOV_Y_DEGREES: f32 = 45.0;
/// Nearest distance drawn, m.
pub const NEAR: f32 = 0.01;
/// Farthest distance drawn, m; depth images read 0 where nothing is hit within it.
pub const FAR: f32 = 100.0;

/// A resolved viewpoint: where the camera stands, what it looks at, how wide it sees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// Camera position, m.
    pub eye: Vec3,
    /// Point it looks at, m.
    pub target: Vec3,
    /// Vertical field of view, degrees.
    pub fov_y_degrees: f32,
}

impl View {
    /// The camera named `name` in `scene`.
    pub fn named(scene: &Scene, name: &str) -> Result<Self, RenderError> {
        let f = &scene.framing;
        match name {
            "default" => Ok(Self {
                eye: f.eye.into(),
                target: f.target.into(),
                fov_y_degrees: DEFAULT_FOV_Y_DEGREES,
            }),
            "top" => {
                let half_fov = (DEFAULT_FOV_Y_DEGREES / 2.0).to_radians();
                let height = 1.1 * f.half_extent / half_fov.tan();
                let target = Vec3::from(f.target);
                Ok(Self {
                    eye: target + Vec3::Z * height,
                    target,
                    fov_y_degrees: DEFAULT_FOV_Y_DEGREES,
                })
            }
            _ => match scene.cameras.iter().find(|c| c.name == name) {
                Some(c) => Ok(Self {
                    eye: c.eye.into(),
                    target: c.target.into(),
                    fov_y_degrees: c.fov_y_degrees,
                }),
                None => Err(RenderError::UnknownCamera {
                    camera: name.into(),
                    available: names(scene),
                }),
            },
        }
    }

    /// The unit direction the camera looks along.
    pub fn forward(&self) -> Vec3 {
        (self.target - self.eye).normalize_or(Vec3::NEG_Z)
    }

    /// World → clip space for an image of `width × height` pixels (wgpu's 0..1 depth).
    pub fn view_projection(&self, width: u32, height: u32) -> Mat4 {
        // z is up unless the camera looks straight along it; then the image's up is +y.
        let up = if self.forward().cross(Vec3::Z).length_squared() < 1e-8 {
            Vec3::Y
        } else {
            Vec3::Z
        };
        let aspect = width as f32 / height as f32;
        let fov = self.fov_y_degrees.to_radians();
        // WebGPU's clip space: y up, depth 0..1 (as Direct3D's).
        let projection = glam::camera::rh::proj::directx::perspective(fov, aspect, NEAR, FAR);
        projection * glam::camera::rh::view::look_at_mat4(self.eye, self.target, up)
    }
}

/// Every camera name `scene` offers, comma-separated (for error messages).
pub fn names(scene: &Scene) -> String {
    ["default", "top"]
        .into_iter()
        .chain(scene.cameras.iter().map(|c| c.name))
        .collect::<Vec<_>>()
        .join(", ")
}
