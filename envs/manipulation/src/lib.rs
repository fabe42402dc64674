//! # proprio-manipulation
//!
//! A Franka Emika Panda with its parallel-jaw hand on a table, in rapier3d:
//! `manipulation/reach-v0`, `manipulation/push-cube-v0`,
//! `manipulation/pick-cube-v0`, `manipulation/stack-cube-v0` and
//! `manipulation/instruct-v0` (an instruction in CLIP tokens about one of
//! several coloured cubes).
//!
//! The robot is described in `assets/robots/panda.urdf` with primitive
//! collision shapes; [`Chain`] reads it for kinematics (FK, Jacobian, DLS IK)
//! and [`Scene`] loads it as a rapier multibody with PD joint motors. Every
//! env has its own rapier world; [`CpuKernel`] steps them on worker threads
//! through [`proprio_core::KernelVecEnv`], which owns seeding, autoreset,
//! time limits and snapshots (the whole rapier state, bit for bit).

mod captions;
mod config;
mod controller;
mod cpu;
pub mod instruct;
pub mod kernel;
mod linalg;
mod measure;
pub mod reward;
mod robot;
mod scene;
mod scripted;
pub mod task;
mod visuals;
mod world;

pub use config::{ControlMode, Engine, ManipConfig, Settings, Split, TaskKind};
pub use controller::{
    ArmController, ControlState, EE_BOUNDS, EE_STEP, EE_TURN, FINGER_RANGE, JOINT_STEP, YAW_LIMIT,
};
pub use cpu::{CpuKernel, ManipState};
pub use robot::{Chain, ChainJoint, JointKind, MAX_DOF, PANDA_URDF, RobotError, TCP_OFFSET};
pub use scene::{
    ARM_GAINS, BASE, CONTACT_SOFTNESS, CUBE_DENSITY, CUBE_HALF, FINGER_GAINS, GRIP_FRICTION,
    MAX_CUBES, MOVING_JOINTS, Parts, READY, SOLVER_SUBSTEPS, Scene, SceneError, TABLE_FRICTION,
    TABLE_HALF,
};
pub use scripted::Scripted;
pub use world::{BodyState, Physics, TOUCH, World};

use proprio_core::serde_json::Value;
use proprio_core::{
    Agent, Backend, Env, EnvEntry, EnvSpec, Error, KernelEnv, KernelVecEnv, Registry, ResetOptions,
    Result, Space, VecEnv, VecOptions, family,
};
use std::sync::Arc;

const ACTION_HANDLING: &str = "each component is clipped to [-1, 1]; the meaning depends on the `control` config key (pd_joint_pos, pd_joint_delta_pos, pd_ee_delta_pos, pd_ee_delta_pose, pd_ee_delta_pos_yaw); the last component closes (-1) or opens (+1) the gripper";

/// `manipulation/reach-v0`.
pub const REACH: EnvEntry = EnvEntry {
    id: "manipulation/reach-v0",
    description: "Move the Panda's tool centre point to a random goal in the air.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(50),
    physics_steps_per_step: 3,
    reward: "1 - tanh(5 d) - 1 per step (d: TCP to goal, m); +1 on success",
    termination: "terminated on success (TCP within 2.5 cm of the goal); truncated after 50 steps (2.5 s) or on a physics blow-up (info blow_up: 1 non-finite, 2 left the workspace)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/push-cube-v0`.
pub const PUSH_CUBE: EnvEntry = EnvEntry {
    id: "manipulation/push-cube-v0",
    description: "Push a 4 cm cube across the table into a goal region 20 cm away.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(100),
    physics_steps_per_step: 3,
    reward: "(reach + 2 place) / 3 - 1 per step, reach = 1 - tanh(5 |TCP - point behind the cube|), place = 1 - tanh(5 |cube - goal|_xy); +1 on success",
    termination: "terminated on success (cube centre within 10 cm of the goal, on the table); truncated after 100 steps (5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/pick-cube-v0`.
pub const PICK_CUBE: EnvEntry = EnvEntry {
    id: "manipulation/pick-cube-v0",
    description: "Grasp a 4 cm cube and hold it still at a random goal up to 30 cm above the table.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(100),
    physics_steps_per_step: 3,
    reward: "ManiSkill3's PickCube stages: (reach + grasped + grasped place + placed static) / 5 - 1 per step, reach = 1 - tanh(5 |TCP - cube|), grasped = both fingers touch and squeeze the cube, place = 1 - tanh(5 |cube - goal|), placed = grasped within 2.5 cm of the goal, static = 1 - tanh(5 |arm joint velocities|); 0 while the success condition holds, +1 on success",
    termination: "terminated on success (held within 2.5 cm of the goal, arm still, for 0.25 s); truncated after 100 steps (5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/stack-cube-v0`.
pub const STACK_CUBE: EnvEntry = EnvEntry {
    id: "manipulation/stack-cube-v0",
    description: "Put cube A on cube B and let go; A must stay there for 1 s.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(150),
    physics_steps_per_step: 3,
    reward: "ManiSkill3's StackCube stages: stage / 8 - 1 per step, stage = 2 reach before the grasp, 4 + place while A is grasped, 6 + (opening + rest) / 2 once A is on B; reach = 1 - tanh(5 |TCP - A|), place = 1 - tanh(5 |A - top of B|), opening = finger opening / widest (1 once released), rest = 1 - tanh(10 |v_A| + |w_A|); 0 while the success condition holds, +1 on success",
    termination: "terminated on success (A on B, released and still, for 1 s); truncated after 150 steps (7.5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// `manipulation/instruct-v0`.
pub const INSTRUCT: EnvEntry = EnvEntry {
    id: "manipulation/instruct-v0",
    description: "Follow an instruction about 3 or 4 coloured cubes: push one to a side of the table, pick one up, or put one on another.",
    reward_range: (-1.0, 1.0),
    max_episode_steps: Some(150),
    physics_steps_per_step: 3,
    reward: "1 on success, else 0 (binary); with dense_reward: true, the instructed task's stages as in push-cube, pick-cube (goal 10 cm above the cube's start) and stack-cube, - 1 per step, +1 on success",
    termination: "terminated on success (push: the cube on the table 15 cm or more beyond the centre towards the named side; pick up: grasped with its bottom 5 cm above the table for 0.25 s; put on: on the other cube, released and still, for 1 s); truncated after 150 steps (7.5 s) or on a physics blow-up (info blow_up)",
    action_handling: ACTION_HANDLING,
};

/// Manipulation episodes take no reset options.
pub(crate) fn no_options(options: ResetOptions) -> Result<()> {
    family::no_reset_options("manipulation", "", options)
}

/// Validated settings and the spec of `entry` under a user config.
pub fn settings(
    entry: &EnvEntry,
    task: TaskKind,
    config: &Value,
) -> Result<(Settings, Arc<EnvSpec>)> {
    let (mut parsed, limit): (ManipConfig, _) = family::parse_config(entry, config)?;
    let settings =
        Settings::new(task, &parsed).map_err(|message| family::config_error(entry, message))?;
    parsed.control = Some(settings.control);
    if task == TaskKind::Instruct {
        // Spelled out, so a run keeps what it trained on if a default changes.
        parsed.cubes = Some(settings.cubes);
        parsed.split = Some(settings.split);
        parsed.dense_reward = Some(settings.dense_reward);
    }
    let unbounded = |dim| Space::Box {
        low: vec![f32::NEG_INFINITY; dim],
        high: vec![f32::INFINITY; dim],
    };
    let observation_space = if task == TaskKind::Instruct {
        Space::Dict {
            spaces: vec![
                (
                    "state".into(),
                    unbounded(task::instruct_state_dim(&settings)),
                ),
                (
                    "instruction".into(),
                    Space::Tokens {
                        vocab: proprio_text::OPENAI_VOCAB,
                        max_len: instruct::INSTRUCTION_TOKENS,
                    },
                ),
            ],
        }
    } else {
        unbounded(task::obs_dim(&settings))
    };
    let action_dim = settings.control.action_dim();
    let action_space = Space::Box {
        low: vec![-1.0; action_dim],
        high: vec![1.0; action_dim],
    };
    let spec = family::entry_spec(
        entry,
        &parsed,
        limit,
        observation_space,
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
    let threads = options.worker_threads();
    match (settings.engine, options.backend) {
        (Engine::Rapier, Backend::Cpu) => {
            let kernel = CpuKernel::new(spec, settings, n, threads)?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        (Engine::Rapier, Backend::Gpu) => Err(Error::Backend(format!(
            "{} with physics \"rapier\" runs on the cpu backend only; the \"kernel\" physics also runs on the gpu",
            entry.id
        ))),
        (Engine::Kernel, Backend::Cpu) => {
            let kernel = kernel::KernelCpu::new(spec, kernel_model(settings)?, n, threads)?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        #[cfg(feature = "gpu")]
        (Engine::Kernel, Backend::Gpu) => {
            let kernel = kernel::KernelGpu::new(spec, kernel_model(settings)?, n)?;
            Ok(Box::new(KernelVecEnv::new(kernel, options.autoreset)?))
        }
        #[cfg(not(feature = "gpu"))]
        (Engine::Kernel, Backend::Gpu) => Err(Error::Backend(
            "this build of proprio-manipulation has no GPU backend (enable its `gpu` feature)"
                .into(),
        )),
    }
}

fn kernel_model(settings: Settings) -> Result<kernel::KernelModel> {
    kernel::KernelModel::new(settings).map_err(Error::Backend)
}

fn make(entry: &EnvEntry, task: TaskKind, config: &Value) -> Result<Box<dyn Env>> {
    let (settings, spec) = settings(entry, task, config)?;
    match settings.engine {
        Engine::Rapier => Ok(Box::new(KernelEnv::new(CpuKernel::new(
            spec, settings, 1, 1,
        )?)?)),
        Engine::Kernel => Ok(Box::new(KernelEnv::new(kernel::KernelCpu::new(
            spec,
            kernel_model(settings)?,
            1,
            1,
        )?)?)),
    }
}

fn scripted(entry: &EnvEntry, task: TaskKind, spec: &EnvSpec) -> Result<Box<dyn Agent + Send>> {
    let (settings, _) = settings(entry, task, &spec.config)?;
    Ok(Box::new(Scripted::new(settings)?))
}

/// Registers the five manipulation tasks and their scripted policies.
pub fn register(registry: &mut Registry) {
    let tasks = [
        (REACH, TaskKind::Reach),
        (PUSH_CUBE, TaskKind::PushCube),
        (PICK_CUBE, TaskKind::PickCube),
        (STACK_CUBE, TaskKind::StackCube),
        (INSTRUCT, TaskKind::Instruct),
    ]
    .map(|(entry, task)| {
        let defaults = proprio_core::serde_json::to_value(ManipConfig::defaults_for(task));
        (entry, task, defaults.unwrap_or(Value::Null))
    });
    let makers = family::FamilyMakers {
        make,
        make_vec,
        scripted,
    };
    family::register_family(registry, tasks, &makers);
    registry
        .register_caption(REACH.id, captions::reach)
        .expect("reach was registered on the line above");
    for entry in [REACH, PUSH_CUBE, PICK_CUBE, STACK_CUBE] {
        registry
            .register_legacy(entry.id, rapier_before_the_kernel)
            .expect("the task was registered above");
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
