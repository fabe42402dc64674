//! Videos of episodes (`proprio record`): env frames tiled into a grid, a
//! small overlay of step, reward and success, written as an animated GIF.

use crate::base::error::{LearnError, Result};
use image::codecs::gif::{GifEncoder, Repeat};
use image::{Delay, Frame, RgbaImage};
use plotters::prelude::*;
use plotters::style::FontFamily;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// NeuQuant's sampling step (1 best, 30 fastest); 10 is the `gif` crate's
/// default, 20 keeps a long grid video quick to write with no visible loss
/// on flat-shaded frames.
const QUANTISER_SPEED: i32 = 20;

/// An animated GIF written frame by frame: frames of one size, one frame rate.
pub struct GifVideo {
    encoder: GifEncoder<BufWriter<File>>,
    path: PathBuf,
    width: u32,
    height: u32,
    delay: Delay,
    frames: usize,
}

impl GifVideo {
    /// Creates `path` for `width × height` frames shown `fps` per second;
    /// an existing file is an error unless `overwrite`.
    pub fn create(path: &Path, width: u32, height: u32, fps: f64, overwrite: bool) -> Result<Self> {
        let io = |source| LearnError::Io {
            path: path.to_path_buf(),
            source,
        };
        if !(fps.is_finite() && fps > 0.0) {
            return Err(LearnError::Config(format!(
                "fps must be positive, got {fps}"
            )));
        }
        if path.exists() && !overwrite {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::AlreadyExists,
                "exists; pass --force to overwrite it",
            )));
        }
        let file = File::create(path).map_err(io)?;
        let mut encoder = GifEncoder::new_with_speed(BufWriter::new(file), QUANTISER_SPEED);
        encoder
            .set_repeat(Repeat::Infinite)
            .map_err(|e| io(std::io::Error::other(e)))?;
        Ok(Self {
            encoder,
            path: path.to_path_buf(),
            width,
            height,
            delay: Delay::from_numer_denom_ms((1000.0 / fps).round().max(10.0) as u32, 1),
            frames: 0,
        })
    }

    /// Appends one frame of `width × height × 3` RGB bytes.
    pub fn push(&mut self, rgb: &[u8]) -> Result<()> {
        let rgba: Vec<u8> = rgb
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect();
        let image = RgbaImage::from_raw(self.width, self.height, rgba).ok_or_else(|| {
            LearnError::Config(format!(
                "a frame of {} bytes is not {}×{} RGB",
                rgb.len(),
                self.width,
                self.height
            ))
        })?;
        self.encoder
            .encode_frame(Frame::from_parts(image, 0, 0, self.delay))
            .map_err(|e| LearnError::Io {
                path: self.path.clone(),
                source: std::io::Error::other(e),
            })?;
        self.frames += 1;
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> usize {
        self.frames
    }
}

/// Copies `cells` (RGB images of `width × height`) into a grid `columns` wide,
/// row by row, in `out` (resized to the grid's bytes; missing cells black).
pub fn tile(cells: &[&[u8]], width: usize, height: usize, columns: usize, out: &mut Vec<u8>) {
    let rows = cells.len().div_ceil(columns.max(1));
    let stride = columns * width * 3;
    out.clear();
    out.resize(rows * height * stride, 0);
    for (k, cell) in cells.iter().enumerate() {
        let (x0, y0) = ((k % columns) * width * 3, (k / columns) * height);
        for (y, row) in cell.chunks_exact(width * 3).enumerate() {
            let at = (y0 + y) * stride + x0;
            out[at..at + width * 3].copy_from_slice(row);
        }
    }
}

/// Writes `lines` into the top-left corner of a `width × height` RGB image:
/// white text with a dark outline, sized to the image.
pub fn annotate(rgb: &mut [u8], width: u32, height: u32, lines: &[String]) -> Result<()> {
    let draw_error = |e: &dyn std::fmt::Display| LearnError::Config(format!("overlay: {e}"));
    if !crate::plot::register_bundled_font() {
        return Err(draw_error(&"cannot load the bundled font"));
    }
    let size = (height as f64 / 11.0).clamp(8.0, 18.0);
    let root = BitMapBackend::with_buffer(rgb, (width, height)).into_drawing_area();
    let font = (FontFamily::SansSerif, size).into_font();
    // About 0.55 em a character: wrap what would run off the right edge.
    let fits = ((width as f64 - 6.0) / (0.55 * size)).max(8.0) as usize;
    let lines: Vec<String> = lines.iter().flat_map(|l| wrap(l, fits)).collect();
    for (k, line) in lines.iter().enumerate() {
        let y = 2 + (k as f64 * size * 1.1) as i32;
        for (dx, dy) in [(-1, 0), (1, 0), (0, -1), (0, 1)] {
            root.draw_text(line, &font.color(&BLACK), (3 + dx, y + dy))
                .map_err(|e| draw_error(&e))?;
        }
        root.draw_text(line, &font.color(&WHITE), (3, y))
            .map_err(|e| draw_error(&e))?;
    }
    root.present().map_err(|e| draw_error(&e))
}

/// `line` cut at spaces into lines of at most `width` characters (a longer word stays whole).
fn wrap(line: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in line.split_whitespace() {
        match out.last_mut() {
            Some(last) if last.chars().count() + 1 + word.chars().count() <= width => {
                last.push(' ');
                last.push_str(word);
            }
            _ => out.push(word.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_at_spaces() {
        assert_eq!(
            wrap("put the green cube on the blue cube", 16),
            ["put the green", "cube on the blue", "cube"]
        );
        assert_eq!(wrap("step 12", 16), ["step 12"]);
    }

    #[test]
    fn cells_land_in_their_grid_place() {
        let (a, b, c) = ([10u8; 2 * 2 * 3], [20u8; 2 * 2 * 3], [30u8; 2 * 2 * 3]);
        let mut grid = Vec::new();
        tile(&[&a, &b, &c], 2, 2, 2, &mut grid);
        assert_eq!(grid.len(), 4 * 4 * 3);
        let px = |x: usize, y: usize| grid[(y * 4 + x) * 3];
        assert_eq!((px(0, 0), px(3, 1), px(1, 3), px(3, 3)), (10, 20, 30, 0));
    }

    #[test]
    fn the_overlay_writes_light_text_in_the_corner_only() {
        let (w, h) = (96u32, 96u32);
        let mut rgb = vec![100u8; (w * h * 3) as usize];
        annotate(&mut rgb, w, h, &["step 12".into()]).unwrap();
        let bright = |x: u32, y: u32| rgb[((y * w + x) * 3) as usize] > 200;
        assert!(
            (0..40).any(|x| (0..12).any(|y| bright(x, y))),
            "no text drawn"
        );
        assert!(
            !(0..w).any(|x| (40..h).any(|y| bright(x, y))),
            "text outside the corner"
        );
    }
}
