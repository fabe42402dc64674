//! The single-environment API (Gymnasium's `Env`), its spec and its snapshot state.

use crate::error::Result;
use crate::info::Info;
use crate::rng::EnvRng;
use crate::scene::Scene;
use crate::space::{Space, bounds};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What an environment is: its id, spaces and episode rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnvSpec {
    /// Registry id, e.g. `classic/cartpole-v1`.
    pub id: String,
    /// One line saying what the task is.
    pub description: String,
    /// Observations an agent receives.
    pub observation_space: Space,
    /// Actions an agent sends.
    pub action_space: Space,
    /// Smallest and largest reward of one step.
    #[serde(with = "bounds::pair")]
    pub reward_range: (f64, f64),
    /// Steps after which the episode is truncated, if any.
    pub max_episode_steps: Option<u64>,
    /// Physics integration steps taken per env step (for throughput figures).
    pub physics_steps_per_step: u32,
    /// How the reward is computed.
    pub reward: String,
    /// When an episode terminates or truncates.
    pub termination: String,
    /// How out-of-bounds continuous actions are treated.
    pub action_handling: String,
    /// The config this instance was made with, defaults filled in.
    pub config: Value,
}

/// Options for `reset`: a JSON object whose keys each env documents (Gymnasium's `options`).
pub type ResetOptions<'a> = Option<&'a Value>;

/// Reward and episode flags of one step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Transition {
    /// Reward of this step.
    pub reward: f64,
    /// The episode reached a terminal state of the task.
    pub terminated: bool,
    /// The episode was cut short (time limit) without reaching a terminal state.
    pub truncated: bool,
}

/// The result of [`Env::step`], Gymnasium's five-tuple.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// Observation after the step.
    pub obs: Vec<f32>,
    /// Reward of this step.
    pub reward: f64,
    /// The episode reached a terminal state of the task.
    pub terminated: bool,
    /// The episode was cut short (time limit).
    pub truncated: bool,
    /// Diagnostics of this step.
    pub info: Info,
}

/// Where an episode stands, as saved in a snapshot.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// No episode has been started.
    NeedsReset,
    /// The episode accepts steps.
    #[default]
    Running,
    /// The episode ended; only a reset continues.
    Done,
}

/// Everything needed to continue an env bit-identically; serialisable with serde.
///
/// `state` holds the task's own physical state (for the classic envs exactly
/// Gymnasium's `env.unwrapped.state`). Every other field has a default, so a
/// bare `{"state": [...]}` restores a fresh episode in that state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct State {
    /// Registry id of the env that made the snapshot; checked on restore when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// Seed of the current run of episodes.
    #[serde(default)]
    pub seed: u64,
    /// Episode index under `seed`.
    #[serde(default)]
    pub episode: u64,
    /// Steps taken in this episode (the time-limit counter).
    #[serde(default)]
    pub elapsed_steps: u64,
    /// Undiscounted reward summed over this episode so far (for episode statistics).
    #[serde(default)]
    pub episode_return: f64,
    /// Whether the episode is running or over.
    #[serde(default)]
    pub phase: Phase,
    /// Random generator position; derived from (seed, env index, episode) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rng: Option<EnvRng>,
    /// The task's physical state.
    pub state: Value,
}

/// One environment instance, stepped by one caller.
///
/// Actions and observations are flat `f32` vectors in the encoding of their
/// [`Space`]. The `*_into` methods write into caller buffers and allocate
/// nothing; [`Env::reset`] and [`Env::step`] are the Gymnasium-shaped
/// conveniences on top.
pub trait Env: Send {
    /// What this env is.
    fn spec(&self) -> &EnvSpec;

    /// Sets the env's index in its batch: the stream its episodes draw from.
    fn set_env_index(&mut self, index: u64);

    /// Starts an episode. `Some(seed)` restarts the episode count under that
    /// seed; `None` continues with the next episode.
    fn reset_into(
        &mut self,
        seed: Option<u64>,
        options: ResetOptions,
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<()>;

    /// Applies one action; rejects malformed actions with a typed error.
    fn step_into(&mut self, action: &[f32], obs: &mut [f32], info: &mut Info)
    -> Result<Transition>;

    /// Captures the full state, random generator included.
    fn snapshot(&self) -> Result<State>;

    /// Continues from a snapshot; the current observation is written into `obs`.
    fn restore(&mut self, state: &State, obs: &mut [f32]) -> Result<()>;

    /// Describes what the env looks like now (for viewers and renderers);
    /// `scene` is cleared first.
    fn scene(&self, scene: &mut Scene) -> Result<()>;

    /// Gymnasium's `reset(seed, options) -> (obs, info)`.
    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<(Vec<f32>, Info)> {
        let mut obs = vec![0.0; self.spec().observation_space.flat_dim()];
        let mut info = Info::default();
        self.reset_into(seed, options, &mut obs, &mut info)?;
        Ok((obs, info))
    }

    /// Gymnasium's `step(action) -> (obs, reward, terminated, truncated, info)`.
    fn step(&mut self, action: &[f32]) -> Result<Step> {
        let mut obs = vec![0.0; self.spec().observation_space.flat_dim()];
        let mut info = Info::default();
        let t = self.step_into(action, &mut obs, &mut info)?;
        Ok(Step {
            obs,
            reward: t.reward,
            terminated: t.terminated,
            truncated: t.truncated,
            info,
        })
    }
}

impl<E: Env + ?Sized> Env for Box<E> {
    fn spec(&self) -> &EnvSpec {
        (**self).spec()
    }
    fn set_env_index(&mut self, index: u64) {
        (**self).set_env_index(index)
    }
    fn reset_into(
        &mut self,
        seed: Option<u64>,
        options: ResetOptions,
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<()> {
        (**self).reset_into(seed, options, obs, info)
    }
    fn step_into(
        &mut self,
        action: &[f32],
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<Transition> {
        (**self).step_into(action, obs, info)
    }
    fn snapshot(&self) -> Result<State> {
        (**self).snapshot()
    }
    fn restore(&mut self, state: &State, obs: &mut [f32]) -> Result<()> {
        (**self).restore(state, obs)
    }
    fn scene(&self, scene: &mut Scene) -> Result<()> {
        (**self).scene(scene)
    }
}
