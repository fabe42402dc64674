//! The arm controllers: normalised actions to PD joint targets (ManiSkill's
//! `pd_joint_pos`, `pd_joint_delta_pos`, `pd_ee_delta_pos`, `pd_ee_delta_pose`,
//! and `pd_ee_delta_pos_yaw`).

use crate::config::ControlMode;
use crate::panda::{BASE, HAND_DOWN};
use crate::panda::{Chain, RobotError};
use glam::{DQuat, DVec3, Quat, Vec3};
use serde::{Deserialize, Serialize};

/// Largest joint step of `pd_joint_delta_pos`, rad per control step.
pub const JOINT_STEP: f32 = 0.1;
/// Largest end-effector translation step, m per control step.
pub const EE_STEP: f32 = 0.1;
/// Largest end-effector rotation step, rad per control step.
pub const EE_TURN: f32 = 0.1;
/// Largest yaw of the `pd_ee_delta_pos_yaw` orientation target from [`HAND_DOWN`], rad
/// (a cube's faces repeat every 90°, so no grasp needs more).
pub const YAW_LIMIT: f32 = std::f32::consts::FRAC_PI_2;
/// Finger opening at gripper action −1 (a little past closed, so a held cube is squeezed) and +1, m.
pub const FINGER_RANGE: (f32, f32) = (0.0, 0.04);
/// The box the end-effector target stays in (world frame, m): above the table, within reach.
pub const EE_BOUNDS: ([f32; 3], [f32; 3]) = ([-0.45, -0.5, 0.0], [0.35, 0.5, 0.7]);
/// Damped-least-squares iterations per control step, and their damping λ
/// (the kernel physics' `f32` IK uses the same).
pub(crate) const IK_ITERATIONS: usize = 4;
pub(crate) const IK_DAMPING: f64 = 0.05;

/// The end-effector orientation target after `action`'s turn, from the last target `rotation`
/// (unchanged by the controllers that do not turn the hand).
pub fn turn(mode: ControlMode, action: &[f32], rotation: Quat) -> Quat {
    match mode {
        ControlMode::PdEeDeltaPose => {
            let step = Vec3::new(action[3], action[4], action[5]) * EE_TURN;
            (Quat::from_scaled_axis(step) * rotation).normalize()
        }
        ControlMode::PdEeDeltaPosYaw => {
            let from_down = rotation * HAND_DOWN.inverse();
            let from_down = if from_down.w < 0.0 {
                -from_down
            } else {
                from_down
            };
            let yaw = 2.0 * from_down.z.atan2(from_down.w);
            let step = (yaw + action[3] * EE_TURN).clamp(-YAW_LIMIT, YAW_LIMIT) - yaw;
            (Quat::from_rotation_z(step) * rotation).normalize()
        }
        _ => rotation,
    }
}

/// Shrinks the arm joints' step from `before` to `targets` as a whole (its
/// direction kept) until no joint moves further than its speed limit
/// (`speeds`, rad/s) allows in a control `period` (s).
pub(crate) fn pace(before: &[f32; 9], targets: &mut [f32; 9], speeds: &[f32], period: f32) {
    let mut scale = 1.0f32;
    for k in 0..7 {
        let reach = speeds[k] * period;
        let step = (targets[k] - before[k]).abs();
        if step > reach {
            scale = scale.min(reach / step);
        }
    }
    for k in 0..7 {
        targets[k] = before[k] + (targets[k] - before[k]) * scale;
    }
}

/// What a controller carries from one control step to the next.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ControlState {
    /// The last end-effector target position, world frame, m (each step moves from the measured TCP).
    pub ee_position: [f32; 3],
    /// End-effector target orientation (x, y, z, w).
    pub ee_rotation: [f32; 4],
    /// The PD targets last set: 7 joint angles, 2 finger openings.
    pub targets: [f32; 9],
}

/// Turns actions into joint targets, with the arm's kinematics for the IK.
#[derive(Debug, Clone)]
pub struct ArmController {
    chain: Chain,
    limits: [(f32, f32); 7],
    /// Each joint's speed limit, rad/s (the IK's targets move no faster).
    speeds: [f32; 7],
}

/// The point of `[low, high]` that action component `a` (clipped to [−1, 1]) names.
pub(crate) fn lerp((low, high): (f32, f32), a: f32) -> f32 {
    low + (a.clamp(-1.0, 1.0) + 1.0) * 0.5 * (high - low)
}

impl ArmController {
    /// The Panda's controller.
    pub fn panda() -> Result<Self, RobotError> {
        let chain = Chain::panda()?;
        let mut limits = [(0.0, 0.0); 7];
        let mut speeds = [0.0; 7];
        for ((slot, speed), joint) in limits.iter_mut().zip(&mut speeds).zip(chain.actuated()) {
            *slot = (joint.limits.0 as f32, joint.limits.1 as f32);
            *speed = joint.velocity as f32;
        }
        if chain.dof() != 7 {
            return Err(RobotError::Chain(format!(
                "the arm has {} moving joints, not 7",
                chain.dof()
            )));
        }
        Ok(Self {
            chain,
            limits,
            speeds,
        })
    }

    /// The arm's kinematic chain.
    pub fn chain(&self) -> &Chain {
        &self.chain
    }

    /// The state at the start of an episode: hold the given targets and hand pose.
    pub fn start(&self, targets: &[f32; 9], tcp: (Vec3, Quat)) -> ControlState {
        ControlState {
            ee_position: tcp.0.to_array(),
            ee_rotation: tcp.1.to_array(),
            targets: *targets,
        }
    }

    /// The PD targets for `action` (each component clipped to [−1, 1]), given the
    /// measured joint positions `q`; the end-effector controllers move each
    /// target at most as far as its joint's speed limit allows in a control `period` (s).
    pub fn apply(
        &self,
        mode: ControlMode,
        action: &[f32],
        q: &[f32; 9],
        tcp: Vec3,
        period: f32,
        state: &mut ControlState,
    ) -> [f32; 9] {
        let mut clipped = [0.0; 8];
        for (c, a) in clipped.iter_mut().zip(action) {
            *c = a.clamp(-1.0, 1.0);
        }
        let action = &clipped[..mode.action_dim()];
        let arm = &mut state.targets;
        match mode {
            ControlMode::PdJointPos => {
                for k in 0..7 {
                    arm[k] = lerp(self.limits[k], action[k]);
                }
            }
            ControlMode::PdJointDeltaPos => {
                for k in 0..7 {
                    arm[k] =
                        (q[k] + JOINT_STEP * action[k]).clamp(self.limits[k].0, self.limits[k].1);
                }
            }
            ControlMode::PdEeDeltaPos
            | ControlMode::PdEeDeltaPose
            | ControlMode::PdEeDeltaPosYaw => {
                let step = Vec3::new(action[0], action[1], action[2]) * EE_STEP;
                let (low, high) = (Vec3::from(EE_BOUNDS.0), Vec3::from(EE_BOUNDS.1));
                let position = (tcp + step).clamp(low, high);
                state.ee_position = position.to_array();
                let rotation = turn(mode, action, Quat::from_array(state.ee_rotation));
                state.ee_rotation = rotation.to_array();
                let before = *arm;
                self.solve(position, rotation, arm);
                pace(&before, arm, &self.speeds, period);
            }
        }
        let gripper = lerp(FINGER_RANGE, action[mode.action_dim() - 1]);
        arm[7] = gripper;
        arm[8] = gripper;
        *arm
    }

    /// Joint targets (from the previous ones) that put the TCP at `position` with `rotation`.
    fn solve(&self, position: Vec3, rotation: Quat, targets: &mut [f32; 9]) {
        let mut q = [0.0f64; 7];
        for (qk, t) in q.iter_mut().zip(targets.iter()) {
            *qk = f64::from(*t);
        }
        let goal = position.as_dvec3() - DVec3::from(BASE.map(f64::from));
        let orientation = DQuat::from_array(rotation.to_array().map(f64::from)).normalize();
        for _ in 0..IK_ITERATIONS {
            self.chain
                .ik_step(&mut q, goal, Some(orientation), IK_DAMPING);
        }
        for (t, qk) in targets.iter_mut().zip(q) {
            *t = qk as f32;
        }
    }
}
