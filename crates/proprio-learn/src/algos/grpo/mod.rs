//! Group-relative policy optimisation (GRPO; Shao et al. 2024) with the
//! options of Dr. GRPO and DAPO, over any env: G rollouts start from one
//! snapshot, their rewards are compared within the group, and a clipped,
//! optionally KL-regularised policy-gradient step follows. With
//! `advantage = gae` the same learner is token-level PPO with a value head.
//!
//! One iteration, top to bottom: start the groups ([`rollout::start_groups`]),
//! roll every env to the end of its episode ([`rollout::collect`]), turn
//! rewards into advantages and loss weights ([`batch::prepare`]), and run
//! the epochs of minibatch steps ([`update::update`]).

pub mod advantage;
mod batch;
mod config;
pub mod rollout;
mod update;

pub use batch::{Prepared, prepare};
pub use config::{AdvantageMode, GrpoConfig, LossAggregation, RewardMode};
pub use update::UpdateStats;

use crate::base::adam::adam;
use crate::base::error::{LearnError, Result};
use crate::base::seeds::{evaluation_seed, learner_rng};
use crate::base::store::{load_module, load_optimizer, save_module, save_optimizer};
use crate::env::{EnvSource, Evaluation, NormalizerStats, base, evaluate_on, evaluation_options};
use crate::learner::{Cadence, Learner};
use crate::nets::acting::{PolicyFile, PolicyNet};
use crate::nets::actor::{Actor, ControlPolicy};
use crate::nets::sequence::SequencePolicy;
use crate::run::{Progress, RunInfo, parse_config, to_json};
use advantage::all_equal;
use burn::optim::ModuleOptimizer;
use burn::prelude::*;
use proprio::serde_json::{Map, Value, json};
use proprio::{ActMode, AutoresetMode, EnvRng, EnvSpec, Space, VecEnv, VecOptions};
use proprio_reward::SharedHead;
use rollout::{Groups, Rollout};
use std::path::Path;
use std::sync::Arc;

/// Builds `n` envs with the given options: the registry for registered ids, or a user's own tasks.
pub type EnvFactory = Arc<dyn Fn(usize, VecOptions) -> Result<Box<dyn VecEnv>> + Send + Sync>;

/// The factory of a registered env (with episode statistics and action clipping, as every learner uses).
pub fn registry_envs(source: &EnvSource) -> EnvFactory {
    let source = source.clone();
    Arc::new(move |n, options| GroupEnvs::registry(&source, n, options).map(|(venv, _)| venv))
}

/// Where a group learner's envs come from.
pub enum GroupEnvs {
    /// A registered env: its reward model's head (when it learns) is checkpointed with the run.
    Registry(Box<EnvSource>),
    /// A user's own factory.
    Factory(EnvFactory),
}

impl From<EnvFactory> for GroupEnvs {
    fn from(factory: EnvFactory) -> Self {
        Self::Factory(factory)
    }
}

impl From<EnvSource> for GroupEnvs {
    fn from(source: EnvSource) -> Self {
        Self::Registry(Box::new(source))
    }
}

impl GroupEnvs {
    fn registry(
        source: &EnvSource,
        n: usize,
        options: VecOptions,
    ) -> Result<(Box<dyn VecEnv>, Option<SharedHead>)> {
        let backend = source.backend;
        base(source, n, VecOptions { backend, ..options })
    }

    /// `n` envs, with the reward model's head if one learns.
    fn make(&self, n: usize, options: VecOptions) -> Result<(Box<dyn VecEnv>, Option<SharedHead>)> {
        match self {
            Self::Registry(source) => Self::registry(source, n, options),
            Self::Factory(factory) => Ok((factory(n, options)?, None)),
        }
    }

    /// `n` evaluation envs: a registered env's with its `eval_config` applied.
    fn make_evaluation(&self, n: usize) -> Result<Box<dyn VecEnv>> {
        let options = evaluation_options(proprio::Backend::Cpu);
        match self {
            Self::Registry(source) => Ok(Self::registry(&source.for_evaluation()?, n, options)?.0),
            Self::Factory(factory) => factory(n, options),
        }
    }
}

/// A group learner bound to its envs.
pub struct Grpo<A: Actor> {
    cfg: GrpoConfig,
    device: Device,
    actor: A,
    reference: Option<A>,
    optim: ModuleOptimizer,
    envs: GroupEnvs,
    venv: Box<dyn VecEnv>,
    reward: Option<SharedHead>,
    seed: u64,
    rng: EnvRng,
    global_step: u64,
    iteration: u64,
    started: bool,
    loss_constant: f64,
    obs_dim: usize,
    /// What the last iteration measured, for its metrics row.
    last: Map<String, Value>,
    /// The policy's description for `policy.json` (`None` for a policy built by the caller).
    description: Option<PolicyNet>,
}

impl Grpo<SequencePolicy> {
    /// A transformer policy for an env that answers in tokens.
    pub fn sequence(
        envs: impl Into<GroupEnvs>,
        cfg: GrpoConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        let shape = cfg.shape();
        let description = PolicyNet::Sequence {
            shape: shape.clone(),
            temperature: cfg.temperature,
        };
        let mut learner = Self::new(envs, cfg, seed, device, threads, |spec, device, rng| {
            SequencePolicy::new(
                &spec.observation_space,
                &spec.action_space,
                &shape,
                device,
                rng,
            )
        })?;
        learner.description = Some(description);
        Ok(learner)
    }
}

impl Grpo<ControlPolicy> {
    /// An MLP policy for a control env (box, discrete or multi-discrete actions).
    pub fn control(
        envs: impl Into<GroupEnvs>,
        cfg: GrpoConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        let shape = cfg.control_shape();
        let description = PolicyNet::Control {
            shape: shape.clone(),
            temperature: cfg.temperature,
        };
        let mut learner = Self::new(envs, cfg, seed, device, threads, |spec, device, rng| {
            let head = shape.action_head(&spec.action_space)?;
            ControlPolicy::new(&spec.observation_space, head, &shape, device, rng)
        })?;
        learner.description = Some(description);
        Ok(learner)
    }
}

impl<A: Actor> Grpo<A> {
    /// A fresh learner: `build` makes the policy for the env's spec, its weights drawn from `seed`.
    pub fn new(
        envs: impl Into<GroupEnvs>,
        cfg: GrpoConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
        build: impl FnOnce(&EnvSpec, &Device, &mut EnvRng) -> Result<A>,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        // A factory over the registry puts the env source's backend in its place.
        let options = VecOptions {
            autoreset: AutoresetMode::NextStep,
            threads,
            backend: proprio::Backend::Cpu,
        };
        let envs = envs.into();
        let (venv, reward) = envs.make(cfg.rollouts(), options)?;
        let spec = venv.spec().clone();
        let device = device.autodiff();
        let mut rng = learner_rng(seed);
        let actor = build(&spec, &device, &mut rng)?;
        let reference = (cfg.kl_coef > 0.0).then(|| actor.valid());
        let units_per_rollout = actor.units() as u64 * spec.max_episode_steps.unwrap_or(1);
        Ok(Self {
            loss_constant: cfg.loss_constant.unwrap_or(units_per_rollout as f64),
            optim: adam(cfg.adam_eps),
            obs_dim: spec.observation_space.flat_dim(),
            cfg,
            device,
            actor,
            reference,
            envs,
            venv,
            reward,
            seed,
            rng,
            global_step: 0,
            iteration: 0,
            started: false,
            last: Map::new(),
            description: None,
        })
    }

    /// The policy being trained.
    pub fn actor(&self) -> &A {
        &self.actor
    }

    /// One batch of groups from the current policy (their starts drawn from the env streams).
    pub fn collect(&mut self) -> Result<Groups> {
        let seed = (!self.started).then_some(self.seed);
        rollout::start_groups(self.venv.as_mut(), self.cfg.group_size, seed)?;
        self.started = true;
        rollout::collect(
            self.venv.as_mut(),
            &self.actor.valid(),
            self.cfg.temperature,
            self.cfg.kv_cache,
            &mut self.rng,
        )
    }

    /// One iteration — collect groups, build the batch, update — and what it measured.
    fn step_groups(&mut self) -> Result<Map<String, Value>> {
        let lr = if self.cfg.anneal_lr {
            let done = self.global_step as f64 / self.cfg.total_steps.max(1) as f64;
            (1.0 - done).max(0.0) * self.cfg.learning_rate
        } else {
            self.cfg.learning_rate
        };
        let started = std::time::Instant::now();
        let (groups, refills) = self.collect_kept()?;
        let collect_ms = started.elapsed().as_secs_f64() * 1e3;
        let started = std::time::Instant::now();
        let valid = self.actor.valid();
        let batch = prepare(
            &groups,
            &self.cfg,
            &valid,
            self.reference.as_ref(),
            self.loss_constant,
            self.obs_dim,
        )?;
        let stats = if batch.rows > 0 {
            let (actor, stats) = update::update(
                self.actor.clone(),
                &mut self.optim,
                &self.cfg,
                &batch,
                self.obs_dim,
                lr,
                &mut self.rng,
                &self.device,
            )?;
            self.actor = actor;
            Some(stats)
        } else {
            None
        };
        self.iteration += 1;
        let mut row = self.row(&groups, &batch, stats.as_ref(), lr);
        // Wall-clock of sampling the batch and of learning from it.
        row.insert("collect_ms".into(), json!(collect_ms));
        row.insert(
            "update_ms".into(),
            json!(started.elapsed().as_secs_f64() * 1e3),
        );
        if self.cfg.max_refills > 0 {
            row.insert("refills".into(), json!(refills));
        }
        Ok(row)
    }

    /// One batch, counted in `global_step`; with `max_refills`, DAPO's
    /// dynamic sampling: more batches are collected (and counted) and their
    /// unequal groups kept until `groups` unequal groups are in hand or the
    /// refills run out. Returns the batch and the refills it took.
    fn collect_kept(&mut self) -> Result<(Groups, usize)> {
        let first = self.collect()?;
        self.global_step += first.rows() as u64;
        let (g, wanted) = (self.cfg.group_size, self.cfg.groups);
        if !(self.cfg.drop_equal_groups && self.cfg.max_refills > 0) {
            return Ok((first, 0));
        }
        let unequal = |group: &[Rollout]| {
            let outcomes: Vec<f64> = group.iter().map(Rollout::outcome).collect();
            !all_equal(&outcomes)
        };
        let mut kept = first.select(g, wanted, unequal);
        let mut refills = 0;
        while kept.rollouts.len() < wanted * g && refills < self.cfg.max_refills {
            let more = self.collect()?;
            self.global_step += more.rows() as u64;
            refills += 1;
            let room = wanted - kept.rollouts.len() / g;
            kept.append(more.select(g, room, unequal));
        }
        Ok((kept, refills))
    }

    /// Trains for `steps` more env steps without writing a run (for library
    /// users); returns every iteration's metrics row.
    pub fn fit(&mut self, steps: u64) -> Result<Vec<Map<String, Value>>> {
        let end = self.global_step + steps;
        let mut rows = Vec::new();
        while self.global_step < end {
            Learner::iterate(self)?;
            let mut row = Map::new();
            row.insert("global_step".into(), json!(self.global_step));
            row.insert("iteration".into(), json!(self.iteration));
            self.metrics(&mut row);
            rows.push(row);
        }
        Ok(rows)
    }

    fn row(
        &self,
        groups: &Groups,
        batch: &Prepared,
        stats: Option<&UpdateStats>,
        lr: f64,
    ) -> Map<String, Value> {
        let rollouts = &groups.rollouts;
        let n = rollouts.len().max(1) as f64;
        let mut row = Map::new();
        row.insert(
            "episode_return".into(),
            json!(rollouts.iter().map(|r| r.outcome()).sum::<f64>() / n),
        );
        row.insert("episode_length".into(), json!(groups.rows() as f64 / n));
        row.insert(
            "response_length".into(),
            json!(rollouts.iter().map(|r| r.response_len).sum::<usize>() as f64 / n),
        );
        if rollouts.iter().all(|r| r.success.is_some()) {
            let solved = |r: &rollout::Rollout| r.success == Some(true);
            row.insert(
                "success_rate".into(),
                json!(rollouts.iter().filter(|r| solved(r)).count() as f64 / n),
            );
            let groups_solved = rollouts
                .chunks(self.cfg.group_size)
                .filter(|g| g.iter().any(solved))
                .count();
            row.insert(
                format!("pass_at_{}", self.cfg.group_size),
                json!(groups_solved as f64 / self.cfg.groups as f64),
            );
        }
        row.insert("groups_kept".into(), json!(batch.kept_groups));
        if let Some(s) = stats {
            row.insert("policy_loss".into(), json!(s.policy_loss));
            if self.cfg.advantage == AdvantageMode::Gae {
                row.insert("value_loss".into(), json!(s.value_loss));
            }
            row.insert("entropy".into(), json!(s.entropy));
            if self.reference.is_some() {
                row.insert("kl_ref".into(), json!(s.kl_ref));
            }
            row.insert("approx_kl".into(), json!(s.approx_kl));
            row.insert("clip_low_fraction".into(), json!(s.clip_low_fraction));
            row.insert("clip_high_fraction".into(), json!(s.clip_high_fraction));
            row.insert("grad_norm".into(), json!(s.grad_norm));
        }
        row.insert("learning_rate".into(), json!(lr));
        row
    }
}

impl<A: Actor> Learner for Grpo<A> {
    fn name(&self) -> &'static str {
        "GRPO"
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
        self.last = self.step_groups()?;
        Ok(())
    }

    fn metrics(&mut self, row: &mut Map<String, Value>) {
        row.append(&mut self.last);
    }

    /// Greedy episodes on fresh envs (their own seed stream).
    fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let actor = self.actor.valid();
        let venv = self.envs.make_evaluation(episodes)?;
        let mut rng = self.rng.clone();
        // What each env's episode has shown so far: every step reads only what is new.
        let mut cache = A::Cache::default();
        let temperature = self.cfg.temperature;
        let d = self.obs_dim;
        evaluate_on(
            venv,
            evaluation_seed(self.seed),
            &mut |obs: &[f32], actions: &mut [f32], _: ActMode| {
                let slots: Vec<usize> = (0..obs.len() / d).collect();
                let sampled =
                    actor.sample_in(obs, &slots, &mut cache, temperature, true, &mut rng)?;
                actions.copy_from_slice(&sampled.actions);
                Ok(())
            },
        )
    }

    fn progress(&self) -> Result<Progress> {
        let envs = (0..self.venv.num_envs())
            .map(|i| self.venv.snapshot(i))
            .collect::<proprio::Result<Vec<_>>>()?;
        Ok(Progress {
            global_step: self.global_step,
            iteration: self.iteration,
            elapsed_s: 0.0,
            rng: self.rng.clone(),
            stats: None,
            envs,
        })
    }

    fn policy(&self) -> Option<PolicyFile> {
        let net = self.description.clone()?;
        Some(PolicyFile {
            net,
            weights: "model.bpk".into(),
        })
    }

    /// The policy, the KL reference (when regularised) and the optimizer state.
    fn save(&self, dir: &Path) -> Result<()> {
        save_module(&self.actor, dir, "model.bpk")?;
        if let Some(reference) = &self.reference {
            save_module(reference, dir, "reference.bpk")?;
        }
        save_optimizer(&self.optim, dir, "optimizer.bpk")
    }

    fn resume(&mut self, progress: Progress, checkpoint: &Path) -> Result<()> {
        self.actor = load_module(self.actor.clone(), &checkpoint.join("model.bpk"))?;
        if let Some(reference) = self.reference.take() {
            self.reference = Some(load_module(reference, &checkpoint.join("reference.bpk"))?);
        }
        self.optim = load_optimizer(self.optim.clone(), checkpoint, "optimizer.bpk")?;
        for (i, state) in progress.envs.iter().enumerate() {
            self.venv.restore(state, &[i])?;
        }
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        self.started = true;
        Ok(())
    }

    /// The policy starts as the given weights; so does the KL reference, when regularised.
    fn init_from(&mut self, weights: &Path, stats: Option<&NormalizerStats>) -> Result<()> {
        if stats.is_some_and(|s| s.obs.is_some()) {
            return Err(LearnError::Config(
                "--init: that run normalised its observations and the group learner reads them raw; train it with normalize_obs: false".into(),
            ));
        }
        self.actor = load_module(self.actor.clone(), weights)?;
        if self.reference.is_some() {
            self.reference = Some(self.actor.valid());
        }
        Ok(())
    }

    fn reward_head(&self) -> Option<&SharedHead> {
        self.reward.as_ref()
    }

    fn evaluate_with_reward_from(&mut self, checkpoint: &Path) {
        if let GroupEnvs::Registry(source) = &mut self.envs {
            source.reward_weights = Some(checkpoint.to_path_buf());
        }
    }
}

/// The group learner's defaults (DeepSeekMath's GRPO with Dr. GRPO's and DAPO's fixes).
pub fn defaults(_: &Space) -> Result<Value> {
    to_json(&GrpoConfig::default())
}

/// Token-level PPO: the group learner with a value head and GAE (`advantage = gae`).
pub fn token_ppo_defaults(_: &Space) -> Result<Value> {
    to_json(&GrpoConfig::ppo())
}

/// The learner a run describes: a transformer for token answers, an MLP for control.
pub fn build(info: &RunInfo) -> Result<Box<dyn Learner>> {
    let cfg: GrpoConfig = parse_config(&info.config)?;
    let device = info.device.device()?;
    let spec = proprio::registry().spec(&info.env.id, &info.env.config)?;
    let envs = GroupEnvs::from(info.env.clone());
    Ok(match spec.action_space {
        Space::Tokens { .. } => {
            Box::new(Grpo::sequence(envs, cfg, info.seed, device, info.threads)?)
        }
        _ => Box::new(Grpo::control(envs, cfg, info.seed, device, info.threads)?),
    })
}
