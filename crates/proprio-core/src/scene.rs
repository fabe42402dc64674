//! What an env looks like: shapes, poses, markers and text for env `i`, in a
//! form any renderer can draw (the bevy viewer today, a batched offscreen
//! renderer later).
//!
//! Coordinates are right-handed, metres, **z up** (the robotics convention of
//! rapier, URDF and the drone models); a renderer converts to its own axes.
//! Colours are sRGB with straight alpha in `0..=1`.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// A rigid placement: translation and unit quaternion `[x, y, z, w]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Position, m.
    pub translation: [f32; 3],
    /// Orientation as a unit quaternion `[x, y, z, w]`.
    pub rotation: [f32; 4],
}

impl Pose {
    /// No rotation, at the origin.
    pub const IDENTITY: Self = Self {
        translation: [0.0; 3],
        rotation: [0.0, 0.0, 0.0, 1.0],
    };

    /// Unrotated, at `translation`.
    pub fn at(translation: [f32; 3]) -> Self {
        Self {
            translation,
            ..Self::IDENTITY
        }
    }

    /// At `translation`, turned by `angle` radians about the unit `axis`.
    pub fn rotated(translation: [f32; 3], axis: [f32; 3], angle: f32) -> Self {
        let (s, c) = (angle / 2.0).sin_cos();
        Self {
            translation,
            rotation: [axis[0] * s, axis[1] * s, axis[2] * s, c],
        }
    }
}

/// A shape centred on its pose's origin.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// A box with these half extents along its x, y, z axes.
    Cuboid { half_extents: [f32; 3] },
    /// A sphere.
    Sphere { radius: f32 },
    /// A capsule along its z axis: the segment `±half_length`, swept by `radius`.
    Capsule { radius: f32, half_length: f32 },
    /// A cylinder along its z axis.
    Cylinder { radius: f32, half_height: f32 },
    /// A flat rectangle in its x-y plane, facing +z (a textured card, a floor patch).
    Rectangle { half_size: [f32; 2] },
}

/// RGBA8 pixels, shared cheaply, with a key that changes whenever they do (for caches).
#[derive(Debug, Clone, PartialEq)]
pub struct Texture {
    /// A hash of the size and pixels: equal keys mean equal images.
    pub key: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Row-major sRGB pixels, 4 bytes each, top row first.
    pub rgba: Arc<[u8]>,
}

impl Texture {
    /// Wraps `rgba` (`width × height × 4` bytes); `None` if the length does not match.
    pub fn new(width: u32, height: u32, rgba: Vec<u8>) -> Option<Self> {
        if rgba.len() != width as usize * height as usize * 4 || rgba.is_empty() {
            return None;
        }
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        (width, height).hash(&mut hasher);
        rgba.hash(&mut hasher);
        Some(Self {
            key: hasher.finish(),
            width,
            height,
            rgba: rgba.into(),
        })
    }
}

/// One drawn thing: a shape at a pose with a colour, optionally textured.
#[derive(Debug, Clone, PartialEq)]
pub struct Visual {
    /// Its geometry.
    pub shape: Shape,
    /// Where it is.
    pub pose: Pose,
    /// sRGB colour and opacity (multiplied with the texture, if any).
    pub colour: [f32; 4],
    /// An image over the shape (a [`Shape::Rectangle`] shows it once, face up).
    pub texture: Option<Texture>,
}

impl Visual {
    /// An untextured shape.
    pub fn new(shape: Shape, pose: Pose, colour: [f32; 4]) -> Self {
        Self {
            shape,
            pose,
            colour,
            texture: None,
        }
    }
}

/// A straight line segment (a path, a force, an axis).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Start point, m.
    pub from: [f32; 3],
    /// End point, m.
    pub to: [f32; 3],
    /// sRGB colour and opacity.
    pub colour: [f32; 4],
}

/// How to frame the env by default: a camera at `eye` looking at `target`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Framing {
    /// Where the camera looks, m.
    pub target: [f32; 3],
    /// Where the camera stands, m.
    pub eye: [f32; 3],
    /// Half the side of the square (around `target`, in x-y) the env uses:
    /// how far apart a renderer lays out a grid of envs.
    pub half_extent: f32,
}

impl Default for Framing {
    fn default() -> Self {
        Self {
            target: [0.0; 3],
            eye: [0.0, -4.0, 2.0],
            half_extent: 2.0,
        }
    }
}

/// A named camera an env offers besides its framing (a drone's follow camera,
/// a car's chase camera), so pixel observations can pick a viewpoint by name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneCamera {
    /// The name users pass as `--camera`.
    pub name: &'static str,
    /// Where the camera stands, m.
    pub eye: [f32; 3],
    /// Where it looks, m.
    pub target: [f32; 3],
    /// Vertical field of view, degrees.
    pub fov_y_degrees: f32,
}

/// Everything a renderer needs to draw one env now. Reused between frames:
/// [`Scene::clear`] keeps the buffers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scene {
    /// The physical world: links, carts, drones, cubes, tables, puzzle pieces.
    pub bodies: Vec<Visual>,
    /// Things shown but not simulated, drawn translucent: targets, goal regions, gates.
    pub markers: Vec<Visual>,
    /// Line segments drawn over the world.
    pub lines: Vec<Line>,
    /// Lines of text about the env's state (a puzzle's question and answer so far).
    pub text: Vec<String>,
    /// The default camera.
    pub framing: Framing,
    /// Further named cameras (renderers also offer `default` and `top` from the framing).
    pub cameras: Vec<SceneCamera>,
    /// Simulated seconds per env step, for real-time playback (Gymnasium's
    /// `render_fps` inverted); `None` for turn-based tasks that wait for an answer.
    pub step_seconds: Option<f32>,
}

impl Scene {
    /// Empties the scene, keeping its buffers.
    pub fn clear(&mut self) {
        self.bodies.clear();
        self.markers.clear();
        self.lines.clear();
        self.text.clear();
        self.cameras.clear();
        self.framing = Framing::default();
        self.step_seconds = None;
    }

    /// True when there is nothing to draw or show.
    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
            && self.markers.is_empty()
            && self.lines.is_empty()
            && self.text.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texture_key_follows_the_pixels_and_checks_the_length() {
        let a = Texture::new(1, 1, vec![1, 2, 3, 255]).unwrap();
        let b = Texture::new(1, 1, vec![1, 2, 3, 255]).unwrap();
        let c = Texture::new(1, 1, vec![1, 2, 4, 255]).unwrap();
        assert_eq!(a.key, b.key);
        assert_ne!(a.key, c.key);
        assert!(Texture::new(2, 1, vec![0; 4]).is_none());
        assert!(Texture::new(0, 0, vec![]).is_none());
    }

    #[test]
    fn rotated_pose_is_a_unit_quaternion_about_the_axis() {
        let p = Pose::rotated([1.0, 2.0, 3.0], [0.0, 1.0, 0.0], std::f32::consts::PI);
        assert!((p.rotation[1] - 1.0).abs() < 1e-6 && p.rotation[3].abs() < 1e-6);
        assert_eq!(p.translation, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn clear_empties_but_keeps_capacity() {
        let mut s = Scene::default();
        s.text.push("x".into());
        s.bodies.push(Visual::new(
            Shape::Sphere { radius: 1.0 },
            Pose::IDENTITY,
            [1.0; 4],
        ));
        s.framing.half_extent = 9.0;
        s.clear();
        assert!(s.is_empty());
        assert!(s.bodies.capacity() >= 1);
        assert_eq!(s.framing, Framing::default());
    }
}
