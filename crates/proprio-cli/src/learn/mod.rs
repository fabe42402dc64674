//! The commands that need the learners and reward models (burn): the `learn`
//! feature of `proprio-cli`, on by default.

mod demos;
mod embed;
mod eval;
mod heap;
mod progress;
mod record;
mod reward_model;
mod scripted;
mod train;

use crate::CliResult;
use clap::Subcommand;

#[derive(Subcommand)]
pub enum LearnCommand {
    /// Train a policy (PPO, SAC, TD3, DSAC-T, GRPO or BC); writes a run directory with metrics and checkpoints.
    Train(train::TrainArgs),
    /// Write an env's scripted expert's successful episodes to a file, for `train --algo bc`.
    Demos(demos::DemosArgs),
    /// Evaluate a trained checkpoint (or an env's scripted controller): mean return, success.
    Eval(eval::EvalArgs),
    /// Draw learning curves of one or more runs to a PNG.
    Plot(eval::PlotArgs),
    /// Write an animated GIF of episodes (a checkpoint, the scripted controller or random actions).
    Record(record::RecordArgs),
    /// CLIP embeddings of texts and images from a checkpoint directory (JSON with --json).
    Embed(embed::EmbedArgs),
    /// Measure CLIP image embeddings per second (a random ViT-B/32 without --model).
    BenchEmbed(embed::BenchEmbedArgs),
    /// Train reward models (an in-domain CLIP: `fit-clip`; a progress model:
    /// `fit-progress`, judged by `eval`) and label preference pairs (`label`).
    #[command(subcommand)]
    RewardModel(reward_model::RewardModelCommand),
}

impl LearnCommand {
    /// Whether the command opens the viewer's window (whose process ends through the viewer).
    #[cfg(feature = "viewer")]
    pub fn opens_a_window(&self) -> bool {
        matches!(
            self,
            Self::RewardModel(reward_model::RewardModelCommand::Label(_))
        )
    }
}

/// Runs `command`.
pub fn run(command: &LearnCommand) -> CliResult {
    // Only the commands that run networks churn through tensors; the others
    // keep glibc's defaults, which return freed memory (the soak's RSS).
    if !matches!(command, LearnCommand::Plot(_)) {
        let _ = heap::keep_freed_memory();
    }
    match command {
        LearnCommand::Train(args) => train::run(args),
        LearnCommand::Demos(args) => demos::run(args),
        LearnCommand::Eval(args) => match (&args.checkpoint, &args.env) {
            (Some(checkpoint), None) => eval::eval(args, checkpoint),
            _ => scripted::eval(args),
        },
        LearnCommand::Plot(args) => eval::plot_runs(args),
        LearnCommand::Record(args) => record::run(args),
        LearnCommand::Embed(args) => embed::embed(args),
        LearnCommand::BenchEmbed(args) => embed::bench(args),
        LearnCommand::RewardModel(command) => reward_model::run(command),
    }
}
