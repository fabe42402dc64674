//! The driving envs keep the API's contracts and their tasks behave: seeds,
//! batch sizes and thread counts give identical trajectories, bad input is
//! refused with clear errors, infractions end episodes, and the scripted
//! drivers finish their tasks.

use proprio_core::ActMode;
use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Error, Registry, VecEnv, VecOptions};

fn registry() -> Registry {
    Registry::with(proprio_driving::register)
}

const TASKS: [&str; 4] = [
    "driving/lane-keep-v0",
    "driving/racing-v0",
    "driving/parking-v0",
    "driving/highway-v0",
];

fn make(id: &str, n: usize, threads: usize, config: Value) -> Box<dyn VecEnv> {
    let options = VecOptions {
        autoreset: AutoresetMode::SameStep,
        threads: Some(threads),
        ..VecOptions::default()
    };
    registry().make_vec(id, n, &config, options).unwrap()
}

/// Env 0..k's observations over `steps` steps of the scripted driver.
fn trajectory(id: &str, n: usize, threads: usize, k: usize, steps: usize) -> Vec<f32> {
    let r = registry();
    let mut venv = make(id, n, threads, Value::Null);
    let mut driver = r.scripted(id, venv.spec()).unwrap();
    let dim = venv.spec().observation_space.flat_dim();
    let width = venv.spec().action_space.flat_dim();
    let mut actions = vec![0.0; n * width];
    venv.reset(Some(7), None).unwrap();
    let mut out = Vec::new();
    for _ in 0..steps {
        driver
            .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
            .unwrap();
        venv.step(&actions).unwrap();
        out.extend_from_slice(&venv.batch().obs[..k * dim]);
        out.extend_from_slice(&venv.batch().reward[..k]);
    }
    out
}

#[test]
fn seeds_batch_sizes_and_thread_counts_give_identical_trajectories() {
    for id in TASKS {
        let alone = trajectory(id, 3, 1, 3, 150);
        assert_eq!(
            alone,
            trajectory(id, 3, 1, 3, 150),
            "{id}: same seed, same run"
        );
        assert_eq!(
            alone,
            trajectory(id, 130, 2, 3, 150),
            "{id}: batch of 130 on 2 threads"
        );
    }
}

#[test]
fn bad_actions_are_refused_before_anything_moves() {
    let mut venv = make("driving/lane-keep-v0", 2, 1, Value::Null);
    venv.reset(Some(0), None).unwrap();
    let before = venv.batch().obs.clone();
    let err = venv.step(&[0.0, 0.0, f32::NAN, 0.0]).unwrap_err();
    assert!(matches!(err, Error::InvalidAction { .. }), "{err}");
    assert_eq!(venv.batch().obs, before);
    let mut highway = make("driving/highway-v0", 1, 1, Value::Null);
    highway.reset(Some(0), None).unwrap();
    assert!(highway.step(&[5.0]).is_err(), "meta-actions are 0..=4");
    assert!(highway.step(&[f32::NAN]).is_err());
}

#[test]
fn bad_configs_name_the_key() {
    let r = registry();
    let options = VecOptions::default();
    let cases = [
        (
            "driving/racing-v0",
            json!({"lanes": 3}),
            "lanes is a key of driving/lane-keep, driving/highway only",
        ),
        (
            "driving/lane-keep-v0",
            json!({"action": "meta"}),
            "driving/highway only",
        ),
        (
            "driving/highway-v0",
            json!({"traffic": 99}),
            "traffic must be in 0..=24",
        ),
        (
            "driving/parking-v0",
            json!({"physics_hz": 100, "control_hz": 7}),
            "multiple of control_hz",
        ),
        ("driving/lane-keep-v0", json!({"speed": 3}), "unknown field"),
    ];
    for (id, config, message) in cases {
        let err = r.make_vec(id, 1, &config, options).err().unwrap();
        assert!(
            matches!(err, Error::Config { .. }) && err.to_string().contains(message),
            "{id} {config}: {err}"
        );
    }
}

#[test]
fn steering_off_the_road_terminates_with_an_off_road_crash() {
    let mut venv = make("driving/lane-keep-v0", 1, 1, Value::Null);
    venv.reset(Some(3), None).unwrap();
    for t in 0..100 {
        venv.step(&[-1.0, 0.3]).unwrap();
        let b = venv.batch();
        if b.terminated[0] {
            let info = &b.final_infos[0];
            assert_eq!(info.get("crash"), Some(1.0));
            assert_eq!(info.get("success"), Some(0.0));
            assert_eq!(b.reward[0], -1.0);
            assert!(t > 3, "the car starts on the road");
            return;
        }
    }
    panic!("full left lock never left the road");
}

#[test]
fn snapshots_restore_the_same_future() {
    for id in TASKS {
        let r = registry();
        let mut venv = make(id, 4, 1, Value::Null);
        let mut driver = r.scripted(id, venv.spec()).unwrap();
        let width = venv.spec().action_space.flat_dim();
        let mut actions = vec![0.0; 4 * width];
        venv.reset(Some(11), None).unwrap();
        for _ in 0..20 {
            driver
                .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
                .unwrap();
            venv.step(&actions).unwrap();
        }
        let snapshots: Vec<_> = (0..4).map(|i| venv.snapshot(i).unwrap()).collect();
        let mut run = |venv: &mut Box<dyn VecEnv>| {
            let mut out = Vec::new();
            for _ in 0..30 {
                driver
                    .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
                    .unwrap();
                venv.step(&actions).unwrap();
                out.extend_from_slice(&venv.batch().obs);
            }
            out
        };
        let first = run(&mut venv);
        for (i, state) in snapshots.iter().enumerate() {
            venv.restore(state, &[i]).unwrap();
        }
        assert_eq!(first, run(&mut venv), "{id}");
    }
}

/// Success rate of the scripted driver over one episode in each of `n` envs.
fn scripted_success(id: &str, n: usize) -> f64 {
    let r = registry();
    let mut venv = make(id, n, 2, Value::Null);
    let mut driver = r.scripted(id, venv.spec()).unwrap();
    let mut successes = 0.0;
    proprio_core::first_episodes(venv.as_mut(), driver.as_mut(), 2026, |_, _, last| {
        successes += last.and_then(|info| info.get("success")).unwrap_or(0.0);
    })
    .unwrap();
    successes / n as f64
}

#[test]
fn the_scripted_drivers_finish_their_tasks() {
    for (id, goal) in [
        ("driving/lane-keep-v0", 0.95),
        ("driving/racing-v0", 0.95),
        ("driving/highway-v0", 0.9),
        ("driving/parking-v0", 0.9),
    ] {
        let rate = scripted_success(id, 64);
        assert!(rate >= goal, "{id}: scripted success {rate}");
    }
}
