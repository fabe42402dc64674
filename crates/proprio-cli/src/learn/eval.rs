//! `proprio eval` and `proprio plot`: judge and draw trained runs.

use crate::{CliResult, Failure};
use clap::Args;
use proprio::serde_json::json;
use proprio_learn::Policy;
use proprio_learn::plot::{Axis, plot, read_curve};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct EvalArgs {
    /// Run directory written by `proprio train` (or its checkpoint/ folder).
    #[arg(long, required_unless_present = "policy", conflicts_with = "policy")]
    pub(crate) checkpoint: Option<PathBuf>,
    /// Evaluate the env's scripted baseline controller instead of a checkpoint.
    #[arg(long, value_parser = ["scripted"], requires = "env")]
    pub(crate) policy: Option<String>,
    /// Environment id (with --policy scripted).
    #[arg(long)]
    pub(crate) env: Option<String>,
    /// Env config as inline JSON or a JSON file (with --policy scripted); with
    /// --checkpoint, keys in place of the run's, e.g. '{"split":"held_out"}'.
    #[arg(long)]
    pub(crate) config: Option<String>,
    /// Episodes to run, in parallel envs.
    #[arg(long, default_value_t = 10)]
    pub(crate) episodes: usize,
    /// Seed of the evaluation episodes.
    #[arg(long, default_value_t = 12_345)]
    pub(crate) seed: u64,
    /// Sample actions instead of taking the distribution's mode.
    #[arg(long)]
    pub(crate) stochastic: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub(crate) json: bool,
    /// Where the physics runs: cpu threads or gpu (wgpu), for envs that have a GPU backend (default: the run's, or cpu).
    #[arg(long)]
    pub(crate) backend: Option<proprio::Backend>,
    /// Where the networks (the policy and any reward model) run: cpu or wgpu (default: the run's).
    #[arg(long)]
    pub(crate) device: Option<proprio_learn::ComputeDevice>,
}

#[derive(Args)]
pub struct PlotArgs {
    /// Run directories; one line each.
    #[arg(required = true)]
    runs: Vec<PathBuf>,
    /// PNG to write.
    #[arg(long)]
    out: PathBuf,
    /// Metric to plot against env steps.
    #[arg(long, default_value = "eval_return")]
    metric: String,
    /// X axis: env steps or wall-clock time (the runs' `time_s`).
    #[arg(long, default_value = "steps")]
    x: Axis,
    /// Title (default: the env of the first run).
    #[arg(long)]
    title: Option<String>,
    /// Overwrite --out if it exists.
    #[arg(long)]
    force: bool,
}

/// Evaluates the run at `checkpoint` (the scripted controller is `scripted::eval`).
pub fn eval(args: &EvalArgs, checkpoint: &Path) -> CliResult {
    let fail = |e: proprio_learn::LearnError| Failure(e.to_string());
    let mut policy = Policy::load_on(checkpoint, args.device).map_err(fail)?;
    if let Some(backend) = args.backend {
        policy.set_backend(backend);
    }
    if args.config.is_some() {
        let keys = crate::input::config(args.config.as_deref())?;
        policy.set_eval_config(keys).map_err(fail)?;
    }
    let evaluation = policy
        .evaluate(args.episodes, args.seed, !args.stochastic)
        .map_err(fail)?;
    let returns = &evaluation.returns;
    let mean = evaluation.mean_return();
    let std =
        (returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / returns.len() as f64).sqrt();
    if args.json {
        let report = json!({
            "env": policy.env().id,
            "episodes": returns.len(),
            "mean_return": mean,
            "std_return": std,
            "returns": returns,
            "success_rate": evaluation.success_rate,
            "mean_model_return": evaluation.mean_model_return(),
            "model_returns": evaluation.model_returns,
            "infos": evaluation.infos,
            "deterministic": !args.stochastic,
        });
        println!("{report}");
    } else {
        let success = evaluation
            .success_rate
            .map(|r| format!(", success {:.1}%", 100.0 * r))
            .unwrap_or_default();
        let model = evaluation
            .mean_model_return()
            .map(|m| format!(", reward model's return {m:.2}"))
            .unwrap_or_default();
        println!(
            "{}: mean return {mean:.2} ± {std:.2} over {} episodes{success}{model} ({})",
            policy.env().id,
            returns.len(),
            if args.stochastic {
                "sampled actions"
            } else {
                "deterministic"
            }
        );
        for (key, rate) in evaluation.per_task_success() {
            println!("  {key}: {:.1}%", 100.0 * rate);
        }
        for (key, mean) in evaluation.turn_measures() {
            println!("  {key}: {mean:.2} per episode");
        }
        if let Some(rate) = evaluation.repeated_answer_rate() {
            println!("  repeated answers: {:.1}% of the wrong ones", 100.0 * rate);
        }
        if !evaluation.solved_by_turn.is_empty() {
            let shares: Vec<String> = evaluation
                .solved_by_turn
                .iter()
                .map(|rate| format!("{:.1}%", 100.0 * rate))
                .collect();
            println!("  solved within 1, 2, … turns: {}", shares.join(", "));
        }
    }
    Ok(())
}

pub fn plot_runs(args: &PlotArgs) -> CliResult {
    if args.out.exists() && !args.force {
        return Err(Failure(format!(
            "{} already exists; pass --force to overwrite it",
            args.out.display()
        )));
    }
    let curves = args
        .runs
        .iter()
        .map(|r| read_curve(r, &args.metric, args.x))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure(e.to_string()))?;
    let title = match &args.title {
        Some(t) => t.clone(),
        None => proprio_learn::run::load_run(&args.runs[0])
            .map(|(info, _, _)| {
                format!(
                    "{} — {}",
                    info.env.id,
                    format!("{:?}", info.algo).to_uppercase()
                )
            })
            .unwrap_or_else(|_| args.metric.clone()),
    };
    plot(&curves, &args.metric, args.x, &title, &args.out).map_err(|e| Failure(e.to_string()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
