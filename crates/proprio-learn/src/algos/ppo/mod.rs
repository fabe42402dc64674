//! Proximal policy optimisation (Schulman et al. 2017), shaped after CleanRL's
//! `ppo.py` / `ppo_continuous_action.py`: collect `num_steps` × `num_envs`
//! transitions, compute GAE, run `update_epochs` epochs of clipped updates.

mod config;
mod update;

pub use config::PpoConfig;
pub use update::{Batch, UpdateStats, losses};

use crate::base::adam::adam;
use crate::base::error::{LearnError, Result};
use crate::base::seeds::{evaluation_seed, learner_rng};
use crate::base::store::{load_module, load_optimizer, save_module, save_optimizer};
use crate::base::tensor::{host, matrix, vector};
use crate::env::{EnvSource, Evaluation, Normalization, NormalizerStats, TrainEnv, evaluate};
use crate::estimators::{explained_variance, gae};
use crate::learner::{self, Cadence, Learner};
use crate::nets::acting::{PolicyFile, PolicyNet};
use crate::nets::actor::ControlPolicy;
use crate::nets::actor_critic::ActorCritic;
use crate::nets::head::ActionHead;
use crate::run::Progress;
use crate::run::{RunInfo, to_json};
use burn::module::Module;
use burn::optim::ModuleOptimizer;
use burn::prelude::*;
use proprio::Space;
use proprio::serde_json::{Map, Value, json};
use proprio::{ActMode, EnvRng, memory};
use proprio_reward::SharedHead;
use std::path::Path;
use std::time::Instant;

/// A PPO learner bound to its training envs.
pub struct Ppo {
    cfg: PpoConfig,
    head: ActionHead,
    device: Device,
    agent: ActorCritic,
    optim: ModuleOptimizer,
    /// The update's threads (`update_threads`).
    pool: rayon::ThreadPool,
    env: TrainEnv,
    source: EnvSource,
    seed: u64,
    rng: EnvRng,
    global_step: u64,
    iteration: u64,
    obs_dim: usize,
    next_obs: Vec<f32>,
    next_done: Vec<f32>,
    /// What the last iteration measured, for its metrics row.
    last: Option<Measured>,
}

/// One iteration's episode statistics, losses and schedule, until they are logged.
struct Measured {
    episode_returns: Vec<f64>,
    episode_lengths: Vec<f64>,
    stats: UpdateStats,
    learning_rate: f64,
    explained_variance: f64,
    /// Where the iteration's wall-clock went, s: env steps (physics, rendering), acting, update.
    seconds: [f64; 3],
}

/// Rollout storage `[T, N, ·]` on the host.
struct Rollout {
    obs: Vec<f32>,
    actions: Vec<f32>,
    logprobs: Vec<f32>,
    rewards: Vec<f32>,
    dones: Vec<f32>,
    values: Vec<f32>,
    episode_returns: Vec<f64>,
    episode_lengths: Vec<f64>,
    /// Seconds in env steps and in acting (forward pass, sampling).
    env_s: f64,
    act_s: f64,
}

impl Ppo {
    /// A fresh learner: networks initialised from `seed` on `device`'s backend.
    pub fn new(
        source: EnvSource,
        cfg: PpoConfig,
        seed: u64,
        device: Device,
        threads: Option<usize>,
    ) -> Result<Self> {
        cfg.validate().map_err(LearnError::Config)?;
        let normalization = Normalization::from_keys(cfg.normalize, cfg.normalize_obs);
        let mut env = TrainEnv::new(&source, cfg.num_envs, threads, normalization, cfg.gamma)?;
        env.venv().reset(Some(seed), None)?;
        let spec = env.venv_ref().spec().clone();
        let head = cfg.shape().action_head(&spec.action_space)?;
        let obs_space = &spec.observation_space;
        let obs_dim = obs_space.flat_dim();
        // The rollout on the host and its copy as tensors for the update.
        let floats_per_step = obs_dim + head.action_dim() + 4;
        memory::check(
            &format!("a rollout of {} × {} steps", cfg.num_steps, cfg.num_envs),
            memory::bytes_of(&[cfg.num_steps, cfg.num_envs, floats_per_step], 2 * 4),
        )?;
        let device = device.autodiff();
        let mut rng = learner_rng(seed);
        let agent = ActorCritic::new(obs_space, &head, &cfg.shape(), &device, &mut rng)?;
        let optim = adam(cfg.adam_eps);
        let pool = crate::base::threads::update_pool(cfg.update_threads)?;
        Ok(Self {
            next_obs: env.venv_ref().batch().obs.clone(),
            next_done: vec![0.0; cfg.num_envs],
            cfg,
            head,
            device,
            agent,
            optim,
            pool,
            env,
            source,
            seed,
            rng,
            global_step: 0,
            iteration: 0,
            obs_dim,
            last: None,
        })
    }

    /// The trained agent (for tests and export).
    pub fn agent(&self) -> &ActorCritic {
        &self.agent
    }

    /// Runs the policy for `num_steps` steps in every env, with CleanRL's bookkeeping.
    fn collect(&mut self) -> Result<Rollout> {
        let (n, t, d) = (self.cfg.num_envs, self.cfg.num_steps, self.obs_dim);
        let a = self.head.action_dim();
        let env_dim = self.env.venv_ref().spec().action_space.flat_dim();
        let mut r = Rollout {
            obs: Vec::with_capacity(t * n * d),
            actions: vec![0.0; t * n * a],
            logprobs: vec![0.0; t * n],
            rewards: vec![0.0; t * n],
            dones: Vec::with_capacity(t * n),
            values: Vec::with_capacity(t * n),
            episode_returns: Vec::new(),
            episode_lengths: Vec::new(),
            env_s: 0.0,
            act_s: 0.0,
        };
        let policy = self.agent.valid();
        let infer = policy.actor.device();
        let log_std = match policy.log_std() {
            Some(ls) => host(ls)?,
            None => Vec::new(),
        };
        let mut env_actions = vec![0.0; n * env_dim];
        for step in 0..t {
            self.global_step += n as u64;
            r.obs.extend_from_slice(&self.next_obs);
            r.dones.extend_from_slice(&self.next_done);
            let acting = Instant::now();
            let (params, values) = policy.forward(matrix(&self.next_obs, n, d, &infer));
            let params = host(params)?;
            r.values.extend(host(values)?);
            let p = self.head.param_dim();
            for i in 0..n {
                let k = step * n + i;
                r.logprobs[k] = self.head.sample(
                    &params[i * p..(i + 1) * p],
                    &log_std,
                    &mut self.rng,
                    false,
                    &mut r.actions[k * a..(k + 1) * a],
                    &mut env_actions[i * env_dim..(i + 1) * env_dim],
                );
            }
            r.act_s += acting.elapsed().as_secs_f64();
            let stepping = Instant::now();
            self.env.venv().step(&env_actions)?;
            r.env_s += stepping.elapsed().as_secs_f64();
            let b = self.env.venv_ref().batch();
            // Truncated (not terminated) episodes continue in the value estimate: r += γ V(final obs).
            let cut: Vec<usize> = (0..n)
                .filter(|&i| b.truncated[i] && !b.terminated[i])
                .collect();
            let mut rewards: Vec<f32> = b.reward.clone();
            if !cut.is_empty() {
                let finals: Vec<f32> = cut
                    .iter()
                    .flat_map(|&i| b.final_obs(i).unwrap_or(b.obs(i)).to_vec())
                    .collect();
                let v = host(policy.value(matrix(&finals, cut.len(), d, &infer)))?;
                for (&i, v) in cut.iter().zip(v) {
                    rewards[i] += self.cfg.gamma * v;
                }
            }
            r.rewards[step * n..(step + 1) * n].copy_from_slice(&rewards);
            for i in 0..n {
                self.next_done[i] = f32::from(u8::from(b.done(i)));
                if let Some((Some(ret), Some(len))) = b
                    .episode_info(i)
                    .map(|e| (e.get("episode.return"), e.get("episode.length")))
                {
                    r.episode_returns.push(ret);
                    r.episode_lengths.push(len);
                }
            }
            self.next_obs.copy_from_slice(&b.obs);
        }
        Ok(r)
    }

    /// GAE on the host, then the flattened batch as tensors on the training device,
    /// and the explained variance of the value estimates.
    fn batch(&self, r: &Rollout) -> Result<(Batch, f64)> {
        let (n, d) = (self.cfg.num_envs, self.obs_dim);
        let size = self.cfg.batch_size();
        let policy = self.agent.valid();
        let infer = policy.actor.device();
        let next_value = host(policy.value(matrix(&self.next_obs, n, d, &infer)))?;
        let (advantages, returns) = gae(
            &r.rewards,
            &r.values,
            &r.dones,
            &next_value,
            &self.next_done,
            self.cfg.gamma,
            self.cfg.gae_lambda,
        );
        let explained = explained_variance(&r.values, &returns);
        let dev = &self.device;
        let batch = Batch {
            obs: matrix(&r.obs, size, d, dev),
            actions: matrix(&r.actions, size, self.head.action_dim(), dev),
            logprobs: vector(&r.logprobs, dev),
            advantages: vector(&advantages, dev),
            returns: vector(&returns, dev),
            values: vector(&r.values, dev),
        };
        Ok((batch, explained))
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

impl Learner for Ppo {
    fn name(&self) -> &'static str {
        "PPO"
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

    /// One rollout of `num_steps` in every env, GAE, and `update_epochs` epochs of clipped updates.
    fn iterate(&mut self) -> Result<()> {
        let iterations = self.cfg.total_steps.div_ceil(self.cfg.batch_size() as u64);
        let lr = if self.cfg.anneal_lr {
            (1.0 - self.iteration as f64 / iterations as f64) * self.cfg.learning_rate
        } else {
            self.cfg.learning_rate
        };
        let rollout = self.collect()?;
        let updating = Instant::now();
        let (batch, explained) = self.batch(&rollout)?;
        let (agent, stats) = self.pool.install(|| {
            update::update(
                self.agent.clone(),
                &mut self.optim,
                &self.head,
                &self.cfg,
                &batch,
                lr,
                self.iteration < self.cfg.critic_warmup,
                &mut self.rng,
                &self.device,
            )
        })?;
        self.iteration += 1;
        self.agent = match self.cfg.log_std_cap(self.iteration, iterations) {
            Some(cap) => agent.cap_log_std(cap),
            None => agent,
        };
        self.last = Some(Measured {
            episode_returns: rollout.episode_returns,
            episode_lengths: rollout.episode_lengths,
            stats,
            learning_rate: lr,
            explained_variance: explained,
            seconds: [
                rollout.env_s,
                rollout.act_s,
                updating.elapsed().as_secs_f64(),
            ],
        });
        Ok(())
    }

    fn metrics(&mut self, row: &mut Map<String, Value>) {
        let Some(m) = self.last.take() else {
            return;
        };
        if !m.episode_returns.is_empty() {
            row.insert("episode_return".into(), json!(mean(&m.episode_returns)));
            row.insert("episode_length".into(), json!(mean(&m.episode_lengths)));
        }
        let s = &m.stats;
        row.insert("policy_loss".into(), json!(s.policy_loss));
        row.insert("value_loss".into(), json!(s.value_loss));
        row.insert("entropy".into(), json!(s.entropy));
        row.insert("approx_kl".into(), json!(s.approx_kl));
        row.insert("clip_fraction".into(), json!(s.clip_fraction));
        row.insert("grad_norm".into(), json!(s.grad_norm));
        if let Some(aux) = s.aux_loss {
            row.insert("aux_loss".into(), json!(aux));
        }
        row.insert("explained_variance".into(), json!(m.explained_variance));
        row.insert("learning_rate".into(), json!(m.learning_rate));
        for (key, s) in ["env_ms", "act_ms", "update_ms"].iter().zip(m.seconds) {
            row.insert((*key).into(), json!(s * 1e3));
        }
    }

    /// Deterministic episodes on fresh envs, observations normalised with the frozen statistics.
    fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let policy = self.agent.valid();
        let infer = policy.actor.device();
        let stats = self.env.stats();
        let (d, p, a) = (self.obs_dim, self.head.param_dim(), self.head.action_dim());
        let mut stored = vec![0.0; a];
        let mut rng = self.rng.clone();
        evaluate(
            &self.source,
            episodes,
            evaluation_seed(self.seed),
            stats.as_ref().and_then(|s| s.obs.as_ref()),
            &mut |obs: &[f32], actions: &mut [f32], _: ActMode| {
                let n = obs.len() / d;
                let params = host(policy.params(matrix(obs, n, d, &infer)))?;
                let env_dim = actions.len() / n;
                for i in 0..n {
                    self.head.sample(
                        &params[i * p..(i + 1) * p],
                        &[],
                        &mut rng,
                        true,
                        &mut stored,
                        &mut actions[i * env_dim..(i + 1) * env_dim],
                    );
                }
                Ok(())
            },
        )
    }

    fn progress(&self) -> Result<Progress> {
        Progress::of(&self.env, self.global_step, self.iteration, &self.rng)
    }

    fn policy(&self) -> Option<PolicyFile> {
        Some(PolicyFile {
            net: PolicyNet::ActorCritic {
                shape: self.cfg.shape(),
            },
            weights: "model.bpk".into(),
        })
    }

    fn save(&self, dir: &Path) -> Result<()> {
        save_module(&self.agent, dir, "model.bpk")?;
        save_optimizer(&self.optim, dir, "optimizer.bpk")
    }

    fn resume(&mut self, progress: Progress, checkpoint: &Path) -> Result<()> {
        self.agent = load_module(self.agent.clone(), &checkpoint.join("model.bpk"))?;
        self.optim = load_optimizer(self.optim.clone(), checkpoint, "optimizer.bpk")?;
        self.next_obs = self.env.restore(progress.stats.as_ref(), &progress.envs)?;
        self.next_done.fill(0.0);
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        Ok(())
    }

    /// The actor-critic starts as the given weights, and the observation
    /// normaliser from the statistics those weights were trained with.
    fn init_from(&mut self, weights: &Path, stats: Option<&NormalizerStats>) -> Result<()> {
        let ours = self.env.stats().is_some_and(|s| s.obs.is_some());
        match stats.filter(|s| s.obs.is_some()) {
            Some(theirs) if ours => self.env.set_stats(theirs),
            None if !ours => {}
            _ => {
                return Err(LearnError::Config(
                    "--init: one run normalises observations and the other does not; set normalize_obs alike".into(),
                ));
            }
        }
        self.agent = match load_module(self.agent.clone(), weights) {
            Ok(agent) => agent,
            // A clone's or the group learner's control policy holds the same
            // actor-critic (its critic never trained: `critic_warmup` trains it).
            Err(ours) => {
                let policy =
                    ControlPolicy::around(self.agent.clone(), self.head.clone(), self.obs_dim);
                load_module(policy, weights).map_err(|_| ours)?.nets
            }
        };
        Ok(())
    }

    fn reward_head(&self) -> Option<&SharedHead> {
        self.env.reward_head()
    }

    fn evaluate_with_reward_from(&mut self, checkpoint: &Path) {
        self.source.reward_weights = Some(checkpoint.to_path_buf());
    }
}

/// CleanRL's defaults for `action_space`: `ppo_continuous_action.py` for boxes, `ppo.py` otherwise.
pub fn defaults(action_space: &Space) -> Result<Value> {
    let cfg = match action_space {
        Space::Box { .. } => PpoConfig::continuous(),
        _ => PpoConfig::discrete(),
    };
    to_json(&cfg)
}

/// The learner a run describes.
pub fn build(info: &RunInfo) -> Result<Box<dyn Learner>> {
    learner::build(info, Ppo::new)
}
