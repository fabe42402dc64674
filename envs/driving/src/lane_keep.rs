//! `driving/lane-keep-v0`: follow a winding two-lane road in the right lane
//! at the speed limit until the route is complete.

use crate::config::Settings;
use crate::road;
use crate::rules::{Crash, StepResult, carl_factors};
use crate::state::Car;
use crate::traffic::lane_centre;
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;

/// Road built beyond the route, m (so the look-ahead never runs off its end).
const SPARE: f32 = 200.0;

/// Lateral offset of the lane to keep: the rightmost.
pub fn lane_d(c: &Car) -> f32 {
    lane_centre(0.0, c.lanes)
}

/// A fresh road; the car in the right lane 20 m along, slightly off its
/// centre and heading, at 50–100% of the limit.
pub fn draw(s: &Settings, rng: &mut EnvRng, c: &mut Car) {
    let (n, length) = road::winding(
        rng,
        s.route_length + SPARE,
        s.max_curvature,
        &mut c.segments,
    );
    c.num_segments = n as f32;
    c.road_length = length;
    c.route = s.route_length;
    let lateral = lane_d(c) + 0.5 * (2.0 * rng.random::<f32>() - 1.0);
    let (p, heading) = road::pose_at(c.road(), length, false, 20.0, lateral);
    c.pos = p;
    c.yaw = heading + 0.1 * (2.0 * rng.random::<f32>() - 1.0);
    c.vel = [s.speed_limit * (0.5 + 0.5 * rng.random::<f32>()), 0.0];
}

/// CaRL's reward: the route fraction gained (in steps' worth of driving at
/// the limit) times the soft-penalty factors; done when the route is.
pub fn outcome(c: &Car, s: &Settings, moved: f32) -> StepResult {
    let gained = moved / (s.speed_limit * s.step_seconds());
    let done = c.progress >= c.route;
    StepResult {
        reward: gained * carl_factors(c, s.speed_limit, c.d - lane_d(c)),
        terminated: done,
        success: done,
        crash: Crash::None,
    }
}
