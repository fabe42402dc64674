//! Behaviour cloning: the group learner's control policy (the same network,
//! so `proprio train --algo grpo --init` continues from it) fitted to an
//! expert's demonstrations by maximum likelihood — the supervised warm start
//! of VLA-RL and SimpleVLA-RL. With `action_bins` the loss is the
//! cross-entropy of each action token (RT-2, OpenVLA); with a Gaussian it is
//! the negative log-likelihood of the whole action.
//!
//! One iteration is one epoch: the rows are shuffled, then one Adam step per
//! minibatch. Steps count demonstration rows consumed, so `total_steps` is
//! epochs × rows.

pub mod demos;
pub mod frames;
pub mod record;
pub mod rows;
pub mod shift;

pub use demos::{DaggerRound, DemoHeader, Demonstrations};
pub use frames::{EpisodeFrames, FrameEpisodes, Player, demo_frames, rollout_frames};
pub use record::{collect, dagger};
pub use rows::ObsRows;

use crate::base::adam::adam;
use crate::base::error::{LearnError, Result};
use crate::base::grad::clip_global_norm;
use crate::base::seeds::{evaluation_seed, learner_rng};
use crate::base::store::{load_module, load_optimizer, save_module, save_optimizer};
use crate::env::{EnvSource, Evaluation, NormalizerStats, evaluate};
use crate::learner::{self, Cadence, Learner};
use crate::nets::acting::{PolicyFile, PolicyNet};
use crate::nets::actor::{Actor, ControlPolicy};
use crate::nets::actor_critic::AgentShape;
use crate::nets::encoder::{CnnConfig, ObsLayout};
use crate::nets::head::{BinSpacing, GreedyToken};
use crate::nets::instruction::TextConfig;
use crate::nets::standardize::Standardize;
use crate::run::{Progress, RunInfo, to_json};
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use proprio::rand::RngExt;
use proprio::serde_json::{Map, Value, json};
use proprio::{ActMode, EnvRng, Space};
use proprio_reward::SharedHead;
use serde::{Deserialize, Serialize};
use shift::Images;
use std::path::{Path, PathBuf};

crate::base::hyper::hyperparameters! {
    /// Behaviour-cloning hyper-parameters; the architecture keys are the group learner's.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    pub struct BcConfig {
        /// The demonstrations file (`proprio demos`), collected on this run's env stack.
        pub demos: PathBuf,
        /// Rows per Adam step.
        pub batch_size: usize,
        /// Adam step size (OpenVLA fine-tunes at 5e-4 with LoRA; an MLP from scratch takes 1e-3).
        pub learning_rate: f64,
        /// Adam ε.
        pub adam_eps: f32,
        /// Global gradient-norm bound.
        pub max_grad_norm: f64,
        /// Hidden layers of the actor and critic (the critic stays untrained; `gae` learners fit it).
        pub hidden: Vec<usize>,
        /// Box actions as this many values per component, one token each (0: a Gaussian).
        pub action_bins: usize,
        /// Where those values lie (`even` or `square`, PPO's key).
        #[serde(default)]
        pub action_bin_spacing: BinSpacing,
        /// What the deterministic policy acts with those tokens: each one's
        /// `mode` (RT-2) or its `mean` value, between bins (PPO's key).
        #[serde(default)]
        pub action_bin_greedy: GreedyToken,
        /// Standardise the state values with the demonstrations' mean and
        /// standard deviation, fixed and saved in the weights (GRPO `--init`
        /// from the clone sets it too).
        #[serde(default)]
        pub standardize_state: bool,
        /// The CNN image observations go through first.
        pub cnn: CnnConfig,
        /// The encoder of an instruction's tokens.
        pub text: TextConfig,
        /// Half-open ranges of flat observation components only the critic reads.
        pub critic_only: Vec<[usize; 2]>,
        /// The sampling temperature `policy.json` records (the group learner's, for `--init`).
        pub temperature: f32,
        /// Shift every minibatch row's images by up to this many pixels each
        /// way (robomimic's random crop; 0: none).
        #[serde(default)]
        pub image_shift: usize,
    }
}

impl Default for BcConfig {
    fn default() -> Self {
        Self {
            demos: PathBuf::new(),
            total_steps: 500_000,
            batch_size: 256,
            learning_rate: 1e-3,
            adam_eps: 1e-8,
            max_grad_norm: 1.0,
            hidden: vec![64, 64],
            action_bins: 0,
            action_bin_spacing: BinSpacing::Even,
            action_bin_greedy: GreedyToken::Mode,
            standardize_state: false,
            cnn: CnnConfig::default(),
            text: TextConfig::default(),
            critic_only: Vec::new(),
            temperature: 1.0,
            image_shift: 0,
            eval_every: 100_000,
            eval_episodes: 100,
        }
    }
}

impl BcConfig {
    /// The network, as the group learner builds it from the same keys.
    pub fn shape(&self) -> AgentShape {
        AgentShape {
            hidden: self.hidden.clone(),
            cnn: self.cnn.clone(),
            text: self.text.clone(),
            critic_only: self.critic_only.clone(),
            action_bins: self.action_bins,
            action_bin_spacing: self.action_bin_spacing,
            action_bin_greedy: self.action_bin_greedy,
            standardize_state: self.standardize_state,
            ..AgentShape::default()
        }
    }

    /// Rejects settings it cannot train with.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.demos.as_os_str().is_empty() {
            return Err(
                "bc needs demonstrations: --set demos=FILE (write one with `proprio demos`)".into(),
            );
        }
        if self.batch_size == 0 || self.eval_episodes == 0 || self.total_steps == 0 {
            return Err("batch_size, eval_episodes and total_steps must be positive".into());
        }
        if !(self.learning_rate > 0.0 && self.temperature > 0.0) {
            return Err("learning_rate and temperature must be positive".into());
        }
        if self.hidden.is_empty() || self.hidden.contains(&0) {
            return Err("hidden must list at least one positive layer size".into());
        }
        self.cnn.validate()?;
        self.text.validate()
    }
}

/// A cloning learner bound to its demonstrations.
pub struct Bc {
    cfg: BcConfig,
    source: EnvSource,
    actor: ControlPolicy,
    optim: ModuleOptimizer,
    demos: Demonstrations,
    /// The demonstrated actions as the head stores them (bin or category indices).
    targets: Vec<f32>,
    seed: u64,
    rng: EnvRng,
    global_step: u64,
    iteration: u64,
    /// Mean loss per action unit over the last epoch.
    loss: f64,
    /// Where the observation's images lie, when `image_shift` moves them.
    images: Option<Images>,
}

impl Bc {
    /// A fresh learner for the env `source`; its demonstrations must come from the same stack.
    pub fn new(
        source: EnvSource,
        cfg: BcConfig,
        seed: u64,
        device: Device,
        _threads: Option<usize>,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        let demos = Demonstrations::read(&cfg.demos)?;
        let spec = proprio::registry().spec(&source.id, &source.config)?;
        let theirs = &demos.header.env;
        let their_actions = proprio::registry()
            .spec(&theirs.id, &theirs.config)?
            .action_space;
        if theirs.id != source.id
            || theirs.observation_space()? != source.observation_space()?
            || their_actions != spec.action_space
        {
            return Err(LearnError::Config(format!(
                "{} holds demonstrations of {} with other observations or actions than this run's {} (collect them with the run's env config: `proprio demos --config`)",
                cfg.demos.display(),
                theirs.id,
                source.id
            )));
        }
        let head = cfg.shape().action_head(&spec.action_space)?;
        let a = head.action_dim();
        let mut targets = vec![0.0; demos.actions.len()];
        for (stored, action) in targets.chunks_mut(a).zip(demos.actions.chunks(a)) {
            head.stored_from_action(action, stored);
        }
        let device = device.autodiff();
        let mut rng = learner_rng(seed);
        let obs_space = source.observation_space()?;
        let layout = ObsLayout::new(&obs_space)?;
        let images = Images::to_shift(&layout, cfg.image_shift).map_err(LearnError::Config)?;
        let mut actor = ControlPolicy::new(&obs_space, head, &cfg.shape(), &device, &mut rng)?;
        if cfg.standardize_state {
            let d = obs_space.flat_dim();
            let components = obs_space.normalized_components();
            let fitted = Standardize::fitted(d, &components, |k| demos.obs.column(k), &device);
            actor.nets.standardize = Some(fitted);
        }
        Ok(Self {
            optim: adam(cfg.adam_eps),
            cfg,
            source,
            actor,
            demos,
            targets,
            seed,
            rng,
            global_step: 0,
            iteration: 0,
            loss: f64::NAN,
            images,
        })
    }

    /// One shuffled pass over the demonstrations; returns the mean loss per unit.
    fn epoch(&mut self) -> Result<f64> {
        let rows = self.demos.rows();
        let (d, a) = (self.demos.header.obs_dim, self.demos.header.action_dim);
        let mut order: Vec<usize> = (0..rows).collect();
        for i in (1..rows).rev() {
            order.swap(i, self.rng.random_range(0..=i));
        }
        let (mut sum, mut batches) = (0.0, 0);
        for chunk in order.chunks(self.cfg.batch_size) {
            let m = chunk.len();
            let gather = |data: &[f32], w: usize| -> Vec<f32> {
                chunk
                    .iter()
                    .flat_map(|&r| data[r * w..(r + 1) * w].iter().copied())
                    .collect()
            };
            let mut obs = self.demos.obs.gather(chunk);
            if let Some(images) = &self.images {
                images.shift(&mut obs, d, self.cfg.image_shift, &mut self.rng);
            }
            let scores = self.actor.score(&obs, &gather(&self.targets, a), m, 1.0);
            let loss = scores.logp.neg().mean();
            let value = loss.clone().into_scalar::<f32>();
            if !value.is_finite() {
                return Err(LearnError::Diverged(format!(
                    "behaviour-cloning loss is {value}"
                )));
            }
            sum += f64::from(value);
            batches += 1;
            let mut grads = GradientsParams::from_grads(loss.backward(), &self.actor);
            clip_global_norm(&self.actor, &mut grads, self.cfg.max_grad_norm);
            self.actor = self
                .optim
                .step(self.cfg.learning_rate, self.actor.clone(), grads);
        }
        Ok(sum / batches.max(1) as f64)
    }
}

impl Learner for Bc {
    fn name(&self) -> &'static str {
        "BC"
    }

    fn cadence(&self) -> Cadence {
        Cadence::new(self.cfg.budget(), 1, 0)
    }

    fn global_step(&self) -> u64 {
        self.global_step
    }

    fn iteration(&self) -> u64 {
        self.iteration
    }

    fn iterate(&mut self) -> Result<()> {
        self.loss = self.epoch()?;
        self.global_step += self.demos.rows() as u64;
        self.iteration += 1;
        Ok(())
    }

    fn metrics(&mut self, row: &mut Map<String, Value>) {
        row.insert("loss".into(), json!(self.loss));
        row.insert("epoch".into(), json!(self.iteration));
        row.insert("demo_rows".into(), json!(self.demos.rows()));
    }

    /// Greedy episodes (each token's mode) on fresh envs from the evaluation seed stream.
    fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let actor = self.actor.valid();
        let d = self.demos.header.obs_dim;
        let mut rng = self.rng.clone();
        evaluate(
            &self.source,
            episodes,
            evaluation_seed(self.seed),
            None,
            &mut |obs: &[f32], actions: &mut [f32], _: ActMode| {
                let sampled = actor.sample(obs, obs.len() / d, 1.0, true, &mut rng)?;
                actions.copy_from_slice(&sampled.actions);
                Ok(())
            },
        )
    }

    fn progress(&self) -> Result<Progress> {
        Ok(Progress {
            global_step: self.global_step,
            iteration: self.iteration,
            elapsed_s: 0.0,
            rng: self.rng.clone(),
            stats: None,
            envs: Vec::new(),
        })
    }

    fn policy(&self) -> Option<PolicyFile> {
        Some(PolicyFile {
            net: PolicyNet::Control {
                shape: self.cfg.shape(),
                temperature: self.cfg.temperature,
            },
            weights: "model.bpk".into(),
        })
    }

    fn save(&self, dir: &Path) -> Result<()> {
        save_module(&self.actor, dir, "model.bpk")?;
        save_optimizer(&self.optim, dir, "optimizer.bpk")
    }

    fn resume(&mut self, progress: Progress, checkpoint: &Path) -> Result<()> {
        self.actor = load_module(self.actor.clone(), &checkpoint.join("model.bpk"))?;
        self.optim = load_optimizer(self.optim.clone(), checkpoint, "optimizer.bpk")?;
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        Ok(())
    }

    /// Continues cloning from another run's policy (raw observations only).
    fn init_from(&mut self, weights: &Path, stats: Option<&NormalizerStats>) -> Result<()> {
        if stats.is_some_and(|s| s.obs.is_some()) {
            return Err(LearnError::Config(
                "--init: that run normalised its observations and behaviour cloning reads them raw"
                    .into(),
            ));
        }
        self.actor = load_module(self.actor.clone(), weights)?;
        Ok(())
    }

    fn reward_head(&self) -> Option<&SharedHead> {
        None
    }

    fn evaluate_with_reward_from(&mut self, checkpoint: &Path) {
        self.source.reward_weights = Some(checkpoint.to_path_buf());
    }
}

/// The cloning defaults (the demonstrations file has none: `--set demos=FILE`).
pub fn defaults(_: &Space) -> Result<Value> {
    to_json(&BcConfig::default())
}

/// The learner a run describes.
pub fn build(info: &RunInfo) -> Result<Box<dyn Learner>> {
    learner::build(info, Bc::new)
}
