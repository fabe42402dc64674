//! Replays trajectories recorded from Gymnasium (tools/gen_gymnasium_fixtures.py):
//! each episode starts from Gymnasium's own `env.unwrapped.state`, carried in
//! through a bare `{"state": [...]}` snapshot, and must reproduce Gymnasium's
//! observations (1e-5), rewards, and termination and truncation steps.

use proprio_core::serde_json::{self, Value, json};
use proprio_core::{Env, Registry, State};

fn registry() -> Registry {
    Registry::with(proprio_classic::register)
}

fn fixture(name: &str) -> Value {
    let path = format!("{}/tests/fixtures/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect()
}

fn assert_close(what: &str, ours: &[f32], theirs: &[f32], tol: f32) {
    assert_eq!(ours.len(), theirs.len(), "{what}: length");
    for (k, (a, b)) in ours.iter().zip(theirs).enumerate() {
        assert!((a - b).abs() <= tol, "{what}[{k}]: ours {a}, Gymnasium {b}");
    }
}

fn replay(id: &str, fixture_name: &str) -> usize {
    let doc = fixture(fixture_name);
    let registry = registry();
    let mut steps_checked = 0;
    for (e, episode) in doc["episodes"].as_array().unwrap().iter().enumerate() {
        let mut env = registry.make(id, &Value::Null).unwrap();
        env.reset(Some(0), None).unwrap();
        let bare: State =
            serde_json::from_value(json!({ "state": episode["initial_state"] })).unwrap();
        let mut obs = vec![0.0; 4.min(env.spec().observation_space.flat_dim())];
        env.restore(&bare, &mut obs).unwrap();
        assert_close(
            &format!("episode {e} initial obs"),
            &obs,
            &floats(&episode["initial_obs"]),
            1e-5,
        );
        let actions = episode["actions"].as_array().unwrap();
        for (t, (action, expected)) in actions
            .iter()
            .zip(episode["steps"].as_array().unwrap())
            .enumerate()
        {
            let action: Vec<f32> = match action {
                Value::Array(_) => floats(action),
                n => vec![n.as_f64().unwrap() as f32],
            };
            let step = env.step(&action).unwrap();
            let what = format!("episode {e} step {t}");
            assert_close(&what, &step.obs, &floats(&expected["obs"]), 1e-5);
            let reward = expected["reward"].as_f64().unwrap();
            assert!(
                (step.reward - reward).abs() <= 1e-5 * reward.abs().max(1.0),
                "{what}: reward {} vs {reward}",
                step.reward
            );
            assert_eq!(
                step.terminated,
                expected["terminated"].as_bool().unwrap(),
                "{what}: terminated"
            );
            assert_eq!(
                step.truncated,
                expected["truncated"].as_bool().unwrap(),
                "{what}: truncated"
            );
            steps_checked += 1;
        }
        assert!(
            env.step(&[0.0; 1]).is_err(),
            "episode {e}: a finished episode must refuse further steps"
        );
    }
    steps_checked
}

#[test]
fn cartpole_matches_gymnasium() {
    let steps = replay("classic/cartpole-v1", "cartpole-v1");
    assert!(steps > 1000, "only {steps} steps replayed");
}

#[test]
fn pendulum_matches_gymnasium() {
    let steps = replay("classic/pendulum-v1", "pendulum-v1");
    assert_eq!(steps, 1000);
}

#[test]
fn snapshot_state_field_is_gymnasiums_state_vector() {
    let registry = registry();
    let mut env = registry.make("classic/cartpole-v1", &Value::Null).unwrap();
    let (obs, _) = env.reset(Some(3), None).unwrap();
    let snapshot = serde_json::to_value(env.snapshot().unwrap()).unwrap();
    let state = floats(&snapshot["state"]);
    assert_eq!(
        state, obs,
        "CartPole's state is [x, x_dot, theta, theta_dot], as its observation"
    );
    assert_eq!(snapshot["env"], "classic/cartpole-v1");
}

#[test]
fn reset_options_follow_gymnasium() {
    let registry = registry();
    let mut env = registry.make("classic/cartpole-v1", &Value::Null).unwrap();
    for seed in 0..50 {
        let (obs, _) = env
            .reset(Some(seed), Some(&json!({"low": -0.2, "high": -0.1})))
            .unwrap();
        assert!(obs.iter().all(|v| (-0.2..-0.1).contains(v)), "{obs:?}");
    }
    let err = env
        .reset(None, Some(&json!({"low": 0.3, "high": 0.1})))
        .unwrap_err();
    assert!(err.to_string().contains("must be below"), "{err}");
    let err = env.reset(None, Some(&json!({"lo": 0.1}))).unwrap_err();
    assert!(err.to_string().contains("unknown option 'lo'"), "{err}");

    let mut pendulum = registry.make("classic/pendulum-v1", &Value::Null).unwrap();
    let (obs, _) = pendulum
        .reset(Some(1), Some(&json!({"x_init": 0.0, "y_init": 0.0})))
        .unwrap();
    assert_eq!(
        obs,
        vec![1.0, 0.0, 0.0],
        "x_init = y_init = 0 starts upright and still"
    );
}

#[test]
fn pendulum_clips_torque_as_documented() {
    let registry = registry();
    let run = |torque: f32| {
        let mut env = registry.make("classic/pendulum-v1", &Value::Null).unwrap();
        env.reset(Some(5), None).unwrap();
        env.step(&[torque]).unwrap()
    };
    assert_eq!(run(2.0), run(50.0));
    assert_eq!(run(-2.0), run(-7.5));
    assert_ne!(run(1.0), run(2.0));
}

#[test]
fn config_keys_are_checked() {
    let registry = registry();
    let err = registry
        .make("classic/pendulum-v1", &json!({"gravity": 9.8}))
        .err()
        .unwrap();
    assert!(err.to_string().contains("unknown field `gravity`"), "{err}");
    let env = registry
        .make(
            "classic/pendulum-v1",
            &json!({"g": 9.81, "max_episode_steps": 50}),
        )
        .unwrap();
    assert_eq!(env.spec().max_episode_steps, Some(50));
    assert_eq!(env.spec().config["g"], 9.81);
    let mut env = registry
        .make("classic/cartpole-v1", &json!({"sutton_barto_reward": true}))
        .unwrap();
    env.reset(Some(0), None).unwrap();
    assert_eq!(env.step(&[1.0]).unwrap().reward, 0.0);
}
