//! The scripted baselines, acting on observations only: Stanley steering
//! with a curvature-aware speed profile on roads and tracks, IDM + MOBIL
//! decisions on the highway, and a path-following planner into the bay.

use crate::config::{ActionMode, Settings, TaskKind};
use crate::controller::{self, meta};
use crate::params::{LANE_WIDTH, MAX_STEER, WHEELBASE};
use crate::road::wrap;
use crate::task::{LOOK_AHEAD, ROAD_FEATURES, obs_dim};
use crate::traffic::{idm, lane_centre, lane_of};
use crate::{highway, params};
use proprio_core::{ActMode, Agent, Result};

/// The scripted driver of every driving task.
pub struct Scripted {
    settings: Settings,
}

/// Lateral acceleration and braking the speed profile plans with, m/s².
fn limits(task: TaskKind) -> (f32, f32) {
    match task {
        TaskKind::Racing => (0.8 * params::MU * params::GRAVITY, 6.0),
        _ => (3.5, 3.0),
    }
}

/// Fastest speed from which every curvature sample ahead can be taken at lateral acceleration `lateral`.
fn speed_profile(obs: &[f32], top: f32, lateral: f32, brake: f32) -> f32 {
    let starts = std::iter::once(0.0).chain(LOOK_AHEAD);
    starts
        .zip(&obs[10..ROAD_FEATURES])
        .fold(top, |v, (ahead, &k)| {
            let corner = (lateral / (k.abs() / 10.0).max(1e-4)).sqrt();
            v.min((corner * corner + 2.0 * brake * ahead).sqrt())
        })
}

/// `[steer, pedal]` that holds the observed road's reference line at `speed`.
fn follow(obs: &[f32], speed: f32) -> [f32; 2] {
    let v = 20.0 * obs[0];
    let heading_error = obs[8].atan2(obs[9]);
    let offset = obs[6] * LANE_WIDTH;
    controller::track(v, heading_error, offset, 0.0, obs[10] / 10.0, speed)
}

impl Scripted {
    /// A driver for envs with `settings`.
    pub fn new(settings: Settings) -> Self {
        Self { settings }
    }

    fn road(&self, obs: &[f32]) -> [f32; 2] {
        let s = &self.settings;
        let (lateral, brake) = limits(s.task);
        let top = match s.task {
            TaskKind::Racing => params::MAX_SPEED,
            _ => s.speed_limit,
        };
        follow(obs, speed_profile(obs, top, lateral, brake))
    }

    /// IDM acceleration of the ego at speed `v` behind the nearest observed car whose
    /// lateral offset from the ego is within half a lane of `offset` (m), and that car's row.
    fn lane_leader(&self, obs: &[f32], v: f32, offset: f32) -> (f32, Option<[f32; 2]>) {
        let width = self.settings.lanes as f32 * LANE_WIDTH;
        let mut leader: Option<(f32, f32)> = None;
        let mut follower: Option<(f32, f32)> = None;
        for row in obs[ROAD_FEATURES + 1..].chunks_exact(highway::ROW) {
            if row[0] == 0.0 || (row[2] * width - offset).abs() >= 0.5 * LANE_WIDTH + 0.3 {
                continue;
            }
            let (gap, speed) = (row[1] * 100.0, v + row[3] * 20.0);
            if gap > 0.0 && leader.is_none_or(|(g, _)| gap < g) {
                leader = Some((gap, speed));
            } else if gap <= 0.0 && follower.is_none_or(|(g, _)| -gap < g) {
                follower = Some((-gap, speed));
            }
        }
        (
            idm(v, 30.0, leader),
            follower.map(|(gap, speed)| [gap, speed]),
        )
    }

    /// IDM for speed and MOBIL for lanes, as the traffic drives, in
    /// meta-actions: change lanes when another lane lets the ego accelerate
    /// clearly more (the more so when it must brake here) and its new
    /// follower keeps a safe gap; otherwise slow down for the leader.
    fn highway(&self, obs: &[f32]) -> u32 {
        let v = 20.0 * obs[0];
        let settled = obs[6].abs() < 0.05;
        let (a, _) = self.lane_leader(obs, v, 0.0);
        if settled {
            let half = 0.5 * self.settings.lanes as f32 * LANE_WIDTH;
            let lanes = self.settings.lanes as f32;
            let lane = lane_of(obs[7] * half, lanes);
            for (side, action) in [(1.0, meta::LANE_LEFT), (-1.0, meta::LANE_RIGHT)] {
                if !(0.0..lanes).contains(&(lane + side)) {
                    continue;
                }
                let offset = lane_centre(lane + side, lanes) - obs[7] * half;
                let (a_new, follower) = self.lane_leader(obs, v, offset);
                let safe = follower.is_none_or(|[gap, speed]| {
                    gap > 10.0 && idm(speed, 30.0, Some((gap, v))) > -params::MOBIL_SAFE_BRAKE
                });
                if safe && a_new - a > 0.5 {
                    return action;
                }
            }
        }
        let target = obs[ROAD_FEATURES] * 30.0;
        if a < -1.0 && target > controller::META_SPEEDS[0] {
            meta::SLOWER
        } else if a > 0.5 && target < 30.0 && v > target - 2.0 {
            meta::FASTER
        } else {
            meta::IDLE
        }
    }

    /// Nose-in parking: a path along the aisle on the far side from the bay,
    /// a quarter circle into the bay's axis and the axis to the goal,
    /// followed by pure pursuit at a walking pace that ends at the goal.
    fn parking(&self, obs: &[f32]) -> [f32; 2] {
        const RADIUS: f32 = 6.0;
        const LOOK: f32 = 3.0;
        let (x, y) = (obs[0] * 10.0, obs[1] * 10.0);
        let yaw = obs[5].atan2(obs[4]);
        let v = obs[2] * obs[4] * 5.0 + obs[3] * obs[5] * 5.0;
        let (gx, gy) = (obs[6] * 10.0, obs[7] * 10.0);
        let side = gy.signum();
        let lane_y = -side * 2.0;
        let turn_x = gx - RADIUS;
        // Path coordinate of the car (σ) and the point LOOK m further on.
        let arc = 0.5 * std::f32::consts::PI * RADIUS;
        let entry = (gy - (lane_y + side * RADIUS)).abs();
        let total = arc + entry;
        let sigma = if x < turn_x {
            x - turn_x
        } else if (y - lane_y) * side < RADIUS {
            let (cx, cy) = (turn_x, lane_y + side * RADIUS);
            let angle = (x - cx).atan2(-(y - cy) * side);
            RADIUS * angle.clamp(0.0, 0.5 * std::f32::consts::PI)
        } else {
            arc + (y - (lane_y + side * RADIUS)).abs()
        };
        let remaining = total - sigma;
        let at = (sigma + LOOK).min(total + 1.0);
        let point = if at < 0.0 {
            [turn_x + at, lane_y]
        } else if at < arc {
            let angle = at / RADIUS;
            [
                turn_x + RADIUS * angle.sin(),
                lane_y + side * RADIUS * (1.0 - angle.cos()),
            ]
        } else {
            [gx, lane_y + side * (RADIUS + at - arc)]
        };
        let (dx, dy) = (point[0] - x, point[1] - y);
        let alpha = wrap(dy.atan2(dx) - yaw);
        let distance = dx.hypot(dy).max(0.5);
        let delta = (2.0 * WHEELBASE * alpha.sin() / distance).atan();
        let speed = (0.6 * remaining).clamp(0.0, 2.5);
        let pedal = if remaining < 0.05 {
            -1.0
        } else {
            (0.8 * (speed - v)).clamp(-1.0, 1.0)
        };
        [(-delta / MAX_STEER).clamp(-1.0, 1.0), pedal]
    }

    /// The action for one observation.
    pub fn action(&self, obs: &[f32], out: &mut [f32]) {
        let s = &self.settings;
        match (s.task, s.action) {
            (_, ActionMode::Meta) => out[0] = self.highway(obs) as f32,
            (TaskKind::Highway, ActionMode::Continuous) => {
                let v = 20.0 * obs[0];
                let (a, _) = self.lane_leader(obs, v, 0.0);
                let [steer, _] = follow(obs, v);
                out[..2].copy_from_slice(&[steer, (a / params::MAX_DRIVE).clamp(-1.0, 1.0)]);
            }
            (TaskKind::Parking, _) => out[..2].copy_from_slice(&self.parking(obs)),
            _ => out[..2].copy_from_slice(&self.road(obs)),
        }
    }
}

impl Agent for Scripted {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], _: ActMode) -> Result<()> {
        let dim = obs_dim(self.settings.task);
        let width = match self.settings.action {
            ActionMode::Continuous => 2,
            ActionMode::Meta => 1,
        };
        for (o, a) in obs.chunks_exact(dim).zip(actions.chunks_exact_mut(width)) {
            self.action(o, a);
        }
        Ok(())
    }
}
