//! [`Manipulation`]: the family's one [`Family`] impl — its entries, config,
//! spaces, model, scripted agent, key names and GPU twin.

use crate::config::{ControlMode, ManipConfig, Physics, Settings, TaskKind};
use crate::entries::{INSTRUCT, PICK_CUBE, PUSH_CUBE, REACH, STACK_CUBE};
use crate::kernel::KernelModel;
use crate::scripted::Scripted;
use crate::{instruct, task};
use proprio_core::{
    Agent, Env, EnvEntry, EnvSpec, Error, Family, Space, Teleop, VecEnv, VecOptions, family,
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
        [REACH, PUSH_CUBE, PICK_CUBE, STACK_CUBE, INSTRUCT]
            .into_iter()
            .zip(tasks)
            .collect()
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
            let state = task::instruct_state_space(s);
            Space::Dict {
                spaces: vec![("state".into(), state), ("instruction".into(), instruction)],
            }
        } else {
            unbounded(task::obs_dim(s))
        };
        (
            observation,
            Space::uniform_box(s.control.action_dim(), -1.0, 1.0),
        )
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
        match s.physics {
            Physics::Kernel => family::model_vec_env::<Self>(entry, spec, s, n, options),
            #[cfg(feature = "rapier")]
            Physics::Rapier => crate::rapier::vec_env(entry, spec, s, n, options),
            #[cfg(not(feature = "rapier"))]
            Physics::Rapier => Err(no_rapier(entry)),
        }
    }

    fn make(
        entry: &EnvEntry,
        spec: Arc<EnvSpec>,
        s: Settings,
    ) -> proprio_core::Result<Box<dyn Env>> {
        match s.physics {
            Physics::Kernel => family::model_env::<Self>(spec, s),
            #[cfg(feature = "rapier")]
            Physics::Rapier => crate::rapier::env(entry, spec, s),
            #[cfg(not(feature = "rapier"))]
            Physics::Rapier => Err(no_rapier(entry)),
        }
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
