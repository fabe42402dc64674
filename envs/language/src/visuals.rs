//! What a language task looks like, for viewers ([`proprio_core::Scene`]):
//! tokens as glyph cards standing in a row (a 3 × 5 pixel font), coloured by
//! whether they are right, and a jigsaw's pieces as picture cards.

use crate::vocab::{DIGIT0, SYMBOLS};
use proprio_core::{Framing, Pose, Scene, Shape, Texture, Visual};

/// Side of a card, m.
pub const CARD: f32 = 0.22;
/// Gap between cards, m.
pub const GAP: f32 = 0.03;
/// A card not yet answered.
pub const BLANK: [f32; 4] = [0.35, 0.35, 0.38, 1.0];
/// A neutral card (a question's token).
pub const PLAIN: [f32; 4] = [0.95, 0.95, 0.95, 1.0];
/// A right answer token.
pub const RIGHT: [f32; 4] = [0.55, 0.95, 0.55, 1.0];
/// A wrong answer token.
pub const WRONG: [f32; 4] = [1.0, 0.55, 0.55, 1.0];

const SCALE: usize = 4;

/// Rows of a 3 × 5 glyph, top first, bit 2 = left column.
fn bitmap(c: char) -> [u8; 5] {
    match c {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 3, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 2, 2, 2],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        '+' => [0, 2, 7, 2, 0],
        '*' => [0, 5, 2, 5, 0],
        '=' => [0, 7, 0, 7, 0],
        '^' => [2, 7, 2, 2, 2],
        'v' => [2, 2, 2, 7, 2],
        '!' => [2, 2, 2, 0, 2],
        _ => [7, 1, 3, 0, 2],
    }
}

/// A black glyph on white with a one-pixel margin, each font pixel 4 × 4 texels.
pub fn glyph(c: char) -> Texture {
    let (w, h) = (5 * SCALE, 7 * SCALE);
    let mut rgba = vec![255u8; w * h * 4];
    for (row, bits) in bitmap(c).iter().enumerate() {
        for col in 0..3 {
            if bits & (4 >> col) == 0 {
                continue;
            }
            for dy in 0..SCALE {
                for dx in 0..SCALE {
                    let (y, x) = ((row + 1) * SCALE + dy, (col + 1) * SCALE + dx);
                    rgba[(y * w + x) * 4..(y * w + x) * 4 + 3].fill(20);
                }
            }
        }
    }
    Texture::new(w as u32, h as u32, rgba).expect("the glyph buffer matches its size")
}

/// The character a digit token shows (`?` for anything else).
pub fn token_char(token: u32) -> char {
    if (DIGIT0..SYMBOLS).contains(&token) {
        char::from(b'0' + (token - DIGIT0) as u8)
    } else {
        '?'
    }
}

/// A card standing upright facing the camera (−y), centred at `(x, z)`.
pub fn card(
    scene: &mut Scene,
    x: f32,
    z: f32,
    size: [f32; 2],
    texture: Option<Texture>,
    colour: [f32; 4],
) {
    let pose = Pose::rotated([x, 0.0, z], [1.0, 0.0, 0.0], std::f32::consts::FRAC_PI_2);
    let shape = Shape::Rectangle {
        half_size: [size[0] / 2.0, size[1] / 2.0],
    };
    scene.bodies.push(Visual {
        shape,
        pose,
        colour,
        texture,
    });
}

/// A centred row of glyph cards at height `z`: `None` draws a blank card.
pub fn glyph_row(
    scene: &mut Scene,
    z: f32,
    cards: impl IntoIterator<Item = (Option<char>, [f32; 4])>,
) {
    let cards: Vec<_> = cards.into_iter().collect();
    let n = cards.len() as f32;
    let step = 0.7 * CARD + GAP;
    let x0 = -(n - 1.0) * step / 2.0;
    for (k, (c, colour)) in cards.into_iter().enumerate() {
        let x = x0 + k as f32 * step;
        card(scene, x, z, [0.7 * CARD, CARD], c.map(glyph), colour);
    }
}

/// The answer hidden from the agent (a secret, the hidden object), as faint
/// cards at height `z`: markers, for whoever watches, not bodies of the scene.
pub fn hidden_row(scene: &mut Scene, z: f32, text: &str) {
    let first = scene.bodies.len();
    let faint = [1.0, 1.0, 1.0, 0.6];
    glyph_row(scene, z, text.chars().map(|c| (Some(c), faint)));
    let cards: Vec<_> = scene.bodies.drain(first..).collect();
    scene.markers.extend(cards);
}

/// Frames a board of cards whose rows reach heights `0 ..= top` and width `width`.
pub fn frame_board(scene: &mut Scene, top: f32, width: f32) {
    let mid = top / 2.0;
    let distance = 1.3 * width.max(top + CARD) + 0.8;
    scene.framing = Framing {
        target: [0.0, 0.0, mid],
        eye: [0.0, -distance, mid + 0.15 * distance],
        half_extent: 0.6 * width.max(1.0) + 0.2,
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glyphs_differ_and_have_ink() {
        let one = glyph('1');
        let seven = glyph('7');
        assert_ne!(one.key, seven.key);
        let ink = one.rgba.chunks(4).filter(|p| p[0] < 128).count();
        assert_eq!(ink, 8 * SCALE * SCALE);
        assert_eq!(token_char(DIGIT0 + 7), '7');
        assert_eq!(token_char(0), '?');
    }
}
