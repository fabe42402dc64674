//! `proprio`: list, inspect, roll out and benchmark every registered environment.

mod alloc;
mod bench;
mod catalog;
mod input;
#[cfg(feature = "learn")]
mod learn;
mod rollout;
mod soak;
mod suite;
mod timed;
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
    #[cfg(feature = "learn")]
    #[command(flatten)]
    Learn(learn::LearnCommand),
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
    #[cfg(feature = "viewer")]
    let viewer = match &cli.command {
        Command::View(_) => true,
        Command::Learn(command) => command.opens_a_window(),
        _ => false,
    };
    let result = match cli.command {
        Command::List(args) => catalog::list(&args),
        Command::Info(args) => catalog::info(&args),
        Command::Rollout(args) => rollout::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Soak(args) => soak::run(&args),
        #[cfg(feature = "learn")]
        Command::Learn(command) => learn::run(&command),
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
