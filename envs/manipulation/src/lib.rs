//! # proprio-manipulation
//!
//! A Franka Emika Panda with its parallel-jaw hand on a table:
//! `manipulation/reach-v0`, `push-cube-v0`, `pick-cube-v0`, `stack-cube-v0`
//! and `instruct-v0` (an instruction in CLIP tokens about one of several
//! coloured cubes). [`panda`] is the robot both physics share; the tasks
//! read either through [`task::Measure`]. The default physics, [`kernel`], is
//! a [`Family`] model on CPU threads and, with the `gpu` feature, on any GPU;
//! the `rapier` feature adds the rapier3d reference (`physics: "rapier"`).

mod captions;
mod config;
mod controller;
mod entries;
mod family;
pub mod instruct;
pub mod kernel;
mod measure;
pub mod panda;
#[cfg(feature = "rapier")]
pub mod rapier;
pub mod reward;
mod scripted;
pub mod task;
mod visuals;

pub use config::{ControlMode, ManipConfig, Physics, Settings, TaskKind};
pub use controller::{
    ArmController, ControlState, EE_BOUNDS, EE_STEP, EE_TURN, FINGER_RANGE, JOINT_STEP, YAW_LIMIT,
};
pub use entries::{INSTRUCT, PICK_CUBE, PUSH_CUBE, REACH, STACK_CUBE};
pub use family::Manipulation;
pub use instruct::Split;
pub use panda::*;
#[cfg(feature = "rapier")]
pub use rapier::{ManipState, Parts, RapierKernel, Template, World, WorldState};
pub use scripted::Scripted;

use proprio_core::Registry;
use proprio_core::serde_json::Value;

/// Registers the five manipulation tasks, their scripted policies, captions and old runs' physics.
pub fn register(registry: &mut Registry) {
    proprio_core::family::register::<Manipulation>(registry);
    let _ = registry.register_caption(REACH.id, captions::reach);
    let _ = registry.register_caption(PUSH_CUBE.id, captions::push);
    let _ = registry.register_caption(PICK_CUBE.id, captions::pick);
    let _ = registry.register_caption(STACK_CUBE.id, captions::stack);
    let _ = registry.register_caption(INSTRUCT.id, captions::instruct);
    for entry in [REACH, PUSH_CUBE, PICK_CUBE, STACK_CUBE] {
        let _ = registry.register_legacy(entry.id, rapier_before_the_kernel);
    }
}

/// Runs written before the kernel physics became the default recorded no
/// `physics` key: they were trained on rapier, and stay on it.
fn rapier_before_the_kernel(config: &mut Value) {
    if config.is_null() {
        *config = Value::Object(Default::default());
    }
    if let Value::Object(map) = config {
        map.entry("physics").or_insert_with(|| "rapier".into());
    }
}
