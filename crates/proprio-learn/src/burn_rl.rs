//! Adapter to burn's own RL crate (`burn::rl`), so burn users can train their
//! agents on any Proprio env.

use burn::rl::{Environment, StepResult};
use proprio::{Env, Error};

/// A Proprio env behind burn-rl's `Environment` trait; `MAX_STEPS` is burn's episode cap.
///
/// burn's `step` cannot fail, so an action the env rejects ends the episode
/// (`done = true`, reward 0, state unchanged) and the error is kept in
/// [`BurnRlEnv::last_error`] instead of panicking.
pub struct BurnRlEnv<const MAX_STEPS: usize> {
    env: Box<dyn Env>,
    obs: Vec<f32>,
    last_error: Option<Error>,
}

impl<const MAX_STEPS: usize> BurnRlEnv<MAX_STEPS> {
    /// Wraps `env`, starting episode 0 of `seed`.
    pub fn new(mut env: Box<dyn Env>, seed: u64) -> Result<Self, Error> {
        let (obs, _) = env.reset(Some(seed), None)?;
        Ok(Self {
            env,
            obs,
            last_error: None,
        })
    }

    /// The last error the env reported, if any.
    pub fn last_error(&self) -> Option<&Error> {
        self.last_error.as_ref()
    }

    /// The wrapped env.
    pub fn env(&self) -> &dyn Env {
        self.env.as_ref()
    }
}

impl<const MAX_STEPS: usize> Environment for BurnRlEnv<MAX_STEPS> {
    type State = Vec<f32>;
    type Action = Vec<f32>;

    const MAX_STEPS: usize = MAX_STEPS;

    fn state(&self) -> Vec<f32> {
        self.obs.clone()
    }

    fn step(&mut self, action: Vec<f32>) -> StepResult<Vec<f32>> {
        match self.env.step(&action) {
            Ok(step) => {
                self.obs.clone_from(&step.obs);
                StepResult {
                    next_state: step.obs,
                    reward: step.reward,
                    done: step.terminated,
                    truncated: step.truncated,
                }
            }
            Err(error) => {
                self.last_error = Some(error);
                StepResult {
                    next_state: self.obs.clone(),
                    reward: 0.0,
                    done: true,
                    truncated: false,
                }
            }
        }
    }

    fn reset(&mut self) {
        match self.env.reset(None, None) {
            Ok((obs, _)) => self.obs = obs,
            Err(error) => self.last_error = Some(error),
        }
    }
}
