//! `Policy`: a trained checkpoint that acts, for `proprio eval`, the viewer and library users.

use crate::actor::{Actor as _, ControlPolicy};
use crate::envs::{EnvSource, Evaluation, NORMALIZED_CLIP, evaluate};
use crate::error::{LearnError, Result};
use crate::grpo::GrpoConfig;
use crate::head::{ActionHead, standard_normal};
use crate::ppo::{ActorCritic, PpoConfig};
use crate::run::load_module;
use crate::run::{Algo, RunInfo, load_run};
use crate::sac::{Actor, box_affine, squash};
use crate::sequence::SequencePolicy;
use crate::td3::{ActionBox, DeterministicActor, Td3Config, add_exploration_noise};
use crate::tensor::{host, matrix};
use burn::prelude::*;
use proprio::serde_json::Value;
use proprio::wrappers::RunningMeanStd;
use proprio::{EnvRng, Space, episode_rng};
use std::path::Path;

enum Networks {
    Ppo {
        agent: Box<ActorCritic>,
        head: ActionHead,
    },
    Sac(Box<SquashedActor>),
    /// A TD3 actor; sampling adds its Gaussian exploration noise.
    Td3(Box<DeterministicPolicy>),
    /// A group-learner (or token-level PPO) transformer, sampled at the run's temperature.
    Sequence(Box<SequencePolicy>, f32),
    /// A group-learner MLP policy for a control env.
    Control(Box<ControlPolicy>, f32),
}

/// A SAC actor with the affine map from `[-1, 1]` to the action box.
struct SquashedActor {
    actor: Actor,
    scale: Tensor<2>,
    bias: Tensor<2>,
}

/// A TD3 actor with its action box and exploration noise (in half-widths).
struct DeterministicPolicy {
    actor: DeterministicActor,
    bounds: ActionBox,
    low: Vec<f32>,
    high: Vec<f32>,
    sigma: f32,
}

/// A trained policy loaded from a run directory.
pub struct Policy {
    info: RunInfo,
    nets: Networks,
    obs_stats: Option<RunningMeanStd>,
    /// The observation components `obs_stats` describe (all but image pixels).
    normalized: Vec<usize>,
    obs_dim: usize,
    action_dim: usize,
    device: Device,
    rng: EnvRng,
}

impl Policy {
    /// Loads the latest checkpoint of the run in `dir` (or `dir/checkpoint`).
    pub fn load(dir: &Path) -> Result<Self> {
        let (mut info, progress, checkpoint) = load_run(dir)?;
        // Evaluation pays the reward model the checkpoint learned, frozen.
        info.env.reward_weights = Some(checkpoint.clone());
        let spec = proprio::registry().spec(&info.env.id, &info.env.config)?;
        let obs_space = info.env.observation_space()?;
        let obs_dim = obs_space.flat_dim();
        let device = info.backend.device()?;
        let group = info.algo == Algo::Grpo || info.config.get("advantage").is_some();
        let nets = match info.algo {
            _ if group => {
                let cfg: GrpoConfig = from_run_json(dir, "config", &info.config)?;
                let mut rng = episode_rng(0, 0, 0);
                let model = checkpoint.join("model.bpk");
                if let Space::Tokens { .. } = spec.action_space {
                    let policy = SequencePolicy::new(
                        &spec.observation_space,
                        &spec.action_space,
                        &cfg.shape(),
                        &device,
                        &mut rng,
                    )?;
                    Networks::Sequence(Box::new(load_module(policy, &model)?), cfg.temperature)
                } else {
                    let head = ActionHead::for_space(&spec.action_space)?;
                    let policy =
                        ControlPolicy::new(&obs_space, head, &cfg.hidden, &device, &mut rng)?;
                    Networks::Control(Box::new(load_module(policy, &model)?), cfg.temperature)
                }
            }
            Algo::Ppo | Algo::Grpo => {
                let head = ActionHead::for_space(&spec.action_space)?;
                let cfg: PpoConfig = from_run_json(dir, "config", &info.config)?;
                let agent = ActorCritic::new(
                    &obs_space,
                    &head,
                    &cfg.shape(),
                    &device,
                    &mut episode_rng(0, 0, 0),
                )?;
                let agent = load_module(agent, &checkpoint.join("model.bpk"))?;
                Networks::Ppo {
                    agent: Box::new(agent),
                    head,
                }
            }
            Algo::Sac | Algo::Dsac => {
                let Space::Box { low, high } = &spec.action_space else {
                    return Err(LearnError::Config(
                        "a SAC or DSAC run needs a box action space".into(),
                    ));
                };
                let actor = Actor::new(
                    obs_dim,
                    low.len(),
                    &from_run_json::<Vec<usize>>(dir, "config.hidden", &info.config["hidden"])?,
                    &device,
                    &mut episode_rng(0, 0, 0),
                );
                let actor = load_module(actor, &checkpoint.join("actor.bpk"))?;
                let (scale, bias) = box_affine(low, high);
                Networks::Sac(Box::new(SquashedActor {
                    actor,
                    scale: matrix(&scale, 1, low.len(), &device),
                    bias: matrix(&bias, 1, low.len(), &device),
                }))
            }
            Algo::Td3 => {
                let Space::Box { low, high } = &spec.action_space else {
                    return Err(LearnError::Config(
                        "a TD3 run needs a box action space".into(),
                    ));
                };
                let cfg: Td3Config = from_run_json(dir, "config", &info.config)?;
                let actor = DeterministicActor::new(
                    obs_dim,
                    low.len(),
                    &cfg.hidden,
                    &device,
                    &mut episode_rng(0, 0, 0),
                );
                Networks::Td3(Box::new(DeterministicPolicy {
                    actor: load_module(actor, &checkpoint.join("actor.bpk"))?,
                    bounds: ActionBox::new(low, high, &device),
                    low: low.clone(),
                    high: high.clone(),
                    sigma: cfg.exploration_noise,
                }))
            }
        };
        Ok(Self {
            rng: episode_rng(info.seed, u64::MAX - 2, 0),
            action_dim: spec.action_space.flat_dim(),
            obs_stats: progress.stats.and_then(|s| s.obs),
            normalized: obs_space.non_image_components(),
            nets,
            obs_dim,
            info,
            device,
        })
    }

    /// The env the policy was trained on.
    pub fn env(&self) -> &EnvSource {
        &self.info.env
    }

    /// What the run was.
    pub fn info(&self) -> &RunInfo {
        &self.info
    }

    /// Normalises raw observations with the training statistics (as `NormalizeObservation` did).
    fn normalise(&self, obs: &[f32]) -> Vec<f32> {
        let mut x = obs.to_vec();
        if let Some(stats) = &self.obs_stats {
            stats.normalize_components(
                &mut x,
                self.obs_dim,
                &self.normalized,
                Some(NORMALIZED_CLIP),
            );
        }
        x
    }

    /// Actions for a batch of raw observations `[N × D]`, written to `actions` `[N × A]`:
    /// the distribution's mode when `deterministic`, a sample otherwise.
    pub fn act_batch(
        &mut self,
        obs: &[f32],
        deterministic: bool,
        actions: &mut [f32],
    ) -> Result<()> {
        let normalized = self.normalise(obs);
        self.act_normalized(&normalized, deterministic, actions)
    }

    fn act_normalized(
        &mut self,
        obs: &[f32],
        deterministic: bool,
        actions: &mut [f32],
    ) -> Result<()> {
        let n = obs.len() / self.obs_dim.max(1);
        if obs.len() != n * self.obs_dim || actions.len() != n * self.action_dim {
            return Err(LearnError::Config(format!(
                "expected observations of {} and actions of {} values per env",
                self.obs_dim, self.action_dim
            )));
        }
        let x = matrix(obs, n, self.obs_dim, &self.device);
        match &self.nets {
            Networks::Ppo { agent, head } => {
                let params = host(agent.params(x))?;
                let log_std = agent.log_std().map(host).transpose()?.unwrap_or_default();
                let (p, a) = (head.param_dim(), head.action_dim());
                let mut stored = vec![0.0; a];
                for i in 0..n {
                    head.sample(
                        &params[i * p..(i + 1) * p],
                        &log_std,
                        &mut self.rng,
                        deterministic,
                        &mut stored,
                        &mut actions[i * a..(i + 1) * a],
                    );
                }
            }
            Networks::Sequence(policy, temperature) => {
                let sampled = policy.sample(obs, n, *temperature, deterministic, &mut self.rng)?;
                actions.copy_from_slice(&sampled.actions);
            }
            Networks::Control(policy, temperature) => {
                let sampled = policy.sample(obs, n, *temperature, deterministic, &mut self.rng)?;
                actions.copy_from_slice(&sampled.actions);
            }
            Networks::Sac(sac) => {
                let SquashedActor { actor, scale, bias } = sac.as_ref();
                let action = if deterministic {
                    actor.mode(x, scale.clone(), bias.clone())
                } else {
                    let eps: Vec<f32> = (0..n * self.action_dim)
                        .map(|_| standard_normal(&mut self.rng))
                        .collect();
                    let (mean, log_std) = actor.forward(x);
                    squash(
                        mean,
                        log_std,
                        matrix(&eps, n, self.action_dim, &self.device),
                        scale.clone(),
                        bias.clone(),
                    )
                    .action
                };
                actions.copy_from_slice(&host(action)?);
            }
            Networks::Td3(td3) => {
                let DeterministicPolicy {
                    actor,
                    bounds,
                    low,
                    high,
                    sigma,
                } = td3.as_ref();
                let action = actor.forward(x, bounds.scale.clone(), bounds.bias.clone());
                actions.copy_from_slice(&host(action)?);
                if !deterministic {
                    add_exploration_noise(actions, low, high, *sigma, &mut self.rng);
                }
            }
        }
        Ok(())
    }

    /// The action for one raw observation.
    pub fn act(&mut self, obs: &[f32], deterministic: bool) -> Result<Vec<f32>> {
        let mut action = vec![0.0; self.action_dim];
        self.act_batch(obs, deterministic, &mut action)?;
        Ok(action)
    }

    /// Returns of `episodes` episodes on the training env (fresh seed stream `seed`).
    pub fn evaluate(
        &mut self,
        episodes: usize,
        seed: u64,
        deterministic: bool,
    ) -> Result<Evaluation> {
        let source = self.info.env.clone();
        let stats = self.obs_stats.clone();
        evaluate(
            &source,
            episodes,
            seed,
            stats.as_ref(),
            |obs, _, actions| self.act_normalized(obs, deterministic, actions),
        )
    }
}

/// `value`, named `key` in the `run.json` of the run in `dir`, read as what the learner saved.
fn from_run_json<T: serde::de::DeserializeOwned>(
    dir: &Path,
    key: &str,
    value: &Value,
) -> Result<T> {
    proprio::serde_json::from_value(value.clone()).map_err(|e| LearnError::Checkpoint {
        path: dir.to_path_buf(),
        message: format!("run.json: {key}: {e}"),
    })
}
