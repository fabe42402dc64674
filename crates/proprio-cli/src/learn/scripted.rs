//! `proprio eval --policy scripted`: an env's hand-written baseline controller.

use super::eval::EvalArgs;
use crate::{CliResult, Failure, input};
use proprio::serde_json::json;
use proprio::{ActMode, AutoresetMode, VecOptions};

/// Runs `--episodes` episodes (one per env, in parallel) and reports return and success.
pub fn eval(args: &EvalArgs) -> CliResult {
    let id = args
        .env
        .as_deref()
        .ok_or_else(|| Failure("--policy scripted needs --env ENV".into()))?;
    if args.episodes == 0 {
        return Err(Failure("--episodes must be at least 1".into()));
    }
    let config = input::config(args.config.as_deref())?;
    let options = VecOptions {
        autoreset: AutoresetMode::Disabled,
        backend: args.backend.unwrap_or_default(),
        ..VecOptions::default()
    };
    let n = args.episodes;
    let mut venv = proprio::make_vec(id, n, &config, options)?;
    let mut scripted = proprio::registry().scripted(id, venv.spec())?;
    let dim = venv.spec().action_space.flat_dim();
    let mut actions = vec![0.0; n * dim];
    let mut returns = vec![0.0f64; n];
    let mut lengths = vec![0u64; n];
    let mut success = vec![None; n];
    venv.reset(Some(args.seed), None)?;
    while success.iter().any(Option::is_none) {
        scripted.act(&venv.batch().obs, &mut actions, ActMode::Deterministic)?;
        venv.step(&actions)?;
        let b = venv.batch();
        let finished: Vec<bool> = (0..n).map(|i| b.done(i)).collect();
        for i in 0..n {
            if success[i].is_some() {
                continue;
            }
            returns[i] += f64::from(b.reward[i]);
            lengths[i] += 1;
            if finished[i] {
                success[i] = Some(b.infos[i].get("success").unwrap_or(0.0) > 0.0);
            }
        }
        // Finished envs start an unrecorded episode so that the batch keeps stepping.
        if finished.contains(&true) {
            venv.reset_envs(&finished, None)?;
        }
    }
    let rate = success.iter().filter(|s| **s == Some(true)).count() as f64 / n as f64;
    let mean = returns.iter().sum::<f64>() / n as f64;
    let mean_len = lengths.iter().sum::<u64>() as f64 / n as f64;
    if args.json {
        let report = json!({
            "env": id,
            "policy": "scripted",
            "episodes": n,
            "success_rate": rate,
            "mean_return": mean,
            "mean_length": mean_len,
            "returns": returns,
        });
        println!("{report}");
    } else {
        println!(
            "{id}: scripted controller, success {:.1}% over {n} episodes, mean return {mean:.2}, mean length {mean_len:.0} steps",
            100.0 * rate
        );
    }
    Ok(())
}
