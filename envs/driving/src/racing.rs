//! `driving/racing-v0`: lap a closed track, 8 m wide, as fast as possible;
//! leaving it ends the episode.

use crate::config::Settings;
use crate::params::WIDTH;
use crate::road;
use crate::rules::{Crash, StepResult, half_width};
use crate::state::Car;
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;

/// Speed that earns a reward of 1 per step, m/s.
pub const REFERENCE_SPEED: f32 = 20.0;
/// Reward lost per second on the track (CarRacing's −0.1 a frame): progress
/// alone pays a lap the same at any speed, the clock makes fast laps pay more.
pub const TIME_COST: f32 = 1.0;

/// A fresh track; the car on the centre line at a random point, at 0–5 m/s.
pub fn draw(s: &Settings, rng: &mut EnvRng, c: &mut Car) {
    let clearance = 2.0 * half_width(c) + 6.0;
    let (n, length) = road::race_track(
        rng,
        s.corners as usize,
        s.track_radius,
        clearance,
        &mut c.segments,
    );
    c.num_segments = n as f32;
    c.road_length = length;
    c.closed = 1.0;
    c.route = s.laps as f32 * length;
    let along = length * rng.random::<f32>();
    let lateral = (half_width(c) - WIDTH) * (2.0 * rng.random::<f32>() - 1.0) * 0.5;
    let (p, heading) = road::pose_at(c.road(), length, true, along, lateral);
    c.pos = p;
    c.yaw = heading + 0.1 * (2.0 * rng.random::<f32>() - 1.0);
    c.vel = [5.0 * rng.random::<f32>(), 0.0];
}

/// Progress along the track, in steps' worth of driving at the reference
/// speed, less [`TIME_COST`] per second; done after the laps.
pub fn outcome(c: &Car, s: &Settings, moved: f32) -> StepResult {
    let done = c.progress >= c.route;
    StepResult {
        reward: moved / (REFERENCE_SPEED * s.step_seconds()) - TIME_COST * s.step_seconds(),
        terminated: done,
        success: done,
        crash: Crash::None,
    }
}
