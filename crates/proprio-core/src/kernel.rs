//! `KernelVecEnv`: N envs whose physics one [`Kernel`] steps together —
//! struct-of-arrays code on CPU threads, or one GPU compute dispatch per step.
//!
//! The kernel owns the physical state; this type owns the episode bookkeeping
//! every backend shares (seeding, autoreset, time limit, action validation,
//! snapshots), so the CPU and GPU kernels of an env follow the same contract.
//!
//! Episode starts are drawn on the host from each env's own stream and staged
//! in the kernel one episode ahead: a kernel resets finished envs inside its
//! own step, without a round trip, and every backend starts an episode from
//! exactly the same state.

use crate::env::{Env, EnvSpec, Phase, ResetOptions, State, Transition};
use crate::error::{Error, Result};
use crate::info::Info;
use crate::rng::{EnvRng, episode_rng};
use crate::vec_env::{
    AutoresetMode, Batch, VecEnv, check_batch, check_env_indices, check_mask_len,
};
use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// Bit flags telling a kernel what each env does in one call.
pub mod command {
    /// Step the env with its action.
    pub const STEP: u32 = 1;
    /// Start the staged episode and write its first observation (no step).
    pub const RESET: u32 = 2;
    /// The time limit is reached after this step: set `truncated`.
    pub const LAST: u32 = 4;
    /// If the episode ends in this step, keep its final observation and info,
    /// then start the staged episode within the same call.
    pub const SAME_STEP: u32 = 8;
}

/// Batched physics of one env family: steps, resets and exposes N envs at once.
pub trait Kernel: Send {
    /// The physical state of one env, as saved in snapshots.
    type State: Serialize + DeserializeOwned + Clone + Send + Sync;
    /// What each env is.
    fn spec(&self) -> &EnvSpec;
    /// Number of envs N.
    fn num_envs(&self) -> usize;
    /// Draws the start of an episode from the env's stream (on the host).
    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Self::State>;
    /// Sets the state env `env` takes at its next [`command::RESET`] (or same-step reset).
    fn stage(&mut self, env: usize, start: &Self::State) -> Result<()>;
    /// Runs one call. `commands[i]` (a set of [`command`] flags, 0 for "leave
    /// alone") says what env `i` does; the kernel writes the batch rows of
    /// every env with a non-zero command.
    fn run(&mut self, commands: &[u32], actions: &[f32], batch: &mut Batch) -> Result<()>;
    /// The current state of env `env`.
    fn state(&self, env: usize) -> Result<Self::State>;
    /// Replaces env `env`'s state and writes its observation into the batch;
    /// rejects states the env cannot be in.
    fn set_state(&mut self, env: usize, state: &Self::State, batch: &mut Batch) -> Result<()>;
    /// Draws env `env` as it is now into `scene` (already cleared).
    fn scene(&self, env: usize, scene: &mut crate::Scene) -> Result<()>;
    /// Draws each env `envs` lists into `scenes[env]` (already cleared); a
    /// kernel whose states live on a device reads them back once for all.
    fn scenes(&self, envs: &[usize], scenes: &mut [crate::Scene]) -> Result<()> {
        for &i in envs {
            self.scene(i, &mut scenes[i])?;
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    NeedsReset,
    Running,
    /// The next step resets this env (next-step mode).
    Pending,
    /// Waits for `reset_envs` (disabled mode).
    Over,
}

/// Runs a [`Kernel`] as a [`VecEnv`].
pub struct KernelVecEnv<K: Kernel> {
    kernel: K,
    mode: AutoresetMode,
    limit: Option<u64>,
    batch: Batch,
    commands: Vec<u32>,
    status: Vec<Status>,
    seeds: Vec<u64>,
    episodes: Vec<u64>,
    elapsed: Vec<u64>,
    returns: Vec<f64>,
    /// Stream index of env 0 (env `i` draws from stream `first_index + i`).
    first_index: u64,
}

impl<K: Kernel> KernelVecEnv<K> {
    /// Wraps `kernel`; the time limit is the spec's `max_episode_steps`.
    pub fn new(kernel: K, autoreset: AutoresetMode) -> Result<Self> {
        let n = kernel.num_envs();
        let spec = kernel.spec();
        Ok(Self {
            batch: Batch::new(n, spec.observation_space.flat_dim())?,
            limit: spec.max_episode_steps,
            kernel,
            mode: autoreset,
            commands: vec![0; n],
            status: vec![Status::NeedsReset; n],
            seeds: vec![0; n],
            episodes: vec![0; n],
            elapsed: vec![0; n],
            returns: vec![0.0; n],
            first_index: 0,
        })
    }

    /// The kernel, e.g. to reach GPU buffers.
    pub fn kernel(&self) -> &K {
        &self.kernel
    }

    /// The kernel, mutably.
    pub fn kernel_mut(&mut self) -> &mut K {
        &mut self.kernel
    }

    fn rng(&self, env: usize, episode: u64) -> EnvRng {
        episode_rng(self.seeds[env], self.first_index + env as u64, episode)
    }

    /// Stages the start of env `env`'s next episode.
    fn stage_next(&mut self, env: usize) -> Result<()> {
        let start = self
            .kernel
            .draw(&mut self.rng(env, self.episodes[env] + 1), None)?;
        self.kernel.stage(env, &start)
    }

    /// Bookkeeping after env `env` started a new episode inside the kernel.
    fn started(&mut self, env: usize, episode: u64) -> Result<()> {
        self.episodes[env] = episode;
        self.elapsed[env] = 0;
        self.returns[env] = 0.0;
        self.status[env] = Status::Running;
        self.stage_next(env)
    }

    fn reset_where(
        &mut self,
        mask: Option<&[bool]>,
        seed: Option<u64>,
        options: ResetOptions,
    ) -> Result<()> {
        let n = self.kernel.num_envs();
        let mut starts = Vec::with_capacity(n);
        for i in 0..n {
            if mask.is_some_and(|m| !m[i]) {
                continue;
            }
            let (seed, episode) = match (seed, self.status[i]) {
                (Some(s), _) => (s, 0),
                (None, Status::NeedsReset) => (self.seeds[i], 0),
                (None, _) => (self.seeds[i], self.episodes[i] + 1),
            };
            let start = self.kernel.draw(
                &mut episode_rng(seed, self.first_index + i as u64, episode),
                options,
            )?;
            starts.push((i, seed, episode, start));
        }
        self.commands.fill(0);
        for (i, seed, _, start) in &starts {
            self.seeds[*i] = *seed;
            self.kernel.stage(*i, start)?;
            self.commands[*i] = command::RESET;
        }
        self.kernel.run(&self.commands, &[], &mut self.batch)?;
        for (i, _, episode, _) in starts {
            self.started(i, episode)?;
        }
        Ok(())
    }

    fn phase(&self, env: usize) -> Phase {
        match self.status[env] {
            Status::NeedsReset => Phase::NeedsReset,
            Status::Running => Phase::Running,
            Status::Pending | Status::Over => Phase::Done,
        }
    }
}

impl<K: Kernel> VecEnv for KernelVecEnv<K> {
    fn spec(&self) -> &EnvSpec {
        self.kernel.spec()
    }

    fn num_envs(&self) -> usize {
        self.kernel.num_envs()
    }

    fn autoreset_mode(&self) -> AutoresetMode {
        self.mode
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.reset_where(None, seed, options)
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        check_mask_len(mask, self.kernel.num_envs())?;
        self.reset_where(Some(mask), None, options)
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        let n = self.kernel.num_envs();
        let status = &self.status;
        check_batch(self.kernel.spec(), n, actions, |i| match status[i] {
            Status::NeedsReset => Err(Error::NotReset { env: Some(i) }),
            Status::Over => Err(Error::EpisodeOver { env: Some(i) }),
            Status::Running | Status::Pending => Ok(()),
        })?;
        let same_step = if self.mode == AutoresetMode::SameStep {
            command::SAME_STEP
        } else {
            0
        };
        for i in 0..n {
            self.commands[i] = match self.status[i] {
                Status::Pending => command::RESET,
                _ if self.limit.is_some_and(|m| self.elapsed[i] + 1 >= m) => {
                    command::STEP | command::LAST | same_step
                }
                _ => command::STEP | same_step,
            };
        }
        self.kernel.run(&self.commands, actions, &mut self.batch)?;
        for i in 0..n {
            if self.commands[i] == command::RESET {
                self.started(i, self.episodes[i] + 1)?;
                continue;
            }
            self.elapsed[i] += 1;
            self.returns[i] += f64::from(self.batch.reward[i]);
            if self.batch.done(i) {
                match self.mode {
                    AutoresetMode::NextStep => self.status[i] = Status::Pending,
                    AutoresetMode::Disabled => self.status[i] = Status::Over,
                    AutoresetMode::SameStep => self.started(i, self.episodes[i] + 1)?,
                }
            }
        }
        Ok(())
    }

    fn batch(&self) -> &Batch {
        &self.batch
    }

    fn batch_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }

    fn scene(&self, env: usize, scene: &mut crate::Scene) -> Result<()> {
        check_env_indices(&[env], self.kernel.num_envs())?;
        scene.clear();
        self.kernel.scene(env, scene)
    }

    fn scenes(&self, envs: &[usize], scenes: &mut [crate::Scene]) -> Result<()> {
        check_env_indices(envs, self.kernel.num_envs().min(scenes.len()))?;
        for &i in envs {
            scenes[i].clear();
        }
        self.kernel.scenes(envs, scenes)
    }

    fn snapshot(&self, env: usize) -> Result<State> {
        check_env_indices(&[env], self.kernel.num_envs())?;
        let state = serde_json::to_value(self.kernel.state(env)?)
            .map_err(|e| Error::State(format!("cannot serialise the state: {e}")))?;
        Ok(State {
            env: Some(self.kernel.spec().id.clone()),
            seed: self.seeds[env],
            episode: self.episodes[env],
            elapsed_steps: self.elapsed[env],
            episode_return: self.returns[env],
            phase: self.phase(env),
            rng: None,
            state,
        })
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        let id = &self.kernel.spec().id;
        if let Some(theirs) = &state.env
            && theirs != id
        {
            return Err(Error::State(format!(
                "the snapshot is of '{theirs}', not '{id}'"
            )));
        }
        let physical = K::State::deserialize(&state.state)
            .map_err(|e| Error::State(format!("field 'state' for {id}: {e}")))?;
        check_env_indices(envs, self.kernel.num_envs())?;
        let status = match (state.phase, self.mode) {
            (Phase::NeedsReset, _) => Status::NeedsReset,
            (Phase::Running, _) => Status::Running,
            (Phase::Done, AutoresetMode::Disabled) => Status::Over,
            (Phase::Done, _) => Status::Pending,
        };
        for &i in envs {
            self.kernel.set_state(i, &physical, &mut self.batch)?;
            self.seeds[i] = state.seed;
            self.episodes[i] = state.episode;
            self.elapsed[i] = state.elapsed_steps;
            self.returns[i] = state.episode_return;
            self.status[i] = status;
            self.batch.infos[i].clear();
            self.batch.rows_mut().clear_flags(i);
            self.stage_next(i)?;
        }
        Ok(())
    }
}

/// One env of a [`Kernel`] as a single [`Env`] (what `make` returns).
pub struct KernelEnv<K: Kernel> {
    venv: KernelVecEnv<K>,
}

impl<K: Kernel> KernelEnv<K> {
    /// Wraps a kernel of exactly one env.
    pub fn new(kernel: K) -> Result<Self> {
        if kernel.num_envs() != 1 {
            return Err(Error::Shape(format!(
                "a single env needs a kernel of 1 env, not {}",
                kernel.num_envs()
            )));
        }
        Ok(Self {
            venv: KernelVecEnv::new(kernel, AutoresetMode::Disabled)?,
        })
    }

    /// The kernel inside.
    pub fn kernel(&self) -> &K {
        self.venv.kernel()
    }

    fn copy_out(&self, obs: &mut [f32], info: Option<&mut Info>) {
        obs.copy_from_slice(self.venv.batch.obs(0));
        if let Some(info) = info {
            info.clone_from(&self.venv.batch.infos[0]);
        }
    }
}

impl<K: Kernel> Env for KernelEnv<K> {
    fn spec(&self) -> &EnvSpec {
        self.venv.spec()
    }

    fn set_env_index(&mut self, index: u64) {
        self.venv.first_index = index;
    }

    fn reset_into(
        &mut self,
        seed: Option<u64>,
        options: ResetOptions,
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<()> {
        self.venv.reset(seed, options).map_err(Error::without_env)?;
        self.copy_out(obs, Some(info));
        Ok(())
    }

    fn step_into(
        &mut self,
        action: &[f32],
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<Transition> {
        self.venv.step(action).map_err(Error::without_env)?;
        self.copy_out(obs, Some(info));
        let b = &self.venv.batch;
        Ok(Transition {
            reward: f64::from(b.reward[0]),
            terminated: b.terminated[0],
            truncated: b.truncated[0],
        })
    }

    fn snapshot(&self) -> Result<State> {
        self.venv.snapshot(0)
    }

    fn scene(&self, scene: &mut crate::Scene) -> Result<()> {
        self.venv.scene(0, scene)
    }

    fn restore(&mut self, state: &State, obs: &mut [f32]) -> Result<()> {
        self.venv.restore(state, &[0]).map_err(Error::without_env)?;
        self.copy_out(obs, None);
        Ok(())
    }
}
