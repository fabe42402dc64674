//! One control step of any driving task: applying an action (continuous, or
//! a meta-action through the lane-and-speed controller), the physics steps,
//! the ego's place on its road, and dispatch to the task modules for starts,
//! outcomes and observations.

use crate::config::{ActionMode, Settings, TaskKind};
use crate::controller::{self, meta};
use crate::params::WIDTH;
use crate::road::{self, Frenet};
pub use crate::rules::{
    COMFORT_ACCEL, COMFORT_LATERAL, CRASH_REWARD, Crash, EDGE_TOLERANCE, INFO_KEYS, LOOK_AHEAD,
    ROAD_FEATURES, StepResult, carl_factors, half_width, nearest, road_features,
};
use crate::state::Car;
use crate::{highway, lane_keep, parking, racing, traffic, vehicle};
use proprio_core::EnvRng;

/// Observation length of a task.
pub fn obs_dim(task: TaskKind) -> usize {
    match task {
        TaskKind::LaneKeep | TaskKind::Racing => ROAD_FEATURES,
        TaskKind::Highway => highway::OBS_DIM,
        TaskKind::Parking => parking::OBS_DIM,
    }
}

/// Draws the start of an episode.
pub fn draw(s: &Settings, rng: &mut EnvRng) -> Car {
    let mut c: Car = bytemuck::Zeroable::zeroed();
    c.lanes = s.lanes as f32;
    match s.task {
        TaskKind::LaneKeep => lane_keep::draw(s, rng, &mut c),
        TaskKind::Racing => racing::draw(s, rng, &mut c),
        TaskKind::Parking => parking::draw(s, rng, &mut c),
        TaskKind::Highway => highway::draw(s, rng, &mut c),
    }
    if s.task != TaskKind::Parking {
        let f = road::project(c.road(), c.pos);
        place(&mut c, &f);
    }
    c
}

/// Records the ego's projection `f` on its road.
fn place(c: &mut Car, f: &Frenet) {
    c.seg = f.seg as f32;
    c.s = f.s;
    c.d = f.d;
    c.heading_error = road::wrap(f.heading - c.yaw);
}

/// The ego's projection on its road now (searching near the last one).
pub fn locate(c: &Car) -> Frenet {
    road::project_near(c.road(), c.closed > 0.5, c.seg as usize, c.pos)
}

/// Moves the meta-action targets: the lane steered to, or the speed held.
fn apply_meta(c: &mut Car, action: u32) {
    let lane = traffic::lane_of(c.target_d, c.lanes);
    match action {
        meta::LANE_LEFT if lane + 1.0 < c.lanes => {
            c.target_d = traffic::lane_centre(lane + 1.0, c.lanes);
        }
        meta::LANE_RIGHT if lane > 0.0 => {
            c.target_d = traffic::lane_centre(lane - 1.0, c.lanes);
        }
        meta::FASTER | meta::SLOWER => {
            c.target_speed = controller::next_speed(c.target_speed, action);
        }
        _ => {}
    }
}

/// What the lane-and-speed controller commands now (meta-actions), run
/// every physics step as highway-env's low-level controllers are.
fn meta_commands(c: &mut Car) -> [f32; 2] {
    let f = locate(c);
    place(c, &f);
    let curvature = road::curvature_at(c.road(), c.road_length, c.closed > 0.5, c.s + 5.0);
    controller::track(
        c.vel[0],
        c.heading_error,
        c.d,
        c.target_d,
        curvature,
        c.target_speed,
    )
}

/// Seconds between two traffic decisions and collision checks (highway-env decides at 15 Hz).
pub const TRAFFIC_PERIOD: f32 = 0.1;

/// One control step: `substeps` physics steps of the ego, the traffic
/// deciding and collisions checked every [`TRAFFIC_PERIOD`], then the task's outcome.
pub fn control_step(c: &mut Car, action: &[f32], s: &Settings) -> StepResult {
    let before = c.s;
    let mut commands = [
        action[0].clamp(-1.0, 1.0),
        action.get(1).map_or(0.0, |p| p.clamp(-1.0, 1.0)),
    ];
    if s.action == ActionMode::Meta {
        apply_meta(c, action[0] as u32);
    }
    let period = ((TRAFFIC_PERIOD / s.dt).round() as u32).max(1);
    let mut collided = false;
    for k in 0..s.substeps {
        if s.task == TaskKind::Highway && k % period == 0 {
            let f = locate(c);
            place(c, &f);
            traffic::step(c, (c.s, c.d, c.vel[0]), period.min(s.substeps - k), s.dt);
        }
        if s.action == ActionMode::Meta {
            commands = meta_commands(c);
        }
        vehicle::step(c, commands[0], commands[1], s.model, s.dt);
        if c.num_others > 0.0 && ((k + 1) % period == 0 || k + 1 == s.substeps) {
            collided = traffic::ego_collision(c).is_some();
            if collided {
                break;
            }
        }
    }
    c.action = commands;
    c.steps += 1.0;
    c.speed_sum += c.speed();
    if s.task == TaskKind::Parking {
        return parking::outcome(c, collided);
    }
    let f = locate(c);
    place(c, &f);
    let mut moved = c.s - before;
    if c.closed > 0.5 {
        moved = road::wrap(moved / c.road_length * std::f32::consts::TAU) / std::f32::consts::TAU
            * c.road_length;
    }
    c.progress += moved;
    let off_road = c.d.abs() + 0.5 * WIDTH > half_width(c) + EDGE_TOLERANCE;
    let crash = if collided {
        Crash::Collision
    } else if off_road {
        Crash::OffRoad
    } else {
        Crash::None
    };
    let mut out = match s.task {
        TaskKind::LaneKeep => lane_keep::outcome(c, s, moved),
        TaskKind::Racing => racing::outcome(c, s, moved),
        _ => highway::outcome(c, s, moved),
    };
    if crash != Crash::None {
        out = StepResult {
            reward: CRASH_REWARD,
            terminated: true,
            success: false,
            crash,
        };
    }
    out
}

/// Writes the observation (layouts in `docs/envs.md`).
pub fn observe(c: &Car, s: &Settings, obs: &mut [f32]) {
    match s.task {
        TaskKind::LaneKeep => road_features(c, lane_keep::lane_d(c), obs),
        TaskKind::Racing => road_features(c, 0.0, obs),
        TaskKind::Highway => highway::observe(c, s, obs),
        TaskKind::Parking => parking::observe(c, obs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DrivingConfig;
    use crate::traffic::{field, lane_centre};
    use proprio_core::episode_rng;

    fn highway_with_a_neighbour() -> (Car, Settings) {
        let config = DrivingConfig {
            control_hz: Some(10),
            action: Some(ActionMode::Continuous),
            traffic: Some(1),
            ..DrivingConfig::default()
        };
        let s = Settings::new(TaskKind::Highway, &config, Some(400)).unwrap();
        let mut c = draw(&s, &mut episode_rng(5, 0, 0));
        // The ego in lane 1 at 25 m/s; the other car alongside in lane 2, as fast.
        let d = lane_centre(1.0, c.lanes);
        let (p, yaw) = road::pose_at(c.road(), c.road_length, false, c.s, d);
        (c.pos, c.yaw, c.vel) = (p, yaw, [25.0, 0.0]);
        let f = road::project(c.road(), c.pos);
        place(&mut c, &f);
        let left = lane_centre(2.0, c.lanes);
        let (q, _) = road::pose_at(c.road(), c.road_length, false, c.s, left);
        c.others[0] = [q[0], q[1], yaw, 25.0, c.s, left, 25.0, left, 5.0];
        (c, s)
    }

    #[test]
    fn turning_into_a_neighbour_is_a_collision_that_ends_the_episode() {
        let (mut c, s) = highway_with_a_neighbour();
        for _ in 0..20 {
            let out = control_step(&mut c, &[-0.4, 0.0], &s);
            if out.terminated {
                assert_eq!(out.crash, Crash::Collision);
                assert_eq!(out.reward, CRASH_REWARD);
                assert!(!out.success);
                assert!(c.d > lane_centre(1.0, c.lanes), "hit while moving left");
                return;
            }
        }
        panic!("steering left into the next car never hit it");
    }

    #[test]
    fn driving_straight_beside_a_neighbour_is_no_collision() {
        let (mut c, s) = highway_with_a_neighbour();
        for _ in 0..20 {
            let out = control_step(&mut c, &[0.0, 0.0], &s);
            assert_eq!(out.crash, Crash::None);
            assert!(out.reward > 0.5, "progress near the limit: {}", out.reward);
        }
        assert!((c.others[0][field::D] - lane_centre(2.0, c.lanes)).abs() < 1e-4);
    }

    #[test]
    fn carl_factors_penalise_speeding_drifting_and_discomfort() {
        let mut c: Car = bytemuck::Zeroable::zeroed();
        c.vel = [20.0, 0.0];
        assert_eq!(carl_factors(&c, 20.0, 0.0), 1.0);
        c.vel = [22.0, 0.0];
        assert!(
            (carl_factors(&c, 20.0, 0.0) - 0.5).abs() < 1e-5,
            "10% over: half"
        );
        c.vel = [20.0, 0.0];
        assert!(
            (carl_factors(&c, 20.0, 1.0) - 0.75).abs() < 1e-6,
            "1 m off: three quarters"
        );
        c.lat_accel = 6.0;
        assert!(
            (carl_factors(&c, 20.0, 0.0) - 0.5).abs() < 1e-6,
            "beyond nuPlan's comfort"
        );
    }

    #[test]
    fn nearest_keeps_the_smallest_keys_in_order() {
        let keys = [5.0, f32::INFINITY, 1.0, 3.0, 0.5, 9.0];
        let best = nearest::<3>(keys.into_iter());
        assert_eq!(best, [(0.5, 4), (1.0, 2), (3.0, 3)]);
        let few = nearest::<3>([2.0].into_iter());
        assert_eq!(few[0], (2.0, 0));
        assert!(few[1].0.is_infinite());
    }
}
