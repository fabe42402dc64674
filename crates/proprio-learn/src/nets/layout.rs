//! How a sequence policy reads an observation: token segments and image patches.

use crate::base::error::{LearnError, Result};
use proprio::Space;

/// One part of a flat observation.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    /// `len` token ids starting at `offset`.
    Tokens { offset: usize, len: usize },
    /// An `h × w × c` image starting at `offset`, cut into `patch × patch` squares.
    Image {
        offset: usize,
        h: usize,
        w: usize,
        c: usize,
    },
}

/// The token and patch segments of an observation space, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    segments: Vec<Segment>,
    patch: usize,
    /// Token ids read from the observation per row.
    pub tokens: usize,
    /// Image patches per row.
    pub patches: usize,
    /// Values in one patch (`patch² × channels`; 0 without images).
    pub patch_dim: usize,
    /// Largest token id in the observation, plus one.
    pub vocab: u32,
    /// The observation is a dict whose first field is tokens, a prompt that
    /// stays fixed within an episode (a puzzle's question) before its transcript.
    prompt: bool,
}

impl Layout {
    /// The layout of `space` with square patches of side `patch`; only token
    /// and image spaces (alone or in a dict or tuple) can be read.
    pub fn new(space: &Space, patch: usize) -> Result<Self> {
        let mut layout = Self {
            segments: Vec::new(),
            patch: patch.max(1),
            tokens: 0,
            patches: 0,
            patch_dim: 0,
            vocab: 0,
            prompt: matches!(space, Space::Dict { spaces }
                if spaces.len() > 1 && matches!(spaces[0].1, Space::Tokens { .. })),
        };
        let mut offset = 0;
        layout.add(space, &mut offset)?;
        Ok(layout)
    }

    fn add(&mut self, space: &Space, offset: &mut usize) -> Result<()> {
        match space {
            Space::Tokens { vocab, max_len } => {
                self.segments.push(Segment::Tokens {
                    offset: *offset,
                    len: *max_len,
                });
                self.tokens += max_len;
                self.vocab = self.vocab.max(*vocab);
            }
            Space::Image {
                height,
                width,
                channels,
            } => {
                let p = self.patch;
                let dim = p * p * channels;
                if height % p != 0
                    || width % p != 0
                    || (self.patch_dim != 0 && self.patch_dim != dim)
                {
                    return Err(LearnError::Config(format!(
                        "a {height}x{width}x{channels} image cannot be cut into {p}x{p} patches like the other images; set `patch` to a divisor of both sides"
                    )));
                }
                self.segments.push(Segment::Image {
                    offset: *offset,
                    h: *height,
                    w: *width,
                    c: *channels,
                });
                self.patches += (height / p) * (width / p);
                self.patch_dim = dim;
            }
            Space::Dict { spaces } => {
                for (_, s) in spaces {
                    self.add(s, offset)?;
                }
                return Ok(());
            }
            Space::Tuple { spaces } => {
                for s in spaces {
                    self.add(s, offset)?;
                }
                return Ok(());
            }
            other => {
                return Err(LearnError::Config(format!(
                    "a sequence policy reads token and image observations, not {other}"
                )));
            }
        }
        *offset += space.flat_dim();
        Ok(())
    }

    /// Splits `n` flat observations into each row's token ids (every token
    /// segment without its trailing padding, segments in order), patches
    /// `[n × patches × patch_dim]` with pixels scaled to `[-1, 1]`, and each
    /// row's prompt tokens (the first of its ids; 0 without a prompt field).
    pub fn split(&self, obs: &[f32], n: usize) -> (Vec<Vec<i64>>, Vec<f32>, Vec<usize>) {
        let dim = obs.len() / n.max(1);
        let mut ids = Vec::with_capacity(n);
        let mut prompts = Vec::with_capacity(n);
        let mut pixels = Vec::with_capacity(n * self.patches * self.patch_dim);
        let p = self.patch;
        for row in obs.chunks_exact(dim.max(1)).take(n) {
            let mut row_ids = Vec::with_capacity(self.tokens);
            for segment in &self.segments {
                match *segment {
                    Segment::Tokens { offset, len } => {
                        let tokens = &row[offset..offset + len];
                        let used = tokens.iter().rposition(|&t| t != 0.0).map_or(0, |k| k + 1);
                        if self.prompt && prompts.len() == ids.len() {
                            prompts.push(used);
                        }
                        row_ids.extend(tokens[..used].iter().map(|&t| t as i64));
                    }
                    Segment::Image { offset, h, w, c } => {
                        for py in 0..h / p {
                            for px in 0..w / p {
                                for y in py * p..(py + 1) * p {
                                    let start = offset + (y * w + px * p) * c;
                                    pixels.extend(
                                        row[start..start + p * c].iter().map(|v| v / 127.5 - 1.0),
                                    );
                                }
                            }
                        }
                    }
                }
            }
            if prompts.len() == ids.len() {
                prompts.push(0);
            }
            ids.push(row_ids);
        }
        (ids, pixels, prompts)
    }
}
