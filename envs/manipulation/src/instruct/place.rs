//! Where an episode's cubes start: in the training square, or for the
//! position split outside it (still within the arm's reach), spaced apart
//! and off a push's path.

use super::Instruction;
use crate::panda::CUBE_HALF;
use glam::Vec3;
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;

/// Where the cubes' centres are drawn (config key `split`: `position` draws `Outside`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// The square every other split draws from.
    Square,
    /// Within [`OUTSIDE`] but outside the square: starts no training episode has.
    Outside,
}

/// Half the side of the square the cubes start in, m (centred on the table's centre).
pub const START_HALF: f32 = 0.12;
/// The position split's bounds (x low, x high, |y| high), m: the far side
/// stops short of where a top-down grasp leaves the arm's reach.
pub const OUTSIDE: (f32, f32, f32) = (-0.2, 0.15, 0.2);
/// A pushed cube starts at most this far toward its side, m, in either
/// region (the side line lies at [`super::SIDE_LINE`]).
const PUSH_START: f32 = START_HALF;
/// Least distance between two cubes' centres at the start, m: an open hand
/// (8 cm between the fingers) fits around one without touching the next.
const SPACING: f32 = 0.1;
/// Least distance of another cube from a push's path (the hand behind the cube to the side line), m.
const PATH_CLEARANCE: f32 = 0.07;
/// Tries per cube before the last draw is kept (a fixed count keeps the stream deterministic).
const TRIES: usize = 64;

/// Distance from `x` to the segment `a`–`b` in the plane.
fn to_segment(x: Vec3, a: Vec3, b: Vec3) -> f32 {
    let (x, a, b) = (x.with_z(0.0), a.with_z(0.0), b.with_z(0.0));
    let ab = b - a;
    let k = ((x - a).dot(ab) / ab.length_squared().max(1e-9)).clamp(0.0, 1.0);
    (x - (a + ab * k)).length()
}

/// A centre in `region` (for `Outside`, a draw in the bounds outside the
/// square, or toward a push's side no further than [`PUSH_START`]).
fn draw_xy(region: Region, toward: Option<Vec3>, rng: &mut EnvRng) -> Vec3 {
    if region == Region::Square {
        let x = rng.random_range(-START_HALF..START_HALF);
        let y = rng.random_range(-START_HALF..START_HALF);
        return Vec3::new(x, y, CUBE_HALF);
    }
    let (low, high, side) = OUTSIDE;
    let mut at = Vec3::new(low, side, CUBE_HALF);
    for _ in 0..TRIES {
        at.x = rng.random_range(low..high);
        at.y = rng.random_range(-side..side);
        let outside = at.x.abs().max(at.y.abs()) > START_HALF;
        if outside && toward.is_none_or(|d| at.dot(d) <= PUSH_START) {
            break;
        }
    }
    at
}

/// Draws the cubes' centres and yaws for `instruction` in `region`: at
/// least [`SPACING`] apart, and off a push's path, so that what is asked
/// can be done without moving another cube first.
pub fn place_cubes(
    instruction: Instruction,
    cubes: usize,
    region: Region,
    rng: &mut EnvRng,
) -> Vec<(Vec3, f32)> {
    let toward = match instruction {
        Instruction::Push { side, .. } => Some(side.direction()),
        _ => None,
    };
    let mut centres = vec![Vec3::ZERO; cubes];
    let target = instruction.cube();
    centres[target] = draw_xy(region, toward, rng);
    let path = match instruction {
        Instruction::Push { side, .. } => {
            let d = side.direction();
            let from = centres[target] - d * PATH_CLEARANCE;
            let to = instruction.goal(&centres);
            Some((from, to))
        }
        _ => None,
    };
    for i in (0..cubes).filter(|&i| i != target) {
        for _ in 0..TRIES {
            centres[i] = draw_xy(region, None, rng);
            let spaced = (0..i)
                .chain([target])
                .all(|j| j == i || (centres[i] - centres[j]).length() >= SPACING);
            let clear = path.is_none_or(|(a, b)| to_segment(centres[i], a, b) >= PATH_CLEARANCE);
            if spaced && clear {
                break;
            }
        }
    }
    centres
        .into_iter()
        .map(|c| (c, rng.random_range(0.0..std::f32::consts::TAU)))
        .collect()
}
