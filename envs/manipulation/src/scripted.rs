//! Scripted reference policies: waypoints for the end-effector controllers,
//! chosen from the observation alone (no memory), so one policy drives a
//! whole batch and recovers when a grasp fails.

use crate::config::{ControlMode, Settings, TaskKind};
use crate::controller::{EE_STEP, EE_TURN};
use crate::task::obs_dim;
use crate::world::CUBE_HALF;
use glam::{Quat, Vec3};
use proprio_core::{Controller, Error, Result};
use std::f32::consts::FRAC_PI_2;

/// Fraction of the remaining end-effector error commanded per control step.
const GAIN: f32 = 0.6;
/// Height above a cube at which the hand lines up before descending, m.
const HOVER: f32 = 0.08;
/// How close the TCP must be to a waypoint to move on, m.
const CLOSE: f32 = 0.012;

/// The scripted policy of one task.
pub struct Scripted {
    settings: Settings,
}

fn v3(obs: &[f32], at: usize) -> Vec3 {
    Vec3::new(obs[at], obs[at + 1], obs[at + 2])
}

fn quat(obs: &[f32], at: usize) -> Quat {
    Quat::from_xyzw(obs[at], obs[at + 1], obs[at + 2], obs[at + 3])
}

/// The observation fields a policy reads.
struct View {
    tcp: Vec3,
    hand: Quat,
    /// The object to move (push/pick: the cube; stack: cube A), absent in reach.
    object: Option<(Vec3, Quat)>,
    /// Where the object (or, in reach, the TCP) must go.
    goal: Vec3,
    grasped: bool,
}

/// Rotation (world axis-angle) that lines the gripper up with the cube's faces and points it down.
fn alignment(hand: Quat, cube: Quat) -> Vec3 {
    let down = hand * Vec3::Z;
    let tilt = down.cross(Vec3::NEG_Z);
    let hand_x = hand * Vec3::X;
    let cube_x = cube * Vec3::X;
    let mut yaw = cube_x.y.atan2(cube_x.x) - hand_x.y.atan2(hand_x.x);
    yaw = (yaw + FRAC_PI_2 / 2.0).rem_euclid(FRAC_PI_2) - FRAC_PI_2 / 2.0;
    tilt + Vec3::new(0.0, 0.0, yaw)
}

impl Scripted {
    /// The policy for envs with `settings`; it needs an end-effector controller.
    pub fn new(settings: Settings) -> Result<Self> {
        match settings.control {
            ControlMode::PdEeDeltaPos | ControlMode::PdEeDeltaPose => Ok(Self { settings }),
            other => Err(Error::Backend(format!(
                "the scripted policy drives pd_ee_delta_pos or pd_ee_delta_pose, not {}",
                proprio_core::serde_json::to_string(&other).unwrap_or_default()
            ))),
        }
    }

    fn view(&self, obs: &[f32]) -> View {
        let tcp = v3(obs, 18);
        let hand = quat(obs, 21);
        match self.settings.task {
            TaskKind::Reach => View {
                tcp,
                hand,
                object: None,
                goal: v3(obs, 26),
                grasped: false,
            },
            TaskKind::PushCube | TaskKind::PickCube => View {
                tcp,
                hand,
                object: Some((v3(obs, 26), quat(obs, 29))),
                goal: v3(obs, 39),
                grasped: obs[48] > 0.5,
            },
            TaskKind::StackCube => View {
                tcp,
                hand,
                object: Some((v3(obs, 26), quat(obs, 29))),
                goal: v3(obs, 26) + v3(obs, 55),
                grasped: obs[58] > 0.5,
            },
        }
    }

    /// The TCP waypoint, the rotation to apply and the gripper command for one observation.
    fn plan(&self, v: &View) -> (Vec3, Vec3, f32) {
        let Some((cube, cube_rot)) = v.object else {
            return (v.goal, Vec3::ZERO, 1.0);
        };
        let align = alignment(v.hand, cube_rot);
        let above = cube + Vec3::new(0.0, 0.0, HOVER);
        match self.settings.task {
            TaskKind::PushCube => {
                let dir = (v.goal - cube).with_z(0.0).normalize_or_zero();
                let behind = (cube - dir * (CUBE_HALF + 0.02)).with_z(CUBE_HALF);
                let lined_up = (v.tcp - behind).with_z(0.0).length() < CLOSE;
                let waypoint = if lined_up {
                    // Push through: aim past the goal along the line cube → goal.
                    behind + dir * 0.06
                } else if (v.tcp - behind).with_z(0.0).length() < 2.0 * CLOSE {
                    behind
                } else {
                    behind.with_z(HOVER)
                };
                (waypoint, Vec3::ZERO, -1.0)
            }
            TaskKind::PickCube | TaskKind::StackCube => {
                let stacking = self.settings.task == TaskKind::StackCube;
                let placed = stacking && (v.goal - cube).length() < 0.006;
                if v.grasped && !placed {
                    // Carry: lift first, then travel above the goal, then lower onto it.
                    let over = (v.goal - cube).with_z(0.0).length() < 0.01;
                    let carry = if stacking && !over {
                        v.goal + Vec3::new(0.0, 0.0, 0.04)
                    } else {
                        v.goal
                    };
                    return (v.tcp + (carry - cube), Vec3::ZERO, -1.0);
                }
                if placed {
                    return (v.tcp.with_z(cube.z + HOVER), Vec3::ZERO, 1.0);
                }
                let offset = (v.tcp - cube).with_z(0.0).length();
                let at_cube = offset < 0.006 && (v.tcp.z - cube.z).abs() < 0.006;
                if at_cube {
                    (cube, Vec3::ZERO, -1.0)
                } else if offset < CLOSE && align.length() < 0.05 {
                    (cube, align, 1.0)
                } else {
                    (above, align, 1.0)
                }
            }
            TaskKind::Reach => (v.goal, Vec3::ZERO, 1.0),
        }
    }

    /// The action for one observation.
    pub fn action(&self, obs: &[f32], action: &mut [f32]) {
        let v = self.view(obs);
        let (waypoint, turn, gripper) = self.plan(&v);
        let step = (waypoint - v.tcp) * GAIN / EE_STEP;
        action[..3].copy_from_slice(&step.clamp(Vec3::splat(-1.0), Vec3::splat(1.0)).to_array());
        if self.settings.control == ControlMode::PdEeDeltaPose {
            let rot = (turn * GAIN / EE_TURN).clamp(Vec3::splat(-1.0), Vec3::splat(1.0));
            action[3..6].copy_from_slice(&rot.to_array());
        }
        if let Some(last) = action.last_mut() {
            *last = gripper;
        }
    }
}

impl Controller for Scripted {
    fn act(&mut self, obs: &[f32], actions: &mut [f32]) {
        let d = obs_dim(self.settings.task);
        let a = self.settings.control.action_dim();
        for (o, act) in obs.chunks_exact(d).zip(actions.chunks_exact_mut(a)) {
            self.action(o, act);
        }
    }
}
