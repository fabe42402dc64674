//! A slim benchmark of the kernel physics on a GPU, for machines that only
//! get a copied binary: env steps/s of `manipulation/<task>-v0` with random
//! actions at each batch size, one JSON object per line. Built stripped in
//! release by `tools/gpu_manipulation_bench.sh` (no bevy, no burn).
//!
//!   gpu_bench [TASK] [STEPS] [N ...]      e.g. gpu_bench pick-cube 100 4096 16384 65536

use proprio_core::serde_json::json;
use proprio_core::{AutoresetMode, Backend, Registry, VecOptions};
use std::time::Instant;

fn main() {
    if let Err(e) = run() {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = args.first().map_or("pick-cube", String::as_str);
    let steps: usize = args
        .get(1)
        .map_or(Ok(100), |s| s.parse())
        .map_err(|e| format!("STEPS: {e}"))?;
    let sizes: Vec<usize> = if args.len() > 2 {
        args[2..]
            .iter()
            .map(|s| s.parse().map_err(|e| format!("N '{s}': {e}")))
            .collect::<Result<_, _>>()?
    } else {
        vec![4096, 16_384, 65_536]
    };
    let id = format!("manipulation/{task}-v0");
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    let config = json!({"physics": "kernel"});
    for n in sizes {
        let options = VecOptions {
            autoreset: AutoresetMode::NextStep,
            threads: None,
            backend: Backend::Gpu,
        };
        let started = Instant::now();
        let mut venv = registry
            .make_vec(&id, n, &config, options)
            .map_err(|e| e.to_string())?;
        let built = started.elapsed().as_secs_f64();
        let space = venv.spec().action_space.clone();
        let dim = space.flat_dim();
        let batches: Vec<Vec<f32>> = (0..8)
            .map(|b| {
                let mut a = vec![0.0; n * dim];
                for (i, row) in a.chunks_exact_mut(dim).enumerate() {
                    space.sample(&mut proprio_core::episode_rng(b, i as u64, 0), row);
                }
                a
            })
            .collect();
        venv.reset(Some(0), None).map_err(|e| e.to_string())?;
        for a in batches.iter().take(5) {
            venv.step(a).map_err(|e| e.to_string())?;
        }
        let t = Instant::now();
        for s in 0..steps {
            venv.step(&batches[s % batches.len()])
                .map_err(|e| e.to_string())?;
        }
        let seconds = t.elapsed().as_secs_f64();
        let rate = (n * steps) as f64 / seconds;
        let physics = rate * venv.spec().physics_steps_per_step as f64;
        println!(
            "{}",
            json!({"env": id, "num_envs": n, "steps": steps, "seconds": seconds,
                   "env_steps_per_s": rate, "physics_steps_per_s": physics,
                   "simulated_seconds_per_s": physics / 60.0, "setup_s": built})
        );
    }
    Ok(())
}
