//! # proprio-classic
//!
//! Gymnasium's classic-control envs, reproduced exactly (dynamics,
//! observation, reward, termination, truncation) and checked against
//! trajectories recorded from Gymnasium itself (`tools/gen_gymnasium_fixtures.py`).

mod cartpole;
mod config;
mod options;
mod pendulum;
mod visuals;

pub use cartpole::CartPole;
pub use config::{CartPoleConfig, PendulumConfig};
pub use pendulum::Pendulum;

use proprio_core::{EnvSpec, Registry, Teleop};

/// Registers `classic/cartpole-v1` and `classic/pendulum-v1`, with their captions.
pub fn register(registry: &mut Registry) {
    registry.register_task::<CartPole>(cartpole::ENTRY);
    registry.register_task::<Pendulum>(pendulum::ENTRY);
    let torque = |_: &EnvSpec| {
        Ok(Teleop {
            labels: vec!["torque"],
            ..Teleop::default()
        })
    };
    let _ = registry.register_teleop(pendulum::ENTRY.id, Box::new(torque));
    registry
        .register_caption(cartpole::ENTRY.id, cartpole::caption)
        .expect("cartpole was registered on the line above");
    registry
        .register_caption(pendulum::ENTRY.id, pendulum::caption)
        .expect("pendulum was registered on the line above");
}
