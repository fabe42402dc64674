//! The foundation's contracts hold for drone envs: autoreset modes, seeding,
//! validation and clear errors.

use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Error, Registry, VecEnv, VecOptions};

fn registry() -> Registry {
    Registry::with(proprio_drones::register)
}

fn hover(n: usize, autoreset: AutoresetMode, config: Value) -> Box<dyn VecEnv> {
    let options = VecOptions {
        autoreset,
        threads: Some(2),
        ..VecOptions::default()
    };
    registry()
        .make_vec("drones/hover-v0", n, &config, options)
        .unwrap()
}

/// Motors off: every drone falls and crashes within about 0.5 s.
fn fall_until_done(venv: &mut dyn VecEnv, env: usize) -> usize {
    let off = vec![-1.0; venv.num_envs() * 4];
    for t in 1..200 {
        venv.step(&off).unwrap();
        if venv.batch().done(env) {
            return t;
        }
    }
    panic!("env {env} never crashed");
}

#[test]
fn next_step_mode_restarts_a_crashed_drone_on_the_following_step() {
    let mut venv = hover(3, AutoresetMode::NextStep, Value::Null);
    venv.reset(Some(1), None).unwrap();
    let steps = fall_until_done(venv.as_mut(), 0);
    let b = venv.batch();
    assert!(b.terminated[0] && !b.truncated[0], "a crash terminates");
    assert_eq!(b.reward[0], -10.0);
    assert_eq!(b.infos[0].get("crash"), Some(1.0), "ground contact");
    let mut fresh = hover(3, AutoresetMode::NextStep, Value::Null);
    fresh.reset(Some(1), None).unwrap();
    assert!(steps > 10, "fell in {steps} steps");

    venv.step(&[0.0; 12]).unwrap();
    let b = venv.batch();
    assert_eq!(
        (b.reward[0], b.terminated[0], b.truncated[0]),
        (0.0, false, false)
    );
    // Episode 1 of env 0 starts from its own stream, not episode 0's start.
    assert_ne!(b.obs(0), fresh.batch().obs(0));
    assert!(
        b.obs(0)[2].abs() <= 0.5 + 1e-6,
        "height error of a fresh start: {:?}",
        b.obs(0)
    );
}

#[test]
fn same_step_mode_keeps_the_crash_observation_and_starts_the_next_episode() {
    let mut next = hover(2, AutoresetMode::NextStep, Value::Null);
    let mut same = hover(2, AutoresetMode::SameStep, Value::Null);
    next.reset(Some(4), None).unwrap();
    same.reset(Some(4), None).unwrap();
    let t = fall_until_done(next.as_mut(), 0);
    assert_eq!(fall_until_done(same.as_mut(), 0), t);
    let (n, s) = (next.batch(), same.batch());
    assert_eq!(
        s.final_obs(0).unwrap(),
        n.obs(0),
        "final obs is the crash observation"
    );
    assert_eq!(s.final_infos[0].get("crash"), Some(1.0));
    assert_eq!(s.infos[0].get("crash"), None, "info of the new episode");
    next.step(&[0.0; 8]).unwrap();
    assert_eq!(
        same.batch().obs(0),
        next.batch().obs(0),
        "same next episode in both modes"
    );
}

#[test]
fn disabled_mode_and_time_limit() {
    let mut venv = hover(2, AutoresetMode::Disabled, json!({"max_episode_steps": 5}));
    venv.reset(Some(2), None).unwrap();
    let hold = vec![proprio_drones::params::hover_command(); 8];
    for _ in 0..4 {
        venv.step(&hold).unwrap();
        assert!(!venv.batch().done(0));
    }
    venv.step(&hold).unwrap();
    assert!(venv.batch().truncated[0] && !venv.batch().terminated[0]);
    let err = venv.step(&hold).unwrap_err();
    assert_eq!(err, Error::EpisodeOver { env: Some(0) });
    venv.reset_envs(&[true, true], None).unwrap();
    venv.step(&hold).unwrap();
}

#[test]
fn bad_actions_are_rejected_before_any_drone_moves() {
    let mut venv = hover(3, AutoresetMode::NextStep, Value::Null);
    venv.reset(Some(0), None).unwrap();
    let before = venv.batch().obs.clone();
    let mut actions = vec![0.0; 12];
    actions[9] = f32::NAN;
    let err = venv.step(&actions).unwrap_err();
    assert!(
        matches!(err, Error::InvalidAction { env: Some(2), .. }),
        "{err}"
    );
    assert_eq!(venv.batch().obs, before);
    assert!(matches!(venv.step(&[0.0; 11]), Err(Error::Shape(_))));
    // Out-of-range (finite) components are clipped, as the spec says.
    let mut env = registry().make("drones/hover-v0", &Value::Null).unwrap();
    env.reset(Some(0), None).unwrap();
    let clipped = env.step(&[5.0, 5.0, 5.0, 5.0]).unwrap();
    let mut same = registry().make("drones/hover-v0", &Value::Null).unwrap();
    same.reset(Some(0), None).unwrap();
    assert_eq!(same.step(&[1.0; 4]).unwrap().obs, clipped.obs);
}

#[test]
fn configs_and_options_are_checked() {
    let r = registry();
    let message = |id: &str, config: Value| match r.make(id, &config) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{config} was accepted"),
    };
    assert!(
        message("drones/hover-v0", json!({"physics_hz": 333})).contains("multiple of control_hz")
    );
    assert!(
        message("drones/hover-v0", json!({"num_gates": 3}))
            .contains("num_gates is a key of drones/gates")
    );
    assert!(message("drones/gates-v0", json!({"num_gates": 9})).contains("1–8"));
    assert!(
        message("drones/hover-v0", json!({"randomize": {"mass": 2.0}})).contains("randomize.mass")
    );
    assert!(message("drones/hover-v0", json!({"wind": {"sped": 1.0}})).contains("unknown field"));
    assert!(message("drones/hover-v0", json!({"action": "pwm"})).contains("unknown variant"));
    let mut env = r.make("drones/hover-v0", &Value::Null).unwrap();
    let err = env.reset(Some(0), Some(&json!({"low": 0}))).unwrap_err();
    assert!(matches!(err, Error::Options(_)), "{err}");
    let spec = r
        .spec("drones/gates-v0", &json!({"physics_hz": 1000}))
        .unwrap();
    assert_eq!(spec.physics_steps_per_step, 10);
    assert_eq!(spec.observation_space.flat_dim(), 28);
}

#[test]
fn seeds_give_distinct_randomised_episodes() {
    let config = json!({"randomize": {"mass": 0.2}, "wind": {"speed": 2.0}});
    let mut venv = hover(4, AutoresetMode::NextStep, config);
    venv.reset(Some(9), None).unwrap();
    let masses: Vec<f64> = (0..4)
        .map(|i| venv.snapshot(i).unwrap().state["mass"].as_f64().unwrap())
        .collect();
    for (i, m) in masses.iter().enumerate() {
        assert!((m / 0.027 - 1.0).abs() <= 0.2 + 1e-6, "env {i}: mass {m}");
        assert!(masses[..i].iter().all(|o| o != m), "env {i} repeats a mass");
    }
    let mut again = hover(
        2,
        AutoresetMode::NextStep,
        json!({"randomize": {"mass": 0.2}, "wind": {"speed": 2.0}}),
    );
    again.reset(Some(9), None).unwrap();
    assert_eq!(
        again.snapshot(1).unwrap().state,
        venv.snapshot(1).unwrap().state
    );
}

#[test]
fn the_viewer_reads_the_keys_of_a_drone_from_the_registry() {
    let mut registry = proprio_core::Registry::new();
    proprio_drones::register(&mut registry);
    let config = proprio_core::serde_json::json!({"action": "thrust_rates"});
    let spec = registry.spec("drones/hover-v0", &config).unwrap();
    let teleop = registry.teleop(&spec).unwrap();
    assert_eq!(
        teleop.labels,
        ["thrust", "roll rate", "pitch rate", "yaw rate"]
    );
    assert_eq!(teleop.slots, [1, 0, 3, 2], "a game pad's layout");
    let spec = registry
        .spec("drones/hover-v0", &proprio_core::serde_json::Value::Null)
        .unwrap();
    assert_eq!(registry.teleop(&spec).unwrap().labels[0], "motor 1");
}
