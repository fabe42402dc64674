//! `driving/highway-v0`: drive fast on a gently curving multi-lane road among
//! IDM/MOBIL traffic without crashing (highway-env's highway, with CaRL's reward).

use crate::config::{ActionMode, Settings};
use crate::road;
use crate::rules::{Crash, ROAD_FEATURES, StepResult, carl_factors, nearest, road_features};
use crate::state::Car;
use crate::traffic::{field, lane_centre, lane_of};
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;

/// Length of the road, m (40 s at 30 m/s, with room ahead for the traffic).
pub const ROAD_LENGTH: f32 = 2500.0;
/// Where the ego starts along the road, m.
pub const START: f32 = 150.0;
/// Other cars in the observation (highway-env's Kinematics: the nearest).
pub const OBSERVED: usize = 5;
/// Entries per observed car: presence, Δs, Δd, Δv, lane-change intent.
pub const ROW: usize = 5;
/// Farthest observed car along the road, m.
pub const RANGE: f32 = 150.0;
/// Observation length.
pub const OBS_DIM: usize = ROAD_FEATURES + 1 + OBSERVED * ROW;
/// Mean speed above which a crash-free episode counts as a success, m/s.
pub const SUCCESS_SPEED: f32 = 20.0;

fn uniform(rng: &mut EnvRng, low: f32, high: f32) -> f32 {
    low + (high - low) * rng.random::<f32>()
}

/// A fresh road; the ego in a random lane at 25 m/s; the traffic spread
/// ahead (three quarters) and behind in random lanes, at least 20 m apart in
/// a lane and `20 + 40 / density` m on average (the first car ahead of the
/// ego in its lane at least 30 m away).
pub fn draw(s: &Settings, rng: &mut EnvRng, c: &mut Car) {
    let (n, length) = road::winding(rng, ROAD_LENGTH, s.max_curvature, &mut c.segments);
    c.num_segments = n as f32;
    c.road_length = length;
    let ego_lane = (rng.random::<f32>() * c.lanes).floor().min(c.lanes - 1.0);
    c.target_d = lane_centre(ego_lane, c.lanes);
    c.target_speed = 25.0;
    let (p, heading) = road::pose_at(c.road(), length, false, START, c.target_d);
    c.pos = p;
    c.yaw = heading;
    c.vel = [25.0, 0.0];
    let count = s.traffic as usize;
    let behind = count / 4;
    // The last car placed in each lane, ahead of and behind the ego.
    let mut ahead_at = [START; 8];
    let mut behind_at = [START; 8];
    ahead_at[ego_lane as usize] += 10.0;
    behind_at[ego_lane as usize] -= 10.0;
    for k in 0..count {
        let lane = (rng.random::<f32>() * c.lanes).floor().min(c.lanes - 1.0);
        let gap = 20.0 + uniform(rng, 0.5, 1.5) * 40.0 / s.density;
        let at = if k < behind {
            behind_at[lane as usize] -= gap;
            behind_at[lane as usize]
        } else {
            ahead_at[lane as usize] += gap;
            ahead_at[lane as usize]
        };
        let d = lane_centre(lane, c.lanes);
        let (p, heading) = road::pose_at(c.road(), length, false, at, d);
        let speed = uniform(rng, 20.0, 25.0);
        let desired = speed + uniform(rng, 0.0, 3.0);
        c.others[k] = [
            p[0],
            p[1],
            heading,
            speed,
            at,
            d,
            desired,
            d,
            uniform(rng, 0.0, 1.0),
        ];
    }
    c.num_others = count as f32;
}

/// CaRL's reward: progress in steps' worth of driving at the limit times
/// the soft-penalty factors. Success: crash-free to the time limit at a
/// mean speed of at least 20 m/s.
pub fn outcome(c: &Car, s: &Settings, moved: f32) -> StepResult {
    let gained = moved / (s.speed_limit * s.step_seconds());
    let lane_error = c.d - lane_centre(lane_of(c.d, c.lanes), c.lanes);
    let at_limit = s.time_limit > 0 && c.steps >= s.time_limit as f32;
    StepResult {
        reward: gained * carl_factors(c, s.speed_limit, lane_error),
        terminated: false,
        success: at_limit && c.speed_sum / c.steps >= SUCCESS_SPEED,
        crash: Crash::None,
    }
}

/// Road features (from the lane the ego keeps or heads to), the target speed,
/// then the nearest cars along the road as rows of (presence, Δs / 100 m,
/// Δd / road width, Δv / 20 m/s, lane-change intent in lanes), nearest first.
pub fn observe(c: &Car, s: &Settings, obs: &mut [f32]) {
    let d_ref = match s.action {
        ActionMode::Meta => c.target_d,
        ActionMode::Continuous => lane_centre(lane_of(c.d, c.lanes), c.lanes),
    };
    road_features(c, d_ref, obs);
    obs[ROAD_FEATURES] = c.target_speed / 30.0;
    let nearest = nearest::<OBSERVED>(c.others().iter().map(|o| {
        let gap = (o[field::S] - c.s).abs();
        if gap > RANGE { f32::INFINITY } else { gap }
    }));
    let width = c.lanes * crate::params::LANE_WIDTH;
    let rows = &mut obs[ROAD_FEATURES + 1..OBS_DIM];
    for (row, &(gap, k)) in rows.chunks_exact_mut(ROW).zip(&nearest) {
        if gap.is_infinite() {
            row.fill(0.0);
            continue;
        }
        let o = &c.others[k];
        row.copy_from_slice(&[
            1.0,
            (o[field::S] - c.s) / 100.0,
            (o[field::D] - c.d) / width,
            (o[field::SPEED] - c.vel[0]) / 20.0,
            (o[field::TARGET_D] - o[field::D]) / crate::params::LANE_WIDTH,
        ]);
    }
}
