//! Networks, apart from the algorithms that train them: MLPs and their fused layer, action heads,
//! image encoders, the instruction encoder and its reading as references to objects, a fixed standardisation of the state, the actor-critic, squashed and deterministic actors, twin
//! critics, the transformer sequence policy and the turn critic of multi-turn answers.

pub mod acting;
pub mod actor;
pub mod actor_critic;
pub mod critic;
pub mod deterministic;
pub mod encoder;
pub mod entities;
pub mod head;
pub mod instruction;
pub mod kv_cache;
pub mod layout;
pub mod linear;
pub mod mlp;
pub mod sequence;
pub mod squashed;
pub mod standardize;
pub mod tanh;
pub mod transformer;
pub mod turn_critic;
