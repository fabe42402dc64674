//! Images to CLIP's inputs as transformers' `CLIPImageProcessor` makes them:
//! bicubic resize of the shortest side, centre crop, `(x/255 − mean)/std`,
//! channels first. Renderer frames (`[n, h, w, 3]` u8) go in without a PNG round trip.

use super::config::Preprocess;
use crate::{Result, RewardError};
use image::imageops::{FilterType, crop_imm, resize};
use image::{GenericImageView, RgbImage, RgbaImage};

/// Normalised pixels of `images`, `[n, 3, crop height, crop width]` row-major.
pub fn pixels(images: &[RgbImage], p: &Preprocess) -> Vec<f32> {
    let (ch, cw) = p.crop;
    let mut out = Vec::with_capacity(images.len() * 3 * ch * cw);
    for image in images {
        let (w, h) = image.dimensions();
        let (short, long) = (w.min(h) as usize, w.max(h) as usize);
        let new_long = p.shortest_edge * long / short;
        let (nw, nh) = if w <= h {
            (p.shortest_edge, new_long)
        } else {
            (new_long, p.shortest_edge)
        };
        let resized;
        let source = if (nw, nh) == (w as usize, h as usize) {
            image
        } else {
            resized = resize(image, nw as u32, nh as u32, FilterType::CatmullRom);
            &resized
        };
        let top = nh.saturating_sub(ch) / 2;
        let left = nw.saturating_sub(cw) / 2;
        let cropped = crop_imm(source, left as u32, top as u32, cw as u32, ch as u32);
        for c in 0..3 {
            for y in 0..ch as u32 {
                for x in 0..cw as u32 {
                    // A crop larger than the image pads with black, as transformers does.
                    let v = if x < cropped.width() && y < cropped.height() {
                        f32::from(cropped.get_pixel(x, y)[c])
                    } else {
                        0.0
                    };
                    out.push((v / 255.0 - p.mean[c]) / p.std[c]);
                }
            }
        }
    }
    out
}

/// RGB images from a batch of frames `[n, height, width, channels]` (3: RGB,
/// 4: RGBA, alpha dropped), as the renderer and pixel observations lay them out.
pub fn frames_to_images(
    frames: &[u8],
    n: usize,
    height: usize,
    width: usize,
    channels: usize,
) -> Result<Vec<RgbImage>> {
    let frame = height * width * channels;
    if frames.len() != n * frame || !(channels == 3 || channels == 4) || frame == 0 {
        return Err(RewardError::Input(format!(
            "frames: expected {n} × {height} × {width} × 3 or 4 bytes, got {} bytes with {channels} channels",
            frames.len()
        )));
    }
    let (w, h) = (width as u32, height as u32);
    frames
        .chunks_exact(frame)
        .map(|f| {
            let image = match channels {
                3 => RgbImage::from_raw(w, h, f.to_vec()),
                _ => RgbaImage::from_raw(w, h, f.to_vec())
                    .map(|rgba| image::DynamicImage::ImageRgba8(rgba).to_rgb8()),
            };
            image.ok_or_else(|| {
                RewardError::Input(format!(
                    "frames: a {width}×{height} frame does not fit its bytes"
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Preprocess {
        Preprocess {
            shortest_edge: 4,
            crop: (4, 4),
            mean: [0.5, 0.5, 0.5],
            std: [0.5, 0.25, 1.0],
        }
    }

    #[test]
    fn pixels_are_normalised_channels_first_and_centre_cropped() {
        // 4×6 (w×h): already 4 on the short side, so only the crop acts.
        let image = RgbImage::from_fn(4, 6, |x, y| image::Rgb([(y * 40) as u8, 255, x as u8]));
        let out = pixels(&[image], &plain());
        assert_eq!(out.len(), 3 * 4 * 4);
        // Row 0 of the crop is row 1 of the image: red 40.
        assert!((out[0] - (40.0 / 255.0 - 0.5) / 0.5).abs() < 1e-6);
        assert!((out[16] - 2.0).abs() < 1e-6, "green 255 → (1 − 0.5)/0.25");
        assert!((out[32 + 3] - (3.0 / 255.0 - 0.5)).abs() < 1e-6);
    }

    #[test]
    fn frames_must_match_their_shape() {
        let rgba = vec![7u8; 2 * 2 * 3 * 4];
        let images = frames_to_images(&rgba, 2, 2, 3, 4).unwrap();
        assert_eq!(images.len(), 2);
        assert_eq!(images[1].dimensions(), (3, 2));
        assert!(frames_to_images(&rgba, 3, 2, 3, 4).is_err());
        assert!(frames_to_images(&rgba, 4, 2, 3, 2).is_err());
    }
}
