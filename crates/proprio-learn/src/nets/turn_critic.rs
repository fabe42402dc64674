//! ArCHer's utterance-level critic (Zhou et al. 2024): two transformers
//! (double Q), each scoring a whole answer, Q(s, a), and the observation
//! alone, V(s). A turn is valued as one action, however many tokens it has.

use crate::base::error::{LearnError, Result};
use crate::nets::sequence::{SequencePolicy, SequenceShape};
use burn::prelude::*;
use proprio::{EnvRng, Space};

/// The two critics; each is a sequence model read through its value head.
#[derive(Module, Debug)]
pub struct TurnCritic {
    first: SequencePolicy,
    second: SequencePolicy,
}

/// Both critics' values of a batch, `[n]` each.
pub struct TurnValues {
    /// Q(s, a) of the first and the second critic.
    pub q: [Tensor<1>; 2],
    /// V(s) of the first and the second critic.
    pub v: [Tensor<1>; 2],
}

impl TurnValues {
    /// The smaller Q and the smaller V of the two critics (clipped double Q).
    pub fn min(self) -> (Tensor<1>, Tensor<1>) {
        let [q1, q2] = self.q;
        let [v1, v2] = self.v;
        (q1.min_pair(q2), v1.min_pair(v2))
    }
}

impl TurnCritic {
    /// Two critics of answers in `action_space` (tokens) to `observation_space`, drawn from `rng`.
    pub fn new(
        observation_space: &Space,
        action_space: &Space,
        shape: &SequenceShape,
        device: &Device,
        rng: &mut EnvRng,
    ) -> Result<Self> {
        let Space::Tokens { vocab, max_len } = action_space else {
            return Err(LearnError::Config(format!(
                "a turn critic values token answers, not {action_space}"
            )));
        };
        // One slot past the answer: the position that has read all of it.
        let slots = Space::Tokens {
            vocab: *vocab,
            max_len: max_len + 1,
        };
        let mut critic =
            || SequencePolicy::new(observation_space, &slots, shape, device, &mut *rng);
        Ok(Self {
            first: critic()?,
            second: critic()?,
        })
    }

    /// Q(s, a) and V(s) of both critics for `n` observations and their answers `[n × A]`.
    pub fn values(&self, obs: &[f32], answers: &[i64], n: usize) -> TurnValues {
        let (q1, v1) = self.first.turn_values(obs, answers, n);
        let (q2, v2) = self.second.turn_values(obs, answers, n);
        TurnValues {
            q: [q1, q2],
            v: [v1, v2],
        }
    }
}
