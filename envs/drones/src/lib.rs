//! # proprio-drones
//!
//! Crazyflie 2.x quadrotor envs — `drones/hover-v0`, `drones/waypoints-v0`,
//! `drones/gates-v0` — a [`Family`] whose [`DroneModel`] runs on CPU threads
//! ([`proprio_core::ChunkedKernel`]) and, with the `gpu` feature, as one wgpu
//! dispatch per step (`gpu/shader.wgsl`), with one contract: a snapshot taken on one
//! backend restores on the other.

mod config;
pub mod dynamics;
mod entries;
mod family;
#[cfg(feature = "gpu")]
mod gpu;
mod model;
pub mod params;
mod scripted;
mod state;
pub mod task;
mod visuals;

pub use config::{
    ActionMode, DroneConfig, MAX_POINTS, Randomize, Settings, SquaredReward, Start, TaskKind, Wind,
};
pub use entries::{GATES, HOVER, WAYPOINTS};
pub use family::Drones;
pub use model::DroneModel;
pub use scripted::Scripted;
pub use state::{CHUNK, Drone, LEN};

use proprio_core::Registry;

/// Registers the three drone tasks and their scripted controller.
pub fn register(registry: &mut Registry) {
    proprio_core::family::register::<Drones>(registry);
}
