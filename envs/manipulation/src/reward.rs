//! The tasks' dense, staged rewards and success conditions, read through
//! [`Measure`] so both physics (and the WGSL twin in `kernel/task.wgsl`) pay
//! the same. Pick and stack follow ManiSkill3's `PickCube-v1` and
//! `StackCube-v1` stage for stage; the formulas are in `docs/envs.md`.

use crate::config::{Settings, TaskKind};
use crate::controller::FINGER_RANGE;
use crate::measure::{
    Measure, PICK_RADIUS, PUSH_RADIUS, REACH_RADIUS, STACK_OFFSET, STILL, TaskState,
};
use crate::scene::CUBE_HALF;
use crate::world::BodyState;
use glam::Vec3;

/// Stage weights of pick-cube (ManiSkill's): reach, grasp, place, static; success scores their sum.
pub const PICK_STAGES: f32 = 5.0;
/// Stage ceiling of stack-cube (ManiSkill's): 2 reach, +2 grasp, +1 place, +2 release and rest; success 8.
pub const STACK_STAGES: f32 = 8.0;

/// How far both fingers together must sit beyond their drive targets for a
/// touch to count as a grasp, m: ≥ 2.5 mm a finger presses ≥ 2.5 N into the
/// cube (drive stiffness 1000 N/m), four times the cube's weight with μ = 1.
pub const SQUEEZE: f32 = 0.005;

/// Cube `i` is grasped: both fingers touch it and their drives press on it.
/// A touch alone (fingers resting on the faces with a wide target) pays
/// the grasp stage without holding anything, as ManiSkill's force test does not.
pub fn grasped(p: &impl Measure, t: &TaskState, i: usize) -> bool {
    let (q, _) = p.joints();
    let target = t.control.targets[7] + t.control.targets[8];
    p.touches(i) && q[7] + q[8] - target > SQUEEZE
}

/// `1 − tanh(5 d)`: 1 at zero distance, 0.46 at 10 cm.
pub fn closeness(distance: f32) -> f32 {
    1.0 - (5.0 * distance).tanh()
}

/// How still the arm is: `1 − tanh(5 |q̇_arm|)` over the 7 arm joints (ManiSkill's pick static term).
pub fn arm_static(qd: &[f32; 9]) -> f32 {
    let speed = qd[..7].iter().map(|v| v * v).sum::<f32>().sqrt();
    1.0 - (5.0 * speed).tanh()
}

/// How still a cube is: `1 − tanh(10 |v| + |ω|)` (ManiSkill's stack static term).
pub fn cube_static(b: &BodyState) -> f32 {
    1.0 - (10.0 * b.linvel.length() + b.angvel.length()).tanh()
}

/// Finger opening as a share of the widest, 0 (closed) to 1.
pub fn openness(q: &[f32; 9]) -> f32 {
    ((q[7] + q[8]) / (2.0 * FINGER_RANGE.1)).clamp(0.0, 1.0)
}

/// How far a grasp on a cube resting on its place has been loosened: the
/// fingers' commanded opening as a share of the widest while they still
/// squeeze, 1 once they let go. ManiSkill's measured opening stays at the
/// cube's width while the fingers squeeze, so it gives no gradient toward
/// letting go (PPO held A on B for 100 steps with its gripper command pinned
/// shut); the command moves with the action all the way to the release.
pub fn ungrasp(grasped: bool, targets: &[f32; 9]) -> f32 {
    if grasped { openness(targets) } else { 1.0 }
}

/// Cube `a` rests on cube `b`: centred within [`STACK_OFFSET`], one cube higher (±5 mm).
pub fn on_top(a: &BodyState, b: &BodyState) -> bool {
    let offset = a.position - b.position;
    offset.with_z(0.0).length() <= STACK_OFFSET && (offset.z - 2.0 * CUBE_HALF).abs() <= 0.005
}

/// Control steps the success condition must hold: pick ¼ s, stack 1 s, others at once.
pub fn hold_steps(s: &Settings) -> u32 {
    match s.task {
        TaskKind::Reach | TaskKind::PushCube => 1,
        TaskKind::PickCube => s.control_hz.div_ceil(4),
        TaskKind::StackCube => s.control_hz,
    }
}

/// What a state scores: dense progress in [0, 1] (1 exactly when the
/// success condition holds), whether it holds, and the task's distance, m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Dense progress; the step's reward is `score − 1`, or +1 on success.
    pub score: f32,
    /// The success condition holds in this state.
    pub holds: bool,
    /// The task's distance (`info["distance"]`).
    pub distance: f32,
}

/// Scores a state of task `s.task`.
pub fn progress(s: &Settings, p: &impl Measure, t: &TaskState) -> Progress {
    let (tcp, _) = p.tcp();
    let goal = Vec3::from(t.goal);
    let (_, qd) = p.joints();
    let (score, holds, distance) = match s.task {
        TaskKind::Reach => {
            let d = (tcp - goal).length();
            (closeness(d), d < REACH_RADIUS, d)
        }
        TaskKind::PushCube => {
            let cube = p.cube(0).position;
            let dir = (goal - cube).with_z(0.0).normalize_or_zero();
            let behind = (cube - dir * (CUBE_HALF + 0.02)).with_z(CUBE_HALF);
            let d = (cube - goal).with_z(0.0).length();
            let on_table = cube.z < CUBE_HALF + 0.005;
            let score = (closeness((tcp - behind).length()) + 2.0 * closeness(d)) / 3.0;
            (score, d < PUSH_RADIUS && on_table, d)
        }
        TaskKind::PickCube => {
            let cube = p.cube(0).position;
            let grasped = f32::from(u8::from(grasped(p, t, 0)));
            let d = (cube - goal).length();
            let placed = grasped * f32::from(u8::from(d < PICK_RADIUS));
            let still = qd[..7].iter().all(|v| v.abs() < STILL);
            let score = (closeness((tcp - cube).length())
                + grasped
                + grasped * closeness(d)
                + placed * arm_static(&qd))
                / PICK_STAGES;
            (score, placed > 0.0 && still, d)
        }
        TaskKind::StackCube => {
            let a = p.cube(0);
            let b = p.cube(1);
            let grasped = grasped(p, t, 0);
            let place = b.position + Vec3::new(0.0, 0.0, 2.0 * CUBE_HALF);
            let d = (a.position - place).length();
            let on_top = on_top(&a, &b);
            let stage = if on_top {
                6.0 + (ungrasp(grasped, &t.control.targets) + cube_static(&a)) / 2.0
            } else if grasped {
                4.0 + closeness(d)
            } else {
                2.0 * closeness((tcp - a.position).length())
            };
            let holds = on_top && !grasped && a.linvel.length() < 0.01;
            (stage / STACK_STAGES, holds, d)
        }
    };
    Progress {
        score: if holds { 1.0 } else { score },
        holds,
        distance,
    }
}
