//! The Franka Emika Panda on its table, shared by both physics: the URDF
//! and its kinematics, the drives' gains, the table, the cubes, and the
//! state of a rigid body as the tasks measure it.

mod chain;
mod linalg;

pub use chain::{Chain, ChainJoint, JointKind, MAX_DOF, PANDA_URDF, RobotError, TCP_OFFSET};

use glam::{Quat, Vec3};

/// The hand pointing down (a half turn about x): the reference of its observed orientation.
pub const HAND_DOWN: Quat = Quat::from_xyzw(1.0, 0.0, 0.0, 0.0);

/// PD gains of the arm joints (stiffness N·m/rad, damping N·m·s/rad), torque
/// capped at each joint's effort limit.
pub const ARM_GAINS: (f32, f32) = (4000.0, 400.0);
/// PD gains of the finger joints (N/m, N·s/m), force capped at the URDF's 70 N.
pub const FINGER_GAINS: (f32, f32) = (1000.0, 30.0);
/// Half extents of the table top, m; its surface is the plane z = 0.
pub const TABLE_HALF: [f32; 3] = [0.8, 0.6, 0.02];
/// Where the robot base stands on the table, m.
pub const BASE: [f32; 3] = [-0.615, 0.0, 0.0];
/// The usual rest pose: gripper down above the table centre.
pub const READY: [f32; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];
/// Half the edge of every cube, m (ManiSkill's 4 cm cubes).
pub const CUBE_HALF: f32 = 0.02;
/// Cube density, kg/m³ (water): a 4 cm cube weighs 64 g.
pub const CUBE_DENSITY: f32 = 1000.0;
/// Friction coefficient of cubes and fingertips (rubber pads on wood).
pub const GRIP_FRICTION: f32 = 1.0;
/// Friction coefficient of the table top.
pub const TABLE_FRICTION: f32 = 0.5;
/// Most cubes in a scene.
pub const MAX_CUBES: usize = 4;

/// Each cube's name and colour, by index (stack's A is red, B blue; instructions name them).
pub const CUBE_COLOURS: [(&str, [f32; 4]); MAX_CUBES] = [
    ("red", [0.85, 0.20, 0.15, 1.0]),
    ("blue", [0.15, 0.35, 0.85, 1.0]),
    ("green", [0.20, 0.70, 0.25, 1.0]),
    ("yellow", [0.95, 0.80, 0.15, 1.0]),
];

/// The moving joints, in the order of targets and positions: 7 arm joints, 2 fingers.
pub const MOVING_JOINTS: [&str; 9] = [
    "panda_joint1",
    "panda_joint2",
    "panda_joint3",
    "panda_joint4",
    "panda_joint5",
    "panda_joint6",
    "panda_joint7",
    "panda_finger_joint1",
    "panda_finger_joint2",
];

/// Colliders closer than this count as touching, m.
pub const TOUCH: f32 = 0.002;

/// Pose and velocity of a rigid body in the world frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyState {
    /// Position, m.
    pub position: Vec3,
    /// Orientation.
    pub rotation: Quat,
    /// Linear velocity, m/s.
    pub linvel: Vec3,
    /// Angular velocity, rad/s.
    pub angvel: Vec3,
}
