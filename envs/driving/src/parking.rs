//! `driving/parking-v0`: park nose-in in a bay of a lot among parked cars,
//! within 0.3 m and 10° of the bay's centre pose, and stop there. The
//! observation is goal-conditioned, as highway-env's parking: the achieved
//! and the desired goal come first, for hindsight relabelling.

use crate::config::Settings;
use crate::params::{LENGTH, WIDTH};
use crate::road::wrap;
use crate::rules::{Crash, StepResult, nearest};
use crate::state::{Car, MAX_OTHERS};
use crate::traffic::{self, field};
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;
use std::f32::consts::FRAC_PI_2;

/// Bays per row (two rows face each other across the aisle).
pub const BAYS: usize = 10;
/// Bay width, m.
pub const BAY_WIDTH: f32 = 3.2;
/// Bay depth, m.
pub const BAY_DEPTH: f32 = 5.5;
/// Width of the aisle between the rows, m.
pub const AISLE: f32 = 8.0;
/// Room between the rows' ends and the lot's ends, m.
pub const END_ROOM: f32 = 16.0;
/// Success: distance to the goal, m.
pub const GOAL_DISTANCE: f32 = 0.3;
/// Success: heading error, rad (10°).
pub const GOAL_HEADING: f32 = 0.1745;
/// Success: largest speed, m/s.
pub const GOAL_SPEED: f32 = 0.5;
/// Metres of goal error one radian of heading error counts as.
pub const HEADING_WEIGHT: f32 = 2.0;
/// Reward on success.
pub const SUCCESS_REWARD: f32 = 10.0;
/// Reward on a collision or on leaving the lot.
pub const CRASH_REWARD: f32 = -10.0;
/// Parked cars in the observation, nearest first.
pub const OBSERVED: usize = 4;
/// Observation length.
pub const OBS_DIM: usize = 6 + 6 + 3 + OBSERVED * 5;

/// Half the lot's length along the aisle, m.
pub fn half_length() -> f32 {
    0.5 * BAYS as f32 * BAY_WIDTH + END_ROOM
}

/// Half the lot's width across the aisle (to the back of the bays), m.
pub fn half_width() -> f32 {
    0.5 * AISLE + BAY_DEPTH
}

/// The centre pose `[x, y, yaw]` of bay `k` (the first `BAYS` on the left of
/// the aisle, facing +y nose-in; the rest on the right, facing −y).
pub fn bay(k: usize) -> [f32; 3] {
    let row = k / BAYS;
    let x = ((k % BAYS) as f32 - 0.5 * (BAYS - 1) as f32) * BAY_WIDTH;
    let y = 0.5 * AISLE + 0.5 * BAY_DEPTH;
    if row == 0 {
        [x, y, FRAC_PI_2]
    } else {
        [x, -y, -FRAC_PI_2]
    }
}

/// Distance plus weighted heading error from the goal pose.
pub fn goal_error(c: &Car) -> f32 {
    let (dx, dy) = (c.pos[0] - c.goal[0], c.pos[1] - c.goal[1]);
    dx.hypot(dy) + HEADING_WEIGHT * wrap(c.yaw - c.goal[2]).abs()
}

/// A goal bay; parked cars in the other bays with probability `occupancy`;
/// the car at rest in the aisle before the first bays, facing along it.
pub fn draw(s: &Settings, rng: &mut EnvRng, c: &mut Car) {
    let goal = ((2 * BAYS) as f32 * rng.random::<f32>()) as usize % (2 * BAYS);
    c.goal = bay(goal);
    let mut n = 0;
    for k in 0..2 * BAYS {
        if k == goal || rng.random::<f32>() >= s.occupancy || n == MAX_OTHERS {
            continue;
        }
        let [x, y, yaw] = bay(k);
        let flip = if rng.random::<bool>() {
            0.0
        } else {
            std::f32::consts::PI
        };
        let jitter = 0.2 * (2.0 * rng.random::<f32>() - 1.0);
        c.others[n][..3].copy_from_slice(&[x + jitter, y, wrap(yaw + flip)]);
        n += 1;
    }
    c.num_others = n as f32;
    let start_x = bay(0)[0] - 0.5 * BAY_WIDTH - 10.0;
    c.pos = [
        start_x + 2.0 * rng.random::<f32>() - 1.0,
        2.0 * rng.random::<f32>() - 1.0,
    ];
    c.yaw = 0.26 * (2.0 * rng.random::<f32>() - 1.0);
    c.num_segments = 1.0;
    c.segments[0] = [-half_length(), 0.0, 0.0, 0.0, 2.0 * half_length(), 0.0];
    c.road_length = 2.0 * half_length();
    c.goal_error = goal_error(c);
}

/// Does any corner of the car leave the lot?
fn off_lot(c: &Car) -> bool {
    let (s, co) = c.yaw.sin_cos();
    [(1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)]
        .iter()
        .any(|(a, b)| {
            let (l, w) = (0.5 * LENGTH * a, 0.5 * WIDTH * b);
            let x = c.pos[0] + l * co - w * s;
            let y = c.pos[1] + l * s + w * co;
            x.abs() > half_length() || y.abs() > half_width()
        })
}

/// Reward: the goal error removed this step, +10 on success (within 0.3 m,
/// 10° and 0.5 m/s), −10 on a collision (`collided`: found during the
/// step's physics) or leaving the lot.
pub fn outcome(c: &mut Car, collided: bool) -> StepResult {
    let error = goal_error(c);
    let gained = c.goal_error - error;
    c.goal_error = error;
    let (dx, dy) = (c.pos[0] - c.goal[0], c.pos[1] - c.goal[1]);
    let parked = dx.hypot(dy) < GOAL_DISTANCE
        && wrap(c.yaw - c.goal[2]).abs() < GOAL_HEADING
        && c.speed().abs() < GOAL_SPEED;
    let crash = if collided || traffic::ego_collision(c).is_some() {
        Crash::Collision
    } else if off_lot(c) {
        Crash::OffRoad
    } else {
        Crash::None
    };
    let reward = match (crash, parked) {
        (Crash::None, true) => gained + SUCCESS_REWARD,
        (Crash::None, false) => gained,
        _ => CRASH_REWARD,
    };
    StepResult {
        reward,
        terminated: parked || crash != Crash::None,
        success: parked && crash == Crash::None,
        crash,
    }
}

fn pose_features(x: f32, y: f32, vel: [f32; 2], yaw: f32) -> [f32; 6] {
    [
        x / 10.0,
        y / 10.0,
        vel[0] / 5.0,
        vel[1] / 5.0,
        yaw.cos(),
        yaw.sin(),
    ]
}

/// The achieved goal (x, y, vx, vy, cos, sin of the car; metres / 10, m/s / 5),
/// the desired goal in the same features, the steering angle and previous
/// action, then the nearest parked cars as (presence, dx, dy in the car's
/// frame / 10 m, cos, sin of their heading relative to the car's).
pub fn observe(c: &Car, obs: &mut [f32]) {
    let (s, co) = c.yaw.sin_cos();
    let world_vel = [c.vel[0] * co - c.vel[1] * s, c.vel[0] * s + c.vel[1] * co];
    obs[..6].copy_from_slice(&pose_features(c.pos[0], c.pos[1], world_vel, c.yaw));
    obs[6..12].copy_from_slice(&pose_features(c.goal[0], c.goal[1], [0.0; 2], c.goal[2]));
    obs[12..15].copy_from_slice(&[c.steer / crate::params::MAX_STEER, c.action[0], c.action[1]]);
    let nearest = nearest::<OBSERVED>(
        c.others()
            .iter()
            .map(|o| (o[field::X] - c.pos[0]).hypot(o[field::Y] - c.pos[1])),
    );
    for (row, &(dist, k)) in obs[15..OBS_DIM].chunks_exact_mut(5).zip(&nearest) {
        if dist.is_infinite() {
            row.fill(0.0);
            continue;
        }
        let o = &c.others[k];
        let (dx, dy) = (o[field::X] - c.pos[0], o[field::Y] - c.pos[1]);
        let rel = o[field::YAW] - c.yaw;
        row.copy_from_slice(&[
            1.0,
            (dx * co + dy * s) / 10.0,
            (-dx * s + dy * co) / 10.0,
            rel.cos(),
            rel.sin(),
        ]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DrivingConfig, TaskKind};
    use proprio_core::episode_rng;

    fn settings() -> Settings {
        Settings::new(TaskKind::Parking, &DrivingConfig::default(), Some(300)).unwrap()
    }

    #[test]
    fn stopping_on_the_bay_pose_is_a_success() {
        let s = settings();
        let mut c = crate::task::draw(&s, &mut episode_rng(1, 0, 0));
        c.pos = [c.goal[0] + 0.2, c.goal[1] - 0.1];
        c.yaw = c.goal[2] + 0.1;
        let out = outcome(&mut c, false);
        assert!(out.success && out.terminated && out.crash == Crash::None);
        assert!(out.reward > SUCCESS_REWARD);
        // Still rolling at 1 m/s: not parked yet.
        c.vel = [1.0, 0.0];
        assert!(!outcome(&mut c, false).terminated);
    }

    #[test]
    fn the_goal_bay_is_free_and_parked_cars_sit_in_other_bays() {
        let s = settings();
        for seed in 0..20 {
            let c = crate::task::draw(&s, &mut episode_rng(seed, 0, 0));
            assert!(!off_lot(&c) && traffic::ego_collision(&c).is_none());
            for o in c.others() {
                let (dx, dy) = (o[field::X] - c.goal[0], o[field::Y] - c.goal[1]);
                assert!(
                    dx.hypot(dy) > BAY_WIDTH - 0.5,
                    "seed {seed}: a car in the goal bay"
                );
            }
        }
    }

    #[test]
    fn driving_into_a_parked_car_or_off_the_lot_ends_the_episode() {
        let s = settings();
        let mut c = crate::task::draw(&s, &mut episode_rng(4, 0, 0));
        c.pos = [half_length() - 1.0, 0.0];
        c.yaw = 0.0;
        assert_eq!(outcome(&mut c, false).crash, Crash::OffRoad);
        if let Some(o) = c.others().first().copied() {
            c.pos = [o[field::X], o[field::Y] - 0.5 * o[field::Y].signum()];
            let out = outcome(&mut c, false);
            assert_eq!((out.crash, out.reward), (Crash::Collision, CRASH_REWARD));
        }
    }
}
