//! Soft actor-critic (Haarnoja et al. 2018), shaped after CleanRL's
//! `sac_continuous_action.py`: twin Q critics with Polyak-averaged targets,
//! a tanh-squashed Gaussian actor with delayed updates, autotuned temperature.

mod config;
mod nets;
mod replay;

pub use config::SacConfig;
pub use nets::{Actor, Critics, Sampled, Temperature, box_affine, squash};
pub use replay::ReplayBuffer;

use crate::envs::{EnvSource, Evaluation, TrainEnv, evaluate};
use crate::error::{LearnError, Result};
use crate::head::standard_normal;
use crate::run::{Progress, Run, checkpoint_error, load_module, next_multiple};
use crate::tensor::{host, matrix};
use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams, ModuleOptimizer};
use burn::prelude::*;
use proprio::rand::RngExt;
use proprio::serde_json::{Map, Value, json};
use proprio::{EnvRng, Space, episode_rng};
use std::path::Path;

/// Env steps between metrics rows.
const LOG_EVERY: u64 = 1_000;

/// A SAC learner bound to its training envs.
pub struct Sac {
    cfg: SacConfig,
    device: Device,
    actor: Actor,
    critics: Critics,
    target: Critics,
    temperature: Temperature,
    actor_optim: ModuleOptimizer,
    q_optim: ModuleOptimizer,
    alpha_optim: ModuleOptimizer,
    env: TrainEnv,
    source: EnvSource,
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
    losses: (f32, f32, f32),
}

impl Sac {
    /// A fresh learner: networks initialised from `seed` on `device`'s backend.
    pub fn new(
        source: EnvSource,
        cfg: SacConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        if source.obs.mode != proprio::render::ObsMode::State {
            return Err(LearnError::Config(format!(
                "SAC has no image encoder yet: train --obs {} with --algo ppo",
                source.obs.mode
            )));
        }
        let mut env = TrainEnv::new(&source, cfg.num_envs, threads, cfg.normalize, cfg.gamma)?;
        env.venv().reset(Some(seed), None)?;
        let spec = env.venv_ref().spec().clone();
        let Space::Box { low, high } = spec.action_space.clone() else {
            return Err(LearnError::Config(format!(
                "SAC needs a box action space, not {}",
                spec.action_space
            )));
        };
        if low.iter().chain(&high).any(|v| !v.is_finite()) {
            return Err(LearnError::Config(
                "SAC needs finite action bounds to squash into".into(),
            ));
        }
        let (obs_dim, action_dim) = (spec.observation_space.flat_dim(), low.len());
        let device = device.autodiff();
        let mut rng = episode_rng(seed, u64::MAX - 1, 0);
        let actor = Actor::new(obs_dim, action_dim, &cfg.hidden, &device, &mut rng);
        let critics = Critics::new(obs_dim, action_dim, &cfg.hidden, &device, &mut rng);
        let target = critics.polyak_into(critics.clone(), 1.0);
        let capacity = cfg.buffer_size.min(cfg.total_steps as usize + cfg.num_envs);
        Ok(Self {
            temperature: Temperature::new(cfg.alpha, &device),
            actor_optim: AdamConfig::new().init(),
            q_optim: AdamConfig::new().init(),
            alpha_optim: AdamConfig::new().init(),
            next_obs: env.venv_ref().batch().obs.clone(),
            buffer: ReplayBuffer::new(capacity, obs_dim, action_dim)?,
            rng,
            cfg,
            device,
            actor,
            critics,
            target,
            env,
            source,
            seed,
            global_step: 0,
            iteration: 0,
            obs_dim,
            action_dim,
            low,
            high,
            episodes: Vec::new(),
            losses: (0.0, 0.0, 0.0),
        })
    }

    fn scale_bias(&self, device: &Device) -> (Tensor<2>, Tensor<2>) {
        let (scale, bias) = box_affine(&self.low, &self.high);
        (
            matrix(&scale, 1, self.action_dim, device),
            matrix(&bias, 1, self.action_dim, device),
        )
    }

    fn noise(&mut self, rows: usize) -> Tensor<2> {
        let eps: Vec<f32> = (0..rows * self.action_dim)
            .map(|_| standard_normal(&mut self.rng))
            .collect();
        matrix(&eps, rows, self.action_dim, &self.device)
    }

    /// Trains until `cfg.total_steps`, one env step (and one gradient step) per iteration.
    pub fn train(&mut self, run: &mut Run) -> Result<()> {
        let n = self.cfg.num_envs;
        let mut actions = vec![0.0; n * self.action_dim];
        let (mut log_at, mut eval_at) = (
            next_multiple(self.global_step, LOG_EVERY),
            next_multiple(self.global_step, self.cfg.eval_every),
        );
        while self.global_step < self.cfg.total_steps {
            self.act(&mut actions)?;
            self.env.venv().step(&actions)?;
            let b = self.env.venv_ref().batch();
            let (d, a) = (self.obs_dim, self.action_dim);
            for i in 0..n {
                // The true next observation: the final one when the episode ended (CleanRL's real_next_obs).
                let next = b.final_obs(i).unwrap_or(b.obs(i));
                let obs = &self.next_obs[i * d..(i + 1) * d];
                self.buffer.push(
                    obs,
                    &actions[i * a..(i + 1) * a],
                    b.reward[i],
                    next,
                    b.terminated[i],
                );
                if let (Some(r), Some(l)) = (
                    b.infos[i].get("episode.return"),
                    b.infos[i].get("episode.length"),
                ) {
                    self.episodes.push((r, l));
                }
            }
            self.next_obs.copy_from_slice(&b.obs);
            self.global_step += n as u64;
            if self.global_step > self.cfg.learning_starts {
                self.update()?;
            }
            self.iteration += 1;
            let done = self.global_step >= self.cfg.total_steps;
            if done || self.global_step >= log_at {
                let mut row = self.row(run);
                if done || self.global_step >= eval_at {
                    self.evaluate(self.cfg.eval_episodes)?.record(&mut row);
                    eval_at = next_multiple(self.global_step, self.cfg.eval_every);
                    self.save(run)?;
                }
                run.log(row)?;
                log_at = next_multiple(self.global_step, LOG_EVERY);
            }
        }
        Ok(())
    }

    /// Uniform random actions before `learning_starts`, policy samples after.
    fn act(&mut self, actions: &mut [f32]) -> Result<()> {
        let a = self.action_dim;
        if self.global_step < self.cfg.learning_starts {
            for row in actions.chunks_exact_mut(a) {
                for ((x, lo), hi) in row.iter_mut().zip(&self.low).zip(&self.high) {
                    *x = lo + (hi - lo) * self.rng.random::<f32>();
                }
            }
            return Ok(());
        }
        let n = self.cfg.num_envs;
        let obs = matrix(&self.next_obs, n, self.obs_dim, &self.device);
        let eps = self.noise(n);
        let (scale, bias) = self.scale_bias(&self.device);
        let sampled = self.actor.sample(obs, eps, scale, bias);
        actions.copy_from_slice(&host(sampled.action.detach())?);
        Ok(())
    }

    /// One critic step, and every `policy_frequency` steps that many actor (and temperature) steps.
    fn update(&mut self) -> Result<()> {
        let cfg = &self.cfg;
        let (b, d, a) = (cfg.batch_size, self.obs_dim, self.action_dim);
        let s = self.buffer.sample(b, &mut self.rng);
        let dev = self.device.clone();
        let obs = matrix(&s.obs, b, d, &dev);
        let actions = matrix(&s.actions, b, a, &dev);
        let rewards = matrix(&s.rewards, b, 1, &dev);
        let next_obs = matrix(&s.next_obs, b, d, &dev);
        let not_done = matrix(&s.terminated, b, 1, &dev).neg().add_scalar(1.0);
        let (scale, bias) = self.scale_bias(&dev);
        let alpha = self.temperature.alpha().into_scalar::<f32>();
        let (policy_frequency, gamma, target_entropy) =
            (cfg.policy_frequency, cfg.gamma, -(a as f32));

        let eps = self.noise(b);
        let next = self
            .actor
            .sample(next_obs.clone(), eps, scale.clone(), bias.clone());
        let (q1_next, q2_next) = self.target.forward(next_obs, next.action);
        let soft_next = q1_next.min_pair(q2_next) - next.log_prob.mul_scalar(alpha);
        let target_q = (rewards + not_done * soft_next.mul_scalar(gamma)).detach();
        let (q1, q2) = self.critics.forward(obs.clone(), actions);
        let q_loss = (q1 - target_q.clone()).square().mean() + (q2 - target_q).square().mean();
        self.losses.0 = q_loss.clone().into_scalar::<f32>();
        if !self.losses.0.is_finite() {
            return Err(LearnError::Diverged(format!(
                "SAC critic loss is {}",
                self.losses.0
            )));
        }
        let grads = GradientsParams::from_grads(q_loss.backward(), &self.critics);
        self.critics = self
            .q_optim
            .step(self.cfg.q_lr, self.critics.clone(), grads);

        if self.iteration.is_multiple_of(policy_frequency) {
            for _ in 0..policy_frequency {
                let alpha = self.temperature.alpha().into_scalar::<f32>();
                let eps = self.noise(b);
                let pi = self
                    .actor
                    .sample(obs.clone(), eps, scale.clone(), bias.clone());
                let (q1_pi, q2_pi) = self.critics.forward(obs.clone(), pi.action);
                let actor_loss = (pi.log_prob.mul_scalar(alpha) - q1_pi.min_pair(q2_pi)).mean();
                self.losses.1 = actor_loss.clone().into_scalar::<f32>();
                let grads = GradientsParams::from_grads(actor_loss.backward(), &self.actor);
                self.actor = self
                    .actor_optim
                    .step(self.cfg.policy_lr, self.actor.clone(), grads);
                if self.cfg.autotune {
                    let eps = self.noise(b);
                    let log_prob = self
                        .actor
                        .sample(obs.clone(), eps, scale.clone(), bias.clone())
                        .log_prob
                        .detach();
                    let alpha_loss = (self.temperature.alpha().unsqueeze::<2>().neg()
                        * log_prob.add_scalar(target_entropy))
                    .mean();
                    self.losses.2 = alpha_loss.clone().into_scalar::<f32>();
                    let grads =
                        GradientsParams::from_grads(alpha_loss.backward(), &self.temperature);
                    self.temperature =
                        self.alpha_optim
                            .step(self.cfg.q_lr, self.temperature.clone(), grads);
                }
            }
        }
        if self
            .iteration
            .is_multiple_of(self.cfg.target_network_frequency)
        {
            self.target = self.critics.polyak_into(self.target.clone(), self.cfg.tau);
        }
        Ok(())
    }

    fn row(&mut self, run: &Run) -> Map<String, Value> {
        let elapsed = run.elapsed();
        let mut row = Map::new();
        row.insert("global_step".into(), json!(self.global_step));
        row.insert("iteration".into(), json!(self.iteration));
        row.insert("time_s".into(), json!(elapsed));
        row.insert(
            "sps".into(),
            json!(self.global_step as f64 / elapsed.max(1e-9)),
        );
        if !self.episodes.is_empty() {
            let k = self.episodes.len() as f64;
            row.insert(
                "episode_return".into(),
                json!(self.episodes.iter().map(|e| e.0).sum::<f64>() / k),
            );
            row.insert(
                "episode_length".into(),
                json!(self.episodes.iter().map(|e| e.1).sum::<f64>() / k),
            );
            self.episodes.clear();
        }
        row.insert("q_loss".into(), json!(self.losses.0));
        row.insert("actor_loss".into(), json!(self.losses.1));
        row.insert("alpha_loss".into(), json!(self.losses.2));
        row.insert(
            "alpha".into(),
            json!(self.temperature.alpha().into_scalar::<f32>()),
        );
        row.insert("buffer".into(), json!(self.buffer.len()));
        row
    }

    /// Returns of `episodes` episodes of the deterministic policy on fresh envs.
    pub fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let actor = self.actor.valid();
        let infer = actor_device(&actor);
        let (scale, bias) = self.scale_bias(&infer);
        let stats = self.env.stats();
        let d = self.obs_dim;
        evaluate(
            &self.source,
            episodes,
            self.seed.wrapping_add(1_000_003),
            stats.as_ref().map(|s| &s.obs),
            |obs, n, actions| {
                let action = actor.mode(matrix(obs, n, d, &infer), scale.clone(), bias.clone());
                actions.copy_from_slice(&host(action)?);
                Ok(())
            },
        )
    }

    /// Writes networks, optimizers, replay buffer and progress to the run's checkpoint.
    pub fn save(&self, run: &Run) -> Result<()> {
        let progress =
            self.env
                .progress(self.global_step, self.iteration, run.elapsed(), &self.rng)?;
        run.save_checkpoint(&progress, |dir| {
            let save = |name: &str, f: &dyn Fn(&Path) -> std::result::Result<(), burn::store::RecordError>| {
                let path = dir.join(name);
                f(&path).map_err(checkpoint_error(&path))
            };
            save("actor.bpk", &|p| self.actor.clone().save_file(p))?;
            save("critics.bpk", &|p| self.critics.clone().save_file(p))?;
            save("target.bpk", &|p| self.target.clone().save_file(p))?;
            save("temperature.bpk", &|p| self.temperature.clone().save_file(p))?;
            save("actor_optimizer.bpk", &|p| self.actor_optim.save(p))?;
            save("q_optimizer.bpk", &|p| self.q_optim.save(p))?;
            save("alpha_optimizer.bpk", &|p| self.alpha_optim.save(p))?;
            crate::run::write_json(&dir.join("replay.json"), &self.buffer)
        })
    }

    /// Continues from a checkpoint written by [`Sac::save`].
    pub fn resume(mut self, progress: Progress, checkpoint: &Path) -> Result<Self> {
        self.actor = load_module(self.actor, &checkpoint.join("actor.bpk"))?;
        self.critics = load_module(self.critics, &checkpoint.join("critics.bpk"))?;
        self.target = load_module(self.target, &checkpoint.join("target.bpk"))?;
        self.temperature = load_module(self.temperature, &checkpoint.join("temperature.bpk"))?;
        let load_optim = |o: ModuleOptimizer, name: &str| {
            let path = checkpoint.join(name);
            o.load(&path).map_err(checkpoint_error(&path))
        };
        self.actor_optim = load_optim(self.actor_optim, "actor_optimizer.bpk")?;
        self.q_optim = load_optim(self.q_optim, "q_optimizer.bpk")?;
        self.alpha_optim = load_optim(self.alpha_optim, "alpha_optimizer.bpk")?;
        self.buffer = crate::run::read_json(&checkpoint.join("replay.json"))?;
        self.next_obs = self.env.restore(&progress)?;
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        Ok(self)
    }
}

fn actor_device(actor: &Actor) -> Device {
    actor.devices().into_iter().next().unwrap_or_default()
}
