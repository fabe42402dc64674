//! Typed errors: everything a caller can get wrong is reported here, never as a panic.

use std::fmt;

/// Result alias used across the Proprio API.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why an action was rejected before it reached the simulation.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionError {
    /// The action slice has the wrong number of components.
    Length { expected: usize, got: usize },
    /// A component is NaN or infinite.
    NonFinite { index: usize, value: f32 },
    /// A discrete component is not a whole number.
    NotInteger { index: usize, value: f32 },
    /// A discrete component lies outside its valid range `[low, high]`.
    OutOfRange {
        index: usize,
        value: f32,
        low: i64,
        high: i64,
    },
}

impl fmt::Display for ActionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Length { expected, got } => {
                write!(f, "expected {expected} component(s), got {got}")
            }
            Self::NonFinite { index, value } => {
                write!(
                    f,
                    "component {index} is {value}, which is not a finite number"
                )
            }
            Self::NotInteger { index, value } => {
                write!(
                    f,
                    "component {index} is {value}, but this space takes whole numbers"
                )
            }
            Self::OutOfRange {
                index,
                value,
                low,
                high,
            } => write!(
                f,
                "component {index} is {value}, outside the valid range {low}..={high}"
            ),
        }
    }
}

/// Every failure the environment API reports.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// An action did not belong to the action space.
    #[error("invalid action{}: {reason}", at_env(*env))]
    InvalidAction {
        env: Option<usize>,
        reason: ActionError,
    },
    /// `make` was asked for an id that is not registered.
    #[error("unknown environment '{id}'{}", suggestion(hint))]
    UnknownEnv { id: String, hint: Option<String> },
    /// A config value could not be used for this environment.
    #[error("invalid config for {id}: {message}")]
    Config { id: String, message: String },
    /// Reset options could not be used.
    #[error("invalid reset options: {0}")]
    Options(String),
    /// A snapshot could not be restored.
    #[error("invalid state: {0}")]
    State(String),
    /// `step` was called before the first `reset`.
    #[error("step() called before reset(){}", at_env(*env))]
    NotReset { env: Option<usize> },
    /// `step` was called on an episode that already ended.
    #[error("the episode has ended{}; reset it before stepping again", at_env(*env))]
    EpisodeOver { env: Option<usize> },
    /// A batch buffer handed to a vector env has the wrong size.
    #[error("batch shape mismatch: {0}")]
    Shape(String),
    /// The requested backend cannot run here (no GPU adapter, or no GPU version of the env).
    #[error("{0}")]
    Backend(String),
    /// An agent could not choose its actions (e.g. a policy's network failed).
    #[error("the agent could not act: {0}")]
    Agent(String),
    /// An allocation was refused before it was made: it would not fit in memory.
    #[error(
        "{what} needs {needed} of memory, but only {available} is available; use fewer envs or smaller buffers"
    )]
    Memory {
        what: String,
        needed: String,
        available: String,
    },
}

fn at_env(env: Option<usize>) -> String {
    env.map(|i| format!(" for env {i}")).unwrap_or_default()
}

fn suggestion(hint: &Option<String>) -> String {
    hint.as_ref()
        .map(|h| format!(" (did you mean '{h}'?)"))
        .unwrap_or_else(|| " (`proprio list` shows the registered ids)".into())
}

impl Error {
    /// Attaches the batch index of the env that failed, for errors that carry one.
    pub fn at(self, index: usize) -> Self {
        match self {
            Self::InvalidAction { reason, .. } => Self::InvalidAction {
                env: Some(index),
                reason,
            },
            Self::NotReset { .. } => Self::NotReset { env: Some(index) },
            Self::EpisodeOver { .. } => Self::EpisodeOver { env: Some(index) },
            other => other,
        }
    }

    /// Removes the batch index, for errors of a single env.
    pub fn without_env(self) -> Self {
        match self {
            Self::InvalidAction { reason, .. } => Self::InvalidAction { env: None, reason },
            Self::NotReset { .. } => Self::NotReset { env: None },
            Self::EpisodeOver { .. } => Self::EpisodeOver { env: None },
            other => other,
        }
    }
}
