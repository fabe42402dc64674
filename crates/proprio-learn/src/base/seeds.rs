//! The random streams a run derives from its seed, defined once.

use proprio::{EnvRng, episode_rng};

/// The learner's own stream (weights, action sampling, minibatch order).
pub fn learner_rng(seed: u64) -> EnvRng {
    episode_rng(seed, u64::MAX - 1, 0)
}

/// The stream a loaded policy samples its actions from.
pub fn policy_rng(seed: u64) -> EnvRng {
    episode_rng(seed, u64::MAX - 2, 0)
}

/// The seed of the evaluation episodes, apart from every training env's stream.
pub fn evaluation_seed(seed: u64) -> u64 {
    seed.wrapping_add(1_000_003)
}
