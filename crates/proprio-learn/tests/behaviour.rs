//! "Behaviour stays the same" across refactors of the learners: for a fixed
//! seed, CartPole PPO, Pendulum SAC and CartPole GRPO write the metrics rows
//! (wall-clock columns aside) that were recorded as fixtures before the
//! one-loop reshape. A change to any formula, random draw or cadence shows
//! up here.
//!
//! burn's CPU kernels pick their SIMD level when they run, and levels sum in
//! different orders: the first PPO update's losses differ by 1.5e-5 between
//! AVX-512 and AVX2, and SAC's Q loss by 20% four rows later (RL amplifies
//! the last bits). So each x86-64 level has its own fixtures
//! (`fixtures/x86-64-v4`: AVX-512; `fixtures/x86-64-v3`: AVX2 and FMA),
//! compared as tightly as two runs on one machine. What every CPU must
//! match is checked on every one against AVX2's rows (on x86-64-v4 across
//! levels; on aarch64 or an x86-64 without AVX2, alone): the counters of
//! every row exactly and the first row within [`FIRST_ROW_TOLERANCE`].
//!
//! `PROPRIO_BLESS=1 cargo test --test behaviour` rewrites this CPU's
//! fixtures; `tools/bless_behaviour.sh` rewrites both levels (AVX2 under
//! qemu-user). Only do that for a change meant to alter what a run
//! computes, and say so in the commit.

#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use proprio::serde_json::{self, Map, Value, json};
use proprio_learn::{Algo, ComputeDevice, EnvSource, TrainRequest, train};
use scratch::Scratch;
use std::path::{Path, PathBuf};

/// Floats may differ by this much relative to their size on the SIMD level
/// their fixture was recorded on (the same bits, in practice).
const RELATIVE_TOLERANCE: f64 = 1e-5;

/// Any CPU's first row against AVX2's: AVX-512 and AVX2 differ there by
/// 1.5e-5 at most (PPO's policy loss; measured under qemu-user).
const FIRST_ROW_TOLERANCE: f64 = 1e-4;

/// Columns that count or follow a schedule: the same on every CPU.
const COUNTERS: [&str; 4] = ["global_step", "iteration", "learning_rate", "buffer"];

/// The SIMD level burn's kernels (gemm through pulp, macerator) run at on
/// this CPU, by pulp's tests: x86-64-v4 (AVX-512) or x86-64-v3 (AVX2, FMA).
fn simd_level() -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        let v3 = std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
            && std::is_x86_feature_detected!("bmi1")
            && std::is_x86_feature_detected!("bmi2")
            && std::is_x86_feature_detected!("lzcnt")
            && std::is_x86_feature_detected!("popcnt");
        let v4 = v3
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512cd")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512vl");
        if v4 {
            return Some("x86-64-v4");
        }
        if v3 {
            return Some("x86-64-v3");
        }
    }
    None
}

fn fixture(level: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(level)
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

fn same_number(a: &Value, b: &Value, tolerance: f64) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if x.is_finite() && y.is_finite() => {
            (x - y).abs() <= tolerance * x.abs().max(y.abs()).max(1e-6)
        }
        _ => a == b,
    }
}

/// The metrics file of `algo` trained on `env` with `overrides` from seed 3.
fn metrics(name: &str, algo: Algo, env: &str, overrides: Value) -> String {
    let dir = Scratch::new(&format!("behaviour-{name}"));
    let run = train(TrainRequest {
        algo,
        env: EnvSource::new(env, Value::Null, Default::default()),
        seed: 3,
        device: ComputeDevice::Cpu,
        threads: Some(2),
        overrides: overrides.as_object().cloned().unwrap(),
        out: Some(dir.join("run")),
        video_every: None,
        init: None,
    })
    .unwrap();
    std::fs::read_to_string(run.join("metrics.jsonl")).unwrap()
}

/// Trains `algo` on `env` with `overrides` and checks its rows against the fixture `name`.
fn check(name: &str, algo: Algo, env: &str, overrides: Value) {
    let text = metrics(name, algo, env, overrides);
    let level = simd_level();
    if std::env::var_os("PROPRIO_BLESS").is_some() {
        let level = level.expect("fixtures are recorded on x86-64-v3 or x86-64-v4 CPUs");
        let path = fixture(level, name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let kept: String = rows(&text)
            .into_iter()
            .map(|row| format!("{}\n", Value::Object(row)))
            .collect();
        std::fs::write(&path, kept).unwrap();
        return;
    }
    let actual = rows(&text);
    if let Some(level) = level {
        compare(name, &actual, level, |_, _| Some(RELATIVE_TOLERANCE));
    } else {
        eprintln!("{name}: no fixtures for this CPU's SIMD level");
    }
    // What any CPU must match, so checked on every one (across levels on x86-64-v4).
    compare(name, &actual, "x86-64-v3", |row, key| {
        if COUNTERS.contains(&key) {
            Some(0.0)
        } else {
            (row == 0).then_some(FIRST_ROW_TOLERANCE)
        }
    });
}

/// Compares `actual` with `level`'s fixture, each row's column within the
/// relative `tolerance(row, column)` (`None`: not compared).
fn compare(
    name: &str,
    actual: &[Map<String, Value>],
    level: &str,
    tolerance: impl Fn(usize, &str) -> Option<f64>,
) {
    let expected = rows(&std::fs::read_to_string(fixture(level, name)).unwrap());
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
            let Some(tolerance) = tolerance(i, key) else {
                continue;
            };
            let (x, y) = (a.get(key), e.get(key));
            assert!(
                x.zip(y).is_some_and(|(x, y)| same_number(x, y, tolerance)),
                "{name}: row {i}, column {key}: {x:?} now, {y:?} recorded on {level}"
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

#[test]
fn sharded_sac_writes_the_same_rows_on_one_update_thread_as_on_three() {
    let run = |threads: usize| {
        let overrides = json!({"total_steps": 1200, "learning_starts": 500, "batch_size": 64, "hidden": [32, 32],
            "eval_every": 1200, "eval_episodes": 1, "update_shards": 3, "update_threads": threads});
        rows(&metrics(
            &format!("sharded-sac-{threads}"),
            Algo::Sac,
            "classic/pendulum-v1",
            overrides,
        ))
    };
    let one = run(1);
    assert!(
        one.iter().any(|r| r.contains_key("q_loss")),
        "the run updated"
    );
    assert_eq!(run(3), one);
}
