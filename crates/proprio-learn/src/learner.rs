//! One training loop for every algorithm. An algorithm is a [`Learner`]: it
//! iterates (collects and updates), reports its metrics, evaluates, and saves
//! and restores itself. [`train`] owns everything else: the schedule check, when
//! rows are logged, save-then-evaluate, the learning reward model's head in
//! every checkpoint, the base metrics (step, iteration, time, speed, reward
//! model cost), and the checkpoint hooks (videos).

use crate::base::error::{LearnError, Result};
use crate::base::hyper::Budget;
use crate::env::{EnvSource, Evaluation, NormalizerStats, record_reward_cost};
use crate::nets::acting::{POLICY_FILE, PolicyFile};
use crate::run::{Progress, Run, RunInfo, next_multiple, parse_config, write_json};
use burn::prelude::Device;
use proprio::serde_json::{Map, Value, json};
use proprio_reward::SharedHead;
use serde::de::DeserializeOwned;
use std::path::Path;

/// When a learner logs, evaluates and stops, in env steps (summed over envs).
#[derive(Debug, Clone, PartialEq)]
pub struct Cadence {
    /// Train until this many env steps.
    pub total_steps: u64,
    /// A metrics row every this many env steps (`1`: after every iteration).
    pub log_every: u64,
    /// Save and evaluate every this many env steps (0: only at the end).
    pub eval_every: u64,
    /// Episodes per evaluation.
    pub eval_episodes: usize,
    /// Env steps before the first update (0: every iteration learns).
    pub learning_starts: u64,
}

impl Cadence {
    /// The cadence of a learner with `budget` that logs every `log_every`
    /// env steps and learns after `learning_starts`.
    pub fn new(budget: Budget, log_every: u64, learning_starts: u64) -> Self {
        Self {
            total_steps: budget.total_steps,
            log_every,
            eval_every: budget.eval_every,
            eval_episodes: budget.eval_episodes,
            learning_starts,
        }
    }

    /// Rejects a schedule under which the learner would never update.
    pub fn check(&self, name: &str) -> Result<()> {
        if self.learning_starts > 0 && self.total_steps <= self.learning_starts {
            return Err(LearnError::Config(format!(
                "{name} would never update: total_steps ({}) must exceed learning_starts ({}); raise --total-steps or --set learning_starts=N",
                self.total_steps, self.learning_starts
            )));
        }
        Ok(())
    }

    /// A warning when most of the budget goes before the first update.
    pub fn warning(&self, name: &str) -> Option<String> {
        (self.learning_starts * 2 > self.total_steps).then(|| {
            format!(
                "{name} acts at random for {} of its {} steps before it learns (learning_starts)",
                self.learning_starts, self.total_steps
            )
        })
    }
}

/// An algorithm bound to its training envs, as the loop drives it.
pub trait Learner {
    /// The name in messages ("PPO").
    fn name(&self) -> &'static str;

    /// The learner's schedule.
    fn cadence(&self) -> Cadence;

    /// Env steps taken so far, summed over envs.
    fn global_step(&self) -> u64;

    /// Iterations completed (rollouts, env steps, group batches).
    fn iteration(&self) -> u64;

    /// One iteration: collect experience and update.
    fn iterate(&mut self) -> Result<()>;

    /// What the iterations since the last row measured (losses, episode
    /// statistics, …), into a metrics row.
    fn metrics(&mut self, row: &mut Map<String, Value>);

    /// Episodes of the policy on fresh envs from the evaluation seed stream.
    fn evaluate(&self, episodes: usize) -> Result<Evaluation>;

    /// The counters, generator, normaliser statistics and env snapshots a
    /// checkpoint holds (`elapsed_s` is the loop's to fill).
    fn progress(&self) -> Result<Progress>;

    /// The acting network a checkpoint holds, for `policy.json` (`None`: a
    /// learner that cannot describe it; its checkpoints do not load as a `Policy`).
    fn policy(&self) -> Option<PolicyFile>;

    /// Writes networks and optimizer states (and anything else the algorithm
    /// needs to resume) into the checkpoint folder `dir`.
    fn save(&self, dir: &Path) -> Result<()>;

    /// Continues from a checkpoint: what [`Learner::save`] wrote and `progress`.
    fn resume(&mut self, progress: Progress, checkpoint: &Path) -> Result<()>;

    /// Starts from another run's acting network: its `weights` (the file
    /// its `policy.json` names, a network this learner's description
    /// matches) and its observation statistics; counters and optimizer fresh.
    fn init_from(&mut self, weights: &Path, stats: Option<&NormalizerStats>) -> Result<()> {
        let _ = (weights, stats);
        Err(LearnError::Config(format!(
            "{} cannot start from another run's weights (--init)",
            self.name()
        )))
    }

    /// The reward model's head when the training envs pay a model reward.
    fn reward_head(&self) -> Option<&SharedHead>;

    /// Evaluation envs pay the reward model saved in `checkpoint` (frozen).
    fn evaluate_with_reward_from(&mut self, checkpoint: &Path);
}

/// Called after each checkpoint is written, with the run and its step.
pub type CheckpointHook<'a> = dyn FnMut(&Run, u64) -> Result<()> + 'a;

/// Restores `learner` from the checkpoint `progress` came with, its reward head included.
pub fn resume(learner: &mut dyn Learner, progress: Progress, checkpoint: &Path) -> Result<()> {
    learner.resume(progress, checkpoint)?;
    if let Some(head) = learner.reward_head() {
        head.load(checkpoint, false)?;
    }
    Ok(())
}

/// The metrics columns that measure wall-clock time rather than what a run
/// computed: two runs of one seed agree on every other column.
pub const WALL_CLOCK_COLUMNS: [&str; 9] = [
    "time_s",
    "sps",
    "env_ms",
    "act_ms",
    "collect_ms",
    "update_ms",
    "reward_render_ms",
    "reward_embed_ms",
    "reward_share",
];

/// Trains `learner` to its `total_steps`, writing rows and checkpoints into `run`.
pub fn train(
    learner: &mut dyn Learner,
    run: &mut Run,
    after_checkpoint: &mut CheckpointHook,
) -> Result<()> {
    let cadence = learner.cadence();
    cadence.check(learner.name())?;
    if let Some(warning) = cadence.warning(learner.name()) {
        run.note(&warning);
    }
    learner.evaluate_with_reward_from(&run.checkpoint_dir());
    let mut log_at = next_multiple(learner.global_step(), cadence.log_every);
    let mut eval_at = next_multiple(learner.global_step(), cadence.eval_every);
    while learner.global_step() < cadence.total_steps {
        learner.iterate()?;
        let step = learner.global_step();
        let done = step >= cadence.total_steps;
        if !(done || step >= log_at) {
            continue;
        }
        let elapsed = run.elapsed();
        let mut row = Map::new();
        row.insert("global_step".into(), json!(step));
        row.insert("iteration".into(), json!(learner.iteration()));
        row.insert("time_s".into(), json!(elapsed));
        row.insert("sps".into(), json!(step as f64 / elapsed.max(1e-9)));
        learner.metrics(&mut row);
        record_reward_cost(learner.reward_head(), &mut row, run.session_elapsed());
        if done || step >= eval_at {
            // Saved first: evaluation pays the reward model the checkpoint holds.
            save(learner, run)?;
            after_checkpoint(run, step)?;
            learner.evaluate(cadence.eval_episodes)?.record(&mut row);
            eval_at = next_multiple(step, cadence.eval_every);
        }
        run.log(row)?;
        log_at = next_multiple(step, cadence.log_every);
    }
    Ok(())
}

/// Writes a checkpoint: the learner's state, its reward head, and its progress.
fn save(learner: &dyn Learner, run: &Run) -> Result<()> {
    let mut progress = learner.progress()?;
    progress.elapsed_s = run.elapsed();
    run.save_checkpoint(&progress, |dir| {
        learner.save(dir)?;
        if let Some(policy) = learner.policy() {
            write_json(&dir.join(POLICY_FILE), &policy)?;
        }
        match learner.reward_head() {
            Some(head) => Ok(head.save(dir)?),
            None => Ok(()),
        }
    })
}

/// How every learner is made from its run: env source, hyper-parameters, seed, device, env threads.
pub type NewLearner<L, C> = fn(EnvSource, C, u64, Device, Option<usize>) -> Result<L>;

/// The learner a run describes, made by `new` from the run's hyper-parameters `C`.
pub fn build<L: Learner + 'static, C: DeserializeOwned>(
    info: &RunInfo,
    new: NewLearner<L, C>,
) -> Result<Box<dyn Learner>> {
    let cfg: C = parse_config(&info.config)?;
    let device = info.device.device()?;
    Ok(Box::new(new(
        info.env.clone(),
        cfg,
        info.seed,
        device,
        info.threads,
    )?))
}
