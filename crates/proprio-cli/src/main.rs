//! `proprio`: list, inspect, roll out and benchmark every registered environment.

mod alloc;
mod bench;
mod catalog;
#[cfg(feature = "learn")]
mod demos;
#[cfg(feature = "learn")]
mod embed;
#[cfg(feature = "learn")]
mod eval;
#[cfg(feature = "learn")]
mod heap;
mod input;
#[cfg(feature = "learn")]
mod record;
#[cfg(feature = "learn")]
mod reward_model;
mod rollout;
#[cfg(feature = "learn")]
mod scripted;
mod soak;
mod suite;
#[cfg(feature = "learn")]
mod train;
#[cfg(feature = "viewer")]
mod view;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A failed command: printed as one line, exit status 1.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<proprio::Error> for Failure {
    fn from(e: proprio::Error) -> Self {
        Self(e.to_string())
    }
}

/// Outcome of a subcommand.
pub type CliResult = Result<(), Failure>;

#[derive(Parser)]
#[command(
    name = "proprio",
    version,
    about = "Batched embodied-RL environments: list, inspect, roll out, benchmark, train, view."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the registered environments with their spaces.
    List(catalog::ListArgs),
    /// Show an environment's spaces, reward, termination and config keys.
    Info(catalog::InfoArgs),
    /// Step environments with actions from a file or at random; print JSON lines.
    Rollout(rollout::RolloutArgs),
    /// Measure env-steps/s with random actions (warm-up excluded).
    Bench(bench::BenchArgs),
    /// Step a batch with random actions for a long time: no NaN, no memory growth.
    Soak(soak::SoakArgs),
    /// Train a policy (PPO, SAC, TD3, DSAC-T, GRPO or BC); writes a run directory with metrics and checkpoints.
    #[cfg(feature = "learn")]
    Train(train::TrainArgs),
    /// Write an env's scripted expert's successful episodes to a file, for `train --algo bc`.
    #[cfg(feature = "learn")]
    Demos(demos::DemosArgs),
    /// Evaluate a trained checkpoint (or an env's scripted controller): mean return, success.
    #[cfg(feature = "learn")]
    Eval(eval::EvalArgs),
    /// Draw learning curves of one or more runs to a PNG.
    #[cfg(feature = "learn")]
    Plot(eval::PlotArgs),
    /// Write an animated GIF of episodes (a checkpoint, the scripted controller or random actions).
    #[cfg(feature = "learn")]
    Record(record::RecordArgs),
    /// CLIP embeddings of texts and images from a checkpoint directory (JSON with --json).
    #[cfg(feature = "learn")]
    Embed(embed::EmbedArgs),
    /// Measure CLIP image embeddings per second (a random ViT-B/32 without --model).
    #[cfg(feature = "learn")]
    BenchEmbed(embed::BenchEmbedArgs),
    /// Train reward models (an in-domain CLIP: `fit-clip`) and label preference pairs (`label`).
    #[cfg(feature = "learn")]
    #[command(subcommand)]
    RewardModel(reward_model::RewardModelCommand),
    /// Open an env in the interactive viewer (or render it headless with --screenshot).
    #[cfg(feature = "viewer")]
    View(view::ViewArgs),
    /// A command this build left out (see `missing`).
    #[cfg(not(feature = "viewer"))]
    #[command(external_subcommand)]
    Missing(Vec<String>),
}

/// The commands of the full build and the feature each needs.
#[cfg(not(feature = "viewer"))]
const LEFT_OUT: [(&str, &str); 9] = [
    ("train", "learn"),
    ("demos", "learn"),
    ("eval", "learn"),
    ("plot", "learn"),
    ("record", "learn"),
    ("embed", "learn"),
    ("bench-embed", "learn"),
    ("reward-model", "learn"),
    ("view", "viewer"),
];

/// Why a command that is not in this build cannot run, and how to get it.
#[cfg(not(feature = "viewer"))]
fn missing(words: &[String]) -> Failure {
    let name = words.first().map_or("", String::as_str);
    match LEFT_OUT.iter().find(|(command, _)| *command == name) {
        Some((_, feature)) => Failure(format!(
            "`proprio {name}` is not in this build (it needs the `{feature}` feature, \
             which --no-default-features leaves out): run it as `cargo run --locked -- {name} ...`"
        )),
        None => Failure(format!(
            "unrecognized subcommand '{name}'; `proprio --help` lists the commands"
        )),
    }
}

/// The system allocator, counting the bytes in use for `proprio soak`.
#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Only the commands that run networks churn through tensors; the others
    // keep glibc's defaults, which return freed memory (the soak's RSS).
    #[cfg(feature = "learn")]
    if matches!(
        cli.command,
        Command::Train(_)
            | Command::Demos(_)
            | Command::Eval(_)
            | Command::Record(_)
            | Command::Embed(_)
            | Command::BenchEmbed(_)
            | Command::RewardModel(_)
    ) {
        heap::keep_freed_memory();
    }
    #[cfg(feature = "viewer")]
    let viewer = matches!(
        cli.command,
        Command::View(_) | Command::RewardModel(reward_model::RewardModelCommand::Label(_))
    );
    let result = match cli.command {
        Command::List(args) => catalog::list(&args),
        Command::Info(args) => catalog::info(&args),
        Command::Rollout(args) => rollout::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Soak(args) => soak::run(&args),
        #[cfg(feature = "learn")]
        Command::Train(args) => train::run(&args),
        #[cfg(feature = "learn")]
        Command::Demos(args) => demos::run(&args),
        #[cfg(feature = "learn")]
        Command::Eval(args) => match (&args.checkpoint, &args.env) {
            (Some(checkpoint), None) => eval::eval(&args, checkpoint),
            _ => scripted::eval(&args),
        },
        #[cfg(feature = "learn")]
        Command::Plot(args) => eval::plot_runs(&args),
        #[cfg(feature = "learn")]
        Command::Record(args) => record::run(&args),
        #[cfg(feature = "learn")]
        Command::Embed(args) => embed::embed(&args),
        #[cfg(feature = "learn")]
        Command::BenchEmbed(args) => embed::bench(&args),
        #[cfg(feature = "learn")]
        Command::RewardModel(command) => reward_model::run(&command),
        #[cfg(feature = "viewer")]
        Command::View(args) => view::run(&args),
        #[cfg(not(feature = "viewer"))]
        Command::Missing(words) => Err(missing(&words)),
    };
    let code = match result {
        Ok(()) => 0,
        Err(Failure(message)) => {
            eprintln!("error: {}", message.replace('\n', " "));
            1
        }
    };
    #[cfg(feature = "viewer")]
    if viewer {
        view::exit_now(code);
    }
    ExitCode::from(code)
}
