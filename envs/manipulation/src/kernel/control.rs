//! The five arm controllers in `f32` on the kernel's kinematics, as the WGSL
//! twin runs them: ManiSkill's `pd_joint_pos`, `pd_joint_delta_pos`,
//! `pd_ee_delta_pos`, `pd_ee_delta_pose` and `pd_ee_delta_pos_yaw`, the last three solved by damped
//! least squares (the rapier physics' `ArmController`, same constants), their
//! joint targets moving no faster than the joints' speed limits.

use super::arm::{Arm, DOF};
use super::physics::{cholesky, cholesky_solve};
use super::state::Sim;
use crate::config::ControlMode;
use crate::controller::{self, EE_BOUNDS, EE_STEP, FINGER_RANGE, IK_ITERATIONS, JOINT_STEP, lerp};
use glam::{Quat, Vec3};

/// Damping λ of the IK, the rapier controller's in `f32`.
pub const IK_DAMPING: f32 = controller::IK_DAMPING as f32;
/// Arm joints the IK moves.
const ARM: usize = 7;

/// The rotation vector (axis × angle, angle in [0, π]) of a unit quaternion.
pub fn rotation_vector(q: Quat) -> Vec3 {
    let q = if q.w < 0.0 { -q } else { q };
    let v = Vec3::new(q.x, q.y, q.z);
    let s = v.length();
    if s < 1e-7 {
        return 2.0 * v;
    }
    v * (2.0 * s.atan2(q.w) / s)
}

/// Sets `sim.targets` (and the controller memory) for `action` (length of the
/// mode, clipped to [−1, 1]); the end-effector controllers move each target
/// at most as far as its joint's speed limit allows in a control `period` (s).
pub fn apply(arm: &Arm, mode: ControlMode, action: &[f32], period: f32, sim: &mut Sim) {
    let mut a = [0.0f32; 8];
    for (c, v) in a.iter_mut().zip(action) {
        *c = v.clamp(-1.0, 1.0);
    }
    let dim = mode.action_dim();
    match mode {
        ControlMode::PdJointPos => {
            for k in 0..ARM {
                sim.targets[k] = lerp(arm.limits[k], a[k]);
            }
        }
        ControlMode::PdJointDeltaPos => {
            for k in 0..ARM {
                sim.targets[k] =
                    (sim.q[k] + JOINT_STEP * a[k]).clamp(arm.limits[k].0, arm.limits[k].1);
            }
        }
        ControlMode::PdEeDeltaPos | ControlMode::PdEeDeltaPose | ControlMode::PdEeDeltaPosYaw => {
            let (tcp, _) = arm.tcp(&arm.kinematics(&sim.q));
            let step = Vec3::new(a[0], a[1], a[2]) * EE_STEP;
            let position = (tcp + step).clamp(Vec3::from(EE_BOUNDS.0), Vec3::from(EE_BOUNDS.1));
            sim.ee_position = position.to_array();
            let want = controller::turn(mode, &a, Quat::from_array(sim.ee_rotation));
            sim.ee_rotation = want.to_array();
            let before = sim.targets;
            for _ in 0..IK_ITERATIONS {
                ik_step(arm, &mut sim.targets, position, want);
            }
            controller::pace(&before, &mut sim.targets, &arm.speed, period);
        }
    }
    let gripper = lerp(FINGER_RANGE, a[dim - 1]);
    sim.targets[7] = gripper;
    sim.targets[8] = gripper;
}

/// One damped-least-squares step of the arm joints of `q` towards the TCP pose
/// (`position`, `rotation`): `Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ e`, clamped to the limits.
pub fn ik_step(arm: &Arm, q: &mut [f32; DOF], position: Vec3, rotation: Quat) {
    let k = arm.kinematics(q);
    let (tcp, hand) = arm.tcp(&k);
    let body = arm.hand.0;
    let mut jac = [[0.0f32; 6]; ARM];
    for (j, col) in jac.iter_mut().enumerate() {
        let linear = arm.point_jacobian(&k, body, tcp, j);
        col[..3].copy_from_slice(&linear.to_array());
        col[3..].copy_from_slice(&k.axis[j].to_array());
    }
    let mut error = [0.0f32; 6];
    error[..3].copy_from_slice(&(position - tcp).to_array());
    error[3..].copy_from_slice(&rotation_vector(rotation * hand.inverse()).to_array());
    let mut a = [[0.0f32; 6]; 6];
    for (r, row) in a.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            let mut s = if r == c { IK_DAMPING * IK_DAMPING } else { 0.0 };
            for col in &jac {
                s += col[r] * col[c];
            }
            *cell = s;
        }
    }
    let y = cholesky_solve(&cholesky(&a), &error);
    for (j, col) in jac.iter().enumerate() {
        let mut dq = 0.0;
        for r in 0..6 {
            dq += col[r] * y[r];
        }
        q[j] = (q[j] + dq).clamp(arm.limits[j].0, arm.limits[j].1);
    }
}
