//! `proprio soak`: step a batch with random actions and autoreset for a long
//! time, checking every observation and reward is finite and sampling the
//! resident memory four times a second; fails if a NaN appears or the memory grows.

use crate::{CliResult, Failure, input};
use clap::Args;
use proprio::RandomActions;
use proprio::serde_json::json;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct SoakArgs {
    /// Environment id, e.g. manipulation/pick-cube-v0.
    #[arg(long)]
    env: String,
    /// Envs stepped as one batch.
    #[arg(long, default_value_t = 256)]
    num_envs: usize,
    /// Stop after this many env steps (summed over envs)...
    #[arg(long, default_value_t = 100_000_000)]
    max_env_steps: u64,
    /// ...or after this many seconds, whichever comes first.
    #[arg(long, default_value_t = 3600.0)]
    max_seconds: f64,
    /// Seconds stepped before the memory baseline is taken (at most a tenth of --max-env-steps).
    #[arg(long, default_value_t = 10.0)]
    warmup_seconds: f64,
    /// Largest accepted growth of the resident memory over the baseline, in percent.
    #[arg(long, default_value_t = 1.0)]
    max_growth_percent: f64,
    #[command(flatten)]
    batch: input::BatchArgs,
}

/// Resident set size of this process in bytes (Linux, 4 KiB pages; `None` elsewhere).
fn rss_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

pub fn run(args: &SoakArgs) -> CliResult {
    if !(args.max_seconds > args.warmup_seconds && args.warmup_seconds >= 0.0) {
        return Err(Failure(
            "--max-seconds must be larger than --warmup-seconds (which is at least 0)".into(),
        ));
    }
    let mut venv = args.batch.make_vec(&args.env, args.num_envs, None)?;
    let space = venv.spec().action_space.clone();
    let mut actions = vec![0.0; args.num_envs * space.flat_dim()];
    let mut random = RandomActions::new(args.batch.seed, args.num_envs);
    venv.reset(Some(args.batch.seed), None)?;
    let start = Instant::now();
    let (mut env_steps, mut episodes) = (0u64, 0u64);
    let (mut baseline, mut last, mut peak) = (None, 0u64, 0u64);
    let (mut heap_baseline, mut heap_last, mut heap_peak) = (0usize, 0usize, 0usize);
    let mut next_sample = Duration::ZERO;
    while env_steps < args.max_env_steps && start.elapsed().as_secs_f64() < args.max_seconds {
        random.sample(&space, &mut actions);
        venv.step(&actions)?;
        env_steps += args.num_envs as u64;
        let batch = venv.batch();
        if let Some(k) = batch.obs.iter().position(|v| !v.is_finite()) {
            return Err(Failure(format!(
                "{}: env {} observed {} after {env_steps} env steps",
                args.env,
                k / batch.obs_dim,
                batch.obs[k]
            )));
        }
        if let Some(i) = batch.reward.iter().position(|r| !r.is_finite()) {
            return Err(Failure(format!(
                "{}: env {i} got reward {} after {env_steps} env steps",
                args.env, batch.reward[i]
            )));
        }
        episodes += (0..args.num_envs).filter(|&i| batch.done(i)).count() as u64;
        if start.elapsed() >= next_sample {
            next_sample += Duration::from_millis(250);
            last = rss_bytes().unwrap_or(0);
            heap_last = crate::alloc::live_bytes();
            let warm = start.elapsed().as_secs_f64() >= args.warmup_seconds
                || env_steps >= args.max_env_steps / 10;
            if baseline.is_none() && warm {
                baseline = Some(last);
                heap_baseline = heap_last;
            }
            if baseline.is_some() {
                peak = peak.max(last);
                heap_peak = heap_peak.max(heap_last);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let baseline = baseline.unwrap_or(last);
    let peak = peak.max(last);
    let growth = 100.0 * (peak as f64 - baseline as f64) / baseline.max(1) as f64;
    let report = json!({
        "env": args.env,
        "backend": args.batch.backend.to_string(),
        "num_envs": args.num_envs,
        "env_steps": env_steps,
        "episodes": episodes,
        "seconds": seconds,
        "env_steps_per_s": env_steps as f64 / seconds,
        "rss_baseline_bytes": baseline,
        "rss_peak_bytes": peak,
        "rss_final_bytes": last,
        "rss_growth_percent": growth,
        "heap_baseline_bytes": heap_baseline,
        "heap_peak_bytes": heap_peak,
        "heap_final_bytes": heap_last,
    });
    println!("{report}");
    if growth > args.max_growth_percent {
        return Err(Failure(format!(
            "{}: resident memory grew {growth:.2}% (from {baseline} to {peak} bytes), over the {}% allowed",
            args.env, args.max_growth_percent
        )));
    }
    Ok(())
}
