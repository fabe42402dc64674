//! # proprio-manipulation
//!
//! The robot of Proprio's manipulation envs: a Franka Emika Panda arm with
//! its parallel-jaw hand, described in `assets/robots/panda.urdf` with
//! primitive collision shapes. This crate reads that description into a
//! kinematic chain with forward kinematics, the geometric Jacobian and a
//! damped-least-squares IK step — what the end-effector controllers
//! (`pd_ee_delta_pos`, `pd_ee_delta_pose`) and the scripted policies build on —
//! and loads it into a rapier3d world ([`ArmWorld`]) as a multibody on a
//! table, driven by force-based PD motors capped at the joints' effort limits.

mod arm;
mod linalg;
mod robot;

pub use arm::{
    ARM_GAINS, ArmError, ArmWorld, BASE, DT, FINGER_GAINS, MOVING_JOINTS, READY, TABLE_HALF,
};
pub use robot::{Chain, ChainJoint, JointKind, MAX_DOF, PANDA_URDF, RobotError, TCP_OFFSET};
