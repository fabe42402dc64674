//! The batched API (Gymnasium's `VectorEnv`): N envs stepped into flat buffers.

use crate::env::{EnvSpec, ResetOptions, State};
use crate::error::{Error, Result};
use crate::info::Info;
use crate::memory;
use crate::scene::Scene;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a vector env does when one of its episodes ends (Gymnasium's `AutoresetMode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AutoresetMode {
    /// The step after an episode ends resets that env: its action is ignored,
    /// it returns the first observation with reward 0 and both flags false.
    #[default]
    NextStep,
    /// The env is reset within the step that ended the episode: `obs` holds the
    /// new episode's first observation, the last one is kept in `final_obs`
    /// (and its info in `final_infos`), flagged by `has_final`.
    SameStep,
    /// Finished envs stay finished until the caller resets them with
    /// [`VecEnv::reset_envs`]; stepping one before that is an error.
    Disabled,
}

impl fmt::Display for AutoresetMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::NextStep => "next-step",
            Self::SameStep => "same-step",
            Self::Disabled => "disabled",
        })
    }
}

impl FromStr for AutoresetMode {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "next-step" => Ok(Self::NextStep),
            "same-step" => Ok(Self::SameStep),
            "disabled" => Ok(Self::Disabled),
            other => Err(format!(
                "unknown autoreset mode '{other}' (expected next-step, same-step or disabled)"
            )),
        }
    }
}

/// Where a vector env runs its physics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// CPU threads (every env has this backend).
    #[default]
    Cpu,
    /// A GPU through wgpu compute (envs whose physics allows it).
    Gpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Cpu => "cpu",
            Self::Gpu => "gpu",
        })
    }
}

impl FromStr for Backend {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "cpu" => Ok(Self::Cpu),
            "gpu" => Ok(Self::Gpu),
            other => Err(format!("unknown backend '{other}' (expected cpu or gpu)")),
        }
    }
}

/// How to build a vector env.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VecOptions {
    /// Autoreset behaviour.
    pub autoreset: AutoresetMode,
    /// Worker threads; `None` uses every available core (at most one per 16 envs).
    pub threads: Option<usize>,
    /// CPU threads or GPU.
    pub backend: Backend,
}

impl VecOptions {
    /// The worker threads to use: `threads`, or every available core.
    pub fn worker_threads(&self) -> usize {
        self.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        })
    }
}

/// The flat, preallocated output buffers of a vector env, rewritten in place every step.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// Number of envs N.
    pub num_envs: usize,
    /// Flat observation length D.
    pub obs_dim: usize,
    /// Observations `[N × D]`.
    pub obs: Vec<f32>,
    /// Rewards `[N]`.
    pub reward: Vec<f32>,
    /// Terminal-state flags `[N]`.
    pub terminated: Vec<bool>,
    /// Time-limit flags `[N]`.
    pub truncated: Vec<bool>,
    /// Last observation of episodes that ended this step `[N × D]` (same-step mode).
    pub final_obs: Vec<f32>,
    /// Which rows of `final_obs` and `final_infos` are valid `[N]`.
    pub has_final: Vec<bool>,
    /// Per-env diagnostics of this step.
    pub infos: Vec<Info>,
    /// Diagnostics of the step that ended an episode (same-step mode).
    pub final_infos: Vec<Info>,
}

impl Batch {
    /// Zeroed buffers for `num_envs` envs with observations of length `obs_dim`;
    /// a size that cannot be reserved is [`Error::Memory`].
    pub fn new(num_envs: usize, obs_dim: usize) -> Result<Self> {
        let rows = num_envs
            .checked_mul(obs_dim)
            .ok_or_else(|| Error::Shape(format!("{num_envs} envs × {obs_dim} floats overflow")))?;
        let what = "the batch buffers";
        Ok(Self {
            num_envs,
            obs_dim,
            obs: memory::filled(what, rows, 0.0)?,
            reward: memory::filled(what, num_envs, 0.0)?,
            terminated: memory::filled(what, num_envs, false)?,
            truncated: memory::filled(what, num_envs, false)?,
            final_obs: memory::filled(what, rows, 0.0)?,
            has_final: memory::filled(what, num_envs, false)?,
            infos: memory::filled(what, num_envs, Info::default())?,
            final_infos: memory::filled(what, num_envs, Info::default())?,
        })
    }

    /// Bytes [`Batch::new`] allocates for `num_envs` envs of `obs_dim` floats.
    pub fn bytes(num_envs: usize, obs_dim: usize) -> u128 {
        let row = 2 * 4 * obs_dim as u128 + 4 + 3 + 2 * std::mem::size_of::<Info>() as u128;
        row * num_envs as u128
    }

    /// Observation of env `i`.
    pub fn obs(&self, i: usize) -> &[f32] {
        &self.obs[i * self.obs_dim..(i + 1) * self.obs_dim]
    }

    /// Final observation of env `i`, if its episode ended this step (same-step mode).
    pub fn final_obs(&self, i: usize) -> Option<&[f32]> {
        self.has_final[i].then(|| &self.final_obs[i * self.obs_dim..(i + 1) * self.obs_dim])
    }

    /// Keeps env `i`'s observation and info as its final ones (same-step
    /// autoreset done by a wrapper, which then resets the env).
    pub fn keep_final(&mut self, i: usize) {
        self.rows_mut().keep_final(i);
    }

    /// The info of the step on which env `i` finished an episode, holding its
    /// `episode.return` and `episode.length` from
    /// [`RecordEpisodeStatistics`](crate::wrappers::RecordEpisodeStatistics):
    /// the step's own info, or its final one where a same-step autoreset above
    /// the statistics reset the env (a reward model's stack). `None` if no
    /// episode ended.
    pub fn episode_info(&self, i: usize) -> Option<&Info> {
        let finished = |info: &Info| info.get("episode.return").is_some();
        let own = &self.infos[i];
        let kept = &self.final_infos[i];
        if finished(own) {
            Some(own)
        } else {
            (self.has_final[i] && finished(kept)).then_some(kept)
        }
    }

    /// True if env `i`'s episode ended this step.
    pub fn done(&self, i: usize) -> bool {
        self.terminated[i] || self.truncated[i]
    }

    /// Copies rewards, flags, infos and valid final infos of every env from
    /// `inner`: for wrappers that keep a batch of their own observations.
    pub fn copy_outcome(&mut self, inner: &Batch) {
        self.reward.copy_from_slice(&inner.reward);
        self.terminated.copy_from_slice(&inner.terminated);
        self.truncated.copy_from_slice(&inner.truncated);
        self.has_final.copy_from_slice(&inner.has_final);
        for (to, from) in self.infos.iter_mut().zip(&inner.infos) {
            to.clone_from(from);
        }
        for (i, to) in self.final_infos.iter_mut().enumerate() {
            if inner.has_final[i] {
                to.clone_from(&inner.final_infos[i]);
            }
        }
    }

    /// Copies env `i`'s reward, flags and info from `inner` after it was reset
    /// (no final observation).
    pub fn copy_reset_outcome(&mut self, i: usize, inner: &Batch) {
        (self.reward[i], self.terminated[i], self.truncated[i]) =
            (inner.reward[i], inner.terminated[i], inner.truncated[i]);
        self.has_final[i] = false;
        self.infos[i].clone_from(&inner.infos[i]);
    }

    /// Every row, as disjoint slices that can be split between threads.
    pub fn rows_mut(&mut self) -> Rows<'_> {
        Rows {
            obs_dim: self.obs_dim,
            first: 0,
            obs: &mut self.obs,
            final_obs: &mut self.final_obs,
            reward: &mut self.reward,
            terminated: &mut self.terminated,
            truncated: &mut self.truncated,
            has_final: &mut self.has_final,
            infos: &mut self.infos,
            final_infos: &mut self.final_infos,
        }
    }
}

/// The rows of a contiguous range of envs of a [`Batch`], for one worker thread.
pub struct Rows<'a> {
    /// Observation length D.
    pub obs_dim: usize,
    /// Batch index of the first env of the range.
    pub first: usize,
    /// Observations of the range.
    pub obs: &'a mut [f32],
    /// Final observations of the range.
    pub final_obs: &'a mut [f32],
    /// Rewards of the range.
    pub reward: &'a mut [f32],
    /// Terminal flags of the range.
    pub terminated: &'a mut [bool],
    /// Time-limit flags of the range.
    pub truncated: &'a mut [bool],
    /// Valid-final-row flags of the range.
    pub has_final: &'a mut [bool],
    /// Infos of the range.
    pub infos: &'a mut [Info],
    /// Final infos of the range.
    pub final_infos: &'a mut [Info],
}

impl<'a> Rows<'a> {
    /// Number of envs in the range.
    pub fn len(&self) -> usize {
        self.reward.len()
    }

    /// True for an empty range.
    pub fn is_empty(&self) -> bool {
        self.reward.is_empty()
    }

    /// Splits into the first `mid` envs and the rest.
    pub fn split_at(self, mid: usize) -> (Rows<'a>, Rows<'a>) {
        let d = self.obs_dim;
        let (obs_a, obs_b) = self.obs.split_at_mut(mid * d);
        let (fin_a, fin_b) = self.final_obs.split_at_mut(mid * d);
        let (rew_a, rew_b) = self.reward.split_at_mut(mid);
        let (term_a, term_b) = self.terminated.split_at_mut(mid);
        let (trunc_a, trunc_b) = self.truncated.split_at_mut(mid);
        let (has_a, has_b) = self.has_final.split_at_mut(mid);
        let (info_a, info_b) = self.infos.split_at_mut(mid);
        let (finfo_a, finfo_b) = self.final_infos.split_at_mut(mid);
        (
            Rows {
                obs_dim: d,
                first: self.first,
                obs: obs_a,
                final_obs: fin_a,
                reward: rew_a,
                terminated: term_a,
                truncated: trunc_a,
                has_final: has_a,
                infos: info_a,
                final_infos: finfo_a,
            },
            Rows {
                obs_dim: d,
                first: self.first + mid,
                obs: obs_b,
                final_obs: fin_b,
                reward: rew_b,
                terminated: term_b,
                truncated: trunc_b,
                has_final: has_b,
                infos: info_b,
                final_infos: finfo_b,
            },
        )
    }

    /// The observation row of env `k` of the range.
    pub fn obs(&mut self, k: usize) -> &mut [f32] {
        &mut self.obs[k * self.obs_dim..(k + 1) * self.obs_dim]
    }

    /// Marks env `k`'s episode as ended within this step and keeps its last
    /// observation and info (same-step autoreset); the caller then resets it.
    pub fn keep_final(&mut self, k: usize) {
        let d = self.obs_dim;
        self.final_obs[k * d..(k + 1) * d].copy_from_slice(&self.obs[k * d..(k + 1) * d]);
        self.final_infos[k].clone_from(&self.infos[k]);
        self.has_final[k] = true;
    }

    /// Zeroes env `k`'s reward and flags (after a reset).
    pub fn clear_flags(&mut self, k: usize) {
        self.reward[k] = 0.0;
        self.terminated[k] = false;
        self.truncated[k] = false;
        self.has_final[k] = false;
    }
}

/// N environments stepped as one batch.
///
/// Outputs live in [`VecEnv::batch`]; nothing is allocated per step. A vector
/// env never reads its batch back, so wrappers may rewrite it in place.
pub trait VecEnv: Send {
    /// What each env is.
    fn spec(&self) -> &EnvSpec;
    /// Number of envs N.
    fn num_envs(&self) -> usize;
    /// What happens when an episode ends.
    fn autoreset_mode(&self) -> AutoresetMode;
    /// Resets every env. With `Some(seed)` env `i` starts episode 0 of stream
    /// (seed, i); with `None` every env starts its next episode.
    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()>;
    /// Resets the envs whose `mask` entry is true (their next episode); others are untouched.
    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()>;
    /// Steps every env with `actions` `[N × A]`. A malformed action fails the
    /// whole call before any env moves.
    fn step(&mut self, actions: &[f32]) -> Result<()>;
    /// The output buffers.
    fn batch(&self) -> &Batch;
    /// The output buffers, for wrappers that rewrite them.
    fn batch_mut(&mut self) -> &mut Batch;
    /// Captures env `env`'s full state.
    fn snapshot(&self, env: usize) -> Result<State>;
    /// Restores one snapshot into each listed env (e.g. G identical starts for GRPO).
    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()>;
    /// Describes what env `env` looks like now (for viewers and renderers);
    /// `scene` is cleared first.
    fn scene(&self, env: usize, scene: &mut Scene) -> Result<()>;
    /// Describes each env `envs` lists into `scenes[env]` (`scenes` has one
    /// entry per env): what a renderer of a batch calls, so that a GPU
    /// backend reads its states back once, not once per env.
    fn scenes(&self, envs: &[usize], scenes: &mut [Scene]) -> Result<()> {
        for &i in envs {
            let slot = scenes
                .get_mut(i)
                .ok_or_else(|| Error::Shape(format!("no scene slot for env {i}")))?;
            self.scene(i, slot)?;
        }
        Ok(())
    }
}

impl<V: VecEnv + ?Sized> VecEnv for Box<V> {
    fn spec(&self) -> &EnvSpec {
        (**self).spec()
    }
    fn num_envs(&self) -> usize {
        (**self).num_envs()
    }
    fn autoreset_mode(&self) -> AutoresetMode {
        (**self).autoreset_mode()
    }
    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        (**self).reset(seed, options)
    }
    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        (**self).reset_envs(mask, options)
    }
    fn step(&mut self, actions: &[f32]) -> Result<()> {
        (**self).step(actions)
    }
    fn batch(&self) -> &Batch {
        (**self).batch()
    }
    fn batch_mut(&mut self) -> &mut Batch {
        (**self).batch_mut()
    }
    fn snapshot(&self, env: usize) -> Result<State> {
        (**self).snapshot(env)
    }
    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        (**self).restore(state, envs)
    }
    fn scene(&self, env: usize, scene: &mut Scene) -> Result<()> {
        (**self).scene(env, scene)
    }
    fn scenes(&self, envs: &[usize], scenes: &mut [Scene]) -> Result<()> {
        (**self).scenes(envs, scenes)
    }
}

/// Checks the length of a batched action buffer.
pub fn check_actions_len(spec: &EnvSpec, num_envs: usize, actions: &[f32]) -> Result<()> {
    let dim = spec.action_space.flat_dim();
    if actions.len() != num_envs * dim {
        return Err(Error::Shape(format!(
            "actions hold {} values; {num_envs} envs × {dim} action components need {}",
            actions.len(),
            num_envs * dim
        )));
    }
    Ok(())
}

/// Validates a batch of actions before any env moves: the length, then env by
/// env `ready(i)` (may the env step?) and its action, so the error names the
/// lowest env index at fault.
pub fn check_batch(
    spec: &EnvSpec,
    num_envs: usize,
    actions: &[f32],
    mut ready: impl FnMut(usize) -> Result<()>,
) -> Result<()> {
    check_actions_len(spec, num_envs, actions)?;
    let dim = spec.action_space.flat_dim();
    for i in 0..num_envs {
        ready(i)?;
        spec.action_space
            .check(&actions[i * dim..(i + 1) * dim])
            .map_err(|reason| Error::InvalidAction {
                env: Some(i),
                reason,
            })?;
    }
    Ok(())
}

/// Checks the length of a `reset_envs` mask.
pub fn check_mask_len(mask: &[bool], num_envs: usize) -> Result<()> {
    if mask.len() != num_envs {
        return Err(Error::Shape(format!(
            "reset mask has {} entries for {num_envs} envs",
            mask.len()
        )));
    }
    Ok(())
}

/// Checks that every index in `envs` is below `num_envs`.
pub fn check_env_indices(envs: &[usize], num_envs: usize) -> Result<()> {
    match envs.iter().find(|&&i| i >= num_envs) {
        Some(bad) => Err(Error::Shape(format!(
            "env index {bad} out of range for {num_envs} envs"
        ))),
        None => Ok(()),
    }
}
