//! ArCHer (Zhou et al. 2024, arXiv:2402.19446): a hierarchical actor-critic
//! for multi-turn answers. Two learners run at once: an off-policy,
//! utterance-level critic (double Q and V with Polyak-averaged targets,
//! trained from a replay of turns) and a token-level actor trained by
//! policy gradient with that critic's advantage, less its own token baseline.
//!
//! One iteration, top to bottom: every env takes one turn with the sampling
//! actor and the turns go into the replay ([`Archer::take_turns`]); past
//! `learning_starts`, `critic_updates` critic steps ([`update::critic_step`],
//! each followed by a Polyak step of the targets); past `actor_starts`,
//! `actor_updates` actor steps ([`update::actor_step`]).
//!
//! A turn is one env step, its action the whole answer: in twenty questions
//! and guess-number that is the game's turn. In a puzzle, whose turn is a
//! run of one-token steps, each token step is valued as a turn of its own.

mod config;
pub mod update;

pub use config::ArcherConfig;
pub use update::{ActorStats, CriticStats, actor_step, critic_step, q_targets};

use crate::base::adam::{BURN_EPSILON, adam};
use crate::base::error::{LearnError, Result};
use crate::base::polyak::polyak;
use crate::base::seeds::{evaluation_seed, learner_rng};
use crate::base::store::{load_module, load_optimizer, save_module, save_optimizer};
use crate::env::{EnvSource, Evaluation, Normalization, NormalizerStats, TrainEnv, evaluate};
use crate::learner::{self, Cadence, Learner};
use crate::nets::acting::{PolicyFile, PolicyNet};
use crate::nets::actor::Actor;
use crate::nets::kv_cache::KvCache;
use crate::nets::sequence::SequencePolicy;
use crate::nets::turn_critic::TurnCritic;
use crate::replay::ReplayBuffer;
use crate::run::{Progress, RunInfo, to_json};
use burn::optim::ModuleOptimizer;
use burn::prelude::*;
use proprio::serde_json::{Map, Value, json};
use proprio::{ActMode, EnvRng, Space};
use proprio_reward::SharedHead;
use std::path::Path;

/// An ArCHer learner bound to its training envs.
pub struct Archer {
    cfg: ArcherConfig,
    device: Device,
    actor: SequencePolicy,
    critic: TurnCritic,
    /// The target critics, off the autodiff graph.
    target: TurnCritic,
    actor_optim: ModuleOptimizer,
    critic_optim: ModuleOptimizer,
    env: TrainEnv,
    source: EnvSource,
    seed: u64,
    rng: EnvRng,
    global_step: u64,
    iteration: u64,
    obs_dim: usize,
    buffer: ReplayBuffer,
    /// The observation every env will answer next.
    obs: Vec<f32>,
    /// Return, length and success of the episodes finished since the last row.
    episodes: Vec<(f64, f64, Option<bool>)>,
    critic_stats: Vec<CriticStats>,
    actor_stats: Vec<ActorStats>,
}

impl Archer {
    /// A fresh learner: envs reset with `seed`, actor and critics drawn from it on `device`.
    pub fn new(
        source: EnvSource,
        cfg: ArcherConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        let mut env = TrainEnv::new(
            &source,
            cfg.num_envs,
            threads,
            Normalization::None,
            cfg.gamma,
        )?;
        env.venv().reset(Some(seed), None)?;
        let spec = env.venv_ref().spec().clone();
        if !matches!(spec.action_space, Space::Tokens { .. }) {
            return Err(LearnError::Config(format!(
                "ArCHer answers in tokens; this env acts in {}",
                spec.action_space
            )));
        }
        let device = device.autodiff();
        let mut rng = learner_rng(seed);
        let (obs_space, action_space) = (&spec.observation_space, &spec.action_space);
        let shape = cfg.shape();
        let actor = SequencePolicy::new(obs_space, action_space, &shape, &device, &mut rng)?;
        let critic = TurnCritic::new(obs_space, action_space, &shape, &device, &mut rng)?;
        let (obs_dim, action_dim) = (obs_space.flat_dim(), action_space.flat_dim());
        let capacity = cfg.buffer_size.min(cfg.total_steps as usize + cfg.num_envs);
        Ok(Self {
            target: critic.valid(),
            obs: env.venv_ref().batch().obs.clone(),
            buffer: ReplayBuffer::new(capacity, obs_dim, action_dim)?,
            actor_optim: adam(BURN_EPSILON),
            critic_optim: adam(BURN_EPSILON),
            cfg,
            device,
            actor,
            critic,
            env,
            source,
            seed,
            rng,
            global_step: 0,
            iteration: 0,
            obs_dim,
            episodes: Vec::new(),
            critic_stats: Vec::new(),
            actor_stats: Vec::new(),
        })
    }

    /// Every env answers its observation with the sampling actor; the turns go into the replay.
    fn take_turns(&mut self) -> Result<()> {
        let n = self.cfg.num_envs;
        let sampled =
            self.actor
                .valid()
                .sample(&self.obs, n, self.cfg.temperature, false, &mut self.rng)?;
        self.env.venv().step(&sampled.actions)?;
        let b = self.env.venv_ref().batch();
        let (d, a) = (self.obs_dim, sampled.actions.len() / n);
        for i in 0..n {
            // The true next observation: the final one when the episode ended.
            let next = b.final_obs(i).unwrap_or(b.obs(i));
            self.buffer.push(
                &self.obs[i * d..(i + 1) * d],
                &sampled.actions[i * a..(i + 1) * a],
                b.reward[i],
                next,
                b.terminated[i],
            );
            let Some(info) = b.episode_info(i) else {
                continue;
            };
            if let (Some(r), Some(l)) = (info.get("episode.return"), info.get("episode.length")) {
                self.episodes
                    .push((r, l, info.get("success").map(|s| s > 0.0)));
            }
        }
        self.obs.copy_from_slice(&b.obs);
        self.global_step += n as u64;
        Ok(())
    }

    /// `critic_updates` critic steps, each followed by a Polyak step of the targets.
    fn update_critic(&mut self) -> Result<()> {
        let b = self.cfg.batch_size;
        for _ in 0..self.cfg.critic_updates {
            let batch = self.buffer.sample(b, &mut self.rng);
            let (policy_answers, _) = self.actor.valid().generate(
                &batch.obs,
                b,
                self.cfg.temperature,
                false,
                &mut self.rng,
            )?;
            let (critic, stats) = critic_step(
                self.critic.clone(),
                &self.target,
                &mut self.critic_optim,
                &batch,
                &policy_answers,
                &self.cfg,
                &self.device,
            )?;
            self.critic = critic;
            self.target = polyak(&self.critic.valid(), self.target.clone(), self.cfg.tau);
            self.critic_stats.push(stats);
        }
        Ok(())
    }

    /// `actor_updates` actor steps on replayed observations.
    fn update_actor(&mut self) -> Result<()> {
        let b = self.cfg.batch_size;
        let critic = self.critic.valid();
        for _ in 0..self.cfg.actor_updates {
            let batch = self.buffer.sample(b, &mut self.rng);
            let (actor, stats) = actor_step(
                self.actor.clone(),
                &critic,
                &mut self.actor_optim,
                &batch.obs,
                b,
                &self.cfg,
                &mut self.rng,
                &self.device,
            )?;
            self.actor = actor;
            self.actor_stats.push(stats);
        }
        Ok(())
    }
}

/// The mean of `f` over `items`, into `row` under `key` (nothing when empty).
fn mean_into<T>(row: &mut Map<String, Value>, key: &str, items: &[T], f: impl Fn(&T) -> f64) {
    if !items.is_empty() {
        let mean = items.iter().map(f).sum::<f64>() / items.len() as f64;
        row.insert(key.into(), json!(mean));
    }
}

impl Learner for Archer {
    fn name(&self) -> &'static str {
        "ArCHer"
    }

    fn cadence(&self) -> Cadence {
        Cadence::new(
            self.cfg.budget(),
            self.cfg.log_every,
            self.cfg.learning_starts,
        )
    }

    fn global_step(&self) -> u64 {
        self.global_step
    }

    fn iteration(&self) -> u64 {
        self.iteration
    }

    /// One turn in every env, then the critic's and the actor's steps once they are due.
    fn iterate(&mut self) -> Result<()> {
        self.take_turns()?;
        if self.global_step > self.cfg.learning_starts {
            self.update_critic()?;
        }
        if self.global_step > self.cfg.actor_starts {
            self.update_actor()?;
        }
        self.iteration += 1;
        Ok(())
    }

    fn metrics(&mut self, row: &mut Map<String, Value>) {
        let episodes = std::mem::take(&mut self.episodes);
        mean_into(row, "episode_return", &episodes, |e| e.0);
        mean_into(row, "episode_length", &episodes, |e| e.1);
        if episodes.iter().all(|e| e.2.is_some()) {
            mean_into(row, "success_rate", &episodes, |e| {
                f64::from(u8::from(e.2 == Some(true)))
            });
        }
        let critic = std::mem::take(&mut self.critic_stats);
        mean_into(row, "q_loss", &critic, |s| f64::from(s.q_loss));
        mean_into(row, "v_loss", &critic, |s| f64::from(s.v_loss));
        mean_into(row, "q_mean", &critic, |s| f64::from(s.q_mean));
        let actor = std::mem::take(&mut self.actor_stats);
        mean_into(row, "policy_loss", &actor, |s| f64::from(s.pg_loss));
        mean_into(row, "baseline_loss", &actor, |s| f64::from(s.baseline_loss));
        mean_into(row, "advantage", &actor, |s| f64::from(s.advantage));
        mean_into(row, "entropy", &actor, |s| f64::from(s.entropy));
        row.insert("buffer".into(), json!(self.buffer.len()));
    }

    /// Greedy answers on fresh envs (their own seed stream).
    fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let actor = self.actor.valid();
        let mut rng = self.rng.clone();
        let mut cache = KvCache::default();
        let (temperature, d) = (self.cfg.temperature, self.obs_dim);
        evaluate(
            &self.source,
            episodes,
            evaluation_seed(self.seed),
            None,
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
        Progress::of(&self.env, self.global_step, self.iteration, &self.rng)
    }

    fn policy(&self) -> Option<PolicyFile> {
        Some(PolicyFile {
            net: PolicyNet::Sequence {
                shape: self.cfg.shape(),
                temperature: self.cfg.temperature,
            },
            weights: "model.bpk".into(),
        })
    }

    /// Actor, critics, targets, both optimizers and the replay.
    fn save(&self, dir: &Path) -> Result<()> {
        save_module(&self.actor, dir, "model.bpk")?;
        save_module(&self.critic, dir, "critic.bpk")?;
        save_module(&self.target, dir, "target.bpk")?;
        save_optimizer(&self.actor_optim, dir, "actor_optimizer.bpk")?;
        save_optimizer(&self.critic_optim, dir, "critic_optimizer.bpk")?;
        self.buffer.save(dir)
    }

    fn resume(&mut self, progress: Progress, checkpoint: &Path) -> Result<()> {
        self.actor = load_module(self.actor.clone(), &checkpoint.join("model.bpk"))?;
        self.critic = load_module(self.critic.clone(), &checkpoint.join("critic.bpk"))?;
        self.target = load_module(self.target.clone(), &checkpoint.join("target.bpk"))?;
        let optim = self.actor_optim.clone();
        self.actor_optim = load_optimizer(optim, checkpoint, "actor_optimizer.bpk")?;
        let optim = self.critic_optim.clone();
        self.critic_optim = load_optimizer(optim, checkpoint, "critic_optimizer.bpk")?;
        self.buffer = ReplayBuffer::load(checkpoint, self.buffer.capacity())?;
        self.obs = self.env.restore(progress.stats.as_ref(), &progress.envs)?;
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        Ok(())
    }

    /// The actor starts as the given weights (a clone, a GRPO run); the critics learn from scratch.
    fn init_from(&mut self, weights: &Path, stats: Option<&NormalizerStats>) -> Result<()> {
        if stats.is_some_and(|s| s.obs.is_some()) {
            return Err(LearnError::Config(
                "--init: that run normalised its observations and ArCHer reads them raw".into(),
            ));
        }
        self.actor = load_module(self.actor.clone(), weights)?;
        Ok(())
    }

    fn reward_head(&self) -> Option<&SharedHead> {
        self.env.reward_head()
    }

    fn evaluate_with_reward_from(&mut self, checkpoint: &Path) {
        self.source.reward_weights = Some(checkpoint.to_path_buf());
    }
}

/// ArCHer's defaults.
pub fn defaults(_: &Space) -> Result<Value> {
    to_json(&ArcherConfig::default())
}

/// The learner a run describes.
pub fn build(info: &RunInfo) -> Result<Box<dyn Learner>> {
    learner::build(info, Archer::new)
}
