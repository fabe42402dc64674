//! The tasks' dense, staged rewards and success conditions, read through
//! [`Measure`] so both physics (and the WGSL twin in `kernel/task.wgsl`) pay
//! the same. Pick and stack follow ManiSkill3's `PickCube-v1` and
//! `StackCube-v1` stage for stage; the formulas are in `docs/envs.md`.

use crate::config::{Settings, TaskKind};
use crate::controller::FINGER_RANGE;
use crate::instruct::{Instruction, lifted, pushed_to};
use crate::measure::{
    Measure, PICK_RADIUS, PUSH_RADIUS, REACH_RADIUS, STACK_OFFSET, STILL, TaskState,
};
use crate::panda::BodyState;
use crate::panda::CUBE_HALF;
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
/// (instruct: those of the instructed task — push, pick or stack).
pub fn hold_steps(s: &Settings, t: &TaskState) -> u32 {
    let task = match (s.task, t.instruction) {
        (TaskKind::Instruct, Some(instruction)) => TaskKind::instructed(instruction),
        (TaskKind::Instruct, None) => TaskKind::StackCube,
        (task, _) => task,
    };
    task_hold_steps(task, s.control_hz)
}

/// Control steps the success condition of `task` must hold at `control_hz`.
pub fn task_hold_steps(task: TaskKind, control_hz: u32) -> u32 {
    match task {
        TaskKind::Reach | TaskKind::PushCube | TaskKind::Instruct => 1,
        TaskKind::PickCube => control_hz.div_ceil(4),
        TaskKind::StackCube => control_hz,
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
    let goal = Vec3::from(t.goal);
    let (score, holds, distance) = match (s.task, t.instruction) {
        (TaskKind::Reach, _) => {
            let d = (p.tcp().0 - goal).length();
            (closeness(d), d < REACH_RADIUS, d)
        }
        (TaskKind::PushCube, _) => {
            let (score, d) = push(p, 0, goal);
            (score, d < PUSH_RADIUS && on_table(p.cube(0).position), d)
        }
        (TaskKind::PickCube, _) => pick(p, t, 0, goal),
        (TaskKind::StackCube, _) => stack(p, t, 0, 1),
        (TaskKind::Instruct, instruction) => instructed(p, t, instruction),
    };
    Progress {
        score: if holds { 1.0 } else { score },
        holds,
        distance,
    }
}

/// A cube rests on the table (not lifted or stacked).
fn on_table(cube: Vec3) -> bool {
    cube.z < CUBE_HALF + 0.005
}

/// Push-cube's score of cube `i` towards `goal` (reach behind it, then
/// bring it there) and its distance to the goal in the plane.
fn push(p: &impl Measure, i: usize, goal: Vec3) -> (f32, f32) {
    let tcp = p.tcp().0;
    let cube = p.cube(i).position;
    let dir = (goal - cube).with_z(0.0).normalize_or_zero();
    let behind = (cube - dir * (CUBE_HALF + 0.02)).with_z(CUBE_HALF);
    let d = (cube - goal).with_z(0.0).length();
    (
        (closeness((tcp - behind).length()) + 2.0 * closeness(d)) / 3.0,
        d,
    )
}

/// Pick-cube's stages for cube `i` and `goal`: score, success, distance.
fn pick(p: &impl Measure, t: &TaskState, i: usize, goal: Vec3) -> (f32, bool, f32) {
    let (tcp, _) = p.tcp();
    let (_, qd) = p.joints();
    let cube = p.cube(i).position;
    let grasped = f32::from(u8::from(grasped(p, t, i)));
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

/// Stack-cube's stages for cube `a` onto cube `b`: score, success, distance.
fn stack(p: &impl Measure, t: &TaskState, a: usize, b: usize) -> (f32, bool, f32) {
    let (tcp, _) = p.tcp();
    let (cube_a, cube_b) = (p.cube(a), p.cube(b));
    let grasped = grasped(p, t, a);
    let place = cube_b.position + Vec3::new(0.0, 0.0, 2.0 * CUBE_HALF);
    let d = (cube_a.position - place).length();
    let on_top = on_top(&cube_a, &cube_b);
    let stage = if on_top {
        6.0 + (ungrasp(grasped, &t.control.targets) + cube_static(&cube_a)) / 2.0
    } else if grasped {
        4.0 + closeness(d)
    } else {
        2.0 * closeness((tcp - cube_a.position).length())
    };
    let holds = on_top && !grasped && cube_a.linvel.length() < 0.01;
    (stage / STACK_STAGES, holds, d)
}

/// Instruct's score (the instructed task's dense stages), success (the
/// instruction's own test) and distance (the instructed cube to its goal).
fn instructed(
    p: &impl Measure,
    t: &TaskState,
    instruction: Option<Instruction>,
) -> (f32, bool, f32) {
    let goal = Vec3::from(t.goal);
    match instruction {
        Some(Instruction::Push { cube, side }) => {
            let (score, d) = push(p, cube, goal);
            (score, pushed_to(p.cube(cube).position, side), d)
        }
        Some(Instruction::PickUp { cube }) => {
            let (score, _, d) = pick(p, t, cube, goal);
            (score, lifted(p.cube(cube).position, grasped(p, t, cube)), d)
        }
        Some(Instruction::PutOn { cube, on }) => stack(p, t, cube, on),
        None => (0.0, false, 0.0),
    }
}
