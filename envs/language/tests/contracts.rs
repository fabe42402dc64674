//! The env contract for the language tasks: seeding, batches, snapshots, random answers.

use proprio_core::rand::SeedableRng;
use proprio_core::serde_json::{Value, json};
use proprio_core::{AutoresetMode, Env, Registry, VecOptions};

fn registry() -> Registry {
    Registry::with(proprio_language::register)
}

const IDS: [&str; 4] = [
    "language/jigsaw-v0",
    "language/arithmetic-v0",
    "language/guess-number-v0",
    "language/twenty-questions-v0",
];

#[test]
fn seeds_repeat_and_envs_of_a_batch_differ() {
    let r = registry();
    for id in IDS {
        let options = |threads| VecOptions {
            autoreset: AutoresetMode::SameStep,
            threads: Some(threads),
            backend: proprio_core::Backend::Cpu,
        };
        let mut a = r.make_vec(id, 5, &Value::Null, options(1)).unwrap();
        let mut b = r.make_vec(id, 5, &Value::Null, options(2)).unwrap();
        a.reset(Some(9), None).unwrap();
        b.reset(Some(9), None).unwrap();
        assert_eq!(a.batch().obs, b.batch().obs, "{id}");
        // The guessing game starts from an empty transcript; its secrets show in the feedback.
        let mut differ = a.batch().obs(0) != a.batch().obs(1);
        let actions = vec![2.0; 5 * a.spec().action_space.flat_dim()];
        for _ in 0..12 {
            a.step(&actions).unwrap();
            b.step(&actions).unwrap();
            assert_eq!(a.batch().obs, b.batch().obs, "{id}");
            assert_eq!(a.batch().reward, b.batch().reward, "{id}");
            differ |= a.batch().obs(0) != a.batch().obs(1);
        }
        assert!(differ, "{id}: envs 0 and 1 drew the same instances");
    }
}

#[test]
fn random_answers_never_fail_and_stay_in_the_reward_range() {
    let r = registry();
    let mut rng = proprio_core::EnvRng::seed_from_u64(4);
    for id in IDS {
        for config in [
            json!({}),
            json!({"digits": 3, "operation": "mul"}),
            json!({"rows": 4, "cols": 3}),
        ] {
            let Ok(mut env) = r.make(id, &config) else {
                continue;
            };
            let spec = env.spec().clone();
            let mut action = vec![0.0; spec.action_space.flat_dim()];
            env.reset(Some(1), None).unwrap();
            for _ in 0..300 {
                spec.action_space.sample(&mut rng, &mut action);
                let step = env.step(&action).unwrap();
                assert!(
                    spec.reward_range.0 <= step.reward && step.reward <= spec.reward_range.1,
                    "{id}: {}",
                    step.reward
                );
                assert!(spec.observation_space.contains(&step.obs), "{id}");
                if step.terminated || step.truncated {
                    env.reset(None, None).unwrap();
                }
            }
        }
    }
}

#[test]
fn a_snapshot_continues_a_game_exactly() {
    let r = registry();
    for id in IDS {
        let mut env = r.make(id, &Value::Null).unwrap();
        let dim = env.spec().action_space.flat_dim();
        env.reset(Some(2), None).unwrap();
        env.step(&vec![2.0; dim]).unwrap();
        let state = env.snapshot().unwrap();
        let json = proprio_core::serde_json::to_string(&state).unwrap();
        let mut other = r.make(id, &Value::Null).unwrap();
        let mut obs = vec![0.0; env.spec().observation_space.flat_dim()];
        other
            .restore(
                &proprio_core::serde_json::from_str(&json).unwrap(),
                &mut obs,
            )
            .unwrap();
        let (a, b) = (env.step(&vec![3.0; dim]), other.step(&vec![3.0; dim]));
        match (a, b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{id}"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{id}"),
            (a, b) => panic!("{id}: {a:?} vs {b:?}"),
        }
    }
}

#[test]
fn bad_configs_and_reset_options_are_clear_errors() {
    let r = registry();
    for (id, config, needle) in [
        (
            "language/jigsaw-v0",
            json!({"rows": 5}),
            "rows and cols must be 2 to 4",
        ),
        ("language/jigsaw-v0", json!({"grid": 2}), "unknown field"),
        (
            "language/arithmetic-v0",
            json!({"digits": 0}),
            "digits must be 1 to 9",
        ),
        (
            "language/arithmetic-v0",
            json!({"operation": "div"}),
            "unknown variant",
        ),
        (
            "language/guess-number-v0",
            json!({"max": 0}),
            "max must be 1 to 999999",
        ),
        (
            "language/guess-number-v0",
            json!({"turn_cost": -1.0}),
            "must lie in [0, 0.5]",
        ),
        (
            "language/guess-number-v0",
            json!({"format_penalty": 0.8}),
            "must lie in [0, 0.5]",
        ),
        (
            "language/twenty-questions-v0",
            json!({"objects": 21}),
            "objects must be 2 to 20",
        ),
        (
            "language/twenty-questions-v0",
            json!({"turn_cost": 0.6}),
            "must lie in [0, 0.5]",
        ),
    ] {
        let err = r.make(id, &config).err().unwrap().to_string();
        assert!(err.contains(needle), "{id} {config}: {err}");
    }
    let mut env = r.make("language/jigsaw-v0", &Value::Null).unwrap();
    assert!(env.reset(Some(0), Some(&json!({"rows": 3}))).is_err());
}
