//! `proprio reward-model fit-clip`: an in-domain CLIP trained on an env's own
//! frames and captions, saved where `--reward` configs can point; `proprio
//! reward-model label`: a person answers a preference run's pairs (the
//! progress model's commands are in `progress.rs`).

use crate::{CliResult, Failure, input};
use clap::{Args, Subcommand};
use proprio::serde_json::json;
use proprio_reward::fit::{Collect, FitConfig, collect, fit, save};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Subcommand)]
pub enum RewardModelCommand {
    /// Train a small CLIP contrastively on an env's rendered frames and the
    /// captions of their states; saved in the Hugging Face layout.
    FitClip(FitClipArgs),
    /// Fit a progress reward model (ReWiND: frozen CLIP embeddings of the
    /// last frames and the instruction in, progress in [0, 1] out) to
    /// demonstrations recorded with images.
    FitProgress(super::progress::FitProgressArgs),
    /// Judge a progress model before any RL: value-order correlation on
    /// demonstrations, and how they rank against failed and near-miss episodes.
    Eval(super::progress::EvalProgressArgs),
    /// Label preference pairs in a window: a run with `labeller = "human"`
    /// waits for each round's answers in its `label_dir`.
    #[cfg(feature = "viewer")]
    Label(LabelArgs),
}

#[cfg(feature = "viewer")]
#[derive(Args)]
pub struct LabelArgs {
    /// The run's label folder (`label_dir` in its reward config).
    dir: PathBuf,
    /// Stop after answering this many rounds (default: until the window closes).
    #[arg(long)]
    rounds: Option<usize>,
}

#[derive(Args)]
pub struct FitClipArgs {
    /// Environment id (its family must caption its states, e.g. classic/cartpole-v1).
    #[arg(long)]
    env: String,
    /// New directory for the model (never overwritten).
    #[arg(long)]
    out: PathBuf,
    /// Env config as inline JSON or a JSON file.
    #[arg(long)]
    config: Option<String>,
    /// Frames to render and caption (random actions, a tenth held out).
    #[arg(long, default_value_t = 8192)]
    frames: usize,
    /// Adam steps.
    #[arg(long, default_value_t = FitConfig::default().steps)]
    steps: usize,
    /// Side of the model's square input, pixels.
    #[arg(long, default_value_t = FitConfig::default().image_size)]
    image_size: usize,
    /// Side of a vision patch, pixels (the input size must be a multiple of it).
    #[arg(long, default_value_t = FitConfig::default().patch_size)]
    patch_size: usize,
    /// Camera the frames are seen through, or several joined by commas (the
    /// reward config should name the same).
    #[arg(long, default_value = "default")]
    camera: String,
    /// Fraction of the envs driven by the env's scripted controller instead of
    /// random actions (e.g. 0.5 for reach, whose random play seldom touches the goal).
    #[arg(long, default_value_t = 0.0)]
    scripted: f64,
    /// A run directory whose trained policy drives a share of the envs
    /// (`--policy-share`), so the states it drifts into (where it may have
    /// found what a first model scores wrongly) get their true captions.
    #[arg(long, requires = "policy_share")]
    checkpoint: Option<PathBuf>,
    /// Fraction of the envs, after the scripted ones, that the `--checkpoint` policy drives.
    #[arg(long, requires = "checkpoint")]
    policy_share: Option<f64>,
    /// Fraction of the envs that replay the scripted envs' actions in their
    /// own scenes: the motion of a success aimed at another env's goal, so
    /// the model learns what success looks like, not how the arm moves to it.
    #[arg(long, default_value_t = 0.0)]
    decoy: f64,
    /// Seed of the frames, the weights and the minibatches.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(command: &RewardModelCommand) -> CliResult {
    match command {
        RewardModelCommand::FitClip(args) => fit_clip(args),
        RewardModelCommand::FitProgress(args) => super::progress::fit_progress(args),
        RewardModelCommand::Eval(args) => super::progress::eval_progress(args),
        #[cfg(feature = "viewer")]
        RewardModelCommand::Label(args) => label(args),
    }
}

fn fit_clip(args: &FitClipArgs) -> CliResult {
    let fail = |e: proprio_reward::RewardError| Failure(e.to_string());
    if args.out.exists() {
        return Err(Failure(format!(
            "{} already exists; choose a new directory",
            args.out.display()
        )));
    }
    let cfg = FitConfig {
        steps: args.steps,
        image_size: args.image_size,
        patch_size: args.patch_size,
        seed: args.seed,
        ..FitConfig::default()
    };
    cfg.clip_config().validate().map_err(Failure)?;
    let env_config = input::config(args.config.as_deref())?;
    let mut policy = match &args.checkpoint {
        Some(run) => {
            let policy = proprio_learn::Policy::load(run).map_err(|e| Failure(e.to_string()))?;
            if policy.env().id != args.env {
                return Err(Failure(format!(
                    "{} was trained on {}, not {}",
                    run.display(),
                    policy.env().id,
                    args.env
                )));
            }
            Some(policy)
        }
        None => None,
    };
    let start = Instant::now();
    let data = collect(
        &Collect {
            env: &args.env,
            config: &env_config,
            camera: &args.camera,
            side: u32::try_from(cfg.image_size)
                .map_err(|_| Failure("--image-size is too large".into()))?,
            frames: args.frames,
            num_envs: 64,
            scripted: args.scripted,
            driven: args.policy_share.unwrap_or(0.0),
            decoy: args.decoy,
            seed: args.seed,
        },
        policy.as_mut().map(|p| p as &mut dyn proprio::Agent),
    )
    .map_err(fail)?;
    let collected = start.elapsed().as_secs_f64();
    let bar = super::progress::fit_bar(cfg.steps)?;
    let (model, report) = fit(&data, &cfg, |_, loss| {
        bar.inc(1);
        bar.set_message(format!("{loss:.3}"));
    })
    .map_err(fail)?;
    bar.finish_and_clear();
    let summary = json!({
        "env": args.env,
        "camera": args.camera,
        "scripted": args.scripted,
        "policy": args.checkpoint,
        "policy_share": args.policy_share,
        "decoy": args.decoy,
        "frames": data.len(),
        "captions": data.captions,
        "steps": cfg.steps,
        "final_loss": report.final_loss,
        "holdout_frames": report.holdout_frames,
        "holdout_accuracy": report.holdout_accuracy,
        "majority_accuracy": report.majority_accuracy,
        "collect_seconds": collected,
        "seconds": start.elapsed().as_secs_f64(),
    });
    save(&model, &cfg, &args.out, summary.clone()).map_err(fail)?;
    println!("{summary}");
    Ok(())
}

/// A label folder as the viewer sees it: the oldest unanswered round.
#[cfg(feature = "viewer")]
struct Folder {
    dir: PathBuf,
    open: Option<proprio_reward::preference::human::OpenRound>,
}

#[cfg(feature = "viewer")]
impl proprio_viewer::LabelDesk for Folder {
    fn open_round(&mut self) -> Result<Option<proprio_viewer::OpenPairs>, String> {
        use proprio_reward::preference::human::OpenRound;
        self.open = OpenRound::oldest(&self.dir).map_err(|e| e.to_string())?;
        if let Some(round) = &self.open {
            eprintln!(
                "{}: {} pairs to label",
                round.dir.display(),
                round.pairs.len()
            );
        }
        Ok(self.open.as_ref().map(|r| proprio_viewer::OpenPairs {
            pairs: r.pairs.len(),
            goal: r.goal.clone(),
        }))
    }

    fn pair(&mut self, k: usize) -> Result<Vec<image::RgbImage>, String> {
        let round = self.open.as_ref().ok_or("no round is open")?;
        round.frames(k).map_err(|e| e.to_string())
    }

    fn answer(&mut self, labels: &[f32]) -> Result<(), String> {
        let round = self.open.take().ok_or("no round is open")?;
        round.answer(labels).map_err(|e| e.to_string())
    }
}

#[cfg(feature = "viewer")]
fn label(args: &LabelArgs) -> CliResult {
    if !args.dir.is_dir() {
        return Err(Failure(format!(
            "{} is not a folder; give the label_dir of a run with labeller = \"human\"",
            args.dir.display()
        )));
    }
    let desk = Folder {
        dir: args.dir.clone(),
        open: None,
    };
    let report =
        proprio_viewer::label(Box::new(desk), args.rounds).map_err(|e| Failure(e.to_string()))?;
    println!(
        "{}",
        json!({"rounds": report.rounds, "labels": report.labels})
    );
    Ok(())
}
