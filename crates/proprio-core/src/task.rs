//! `Task`: the part an env author writes; `TaskEnv` turns it into an [`Env`].
//!
//! A task holds only its physics and rules. Seeding, action validation,
//! episode bookkeeping and snapshots are done once, here, for every task.

use crate::env::{Env, EnvSpec, Phase, ResetOptions, State, Transition};
use crate::error::{Error, Result};
use crate::info::Info;
use crate::rng::{EnvRng, episode_rng};
use crate::space::Space;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use std::sync::Arc;

/// Config of a task that has no options: accepts only `{}` (or no config).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoConfig {}

/// Reward and termination of one task step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// Reward of this step.
    pub reward: f64,
    /// The task reached a terminal state.
    pub terminated: bool,
}

/// The dynamics, observation, reward and termination of one env instance.
pub trait Task: Send + Sized + 'static {
    /// Serde config with defaults; unknown keys are rejected by the registry.
    type Config: Serialize + DeserializeOwned + Default + Clone + Send + Sync;
    /// The physical state saved in snapshots.
    type State: Serialize + DeserializeOwned;

    /// Builds a task; a config the task cannot use is an `Err` with the reason.
    fn new(config: &Self::Config) -> std::result::Result<Self, String>;
    /// Observation space (fixed for the lifetime of the task).
    fn observation_space(&self) -> Space;
    /// Action space (fixed for the lifetime of the task).
    fn action_space(&self) -> Space;
    /// Draws a new initial state from `rng`.
    fn reset(&mut self, rng: &mut EnvRng, options: ResetOptions, info: &mut Info) -> Result<()>;
    /// Writes the current observation.
    fn observe(&self, obs: &mut [f32]);
    /// Advances one env step; `action` has already passed [`Space::check`].
    fn step(&mut self, action: &[f32], rng: &mut EnvRng, info: &mut Info) -> Outcome;
    /// The physical state.
    fn state(&self) -> Self::State;
    /// Replaces the physical state; rejects states the task cannot be in.
    fn set_state(&mut self, state: Self::State) -> Result<()>;
    /// Draws the current state into `scene` (already cleared), for viewers
    /// and renderers; a task without a picture leaves it empty.
    fn scene(&self, scene: &mut crate::Scene) {
        let _ = scene;
    }
}

/// Runs a [`Task`] as an [`Env`]: seeding, validation, episode phase, snapshots.
pub struct TaskEnv<T: Task> {
    task: T,
    spec: Arc<EnvSpec>,
    env_index: u64,
    seed: u64,
    episode: Option<u64>,
    rng: EnvRng,
    phase: Phase,
    episode_return: f64,
}

impl<T: Task> TaskEnv<T> {
    /// Wraps `task` described by `spec` (shared by every env of a batch).
    pub fn new(task: T, spec: impl Into<Arc<EnvSpec>>) -> Self {
        Self {
            task,
            spec: spec.into(),
            env_index: 0,
            seed: 0,
            episode: None,
            rng: episode_rng(0, 0, 0),
            phase: Phase::NeedsReset,
            episode_return: 0.0,
        }
    }

    /// The task inside, for inspection.
    pub fn task(&self) -> &T {
        &self.task
    }
}

impl<T: Task> Env for TaskEnv<T> {
    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn set_env_index(&mut self, index: u64) {
        self.env_index = index;
    }

    fn reset_into(
        &mut self,
        seed: Option<u64>,
        options: ResetOptions,
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<()> {
        let episode = match seed {
            Some(s) => {
                self.seed = s;
                0
            }
            None => self.episode.map_or(0, |e| e + 1),
        };
        self.rng = episode_rng(self.seed, self.env_index, episode);
        info.clear();
        self.task.reset(&mut self.rng, options, info)?;
        self.episode = Some(episode);
        self.phase = Phase::Running;
        self.episode_return = 0.0;
        self.task.observe(obs);
        Ok(())
    }

    fn step_into(
        &mut self,
        action: &[f32],
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<Transition> {
        match self.phase {
            Phase::NeedsReset => return Err(Error::NotReset { env: None }),
            Phase::Done => return Err(Error::EpisodeOver { env: None }),
            Phase::Running => {}
        }
        self.spec
            .action_space
            .check(action)
            .map_err(|reason| Error::InvalidAction { env: None, reason })?;
        info.clear();
        let outcome = self.task.step(action, &mut self.rng, info);
        // Summed as the batch carries rewards (f32), so a restored episode's
        // statistics continue exactly as the uninterrupted ones would.
        self.episode_return += f64::from(outcome.reward as f32);
        self.task.observe(obs);
        if outcome.terminated {
            self.phase = Phase::Done;
        }
        Ok(Transition {
            reward: outcome.reward,
            terminated: outcome.terminated,
            truncated: false,
        })
    }

    fn snapshot(&self) -> Result<State> {
        let state = serde_json::to_value(self.task.state())
            .map_err(|e| Error::State(format!("cannot serialise the task state: {e}")))?;
        Ok(State {
            env: Some(self.spec.id.clone()),
            seed: self.seed,
            episode: self.episode.unwrap_or(0),
            elapsed_steps: 0,
            episode_return: self.episode_return,
            phase: self.phase,
            rng: Some(self.rng.clone()),
            state,
        })
    }

    fn restore(&mut self, state: &State, obs: &mut [f32]) -> Result<()> {
        if let Some(id) = &state.env
            && *id != self.spec.id
        {
            return Err(Error::State(format!(
                "the snapshot is of '{id}', not '{}'",
                self.spec.id
            )));
        }
        let task_state = T::State::deserialize(&state.state)
            .map_err(|e| Error::State(format!("field 'state' for {}: {e}", self.spec.id)))?;
        let previous = self.task.state();
        self.task.set_state(task_state)?;
        self.task.observe(obs);
        // A state can be finite in f64 and still overflow the f32 observation.
        if let Some(bad) = obs.iter().find(|v| !v.is_finite()) {
            let bad = *bad;
            self.task.set_state(previous)?;
            self.task.observe(obs);
            return Err(Error::State(format!(
                "field 'state' for {} gives the observation value {bad}, which is not finite",
                self.spec.id
            )));
        }
        self.seed = state.seed;
        self.episode = Some(state.episode);
        self.rng = match &state.rng {
            Some(rng) => rng.clone(),
            None => episode_rng(state.seed, self.env_index, state.episode),
        };
        self.phase = state.phase;
        self.episode_return = state.episode_return;
        Ok(())
    }

    fn scene(&self, scene: &mut crate::Scene) -> Result<()> {
        scene.clear();
        self.task.scene(scene);
        Ok(())
    }
}
