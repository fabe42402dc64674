//! The three drone tasks: episode starts (drawn on the host), one control
//! step with crash and gate checks, reward, success and observation.

use crate::config::{ActionMode, MAX_POINTS, Settings, SquaredReward, TaskKind};
use crate::dynamics::{motor_rpm, norm, rate_control, rotation, sub, substep};
use crate::params::{
    BODY_RADIUS, INERTIA, KF, KM, MASS, MOTOR_TAU, hover_command, hover_rpm, max_rpm,
};
use crate::state::Drone;
use bytemuck::Zeroable;
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;
use std::f32::consts::{PI, TAU};

/// Half the side of the arena box around the origin; leaving it ends the episode, m.
pub const ARENA: f32 = 5.0;
/// Depth of a gate frame along its normal, m.
pub const FRAME_DEPTH: f32 = 0.05;
/// Width of a gate frame's bars, m.
pub const FRAME_WIDTH: f32 = 0.05;
/// Hover success: distance to the target, m.
pub const HOVER_RADIUS: f32 = 0.1;
/// Hover success: body-rate norm, rad/s.
pub const HOVER_RATE: f32 = 0.2;
/// Hover reward per step inside the success region.
pub const HOVER_BONUS: f32 = 1.0;
/// Reward on a crash (ground, gate frame, arena wall).
pub const CRASH_REWARD: f32 = -10.0;
/// Reward per waypoint visited or gate passed.
pub const POINT_BONUS: f32 = 10.0;
/// Reward per metre of progress towards the current waypoint or gate.
pub const PROGRESS_REWARD: f32 = 10.0;

/// Why an episode crashed (`info["crash"]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// Still flying.
    None = 0,
    /// Touched the ground.
    Ground = 1,
    /// Touched a gate frame.
    Gate = 2,
    /// Left the arena.
    OutOfBounds = 3,
}

/// What one control step produced, with its crash cause.
pub type StepResult = proprio_core::chunked::StepResult<Crash>;

/// Observation length of a task, without the motor speeds.
pub fn task_obs_dim(task: TaskKind) -> usize {
    match task {
        TaskKind::Hover => 22,
        TaskKind::Waypoints => 25,
        TaskKind::Gates => 28,
    }
}

/// Observation length of envs with settings `s`.
pub fn obs_dim(s: &Settings) -> usize {
    task_obs_dim(s.task) + if s.observe_motors { 4 } else { 0 }
}

fn sym(rng: &mut EnvRng, half: f32) -> f32 {
    half * (2.0 * rng.random::<f32>() - 1.0)
}

/// Hamilton product of quaternions `[w, x, y, z]`.
pub(crate) fn qmul(a: [f32; 4], b: [f32; 4]) -> [f32; 4] {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

fn draw_attitude(s: &Settings, rng: &mut EnvRng) -> [f32; 4] {
    if s.start.upside_down {
        // Shoemake's uniform random rotation.
        let (u1, u2, u3): (f32, f32, f32) = (rng.random(), rng.random(), rng.random());
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        return [
            a * (TAU * u2).sin(),
            a * (TAU * u2).cos(),
            b * (TAU * u3).sin(),
            b * (TAU * u3).cos(),
        ];
    }
    // `yaw_deg / 180` is exactly 1 at the default, so the default draws what it always drew.
    let yaw = sym(rng, PI * (s.start.yaw_deg / 180.0));
    let axis = TAU * rng.random::<f32>();
    let tilt = s.start.tilt_deg.to_radians() * rng.random::<f32>();
    let q_yaw = [(0.5 * yaw).cos(), 0.0, 0.0, (0.5 * yaw).sin()];
    let h = (0.5 * tilt).sin();
    let q_tilt = [(0.5 * tilt).cos(), h * axis.cos(), h * axis.sin(), 0.0];
    qmul(q_yaw, q_tilt)
}

fn draw_points(s: &Settings, d: &mut Drone, rng: &mut EnvRng) -> [f32; 3] {
    match s.task {
        TaskKind::Hover => {
            d.points[0] = s.target;
            s.target
        }
        TaskKind::Waypoints => {
            let start = [0.0, 0.0, 1.0];
            let mut prev = start;
            for k in 0..s.count as usize {
                let mut p = prev;
                for _ in 0..64 {
                    p = [sym(rng, 1.5), sym(rng, 1.5), 1.25 + sym(rng, 0.75)];
                    if norm(sub(p, prev)) > 0.6 {
                        break;
                    }
                }
                d.points[k] = p;
                prev = p;
            }
            start
        }
        TaskKind::Gates => {
            let theta0 = TAU * rng.random::<f32>();
            let step = TAU / (s.count as f32 + 1.0);
            for k in 0..s.count as usize {
                let theta = theta0 + step * (k as f32 + 1.0) + sym(rng, 0.15);
                let radius = s.course_radius + sym(rng, 0.2);
                d.points[k] = [
                    radius * theta.cos(),
                    radius * theta.sin(),
                    1.0 + sym(rng, 0.3),
                ];
                let heading = theta + 0.5 * PI;
                d.gate_dir[k] = [heading.cos(), heading.sin()];
            }
            [
                s.course_radius * theta0.cos(),
                s.course_radius * theta0.sin(),
                1.0,
            ]
        }
    }
}

/// Draws the start of an episode: randomised parameters, wind, targets, initial state.
pub fn draw(s: &Settings, rng: &mut EnvRng) -> Drone {
    let mut d = Drone::zeroed();
    let r = s.randomize;
    d.mass = MASS * (1.0 + sym(rng, r.mass));
    d.inertia = INERTIA.map(|i| i * (1.0 + sym(rng, r.inertia)));
    d.kf = KF * (1.0 + sym(rng, r.thrust));
    d.km = KM * (1.0 + sym(rng, r.torque));
    let tau = MOTOR_TAU * (1.0 + sym(rng, r.motor_tau));
    d.motor_alpha = 1.0 - (-s.dt / tau).exp();
    let wind_dir = TAU * rng.random::<f32>();
    let speed = s.wind.speed * rng.random::<f32>();
    d.wind = [speed * wind_dir.cos(), speed * wind_dir.sin(), 0.0];
    let gust_dir = TAU * rng.random::<f32>();
    let gust = s.wind.gust * rng.random::<f32>();
    d.gust = [gust * gust_dir.cos(), gust * gust_dir.sin(), 0.0];
    let phase = TAU * rng.random::<f32>();
    let hz = 0.1 + (s.wind.gust_hz - 0.1) * rng.random::<f32>();
    let advance = TAU * hz * s.dt;
    d.gust_phase = [phase.sin(), phase.cos()];
    d.gust_step = [advance.sin(), advance.cos()];
    let centre = draw_points(s, &mut d, rng);
    let st = s.start;
    d.pos = [
        centre[0] + sym(rng, st.position),
        centre[1] + sym(rng, st.position),
        (centre[2] + sym(rng, st.position)).max(0.2),
    ];
    d.vel = [
        sym(rng, st.velocity),
        sym(rng, st.velocity),
        sym(rng, st.velocity),
    ];
    d.quat = draw_attitude(s, rng);
    d.omega = [
        sym(rng, st.angular_velocity),
        sym(rng, st.angular_velocity),
        sym(rng, st.angular_velocity),
    ];
    d.rpm = [hover_rpm(); 4];
    // Drawn only when asked for, so runs without guidance keep their streams.
    if st.guidance > 0.0 && rng.random::<f32>() < st.guidance {
        (d.pos, d.vel, d.omega) = (centre, [0.0; 3], [0.0; 3]);
        d.quat = [1.0, 0.0, 0.0, 0.0];
    }
    d.dist = norm(sub(d.pos, d.points[0]));
    d
}

/// The current target (the last one once all are done).
pub fn target(d: &Drone, s: &Settings) -> [f32; 3] {
    d.points[(d.goal as usize).min(s.count as usize - 1)]
}

/// Checks the gates after a physics step from `before` to `d.pos`: passing
/// the current gate advances `goal`; overlapping any frame is a crash.
fn gates(d: &mut Drone, before: [f32; 3], s: &Settings) -> bool {
    let h = 0.5 * s.gate_size;
    let mut hit = false;
    for k in 0..MAX_POINTS {
        if k >= s.count as usize {
            break;
        }
        let [c, sn] = d.gate_dir[k];
        let rel = sub(d.pos, d.points[k]);
        let along = rel[0] * c + rel[1] * sn;
        let side = -rel[0] * sn + rel[1] * c;
        let reach = side.abs().max(rel[2].abs());
        let near = along.abs() < BODY_RADIUS + 0.5 * FRAME_DEPTH;
        if near && reach < h + FRAME_WIDTH + BODY_RADIUS && reach > h - BODY_RADIUS {
            hit = true;
        }
        let prev = sub(before, d.points[k]);
        let was_behind = prev[0] * c + prev[1] * sn < 0.0;
        if k as f32 == d.goal && was_behind && along >= 0.0 && reach < h {
            d.goal += 1.0;
        }
    }
    hit
}

/// Learning to Fly's reward of one hover step (the formula of [`SquaredReward`]).
fn squared_reward(
    r: &SquaredReward,
    d: &Drone,
    action: [f32; 4],
    error: f32,
    rate: f32,
    inside: bool,
) -> f32 {
    let speed = norm(d.vel);
    let hover = hover_command();
    let effort: f32 = action.iter().map(|a| (a - hover).powi(2)).sum();
    let cost = r.position * error * error
        + r.distance * error
        + r.orientation * (1.0 - d.quat[0] * d.quat[0])
        + r.velocity * speed * speed
        + r.rate * rate * rate
        + r.action * effort;
    r.constant - r.scale * cost + if inside { r.bonus } else { 0.0 }
}

/// One control step: `substeps` physics steps with crash checks, then reward and success.
pub fn control_step(d: &mut Drone, action: [f32; 4], s: &Settings) -> StepResult {
    let action = action.map(|a| a.clamp(-1.0, 1.0));
    let goal0 = d.goal;
    let mut crash = Crash::None;
    for _ in 0..s.substeps {
        let cmd = match s.action {
            ActionMode::Motors => motor_rpm(action),
            ActionMode::ThrustRates => rate_control(d, action),
        };
        let before = d.pos;
        substep(d, cmd, s.dt);
        if s.task == TaskKind::Gates && gates(d, before, s) {
            crash = Crash::Gate;
        }
        if d.pos[2] <= 0.0 {
            d.pos[2] = 0.0;
            d.vel = [0.0; 3];
            d.omega = [0.0; 3];
            crash = Crash::Ground;
        }
        if crash != Crash::None {
            break;
        }
    }
    if crash == Crash::None
        && (d.pos[0].abs() > ARENA || d.pos[1].abs() > ARENA || d.pos[2] > ARENA)
    {
        crash = Crash::OutOfBounds;
    }
    d.action = action;
    if s.task == TaskKind::Waypoints && d.goal < s.count as f32 {
        let g = d.goal as usize;
        if norm(sub(d.pos, d.points[g])) < s.waypoint_radius {
            d.goal += 1.0;
        }
    }
    let offset = sub(d.pos, target(d, s));
    let error = norm(offset);
    let rate = norm(d.omega);
    let reached = d.goal - goal0;
    if let Some(r) = &s.squared_reward
        && crash == Crash::None
        && offset.iter().any(|e| e.abs() > r.exit)
    {
        crash = Crash::OutOfBounds;
    }
    let (mut reward, success) = match s.task {
        TaskKind::Hover => {
            let inside = error < HOVER_RADIUS && rate < HOVER_RATE;
            d.hold = if inside { d.hold + 1.0 } else { 0.0 };
            let success = d.hold >= s.control_hz as f32;
            let reward = match &s.squared_reward {
                Some(r) => squared_reward(r, d, action, error, rate, inside),
                None => {
                    let up = rotation(d.quat)[2][2];
                    let cost = error + 0.2 * (1.0 - up) + 0.05 * norm(d.vel) + 0.02 * rate;
                    let bonus = if inside { HOVER_BONUS } else { 0.0 };
                    (1.0 - cost).max(-1.0) + bonus
                }
            };
            (reward, success)
        }
        TaskKind::Waypoints | TaskKind::Gates => {
            let progress = if reached > 0.0 { 0.0 } else { d.dist - error };
            (
                PROGRESS_REWARD * progress + POINT_BONUS * reached - 0.01 * rate,
                d.goal >= s.count as f32,
            )
        }
    };
    d.dist = error;
    if crash != Crash::None {
        reward = s.squared_reward.map_or(CRASH_REWARD, |r| r.termination);
    }
    let finishes = s.task != TaskKind::Hover && success;
    StepResult {
        reward,
        terminated: crash != Crash::None || finishes,
        success,
        crash,
    }
}

/// The metrics every step reports in `info`, besides success and crash.
pub const INFO_KEYS: [&str; 2] = ["distance", "reached"];

/// Writes the observation (layout in `docs/envs.md`).
pub fn observe(d: &Drone, s: &Settings, obs: &mut [f32]) {
    let t = target(d, s);
    let e = sub(d.pos, t);
    let r = rotation(d.quat);
    obs[0..3].copy_from_slice(&e);
    for (row, out) in r.iter().zip(obs[3..12].chunks_exact_mut(3)) {
        out.copy_from_slice(row);
    }
    obs[12..15].copy_from_slice(&d.vel);
    obs[15..18].copy_from_slice(&d.omega);
    obs[18..22].copy_from_slice(&d.action);
    let g = (d.goal as usize).min(s.count as usize - 1);
    let next = if g + 1 < s.count as usize {
        sub(d.points[g + 1], t)
    } else {
        [0.0; 3]
    };
    match s.task {
        TaskKind::Hover => {}
        TaskKind::Waypoints => obs[22..25].copy_from_slice(&next),
        TaskKind::Gates => {
            obs[22..25].copy_from_slice(&[d.gate_dir[g][0], d.gate_dir[g][1], 0.0]);
            obs[25..28].copy_from_slice(&next);
        }
    }
    if s.observe_motors {
        let at = task_obs_dim(s.task);
        for (o, rpm) in obs[at..at + 4].iter_mut().zip(d.rpm) {
            *o = 2.0 * rpm / max_rpm() - 1.0;
        }
    }
}
