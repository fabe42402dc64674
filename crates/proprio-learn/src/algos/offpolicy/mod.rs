//! What every off-policy learner shares (SAC, TD3, DSAC-T): step the envs,
//! store transitions in the replay buffer, update from minibatches. Each
//! algorithm brings only its networks and its update; the shared training
//! loop (`crate::learner`) logs, evaluates and checkpoints.

mod soft;

pub use soft::SacConfig;

use crate::base::error::{LearnError, Result};
use crate::base::hyper::Budget;
use crate::base::seeds::{evaluation_seed, learner_rng};
use crate::base::tensor::matrix;
use crate::env::{Curriculum, EnvSource, Evaluation, Normalization, TrainEnv, evaluate};
use crate::learner::{Cadence, Learner};
use crate::nets::acting::PolicyFile;
use crate::replay::ReplayBuffer;
use crate::run::Progress;
use burn::prelude::*;
use proprio::rand::RngExt;
use proprio::serde_json::{Map, Value, json};
use proprio::{ActMode, EnvRng, Space};
use proprio_reward::SharedHead;
use std::path::Path;

/// Env steps between metrics rows.
const LOG_EVERY: u64 = 1_000;

/// Declares an off-policy algorithm's hyper-parameter struct with the replay
/// schedule's keys appended (then the loop's, by `hyperparameters!`) and
/// `schedule()`: the keys written once for SAC, DSAC-T and TD3.
macro_rules! replay_hyperparameters {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $crate::base::hyper::hyperparameters! {
            $(#[$meta])*
            pub struct $name {
                $( $(#[$field_meta])* pub $field: $ty, )*
                /// Envs stepped in parallel; each step adds `num_envs` transitions (CleanRL: 1).
                pub num_envs: usize,
                /// Replay buffer capacity in transitions (CleanRL: 1e6).
                pub buffer_size: usize,
                /// Transitions per gradient step (CleanRL: 256).
                pub batch_size: usize,
                /// Env steps of uniformly random actions before learning (CleanRL: SAC 5e3, TD3 25e3).
                pub learning_starts: u64,
                /// Discount factor, also the return normaliser's (CleanRL: 0.99).
                pub gamma: f32,
                /// Normalise observations (CleanRL: no).
                pub normalize: bool,
                /// Threads of the update's matrix products (Proprio: 1; a second thread
                /// speeds 256-wide layers up on an idle machine, not beside another process).
                pub update_threads: usize,
                /// Env config numbers that grow as training goes on (Learning to Fly's
                /// reward curriculum); none by default.
                #[serde(default)]
                pub reward_curriculum: Option<$crate::env::Curriculum>,
            }
        }

        impl $name {
            /// The off-policy loop's settings.
            pub fn schedule(&self) -> $crate::algos::offpolicy::Schedule {
                $crate::algos::offpolicy::Schedule {
                    budget: self.budget(),
                    num_envs: self.num_envs,
                    buffer_size: self.buffer_size,
                    batch_size: self.batch_size,
                    learning_starts: self.learning_starts,
                    gamma: self.gamma,
                    normalize: self.normalize,
                    update_threads: self.update_threads,
                    reward_curriculum: self.reward_curriculum.clone(),
                }
            }
        }
    };
}

pub(crate) use replay_hyperparameters;

/// The settings of the loop, which every off-policy config holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// When the loop stops and evaluates.
    pub budget: Budget,
    /// Envs stepped in parallel; each step adds `num_envs` transitions.
    pub num_envs: usize,
    /// Replay buffer capacity in transitions.
    pub buffer_size: usize,
    /// Transitions per gradient step.
    pub batch_size: usize,
    /// Env steps of uniformly random actions before learning.
    pub learning_starts: u64,
    /// Discount factor (also the return normaliser's).
    pub gamma: f32,
    /// Normalise observations.
    pub normalize: bool,
    /// Threads of the update's matrix products.
    pub update_threads: usize,
    /// Env config numbers that grow as training goes on.
    pub reward_curriculum: Option<Curriculum>,
}

impl Schedule {
    /// Rejects loop settings no off-policy algorithm can run with.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.num_envs == 0
            || self.batch_size == 0
            || self.buffer_size == 0
            || self.update_threads == 0
            || self.budget.eval_episodes == 0
        {
            return Err(
                "num_envs, batch_size, buffer_size, update_threads and eval_episodes must be positive"
                    .into(),
            );
        }
        if !(0.0..=1.0).contains(&self.gamma) {
            return Err("gamma must lie in [0, 1]".into());
        }
        self.reward_curriculum
            .as_ref()
            .map_or(Ok(()), Curriculum::validate)
    }
}

/// What an algorithm is built from: the env's sizes and action box.
pub struct Shape<'a> {
    /// Flat observation width.
    pub obs_dim: usize,
    /// Lower action bounds, one per component.
    pub low: &'a [f32],
    /// Upper action bounds.
    pub high: &'a [f32],
    /// The autodiff device the networks train on.
    pub device: &'a Device,
}

/// A minibatch on the training device, row-major `[B, ·]`.
pub struct Minibatch {
    /// Observations `[B, D]`.
    pub obs: Tensor<2>,
    /// Actions taken `[B, A]`.
    pub actions: Tensor<2>,
    /// Rewards `[B, 1]`.
    pub rewards: Tensor<2>,
    /// The true next observations `[B, D]` (the final one at an episode's end).
    pub next_obs: Tensor<2>,
    /// `1 − terminated` `[B, 1]`: truncated episodes still bootstrap.
    pub not_done: Tensor<2>,
}

/// An off-policy algorithm: its networks, how it explores and how it learns.
pub trait Algorithm: Send {
    /// The name in messages ("SAC").
    const NAME: &'static str;

    /// Actions `[n × A]`, in env units, to explore with from observations `obs` `[n, D]`.
    fn explore(&mut self, obs: Tensor<2>, rng: &mut EnvRng) -> Result<Vec<f32>>;

    /// One update from `batch`; `iteration` counts env-step iterations (for delayed updates).
    fn update(&mut self, batch: Minibatch, iteration: u64, rng: &mut EnvRng) -> Result<()>;

    /// The deterministic actions `[n × A]` for observations `obs` `[n × D]` (evaluation).
    fn greedy(&self) -> impl FnMut(&[f32], usize, &mut [f32]) -> Result<()>;

    /// The latest losses (and any other learner state worth plotting) into a metrics row.
    fn metrics(&self, row: &mut Map<String, Value>);

    /// The acting network, for `policy.json`.
    fn policy(&self) -> PolicyFile;

    /// Writes networks and optimizers into the checkpoint directory `dir`.
    fn save(&self, dir: &Path) -> Result<()>;

    /// Reads what [`Algorithm::save`] wrote.
    fn load(&mut self, dir: &Path) -> Result<()>;
}

/// An off-policy learner bound to its training envs.
pub struct OffPolicy<A> {
    algorithm: A,
    /// The pool the updates run in (burn's CPU kernels split products over its threads).
    pool: rayon::ThreadPool,
    schedule: Schedule,
    device: Device,
    env: TrainEnv,
    source: EnvSource,
    /// Env worker threads, to rebuild the envs with.
    threads: Option<usize>,
    /// The reward curriculum's stage the envs are at.
    stage: u64,
    seed: u64,
    rng: EnvRng,
    global_step: u64,
    iteration: u64,
    obs_dim: usize,
    action_dim: usize,
    low: Vec<f32>,
    high: Vec<f32>,
    buffer: ReplayBuffer,
    next_obs: Vec<f32>,
    episodes: Vec<(f64, f64)>,
    actions: Vec<f32>,
}

impl<A: Algorithm> OffPolicy<A> {
    /// Builds the envs (reset with `seed`) and the algorithm's networks, drawn from `seed` on `device`.
    pub fn build(
        source: EnvSource,
        schedule: Schedule,
        seed: u64,
        device: Device,
        threads: Option<usize>,
        algorithm: impl FnOnce(Shape, &mut EnvRng) -> A,
    ) -> Result<Self> {
        let name = A::NAME;
        if source.obs.mode != proprio::render::ObsMode::State {
            return Err(LearnError::Config(format!(
                "{name} has no image encoder yet: train --obs {} with --algo ppo",
                source.obs.mode
            )));
        }
        let s = &schedule;
        if let Some(curriculum) = &s.reward_curriculum {
            if source.reward.is_some() {
                return Err(LearnError::Config(
                    "reward_curriculum grows the env's own reward; it cannot be combined with --reward"
                        .into(),
                ));
            }
            // Every key must be a number of the env's config before the first growth.
            let config = proprio::registry().spec(&source.id, &source.config)?.config;
            curriculum.config_at(&config, 1)?;
        }
        let env = envs(&source, s, threads, seed)?;
        let spec = env.venv_ref().spec().clone();
        let Space::Box { low, high } = spec.action_space.clone() else {
            return Err(LearnError::Config(format!(
                "{name} needs a box action space, not {}",
                spec.action_space
            )));
        };
        if low.iter().chain(&high).any(|v| !v.is_finite()) {
            return Err(LearnError::Config(format!(
                "{name} needs finite action bounds to squash into"
            )));
        }
        let (obs_dim, action_dim) = (spec.observation_space.flat_dim(), low.len());
        let device = device.autodiff();
        let mut rng = learner_rng(seed);
        let shape = Shape {
            obs_dim,
            low: &low,
            high: &high,
            device: &device,
        };
        let algorithm = algorithm(shape, &mut rng);
        let pool = crate::base::threads::update_pool(s.update_threads)?;
        let capacity = s
            .buffer_size
            .min(s.budget.total_steps as usize + s.num_envs);
        let num_envs = s.num_envs;
        Ok(Self {
            next_obs: env.venv_ref().batch().obs.clone(),
            buffer: ReplayBuffer::new(capacity, obs_dim, action_dim)?,
            algorithm,
            pool,
            schedule,
            rng,
            device,
            env,
            source,
            threads,
            stage: 0,
            seed,
            global_step: 0,
            iteration: 0,
            obs_dim,
            action_dim,
            low,
            high,
            episodes: Vec::new(),
            actions: vec![0.0; num_envs * action_dim],
        })
    }

    /// Uniform random actions before `learning_starts`, the algorithm's exploration after.
    fn act(&mut self, actions: &mut [f32]) -> Result<()> {
        if self.global_step < self.schedule.learning_starts {
            for row in actions.chunks_exact_mut(self.action_dim) {
                for ((x, lo), hi) in row.iter_mut().zip(&self.low).zip(&self.high) {
                    *x = lo + (hi - lo) * self.rng.random::<f32>();
                }
            }
            return Ok(());
        }
        let n = self.schedule.num_envs;
        let obs = matrix(&self.next_obs, n, self.obs_dim, &self.device);
        actions.copy_from_slice(&self.algorithm.explore(obs, &mut self.rng)?);
        Ok(())
    }

    /// Stores the step's transitions and notes finished episodes.
    fn store(&mut self, actions: &[f32]) {
        let b = self.env.venv_ref().batch();
        let (d, a) = (self.obs_dim, self.action_dim);
        for i in 0..self.schedule.num_envs {
            // The true next observation: the final one when the episode ended (CleanRL's real_next_obs).
            let next = b.final_obs(i).unwrap_or(b.obs(i));
            let obs = &self.next_obs[i * d..(i + 1) * d];
            let action = &actions[i * a..(i + 1) * a];
            self.buffer
                .push(obs, action, b.reward[i], next, b.terminated[i]);
            if let Some((Some(r), Some(l))) = b
                .episode_info(i)
                .map(|e| (e.get("episode.return"), e.get("episode.length")))
            {
                self.episodes.push((r, l));
            }
        }
        self.next_obs.copy_from_slice(&b.obs);
    }

    /// The training envs at `curriculum`'s `stage`, reset.
    fn envs_at(&self, curriculum: &Curriculum, stage: u64) -> Result<TrainEnv> {
        let config = proprio::registry()
            .spec(&self.source.id, &self.source.config)?
            .config;
        let source = EnvSource {
            config: curriculum.config_at(&config, stage)?,
            ..self.source.clone()
        };
        envs(&source, &self.schedule, self.threads, self.seed)
    }

    /// Moves the envs to the curriculum's stage of the current step, their episodes carried over.
    fn follow_curriculum(&mut self) -> Result<()> {
        let Some(curriculum) = &self.schedule.reward_curriculum else {
            return Ok(());
        };
        let stage = curriculum.stage(self.global_step);
        if stage == self.stage {
            return Ok(());
        }
        let (episodes, stats) = (self.env.snapshots()?, self.env.stats());
        self.env = self.envs_at(curriculum, stage)?;
        self.next_obs = self.env.restore(stats.as_ref(), &episodes)?;
        self.stage = stage;
        Ok(())
    }

    fn minibatch(&mut self) -> Minibatch {
        let (b, d, a) = (self.schedule.batch_size, self.obs_dim, self.action_dim);
        let s = self.buffer.sample(b, &mut self.rng);
        let dev = &self.device;
        Minibatch {
            obs: matrix(&s.obs, b, d, dev),
            actions: matrix(&s.actions, b, a, dev),
            rewards: matrix(&s.rewards, b, 1, dev),
            next_obs: matrix(&s.next_obs, b, d, dev),
            not_done: matrix(&s.terminated, b, 1, dev).neg().add_scalar(1.0),
        }
    }
}

/// `source`'s training envs for `schedule`, reset with `seed`.
fn envs(
    source: &EnvSource,
    schedule: &Schedule,
    threads: Option<usize>,
    seed: u64,
) -> Result<TrainEnv> {
    let normalization = Normalization::from_keys(schedule.normalize, true);
    let mut env = TrainEnv::new(
        source,
        schedule.num_envs,
        threads,
        normalization,
        schedule.gamma,
    )?;
    env.venv().reset(Some(seed), None)?;
    Ok(env)
}

impl<A: Algorithm> Learner for OffPolicy<A> {
    fn name(&self) -> &'static str {
        A::NAME
    }

    fn cadence(&self) -> Cadence {
        let s = &self.schedule;
        Cadence::new(s.budget, LOG_EVERY, s.learning_starts)
    }

    fn global_step(&self) -> u64 {
        self.global_step
    }

    fn iteration(&self) -> u64 {
        self.iteration
    }

    /// One env step in every env, and one update once past `learning_starts`.
    fn iterate(&mut self) -> Result<()> {
        let mut actions = std::mem::take(&mut self.actions);
        self.act(&mut actions)?;
        self.env.venv().step(&actions)?;
        self.store(&actions);
        self.actions = actions;
        self.global_step += self.schedule.num_envs as u64;
        self.follow_curriculum()?;
        if self.global_step > self.schedule.learning_starts {
            let batch = self.minibatch();
            let (algorithm, rng) = (&mut self.algorithm, &mut self.rng);
            self.pool
                .install(|| algorithm.update(batch, self.iteration, rng))?;
        }
        self.iteration += 1;
        Ok(())
    }

    fn metrics(&mut self, row: &mut Map<String, Value>) {
        if !self.episodes.is_empty() {
            let k = self.episodes.len() as f64;
            let mean = |f: fn(&(f64, f64)) -> f64| self.episodes.iter().map(f).sum::<f64>() / k;
            row.insert("episode_return".into(), json!(mean(|e| e.0)));
            row.insert("episode_length".into(), json!(mean(|e| e.1)));
            self.episodes.clear();
        }
        self.algorithm.metrics(row);
        row.insert("buffer".into(), json!(self.buffer.len()));
    }

    /// Returns of `episodes` episodes of the deterministic policy on fresh envs.
    fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let stats = self.env.stats();
        let mut greedy = self.algorithm.greedy();
        let d = self.obs_dim;
        evaluate(
            &self.source,
            episodes,
            evaluation_seed(self.seed),
            stats.as_ref().and_then(|s| s.obs.as_ref()),
            &mut |obs: &[f32], actions: &mut [f32], _: ActMode| {
                Ok(greedy(obs, obs.len() / d, actions)?)
            },
        )
    }

    fn progress(&self) -> Result<Progress> {
        Progress::of(&self.env, self.global_step, self.iteration, &self.rng)
    }

    fn policy(&self) -> Option<PolicyFile> {
        Some(self.algorithm.policy())
    }

    /// Networks, optimizers and the replay buffer.
    fn save(&self, dir: &Path) -> Result<()> {
        self.algorithm.save(dir)?;
        self.buffer.save(dir)
    }

    fn resume(&mut self, progress: Progress, checkpoint: &Path) -> Result<()> {
        self.algorithm.load(checkpoint)?;
        self.buffer = ReplayBuffer::load(checkpoint, self.buffer.capacity())?;
        if let Some(curriculum) = &self.schedule.reward_curriculum {
            self.stage = curriculum.stage(progress.global_step);
            if self.stage > 0 {
                self.env = self.envs_at(curriculum, self.stage)?;
            }
        }
        self.next_obs = self.env.restore(progress.stats.as_ref(), &progress.envs)?;
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        Ok(())
    }

    fn reward_head(&self) -> Option<&SharedHead> {
        self.env.reward_head()
    }

    fn evaluate_with_reward_from(&mut self, checkpoint: &Path) {
        self.source.reward_weights = Some(checkpoint.to_path_buf());
    }
}
