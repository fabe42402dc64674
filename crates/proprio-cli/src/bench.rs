//! `proprio bench`: env-steps/s with random actions, warm-up excluded.

use crate::{CliResult, Failure, input, suite};
use clap::Args;
use proprio::render::ObsMode;
use proprio::serde_json::{Value, json};
use proprio::{Backend, RandomActions, VecEnv};
use std::time::Instant;

#[derive(Args)]
pub struct BenchArgs {
    /// Environment id, e.g. classic/cartpole-v1.
    #[arg(long, required_unless_present = "suite")]
    env: Option<String>,
    /// One env of every family and the Panda on both physics engines, side by
    /// side, each for --seconds (--env, --num-envs and --steps do not apply).
    #[arg(long, conflicts_with_all = ["env", "num_envs", "steps", "config"])]
    suite: bool,
    /// Timed seconds per env of --suite (after its warm-up).
    #[arg(long, default_value_t = 2.0, requires = "suite")]
    seconds: f64,
    /// Envs stepped as one batch.
    #[arg(long, default_value_t = 4096)]
    num_envs: usize,
    /// Timed batch steps (after the warm-up).
    #[arg(long, default_value_t = 1000)]
    steps: usize,
    /// Untimed batch steps before timing.
    #[arg(long, default_value_t = 50)]
    warmup: usize,
    /// Sample this many action batches before timing and step through them in
    /// turn (0: sample every step, timed). Peers' benchmarks and
    /// tools/bench_python.py pre-sample their actions.
    #[arg(long, default_value_t = 0)]
    action_batches: usize,
    #[command(flatten)]
    batch: input::BatchArgs,
    /// Print one JSON object (with --suite, one per line).
    #[arg(long)]
    json: bool,
}

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

pub fn run(args: &BenchArgs) -> CliResult {
    let Some(env) = args.env.as_deref().filter(|_| !args.suite) else {
        return suite::run(&args.batch, args.seconds, args.action_batches, args.json);
    };
    if args.steps == 0 {
        return Err(Failure("--steps must be at least 1".into()));
    }
    let threads = threads(&args.batch)?;
    let mut venv = args.batch.make_vec(env, args.num_envs, Some(threads))?;
    let measured = measure(
        venv.as_mut(),
        args.batch.seed,
        args.action_batches,
        Until::Steps(args.warmup),
        Until::Steps(args.steps),
    )?;
    let mut report = report(venv.as_ref(), env, &args.batch, threads, &measured);
    report["warmup_steps"] = json!(args.warmup);
    report["action_batches"] = json!(args.action_batches);
    if args.json {
        println!("{report}");
        return Ok(());
    }
    let place = match report["threads"].as_u64() {
        Some(_) => format!("{threads} thread(s)"),
        None => "the GPU".into(),
    };
    println!(
        "{env}: {} envs x {} steps on {place} in {:.3} s (warm-up of {} steps excluded)",
        args.num_envs, args.steps, measured.seconds, args.warmup
    );
    for (name, key) in [
        ("env steps/s", "env_steps_per_s"),
        ("physics steps/s", "physics_steps_per_s"),
    ] {
        let v = report[key].as_f64().unwrap_or(f64::NAN);
        match report[format!("{key}_per_core")].as_f64() {
            Some(c) => println!("  {name:<16} {v:>14.0}   per core {c:>14.0}"),
            None => println!("  {name:<16} {v:>14.0}"),
        }
    }
    Ok(())
}
