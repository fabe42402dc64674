//! "Behaviour stays the same" across refactors of the learners: for a fixed
//! seed, CartPole PPO, Pendulum SAC and CartPole GRPO write the metrics rows
//! (wall-clock columns aside) that were recorded as fixtures before the
//! one-loop reshape. A change to any formula, random draw or cadence shows
//! up here. `PROPRIO_BLESS=1 cargo test --test behaviour` rewrites the
//! fixtures; only do that for a change meant to alter what a run computes,
//! and say so in the commit.

#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use proprio::serde_json::{self, Map, Value, json};
use proprio_learn::{Algo, Backend, EnvSource, TrainRequest, train};
use scratch::Scratch;
use std::path::{Path, PathBuf};

/// Floats may differ by this much relative to their size: the recorded runs
/// compute on the same kernels, but burn's matrix products pick their SIMD
/// path per CPU. A changed formula or random draw moves values far more.
const RELATIVE_TOLERANCE: f64 = 1e-5;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(format!("{name}.jsonl"))
}

fn rows(text: &str) -> Vec<Map<String, Value>> {
    text.lines()
        .map(|line| {
            let mut row: Map<String, Value> = serde_json::from_str(line).unwrap();
            for key in proprio_learn::WALL_CLOCK_COLUMNS {
                row.remove(key);
            }
            row
        })
        .collect()
}

fn same_number(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() => {
            (x - y).abs() <= RELATIVE_TOLERANCE * x.abs().max(y.abs()).max(1e-6)
        }
        _ => a == b,
    }
}

/// Trains `algo` on `env` with `overrides` and checks its rows against the fixture `name`.
fn check(name: &str, algo: Algo, env: &str, overrides: Value) {
    let dir = Scratch::new(&format!("behaviour-{name}"));
    let run = train(TrainRequest {
        algo,
        env: EnvSource::new(env, Value::Null, Default::default()),
        seed: 3,
        backend: Backend::Cpu,
        threads: Some(2),
        overrides: overrides.as_object().cloned().unwrap(),
        out: Some(dir.join("run")),
        video_every: None,
        init: None,
    })
    .unwrap();
    let text = std::fs::read_to_string(run.join("metrics.jsonl")).unwrap();
    let path = fixture(name);
    if std::env::var_os("PROPRIO_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let kept: String = rows(&text)
            .into_iter()
            .map(|row| format!("{}\n", Value::Object(row)))
            .collect();
        std::fs::write(&path, kept).unwrap();
        return;
    }
    let expected = rows(&std::fs::read_to_string(&path).unwrap());
    let actual = rows(&text);
    assert!(
        expected.iter().any(|r| r.contains_key("eval_return")),
        "{name}: the fixture must cover an evaluation"
    );
    assert_eq!(actual.len(), expected.len(), "{name}: number of rows");
    for (i, (a, e)) in actual.iter().zip(&expected).enumerate() {
        let mut keys: Vec<&String> = a.keys().chain(e.keys()).collect();
        keys.sort();
        keys.dedup();
        for key in keys {
            let (x, y) = (a.get(key), e.get(key));
            assert!(
                x.zip(y).is_some_and(|(x, y)| same_number(x, y)),
                "{name}: row {i}, column {key}: {x:?} now, {y:?} recorded"
            );
        }
    }
}

#[test]
fn cartpole_ppo_writes_the_recorded_rows() {
    check(
        "cartpole-ppo",
        Algo::Ppo,
        "classic/cartpole-v1",
        json!({"num_envs": 4, "num_steps": 128, "total_steps": 8192, "eval_every": 4096, "eval_episodes": 3, "hidden": [32, 32]}),
    );
}

#[test]
fn pendulum_sac_writes_the_recorded_rows() {
    check(
        "pendulum-sac",
        Algo::Sac,
        "classic/pendulum-v1",
        json!({"total_steps": 4000, "learning_starts": 500, "batch_size": 64, "hidden": [32, 32], "eval_every": 2000, "eval_episodes": 2}),
    );
}

#[test]
fn cartpole_grpo_writes_the_recorded_rows() {
    check(
        "cartpole-grpo",
        Algo::Grpo,
        "classic/cartpole-v1",
        json!({"group_size": 4, "groups": 4, "total_steps": 3000, "eval_every": 1500, "eval_episodes": 3, "hidden": [16]}),
    );
}
