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

pub use config::{ControlMode, Engine, ManipConfig, Settings, Split, TaskKind};
pub use controller::{
    ArmController, ControlState, EE_BOUNDS, EE_STEP, EE_TURN, FINGER_RANGE, JOINT_STEP, YAW_LIMIT,
};
pub use entries::{INSTRUCT, PICK_CUBE, PUSH_CUBE, REACH, STACK_CUBE};
pub use panda::*;
#[cfg(feature = "rapier")]
pub use rapier::{ManipState, Parts, Physics, RapierKernel, Scene, World};
pub use scripted::Scripted;

use kernel::KernelModel;
use proprio_core::serde_json::Value;
use proprio_core::{
    Agent, Env, EnvEntry, EnvSpec, Error, Family, Registry, Space, Teleop, VecEnv, VecOptions,
    family,
};
use std::sync::Arc;

/// The manipulation family.
pub struct Manipulation;

impl Family for Manipulation {
    type Config = ManipConfig;
    type Task = TaskKind;
    type Settings = Settings;
    type Model = KernelModel;
    const CRATE: &'static str = "proprio-manipulation";
    const NOUN: &'static str = "manipulation";
    #[cfg(feature = "gpu")]
    const GPU: Option<family::GpuVecEnv<KernelModel>> = Some(proprio_gpu::vec_env::<KernelModel>);

    fn entries() -> Vec<(EnvEntry, TaskKind)> {
        use TaskKind::*;
        let tasks = [Reach, PushCube, PickCube, StackCube, Instruct];
        [REACH, PUSH_CUBE, PICK_CUBE, STACK_CUBE, INSTRUCT].into_iter().zip(tasks).collect()
    }

    fn defaults(task: TaskKind) -> ManipConfig {
        ManipConfig::defaults_for(task)
    }

    /// The spec spells out the controller (and instruct's cubes, split and
    /// reward), so a run keeps what it trained on if a default changes.
    fn settings(task: TaskKind, c: &ManipConfig, _: Option<u64>) -> Result<Settings, String> {
        Settings::new(task, c)
    }

    fn spaces(task: TaskKind, s: &Settings) -> (Space, Space) {
        let unbounded = |dim| Space::uniform_box(dim, f32::NEG_INFINITY, f32::INFINITY);
        let observation = if task == TaskKind::Instruct {
            let instruction = Space::Tokens {
                vocab: proprio_text::OPENAI_VOCAB,
                max_len: instruct::INSTRUCTION_TOKENS,
            };
            let state = unbounded(task::instruct_state_dim(s));
            Space::Dict {
                spaces: vec![("state".into(), state), ("instruction".into(), instruction)],
            }
        } else {
            unbounded(task::obs_dim(s))
        };
        (observation, Space::uniform_box(s.control.action_dim(), -1.0, 1.0))
    }

    fn substeps(s: &Settings) -> u32 {
        s.substeps
    }

    fn model(s: Settings) -> proprio_core::Result<KernelModel> {
        KernelModel::new(s).map_err(Error::Backend)
    }

    fn scripted(s: Settings) -> proprio_core::Result<Box<dyn Agent + Send>> {
        Ok(Box::new(Scripted::new(s)?))
    }

    fn teleop(s: &Settings) -> Teleop {
        let labels = match s.control {
            ControlMode::PdEeDeltaPos => vec!["hand x", "hand y", "hand z", "gripper"],
            _ => Vec::new(),
        };
        Teleop {
            labels,
            ..Teleop::default()
        }
    }

    fn make_vec(
        entry: &EnvEntry,
        spec: Arc<EnvSpec>,
        s: Settings,
        n: usize,
        options: VecOptions,
    ) -> proprio_core::Result<Box<dyn VecEnv>> {
        match s.engine {
            Engine::Kernel => family::model_vec_env::<Self>(entry, spec, s, n, options),
            #[cfg(feature = "rapier")]
            Engine::Rapier => rapier::vec_env(entry, spec, s, n, options),
            #[cfg(not(feature = "rapier"))]
            Engine::Rapier => Err(no_rapier(entry)),
        }
    }

    fn make(entry: &EnvEntry, spec: Arc<EnvSpec>, s: Settings) -> proprio_core::Result<Box<dyn Env>> {
        match s.engine {
            Engine::Kernel => family::model_env::<Self>(spec, s),
            #[cfg(feature = "rapier")]
            Engine::Rapier => rapier::env(entry, spec, s),
            #[cfg(not(feature = "rapier"))]
            Engine::Rapier => Err(no_rapier(entry)),
        }
    }
}

/// Registers the five manipulation tasks, their scripted policies, reach's captions and old runs' physics.
pub fn register(registry: &mut Registry) {
    family::register::<Manipulation>(registry);
    let _ = registry.register_caption(REACH.id, captions::reach);
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

/// `physics: "rapier"` in a build without the rapier reference.
#[cfg(not(feature = "rapier"))]
fn no_rapier(entry: &EnvEntry) -> Error {
    Error::Config {
        id: entry.id.into(),
        message: "physics \"rapier\" needs proprio-manipulation's `rapier` feature; this build has the \"kernel\" physics only".into(),
    }
}
