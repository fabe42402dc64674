//! The algorithms, each in its own folder; none imports another. The
//! off-policy ones share one replay loop (`offpolicy`).

pub mod archer;
pub mod bc;
pub mod dsac;
pub mod grpo;
pub mod offpolicy;
pub mod ppo;
pub mod sac;
pub mod td3;
