//! One env's state for the kernel physics: a plain block of floats (the
//! chunked layout both backends store), with the contact impulses of the last
//! step kept for warm starting.

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

/// Most cubes per env.
pub const CUBES: usize = 4;
/// Floats of one cube: position (3), orientation x, y, z, w (4), linear and angular velocity (3 + 3).
pub const CUBE_FIELDS: usize = 13;
/// Warm-start slots (see [`slot`]).
pub const SLOTS: usize = 128;

/// The warm-start slot of each contact point that keeps one from step to step.
pub mod slot {
    use super::CUBES;
    /// Corner `c` of cube `i` on the table.
    pub fn cube_table(i: usize, c: usize) -> usize {
        8 * i + c
    }
    /// Point `k` between cubes `i < j`.
    pub fn cube_cube(i: usize, j: usize, k: usize) -> usize {
        let pair = [0, 3, 5][i] + j - i - 1;
        8 * CUBES + 4 * pair + k
    }
    /// Point `k` between robot box `r` (hand, left finger, right finger) and cube `i`.
    pub fn box_cube(r: usize, i: usize, k: usize) -> usize {
        8 * CUBES + 24 + 4 * (r * CUBES + i) + k
    }
    /// Corner `c` of robot box `r` on the table.
    pub fn box_table(r: usize, c: usize) -> usize {
        8 * CUBES + 24 + 48 + 8 * r + c
    }
}

/// Everything that evolves in one env (what a snapshot saves).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
pub struct Sim {
    /// Joint positions: 7 arm joints (rad), 2 finger openings (m).
    pub q: [f32; 9],
    /// Joint velocities.
    pub qd: [f32; 9],
    /// Each cube: position, orientation (x, y, z, w), linear and angular velocity.
    pub cubes: [[f32; CUBE_FIELDS]; CUBES],
    /// Goal position, world frame, m.
    pub goal: [f32; 3],
    /// Consecutive control steps the success condition has held.
    pub held: f32,
    /// Controller memory: end-effector target position.
    pub ee_position: [f32; 3],
    /// Controller memory: end-effector target orientation (x, y, z, w).
    pub ee_rotation: [f32; 4],
    /// The PD targets last set.
    pub targets: [f32; 9],
    /// Whether both fingers touched each cube in the last step's contact detection (1) or not (0).
    pub grasp: [f32; CUBES],
    /// instruct-v0's instruction ([`crate::instruct::Instruction::encode`]) with
    /// its phrasing last (zeros in the other tasks).
    pub instruction: [f32; 4],
    /// Impulse of each joint drive in the last step (warm start), N·s or N·m·s.
    pub drive_impulse: [f32; 9],
    /// Normal and two friction impulses of each contact slot in the last step (warm start).
    #[serde(with = "triples")]
    pub contact_impulse: [[f32; 3]; SLOTS],
}

/// Serde of the impulses as a list (serde's arrays stop at 32).
mod triples {
    use super::SLOTS;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error};

    pub fn serialize<S: Serializer>(v: &[[f32; 3]; SLOTS], s: S) -> Result<S::Ok, S::Error> {
        v.as_slice().serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<[[f32; 3]; SLOTS], D::Error> {
        let list = Vec::<[f32; 3]>::deserialize(d)?;
        let n = list.len();
        list.try_into().map_err(|_| {
            D::Error::custom(format!("contact_impulse needs {SLOTS} entries, got {n}"))
        })
    }
}
