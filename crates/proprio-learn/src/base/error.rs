//! Typed errors of the learners.

use std::path::PathBuf;

/// Result alias of the learners.
pub type Result<T, E = LearnError> = std::result::Result<T, E>;

/// Everything that can go wrong while training, evaluating or loading a run.
#[derive(Debug, thiserror::Error)]
pub enum LearnError {
    /// The environment refused something.
    #[error(transparent)]
    Env(#[from] proprio::Error),
    /// The reward model could not be loaded or run.
    #[error(transparent)]
    Reward(#[from] proprio_reward::RewardError),
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A checkpoint or run directory is missing, incomplete or of another kind.
    #[error("checkpoint {}: {message}", path.display())]
    Checkpoint { path: PathBuf, message: String },
    /// A hyper-parameter or option cannot be used.
    #[error("invalid training config: {0}")]
    Config(String),
    /// The compute device is unavailable.
    #[error("{0}")]
    Device(String),
    /// Training produced a non-finite loss.
    #[error("training diverged: {0}")]
    Diverged(String),
}

impl LearnError {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| Self::Io { path, source }
    }
}

/// A learner's policy that fails to act fails as an agent.
impl From<LearnError> for proprio::Error {
    fn from(e: LearnError) -> Self {
        Self::Agent(e.to_string())
    }
}
