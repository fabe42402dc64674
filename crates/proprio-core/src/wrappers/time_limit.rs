//! `TimeLimit`: truncates an episode after a fixed number of steps.

use crate::env::{Env, EnvSpec, Phase, ResetOptions, State, Transition};
use crate::error::{Error, Result};
use crate::info::Info;
use std::sync::Arc;

/// Sets `truncated` once an episode reaches `max_steps` (Gymnasium's `TimeLimit`).
///
/// The step counter is part of the snapshot (`elapsed_steps`).
pub struct TimeLimit<E> {
    inner: E,
    max_steps: Option<u64>,
    elapsed: u64,
    /// The inner spec with this limit, unless the inner spec already states it.
    spec: Option<Arc<EnvSpec>>,
}

impl<E: Env> TimeLimit<E> {
    /// Truncates `inner`'s episodes after `max_steps` steps; `None` never truncates.
    pub fn new(inner: E, max_steps: Option<u64>) -> Self {
        let spec = (inner.spec().max_episode_steps != max_steps).then(|| {
            let mut spec = inner.spec().clone();
            spec.max_episode_steps = max_steps;
            Arc::new(spec)
        });
        Self {
            inner,
            max_steps,
            elapsed: 0,
            spec,
        }
    }

    /// The wrapped env.
    pub fn inner(&self) -> &E {
        &self.inner
    }

    /// Steps taken in the current episode.
    pub fn elapsed_steps(&self) -> u64 {
        self.elapsed
    }

    fn out_of_time(&self) -> bool {
        self.max_steps.is_some_and(|m| self.elapsed >= m)
    }
}

impl<E: Env> Env for TimeLimit<E> {
    fn spec(&self) -> &EnvSpec {
        self.spec.as_deref().unwrap_or_else(|| self.inner.spec())
    }

    fn set_env_index(&mut self, index: u64) {
        self.inner.set_env_index(index);
    }

    fn reset_into(
        &mut self,
        seed: Option<u64>,
        options: ResetOptions,
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<()> {
        self.inner.reset_into(seed, options, obs, info)?;
        self.elapsed = 0;
        Ok(())
    }

    fn step_into(
        &mut self,
        action: &[f32],
        obs: &mut [f32],
        info: &mut Info,
    ) -> Result<Transition> {
        if self.out_of_time() {
            return Err(Error::EpisodeOver { env: None });
        }
        let mut t = self.inner.step_into(action, obs, info)?;
        self.elapsed += 1;
        t.truncated |= self.out_of_time();
        Ok(t)
    }

    fn snapshot(&self) -> Result<State> {
        let mut state = self.inner.snapshot()?;
        state.elapsed_steps = self.elapsed;
        if self.out_of_time() {
            state.phase = Phase::Done;
        }
        Ok(state)
    }

    fn restore(&mut self, state: &State, obs: &mut [f32]) -> Result<()> {
        self.inner.restore(state, obs)?;
        self.elapsed = state.elapsed_steps;
        Ok(())
    }

    fn scene(&self, scene: &mut crate::Scene) -> Result<()> {
        self.inner.scene(scene)
    }
}
