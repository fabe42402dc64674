//! A third party's batched family, registered through the public API and run
//! on CPU threads or, with `--backend gpu`, on any GPU (lavapipe included):
//!
//! ```text
//! cargo run --example puck -- --backend gpu --envs 4096 --steps 200
//! ```
//!
//! The family itself is `family.rs` (model, config, scripted agent) and its
//! WGSL twin `shader.wgsl`; `tests/puck.rs` holds the two together.

mod family;

use proprio_core::{ActMode, Backend, Registry, VecOptions};
use std::time::Instant;

fn main() {
    if let Err(message) = run() {
        eprintln!("error: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let mut backend = Backend::Cpu;
    let (mut envs, mut steps) = (256usize, 200usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--backend" => backend = value.parse()?,
            "--envs" => envs = value.parse().map_err(|e| format!("--envs: {e}"))?,
            "--steps" => steps = value.parse().map_err(|e| format!("--steps: {e}"))?,
            other => return Err(format!("unknown flag {other} (--backend, --envs, --steps)")),
        }
    }
    let registry = Registry::with(family::register);
    let id = family::SLIDE.id;
    let options = VecOptions {
        backend,
        ..VecOptions::default()
    };
    let null = proprio_core::serde_json::Value::Null;
    let mut venv = registry
        .make_vec(id, envs, &null, options)
        .map_err(|e| e.to_string())?;
    let mut agent = registry
        .scripted(id, venv.spec())
        .map_err(|e| e.to_string())?;
    let mut actions = vec![0.0; envs];
    venv.reset(Some(0), None).map_err(|e| e.to_string())?;
    let (mut ended, mut successes) = (0usize, 0usize);
    let start = Instant::now();
    for _ in 0..steps {
        agent
            .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
            .map_err(|e| e.to_string())?;
        venv.step(&actions).map_err(|e| e.to_string())?;
        let b = venv.batch();
        for i in 0..envs {
            if b.terminated[i] || b.truncated[i] {
                ended += 1;
                successes += usize::from(b.terminated[i]);
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{id} on {backend}: {envs} envs x {steps} steps in {seconds:.2} s ({:.0} steps/s); {ended} episodes ended, {successes} at the goal",
        (envs * steps) as f64 / seconds
    );
    Ok(())
}
