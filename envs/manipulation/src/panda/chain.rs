//! The Panda's kinematic chain, read from its URDF: forward kinematics,
//! geometric Jacobian and a damped-least-squares IK step.

use super::linalg::{MAX, solve_damped};
use glam::{DAffine3, DQuat, DVec3};

/// The robot description shipped with Proprio.
pub const PANDA_URDF: &str = include_str!("../../../../assets/robots/panda.urdf");

/// The tool centre point in the hand frame: between the fingertips, m.
pub const TCP_OFFSET: DVec3 = DVec3::new(0.0, 0.0, 0.1034);

/// Most moving joints in a chain.
pub const MAX_DOF: usize = 16;

/// Why a robot description cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RobotError {
    /// The URDF does not parse.
    #[error("cannot read the robot description: {0}")]
    Parse(String),
    /// The chain from the base to the end link is broken or not serial.
    #[error("robot description: {0}")]
    Chain(String),
}

/// How a joint moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JointKind {
    /// Rotation about the axis.
    Revolute,
    /// Translation along the axis.
    Prismatic,
    /// No motion.
    Fixed,
}

/// One joint of the serial chain, as its URDF declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainJoint {
    /// URDF name.
    pub name: String,
    /// Motion type.
    pub kind: JointKind,
    /// Pose of the joint frame in the parent link frame.
    pub origin: DAffine3,
    /// Unit axis in the joint frame.
    pub axis: DVec3,
    /// Lower and upper position limits (rad or m).
    pub limits: (f64, f64),
    /// Effort limit (N·m or N).
    pub effort: f64,
    /// Velocity limit (rad/s or m/s).
    pub velocity: f64,
}

/// The serial chain from the base link to an end link.
#[derive(Debug, Clone, PartialEq)]
pub struct Chain {
    /// Joints from the base outwards, fixed ones included.
    pub joints: Vec<ChainJoint>,
    /// Constant pose of the tool frame in the end link frame.
    pub tool: DAffine3,
}

fn affine(pose: &urdf_rs::Pose) -> DAffine3 {
    let [roll, pitch, yaw] = *pose.rpy;
    // URDF: fixed-axis roll, pitch, yaw, i.e. R = Rz(yaw) Ry(pitch) Rx(roll).
    let rotation = DQuat::from_euler(glam::EulerRot::ZYX, yaw, pitch, roll);
    DAffine3::from_rotation_translation(rotation, DVec3::from_array(*pose.xyz))
}

impl Chain {
    /// The Panda arm from `panda_link0` to the hand, with the TCP as tool.
    pub fn panda() -> Result<Self, RobotError> {
        Self::from_urdf(PANDA_URDF, "panda_link0", "panda_hand", TCP_OFFSET)
    }

    /// The chain of `urdf` from link `base` to link `end`; `tool` is a point in the end link.
    pub fn from_urdf(urdf: &str, base: &str, end: &str, tool: DVec3) -> Result<Self, RobotError> {
        let robot =
            urdf_rs::read_from_string(urdf).map_err(|e| RobotError::Parse(e.to_string()))?;
        let mut joints = Vec::new();
        let mut link = end.to_string();
        while link != base {
            let joint = robot
                .joints
                .iter()
                .find(|j| j.child.link == link)
                .ok_or_else(|| RobotError::Chain(format!("no joint leads to link '{link}'")))?;
            let kind = match joint.joint_type {
                urdf_rs::JointType::Revolute => JointKind::Revolute,
                urdf_rs::JointType::Prismatic => JointKind::Prismatic,
                urdf_rs::JointType::Fixed => JointKind::Fixed,
                ref other => {
                    return Err(RobotError::Chain(format!(
                        "joint '{}' is {other:?}; only revolute, prismatic and fixed joints are supported",
                        joint.name
                    )));
                }
            };
            let axis = DVec3::from_array(*joint.axis.xyz);
            if kind != JointKind::Fixed && (axis.length() - 1.0).abs() > 1e-9 {
                return Err(RobotError::Chain(format!(
                    "joint '{}' has a non-unit axis {axis}",
                    joint.name
                )));
            }
            joints.push(ChainJoint {
                name: joint.name.clone(),
                kind,
                origin: affine(&joint.origin),
                axis,
                limits: (joint.limit.lower, joint.limit.upper),
                effort: joint.limit.effort,
                velocity: joint.limit.velocity,
            });
            link.clone_from(&joint.parent.link);
            if joints
                .iter()
                .filter(|j: &&ChainJoint| j.kind != JointKind::Fixed)
                .count()
                > MAX_DOF
            {
                return Err(RobotError::Chain(format!(
                    "more than {MAX_DOF} moving joints"
                )));
            }
            if joints.len() > robot.joints.len() {
                return Err(RobotError::Chain(format!("the chain to '{end}' loops")));
            }
        }
        joints.reverse();
        Ok(Self {
            joints,
            tool: DAffine3::from_translation(tool),
        })
    }

    /// The moving joints, in order.
    pub fn actuated(&self) -> impl Iterator<Item = &ChainJoint> {
        self.joints.iter().filter(|j| j.kind != JointKind::Fixed)
    }

    /// Number of moving joints.
    pub fn dof(&self) -> usize {
        self.actuated().count()
    }

    /// Pose of every moving joint's frame (after its motion) and of the tool, in the base frame.
    fn walk(&self, q: &[f64], mut visit: impl FnMut(usize, &ChainJoint, &DAffine3)) -> DAffine3 {
        let mut pose = DAffine3::IDENTITY;
        let mut k = 0;
        for joint in &self.joints {
            pose *= joint.origin;
            match joint.kind {
                JointKind::Fixed => {}
                JointKind::Revolute => {
                    pose *= DAffine3::from_axis_angle(joint.axis, q[k]);
                    visit(k, joint, &pose);
                    k += 1;
                }
                JointKind::Prismatic => {
                    pose *= DAffine3::from_translation(joint.axis * q[k]);
                    visit(k, joint, &pose);
                    k += 1;
                }
            }
        }
        pose * self.tool
    }

    /// Pose of the tool in the base frame at joint positions `q` (one per moving joint).
    pub fn forward(&self, q: &[f64]) -> DAffine3 {
        self.walk(q, |_, _, _| {})
    }

    /// Geometric Jacobian at `q`: rows 0–2 linear, 3–5 angular velocity of
    /// the tool per unit joint velocity, column `k` for moving joint `k`.
    pub fn jacobian(&self, q: &[f64], columns: &mut [[f64; MAX]]) -> DAffine3 {
        let mut frames = [(DVec3::ZERO, DVec3::ZERO, JointKind::Fixed); MAX_DOF];
        let tool = self.walk(q, |k, joint, pose| {
            frames[k] = (pose.translation, pose.matrix3 * joint.axis, joint.kind);
        });
        for (k, col) in columns.iter_mut().enumerate().take(self.dof()) {
            let (origin, axis, kind) = frames[k];
            let (linear, angular) = match kind {
                JointKind::Revolute => (axis.cross(tool.translation - origin), axis),
                _ => (axis, DVec3::ZERO),
            };
            col[..3].copy_from_slice(&linear.to_array());
            col[3..].copy_from_slice(&angular.to_array());
        }
        tool
    }

    /// One damped-least-squares step towards `target` (position, and
    /// orientation too when given): `Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e`, clamped to the joint limits.
    pub fn ik_step(
        &self,
        q: &mut [f64],
        target: DVec3,
        orientation: Option<DQuat>,
        damping: f64,
    ) -> f64 {
        let dof = self.dof();
        let mut jac = [[0.0; MAX]; MAX_DOF];
        let tool = self.jacobian(q, &mut jac[..dof]);
        let mut error = [0.0; MAX];
        error[..3].copy_from_slice(&(target - tool.translation).to_array());
        let rows = match orientation {
            Some(want) => {
                let have = DQuat::from_mat3(&tool.matrix3);
                let (axis, angle) = (want * have.inverse()).to_axis_angle();
                let angle = if angle > std::f64::consts::PI {
                    angle - std::f64::consts::TAU
                } else {
                    angle
                };
                error[3..].copy_from_slice(&(axis * angle).to_array());
                6
            }
            None => 3,
        };
        let mut jjt = [[0.0; MAX]; MAX];
        for (i, row) in jjt.iter_mut().enumerate().take(rows) {
            for (j, cell) in row.iter_mut().enumerate().take(rows) {
                *cell = (0..dof).map(|k| jac[k][i] * jac[k][j]).sum();
            }
        }
        let Some(y) = solve_damped(&jjt, damping * damping, &error, rows) else {
            return DVec3::from_slice(&error[..3]).length();
        };
        for (k, (qk, joint)) in q.iter_mut().zip(self.actuated()).enumerate() {
            let dq: f64 = (0..rows).map(|i| jac[k][i] * y[i]).sum();
            *qk = (*qk + dq).clamp(joint.limits.0, joint.limits.1);
        }
        DVec3::from_slice(&error[..3]).length()
    }
}
