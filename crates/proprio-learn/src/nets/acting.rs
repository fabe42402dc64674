//! The acting network a checkpoint holds, described in its `policy.json` by
//! the learner that wrote it, so a policy loads without knowing the algorithm.

use crate::base::error::{LearnError, Result};
use crate::base::store::load_module;
use crate::base::tensor::{host, matrix};
use crate::nets::actor::{Actor as _, ControlPolicy};
use crate::nets::actor_critic::{ActorCritic, AgentShape};
use crate::nets::deterministic::{ActionBox, DeterministicActor, add_exploration_noise};
use crate::nets::head::{ActionHead, standard_normal};
use crate::nets::kv_cache::KvCache;
use crate::nets::mlp::Activation;
use crate::nets::sequence::{SequencePolicy, SequenceShape};
use crate::nets::squashed::{Actor, box_affine, squash};
use burn::prelude::*;
use proprio::{EnvRng, Space, episode_rng};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which network acts, and what it needs to be rebuilt before its weights load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "network", rename_all = "snake_case")]
pub enum PolicyNet {
    /// CleanRL's actor-critic; its action head acts (PPO).
    ActorCritic {
        /// The architecture.
        shape: AgentShape,
    },
    /// A tanh-squashed Gaussian actor (SAC, DSAC-T).
    Squashed {
        /// Hidden layer sizes.
        hidden: Vec<usize>,
    },
    /// A deterministic actor; sampling adds Gaussian noise of `noise` half-widths (TD3).
    Deterministic {
        /// Hidden layer sizes.
        hidden: Vec<usize>,
        /// Exploration noise, in half-widths of the action box.
        noise: f32,
        /// Hidden-layer non-linearity (ReLU in runs written before it was a key).
        #[serde(default)]
        activation: Activation,
    },
    /// The transformer policy over token answers, sampled at `temperature`.
    Sequence {
        /// The architecture.
        shape: SequenceShape,
        /// Sampling temperature.
        temperature: f32,
    },
    /// An MLP actor-critic with its action head, sampled at `temperature` (group learner, control envs).
    Control {
        /// The architecture (its keys beside `temperature`).
        #[serde(flatten)]
        shape: AgentShape,
        /// Sampling temperature.
        temperature: f32,
    },
}

impl PolicyNet {
    /// The network alone, its sampling settings (temperature, exploration
    /// noise) set aside: what must agree for a run to start from another's
    /// weights. The group learner's and behaviour cloning's control network
    /// is PPO's actor-critic (the critic untrained), so each starts from the other.
    pub fn architecture(&self) -> PolicyNet {
        let mut net = self.clone();
        match &mut net {
            PolicyNet::Control { shape, .. } => {
                return PolicyNet::ActorCritic {
                    shape: shape.clone(),
                };
            }
            PolicyNet::Sequence { temperature, .. } => *temperature = 1.0,
            PolicyNet::Deterministic { noise, .. } => *noise = 0.0,
            PolicyNet::ActorCritic { .. } | PolicyNet::Squashed { .. } => {}
        }
        net
    }
}

/// `policy.json`: the acting network and the file of its weights in the checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyFile {
    /// The network.
    #[serde(flatten)]
    pub net: PolicyNet,
    /// Its weights, relative to the checkpoint folder.
    pub weights: String,
}

/// The name of the description in a checkpoint folder.
pub const POLICY_FILE: &str = "policy.json";

/// A loaded acting network on its device.
pub struct ActingNet {
    net: Acting,
    device: Device,
}

/// The networks a checkpoint can act with.
enum Acting {
    /// An actor-critic and its head.
    ActorCritic(Box<ActorCritic>, ActionHead),
    /// A squashed Gaussian actor and the affine map from `[-1, 1]` to the box.
    Squashed(Box<(Actor, Tensor<2>, Tensor<2>)>),
    /// A deterministic actor, its box and noise.
    Deterministic(Box<(DeterministicActor, ActionBox, [Vec<f32>; 2], f32)>),
    /// A transformer over token answers, its temperature, and the keys and
    /// values its envs' transcripts left (the weights never change here).
    Sequence(Box<SequencePolicy>, f32, KvCache),
    /// An MLP actor-critic of the group learner and its temperature.
    Control(Box<ControlPolicy>, f32),
}

fn box_bounds(action_space: &Space) -> Result<(&[f32], &[f32])> {
    match action_space {
        Space::Box { low, high } => Ok((low, high)),
        other => Err(LearnError::Config(format!(
            "this policy acts in a box, but the env acts in {other}"
        ))),
    }
}

impl PolicyFile {
    /// Rebuilds the network for `obs_space` and `action_space` and loads its weights from `checkpoint`.
    pub fn load(
        &self,
        obs_space: &Space,
        action_space: &Space,
        checkpoint: &Path,
        device: &Device,
    ) -> Result<ActingNet> {
        // The initial weights are replaced by the checkpoint's.
        let rng = &mut episode_rng(0, 0, 0);
        let weights = checkpoint.join(&self.weights);
        let obs_dim = obs_space.flat_dim();
        let net = match &self.net {
            PolicyNet::ActorCritic { shape } => {
                let head = shape.action_head(action_space)?;
                let agent = ActorCritic::new(obs_space, &head, shape, device, rng)?;
                Acting::ActorCritic(Box::new(load_module(agent, &weights)?), head)
            }
            PolicyNet::Squashed { hidden } => {
                let (low, high) = box_bounds(action_space)?;
                let actor = Actor::new(obs_dim, low.len(), hidden, device, rng);
                let (scale, bias) = box_affine(low, high);
                Acting::Squashed(Box::new((
                    load_module(actor, &weights)?,
                    matrix(&scale, 1, low.len(), device),
                    matrix(&bias, 1, low.len(), device),
                )))
            }
            PolicyNet::Deterministic {
                hidden,
                noise,
                activation,
            } => {
                let (low, high) = box_bounds(action_space)?;
                let actor =
                    DeterministicActor::new(obs_dim, low.len(), hidden, *activation, device, rng);
                Acting::Deterministic(Box::new((
                    load_module(actor, &weights)?,
                    ActionBox::new(low, high, device),
                    [low.to_vec(), high.to_vec()],
                    *noise,
                )))
            }
            PolicyNet::Sequence { shape, temperature } => {
                let policy = SequencePolicy::new(obs_space, action_space, shape, device, rng)?;
                let policy = Box::new(load_module(policy, &weights)?);
                Acting::Sequence(policy, *temperature, KvCache::default())
            }
            PolicyNet::Control { shape, temperature } => {
                let head = shape.action_head(action_space)?;
                let policy = ControlPolicy::new(obs_space, head, shape, device, rng)?;
                Acting::Control(Box::new(load_module(policy, &weights)?), *temperature)
            }
        };
        Ok(ActingNet {
            net,
            device: device.clone(),
        })
    }
}

impl ActingNet {
    /// Actions `[n × A]` for `n` observations `[n × D]`: the mode of the
    /// distribution when `deterministic`, a draw from `rng` otherwise.
    pub fn act(
        &mut self,
        obs: &[f32],
        n: usize,
        deterministic: bool,
        rng: &mut EnvRng,
        actions: &mut [f32],
    ) -> Result<()> {
        let device = &self.device;
        let x = matrix(obs, n, obs.len() / n.max(1), device);
        match &mut self.net {
            Acting::ActorCritic(agent, head) => {
                let params = host(agent.params(x))?;
                let log_std = agent.log_std().map(host).transpose()?.unwrap_or_default();
                let (p, a) = (head.param_dim(), head.action_dim());
                let mut stored = vec![0.0; a];
                for i in 0..n {
                    head.sample(
                        &params[i * p..(i + 1) * p],
                        &log_std,
                        rng,
                        deterministic,
                        &mut stored,
                        &mut actions[i * a..(i + 1) * a],
                    );
                }
            }
            Acting::Sequence(policy, temperature, cache) => {
                let slots: Vec<usize> = (0..n).collect();
                let sampled =
                    policy.sample_in(obs, &slots, cache, *temperature, deterministic, rng)?;
                actions.copy_from_slice(&sampled.actions);
            }
            Acting::Control(policy, temperature) => {
                let sampled = policy.sample(obs, n, *temperature, deterministic, rng)?;
                actions.copy_from_slice(&sampled.actions);
            }
            Acting::Squashed(squashed) => {
                let (actor, scale, bias) = squashed.as_ref();
                let action = if deterministic {
                    actor.mode(x, scale.clone(), bias.clone())
                } else {
                    let a = actions.len() / n.max(1);
                    let eps: Vec<f32> = (0..n * a).map(|_| standard_normal(rng)).collect();
                    let (mean, log_std) = actor.forward(x);
                    let eps = matrix(&eps, n, a, device);
                    squash(mean, log_std, eps, scale.clone(), bias.clone()).action
                };
                actions.copy_from_slice(&host(action)?);
            }
            Acting::Deterministic(deterministic_actor) => {
                let (actor, bounds, [low, high], sigma) = deterministic_actor.as_ref();
                let action = actor.forward(x, bounds.scale.clone(), bounds.bias.clone());
                actions.copy_from_slice(&host(action)?);
                if !deterministic {
                    add_exploration_noise(actions, low, high, *sigma, rng);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nets::instruction::TextConfig;

    /// A `policy.json` of a PPO run from before instructions and action
    /// tokens (2026-11-27 03:00) still describes a Gaussian MLP.
    #[test]
    fn older_policy_files_still_read() {
        let old = r#"{"network": "actor_critic", "shape": {"hidden": [128, 128],
            "cnn": {"channels": [16, 32], "kernels": [4, 2], "strides": [4, 2], "features": 128},
            "critic_only": [], "aux": false, "squash_mean": false, "log_std_init": 0.0},
            "weights": "model.bpk"}"#;
        let file: PolicyFile = proprio::serde_json::from_str(old).unwrap();
        let PolicyNet::ActorCritic { shape } = file.net else {
            panic!("not an actor-critic: {file:?}");
        };
        assert_eq!((shape.text, shape.action_bins), (TextConfig::default(), 0));
        let control = r#"{"network": "control", "hidden": [64, 64], "temperature": 1.0, "weights": "model.bpk"}"#;
        let file: PolicyFile = proprio::serde_json::from_str(control).unwrap();
        let PolicyNet::Control { shape, .. } = file.net else {
            panic!("not a control policy: {file:?}");
        };
        let expected = AgentShape {
            hidden: vec![64, 64],
            ..AgentShape::default()
        };
        assert_eq!(shape, expected);
    }
}
