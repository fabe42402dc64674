//! `proprio bench`: env-steps/s with random actions, warm-up excluded.

use crate::timed::{Until, measure, report, threads};
use crate::{CliResult, Failure, input, suite};
use clap::Args;
use proprio::serde_json::json;

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
