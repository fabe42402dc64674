//! The errors of reward models: each names the file or tensor at fault.

use std::path::PathBuf;

/// Why a reward model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum RewardError {
    /// A file could not be read.
    #[error("{path}: {message}")]
    Io { path: PathBuf, message: String },
    /// A config file is malformed or describes a model this crate does not implement.
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    /// A checkpoint tensor's shape differs from the one the config implies.
    #[error("{path}: tensor '{tensor}' has shape {found:?} but the config implies {expected:?}")]
    Shape {
        path: PathBuf,
        tensor: String,
        expected: Vec<usize>,
        found: Vec<usize>,
    },
    /// A tensor the model needs is not in the checkpoint.
    #[error("{path}: tensor '{tensor}' is missing")]
    Missing { path: PathBuf, tensor: String },
    /// Any other problem with a checkpoint (a wrong dtype, a corrupt file).
    #[error("{path}: {message}")]
    Checkpoint { path: PathBuf, message: String },
    /// Inputs the model cannot take (an empty batch, a wrong buffer length).
    #[error("{0}")]
    Input(String),
    /// The tensor backend failed.
    #[error("{0}")]
    Backend(String),
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, RewardError>;

impl RewardError {
    pub(crate) fn io(path: &std::path::Path, e: impl std::fmt::Display) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        }
    }

    pub(crate) fn config(path: &std::path::Path, message: impl Into<String>) -> Self {
        Self::Config {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}
