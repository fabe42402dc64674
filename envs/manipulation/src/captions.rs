//! What a manipulation state looks like, in words: the captions an
//! in-domain CLIP is trained on (`proprio reward-model fit-clip`), one per
//! stage of the task (ManiSkill3's reward stages: reach, grasp, place).
//! Each reads the state observation with the goal in it (layout in
//! `docs/envs.md`) and gives `None` for another layout.

use crate::instruct::{self, INSTRUCTION_TOKENS, Instruction};
use crate::measure::{PICK_RADIUS, PUSH_RADIUS, STACK_OFFSET};
use crate::panda::{CUBE_COLOURS, CUBE_HALF};
use glam::Vec3;

/// Observation length of reach with the goal in the state.
const REACH_OBS: usize = 32;
/// Where `goal − TCP` sits in a reach observation.
const GOAL_OFFSET: std::ops::Range<usize> = 29..32;
/// Observation length of push and pick with the goal in the state.
const CUBE_OBS: usize = 49;
/// Where push's and pick's `goal − cube`, `cube − TCP` and grasp flag sit.
const CUBE_TO_GOAL: usize = 42;
const TCP_TO_CUBE: usize = 45;
const CUBE_GRASPED: usize = 48;
/// Observation length of stack.
const STACK_OBS: usize = 59;
/// Where stack's `A − TCP`, `A's place − A` and A's grasp flag sit.
const TCP_TO_A: usize = 52;
const A_TO_PLACE: usize = 55;
const A_GRASPED: usize = 58;

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// How far the gripper is from the goal ball: "touches" (under 3 cm, about
/// the success radius), "close to" (8 cm), "near" (16 cm) or "far from".
pub fn reach(obs: &[f32]) -> Option<String> {
    if obs.len() != REACH_OBS {
        return None;
    }
    let how = match norm(&obs[GOAL_OFFSET]) {
        d if d < 0.03 => "touches",
        d if d < 0.08 => "is close to",
        d if d < 0.16 => "is near",
        _ => "is far from",
    };
    Some(format!("the gripper {how} the green ball"))
}

/// Where the gripper is from a cube it does not hold: touching it (3 cm),
/// near it (10 cm) or far from it.
fn approach(tcp_to_cube: f32, cube: &str) -> String {
    let how = match tcp_to_cube {
        d if d < 0.03 => "touches",
        d if d < 0.10 => "is near",
        _ => "is far from",
    };
    format!("the gripper {how} the {cube}")
}

/// Pick: the red cube held at the green ball (the success radius), held
/// close to it (8 cm) or away from it, or the gripper's approach to it.
pub fn pick(obs: &[f32]) -> Option<String> {
    if obs.len() != CUBE_OBS {
        return None;
    }
    let to_goal = norm(&obs[CUBE_TO_GOAL..CUBE_TO_GOAL + 3]);
    Some(if obs[CUBE_GRASPED] > 0.5 {
        match to_goal {
            d if d < PICK_RADIUS => "the gripper holds the red cube at the green ball".into(),
            d if d < 0.08 => "the gripper holds the red cube close to the green ball".into(),
            _ => "the gripper holds the red cube away from the green ball".into(),
        }
    } else {
        approach(norm(&obs[TCP_TO_CUBE..TCP_TO_CUBE + 3]), "red cube")
    })
}

/// Push: the red cube on the green target (its radius, in the table's
/// plane), pushed close to it (5 cm of the 20 it starts away, so no start
/// reads as close), or the gripper's approach to it.
pub fn push(obs: &[f32]) -> Option<String> {
    if obs.len() != CUBE_OBS {
        return None;
    }
    let to_goal = norm(&obs[CUBE_TO_GOAL..CUBE_TO_GOAL + 2]);
    Some(match to_goal {
        d if d < PUSH_RADIUS => "the red cube is on the green target".into(),
        d if d < crate::task::PUSH_DISTANCE - 0.05 => {
            "the red cube is close to the green target".into()
        }
        _ => approach(norm(&obs[TCP_TO_CUBE..TCP_TO_CUBE + 3]), "red cube"),
    })
}

/// Stack: the red cube (A) on the blue one (within 1 cm of its place) and
/// let go of or still held, held above it (5 cm) or away from it, or the
/// gripper's approach to it.
pub fn stack(obs: &[f32]) -> Option<String> {
    if obs.len() != STACK_OBS {
        return None;
    }
    let to_place = norm(&obs[A_TO_PLACE..A_TO_PLACE + 3]);
    let held = obs[A_GRASPED] > 0.5;
    Some(match (to_place, held) {
        (d, false) if d < 0.01 => "the red cube rests on the blue cube".into(),
        (d, true) if d < 0.01 => "the gripper holds the red cube on the blue cube".into(),
        (d, true) if d < 0.05 => "the gripper holds the red cube above the blue cube".into(),
        (_, true) => "the gripper holds the red cube away from the blue cube".into(),
        _ => approach(norm(&obs[TCP_TO_A..TCP_TO_A + 3]), "red cube"),
    })
}

/// Instruct: the stage of the episode's own instruction, on its named
/// cubes and in their colours (so the words tie colours to cubes): the cube
/// at the named side, resting on or held above the other cube, held up or
/// held, or the gripper's approach to it. The instruction is read back from
/// the observation's tokens; `None` for another layout.
pub fn instruct(obs: &[f32]) -> Option<String> {
    // The state holds the arm (26), each cube (13), the goal (3), the grasp
    // flags and each cube from the TCP (3), then the instruction's tokens.
    let cubes = (3..=CUBE_COLOURS.len()).find(|c| obs.len() == 29 + 17 * c + INSTRUCTION_TOKENS)?;
    let (state, tokens) = obs.split_at(obs.len() - INSTRUCTION_TOKENS);
    let instruction = instruct::understood(tokens, cubes)?;
    let position = |i: usize| Vec3::from_slice(&state[26 + 13 * i..]);
    let grasped = |i: usize| state[29 + 13 * cubes + i] > 0.5;
    let cube_from_tcp = |i: usize| Vec3::from_slice(&state[29 + 14 * cubes + 3 * i..]);
    let colour = |i: usize| CUBE_COLOURS[i].0;
    let cube = instruction.cube();
    let name = format!("{} cube", colour(cube));
    let held = grasped(cube);
    Some(match instruction {
        Instruction::Push { side, .. } if instruct::pushed_to(position(cube), side) => {
            format!("the {name} is at the {}", side.word())
        }
        Instruction::Push { side, .. } if !held && pushing(cube_from_tcp(cube), side) => {
            format!("the gripper pushes the {name} to the {}", side.word())
        }
        Instruction::PutOn { on, .. } => {
            let offset = position(cube) - position(on);
            let resting = offset.with_z(0.0).length() <= STACK_OFFSET
                && (offset.z - 2.0 * CUBE_HALF).abs() <= 0.01;
            match (resting, held) {
                (true, false) => format!("the {name} rests on the {} cube", colour(on)),
                (_, true) if (offset - 2.0 * CUBE_HALF * Vec3::Z).length() < 0.05 => {
                    format!("the gripper holds the {name} above the {} cube", colour(on))
                }
                _ => holding(held, position(cube), cube_from_tcp(cube).length(), &name),
            }
        }
        _ => holding(held, position(cube), cube_from_tcp(cube).length(), &name),
    })
}

/// Push's pushing stage: the hand low behind the cube (1–8 cm behind its
/// centre, within 3 cm of the line to the side and at most 2 cm above the
/// centre), where the scripted expert pushes from, so the frames between
/// the approach and the success carry the side's words too.
fn pushing(cube_from_tcp: Vec3, side: instruct::Side) -> bool {
    let along = cube_from_tcp.dot(side.direction());
    let lateral = (cube_from_tcp - side.direction() * along)
        .with_z(0.0)
        .length();
    (0.01..0.08).contains(&along) && lateral < 0.03 && cube_from_tcp.z > -0.02
}

/// The gripper holding the cube up (as a pick succeeds), holding it, or approaching it.
fn holding(held: bool, position: Vec3, from_tcp: f32, name: &str) -> String {
    match held {
        true if instruct::lifted(position, true) => format!("the gripper holds the {name} up"),
        true => format!("the gripper holds the {name}"),
        false => approach(from_tcp, name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pick/push observation with `goal − cube`, `cube − TCP` and the grasp flag set.
    fn cube_obs(to_goal: [f32; 3], to_cube: [f32; 3], grasped: bool) -> Vec<f32> {
        let mut obs = vec![0.0; CUBE_OBS];
        obs[CUBE_TO_GOAL..CUBE_TO_GOAL + 3].copy_from_slice(&to_goal);
        obs[TCP_TO_CUBE..TCP_TO_CUBE + 3].copy_from_slice(&to_cube);
        obs[CUBE_GRASPED] = f32::from(u8::from(grasped));
        obs
    }

    #[test]
    fn pick_captions_follow_its_stages() {
        let far = [0.3, 0.0, 0.0];
        assert_eq!(
            pick(&cube_obs(far, far, false)).unwrap(),
            "the gripper is far from the red cube"
        );
        assert_eq!(
            pick(&cube_obs(far, [0.05, 0.0, 0.0], false)).unwrap(),
            "the gripper is near the red cube"
        );
        assert_eq!(
            pick(&cube_obs(far, [0.0, 0.0, 0.02], false)).unwrap(),
            "the gripper touches the red cube"
        );
        let held = |to_goal| pick(&cube_obs(to_goal, [0.0; 3], true)).unwrap();
        assert_eq!(
            held(far),
            "the gripper holds the red cube away from the green ball"
        );
        assert_eq!(
            held([0.0, 0.05, 0.0]),
            "the gripper holds the red cube close to the green ball"
        );
        assert_eq!(
            held([0.0, 0.0, 0.02]),
            "the gripper holds the red cube at the green ball"
        );
        assert_eq!(pick(&[0.0; 32]), None);
    }

    #[test]
    fn push_reads_the_distance_in_the_tables_plane() {
        // 50 cm under the goal is on it for push (the goal lies on the table).
        let on = cube_obs([0.05, 0.0, 0.5], [0.3, 0.0, 0.0], false);
        assert_eq!(push(&on).unwrap(), "the red cube is on the green target");
        let close = cube_obs([0.14, 0.0, 0.0], [0.3, 0.0, 0.0], false);
        assert_eq!(
            push(&close).unwrap(),
            "the red cube is close to the green target"
        );
        // Where every episode starts (the goal 20 cm off) is not close yet.
        let start = cube_obs([0.2 * 0.6, -0.2 * 0.8, 0.0], [0.3, 0.0, 0.0], false);
        assert_eq!(
            push(&start).unwrap(),
            "the gripper is far from the red cube"
        );
        let away = cube_obs([0.5, 0.0, 0.0], [0.02, 0.0, 0.0], false);
        assert_eq!(push(&away).unwrap(), "the gripper touches the red cube");
    }

    #[test]
    fn stack_tells_a_placed_cube_from_a_held_one() {
        let obs = |to_place: [f32; 3], held: bool| {
            let mut obs = vec![0.0; STACK_OBS];
            obs[TCP_TO_A..TCP_TO_A + 3].copy_from_slice(&[0.2, 0.0, 0.0]);
            obs[A_TO_PLACE..A_TO_PLACE + 3].copy_from_slice(&to_place);
            obs[A_GRASPED] = f32::from(u8::from(held));
            stack(&obs).unwrap()
        };
        assert_eq!(
            obs([0.0, 0.0, 0.005], false),
            "the red cube rests on the blue cube"
        );
        assert_eq!(
            obs([0.0, 0.0, 0.005], true),
            "the gripper holds the red cube on the blue cube"
        );
        assert_eq!(
            obs([0.0, 0.03, 0.0], true),
            "the gripper holds the red cube above the blue cube"
        );
        assert_eq!(
            obs([0.3, 0.0, 0.0], true),
            "the gripper holds the red cube away from the blue cube"
        );
        assert_eq!(
            obs([0.3, 0.0, 0.0], false),
            "the gripper is far from the red cube"
        );
    }

    #[test]
    fn a_push_reads_as_pushing_only_with_the_hand_low_behind_the_cube() {
        let left = instruct::Side::Left;
        // The side is +y: the hand 5 cm towards −y of the cube is behind it.
        assert!(pushing(Vec3::new(0.0, 0.05, 0.0), left));
        assert!(pushing(Vec3::new(0.02, 0.05, -0.01), left));
        // Ahead of the cube, off its line, too far back, or above it: not pushing.
        assert!(!pushing(Vec3::new(0.0, -0.05, 0.0), left));
        assert!(!pushing(Vec3::new(0.04, 0.05, 0.0), left));
        assert!(!pushing(Vec3::new(0.0, 0.1, 0.0), left));
        assert!(!pushing(Vec3::new(0.0, 0.05, -0.05), left));
        // Another side reads the same offset by its own direction.
        assert!(!pushing(Vec3::new(0.0, 0.05, 0.0), instruct::Side::Right));
    }
}
