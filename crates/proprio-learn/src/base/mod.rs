//! What every part of the learner stands on: errors, host↔tensor copies,
//! gradient clipping, Polyak averaging, the compute device, and the named random streams.

pub mod device;
pub mod error;
pub mod grad;
pub mod polyak;
pub mod seeds;
pub mod store;
pub mod tensor;
