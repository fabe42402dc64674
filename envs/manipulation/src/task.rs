//! The tasks on either physics: episode starts drawn from the env's stream,
//! reward and success after a control step, blow-up rules, the observation
//! and the `info` entries, all through [`Measure`].

use crate::config::{Settings, TaskKind};
use crate::instruct::{self, INSTRUCTION_TOKENS, Instruction, Phrasing, Split, words};
pub use crate::measure::{
    Measure, PICK_RADIUS, PUSH_RADIUS, REACH_RADIUS, STACK_OFFSET, STILL, TaskState,
};
use crate::panda::{BodyState, CUBE_HALF, MAX_CUBES, READY};
use crate::reward::{Progress, hold_steps, progress};
use glam::{Quat, Vec3};
use proprio_core::rand::RngExt;
use proprio_core::{EnvRng, Info, Space};
use std::f32::consts::{PI, TAU};

/// Push: how far the goal lies from the cube, m.
pub const PUSH_DISTANCE: f32 = 0.2;
/// Objects beyond this box (world frame, m) have left the workspace: the episode is truncated.
pub const WORKSPACE: ([f32; 3], [f32; 3]) = ([-1.0, -1.0, -0.2], [1.0, 1.0, 2.0]);

/// Why an episode was cut short, as reported in `info["blow_up"]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlowUp {
    /// Physics stayed finite and in bounds.
    None = 0,
    /// A pose or velocity became NaN or infinite.
    NonFinite = 1,
    /// An object left the workspace box.
    LeftWorkspace = 2,
}

/// What one control step produced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepResult {
    /// Reward.
    pub reward: f32,
    /// The task is solved (the episode terminates).
    pub success: bool,
    /// Physics failure (the episode is truncated).
    pub blow_up: BlowUp,
    /// The task's distance after the step (what `info["distance"]` reports).
    pub distance: f32,
}

/// Whether the task state holds only finite numbers.
pub fn is_finite(t: &TaskState) -> bool {
    let c = &t.control;
    t.goal
        .iter()
        .chain(&c.ee_position)
        .chain(&c.ee_rotation)
        .chain(&c.targets)
        .all(|v| v.is_finite())
}

fn uniform(rng: &mut EnvRng, low: f32, high: f32) -> f32 {
    low + (high - low) * rng.random::<f32>()
}

fn cube_xy(rng: &mut EnvRng) -> Vec3 {
    Vec3::new(uniform(rng, -0.1, 0.1), uniform(rng, -0.1, 0.1), CUBE_HALF)
}

/// The start of an episode, whichever physics plays it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Start {
    /// Joint positions: 7 arm joints, 2 finger openings.
    pub q: [f32; 9],
    /// Each cube's centre and yaw (those past the task's count unused).
    pub cubes: [(Vec3, f32); MAX_CUBES],
    /// The goal, world frame, m.
    pub goal: Vec3,
    /// What the episode asks for (instruct only).
    pub instruction: Option<Instruction>,
    /// The words it is observed in (instruct only).
    pub phrasing: Phrasing,
}

/// Draws the start of an episode: arm near its rest pose, cubes and goal placed at random.
pub fn draw_start(s: &Settings, rng: &mut EnvRng) -> Start {
    let mut q = [0.0; 9];
    for (qk, rest) in q.iter_mut().zip(READY) {
        *qk = rest + uniform(rng, -s.joint_noise, s.joint_noise);
    }
    q[7] = 0.04;
    q[8] = 0.04;
    let none = (Vec3::ZERO, 0.0);
    let mut cubes = [none; MAX_CUBES];
    let goal = match s.task {
        TaskKind::Reach => Vec3::new(
            uniform(rng, -0.3, 0.1),
            uniform(rng, -0.25, 0.25),
            uniform(rng, 0.05, 0.4),
        ),
        TaskKind::PushCube => {
            let cube = cube_xy(rng);
            let angle = uniform(rng, -PI / 6.0, PI / 6.0);
            cubes[0] = (cube, 0.0);
            cube + PUSH_DISTANCE * Vec3::new(angle.cos(), angle.sin(), 0.0)
        }
        TaskKind::PickCube => {
            let cube = cube_xy(rng);
            let yaw = uniform(rng, 0.0, TAU);
            cubes[0] = (cube, yaw);
            cube_xy(rng) + Vec3::new(0.0, 0.0, uniform(rng, 0.0, 0.3))
        }
        TaskKind::StackCube => {
            let a = cube_xy(rng);
            // B at least 10 cm from A: a fixed number of tries keeps the stream deterministic.
            let mut b = cube_xy(rng);
            for _ in 0..32 {
                if (b - a).length() >= 0.1 {
                    break;
                }
                b = cube_xy(rng);
            }
            if (b - a).length() < 0.1 {
                b = a + Vec3::new(0.0, if a.y > 0.0 { -0.1 } else { 0.1 }, 0.0);
            }
            let yaws = (uniform(rng, 0.0, TAU), uniform(rng, 0.0, TAU));
            cubes[0] = (a, yaws.0);
            cubes[1] = (b, yaws.1);
            b + Vec3::new(0.0, 0.0, 2.0 * CUBE_HALF)
        }
        TaskKind::Instruct => {
            let (instruction, phrasing) = match s.typed {
                Some(typed) => (typed.instruction, words::TYPED),
                None => {
                    let instruction = Instruction::draw(s.split, s.cubes, rng);
                    let phrasing = match s.split {
                        Split::Semantic => rng.random_range(1..=words::PARAPHRASES),
                        _ => words::TEMPLATE,
                    };
                    (instruction, phrasing)
                }
            };
            let placed = instruct::place_cubes(instruction, s.cubes, s.split.region(), rng);
            for (slot, (centre, yaw)) in cubes.iter_mut().zip(placed) {
                *slot = (centre, yaw);
            }
            let centres = cubes.map(|c| c.0);
            return Start {
                q,
                cubes,
                goal: instruction.goal(&centres),
                instruction: Some(instruction),
                phrasing,
            };
        }
    };
    Start {
        q,
        cubes,
        goal,
        instruction: None,
        phrasing: words::TEMPLATE,
    }
}

/// Whether a point has left the [`WORKSPACE`] box.
pub(crate) fn outside(position: Vec3) -> bool {
    let (low, high) = (Vec3::from(WORKSPACE.0), Vec3::from(WORKSPACE.1));
    position.cmplt(low).any() || position.cmpgt(high).any()
}

/// Reward and success after a control step's physics (`failure`: what cut it short, if anything).
pub(crate) fn outcome(
    s: &Settings,
    p: &impl Measure,
    task: &mut TaskState,
    failure: BlowUp,
) -> StepResult {
    let Progress {
        score,
        holds,
        distance,
    } = progress(s, p, task);
    if failure != BlowUp::None {
        let binary = !s.dense_reward;
        return StepResult {
            reward: if binary { 0.0 } else { -1.0 },
            success: false,
            blow_up: failure,
            distance,
        };
    }
    task.held = if holds { task.held + 1 } else { 0 };
    let success = task.held >= hold_steps(s, task);
    let binary = !s.dense_reward;
    StepResult {
        reward: match (success, binary) {
            (true, _) => 1.0,
            (false, true) => 0.0,
            (false, false) => score - 1.0,
        },
        success,
        blow_up: BlowUp::None,
        distance,
    }
}

/// The task's distance in state `t` (reach: TCP to goal; push: cube to goal in
/// the plane; pick: cube to goal; stack: A to its place on B), m.
pub fn distance(s: &Settings, p: &impl Measure, t: &TaskState) -> f32 {
    progress(s, p, t).distance
}

/// Writes the per-step `info` entries: after a step from its result, at reset (`out` = `None`) from the state.
pub fn write_info(
    info: &mut Info,
    s: &Settings,
    p: &impl Measure,
    t: &TaskState,
    out: Option<&StepResult>,
) {
    info.clear();
    let distance = out.map_or_else(|| distance(s, p, t), |o| o.distance);
    info.set("distance", f64::from(distance));
    if s.task != TaskKind::Reach {
        let cube = t.instruction.map_or(0, Instruction::cube);
        info.set(
            "grasped",
            f64::from(u8::from(crate::reward::grasped(p, t, cube))),
        );
    }
    if let Some(instruction) = t.instruction {
        write_instruction(info, instruction, s.cubes);
    }
    if let Some(out) = out {
        info.set("success", f64::from(u8::from(out.success)));
        info.set("blow_up", out.blow_up as u8 as f64);
        if let Some(instruction) = t.instruction {
            info.set(instruction.success_key(), f64::from(u8::from(out.success)));
        }
    }
}

/// instruct's keys of an `info`: the instruction's template and whether it is held out.
pub fn write_instruction(info: &mut Info, instruction: Instruction, cubes: usize) {
    info.set("template", instruction.template().0 as f64);
    info.set("held_out", f64::from(u8::from(instruction.held_out(cubes))));
}

/// Observation length of a task (layout in `docs/envs.md`); 6 less without the goal.
pub fn obs_dim(s: &Settings) -> usize {
    let goal = if s.goal_in_state { 0 } else { GOAL_FIELDS };
    match s.task {
        TaskKind::Reach => 32 - goal,
        TaskKind::PushCube | TaskKind::PickCube => 49 - goal,
        TaskKind::StackCube => 59,
        TaskKind::Instruct => instruct_state_dim(s) + INSTRUCTION_TOKENS,
    }
}

/// Values of the goal fields (the goal and the offset to it) dropped by `goal_in_state: false`.
const GOAL_FIELDS: usize = 6;

pub use crate::panda::HAND_DOWN;

const H: f32 = 0.5;
const R: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// The 24 rotations that map a cube onto itself (x, y, z, w; one sign each):
/// the identity and the half turns about the axes, the thirds of a turn about
/// the body diagonals, and the quarter turns and the half turns about the face diagonals.
pub const CUBE_SYMMETRIES: [[f32; 4]; 24] = [
    [0.0, 0.0, 0.0, 1.0],
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [H, H, H, H],
    [H, H, -H, H],
    [H, -H, H, H],
    [H, -H, -H, H],
    [-H, H, H, H],
    [-H, H, -H, H],
    [-H, -H, H, H],
    [-H, -H, -H, H],
    [R, 0.0, 0.0, R],
    [-R, 0.0, 0.0, R],
    [0.0, R, 0.0, R],
    [0.0, -R, 0.0, R],
    [0.0, 0.0, R, R],
    [0.0, 0.0, -R, R],
    [R, R, 0.0, 0.0],
    [R, -R, 0.0, 0.0],
    [R, 0.0, R, 0.0],
    [R, 0.0, -R, 0.0],
    [0.0, R, R, 0.0],
    [0.0, R, -R, 0.0],
];

/// Of the rotations equivalent to a cube's `q` (`q · s` over [`CUBE_SYMMETRIES`]),
/// the one closest to the world axes, as (x, y, z, w) with w ≥ 0.
pub fn cube_symmetric(q: Quat) -> [f32; 4] {
    let mut best = q;
    for s in CUBE_SYMMETRIES {
        let r = q * Quat::from_array(s);
        if r.w.abs() > best.w.abs() {
            best = r;
        }
    }
    canonical(best, Quat::IDENTITY)
}

/// A quaternion as (x, y, z, w) in the hemisphere of `reference`, so that one
/// rotation has one encoding, continuous around the reference. (With w ≥ 0, a
/// hand pointing down, w ≈ 0, flipped x between +1 and −1 from step to step.)
fn canonical(q: Quat, reference: Quat) -> [f32; 4] {
    if q.dot(reference) < 0.0 {
        (-q).to_array()
    } else {
        q.to_array()
    }
}

fn put<const N: usize>(obs: &mut [f32], at: &mut usize, values: [f32; N]) {
    obs[*at..*at + N].copy_from_slice(&values);
    *at += N;
}

fn put_body(s: &Settings, obs: &mut [f32], at: &mut usize, b: &BodyState) {
    put(obs, at, b.position.to_array());
    let rotation = if s.cube_symmetry {
        cube_symmetric(b.rotation)
    } else {
        canonical(b.rotation, Quat::IDENTITY)
    };
    put(obs, at, rotation);
    put(obs, at, b.linvel.to_array());
    put(obs, at, b.angvel.to_array());
}

/// Writes the observation; non-finite values (only after a blow-up) are written as 0.
pub fn observe(s: &Settings, p: &impl Measure, t: &TaskState, obs: &mut [f32]) {
    let (q, qd) = p.joints();
    let (tcp, hand) = p.tcp();
    let goal = Vec3::from(t.goal);
    let mut at = 0;
    put(obs, &mut at, q);
    put(obs, &mut at, qd);
    put(obs, &mut at, tcp.to_array());
    put(obs, &mut at, canonical(hand, HAND_DOWN));
    put(obs, &mut at, [q[7] + q[8]]);
    match s.task {
        TaskKind::Reach => {
            if s.goal_in_state {
                put(obs, &mut at, goal.to_array());
                put(obs, &mut at, (goal - tcp).to_array());
            }
        }
        TaskKind::PushCube | TaskKind::PickCube => {
            let cube = p.cube(0);
            put_body(s, obs, &mut at, &cube);
            if s.goal_in_state {
                put(obs, &mut at, goal.to_array());
                put(obs, &mut at, (goal - cube.position).to_array());
            }
            put(obs, &mut at, (cube.position - tcp).to_array());
            put(
                obs,
                &mut at,
                [f32::from(u8::from(crate::reward::grasped(p, t, 0)))],
            );
        }
        TaskKind::StackCube => {
            let a = p.cube(0);
            let b = p.cube(1);
            put_body(s, obs, &mut at, &a);
            put_body(s, obs, &mut at, &b);
            put(obs, &mut at, (a.position - tcp).to_array());
            put(
                obs,
                &mut at,
                (b.position + Vec3::new(0.0, 0.0, 2.0 * CUBE_HALF) - a.position).to_array(),
            );
            put(
                obs,
                &mut at,
                [f32::from(u8::from(crate::reward::grasped(p, t, 0)))],
            );
        }
        TaskKind::Instruct => observe_instruct(s, p, t, obs, &mut at),
    }
    debug_assert_eq!(at, obs_dim(s));
    for v in obs.iter_mut() {
        if !v.is_finite() {
            *v = 0.0;
        }
    }
}

/// Values of instruct's state observation (layout in `docs/envs.md`): the
/// arm (26), each cube (13), the goal of the dense reward (3, unless
/// `goal_in_state` is off), each cube's grasp flag and each cube's position
/// from the TCP (3).
pub fn instruct_state_dim(s: &Settings) -> usize {
    26 + 17 * s.cubes + if s.goal_in_state { 3 } else { 0 }
}

/// Instruct's state observation with its parts named (the flat order of
/// [`instruct_state_dim`]), so a policy can find each cube's values:
/// `arm`, `cubes` (13 each), `goal`, `grasped` (1 each), `cube_from_tcp` (3 each).
pub fn instruct_state_space(s: &Settings) -> Space {
    let unbounded = |dim| Space::uniform_box(dim, f32::NEG_INFINITY, f32::INFINITY);
    let mut parts = vec![
        ("arm".to_string(), unbounded(26)),
        ("cubes".to_string(), unbounded(13 * s.cubes)),
    ];
    if s.goal_in_state {
        parts.push(("goal".to_string(), unbounded(3)));
    }
    parts.push(("grasped".to_string(), unbounded(s.cubes)));
    parts.push(("cube_from_tcp".to_string(), unbounded(3 * s.cubes)));
    Space::Dict { spaces: parts }
}

/// Writes instruct's cubes, goal, grasp flags and instruction tokens after the arm's 26 values.
fn observe_instruct(
    s: &Settings,
    p: &impl Measure,
    t: &TaskState,
    obs: &mut [f32],
    at: &mut usize,
) {
    for i in 0..s.cubes {
        put_body(s, obs, at, &p.cube(i));
    }
    if s.goal_in_state {
        put(obs, at, t.goal);
    }
    for i in 0..s.cubes {
        put(
            obs,
            at,
            [f32::from(u8::from(crate::reward::grasped(p, t, i)))],
        );
    }
    // Where each cube is from the hand, as the single-cube tasks give it:
    // a policy then only has to pick the named cube's vector, not subtract.
    let (tcp, _) = p.tcp();
    for i in 0..s.cubes {
        put(obs, at, (p.cube(i).position - tcp).to_array());
    }
    let tokens = t.instruction.map_or([0.0; INSTRUCTION_TOKENS], |i| {
        observed_tokens(s, i, t.phrasing)
    });
    put(obs, at, tokens);
}

/// The token ids an instruction in `phrasing` is observed as: the typed
/// text's own, or the vocabulary's row.
pub fn observed_tokens(
    s: &Settings,
    instruction: Instruction,
    phrasing: Phrasing,
) -> [f32; INSTRUCTION_TOKENS] {
    match (s.typed, phrasing) {
        (Some(typed), words::TYPED) => typed.tokens,
        _ => *instruct::vocabulary(s.cubes).tokens(instruction, phrasing),
    }
}
