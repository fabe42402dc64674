//! # proprio-driving
//!
//! Car envs — `driving/lane-keep-v0`, `driving/racing-v0`,
//! `driving/parking-v0`, `driving/highway-v0` — on a dynamic bicycle model
//! (a mid-size saloon) with IDM/MOBIL traffic, procedural seeded roads and
//! tracks, and CaRL-style rewards: a [`Family`] whose [`DrivingModel`] steps
//! one [`Car`] on CPU threads and, with the `gpu` feature, in one wgpu
//! dispatch per step (`gpu/`), with the same contract and layout.

mod config;
pub mod controller;
mod entries;
mod family;
#[cfg(feature = "gpu")]
mod gpu;
mod highway;
mod lane_keep;
mod model;
pub mod params;
mod parking;
mod racing;
pub mod road;
mod rules;
mod scripted;
mod state;
pub mod task;
pub mod traffic;
pub mod vehicle;
mod visuals;

pub use config::{ActionMode, DrivingConfig, Settings, TaskKind};
pub use entries::{HIGHWAY, LANE_KEEP, PARKING, RACING};
pub use family::Driving;
pub use model::DrivingModel;
pub use scripted::Scripted;
pub use state::{Car, LEN, MAX_OTHERS, MAX_SEGMENTS, Other, Segment};

use proprio_core::Registry;

/// Registers the four driving tasks and their scripted drivers.
pub fn register(registry: &mut Registry) {
    proprio_core::family::register::<Driving>(registry);
}
