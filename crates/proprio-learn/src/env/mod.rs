//! The env stacks a learner trains and evaluates on, built from the core wrappers.

use crate::base::device::ComputeDevice;
use crate::base::error::{LearnError, Result};
use proprio::render::{FrameSource, ObsOptions, inner_autoreset};
use proprio::serde_json::{Map, Value, json};
use proprio::wrappers::{
    ClipAction, NormalizeObservation, NormalizeReward, RecordEpisodeStatistics, RunningMeanStd,
    SameStepAutoreset,
};
use proprio::{ActMode, Agent, AutoresetMode, Backend, Space, State, VecEnv, VecOptions};
use proprio_reward::{MODEL_REWARD, RewardConfig, SharedHead, TASK_REWARD};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod curriculum;

pub use curriculum::{Curriculum, Growth};

/// Where an env comes from: registry id and config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvSource {
    /// Registry id, e.g. `classic/pendulum-v1`.
    pub id: String,
    /// Config object passed to `make_vec`.
    pub config: Value,
    /// Where the env's physics runs (CPU threads or GPU).
    #[serde(default)]
    pub backend: Backend,
    /// What the agent observes: the state or camera images (rendered offscreen), stacked or not.
    #[serde(default)]
    pub obs: ObsOptions,
    /// A vision-language reward model replacing (or joining) the task's reward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<RewardConfig>,
    /// A checkpoint folder whose learned reward model (a preference reward's
    /// `r_ψ`) these envs pay, frozen: how evaluation sees what training learned.
    #[serde(skip)]
    pub reward_weights: Option<PathBuf>,
    /// Where the reward model's networks run: the run's own network device,
    /// set whenever a run is built or loaded (not saved with the env).
    #[serde(skip)]
    pub reward_device: ComputeDevice,
    /// Config keys evaluation envs take instead of `config`'s, e.g.
    /// `{"split": "held_out"}`: evaluate on instructions never trained on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval_config: Option<Value>,
}

impl EnvSource {
    /// The env `id` with `config`, observing its state on `backend`'s physics.
    pub fn new(id: &str, config: Value, backend: Backend) -> Self {
        Self {
            id: id.into(),
            config,
            backend,
            obs: ObsOptions::default(),
            reward: None,
            reward_weights: None,
            reward_device: ComputeDevice::Cpu,
            eval_config: None,
        }
    }

    /// The source evaluation envs are built from: `config` with `eval_config`'s
    /// keys in place, which must leave the observations and actions as they are.
    pub fn for_evaluation(&self) -> Result<EnvSource> {
        let Some(overrides) = &self.eval_config else {
            return Ok(self.clone());
        };
        let (Value::Object(keys), Value::Object(config)) = (overrides, &self.config) else {
            return Err(LearnError::Config(format!(
                "eval_config must be a JSON object of env config keys, got {overrides}"
            )));
        };
        let mut merged = config.clone();
        merged.extend(keys.clone());
        let registry = proprio::registry();
        let (ours, theirs) = (
            registry.spec(&self.id, &self.config)?,
            registry.spec(&self.id, &Value::Object(merged))?,
        );
        if ours.observation_space != theirs.observation_space
            || ours.action_space != theirs.action_space
        {
            return Err(LearnError::Config(format!(
                "eval_config {overrides} changes {}'s observations or actions; evaluation must act in the training envs' spaces",
                self.id
            )));
        }
        Ok(EnvSource {
            config: theirs.config,
            eval_config: None,
            ..self.clone()
        })
    }

    /// The observation space the learner sees: the env's state, or images
    /// (with the state), stacked as `obs` says.
    pub fn observation_space(&self) -> Result<Space> {
        let spec = proprio::registry().spec(&self.id, &self.config)?;
        Ok(self.obs.space(&spec.observation_space))
    }
}

/// Running statistics of the observation and return normalisers (saved in checkpoints).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NormalizerStats {
    /// Per-component observation mean and variance (none: raw observations).
    pub obs: Option<RunningMeanStd>,
    /// Variance of the discounted return (rewards are divided by its square root).
    pub ret: RunningMeanStd,
}

/// Normalised observations and rewards are clipped to ±this (CleanRL).
pub const NORMALIZED_CLIP: f32 = 10.0;

type Normalized = NormalizeReward<NormalizeObservation<Box<dyn VecEnv>>>;

/// Which of CleanRL's running normalisations the training env applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Normalization {
    /// Raw observations and rewards.
    None,
    /// Rewards only: observations already on a sensible scale stay as they
    /// are, so the policy's inputs do not drift as their statistics settle.
    Rewards,
    /// Observations and rewards (CleanRL's continuous-action default).
    Both,
}

impl Normalization {
    /// From a learner's `normalize` and `normalize_obs` keys.
    pub fn from_keys(normalize: bool, normalize_obs: bool) -> Self {
        match (normalize, normalize_obs) {
            (false, _) => Self::None,
            (true, false) => Self::Rewards,
            (true, true) => Self::Both,
        }
    }
}

/// The training env's wrappers: episode statistics, action clipping for boxes,
/// and optionally CleanRL's observation and reward normalisation (clipped to ±10).
enum Stack {
    /// No normalisation.
    Raw(Box<dyn VecEnv>),
    /// Rewards normalised with running statistics.
    RewardsNormalized(Box<NormalizeReward<Box<dyn VecEnv>>>),
    /// Observations and rewards normalised with running statistics.
    Normalized(Box<Normalized>),
}

/// The envs a learner steps, with their normalisers, and the reward model's
/// head when it learns (saved with every checkpoint).
pub struct TrainEnv {
    stack: Stack,
    reward: Option<SharedHead>,
}

/// The env stack of `source`, and its reward model's head if it has one.
/// Pixel observations and the reward model draw their images from one
/// [`FrameSource`]; both see each episode's last step, and in same-step mode
/// one [`SameStepAutoreset`] on top resets the finished envs.
pub(crate) fn base(
    source: &EnvSource,
    num_envs: usize,
    options: VecOptions,
) -> Result<(Box<dyn VecEnv>, Option<SharedHead>)> {
    let frames = FrameSource::new();
    // A reward model scores each episode's last step, so below it same-step
    // autoreset is off and one `SameStepAutoreset` goes on top.
    let inner = match source.reward {
        Some(_) => VecOptions {
            autoreset: inner_autoreset(options.autoreset),
            ..options
        },
        None => options,
    };
    let venv = proprio::make_vec_framed(
        &source.id,
        num_envs,
        &source.config,
        inner,
        &source.obs,
        &frames,
    )?;
    // Statistics inside the reward model: `episode.return` stays the task's.
    let venv = RecordEpisodeStatistics::new(venv, 100);
    let Some(reward) = &source.reward else {
        return Ok((clipped(Box::new(venv))?, None));
    };
    let device = source.reward_device.device()?;
    let wrapper = proprio_reward::model_reward(venv, reward, &frames, &device)?;
    if let Some(dir) = &source.reward_weights {
        wrapper.head().load(dir, true)?;
    }
    let head = wrapper.head();
    let venv: Box<dyn VecEnv> = if options.autoreset == AutoresetMode::SameStep {
        Box::new(SameStepAutoreset::new(wrapper)?)
    } else {
        Box::new(wrapper)
    };
    Ok((clipped(venv)?, Some(head)))
}

/// Box actions are clipped into their bounds, as CleanRL's `ClipAction`.
fn clipped(venv: Box<dyn VecEnv>) -> Result<Box<dyn VecEnv>> {
    Ok(match venv.spec().action_space {
        Space::Box { .. } => Box::new(ClipAction::new(venv)?),
        _ => venv,
    })
}

impl TrainEnv {
    /// `num_envs` envs autoresetting in same-step mode (so the learner sees the
    /// final observation of truncated episodes and can bootstrap from it).
    pub fn new(
        source: &EnvSource,
        num_envs: usize,
        threads: Option<usize>,
        normalization: Normalization,
        gamma: f32,
    ) -> Result<Self> {
        let options = VecOptions {
            autoreset: AutoresetMode::SameStep,
            threads,
            backend: source.backend,
        };
        let (venv, reward) = base(source, num_envs, options)?;
        let stack = match normalization {
            Normalization::None => Stack::Raw(venv),
            Normalization::Rewards => Stack::RewardsNormalized(Box::new(NormalizeReward::new(
                venv,
                gamma,
                Some(NORMALIZED_CLIP),
            ))),
            Normalization::Both => Stack::Normalized(Box::new(NormalizeReward::new(
                NormalizeObservation::new(venv, Some(NORMALIZED_CLIP)),
                gamma,
                Some(NORMALIZED_CLIP),
            ))),
        };
        Ok(Self { stack, reward })
    }

    /// The reward model's head, when the envs pay a model reward.
    pub fn reward_head(&self) -> Option<&SharedHead> {
        self.reward.as_ref()
    }

    /// The vector env to step.
    pub fn venv(&mut self) -> &mut dyn VecEnv {
        match &mut self.stack {
            Stack::Raw(v) => v.as_mut(),
            Stack::RewardsNormalized(v) => v.as_mut(),
            Stack::Normalized(v) => v.as_mut(),
        }
    }

    /// The vector env, read-only.
    pub fn venv_ref(&self) -> &dyn VecEnv {
        match &self.stack {
            Stack::Raw(v) => v.as_ref(),
            Stack::RewardsNormalized(v) => v.as_ref(),
            Stack::Normalized(v) => v.as_ref(),
        }
    }

    /// The normaliser statistics, if normalising.
    pub fn stats(&self) -> Option<NormalizerStats> {
        match &self.stack {
            Stack::Raw(_) => None,
            Stack::RewardsNormalized(v) => Some(NormalizerStats {
                obs: None,
                ret: v.stats().clone(),
            }),
            Stack::Normalized(v) => Some(NormalizerStats {
                obs: Some(v.inner().stats().clone()),
                ret: v.stats().clone(),
            }),
        }
    }

    /// Restores saved normaliser statistics (on resume).
    pub fn set_stats(&mut self, stats: &NormalizerStats) {
        match &mut self.stack {
            Stack::Raw(_) => {}
            Stack::RewardsNormalized(v) => v.set_stats(stats.ret.clone()),
            Stack::Normalized(v) => {
                v.set_stats(stats.ret.clone());
                if let Some(obs) = &stats.obs {
                    v.inner_mut().set_stats(obs.clone());
                }
            }
        }
    }

    /// A snapshot of every env, for a checkpoint.
    pub fn snapshots(&self) -> Result<Vec<State>> {
        let venv = self.venv_ref();
        Ok((0..venv.num_envs())
            .map(|i| venv.snapshot(i))
            .collect::<proprio::Result<Vec<_>>>()?)
    }

    /// Puts a checkpoint's envs and statistics back; returns the current observations.
    pub fn restore(&mut self, stats: Option<&NormalizerStats>, envs: &[State]) -> Result<Vec<f32>> {
        if let Some(stats) = stats {
            self.set_stats(stats);
        }
        for (i, state) in envs.iter().enumerate() {
            self.venv().restore(state, &[i])?;
        }
        Ok(self.venv_ref().batch().obs.clone())
    }
}

/// Adds what the reward model has cost so far to a metrics row: mean
/// milliseconds per scored batch rendering (`reward_render_ms`) and
/// embedding (`reward_embed_ms`), and their share of the `elapsed` seconds
/// of training in this session (`reward_share`; the cost counters start
/// with the process, a resumed one too). Nothing without a reward model.
pub fn record_reward_cost(head: Option<&SharedHead>, row: &mut Map<String, Value>, elapsed: f64) {
    let Some(cost) = head.map(SharedHead::cost) else {
        return;
    };
    let per_batch = 1e3 / cost.batches.max(1) as f64;
    row.insert(
        "reward_render_ms".into(),
        json!(cost.render_seconds * per_batch),
    );
    row.insert(
        "reward_embed_ms".into(),
        json!(cost.embed_seconds * per_batch),
    );
    row.insert(
        "reward_share".into(),
        json!((cost.render_seconds + cost.embed_seconds) / elapsed.max(1e-9)),
    );
}

/// What multi-turn envs count in their last `info`: turns used, wrong
/// answers, and wrong answers equal to an earlier one (UFO's measure).
pub const TURN_MEASURES: [&str; 3] = ["turns", "wrong_answers", "repeated_answers"];

/// The outcome of evaluation episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Undiscounted return of each episode.
    pub returns: Vec<f64>,
    /// Fraction of episodes whose last `info` had `success` = 1 (envs that report it).
    pub success_rate: Option<f64>,
    /// Each episode's return under the reward model, when one pays the reward
    /// (`returns` are then the task's own).
    pub model_returns: Option<Vec<f64>>,
    /// Every key of the episodes' last `info`, averaged over the episodes that
    /// report it: success per instruction template, turns used, …
    pub infos: BTreeMap<String, f64>,
    /// Share of the episodes solved within `k + 1` turns, for `k` up to the
    /// most turns an episode used (envs whose last `info` has `success` and `turns`;
    /// UFO's success after k turns).
    pub solved_by_turn: Vec<f64>,
}

impl Evaluation {
    /// Adds `eval_return` (and `eval_success`, for envs that report success) to a metrics row.
    pub fn record(&self, row: &mut proprio::serde_json::Map<String, Value>) {
        row.insert("eval_return".into(), Value::from(self.mean_return()));
        if let Some(rate) = self.success_rate {
            row.insert("eval_success".into(), Value::from(rate));
        }
        if let Some(mean) = self.mean_model_return() {
            row.insert("eval_model_return".into(), Value::from(mean));
        }
        for (key, rate) in self.per_task_success() {
            row.insert(format!("eval_{key}"), Value::from(rate));
        }
        for (key, mean) in self.turn_measures() {
            row.insert(format!("eval_{key}"), Value::from(mean));
        }
        if let Some(rate) = self.repeated_answer_rate() {
            row.insert("eval_repeated_answer_rate".into(), Value::from(rate));
        }
        for (k, rate) in self.solved_by_turn.iter().enumerate() {
            row.insert(format!("eval_solved_within_{}", k + 1), Value::from(*rate));
        }
    }

    /// The multi-turn measures of [`TURN_MEASURES`] the episodes reported, each a mean per episode.
    pub fn turn_measures(&self) -> impl Iterator<Item = (&'static str, f64)> {
        TURN_MEASURES
            .iter()
            .filter_map(|&key| self.infos.get(key).map(|&mean| (key, mean)))
    }

    /// Of the wrong answers, the share that repeated an earlier one (UFO's
    /// measure), over all episodes; `None` without wrong answers.
    pub fn repeated_answer_rate(&self) -> Option<f64> {
        let wrong = *self.infos.get("wrong_answers")?;
        let repeated = *self.infos.get("repeated_answers")?;
        (wrong > 0.0).then(|| repeated / wrong)
    }

    /// Success per kind of task (an instruction's template: `success_push`,
    /// …): the info keys `success_*`, each averaged over the episodes that report it.
    pub fn per_task_success(&self) -> impl Iterator<Item = (&str, f64)> {
        self.infos
            .iter()
            .filter(|(key, _)| key.starts_with("success_"))
            .map(|(key, rate)| (key.as_str(), *rate))
    }

    /// Mean episode return under the reward model, if one paid the reward.
    pub fn mean_model_return(&self) -> Option<f64> {
        let returns = self.model_returns.as_ref()?;
        Some(returns.iter().sum::<f64>() / returns.len().max(1) as f64)
    }

    /// Mean episode return.
    pub fn mean_return(&self) -> f64 {
        self.returns.iter().sum::<f64>() / self.returns.len().max(1) as f64
    }
}

/// Runs `episodes` evaluation episodes, one per env, with a fixed agent
/// acting deterministically and frozen observation statistics.
pub fn evaluate(
    source: &EnvSource,
    episodes: usize,
    seed: u64,
    obs_stats: Option<&RunningMeanStd>,
    agent: &mut dyn Agent,
) -> Result<Evaluation> {
    let source = source.for_evaluation()?;
    let (venv, _) = base(&source, episodes.max(1), evaluation_options(source.backend))?;
    let venv: Box<dyn VecEnv> = match obs_stats {
        Some(stats) => {
            let mut normalized = NormalizeObservation::new(venv, Some(NORMALIZED_CLIP));
            normalized.set_stats(stats.clone());
            normalized.set_update(false);
            Box::new(normalized)
        }
        None => venv,
    };
    evaluate_on(venv, seed, agent)
}

/// How evaluation envs are built: next-step autoreset on one thread.
pub fn evaluation_options(backend: Backend) -> VecOptions {
    VecOptions {
        autoreset: AutoresetMode::NextStep,
        threads: Some(1),
        backend,
    }
}

/// How an evaluation episode ended.
#[derive(Debug, Clone, Copy)]
struct End {
    ret: f64,
    model_return: f64,
    success: Option<f64>,
    turns: Option<f64>,
}

/// Share of `ends` solved within 1, 2, … turns, up to the most turns used;
/// empty unless every episode reports `success` and `turns`.
fn solved_by_turn(ends: &[End]) -> Vec<f64> {
    let Some(used) = ends
        .iter()
        .map(|e| e.success.zip(e.turns))
        .collect::<Option<Vec<_>>>()
    else {
        return Vec::new();
    };
    let most = used
        .iter()
        .map(|&(_, t)| t.ceil() as usize)
        .max()
        .unwrap_or(0);
    (1..=most)
        .map(|k| {
            let solved = used
                .iter()
                .filter(|&&(s, t)| s > 0.0 && t <= k as f64)
                .count();
            solved as f64 / used.len() as f64
        })
        .collect()
}

/// Runs one episode in every env of `venv` (next-step autoreset) with a fixed
/// agent acting deterministically.
pub fn evaluate_on(
    mut venv: Box<dyn VecEnv>,
    seed: u64,
    agent: &mut dyn Agent,
) -> Result<Evaluation> {
    let episodes = venv.num_envs();
    if episodes == 0 {
        return Err(LearnError::Config(
            "evaluation needs at least one episode".into(),
        ));
    }
    let action_dim = venv.spec().action_space.flat_dim();
    let mut actions = vec![0.0; episodes * action_dim];
    let mut ends: Vec<Option<End>> = vec![None; episodes];
    let (mut returns, mut model_returns) = (vec![0.0; episodes], vec![0.0; episodes]);
    let mut modelled = false;
    // Sum and count of each info key over the episodes that reported it.
    let mut infos: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    venv.reset(Some(seed), None)?;
    while ends.iter().any(Option::is_none) {
        agent.act(&venv.batch().obs, &mut actions, ActMode::Deterministic)?;
        venv.step(&actions)?;
        let b = venv.batch();
        for (i, slot) in ends.iter_mut().enumerate() {
            if slot.is_none() {
                // Under a reward model the task's reward is in the info.
                let info = &b.infos[i];
                let task = info.get(TASK_REWARD);
                modelled |= task.is_some();
                returns[i] += task.unwrap_or(f64::from(b.reward[i]));
                model_returns[i] += info.get(MODEL_REWARD).unwrap_or(0.0);
                if b.done(i) {
                    *slot = Some(End {
                        ret: returns[i],
                        model_return: model_returns[i],
                        success: info.get("success"),
                        turns: info.get("turns"),
                    });
                    for (key, value) in info.iter() {
                        let (sum, count) = infos.entry(key.to_string()).or_default();
                        *sum += value;
                        *count += 1;
                    }
                }
            }
        }
    }
    let ends: Vec<End> = ends.into_iter().flatten().collect();
    let successes: Option<Vec<f64>> = ends.iter().map(|e| e.success).collect();
    Ok(Evaluation {
        returns: ends.iter().map(|e| e.ret).collect(),
        success_rate: successes
            .map(|s| s.iter().filter(|v| **v > 0.0).count() as f64 / s.len() as f64),
        model_returns: modelled.then(|| ends.iter().map(|e| e.model_return).collect()),
        solved_by_turn: solved_by_turn(&ends),
        infos: infos
            .into_iter()
            .map(|(key, (sum, count))| (key, sum / count as f64))
            .collect(),
    })
}
