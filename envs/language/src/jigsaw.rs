//! `language/jigsaw-v0`: a picture cut into an R × C grid and shuffled; answer where each piece goes.

use crate::picture::Picture;
use crate::puzzle::{Puzzle, Verdict};
use crate::visuals;
use proprio_core::rand::RngExt;
use proprio_core::{EnvRng, Space};
use serde::{Deserialize, Serialize};

/// `language/jigsaw-v0` config: grid size (the difficulty) and picture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JigsawConfig {
    /// Rows of pieces (2–4).
    pub rows: usize,
    /// Columns of pieces (2–4).
    pub cols: usize,
    /// Side of a square piece in pixels (4–32).
    pub piece_px: usize,
    /// Random shapes drawn over the picture's gradients (0–8).
    pub shapes: usize,
}

impl Default for JigsawConfig {
    fn default() -> Self {
        Self {
            rows: 2,
            cols: 2,
            piece_px: 8,
            shapes: 2,
        }
    }
}

/// One puzzle: the picture and where its pieces are shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shuffled {
    /// The picture (`scene` in snapshots).
    #[serde(rename = "scene")]
    pub picture: Picture,
    /// `slots[j]`: the row-major slot of the piece shown at position `j` (a permutation).
    pub slots: Vec<usize>,
}

/// The jigsaw puzzle.
pub struct Jigsaw {
    config: JigsawConfig,
}

impl Jigsaw {
    /// The picture's piece at `slot`, as a texture.
    fn piece(&self, p: &Shuffled, slot: usize) -> proprio_core::Texture {
        let (h, w) = self.size();
        let (cols, px) = (self.config.cols, self.config.piece_px);
        let (oy, ox) = (slot / cols * px, slot % cols * px);
        let mut rgba = Vec::with_capacity(px * px * 4);
        for dy in 0..px {
            for dx in 0..px {
                rgba.extend(p.picture.pixel(oy + dy, ox + dx, h, w));
                rgba.push(255);
            }
        }
        proprio_core::Texture::new(px as u32, px as u32, rgba).expect("a piece is px × px")
    }

    fn pieces(&self) -> usize {
        self.config.rows * self.config.cols
    }

    fn size(&self) -> (usize, usize) {
        let px = self.config.piece_px;
        (self.config.rows * px, self.config.cols * px)
    }
}

impl Puzzle for Jigsaw {
    type Config = JigsawConfig;
    type Instance = Shuffled;

    fn new(config: &JigsawConfig) -> Result<Self, String> {
        let c = config;
        if !(2..=4).contains(&c.rows) || !(2..=4).contains(&c.cols) {
            return Err(format!(
                "rows and cols must be 2 to 4, got {} x {}",
                c.rows, c.cols
            ));
        }
        if !(4..=32).contains(&c.piece_px) || c.shapes > 8 {
            return Err(format!(
                "piece_px must be 4 to 32 and shapes at most 8, got {} and {}",
                c.piece_px, c.shapes
            ));
        }
        Ok(Self {
            config: config.clone(),
        })
    }

    /// The shuffled picture, `(rows·piece_px) × (cols·piece_px) × 3`.
    fn prompt_space(&self) -> Space {
        let (height, width) = self.size();
        Space::Image {
            height,
            width,
            channels: 3,
        }
    }

    fn answer_space(&self) -> (u32, usize) {
        (1 + self.pieces() as u32, self.pieces())
    }

    fn generate(&self, rng: &mut EnvRng) -> Shuffled {
        let (h, w) = self.size();
        let picture = Picture::generate(rng, h, w, self.config.piece_px, self.config.shapes);
        let mut slots: Vec<usize> = (0..self.pieces()).collect();
        for i in (1..slots.len()).rev() {
            slots.swap(i, rng.random_range(0..=i));
        }
        Shuffled { picture, slots }
    }

    fn prompt(&self, p: &Shuffled, obs: &mut [f32]) {
        let (h, w) = self.size();
        let (cols, px) = (self.config.cols, self.config.piece_px);
        for (shown, &slot) in p.slots.iter().enumerate() {
            let (sy, sx) = (shown / cols * px, shown % cols * px);
            let (oy, ox) = (slot / cols * px, slot % cols * px);
            for dy in 0..px {
                for dx in 0..px {
                    let rgb = p.picture.pixel(oy + dy, ox + dx, h, w);
                    let at = ((sy + dy) * w + sx + dx) * 3;
                    for (o, v) in obs[at..at + 3].iter_mut().zip(rgb) {
                        *o = f32::from(v);
                    }
                }
            }
        }
    }

    fn verify(&self, p: &Shuffled, answer: &[u32]) -> Verdict {
        let n = self.pieces();
        if let Some(k) = answer.iter().position(|&t| t == 0 || t as usize > n) {
            return Verdict::Malformed(format!("token {k} ({}) names no slot", answer[k]));
        }
        let right = answer
            .iter()
            .zip(&p.slots)
            .filter(|&(&t, &slot)| t as usize == slot + 1)
            .count();
        Verdict::Scored {
            credit: right as f64 / n as f64,
            exact: right == n,
        }
    }

    fn check(&self, p: &Shuffled) -> Result<(), String> {
        let n = self.pieces();
        let mut seen = vec![false; n];
        for &slot in &p.slots {
            if slot >= n || std::mem::replace(&mut seen[slot], true) {
                return Err(format!(
                    "slots {:?} are not a permutation of 0..{n}",
                    p.slots
                ));
            }
        }
        if p.slots.len() != n {
            return Err(format!("{} slots for {n} pieces", p.slots.len()));
        }
        Ok(())
    }

    /// The shuffled pieces on the left; on the right, the picture as the
    /// answer so far puts it together (green right, red wrong).
    fn scene(&self, p: &Shuffled, answer: &[u32], scene: &mut proprio_core::Scene) {
        let (rows, cols) = (self.config.rows, self.config.cols);
        let step = visuals::CARD + visuals::GAP;
        let width = cols as f32 * step;
        let place = |board: f32, at: usize| {
            let x = board * (width / 2.0 + 0.15) + (at % cols) as f32 * step - (width - step) / 2.0;
            let z = 0.2 + (rows - 1 - at / cols) as f32 * step;
            (x, z)
        };
        let size = [visuals::CARD; 2];
        for (shown, &slot) in p.slots.iter().enumerate() {
            let (x, z) = place(-1.0, shown);
            let piece = Some(self.piece(p, slot));
            visuals::card(scene, x, z, size, piece, visuals::PLAIN);
        }
        let mut filled = vec![false; rows * cols];
        for (shown, &token) in answer.iter().enumerate() {
            let Some(slot) = (token as usize).checked_sub(1).filter(|&s| s < rows * cols) else {
                continue;
            };
            filled[slot] = true;
            let right = p.slots[shown] == slot;
            let colour = if right {
                visuals::RIGHT
            } else {
                visuals::WRONG
            };
            let (x, z) = place(1.0, slot);
            visuals::card(
                scene,
                x,
                z,
                size,
                Some(self.piece(p, p.slots[shown])),
                colour,
            );
        }
        for (slot, _) in filled.iter().enumerate().filter(|(_, f)| !**f) {
            let (x, z) = place(1.0, slot);
            visuals::card(scene, x, z, size, None, visuals::BLANK);
        }
        scene.text.push(format!(
            "pieces shown belong in slots {:?}; answer so far: {answer:?}",
            p.slots.iter().map(|s| s + 1).collect::<Vec<_>>()
        ));
        visuals::frame_board(scene, 0.2 + rows as f32 * step, 2.0 * width + 0.3);
    }
}
