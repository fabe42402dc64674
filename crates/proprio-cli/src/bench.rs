//! `proprio bench`: env-steps/s with random actions, warm-up excluded.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio::render::ObsMode;
use proprio::serde_json::json;
use proprio::{Backend, RandomActions};
use std::time::Instant;

#[derive(Args)]
pub struct BenchArgs {
    /// Environment id, e.g. classic/cartpole-v1.
    #[arg(long)]
    env: String,
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
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &BenchArgs) -> CliResult {
    if args.steps == 0 {
        return Err(Failure("--steps must be at least 1".into()));
    }
    let threads = args
        .batch
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    if threads == 0 {
        return Err(Failure("--threads must be at least 1".into()));
    }
    let mut venv = args
        .batch
        .make_vec(&args.env, args.num_envs, Some(threads))?;
    let space = venv.spec().action_space.clone();
    let physics_per_step = f64::from(venv.spec().physics_steps_per_step);
    let dim = space.flat_dim();
    let mut random = RandomActions::new(args.batch.seed, args.num_envs);
    let mut batches = vec![vec![0.0; args.num_envs * dim]; args.action_batches.max(1)];
    for actions in &mut batches {
        random.sample(&space, actions);
    }
    venv.reset(Some(args.batch.seed), None)?;
    let mut run = |steps: usize| -> Result<f64, Failure> {
        let start = Instant::now();
        for step in 0..steps {
            let count = batches.len();
            let actions = &mut batches[step % count];
            if args.action_batches == 0 {
                random.sample(&space, actions);
            }
            venv.step(actions)?;
        }
        Ok(start.elapsed().as_secs_f64())
    };
    run(args.warmup)?;
    let seconds = run(args.steps)?;
    let env_steps = (args.num_envs * args.steps) as f64;
    // With image observations every env step renders one frame (next-step autoreset).
    let rendered = args.batch.obs.obs != ObsMode::State;
    let sps = env_steps / seconds;
    // Per-core figures only mean something for CPU threads.
    let cores = (args.batch.backend == Backend::Cpu).then_some(threads);
    let per_core = |v: f64| cores.map(|c| v / c as f64);
    let report = json!({
        "env": args.env,
        "backend": args.batch.backend.to_string(),
        "num_envs": args.num_envs,
        "threads": cores,
        "steps": args.steps,
        "warmup_steps": args.warmup,
        "action_batches": args.action_batches,
        "seconds": seconds,
        "env_steps": env_steps,
        "env_steps_per_s": sps,
        "env_steps_per_s_per_core": per_core(sps),
        "physics_steps_per_s": sps * physics_per_step,
        "physics_steps_per_s_per_core": per_core(sps * physics_per_step),
        "obs": args.batch.obs.obs.to_string(),
        "rendered_frames_per_s": rendered.then_some(sps),
        "includes": "random action sampling and autoreset",
    });
    if args.json {
        println!("{report}");
    } else {
        let place = match cores {
            Some(_) => format!("{threads} thread(s)"),
            None => "the GPU".into(),
        };
        println!(
            "{}: {} envs x {} steps on {place} in {seconds:.3} s (warm-up of {} steps excluded)",
            args.env, args.num_envs, args.steps, args.warmup
        );
        let line = |name: &str, v: f64| match per_core(v) {
            Some(c) => println!("  {name:<16} {v:>14.0}   per core {c:>14.0}"),
            None => println!("  {name:<16} {v:>14.0}"),
        };
        line("env steps/s", sps);
        line("physics steps/s", sps * physics_per_step);
    }
    Ok(())
}
