//! A training run on disk: `run.json`, `metrics.jsonl`, `checkpoint/`, and the progress bar.

pub mod integrity;

use crate::base::device::ComputeDevice;
use crate::base::error::{LearnError, Result};
use crate::env::{EnvSource, NormalizerStats, TrainEnv};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use proprio::serde_json::{self, Map, Value};
use proprio::{EnvRng, State};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Declares [`Algo`] from one list — variant, command-line name, what it is —
/// so adding a learner adds one line here.
macro_rules! algos {
    ($( $variant:ident = $name:literal: $doc:literal, )*) => {
        /// Which learner made a run.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum Algo {
            $( #[doc = $doc] $variant, )*
        }

        impl Algo {
            /// Every learner, in the order `--help` lists them.
            pub const ALL: &[Algo] = &[$(Self::$variant),*];

            /// Their names, as the command line takes them.
            pub const NAMES: &[&str] = &[$($name),*];
        }
    };
}

algos! {
    Ppo = "ppo": "Proximal policy optimisation.",
    Sac = "sac": "Soft actor-critic.",
    Td3 = "td3": "Twin delayed DDPG.",
    Dsac = "dsac": "Distributional soft actor-critic with three refinements (DSAC-T).",
    Grpo = "grpo": "Group-relative policy optimisation.",
    Bc = "bc": "Behaviour cloning of demonstrations.",
    Archer = "archer": "ArCHer's hierarchical actor-critic for multi-turn answers.",
}

impl Algo {
    /// The name used on the command line, in run directories and in `tuned.json`.
    pub fn name(self) -> &'static str {
        Self::NAMES[Self::ALL.iter().position(|&a| a == self).unwrap_or(0)]
    }

    /// The learner called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::NAMES
            .iter()
            .position(|&n| n == name)
            .map(|k| Self::ALL[k])
    }
}

/// What a run is: saved once as `run.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// The learner.
    pub algo: Algo,
    /// The env trained on.
    pub env: EnvSource,
    /// Seed of weights, env streams, action sampling and minibatch order.
    pub seed: u64,
    /// Where the networks run (`backend` in runs written before 2026-11-28).
    #[serde(alias = "backend")]
    pub device: ComputeDevice,
    /// Env worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// The learner's hyper-parameters.
    pub config: Value,
    /// Record a video of the policy into `videos/` at the first checkpoint
    /// after every this many env steps (`None`: no videos).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_every: Option<u64>,
    /// The run whose policy weights this one started from (`--init`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<std::path::PathBuf>,
    /// How the run was recorded: [`RUN_FORMAT`] for runs that keep their whole
    /// env config (every default spelled out); 0 (absent) for older ones,
    /// whose configs the env's family completes with the defaults of their day.
    #[serde(default)]
    pub format: u32,
}

/// The format new runs are written in (see [`RunInfo::format`]).
pub const RUN_FORMAT: u32 = 1;

/// Where training stands, saved with every checkpoint (`checkpoint/state.json`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Progress {
    /// Env steps taken, summed over envs.
    pub global_step: u64,
    /// Learner iterations (PPO rollouts, SAC env steps) completed.
    pub iteration: u64,
    /// Wall-clock seconds spent training so far.
    pub elapsed_s: f64,
    /// The learner's random generator (actions, minibatch order).
    pub rng: EnvRng,
    /// Normaliser statistics, if the run normalises.
    pub stats: Option<NormalizerStats>,
    /// Snapshot of every training env, so a resumed run continues their episodes.
    pub envs: Vec<State>,
}

impl Progress {
    /// A checkpoint's progress record of a learner stepping `env`: its
    /// counters and generator, the normaliser statistics and every env's
    /// snapshot (`elapsed_s` is the loop's to fill).
    pub fn of(env: &TrainEnv, global_step: u64, iteration: u64, rng: &EnvRng) -> Result<Self> {
        Ok(Self {
            global_step,
            iteration,
            elapsed_s: 0.0,
            rng: rng.clone(),
            stats: env.stats(),
            envs: env.snapshots()?,
        })
    }
}

/// An open run directory.
pub struct Run {
    /// The run directory.
    pub dir: PathBuf,
    /// What the run is.
    pub info: RunInfo,
    metrics: BufWriter<File>,
    progress: ProgressBar,
    started: Instant,
    elapsed_before: f64,
}

const INFO: &str = "run.json";
const METRICS: &str = "metrics.jsonl";
const CHECKPOINT: &str = "checkpoint";
const PARTIAL: &str = "checkpoint.partial";
const OLD: &str = "checkpoint.old";
const STATE: &str = "state.json";

/// The run's checkpoint folder, verified against its manifest. A crash
/// between the two renames of [`Run::save_checkpoint`] left only
/// `checkpoint.old/`: it is put back first.
fn open_checkpoint(dir: &Path) -> Result<PathBuf> {
    let (checkpoint, old) = (dir.join(CHECKPOINT), dir.join(OLD));
    if !checkpoint.exists() && old.exists() {
        fs::rename(&old, &checkpoint).map_err(LearnError::io(&checkpoint))?;
    }
    integrity::verify(&checkpoint)?;
    Ok(checkpoint)
}

/// The first multiple of `every` above `step` (`u64::MAX` when `every` is 0: never).
pub fn next_multiple(step: u64, every: u64) -> u64 {
    step.checked_div(every)
        .map_or(u64::MAX, |q| (q + 1) * every)
}

/// `runs/<env id>/<algo>-<seed>-<UTC timestamp>`.
pub fn default_dir(info: &RunInfo) -> PathBuf {
    let algo = info.algo.name();
    Path::new("runs")
        .join(&info.env.id)
        .join(format!("{algo}-{}-{}", info.seed, utc_stamp()))
}

fn utc_stamp() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}-{:02}{:02}{:02}",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

fn progress_bar(total: u64, position: u64) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} steps  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_position(position);
    bar
}

impl Run {
    /// Creates a new run directory; an existing directory is never overwritten.
    pub fn create(dir: PathBuf, info: RunInfo, total_steps: u64) -> Result<Self> {
        if dir.exists() {
            return Err(LearnError::Config(format!(
                "{} already exists; pick another --out, or continue it with --resume",
                dir.display()
            )));
        }
        fs::create_dir_all(&dir).map_err(LearnError::io(&dir))?;
        write_json(&dir.join(INFO), &info)?;
        let metrics = open_append(&dir.join(METRICS))?;
        Ok(Self {
            dir,
            info,
            metrics,
            progress: progress_bar(total_steps, 0),
            started: Instant::now(),
            elapsed_before: 0.0,
        })
    }

    /// Reopens a run to continue it from `progress`, its last checkpoint (read with [`load_run`]).
    pub fn resume(
        dir: PathBuf,
        info: RunInfo,
        progress: &Progress,
        total_steps: u64,
    ) -> Result<Self> {
        truncate_metrics(&dir.join(METRICS), progress.global_step)?;
        let metrics = open_append(&dir.join(METRICS))?;
        Ok(Self {
            progress: progress_bar(total_steps, progress.global_step),
            dir,
            info,
            metrics,
            started: Instant::now(),
            elapsed_before: progress.elapsed_s,
        })
    }

    /// Wall-clock seconds of training, including earlier sessions of a resumed run.
    pub fn elapsed(&self) -> f64 {
        self.elapsed_before + self.started.elapsed().as_secs_f64()
    }

    /// Wall-clock seconds of this session alone (since the run was made or resumed).
    pub fn session_elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// The directory holding the latest checkpoint.
    pub fn checkpoint_dir(&self) -> PathBuf {
        self.dir.join(CHECKPOINT)
    }

    /// Appends one metrics row (a JSON object) and updates the progress bar.
    pub fn log(&mut self, row: Map<String, Value>) -> Result<()> {
        let step = row.get("global_step").and_then(Value::as_u64).unwrap_or(0);
        let mut message = String::new();
        for (key, label) in [
            ("sps", "SPS"),
            ("episode_return", "return"),
            ("eval_return", "eval"),
        ] {
            if let Some(v) = row.get(key).and_then(Value::as_f64) {
                message.push_str(&format!("{label} {v:.1}  "));
            }
        }
        let path = self.dir.join(METRICS);
        writeln!(self.metrics, "{}", Value::Object(row)).map_err(LearnError::io(&path))?;
        self.metrics.flush().map_err(LearnError::io(&path))?;
        self.progress.set_position(step);
        self.progress.set_message(message);
        Ok(())
    }

    /// Writes a checkpoint so that a crash at any moment leaves a loadable one:
    /// `save` fills `checkpoint.partial/`, which is synced and sealed with a
    /// manifest of hashes, then swapped in for `checkpoint/` by two renames
    /// (`checkpoint/` → `checkpoint.old/`, `checkpoint.partial/` → `checkpoint/`).
    pub fn save_checkpoint(
        &self,
        progress: &Progress,
        save: impl FnOnce(&Path) -> Result<()>,
    ) -> Result<()> {
        let partial = self.dir.join(PARTIAL);
        if partial.exists() {
            fs::remove_dir_all(&partial).map_err(LearnError::io(&partial))?;
        }
        fs::create_dir_all(&partial).map_err(LearnError::io(&partial))?;
        save(&partial)?;
        write_json(&partial.join(STATE), progress)?;
        integrity::seal(&partial)?;
        let (done, old) = (self.checkpoint_dir(), self.dir.join(OLD));
        if old.exists() {
            fs::remove_dir_all(&old).map_err(LearnError::io(&old))?;
        }
        if done.exists() {
            fs::rename(&done, &old).map_err(LearnError::io(&old))?;
        }
        fs::rename(&partial, &done).map_err(LearnError::io(&done))?;
        integrity::sync_dir(&self.dir)?;
        if old.exists() {
            fs::remove_dir_all(&old).map_err(LearnError::io(&old))?;
        }
        Ok(())
    }

    /// Prints a line above the progress bar.
    pub fn note(&self, line: &str) {
        self.progress.suspend(|| eprintln!("note: {line}"));
    }

    /// Closes the progress bar.
    pub fn finish(&self) {
        self.progress.finish();
    }
}

/// Reads `run.json` and the checkpoint state of a run directory (or of its `checkpoint/`).
pub fn load_run(path: &Path) -> Result<(RunInfo, Progress, PathBuf)> {
    let dir = if path.join(INFO).exists() {
        path.to_path_buf()
    } else if path.file_name().is_some_and(|n| n == CHECKPOINT)
        && path.parent().is_some_and(|p| p.join(INFO).exists())
    {
        path.parent().map(Path::to_path_buf).unwrap_or_default()
    } else {
        return Err(LearnError::Checkpoint {
            path: path.to_path_buf(),
            message: format!(
                "not a run directory (no {INFO}); pass the directory `proprio train` wrote"
            ),
        });
    };
    let mut info: RunInfo = read_json(&dir.join(INFO))?;
    if info.format < RUN_FORMAT {
        proprio::registry().complete_legacy(&info.env.id, &mut info.env.config);
    }
    let checkpoint = open_checkpoint(&dir)?;
    let progress = read_json(&checkpoint.join(STATE))?;
    Ok((info, progress, checkpoint))
}

/// Keeps only metrics rows up to `global_step`, so a resumed run does not repeat rows.
fn truncate_metrics(path: &Path, global_step: u64) -> Result<()> {
    let file = File::open(path).map_err(LearnError::io(path))?;
    let kept: Vec<String> = BufReader::new(file)
        .lines()
        .map_while(std::result::Result::ok)
        .filter(|line| {
            serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v.get("global_step").and_then(Value::as_u64))
                .is_some_and(|s| s <= global_step)
        })
        .collect();
    let text: String = kept.iter().map(|l| format!("{l}\n")).collect();
    integrity::write_atomic(path, text.as_bytes())
}

fn open_append(path: &Path) -> Result<BufWriter<File>> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(BufWriter::new)
        .map_err(LearnError::io(path))
}

/// Writes `value` as pretty JSON to `path`, atomically.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| LearnError::Checkpoint {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    integrity::write_atomic(path, text.as_bytes())
}

/// Reads JSON from `path` into `T`, with the path in any error.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let text = fs::read_to_string(path).map_err(|e| LearnError::Checkpoint {
        path: path.to_path_buf(),
        message: format!("cannot read: {e}"),
    })?;
    serde_json::from_str(&text).map_err(|e| LearnError::Checkpoint {
        path: path.to_path_buf(),
        message: format!("malformed: {e}"),
    })
}

/// Reads a learner's hyper-parameters from their JSON form, as a one-line config error.
pub fn parse_config<T: serde::de::DeserializeOwned>(config: &Value) -> Result<T> {
    serde_json::from_value(config.clone()).map_err(|e| LearnError::Config(e.to_string()))
}

/// A learner's hyper-parameters in their JSON form.
pub fn to_json<T: Serialize>(config: &T) -> Result<Value> {
    serde_json::to_value(config).map_err(|e| LearnError::Config(e.to_string()))
}
