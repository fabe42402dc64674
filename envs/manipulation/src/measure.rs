//! What the tasks and their rewards read: a physics' measurements
//! ([`Measure`], rapier's or the kernel's), the task's own state
//! ([`TaskState`]) and the success thresholds.

use crate::controller::ControlState;
use crate::instruct::{Instruction, Phrasing};
use crate::panda::BodyState;
use crate::panda::CUBE_HALF;
use glam::{Quat, Vec3};
use serde::{Deserialize, Serialize};

/// Reach success: TCP within this distance of the goal, m.
pub const REACH_RADIUS: f32 = 0.025;
/// Push success: cube centre within this horizontal distance of the goal, m (ManiSkill's).
pub const PUSH_RADIUS: f32 = 0.1;
/// Pick success: cube centre within this distance of the goal while held still, m.
pub const PICK_RADIUS: f32 = 0.025;
/// Stack: largest horizontal offset of A from B, m (half the cube's face diagonal + 5 mm).
pub const STACK_OFFSET: f32 = CUBE_HALF * std::f32::consts::SQRT_2 + 0.005;
/// Joint speed under which the arm counts as still, rad/s.
pub const STILL: f32 = 0.2;
/// The task's side of an env's state: goal, success counter, controller memory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TaskState {
    /// Goal position, world frame, m (push: on the table, z = cube half size).
    pub goal: [f32; 3],
    /// Consecutive control steps the success condition has held.
    pub held: u32,
    /// Arm controller memory.
    pub control: ControlState,
    /// What the episode asks for (instruct-v0 only).
    #[serde(default)]
    pub instruction: Option<Instruction>,
    /// The wording it is observed in (instruct-v0 only).
    #[serde(default)]
    pub phrasing: Phrasing,
}

/// What the tasks read of a physics, whichever computes it (rapier or the kernel).
pub trait Measure {
    /// Joint positions and velocities: 7 arm joints (rad, rad/s), 2 finger openings (m, m/s).
    fn joints(&self) -> ([f32; 9], [f32; 9]);
    /// The tool centre point and the hand's orientation.
    fn tcp(&self) -> (Vec3, Quat);
    /// Pose and velocity of cube `i`.
    fn cube(&self, i: usize) -> BodyState;
    /// Whether both fingers touch cube `i` (a grasp also needs a squeeze, which the rewards test).
    fn touches(&self, i: usize) -> bool;
}
