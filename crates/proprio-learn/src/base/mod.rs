//! What every part of the learner stands on: errors, host↔tensor copies,
//! gradient clipping, Polyak averaging, the compute device, the named random
//! streams, the hyper-parameters every algorithm has, the update's thread pool
//! and the minibatch shards that run on it.

pub mod adam;
pub mod device;
pub mod error;
pub mod flex;
pub mod grad;
pub mod hyper;
pub mod polyak;
pub mod seeds;
pub mod shards;
pub mod store;
pub mod tensor;
pub mod threads;
