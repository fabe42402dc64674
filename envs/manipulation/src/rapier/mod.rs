//! The rapier3d reference physics (feature `rapier`): one rapier world per
//! env, the Panda a multibody driven by PD motors, stepped on CPU threads.
//! Runs trained before the kernel physics became the default replay on it.

mod kernel;
mod task;
mod template;
mod visuals;
mod world;

pub use kernel::{ManipState, RapierKernel};
pub use task::{Rapier, control_step, draw};
pub use template::{CONTACT_SOFTNESS, SOLVER_SUBSTEPS, Template, TemplateError};
pub use world::{Parts, World, WorldState};

use crate::config::Settings;
use proprio_core::{
    Backend, Env, EnvEntry, EnvSpec, Error, KernelEnv, KernelVecEnv, Result, VecEnv, VecOptions,
};
use std::sync::Arc;

/// A batch of `n` envs on rapier worlds (CPU threads only).
pub(crate) fn vec_env(
    entry: &EnvEntry,
    spec: Arc<EnvSpec>,
    settings: Settings,
    n: usize,
    options: VecOptions,
) -> Result<Box<dyn VecEnv>> {
    if options.backend == Backend::Gpu {
        return Err(Error::Backend(format!(
            "{} with physics \"rapier\" runs on the cpu backend only; the \"kernel\" physics also runs on the gpu",
            entry.id
        )));
    }
    let kernel = RapierKernel::new(spec, settings, n, options.worker_threads())?;
    Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
}

/// One env on a rapier world.
pub(crate) fn env(_: &EnvEntry, spec: Arc<EnvSpec>, settings: Settings) -> Result<Box<dyn Env>> {
    Ok(Box::new(KernelEnv::new(RapierKernel::new(
        spec, settings, 1, 1,
    )?)?))
}
