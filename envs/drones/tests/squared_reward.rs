//! Learning to Fly's pieces in the drone env: the squared hover reward
//! (`squared_reward`: the formula read back from the state, its exit box, its
//! config checks), the motor speeds in the observation (`observe_motors`)
//! and the starts: at the target (`start.guidance`), within a heading (`start.yaw_deg`).

use proprio_core::rand::RngExt;
use proprio_core::serde_json::{Value, json};
use proprio_core::{Registry, VecEnv, VecOptions, episode_rng};
use proprio_drones::params::hover_command;
use proprio_drones::task::{Crash, control_step, draw};
use proprio_drones::{DroneConfig, Settings, SquaredReward, TaskKind};

const REWARD: SquaredReward = SquaredReward {
    position: 7.0,
    distance: 1.5,
    orientation: 3.0,
    velocity: 0.2,
    rate: 0.05,
    action: 0.3,
    constant: 4.0,
    scale: 0.5,
    bonus: 0.25,
    termination: -2.0,
    exit: 1.5,
};

fn settings(reward: SquaredReward) -> Settings {
    let config = DroneConfig {
        squared_reward: Some(reward),
        ..DroneConfig::default()
    };
    Settings::new(TaskKind::Hover, &config).unwrap()
}

fn norm2(v: [f32; 3]) -> f32 {
    v.iter().map(|x| x * x).sum()
}

#[test]
fn every_step_pays_the_documented_sum_of_squared_costs() {
    let s = settings(REWARD);
    let mut rng = episode_rng(3, 0, 0);
    let mut checked = 0;
    for _ in 0..20 {
        let mut d = draw(&s, &mut rng);
        for _ in 0..100 {
            let action = [0; 4].map(|_| hover_command() + 0.2 * (2.0 * rng.random::<f32>() - 1.0));
            let out = control_step(&mut d, action, &s);
            if out.crash != Crash::None {
                assert_eq!(out.reward, REWARD.termination);
                break;
            }
            let e = [0, 1, 2].map(|k| d.pos[k] - s.target[k]);
            let error = norm2(e).sqrt();
            let rate = norm2(d.omega).sqrt();
            let effort: f32 = action.iter().map(|a| (a - hover_command()).powi(2)).sum();
            let cost = REWARD.position * error * error
                + REWARD.distance * error
                + REWARD.orientation * (1.0 - d.quat[0] * d.quat[0])
                + REWARD.velocity * norm2(d.vel)
                + REWARD.rate * rate * rate
                + REWARD.action * effort;
            let inside = error < 0.1 && rate < 0.2;
            let bonus = if inside { REWARD.bonus } else { 0.0 };
            let expected = REWARD.constant - REWARD.scale * cost + bonus;
            assert!(
                (out.reward - expected).abs() <= 1e-4 * expected.abs().max(1.0),
                "reward {} against the formula's {expected}",
                out.reward
            );
            checked += 1;
        }
    }
    assert!(checked > 500, "only {checked} steps checked");
}

#[test]
fn a_level_drone_at_rest_on_the_target_earns_the_constant_and_the_bonus() {
    let s = settings(REWARD);
    let mut d = draw(&s, &mut episode_rng(1, 0, 0));
    d.pos = s.target;
    d.vel = [0.0; 3];
    d.omega = [0.0; 3];
    d.quat = [1.0, 0.0, 0.0, 0.0];
    d.rpm = [proprio_drones::params::hover_rpm(); 4];
    let out = control_step(&mut d, [hover_command(); 4], &s);
    // One 10 ms step at the hover command: the drone barely moves.
    assert!(
        (out.reward - (REWARD.constant + REWARD.bonus)).abs() < 1e-3,
        "{}",
        out.reward
    );
}

#[test]
fn leaving_the_exit_box_on_any_axis_ends_the_episode() {
    let s = settings(SquaredReward {
        exit: 0.3,
        ..REWARD
    });
    for axis in 0..3 {
        let mut d = draw(&s, &mut episode_rng(2, 0, 0));
        d.pos = s.target;
        d.pos[axis] += 0.35;
        d.vel = [0.0; 3];
        let out = control_step(&mut d, [hover_command(); 4], &s);
        assert!(out.terminated, "axis {axis}");
        assert_eq!(out.crash, Crash::OutOfBounds);
        assert_eq!(out.reward, REWARD.termination);
        d.pos = s.target;
        d.pos[axis] += 0.25;
        let out = control_step(&mut d, [hover_command(); 4], &s);
        assert!(!out.terminated, "axis {axis}: 0.25 m is inside the box");
    }
}

#[test]
fn the_key_is_checked_and_belongs_to_hover() {
    let registry = Registry::with(proprio_drones::register);
    let message =
        |id: &str, config: Value| match registry.make_vec(id, 1, &config, VecOptions::default()) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{config} was accepted"),
        };
    assert!(
        message("drones/gates-v0", json!({"squared_reward": {}}))
            .contains("squared_reward is a key of drones/hover")
    );
    assert!(
        message("drones/hover-v0", json!({"squared_reward": {"exit": 0.0}}))
            .contains("squared_reward.exit")
    );
    assert!(
        message(
            "drones/hover-v0",
            json!({"squared_reward": {"position": -1.0}})
        )
        .contains("squared_reward.position")
    );
    assert!(
        message(
            "drones/hover-v0",
            json!({"squared_reward": {"weight": 1.0}})
        )
        .contains("unknown field")
    );
    let mut venv = registry
        .make_vec(
            "drones/hover-v0",
            2,
            &json!({"squared_reward": {}}),
            VecOptions::default(),
        )
        .unwrap();
    venv.reset(Some(0), None).unwrap();
    venv.step(&[hover_command(); 8]).unwrap();
    // Learning to Fly's defaults: 2 − 0.5·(weighted cost), at most 2.
    assert!(venv.batch().reward.iter().all(|r| *r <= 2.0 && *r > -20.0));
}

#[test]
fn observed_motors_start_at_the_hover_command_and_lag_a_step_command() {
    let registry = Registry::with(proprio_drones::register);
    let config = json!({"observe_motors": true});
    let mut venv = registry
        .make_vec("drones/gates-v0", 3, &config, VecOptions::default())
        .unwrap();
    assert_eq!(venv.spec().observation_space.flat_dim(), 32);
    venv.reset(Some(4), None).unwrap();
    let motors = |venv: &dyn VecEnv, i: usize| venv.batch().obs(i)[28..32].to_vec();
    for i in 0..3 {
        for m in motors(venv.as_ref(), i) {
            assert!((m - hover_command()).abs() < 1e-5, "{m}");
        }
    }
    // Full speed commanded: after one 10 ms step the 25 ms motors are part-way,
    // 1 − e^(−10/25) = 33% of the rpm gap closed.
    venv.step(&[1.0; 12]).unwrap();
    let rpm = |m: f32| (m + 1.0) / 2.0;
    let (start, full) = (rpm(hover_command()), 1.0);
    for m in motors(venv.as_ref(), 0) {
        let closed = (rpm(m) - start) / (full - start);
        assert!((closed - 0.33).abs() < 0.01, "closed {closed}");
    }
}

#[test]
fn guidance_starts_that_share_of_episodes_at_rest_on_the_target() {
    let at_rest = |guidance: f32| {
        let config = DroneConfig {
            start: proprio_drones::Start {
                guidance,
                ..Default::default()
            },
            ..DroneConfig::default()
        };
        let s = Settings::new(TaskKind::Hover, &config).unwrap();
        (0..400)
            .filter(|&k| {
                let d = draw(&s, &mut episode_rng(7, k, 0));
                d.pos == s.target && d.vel == [0.0; 3] && d.quat == [1.0, 0.0, 0.0, 0.0]
            })
            .count()
    };
    assert_eq!(at_rest(0.0), 0);
    assert_eq!(at_rest(1.0), 400);
    let half = at_rest(0.5);
    assert!((160..=240).contains(&half), "{half} of 400");
    // The guidance draw comes after every other, so the rest of an episode's start is unshifted.
    let mut s = settings(REWARD);
    s.randomize.mass = 0.3;
    s.wind.speed = 2.0;
    let plain = draw(&s, &mut episode_rng(7, 0, 0));
    s.start.guidance = 1.0;
    let guided = draw(&s, &mut episode_rng(7, 0, 0));
    assert_eq!((guided.mass, guided.wind), (plain.mass, plain.wind));
    assert_ne!(guided.pos, plain.pos);
}

#[test]
fn yaw_deg_bounds_the_start_heading_and_rejects_what_is_not_an_angle() {
    let headings = |yaw_deg: f32| {
        let config = DroneConfig {
            start: proprio_drones::Start {
                tilt_deg: 0.0,
                yaw_deg,
                ..Default::default()
            },
            ..DroneConfig::default()
        };
        let s = Settings::new(TaskKind::Hover, &config).unwrap();
        (0..400)
            .map(|k| {
                let q = draw(&s, &mut episode_rng(3, k, 0)).quat;
                assert_eq!((q[1], q[2]), (0.0, 0.0), "untilted: a turn about z only");
                2.0 * q[3].atan2(q[0]).to_degrees()
            })
            .collect::<Vec<f32>>()
    };
    assert!(headings(0.0).iter().all(|&h| h == 0.0));
    let within = headings(30.0);
    let widest = within.iter().fold(0.0f32, |m, h| m.max(h.abs()));
    assert!(
        (25.0..=30.0 + 1e-3).contains(&widest),
        "widest heading {widest}"
    );
    assert!(within.iter().any(|&h| h < -10.0) && within.iter().any(|&h| h > 10.0));
    let any = headings(180.0);
    assert!(
        any.iter().any(|&h| h.abs() > 150.0),
        "the default draws every heading"
    );
    for bad in [-1.0, 181.0, f32::NAN] {
        let mut config = DroneConfig::default();
        config.start.yaw_deg = bad;
        let error = Settings::new(TaskKind::Hover, &config)
            .unwrap_err()
            .to_string();
        assert!(error.contains("start.yaw_deg"), "{error}");
    }
}
