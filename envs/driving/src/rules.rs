//! What the driving tasks share: the crash rules, CaRL's reward factors,
//! the road observation every road task starts with, nearest-car search.

use crate::params::LANE_WIDTH;
use crate::road;
use crate::state::Car;

/// Why an episode ended early (`info["crash"]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crash {
    /// Still driving.
    None = 0,
    /// Left the road, the track or the lot.
    OffRoad = 1,
    /// Hit another car.
    Collision = 2,
}

/// What one control step produced, with its crash cause.
pub type StepResult = proprio_core::chunked::StepResult<Crash>;

/// Reward when a hard infraction (collision, leaving the road) ends the episode.
pub const CRASH_REWARD: f32 = -1.0;
/// How far a wheel may run over the road edge before the car counts as off the road, m.
pub const EDGE_TOLERANCE: f32 = 0.3;
/// Ends of the look-ahead windows of road observations, m: window `i` runs
/// from the previous end (0 for the first) to `LOOK_AHEAD[i]`.
pub const LOOK_AHEAD: [f32; 5] = [5.0, 15.0, 30.0, 50.0, 80.0];
/// Observation entries every road task starts with ([`road_features`]).
pub const ROAD_FEATURES: usize = 10 + LOOK_AHEAD.len();
/// nuPlan's comfort bounds CaRL uses: longitudinal acceleration, m/s².
pub const COMFORT_ACCEL: (f32, f32) = (-4.05, 2.40);
/// nuPlan's comfort bound on lateral acceleration, m/s².
pub const COMFORT_LATERAL: f32 = 4.89;

/// Half the width of the road, m.
pub fn half_width(c: &Car) -> f32 {
    0.5 * c.lanes * LANE_WIDTH
}

/// CaRL's soft-penalty factors, each in [0, 1]: speeding (0 at 20% over
/// the limit), distance from the lane centre `lane_error` (0.5 at the lane's
/// edge) and comfort (down to 0.5 as the acceleration leaves nuPlan's bounds,
/// reached 1 m/s² beyond them; continuous, so no rounding flips it).
pub fn carl_factors(c: &Car, speed_limit: f32, lane_error: f32) -> f32 {
    let speeding = (1.0 - (c.speed() - speed_limit).max(0.0) / (0.2 * speed_limit)).max(0.0);
    let centre = 1.0 - 0.5 * (lane_error.abs() / (0.5 * LANE_WIDTH)).min(1.0);
    let excess = (COMFORT_ACCEL.0 - c.accel)
        .max(c.accel - COMFORT_ACCEL.1)
        .max(0.0)
        + (c.lat_accel.abs() - COMFORT_LATERAL).max(0.0);
    speeding * centre * (1.0 - 0.5 * excess.min(1.0))
}

/// The metrics every step reports in `info`, besides success and crash.
pub const INFO_KEYS: [&str; 2] = ["speed", "progress"];

/// The observation entries every road task starts with: the ego's motion,
/// its previous action, where it is across the road (from the lateral offset
/// `d_ref` it should hold) and the sharpest curvature (× 10 m) in each
/// look-ahead window.
pub fn road_features(c: &Car, d_ref: f32, obs: &mut [f32]) {
    let (sin, cos) = c.heading_error.sin_cos();
    let head = [
        c.vel[0] / 20.0,
        c.vel[1] / 5.0,
        c.yaw_rate,
        c.steer / crate::params::MAX_STEER,
        c.action[0],
        c.action[1],
        (c.d - d_ref) / LANE_WIDTH,
        c.d / half_width(c),
        sin,
        cos,
    ];
    obs[..10].copy_from_slice(&head);
    let mut from = 0.0;
    for (o, to) in obs[10..ROAD_FEATURES].iter_mut().zip(LOOK_AHEAD) {
        *o = 10.0
            * road::sharpest(
                c.road(),
                c.road_length,
                c.closed > 0.5,
                c.s + from,
                c.s + to,
            );
        from = to;
    }
}

/// The indices of the `K` smallest `keys` (infinite keys skipped), smallest
/// first, with their keys; unused slots hold an infinite key.
pub fn nearest<const K: usize>(keys: impl Iterator<Item = f32>) -> [(f32, usize); K] {
    let mut best = [(f32::INFINITY, 0usize); K];
    for (k, key) in keys.enumerate() {
        if key >= best[K - 1].0 {
            continue;
        }
        let mut i = K - 1;
        while i > 0 && best[i - 1].0 > key {
            best[i] = best[i - 1];
            i -= 1;
        }
        best[i] = (key, k);
    }
    best
}
