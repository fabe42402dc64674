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
pub mod loss;
pub mod rollout;
mod update;

pub use batch::{Prepared, prepare};
pub use config::{AdvantageMode, GrpoConfig, LossAggregation, RewardMode};
pub use update::UpdateStats;

use crate::actor::{Actor, ControlPolicy};
use crate::envs::{EnvSource, Evaluation, base, evaluate_on, evaluation_options};
use crate::error::{LearnError, Result};
use crate::head::ActionHead;
use crate::run::{Progress, Run, checkpoint_error, load_module, next_multiple};
use crate::sequence::SequencePolicy;
use burn::optim::{AdamConfig, ModuleOptimizer};
use burn::prelude::*;
use proprio::serde_json::{Map, Value, json};
use proprio::{AutoresetMode, EnvRng, EnvSpec, VecEnv, VecOptions, episode_rng};
use rollout::Groups;
use std::path::Path;
use std::sync::Arc;

/// Builds `n` envs with the given options: the registry for registered ids, or a user's own tasks.
pub type EnvFactory = Arc<dyn Fn(usize, VecOptions) -> Result<Box<dyn VecEnv>> + Send + Sync>;

/// The factory of a registered env (with episode statistics and action clipping, as every learner uses).
pub fn registry_envs(source: &EnvSource) -> EnvFactory {
    let source = source.clone();
    Arc::new(move |n, options| {
        let backend = source.backend;
        // GRPO's groups restart from snapshots; a learning reward model's
        // head is not checkpointed here (the actor-critic learners save it).
        base(&source, n, VecOptions { backend, ..options }).map(|(venv, _)| venv)
    })
}

/// A group learner bound to its envs.
pub struct Grpo<A: Actor> {
    cfg: GrpoConfig,
    device: Device,
    actor: A,
    reference: Option<A>,
    optim: ModuleOptimizer,
    envs: EnvFactory,
    venv: Box<dyn VecEnv>,
    seed: u64,
    rng: EnvRng,
    global_step: u64,
    iteration: u64,
    started: bool,
    loss_constant: f64,
    obs_dim: usize,
}

impl Grpo<SequencePolicy> {
    /// A transformer policy for an env that answers in tokens.
    pub fn sequence(
        envs: EnvFactory,
        cfg: GrpoConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        let shape = cfg.shape();
        Self::new(envs, cfg, seed, device, threads, |spec, device, rng| {
            SequencePolicy::new(
                &spec.observation_space,
                &spec.action_space,
                &shape,
                device,
                rng,
            )
        })
    }
}

impl Grpo<ControlPolicy> {
    /// An MLP policy for a control env (box, discrete or multi-discrete actions).
    pub fn control(
        envs: EnvFactory,
        cfg: GrpoConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        let hidden = cfg.hidden.clone();
        Self::new(envs, cfg, seed, device, threads, |spec, device, rng| {
            let head = ActionHead::for_space(&spec.action_space)?;
            ControlPolicy::new(&spec.observation_space, head, &hidden, device, rng)
        })
    }
}

impl<A: Actor> Grpo<A> {
    /// A fresh learner: `build` makes the policy for the env's spec, its weights drawn from `seed`.
    pub fn new(
        envs: EnvFactory,
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
        let venv = envs(cfg.rollouts(), options)?;
        let spec = venv.spec().clone();
        let device = device.autodiff();
        let mut rng = episode_rng(seed, u64::MAX - 1, 0);
        let actor = build(&spec, &device, &mut rng)?;
        let reference = (cfg.kl_coef > 0.0).then(|| actor.valid());
        let units_per_rollout = actor.units() as u64 * spec.max_episode_steps.unwrap_or(1);
        Ok(Self {
            loss_constant: cfg.loss_constant.unwrap_or(units_per_rollout as f64),
            optim: AdamConfig::new().with_epsilon(cfg.adam_eps).init(),
            obs_dim: spec.observation_space.flat_dim(),
            cfg,
            device,
            actor,
            reference,
            envs,
            venv,
            seed,
            rng,
            global_step: 0,
            iteration: 0,
            started: false,
        })
    }

    /// Continues from a checkpoint written by [`Grpo::save`].
    pub fn resume(mut self, progress: Progress, checkpoint: &Path) -> Result<Self> {
        self.actor = load_module(self.actor, &checkpoint.join("model.bpk"))?;
        if let Some(reference) = self.reference.take() {
            self.reference = Some(load_module(reference, &checkpoint.join("reference.bpk"))?);
        }
        let optimizer = checkpoint.join("optimizer.bpk");
        self.optim = self
            .optim
            .load(&optimizer)
            .map_err(checkpoint_error(&optimizer))?;
        for (i, state) in progress.envs.iter().enumerate() {
            self.venv.restore(state, &[i])?;
        }
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        self.started = true;
        Ok(self)
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
            &mut self.rng,
        )
    }

    /// One iteration — collect groups, build the batch, update — and its metrics row.
    pub fn iterate(&mut self) -> Result<Map<String, Value>> {
        let lr = if self.cfg.anneal_lr {
            let done = self.global_step as f64 / self.cfg.total_steps.max(1) as f64;
            (1.0 - done).max(0.0) * self.cfg.learning_rate
        } else {
            self.cfg.learning_rate
        };
        let groups = self.collect()?;
        self.global_step += groups.rows() as u64;
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
        Ok(self.row(&groups, &batch, stats.as_ref(), lr))
    }

    /// Trains for `steps` more env steps without writing a run (for library
    /// users); returns every iteration's metrics row.
    pub fn fit(&mut self, steps: u64) -> Result<Vec<Map<String, Value>>> {
        let end = self.global_step + steps;
        let mut rows = Vec::new();
        while self.global_step < end {
            rows.push(self.iterate()?);
        }
        Ok(rows)
    }

    /// Trains until `cfg.total_steps`, logging every iteration and checkpointing after every evaluation.
    pub fn train(&mut self, run: &mut Run) -> Result<()> {
        let mut next_eval = next_multiple(self.global_step, self.cfg.eval_every);
        while self.global_step < self.cfg.total_steps {
            let mut row = self.iterate()?;
            let elapsed = run.elapsed();
            row.insert("time_s".into(), json!(elapsed));
            let sps = self.global_step as f64 / elapsed.max(1e-9);
            row.insert("sps".into(), json!(sps));
            if self.global_step >= self.cfg.total_steps || self.global_step >= next_eval {
                self.evaluate(self.cfg.eval_episodes)?.record(&mut row);
                next_eval = next_multiple(self.global_step, self.cfg.eval_every);
                self.save(run)?;
            }
            run.log(row)?;
        }
        Ok(())
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
        row.insert("global_step".into(), json!(self.global_step));
        row.insert("iteration".into(), json!(self.iteration));
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

    /// `episodes` greedy episodes on fresh envs (their own seed stream).
    pub fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let actor = self.actor.valid();
        let venv = (self.envs)(episodes, evaluation_options(proprio::Backend::Cpu))?;
        let mut rng = self.rng.clone();
        let temperature = self.cfg.temperature;
        evaluate_on(
            venv,
            self.seed.wrapping_add(1_000_003),
            |obs, n, actions| {
                let sampled = actor.sample(obs, n, temperature, true, &mut rng)?;
                actions.copy_from_slice(&sampled.actions);
                Ok(())
            },
        )
    }

    /// Writes the weights, optimizer state and progress to the run's checkpoint.
    pub fn save(&self, run: &Run) -> Result<()> {
        let envs = (0..self.venv.num_envs())
            .map(|i| self.venv.snapshot(i))
            .collect::<proprio::Result<Vec<_>>>()?;
        let progress = Progress {
            global_step: self.global_step,
            iteration: self.iteration,
            elapsed_s: run.elapsed(),
            rng: self.rng.clone(),
            stats: None,
            envs,
        };
        run.save_checkpoint(&progress, |dir| {
            let model = dir.join("model.bpk");
            self.actor
                .clone()
                .save_file(&model)
                .map_err(checkpoint_error(&model))?;
            if let Some(reference) = &self.reference {
                let path = dir.join("reference.bpk");
                reference
                    .clone()
                    .save_file(&path)
                    .map_err(checkpoint_error(&path))?;
            }
            let optimizer = dir.join("optimizer.bpk");
            self.optim
                .save(&optimizer)
                .map_err(checkpoint_error(&optimizer))
        })
    }
}
