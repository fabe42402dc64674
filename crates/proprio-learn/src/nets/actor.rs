//! `Actor`: what the group learner needs from a policy, for token answers
//! (the transformer) and for control actions (an MLP actor-critic) alike.
//!
//! One env step's action is made of `units` log-probability terms: the
//! tokens of an answer, or one term for a whole control action.

use crate::base::error::Result;
use crate::base::tensor::{host, matrix};
use crate::nets::actor_critic::{ActorCritic, AgentShape};
use crate::nets::head::{ActionHead, log_sum_exp};
use crate::nets::kv_cache::KvCache;
use crate::nets::sequence::SequencePolicy;
use burn::module::Module;
use burn::prelude::*;
use proprio::{EnvRng, Space};

/// Actions sampled for a batch of observations, on the host.
#[derive(Debug, Clone, Default)]
pub struct Sampled {
    /// What the learner stores to score the actions again `[n × stored_width]`.
    pub stored: Vec<f32>,
    /// The env's actions `[n × action_dim]`.
    pub actions: Vec<f32>,
    /// Log-probability of every unit `[n × units]`.
    pub logp: Vec<f32>,
}

/// Log-probabilities, entropies and values `[rows, units]` of stored actions, with gradients.
pub struct Scores {
    /// Log-probability of each unit.
    pub logp: Tensor<2>,
    /// Entropy of each unit's distribution.
    pub entropy: Tensor<2>,
    /// Value estimate before each unit.
    pub value: Tensor<2>,
}

/// A policy the group learner can sample from and score.
pub trait Actor: Module {
    /// Log-probability terms per env step.
    fn units(&self) -> usize;
    /// Width of one stored action.
    fn stored_width(&self) -> usize;
    /// Samples (or, when `greedy`, takes the most likely) actions for `n` observations.
    fn sample(
        &self,
        obs: &[f32],
        n: usize,
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<Sampled>;
    /// What the actor keeps between the steps of its envs (the sequence
    /// policy's [`KvCache`]; `()` for an MLP). One per set of weights.
    type Cache: Default;
    /// A cache that keeps nothing (every step computed in full).
    fn no_cache() -> Self::Cache {
        Self::Cache::default()
    }
    /// [`Actor::sample`] for the envs `slots` (one per observation row), reusing and updating `cache`.
    fn sample_in(
        &self,
        obs: &[f32],
        slots: &[usize],
        cache: &mut Self::Cache,
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<Sampled>;
    /// Scores `n` stored actions under the current weights.
    fn score(&self, obs: &[f32], stored: &[f32], n: usize, temperature: f32) -> Scores;
    /// Tokens a stored action answers with (its length before padding); 1 for control actions.
    fn response_len(&self, stored: &[f32]) -> usize;
}

impl Actor for SequencePolicy {
    type Cache = KvCache;

    fn no_cache() -> KvCache {
        KvCache::new(false)
    }

    fn units(&self) -> usize {
        self.answer_len()
    }

    fn sample_in(
        &self,
        obs: &[f32],
        slots: &[usize],
        cache: &mut KvCache,
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<Sampled> {
        let (tokens, logp) = self.generate_cached(obs, slots, cache, temperature, greedy, rng)?;
        let stored: Vec<f32> = tokens.iter().map(|&t| t as f32).collect();
        Ok(Sampled {
            actions: stored.clone(),
            stored,
            logp,
        })
    }

    fn stored_width(&self) -> usize {
        self.answer_len()
    }

    fn sample(
        &self,
        obs: &[f32],
        n: usize,
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<Sampled> {
        let slots: Vec<usize> = (0..n).collect();
        let cache = &mut KvCache::default();
        self.sample_in(obs, &slots, cache, temperature, greedy, rng)
    }

    fn score(&self, obs: &[f32], stored: &[f32], n: usize, temperature: f32) -> Scores {
        let answers: Vec<i64> = stored.iter().map(|&t| t as i64).collect();
        let (logp, entropy, value) = self.score_answers(obs, &answers, n, temperature);
        Scores {
            logp,
            entropy,
            value,
        }
    }

    fn response_len(&self, stored: &[f32]) -> usize {
        stored.iter().rposition(|&t| t != 0.0).map_or(0, |k| k + 1)
    }
}

/// The MLP actor-critic with the action head for its env's action space.
#[derive(Module, Debug)]
pub struct ControlPolicy {
    /// Actor and critic networks.
    pub nets: ActorCritic,
    /// How network outputs become actions.
    #[module(skip)]
    pub head: ActionHead,
    #[module(skip)]
    obs_dim: usize,
}

impl ControlPolicy {
    /// CleanRL's actor-critic of `shape` for observations in `obs_space`
    /// (images through the CNN, instructions through the text encoder) and `head`'s actions.
    pub fn new(
        obs_space: &Space,
        head: ActionHead,
        shape: &AgentShape,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        Ok(Self {
            nets: ActorCritic::new(obs_space, &head, shape, device, rng)?,
            head,
            obs_dim: obs_space.flat_dim(),
        })
    }

    /// `nets` with `head` for observations of `obs_dim` values (to load a
    /// control policy's weights into an actor-critic another learner built).
    pub fn around(nets: ActorCritic, head: ActionHead, obs_dim: usize) -> Self {
        Self {
            nets,
            head,
            obs_dim,
        }
    }

    fn device(&self) -> Device {
        self.nets.critic.device()
    }
}

impl Actor for ControlPolicy {
    type Cache = ();

    fn units(&self) -> usize {
        self.head.units()
    }

    fn sample_in(
        &self,
        obs: &[f32],
        slots: &[usize],
        _cache: &mut (),
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<Sampled> {
        self.sample(obs, slots.len(), temperature, greedy, rng)
    }

    fn stored_width(&self) -> usize {
        self.head.action_dim()
    }

    /// The temperature scales a Gaussian's standard deviation and divides categorical logits.
    fn sample(
        &self,
        obs: &[f32],
        n: usize,
        temperature: f32,
        greedy: bool,
        rng: &mut EnvRng,
    ) -> Result<Sampled> {
        let params = host(
            self.nets
                .params(matrix(obs, n, self.obs_dim, &self.device())),
        )?;
        let log_std = match self.nets.log_std() {
            Some(ls) => host(ls)?,
            None => Vec::new(),
        };
        let (params, log_std) = tempered(&self.head, params, log_std, temperature);
        let (p, a, u) = (
            self.head.param_dim(),
            self.head.action_dim(),
            self.head.units(),
        );
        let mut out = Sampled {
            stored: vec![0.0; n * a],
            actions: vec![0.0; n * a],
            logp: vec![0.0; n * u],
        };
        for i in 0..n {
            let logp = self.head.sample(
                &params[i * p..(i + 1) * p],
                &log_std,
                rng,
                greedy,
                &mut out.stored[i * a..(i + 1) * a],
                &mut out.actions[i * a..(i + 1) * a],
            );
            if u == 1 {
                out.logp[i] = logp;
            } else {
                // One term per token: re-read each token's log-probability from its logits.
                for (k, slot) in out.logp[i * u..(i + 1) * u].iter_mut().enumerate() {
                    let logits = &params[i * p + k * (p / u)..i * p + (k + 1) * (p / u)];
                    *slot = logits[out.stored[i * a + k] as usize] - log_sum_exp(logits);
                }
            }
        }
        Ok(out)
    }

    fn score(&self, obs: &[f32], stored: &[f32], n: usize, temperature: f32) -> Scores {
        let device = self.device();
        let x = matrix(obs, n, self.obs_dim, &device);
        let actions = matrix(stored, n, self.head.action_dim(), &device);
        let (mut params, value) = self.nets.forward(x);
        let mut log_std = self.nets.log_std();
        match &self.head {
            ActionHead::Categorical { .. } | ActionHead::Binned { .. } => {
                params = params.div_scalar(temperature)
            }
            ActionHead::Gaussian { .. } => {
                log_std = log_std.map(|ls| ls.add_scalar(temperature.ln()));
            }
        }
        let (logp, entropy) = self.head.unit_log_prob_entropy(params, log_std, actions);
        let units = self.head.units();
        Scores {
            logp,
            entropy,
            value: value.unsqueeze_dim(1).repeat_dim(1, units),
        }
    }

    fn response_len(&self, _stored: &[f32]) -> usize {
        self.head.units()
    }
}

/// Distribution parameters at `temperature`: logits divided by it, or log-std raised by its log.
fn tempered(
    head: &ActionHead,
    mut params: Vec<f32>,
    mut log_std: Vec<f32>,
    temperature: f32,
) -> (Vec<f32>, Vec<f32>) {
    match head {
        ActionHead::Categorical { .. } | ActionHead::Binned { .. } => {
            params.iter_mut().for_each(|p| *p /= temperature)
        }
        ActionHead::Gaussian { .. } => log_std.iter_mut().for_each(|l| *l += temperature.ln()),
    }
    (params, log_std)
}
