//! One env's state (`Car`): the ego car, its road and the other cars, as a
//! plain block of floats both backends store in chunked struct-of-arrays form
//! ([`proprio_core::chunked`]).

use bytemuck::{Pod, Zeroable};
use serde::{Deserialize, Serialize};

/// Most road segments (straights and arcs) of one road or track.
pub const MAX_SEGMENTS: usize = 16;
/// Most other cars (traffic, or parked cars) of one episode.
pub const MAX_OTHERS: usize = 24;

/// One road segment, `[x, y, heading, curvature, length, start]`: it starts
/// at `(x, y)` heading `heading` (rad), turns with constant `curvature`
/// (1/m, positive left; 0 on a straight) for `length` m, and begins at arc
/// length `start` m of the road.
pub type Segment = [f32; 6];

/// Another car, `[x, y, yaw, speed, s, d, desired speed, target d, timer]`:
/// its pose, speed (m/s), position along the road (arc length `s`, lateral
/// offset `d`, left positive), IDM's desired speed, the lateral offset it
/// steers to (its lane's centre) and the seconds until its next lane-change
/// decision. A parked car uses only the pose.
pub type Other = [f32; 9];

/// Everything about one driving episode.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable, Serialize, Deserialize)]
pub struct Car {
    /// Centre of gravity in the world frame (z up), m.
    pub pos: [f32; 2],
    /// Heading, rad (counter-clockwise from +x).
    pub yaw: f32,
    /// Velocity of the centre of gravity in the body frame `[forward, left]`, m/s.
    pub vel: [f32; 2],
    /// Yaw rate, rad/s.
    pub yaw_rate: f32,
    /// Road-wheel steering angle, rad (positive left).
    pub steer: f32,
    /// Longitudinal acceleration of the last physics step, m/s².
    pub accel: f32,
    /// Lateral acceleration of the last physics step, m/s².
    pub lat_accel: f32,
    /// The previous action as `[steer, throttle]` in [−1, 1] (meta actions: what the controller applied).
    pub action: [f32; 2],
    /// Meta actions: the lateral offset the ego steers to, m.
    pub target_d: f32,
    /// Meta actions: the speed the ego holds, m/s.
    pub target_speed: f32,
    /// The road's segments (the first `num_segments` are used).
    pub segments: [Segment; MAX_SEGMENTS],
    /// Number of segments of the road.
    pub num_segments: f32,
    /// Length of the road or one lap, m.
    pub road_length: f32,
    /// 1 for a closed track, 0 for an open road.
    pub closed: f32,
    /// Lanes of the road.
    pub lanes: f32,
    /// Segment the ego was last found on.
    pub seg: f32,
    /// Arc length of the ego's last projection on the road, m.
    pub s: f32,
    /// Lateral offset of that projection, m (positive left).
    pub d: f32,
    /// Road heading there minus the ego's yaw, rad.
    pub heading_error: f32,
    /// Distance covered along the road this episode (laps unwrapped), m.
    pub progress: f32,
    /// Progress that completes the route, m (0: no route, drive until the time limit).
    pub route: f32,
    /// Control steps taken this episode.
    pub steps: f32,
    /// Sum of the ego's speed over the steps taken, m/s (for the mean speed).
    pub speed_sum: f32,
    /// Parking: the goal pose `[x, y, yaw]`.
    pub goal: [f32; 3],
    /// Parking: the goal error after the last step, m ([`crate::parking::goal_error`]).
    pub goal_error: f32,
    /// Other cars (the first `num_others` are used).
    pub others: [Other; MAX_OTHERS],
    /// Number of other cars.
    pub num_others: f32,
}

impl Car {
    /// The segments of the road in use.
    pub fn road(&self) -> &[Segment] {
        &self.segments[..(self.num_segments as usize).min(MAX_SEGMENTS)]
    }

    /// The other cars in use.
    pub fn others(&self) -> &[Other] {
        &self.others[..(self.num_others as usize).min(MAX_OTHERS)]
    }

    /// Speed of the centre of gravity, m/s (signed: negative when reversing).
    pub fn speed(&self) -> f32 {
        self.vel[0].signum() * self.vel[0].hypot(self.vel[1])
    }

    /// Rejects states no episode can reach.
    pub fn check(&self) -> Result<(), String> {
        let whole = |v: f32, max: usize| v >= 0.0 && v <= max as f32 && v.fract() == 0.0;
        if !whole(self.num_segments, MAX_SEGMENTS) || self.num_segments < 1.0 {
            return Err(format!(
                "num_segments must be a whole number in 1..={MAX_SEGMENTS}"
            ));
        }
        if !whole(self.num_others, MAX_OTHERS) {
            return Err(format!(
                "num_others must be a whole number in 0..={MAX_OTHERS}"
            ));
        }
        if !whole(self.seg, MAX_SEGMENTS) || self.seg >= self.num_segments {
            return Err("seg must index a segment of the road".into());
        }
        if !(1.0..=8.0).contains(&self.lanes) || self.lanes.fract() != 0.0 {
            return Err("lanes must be a whole number in 1..=8".into());
        }
        if self.road().iter().any(|s| s[4] <= 0.0) || self.road_length <= 0.0 {
            return Err("road segments must have positive lengths".into());
        }
        if self.steer.abs() > crate::params::MAX_STEER + 1e-4 {
            return Err("steer is beyond the steering lock".into());
        }
        Ok(())
    }
}

/// Number of `f32` fields of a [`Car`].
pub const LEN: usize = std::mem::size_of::<Car>() / 4;
