//! A batch stepped with random actions and timed, and its report: shared by
//! `proprio bench` and `proprio bench --suite`.

use crate::{Failure, input};
use proprio::render::ObsMode;
use proprio::serde_json::{Value, json};
use proprio::{Backend, RandomActions, VecEnv};
use std::time::Instant;

/// When a timed stretch of stepping ends.
#[derive(Clone, Copy)]
pub enum Until {
    /// After this many batch steps.
    Steps(usize),
    /// At the first batch step that ends past this many seconds.
    Seconds(f64),
}

/// One env batch stepped with random actions, timed.
pub struct Measured {
    /// Timed batch steps.
    pub steps: usize,
    /// Their wall-clock seconds.
    pub seconds: f64,
}

/// Steps `venv` (reset with `seed`) untimed for `warmup`, then timed until
/// `until`, with random actions sampled from `action_batches` pre-drawn
/// batches (0: drawn every step, inside the timing).
pub fn measure(
    venv: &mut dyn VecEnv,
    seed: u64,
    action_batches: usize,
    warmup: Until,
    until: Until,
) -> Result<Measured, Failure> {
    let num_envs = venv.num_envs();
    let space = venv.spec().action_space.clone();
    let mut random = RandomActions::new(seed, num_envs);
    let mut batches = vec![vec![0.0; num_envs * space.flat_dim()]; action_batches.max(1)];
    for actions in &mut batches {
        random.sample(&space, actions);
    }
    venv.reset(Some(seed), None)?;
    let mut run = |until: Until| -> Result<Measured, Failure> {
        let start = Instant::now();
        let mut steps = 0;
        loop {
            let done = match until {
                Until::Steps(n) => steps >= n,
                Until::Seconds(s) => steps > 0 && start.elapsed().as_secs_f64() >= s,
            };
            if done {
                break;
            }
            let count = batches.len();
            let actions = &mut batches[steps % count];
            if action_batches == 0 {
                random.sample(&space, actions);
            }
            venv.step(actions)?;
            steps += 1;
        }
        Ok(Measured {
            steps,
            seconds: start.elapsed().as_secs_f64(),
        })
    };
    run(warmup)?;
    run(until)
}

/// The worker threads `--threads` asks for (default: all cores).
pub fn threads(batch: &input::BatchArgs) -> Result<usize, Failure> {
    let threads = batch
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    if threads == 0 {
        return Err(Failure("--threads must be at least 1".into()));
    }
    Ok(threads)
}

/// The JSON report of one measured batch; per-core figures for CPU threads only.
pub fn report(
    venv: &dyn VecEnv,
    id: &str,
    batch: &input::BatchArgs,
    threads: usize,
    measured: &Measured,
) -> Value {
    let num_envs = venv.num_envs();
    let physics_per_step = f64::from(venv.spec().physics_steps_per_step);
    let env_steps = (num_envs * measured.steps) as f64;
    // With image observations every env step renders one frame (next-step autoreset).
    let rendered = batch.obs.obs != ObsMode::State;
    let sps = env_steps / measured.seconds;
    // Per-core figures only mean something for CPU threads.
    let cores = (batch.backend == Backend::Cpu).then_some(threads);
    let per_core = |v: f64| cores.map(|c| v / c as f64);
    json!({
        "env": id,
        "backend": batch.backend.to_string(),
        "num_envs": num_envs,
        "threads": cores,
        "steps": measured.steps,
        "seconds": measured.seconds,
        "env_steps": env_steps,
        "env_steps_per_s": sps,
        "env_steps_per_s_per_core": per_core(sps),
        "physics_steps_per_s": sps * physics_per_step,
        "physics_steps_per_s_per_core": per_core(sps * physics_per_step),
        "obs": batch.obs.obs.to_string(),
        "rendered_frames_per_s": rendered.then_some(sps),
        "includes": "random action sampling and autoreset",
    })
}
