//! The config of every manipulation task (serde, with defaults) and its validated form.

use crate::instruct::{Instruction, Split, Typed};
use crate::panda::MAX_CUBES;
use serde::{Deserialize, Serialize};

/// How an action drives the arm (ManiSkill's controller names); the last
/// action component always drives the gripper (−1 closed, +1 open).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlMode {
    /// Joint position targets: 7 components spanning each joint's limits.
    PdJointPos,
    /// Joint position steps from the measured position, ±0.1 rad per control step.
    PdJointDeltaPos,
    /// End-effector translation steps, ±0.1 m per control step (world frame),
    /// solved to joint targets by damped-least-squares IK; the hand keeps its orientation.
    PdEeDeltaPos,
    /// End-effector translation steps (±0.1 m) and rotation steps (axis-angle
    /// in the world frame, ±0.1 rad), solved by damped-least-squares IK.
    PdEeDeltaPose,
    /// End-effector translation steps (±0.1 m) and turns about the vertical
    /// (±0.1 rad, the hand's yaw kept within ±90° of its start): a top-down
    /// grasp's freedom, so the fingers can meet a cube's faces at any yaw.
    PdEeDeltaPosYaw,
}

impl ControlMode {
    /// Action components, the gripper included.
    pub fn action_dim(self) -> usize {
        match self {
            Self::PdJointPos | Self::PdJointDeltaPos => 8,
            Self::PdEeDeltaPos => 4,
            Self::PdEeDeltaPose => 7,
            Self::PdEeDeltaPosYaw => 5,
        }
    }
}

/// Which physics steps the envs (config key `physics`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Physics {
    /// rapier3d: one world per env, the reference physics.
    Rapier,
    /// The batched kernel (the default): articulated arm, free cubes and
    /// contacts in one block of floats per env, on CPU threads or a GPU.
    #[default]
    Kernel,
}

/// Which manipulation task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// Move the tool centre point to a goal in the air.
    Reach,
    /// Push a cube into a goal region on the table.
    PushCube,
    /// Grasp a cube and lift it to a goal in the air.
    PickCube,
    /// Put cube A on cube B and let go.
    StackCube,
    /// Follow an instruction (push, pick up, put on) about one of several coloured cubes.
    Instruct,
}

impl TaskKind {
    /// Cubes in the scene unless the config names another count (instruct only).
    pub fn cubes(self) -> usize {
        match self {
            Self::Reach => 0,
            Self::PushCube | Self::PickCube => 1,
            Self::StackCube => 2,
            Self::Instruct => 3,
        }
    }

    /// The single-cube task `instruction` asks for, whose plan and hold it shares.
    pub fn instructed(instruction: Instruction) -> TaskKind {
        match instruction {
            Instruction::Push { .. } => Self::PushCube,
            Instruction::PickUp { .. } => Self::PickCube,
            Instruction::PutOn { .. } => Self::StackCube,
        }
    }

    /// The controller a task uses unless the config names another.
    pub fn default_control(self) -> ControlMode {
        match self {
            Self::Reach | Self::PushCube => ControlMode::PdEeDeltaPos,
            Self::PickCube | Self::StackCube => ControlMode::PdEeDeltaPose,
            Self::Instruct => ControlMode::PdEeDeltaPosYaw,
        }
    }
}

/// Config keys of `manipulation/*`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ManipConfig {
    /// Which physics: `rapier` or `kernel` (see `docs/envs.md`).
    pub physics: Physics,
    /// Physics step rate, Hz.
    pub physics_hz: u32,
    /// Control rate (env steps per second), Hz; must divide `physics_hz`.
    pub control_hz: u32,
    /// The controller (default: the task's, see `docs/envs.md`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control: Option<ControlMode>,
    /// Spread of the initial arm joint angles around the rest pose, rad (uniform).
    pub joint_noise: f64,
    /// Whether the state observation holds the goal (reach, push, pick); without
    /// it the goal is only seen in camera images (pixel-policy experiments).
    pub goal_in_state: bool,
    /// Whether the state reports each cube's orientation as the one of its 24
    /// equivalent rotations closest to the world axes (an upright cube's yaw
    /// then lies within ±45°, the turn a grasp needs) instead of the body's own.
    pub cube_symmetry: bool,
    /// instruct-v0: coloured cubes in the scene, 3 or 4 (default 3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cubes: Option<usize>,
    /// instruct-v0: which episodes are drawn: `train`, `held_out`, `all`,
    /// or the out-of-distribution `vision`, `semantic`, `position`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<Split>,
    /// instruct-v0: every episode's instruction, verbatim (its CLIP tokens
    /// are observed; success follows the template it parses to); it takes
    /// the place of the split's choice of instruction and wording.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction: Option<String>,
    /// Pay the task's staged dense reward (default, but instruct-v0's) or
    /// the binary success reward (1 on success, else 0: the sparse control
    /// a learned reward is measured against).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dense_reward: Option<bool>,
}

impl Default for ManipConfig {
    fn default() -> Self {
        Self {
            physics: Physics::default(),
            physics_hz: 60,
            control_hz: 20,
            control: None,
            joint_noise: 0.02,
            goal_in_state: true,
            cube_symmetry: false,
            cubes: None,
            split: None,
            instruction: None,
            dense_reward: None,
        }
    }
}

impl ManipConfig {
    /// The defaults with the task's controller filled in (what `proprio info` shows).
    pub fn defaults_for(task: TaskKind) -> Self {
        let instruct = task == TaskKind::Instruct;
        Self {
            control: Some(task.default_control()),
            cubes: instruct.then_some(task.cubes()),
            split: instruct.then_some(Split::Train),
            dense_reward: Some(!instruct),
            ..Self::default()
        }
    }
}

/// A validated config.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The task.
    pub task: TaskKind,
    /// The physics.
    pub physics: Physics,
    /// Physics steps per control step.
    pub substeps: u32,
    /// Physics step, s.
    pub dt: f32,
    /// Control steps per second.
    pub control_hz: u32,
    /// The controller.
    pub control: ControlMode,
    /// Initial joint spread, rad.
    pub joint_noise: f32,
    /// The goal is part of the state observation.
    pub goal_in_state: bool,
    /// Cube orientations are observed modulo the cube's symmetries.
    pub cube_symmetry: bool,
    /// Cubes in the scene.
    pub cubes: usize,
    /// Which episodes are drawn (instruct).
    pub split: Split,
    /// The instruction a person typed, in every episode (instruct).
    pub typed: Option<Typed>,
    /// The staged dense reward is paid, not the binary success one.
    pub dense_reward: bool,
}

impl Settings {
    /// Checks `config` for `task`; the message names the bad key.
    pub fn new(task: TaskKind, config: &ManipConfig) -> Result<Self, String> {
        let c = config;
        proprio_core::check::substeps(c.physics_hz, c.control_hz)?;
        if !(20..=2000).contains(&c.physics_hz) || c.physics_hz / c.control_hz > 50 {
            return Err(format!(
                "physics_hz must be 20–2000 and physics_hz / control_hz at most 50, got {} and {}",
                c.physics_hz, c.control_hz
            ));
        }
        if !(c.joint_noise.is_finite() && (0.0..=0.5).contains(&c.joint_noise)) {
            return Err(format!(
                "joint_noise must be in [0, 0.5] rad, got {}",
                c.joint_noise
            ));
        }
        if !c.goal_in_state && task == TaskKind::StackCube {
            return Err("goal_in_state must be true for stack-cube: its goal is cube B, which is part of the state".into());
        }
        let instruct = task == TaskKind::Instruct;
        let own_keys = [
            c.cubes.is_some(),
            c.split.is_some(),
            c.instruction.is_some(),
        ];
        if !instruct && own_keys.contains(&true) {
            return Err(
                "cubes, split and instruction are keys of manipulation/instruct-v0 only".into(),
            );
        }
        let cubes = c.cubes.unwrap_or(task.cubes());
        if instruct && !(3..=MAX_CUBES).contains(&cubes) {
            return Err(format!(
                "cubes must be 3 to {MAX_CUBES} (with 2, every put instruction would be held out), got {cubes}"
            ));
        }
        let split = c.split.unwrap_or_default();
        let typed = match &c.instruction {
            Some(text) => Some(Typed::new(text, cubes)?),
            None => None,
        };
        Ok(Self {
            task,
            physics: c.physics,
            substeps: c.physics_hz / c.control_hz,
            dt: 1.0 / c.physics_hz as f32,
            control_hz: c.control_hz,
            control: c.control.unwrap_or(task.default_control()),
            joint_noise: c.joint_noise as f32,
            goal_in_state: c.goal_in_state,
            cube_symmetry: c.cube_symmetry,
            cubes,
            split,
            typed,
            dense_reward: c.dense_reward.unwrap_or(!instruct),
        })
    }
}
