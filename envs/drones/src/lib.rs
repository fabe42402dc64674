//! # proprio-drones
//!
//! Crazyflie 2.x quadrotor envs — `drones/hover-v0`, `drones/waypoints-v0`,
//! `drones/gates-v0` — on two backends with one contract: CPU threads over
//! chunked struct-of-arrays state ([`CpuKernel`]) and, with the `gpu`
//! feature, one wgpu compute dispatch per step (`GpuKernel`). Both run
//! through [`proprio_core::KernelVecEnv`], so seeding, autoreset, time limits
//! and snapshots are identical, and a snapshot taken on one backend restores on the other.

mod config;
mod cpu;
pub mod dynamics;
#[cfg(feature = "gpu")]
mod gpu;
pub mod params;
mod scripted;
mod state;
pub mod task;
mod visuals;

pub use config::{ActionMode, DroneConfig, MAX_POINTS, Randomize, Settings, Start, TaskKind, Wind};
pub use cpu::{CpuKernel, DroneModel};
#[cfg(feature = "gpu")]
pub use gpu::GpuKernel;
pub use scripted::Cascade;
pub use state::{CHUNK, Drone, LEN};

use proprio_core::serde_json::Value;
use proprio_core::{
    Agent, Backend, Env, EnvEntry, EnvSpec, KernelEnv, KernelVecEnv, Registry, ResetOptions,
    Result, Space, VecEnv, VecOptions, family,
};
use std::sync::Arc;

const ACTION_HANDLING: &str = "each component is clipped to [-1, 1]; action=\"motors\": motor speed commands (-1 stopped, +1 full), action=\"thrust_rates\": collective thrust and body rates";

/// `drones/hover-v0`.
pub const HOVER: EnvEntry = EnvEntry {
    id: "drones/hover-v0",
    description: "Reach and hold a point with a Crazyflie 2.x from a random position, velocity and attitude.",
    reward_range: (-10.0, 2.0),
    max_episode_steps: Some(500),
    physics_steps_per_step: 5,
    reward: "1 - (|p - target| + 0.2 (1 - R_zz) + 0.05 |v| + 0.02 |omega|), floored at -1, + 1 inside the success region (0.1 m, 0.2 rad/s); -10 on a crash",
    termination: "terminated on touching the ground or leaving the 10 m arena; truncated after 500 steps (5 s); success = within 0.1 m and 0.2 rad/s for the last second",
    action_handling: ACTION_HANDLING,
};

/// `drones/waypoints-v0`.
pub const WAYPOINTS: EnvEntry = EnvEntry {
    id: "drones/waypoints-v0",
    description: "Visit a random sequence of points in order with a Crazyflie 2.x.",
    reward_range: (-10.0, 60.0),
    max_episode_steps: Some(1000),
    physics_steps_per_step: 5,
    reward: "10 x metres of progress towards the current point + 10 per point visited - 0.01 |omega|; -10 on a crash",
    termination: "terminated when every point is visited (success) or on a crash; truncated after 1000 steps (10 s)",
    action_handling: ACTION_HANDLING,
};

/// `drones/gates-v0`.
pub const GATES: EnvEntry = EnvEntry {
    id: "drones/gates-v0",
    description: "Fly a Crazyflie 2.x through a random circular course of square gates in order.",
    reward_range: (-10.0, 60.0),
    max_episode_steps: Some(1000),
    physics_steps_per_step: 5,
    reward: "10 x metres of progress towards the current gate + 10 per gate passed - 0.01 |omega|; -10 on a crash",
    termination: "terminated when every gate is passed (success), or on touching a gate frame, the ground or the arena wall; truncated after 1000 steps (10 s)",
    action_handling: ACTION_HANDLING,
};

/// Drone episodes take no reset options.
pub(crate) fn no_options(options: ResetOptions) -> Result<()> {
    family::no_reset_options(
        "drone",
        " (configure the start with the `start` config key)",
        options,
    )
}

/// Validated settings and the spec of `entry` under a user config.
pub fn settings(
    entry: &EnvEntry,
    task: TaskKind,
    config: &Value,
) -> Result<(Settings, Arc<EnvSpec>)> {
    let (mut parsed, limit): (DroneConfig, _) = family::parse_config(entry, config)?;
    let settings =
        Settings::new(task, &parsed).map_err(|message| family::config_error(entry, message))?;
    parsed.fill_defaults(task);
    let dim = task::obs_dim(task);
    let mut low = vec![f32::NEG_INFINITY; dim];
    let mut high = vec![f32::INFINITY; dim];
    for i in (3..12).chain(18..22) {
        low[i] = -1.0;
        high[i] = 1.0;
    }
    let action_space = Space::Box {
        low: vec![-1.0; 4],
        high: vec![1.0; 4],
    };
    let spec = family::entry_spec(
        entry,
        &parsed,
        limit,
        Space::Box { low, high },
        action_space,
        settings.substeps,
    )?;
    Ok((settings, spec))
}

fn make_vec(
    entry: &EnvEntry,
    task: TaskKind,
    config: &Value,
    n: usize,
    options: VecOptions,
) -> Result<Box<dyn VecEnv>> {
    let (settings, spec) = settings(entry, task, config)?;
    match options.backend {
        Backend::Cpu => {
            let threads = options.worker_threads();
            let kernel = CpuKernel::new(spec, DroneModel::new(settings), n, threads)?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        #[cfg(feature = "gpu")]
        Backend::Gpu => {
            let kernel = GpuKernel::new(spec, DroneModel::new(settings), n)?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        #[cfg(not(feature = "gpu"))]
        Backend::Gpu => Err(Error::Backend(
            "this build of proprio-drones has no GPU backend (enable its `gpu` feature)".into(),
        )),
    }
}

fn make(entry: &EnvEntry, task: TaskKind, config: &Value) -> Result<Box<dyn Env>> {
    let (settings, spec) = settings(entry, task, config)?;
    Ok(Box::new(KernelEnv::new(CpuKernel::new(
        spec,
        DroneModel::new(settings),
        1,
        1,
    )?)?))
}

fn scripted(entry: &EnvEntry, task: TaskKind, spec: &EnvSpec) -> Result<Box<dyn Agent + Send>> {
    let (settings, _) = settings(entry, task, &spec.config)?;
    Ok(Box::new(Cascade::new(settings)))
}

/// Registers the three drone tasks and their scripted controller.
pub fn register(registry: &mut Registry) {
    let tasks = [
        (HOVER, TaskKind::Hover),
        (WAYPOINTS, TaskKind::Waypoints),
        (GATES, TaskKind::Gates),
    ]
    .map(|(entry, task)| {
        let defaults = proprio_core::serde_json::to_value(DroneConfig::defaults_for(task));
        (entry, task, defaults.unwrap_or(Value::Null))
    });
    let makers = family::FamilyMakers {
        make,
        make_vec,
        scripted,
    };
    family::register_family(registry, tasks, &makers);
}
