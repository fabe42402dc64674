//! [`Agent`]: whatever chooses a batch's actions — an env's scripted
//! controller, a trained policy, a random or a keyboard agent. One trait for
//! evaluation, recording, the viewer and data collection alike.

use crate::error::Result;
use crate::rng::RandomActions;
use crate::space::Space;

/// Whether an agent takes its most likely action or draws one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ActMode {
    /// The mode of the policy's distribution (no exploration noise): evaluation.
    #[default]
    Deterministic,
    /// A draw from the policy's distribution (with its exploration noise).
    Sampled,
}

impl ActMode {
    /// `Deterministic` when `deterministic`, `Sampled` otherwise.
    pub fn from_deterministic(deterministic: bool) -> Self {
        if deterministic {
            Self::Deterministic
        } else {
            Self::Sampled
        }
    }
}

/// Chooses actions for a batch of envs from their observations.
pub trait Agent {
    /// Writes the actions `[N × A]` for observations `[N × D]`; a failure
    /// (a policy that cannot run) is an [`Error::Agent`](crate::Error::Agent).
    fn act(&mut self, obs: &[f32], actions: &mut [f32], mode: ActMode) -> Result<()>;
}

/// A closure acts as an agent.
impl<F: FnMut(&[f32], &mut [f32], ActMode) -> Result<()>> Agent for F {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], mode: ActMode) -> Result<()> {
        self(obs, actions, mode)
    }
}

/// Uniform random actions, env `i` drawing from its own stream
/// ([`RandomActions`]); the streams follow the batch when its size changes.
pub struct RandomAgent {
    space: Space,
    seed: u64,
    streams: RandomActions,
}

impl RandomAgent {
    /// Random actions of `space` under `seed`.
    pub fn new(space: Space, seed: u64) -> Self {
        Self {
            space,
            seed,
            streams: RandomActions::new(seed, 0),
        }
    }
}

impl Agent for RandomAgent {
    fn act(&mut self, _obs: &[f32], actions: &mut [f32], _: ActMode) -> Result<()> {
        let n = actions.len() / self.space.flat_dim().max(1);
        if self.streams.num_envs() != n {
            self.streams = RandomActions::new(self.seed, n);
        }
        self.streams.sample(&self.space, actions);
        Ok(())
    }
}
