//! `proprio bench --suite`: one env of every family, and the Panda on our
//! kernel and on its rapier3d reference, measured side by side in one sitting.

use crate::timed::{Until, measure, report, threads};
use crate::{CliResult, Failure, input};
use proprio::serde_json::{Value, json};

/// One benchmarked batch: env id, the Panda's physics engine, batch size.
struct Entry {
    id: &'static str,
    physics: Option<&'static str>,
    num_envs: usize,
}

/// The suite: batch sizes where each family's CPU throughput has levelled off.
const SUITE: [Entry; 6] = [
    Entry {
        id: "classic/cartpole-v1",
        physics: None,
        num_envs: 4096,
    },
    Entry {
        id: "drones/hover-v0",
        physics: None,
        num_envs: 4096,
    },
    Entry {
        id: "driving/racing-v0",
        physics: None,
        num_envs: 1024,
    },
    Entry {
        id: "language/jigsaw-v0",
        physics: None,
        num_envs: 1024,
    },
    Entry {
        id: "manipulation/pick-cube-v0",
        physics: Some("kernel"),
        num_envs: 256,
    },
    Entry {
        id: "manipulation/pick-cube-v0",
        physics: Some("rapier"),
        num_envs: 256,
    },
];

/// Untimed seconds before each entry's timing (first steps fill caches, spawn threads).
const WARMUP_SECONDS: f64 = 0.25;

/// Benchmarks every entry of [`SUITE`] for `seconds` each and prints a table
/// (or one JSON object per line), then the kernel-to-rapier ratio.
pub fn run(batch: &input::BatchArgs, seconds: f64, action_batches: usize, json: bool) -> CliResult {
    if !(seconds.is_finite() && seconds > 0.0) {
        return Err(Failure("--seconds must be a positive number".into()));
    }
    let threads = threads(batch)?;
    if !json {
        println!(
            "proprio bench --suite: random actions, contacts on, autoreset included; \
             {threads} thread(s), backend {}, {seconds} s each",
            batch.backend
        );
        println!(
            "{:<27} {:<7} {:>6} {:>15} {:>16} {:>17}",
            "env", "physics", "envs", "env steps/s", "physics steps/s", "env steps/s/core"
        );
    }
    let mut panda = Vec::new();
    for entry in &SUITE {
        let config = entry
            .physics
            .map_or(Value::Null, |p| json!({ "physics": p }));
        let row = match bench_one(batch, entry, &config, threads, seconds, action_batches) {
            Ok(row) => row,
            // An env without the asked-for backend (rapier has no GPU one) is a row, not a failure.
            Err(Failure(why)) if batch.backend != proprio::Backend::Cpu => {
                json!({"env": entry.id, "physics": entry.physics, "error": why})
            }
            Err(e) => return Err(e),
        };
        if entry.physics.is_some() {
            panda.push(row["env_steps_per_s"].as_f64());
        }
        if json {
            println!("{row}");
        } else {
            print_row(entry, &row);
        }
    }
    if let [Some(kernel), Some(rapier)] = panda[..] {
        let ratio = kernel / rapier;
        if json {
            println!("{}", json!({"kernel_over_rapier": ratio}));
        } else {
            println!(
                "The Panda on our batched kernel: {ratio:.1}x the env steps/s of rapier3d here \
                 (same task, same random actions)."
            );
        }
    }
    Ok(())
}

fn bench_one(
    batch: &input::BatchArgs,
    entry: &Entry,
    config: &Value,
    threads: usize,
    seconds: f64,
    action_batches: usize,
) -> Result<Value, Failure> {
    let options = proprio::VecOptions {
        threads: Some(threads),
        backend: batch.backend,
        ..proprio::VecOptions::default()
    };
    let mut venv = proprio::make_vec_observed(
        entry.id,
        entry.num_envs,
        config,
        options,
        &batch.obs.options(),
    )?;
    let measured = measure(
        venv.as_mut(),
        batch.seed,
        action_batches,
        Until::Seconds(WARMUP_SECONDS),
        Until::Seconds(seconds),
    )?;
    let mut row = report(venv.as_ref(), entry.id, batch, threads, &measured);
    row["physics"] = json!(entry.physics);
    Ok(row)
}

fn print_row(entry: &Entry, row: &Value) {
    let physics = entry.physics.unwrap_or("");
    if let Some(why) = row["error"].as_str() {
        println!("{:<27} {physics:<7} {why}", entry.id);
        return;
    }
    let number = |key: &str| row[key].as_f64().map_or("-".into(), thousands);
    println!(
        "{:<27} {physics:<7} {:>6} {:>15} {:>16} {:>17}",
        entry.id,
        entry.num_envs,
        number("env_steps_per_s"),
        number("physics_steps_per_s"),
        number("env_steps_per_s_per_core"),
    );
}

/// `1234567.8` as `1,234,568`.
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.max(0.0));
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
