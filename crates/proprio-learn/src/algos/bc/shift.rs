//! Random shifts of a minibatch's images (`image_shift`): each image moved
//! by up to `s` pixels each way, its edge pixels repeated into the gap — the
//! random-crop augmentation robomimic and Diffusion Policy found image
//! behaviour cloning needs against overfitting a few hundred demonstrations
//! (DrQ's for RL). Every image of a row moves together (one camera's view).

use crate::nets::encoder::ObsLayout;
use proprio::EnvRng;
use proprio::rand::RngExt;
use std::ops::Range;

/// The images of a flat observation: their columns and `(height, width)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Images {
    /// The columns of each image, row-major `[h, w, c]` (its own channel count).
    pub columns: Vec<Range<usize>>,
    /// `(height, width)` of every image.
    pub size: (usize, usize),
}

impl Images {
    /// The images of observations laid out as `layout` that a shift of up to
    /// `s` pixels moves (`None` for 0); an error without images, or for a
    /// shift of half an image's side or more.
    pub fn to_shift(layout: &ObsLayout, s: usize) -> Result<Option<Self>, String> {
        match (s, layout.image_size()) {
            (0, _) => Ok(None),
            (_, (0, _)) => Err(
                "image_shift moves images: this run's observations have none (--obs rgb+state)"
                    .into(),
            ),
            (s, (h, w)) if 2 * s >= h.min(w) => Err(format!(
                "image_shift {s} moves a {h}×{w} image by half its side or more"
            )),
            (_, size) => Ok(Some(Self {
                columns: layout.pixel_columns(),
                size,
            })),
        }
    }

    /// Shifts every image of each `d`-value row of `obs` by its own draw of
    /// `(dx, dy)` in `[-s, s]²`: pixel `(y, x)` takes the source's
    /// `(y − dy, x − dx)`, clamped to the image.
    pub fn shift(&self, obs: &mut [f32], d: usize, s: usize, rng: &mut EnvRng) {
        let (h, w) = self.size;
        let mut source = Vec::new();
        let s = s as i64;
        for row in obs.chunks_exact_mut(d) {
            let dx = rng.random_range(-s..=s) as isize;
            let dy = rng.random_range(-s..=s) as isize;
            for cols in &self.columns {
                let image = &mut row[cols.clone()];
                let c = image.len() / (h * w);
                source.clear();
                source.extend_from_slice(image);
                for y in 0..h {
                    let sy = (y as isize - dy).clamp(0, h as isize - 1) as usize;
                    for x in 0..w {
                        let sx = (x as isize - dx).clamp(0, w as isize - 1) as usize;
                        let (to, from) = ((y * w + x) * c, (sy * w + sx) * c);
                        image[to..to + c].copy_from_slice(&source[from..from + c]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proprio::Space;
    use proprio::rand::SeedableRng;

    #[test]
    fn a_shift_moves_every_picture_of_a_row_alike_and_repeats_their_edges() {
        // Two 3×3 one-channel images after a state value, two rows.
        let images = Images {
            columns: vec![1..10, 10..19],
            size: (3, 3),
        };
        let first: Vec<f32> = (0..9).map(|k| k as f32).collect();
        let second: Vec<f32> = first.iter().map(|v| v + 100.0).collect();
        let row = [&[-5.0][..], &first, &second].concat();
        let mut obs = [row.clone(), row.clone()].concat();
        let rng = &mut EnvRng::seed_from_u64(3);
        images.shift(&mut obs, 19, 1, rng);
        let mut moved = 0;
        for out in obs.chunks_exact(19) {
            assert_eq!(out[0], -5.0, "the state moved");
            // One (dx, dy) in [-1, 1]² explains every pixel of both images.
            let fits = |dx: isize, dy: isize| {
                [(1, &first), (10, &second)].iter().all(|&(at, picture)| {
                    (0..3).all(|y: isize| {
                        (0..3).all(|x: isize| {
                            let (sy, sx) = ((y - dy).clamp(0, 2), (x - dx).clamp(0, 2));
                            out[at + (y * 3 + x) as usize] == picture[(sy * 3 + sx) as usize]
                        })
                    })
                })
            };
            assert!(
                (-1..=1).any(|dx| (-1..=1).any(|dy| fits(dx, dy))),
                "{out:?}"
            );
            moved += usize::from(out[1..10] != first[..]);
        }
        assert!(moved > 0, "no row moved");
        let mut still = row.clone();
        images.shift(&mut still, 19, 0, rng);
        assert_eq!(still, row, "a shift of 0 changes nothing");
    }

    #[test]
    fn a_shift_needs_images_and_stays_under_half_their_side() {
        let image = Space::Image {
            height: 8,
            width: 6,
            channels: 3,
        };
        let space = Space::Dict {
            spaces: vec![
                ("state".into(), Space::uniform_box(2, -1.0, 1.0)),
                ("image".into(), image),
            ],
        };
        let layout = ObsLayout::new(&space).unwrap();
        let images = Images::to_shift(&layout, 2).unwrap().unwrap();
        assert_eq!(images.columns.len(), 1);
        assert_eq!(images.columns[0], 2..146);
        assert_eq!(images.size, (8, 6));
        assert_eq!(Images::to_shift(&layout, 0), Ok(None));
        let error = Images::to_shift(&layout, 3).unwrap_err();
        assert!(error.contains("8×6"), "{error}");
        let state = ObsLayout::new(&Space::uniform_box(2, -1.0, 1.0)).unwrap();
        let error = Images::to_shift(&state, 1).unwrap_err();
        assert!(error.contains("--obs rgb+state"), "{error}");
    }
}
