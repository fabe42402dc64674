//! Proximal policy optimisation (Schulman et al. 2017), shaped after CleanRL's
//! `ppo.py` / `ppo_continuous_action.py`: collect `num_steps` × `num_envs`
//! transitions, compute GAE, run `update_epochs` epochs of clipped updates.

mod agent;
mod config;
mod update;

pub use agent::{ActorCritic, AgentShape};
pub use config::PpoConfig;
pub use update::{Batch, UpdateStats, clipped_surrogate, gae, losses};

use crate::envs::{EnvSource, Evaluation, Normalization, TrainEnv, evaluate};
use crate::error::{LearnError, Result};
use crate::head::ActionHead;
use crate::run::{Progress, Run, checkpoint_error, load_module, next_multiple};
use crate::tensor::{host, matrix, vector};
use burn::module::Module;
use burn::optim::{AdamConfig, ModuleOptimizer};
use burn::prelude::*;
use proprio::serde_json::{Map, Value, json};
use proprio::{EnvRng, episode_rng, memory};

/// A PPO learner bound to its training envs.
pub struct Ppo {
    cfg: PpoConfig,
    head: ActionHead,
    device: Device,
    agent: ActorCritic,
    optim: ModuleOptimizer,
    env: TrainEnv,
    source: EnvSource,
    seed: u64,
    rng: EnvRng,
    global_step: u64,
    iteration: u64,
    obs_dim: usize,
    next_obs: Vec<f32>,
    next_done: Vec<f32>,
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
        let head = ActionHead::for_space(&spec.action_space)?;
        let obs_space = &spec.observation_space;
        let obs_dim = obs_space.flat_dim();
        // The rollout on the host and its copy as tensors for the update.
        let floats_per_step = obs_dim + head.action_dim() + 4;
        memory::check(
            &format!("a rollout of {} × {} steps", cfg.num_steps, cfg.num_envs),
            memory::bytes_of(&[cfg.num_steps, cfg.num_envs, floats_per_step], 2 * 4),
        )?;
        let device = device.autodiff();
        let mut rng = episode_rng(seed, u64::MAX - 1, 0);
        let agent = ActorCritic::new(obs_space, &head, &cfg.shape(), &device, &mut rng)?;
        let optim = AdamConfig::new().with_epsilon(cfg.adam_eps).init();
        Ok(Self {
            next_obs: env.venv_ref().batch().obs.clone(),
            next_done: vec![0.0; cfg.num_envs],
            cfg,
            head,
            device,
            agent,
            optim,
            env,
            source,
            seed,
            rng,
            global_step: 0,
            iteration: 0,
            obs_dim,
        })
    }

    /// Continues from a checkpoint written by [`Ppo::save`].
    pub fn resume(mut self, progress: Progress, checkpoint: &std::path::Path) -> Result<Self> {
        self.agent = load_module(self.agent, &checkpoint.join("model.bpk"))?;
        let optimizer = checkpoint.join("optimizer.bpk");
        self.optim = self
            .optim
            .load(&optimizer)
            .map_err(checkpoint_error(&optimizer))?;
        self.next_obs = self.env.restore(&progress)?;
        self.env.load_reward_model(checkpoint)?;
        self.next_done.fill(0.0);
        self.rng = progress.rng;
        self.global_step = progress.global_step;
        self.iteration = progress.iteration;
        Ok(self)
    }

    /// The trained agent (for tests and export).
    pub fn agent(&self) -> &ActorCritic {
        &self.agent
    }

    /// Trains until `cfg.total_steps`, logging every rollout and checkpointing after every evaluation.
    pub fn train(&mut self, run: &mut Run) -> Result<()> {
        self.source.reward_weights = Some(run.checkpoint_dir());
        let iterations = self.cfg.total_steps.div_ceil(self.cfg.batch_size() as u64);
        let mut next_eval = next_multiple(self.global_step, self.cfg.eval_every);
        while self.iteration < iterations {
            let lr = if self.cfg.anneal_lr {
                (1.0 - self.iteration as f64 / iterations as f64) * self.cfg.learning_rate
            } else {
                self.cfg.learning_rate
            };
            let rollout = self.collect()?;
            let (batch, explained) = self.batch(&rollout)?;
            let agent = self.agent.clone();
            let (agent, stats) = update::update(
                agent,
                &mut self.optim,
                &self.head,
                &self.cfg,
                &batch,
                lr,
                &mut self.rng,
                &self.device,
            )?;
            self.iteration += 1;
            self.agent = match self.cfg.log_std_cap(self.iteration, iterations) {
                Some(cap) => agent.cap_log_std(cap),
                None => agent,
            };

            let mut row = self.row(run, &rollout, &stats, lr, explained);
            let last = self.iteration == iterations;
            if last || self.global_step >= next_eval {
                // Saved first: evaluation pays the reward model the checkpoint holds.
                self.save(run)?;
                self.evaluate(self.cfg.eval_episodes)?.record(&mut row);
                next_eval = next_multiple(self.global_step, self.cfg.eval_every);
            }
            run.log(row)?;
        }
        Ok(())
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
            self.env.venv().step(&env_actions)?;
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
                if let (Some(ret), Some(len)) = (
                    b.infos[i].get("episode.return"),
                    b.infos[i].get("episode.length"),
                ) {
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

    fn row(
        &self,
        run: &Run,
        r: &Rollout,
        s: &UpdateStats,
        lr: f64,
        explained: f64,
    ) -> Map<String, Value> {
        let elapsed = run.elapsed();
        let mut row = Map::new();
        row.insert("global_step".into(), json!(self.global_step));
        row.insert("iteration".into(), json!(self.iteration));
        row.insert("time_s".into(), json!(elapsed));
        row.insert(
            "sps".into(),
            json!(self.global_step as f64 / elapsed.max(1e-9)),
        );
        if !r.episode_returns.is_empty() {
            row.insert("episode_return".into(), json!(mean(&r.episode_returns)));
            row.insert("episode_length".into(), json!(mean(&r.episode_lengths)));
        }
        row.insert("policy_loss".into(), json!(s.policy_loss));
        row.insert("value_loss".into(), json!(s.value_loss));
        row.insert("entropy".into(), json!(s.entropy));
        row.insert("approx_kl".into(), json!(s.approx_kl));
        row.insert("clip_fraction".into(), json!(s.clip_fraction));
        row.insert("grad_norm".into(), json!(s.grad_norm));
        if let Some(aux) = s.aux_loss {
            row.insert("aux_loss".into(), json!(aux));
        }
        row.insert("explained_variance".into(), json!(explained));
        row.insert("learning_rate".into(), json!(lr));
        self.env.record_reward_cost(&mut row, elapsed);
        row
    }

    /// `episodes` deterministic episodes on fresh envs (their own seed stream).
    pub fn evaluate(&self, episodes: usize) -> Result<Evaluation> {
        let policy = self.agent.valid();
        let infer = policy.actor.device();
        let stats = self.env.stats();
        let (d, p, a) = (self.obs_dim, self.head.param_dim(), self.head.action_dim());
        let mut stored = vec![0.0; a];
        let mut rng = self.rng.clone();
        evaluate(
            &self.source,
            episodes,
            self.seed.wrapping_add(1_000_003),
            stats.as_ref().and_then(|s| s.obs.as_ref()),
            |obs, n, actions| {
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

    /// Writes the weights, optimizer state and progress to the run's checkpoint.
    pub fn save(&self, run: &Run) -> Result<()> {
        let progress =
            self.env
                .progress(self.global_step, self.iteration, run.elapsed(), &self.rng)?;
        run.save_checkpoint(&progress, |dir| {
            let model = dir.join("model.bpk");
            self.agent
                .clone()
                .save_file(&model)
                .map_err(checkpoint_error(&model))?;
            let optimizer = dir.join("optimizer.bpk");
            self.optim
                .save(&optimizer)
                .map_err(checkpoint_error(&optimizer))?;
            self.env.save_reward_model(dir)
        })
    }
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// 1 − Var(returns − values) / Var(returns) (NaN when the returns do not vary).
fn explained_variance(values: &[f32], returns: &[f32]) -> f64 {
    let var = |x: &mut dyn Iterator<Item = f64>| {
        let v: Vec<f64> = x.collect();
        let m = v.iter().sum::<f64>() / v.len().max(1) as f64;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / v.len().max(1) as f64
    };
    let var_y = var(&mut returns.iter().map(|&y| f64::from(y)));
    let var_diff = var(&mut returns.iter().zip(values).map(|(&y, &v)| f64::from(y - v)));
    if var_y == 0.0 {
        f64::NAN
    } else {
        1.0 - var_diff / var_y
    }
}
