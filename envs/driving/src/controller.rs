//! The lane-and-speed controller that carries out meta-actions (and that the
//! scripted baselines share): Stanley steering with curvature feed-forward
//! towards a lateral offset, proportional pedal towards a speed.

use crate::params::{MAX_STEER, WHEELBASE};
use crate::road::wrap;

/// Stanley's cross-track gain, 1/s.
pub const CROSS_TRACK_GAIN: f32 = 0.6;
/// Softening speed of Stanley's cross-track term, m/s.
pub const SOFTENING: f32 = 2.0;
/// Pedal per m/s of speed error.
pub const SPEED_GAIN: f32 = 0.5;
/// The meta-action target speeds, m/s (index 0 slowest): highway-env's `target_speeds`.
pub const META_SPEEDS: [f32; 3] = [20.0, 25.0, 30.0];

/// highway-env's meta-actions.
pub mod meta {
    /// Change to the lane on the left.
    pub const LANE_LEFT: u32 = 0;
    /// Keep lane and speed.
    pub const IDLE: u32 = 1;
    /// Change to the lane on the right.
    pub const LANE_RIGHT: u32 = 2;
    /// Raise the target speed one level.
    pub const FASTER: u32 = 3;
    /// Lower the target speed one level.
    pub const SLOWER: u32 = 4;
}

/// `[steer, pedal]` commands that bring a car at speed `v`, `heading_error`
/// (road heading minus yaw, rad) and lateral offset `d` to offset `target_d`
/// at speed `target_speed` on a road of curvature `curvature` ahead.
pub fn track(
    v: f32,
    heading_error: f32,
    d: f32,
    target_d: f32,
    curvature: f32,
    target_speed: f32,
) -> [f32; 2] {
    let cross = (CROSS_TRACK_GAIN * (target_d - d) / (v.abs() + SOFTENING)).atan();
    let feed_forward = (WHEELBASE * curvature).atan();
    let delta = wrap(heading_error) + cross + feed_forward;
    // Feed-forward for drag and rolling resistance, so the speed settles on its target.
    let hold = -crate::vehicle::resistance(v) / crate::params::MAX_DRIVE;
    let pedal = (SPEED_GAIN * (target_speed - v) + hold).clamp(-1.0, 1.0);
    [(-delta / MAX_STEER).clamp(-1.0, 1.0), pedal]
}

/// The next meta target speed for `action` from `speed`.
pub fn next_speed(speed: f32, action: u32) -> f32 {
    let level = META_SPEEDS
        .iter()
        .position(|&s| s >= speed - 0.1)
        .unwrap_or(META_SPEEDS.len() - 1);
    let level = match action {
        meta::FASTER => (level + 1).min(META_SPEEDS.len() - 1),
        meta::SLOWER => level.saturating_sub(1),
        _ => level,
    };
    META_SPEEDS[level]
}
