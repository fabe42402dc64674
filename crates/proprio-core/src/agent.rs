//! [`Agent`]: whatever chooses a batch's actions — an env's scripted
//! controller, a trained policy, a random or a keyboard agent. One trait for
//! evaluation, recording, the viewer and data collection alike.

use crate::error::Result;
use crate::info::Info;
use crate::rng::RandomActions;
use crate::space::Space;
use crate::vec_env::{AutoresetMode, VecEnv};

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

/// Runs `agent` (deterministic) on `venv` reset from `seed` until every env
/// has ended its first episode; `visit(i, reward, final_info)` sees each step
/// of env i's first episode, `final_info` on its last. Envs that finish early
/// go on unrecorded (reset here when autoreset is disabled).
pub fn first_episodes(
    venv: &mut dyn VecEnv,
    agent: &mut dyn Agent,
    seed: u64,
    mut visit: impl FnMut(usize, f32, Option<&Info>),
) -> Result<()> {
    let n = venv.num_envs();
    let mut actions = vec![0.0; n * venv.spec().action_space.flat_dim()];
    let mut ended = vec![false; n];
    let mut done = vec![false; n];
    venv.reset(Some(seed), None)?;
    while ended.iter().any(|e| !e) {
        agent.act(&venv.batch().obs, &mut actions, ActMode::Deterministic)?;
        venv.step(&actions)?;
        let b = venv.batch();
        for (i, end) in ended.iter_mut().enumerate().filter(|(_, e)| !**e) {
            *end = b.done(i);
            let info = if b.has_final[i] {
                &b.final_infos[i]
            } else {
                &b.infos[i]
            };
            visit(i, b.reward[i], end.then_some(info));
        }
        for (i, d) in done.iter_mut().enumerate() {
            *d = b.done(i);
        }
        if venv.autoreset_mode() == AutoresetMode::Disabled && done.contains(&true) {
            venv.reset_envs(&done, None)?;
        }
    }
    Ok(())
}
