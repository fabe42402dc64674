//! Procedural jigsaw pictures: seeded pictures with a canonical orientation.
//!
//! A cut-up picture can only be put back together if its pieces say where
//! they belong. Like photographs (sky above ground, light from one side),
//! every picture has a blue sky fading into dark ground from top to bottom
//! (the blue channel) and red light rising from left to right (the red
//! channel), with random levels and a random green, plus a few random opaque
//! discs and boxes that hide part of the gradients. No shape is large enough
//! to cover a whole piece.

use proprio_core::EnvRng;
use proprio_core::rand::RngExt;
use serde::{Deserialize, Serialize};

/// One opaque shape drawn over the background.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    /// Disc (true) or axis-aligned box.
    pub disc: bool,
    /// Centre, in pixels.
    pub centre: [f32; 2],
    /// Radius or half-side, in pixels.
    pub radius: f32,
    /// RGB colour.
    pub colour: [u8; 3],
}

/// A picture's description; rendering it is deterministic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Picture {
    /// Sky colour at the top (blue channel 180–255).
    pub sky: [u8; 3],
    /// Ground colour at the bottom (blue channel 0–60).
    pub ground: [u8; 3],
    /// Red at the left edge (0–40) and its rise to the right edge (180–215).
    pub light: [u8; 2],
    /// Shapes, drawn in order.
    pub shapes: Vec<Shape>,
}

impl Picture {
    /// Draws a scene for a `height × width` picture with `shapes` shapes no larger than 0.6 `piece`.
    pub fn generate(
        rng: &mut EnvRng,
        height: usize,
        width: usize,
        piece: usize,
        shapes: usize,
    ) -> Self {
        let mut channel = |lo: u8, hi: u8| rng.random_range(lo..=hi);
        let sky = [channel(40, 140), channel(100, 200), channel(180, 255)];
        let ground = [channel(60, 160), channel(60, 160), channel(0, 60)];
        let light = [channel(0, 40), channel(180, 215)];
        let shapes = (0..shapes)
            .map(|_| Shape {
                disc: rng.random(),
                centre: [
                    rng.random_range(0.0..height as f32),
                    rng.random_range(0.0..width as f32),
                ],
                radius: rng.random_range(0.25..0.6) * piece as f32,
                colour: [rng.random(), rng.random(), rng.random()],
            })
            .collect();
        Self {
            sky,
            ground,
            light,
            shapes,
        }
    }

    /// The RGB value at pixel `(y, x)` of a `height × width` picture.
    pub fn pixel(&self, y: usize, x: usize, height: usize, width: usize) -> [u8; 3] {
        let (py, px) = (y as f32 + 0.5, x as f32 + 0.5);
        for shape in self.shapes.iter().rev() {
            let (dy, dx) = (py - shape.centre[0], px - shape.centre[1]);
            let inside = if shape.disc {
                dy * dy + dx * dx <= shape.radius * shape.radius
            } else {
                dy.abs() <= shape.radius && dx.abs() <= shape.radius
            };
            if inside {
                return shape.colour;
            }
        }
        let t = py / height as f32;
        let s = px / width as f32;
        let blend = |k: usize| f32::from(self.sky[k]) * (1.0 - t) + f32::from(self.ground[k]) * t;
        let red = f32::from(self.light[0]) + f32::from(self.light[1]) * s;
        [
            red.clamp(0.0, 255.0) as u8,
            blend(1).clamp(0.0, 255.0) as u8,
            blend(2).clamp(0.0, 255.0) as u8,
        ]
    }
}
