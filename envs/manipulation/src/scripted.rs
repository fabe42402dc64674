//! Scripted reference policies: waypoints for the end-effector controllers,
//! chosen from the observation alone (no memory), so one policy drives a
//! whole batch and recovers when a grasp fails.

use crate::config::{ControlMode, Settings, TaskKind};
use crate::controller::{EE_STEP, EE_TURN};
use crate::instruct::{self, Instruction};
use crate::panda::CUBE_HALF;
use crate::task::{STACK_OFFSET, obs_dim};
use glam::{Quat, Vec3};
use proprio_core::{ActMode, Agent, Error, Result};
use std::f32::consts::FRAC_PI_2;

/// Fraction of the remaining end-effector error commanded per control step.
const GAIN: f32 = 0.6;
/// Height above a cube at which the hand lines up before descending, m.
const HOVER: f32 = 0.08;
/// How far ahead of the TCP a push aims, m per control step before the gain.
const PUSH_LEAD: f32 = 0.02;
/// Push: the TCP pushes while within this of the line through the cube to the goal, m.
const PUSH_LANE: f32 = 0.02;
/// Push: within this of the point behind the cube the hand descends onto
/// it through a cone (lower the closer), m; farther and low near the cube, it rises first.
const APPROACH: f32 = 0.03;
/// Push: within this of the point behind the cube the approach cone is at the table, m.
const SETTLED: f32 = 0.006;
/// Height of the grip point above the cube's centre, m.
const GRIP_ABOVE: f32 = 0.005;
/// Finger gap under which a touched cube is firmly held (a 4 cm cube plus slack), m.
const HELD: f32 = 0.044;
/// Longest carry waypoint, m: a held cube moves at most ~0.6 m/s.
const CARRY_STEP: f32 = 0.05;
/// Stack: let go, A within this height of its place rests on B, m.
const RELEASE: f32 = 0.004;
/// Stack: held A lined up over B (within [`FUNNEL`]) and lower than this
/// above its place is let go while it is lowered the rest of the way, m.
const SET_DOWN: f32 = 0.010;
/// Stack: how far below its place A is aimed, so that it sets down on B
/// rather than being let go while still moving down, m.
const PRESS: f32 = 0.004;
/// Finger gap at which the fingers have let go of a cube, m.
const CLEAR: f32 = 0.046;
/// Once below the hover height, the hand keeps descending onto a cube
/// (correcting sideways on the way) while within this of its centre, m:
/// the height is the plan's memory, so an imitator a few millimetres off
/// is not told to climb back up (hysteresis, not a millimetre threshold).
const FUNNEL: f32 = 0.012;

/// Stack: A is carried this high above its place on B while at least
/// [`LINE_UP`] off B sideways, m.
const CLEARANCE: f32 = 0.03;
/// Stack: within this sideways offset from B, A is lowered in proportion to
/// it (the carry height a continuous function of the offset: an imitator a
/// few millimetres off still lowers, rather than hovering at a millimetre
/// threshold it cannot copy), m.
const LINE_UP: f32 = 0.03;

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
    /// The task the observation asks for (instruct: the instructed one's kind).
    kind: TaskKind,
    tcp: Vec3,
    hand: Quat,
    /// The object to move (push/pick: the cube; stack: cube A), absent in reach.
    object: Option<(Vec3, Quat)>,
    /// Where the object (or, in reach, the TCP) must go.
    goal: Vec3,
    grasped: bool,
    /// Gap between the fingers, m.
    opening: f32,
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
        if !settings.goal_in_state {
            return Err(Error::Backend(
                "the scripted policy reads the goal from the state: it needs goal_in_state: true"
                    .into(),
            ));
        }
        match settings.control {
            ControlMode::PdEeDeltaPos
            | ControlMode::PdEeDeltaPose
            | ControlMode::PdEeDeltaPosYaw => Ok(Self { settings }),
            other => Err(Error::Backend(format!(
                "the scripted policy drives pd_ee_delta_pos, pd_ee_delta_pose or pd_ee_delta_pos_yaw, not {}",
                proprio_core::serde_json::to_string(&other).unwrap_or_default()
            ))),
        }
    }

    /// The part of `turn` the controller can make (the yaw alone, or none: it
    /// then grasps at whatever yaw it meets), so the plan never waits on the rest.
    fn turnable(&self, turn: Vec3) -> Vec3 {
        match self.settings.control {
            ControlMode::PdEeDeltaPose => turn,
            ControlMode::PdEeDeltaPosYaw => Vec3::new(0.0, 0.0, turn.z),
            _ => Vec3::ZERO,
        }
    }

    fn view(&self, obs: &[f32]) -> View {
        let tcp = v3(obs, 18);
        let hand = quat(obs, 21);
        match self.settings.task {
            TaskKind::Reach => View {
                kind: TaskKind::Reach,
                tcp,
                hand,
                object: None,
                goal: v3(obs, 26),
                grasped: false,
                opening: obs[25],
            },
            TaskKind::PushCube | TaskKind::PickCube => View {
                kind: self.settings.task,
                tcp,
                hand,
                object: Some((v3(obs, 26), quat(obs, 29))),
                goal: v3(obs, 39),
                grasped: obs[48] > 0.5,
                opening: obs[25],
            },
            TaskKind::StackCube => View {
                kind: TaskKind::StackCube,
                tcp,
                hand,
                object: Some((v3(obs, 26), quat(obs, 29))),
                goal: v3(obs, 26) + v3(obs, 55),
                grasped: obs[58] > 0.5,
                opening: obs[25],
            },
            TaskKind::Instruct => self.instructed_view(obs, tcp, hand),
        }
    }

    /// Instruct: the instruction read back from its tokens, and the cube it names.
    fn instructed_view(&self, obs: &[f32], tcp: Vec3, hand: Quat) -> View {
        let n = self.settings.cubes;
        let state = crate::task::instruct_state_dim(&self.settings);
        let tokens = &obs[state..state + instruct::INSTRUCTION_TOKENS];
        let cube_at = |i: usize| 26 + 13 * i;
        let goal_at = cube_at(n);
        let flags = goal_at + 3;
        let instruction = instruct::understood(tokens, n);
        let (kind, cube, goal) = match instruction {
            Some(i @ Instruction::PutOn { cube, on }) => (
                TaskKind::instructed(i),
                cube,
                v3(obs, cube_at(on)) + Vec3::new(0.0, 0.0, 2.0 * CUBE_HALF),
            ),
            Some(i) => (TaskKind::instructed(i), i.cube(), v3(obs, goal_at)),
            None => (TaskKind::Reach, 0, tcp),
        };
        View {
            kind,
            tcp,
            hand,
            object: (kind != TaskKind::Reach)
                .then(|| (v3(obs, cube_at(cube)), quat(obs, cube_at(cube) + 3))),
            goal,
            grasped: obs[flags + cube] > 0.5,
            opening: obs[25],
        }
    }

    /// The TCP waypoint, the rotation to apply and the gripper command for one observation.
    fn plan(&self, v: &View) -> (Vec3, Vec3, f32) {
        let Some((cube, cube_rot)) = v.object else {
            return (v.goal, Vec3::ZERO, 1.0);
        };
        let align = self.turnable(alignment(v.hand, cube_rot));
        let above = cube + Vec3::new(0.0, 0.0, HOVER);
        match v.kind {
            TaskKind::PushCube => {
                let dir = (v.goal - cube).with_z(0.0).normalize_or_zero();
                let behind = (cube - dir * (CUBE_HALF + 0.035)).with_z(CUBE_HALF);
                let rel = (v.tcp - cube).with_z(0.0);
                let along = rel.dot(dir);
                let lateral = rel - dir * along;
                let low = v.tcp.z < CUBE_HALF + 0.015;
                let pushing =
                    low && (-0.08..-0.015).contains(&along) && lateral.length() < PUSH_LANE;
                let from_behind = (v.tcp - behind).with_z(0.0).length();
                let waypoint = if pushing {
                    // Push along the line cube → goal, steering back onto it.
                    (v.tcp + dir * PUSH_LEAD - lateral).with_z(CUBE_HALF)
                } else if v.tcp.z < HOVER - 0.02 && rel.length() < 0.1 && from_behind > APPROACH {
                    // Low beside or ahead of the cube: up first, clear of it.
                    v.tcp.with_z(HOVER)
                } else {
                    // The approach cone: the height over the point behind the
                    // cube a continuous function of the distance from it.
                    let rise = ((from_behind - SETTLED) / (APPROACH - SETTLED)).clamp(0.0, 1.0);
                    behind.with_z(CUBE_HALF + (HOVER - CUBE_HALF) * rise)
                };
                (waypoint, Vec3::ZERO, -1.0)
            }
            TaskKind::PickCube | TaskKind::StackCube => {
                let stacking = v.kind == TaskKind::StackCube;
                let off_b = (v.goal - cube).with_z(0.0).length();
                let above_place = cube.z - v.goal.z;
                // Held, A is let go once lined up over B within the funnel
                // and lowered into a band above its place (a band, not a
                // millimetre, so an imitator resting A on B is told to let
                // go); let go, the hand backs off while A rests anywhere on B.
                let set_down = off_b < FUNNEL && above_place < SET_DOWN;
                let resting_on_b = off_b < STACK_OFFSET - 0.005 && above_place.abs() < RELEASE;
                if stacking && (set_down || resting_on_b && !v.grasped) {
                    // Open while lowering A the rest of the way, then back off
                    // once the fingers are clear.
                    let waypoint = if v.opening > CLEAR {
                        v.tcp.with_z(cube.z + HOVER)
                    } else {
                        v.tcp - Vec3::Z * above_place.max(0.0)
                    };
                    return (waypoint, Vec3::ZERO, 1.0);
                }
                if v.grasped && v.opening < HELD {
                    // Carry: to the goal; stacking, down onto B through a
                    // funnel whose height follows A's sideways offset from B,
                    // pressed on once low and within the funnel (hysteresis).
                    let carry = if stacking {
                        let off_b = (v.goal - cube).with_z(0.0).length();
                        let lowering = cube.z < v.goal.z + 0.02 && off_b < FUNNEL;
                        let rise = if lowering {
                            0.0
                        } else {
                            (off_b / LINE_UP).min(1.0)
                        };
                        v.goal + Vec3::Z * ((CLEARANCE + PRESS) * rise - PRESS)
                    } else {
                        v.goal
                    };
                    let carry = cube + (carry - cube).clamp_length_max(CARRY_STEP);
                    return (v.tcp + (carry - cube), Vec3::ZERO, -1.0);
                }
                let offset = (v.tcp - cube).with_z(0.0).length();
                // Grip a little above the centre: the fingertips stay clear of the table.
                let grip = cube + Vec3::new(0.0, 0.0, GRIP_ABOVE);
                let at_cube = offset < 0.006 && (v.tcp.z - grip.z).abs() < 0.006;
                let descending = v.tcp.z < above.z - 0.01 && offset < FUNNEL;
                if at_cube {
                    (grip, Vec3::ZERO, -1.0)
                } else if descending || (offset < 0.005 && align.length() < 0.05) {
                    (grip, align, 1.0)
                } else {
                    (above, align, 1.0)
                }
            }
            TaskKind::Reach | TaskKind::Instruct => (v.goal, Vec3::ZERO, 1.0),
        }
    }

    /// The action for one observation.
    pub fn action(&self, obs: &[f32], action: &mut [f32]) {
        let v = self.view(obs);
        let (waypoint, turn, gripper) = self.plan(&v);
        let step = (waypoint - v.tcp) * GAIN / EE_STEP;
        action[..3].copy_from_slice(&step.clamp(Vec3::splat(-1.0), Vec3::splat(1.0)).to_array());
        let rot = (turn * GAIN / EE_TURN).clamp(Vec3::splat(-1.0), Vec3::splat(1.0));
        match self.settings.control {
            ControlMode::PdEeDeltaPose => action[3..6].copy_from_slice(&rot.to_array()),
            ControlMode::PdEeDeltaPosYaw => action[3] = rot.z,
            _ => {}
        }
        if let Some(last) = action.last_mut() {
            *last = gripper;
        }
    }
}

impl Agent for Scripted {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], _: ActMode) -> Result<()> {
        let d = obs_dim(&self.settings);
        let a = self.settings.control.action_dim();
        for (o, act) in obs.chunks_exact(d).zip(actions.chunks_exact_mut(a)) {
            self.action(o, act);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ManipConfig;

    fn expert(task: TaskKind) -> Scripted {
        let config = ManipConfig {
            control: Some(ControlMode::PdEeDeltaPosYaw),
            ..ManipConfig::default()
        };
        Scripted::new(Settings::new(task, &config).unwrap()).unwrap()
    }

    /// A top-down hand at `tcp` with the fingers `opening` apart.
    fn view(
        kind: TaskKind,
        tcp: Vec3,
        cube: Vec3,
        goal: Vec3,
        grasped: bool,
        opening: f32,
    ) -> View {
        let down = Quat::from_rotation_x(std::f32::consts::PI);
        View {
            kind,
            tcp,
            hand: down,
            object: Some((cube, Quat::IDENTITY)),
            goal,
            grasped,
            opening,
        }
    }

    #[test]
    fn the_push_approach_height_never_jumps_as_the_hand_nears_the_point_behind_the_cube() {
        let push = expert(TaskKind::PushCube);
        let cube = Vec3::new(0.0, 0.0, CUBE_HALF);
        let goal = Vec3::new(0.3, 0.0, CUBE_HALF);
        // The hand at hover height, from 6 cm to 0 behind the point it
        // descends at (5.5 cm behind the cube), a millimetre at a time.
        let heights: Vec<f32> = (0..=60)
            .map(|mm| {
                let tcp = Vec3::new(-0.055 - mm as f32 * 0.001, 0.0, HOVER);
                push.plan(&view(TaskKind::PushCube, tcp, cube, goal, false, 0.0))
                    .0
                    .z
            })
            .collect();
        assert!((heights[0] - CUBE_HALF).abs() < 1e-6, "{heights:?}");
        assert!((heights[60] - HOVER).abs() < 1e-6, "{heights:?}");
        for pair in heights.windows(2) {
            assert!(
                pair[1] >= pair[0] && pair[1] - pair[0] < 0.003,
                "{heights:?}"
            );
        }
    }

    #[test]
    fn a_held_cube_is_let_go_only_lined_up_over_the_other_and_lifted_off_its_edge() {
        let stack = expert(TaskKind::StackCube);
        let place = Vec3::new(0.1, 0.1, 3.0 * CUBE_HALF);
        let at = |offset: f32, above: f32| {
            let cube = place + Vec3::new(offset, 0.0, above);
            let tcp = cube + Vec3::new(0.0, 0.0, GRIP_ABOVE);
            let v = view(TaskKind::StackCube, tcp, cube, place, true, 0.04);
            stack.plan(&v)
        };
        // Resting on B 6 mm off, or 8 mm above its place lined up: open.
        for (offset, above) in [(0.006, 0.0), (0.0, 0.008)] {
            let (waypoint, _, gripper) = at(offset, above);
            assert_eq!(gripper, 1.0, "offset {offset}, above {above}");
            assert!(waypoint.z <= place.z + GRIP_ABOVE + 1e-6);
        }
        // Resting on B's edge 2.5 cm off (its centre past B's face): held,
        // lifted and moved back over B.
        let (waypoint, _, gripper) = at(0.025, 0.0);
        assert_eq!(gripper, -1.0);
        let tcp = place + Vec3::new(0.025, 0.0, GRIP_ABOVE);
        assert!(
            waypoint.z > tcp.z + 0.01 && waypoint.x < tcp.x,
            "{waypoint}"
        );
        // Let go and still on B 2.5 cm off: the hand backs off, open.
        let cube = place + Vec3::new(0.025, 0.0, 0.0);
        let v = view(
            TaskKind::StackCube,
            cube + Vec3::Z * 0.02,
            cube,
            place,
            false,
            0.07,
        );
        let (waypoint, _, gripper) = stack.plan(&v);
        assert_eq!(gripper, 1.0);
        assert!(waypoint.z > cube.z + 0.05);
    }
}
