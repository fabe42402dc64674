//! The hyper-parameters every algorithm has, declared once: the loop's
//! budget. A macro rather than `#[serde(flatten)]`, which turns
//! `deny_unknown_fields` off, so a mistyped `--set` key would pass silently.

/// When the loop stops and evaluates, in env steps summed over envs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Train until this many env steps.
    pub total_steps: u64,
    /// Save and evaluate every this many env steps (0: only at the end).
    pub eval_every: u64,
    /// Episodes per evaluation.
    pub eval_episodes: usize,
}

/// Declares an algorithm's hyper-parameter struct with the loop's keys
/// appended (`total_steps`, `eval_every`, `eval_episodes`) and `budget()`.
macro_rules! hyperparameters {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$field_meta])* pub $field: $ty, )*
            /// Env steps (summed over envs; behaviour cloning: demonstration rows) to train for.
            pub total_steps: u64,
            /// Evaluate the policy every this many env steps (0: only at the end).
            pub eval_every: u64,
            /// Episodes per evaluation.
            pub eval_episodes: usize,
        }

        impl $name {
            /// When the loop stops and evaluates.
            pub fn budget(&self) -> $crate::base::hyper::Budget {
                $crate::base::hyper::Budget {
                    total_steps: self.total_steps,
                    eval_every: self.eval_every,
                    eval_episodes: self.eval_episodes,
                }
            }
        }
    };
}

pub(crate) use hyperparameters;
