//! `manipulation/instruct-v0`'s instructions: three templates over the
//! scene's coloured cubes and the table's four sides, the split of their
//! combinations into training and held-out ones, the success test of each;
//! their words and tokens in [`words`], where cubes start in [`place`].

pub mod place;
pub mod words;

pub use place::{Region, place_cubes};
pub use words::{Phrasing, Typed, Vocabulary, understood, vocabulary};

use crate::panda::{CUBE_COLOURS, CUBE_HALF};
use glam::Vec3;
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;
use serde::{Deserialize, Serialize};

/// Token ids an instruction's observation holds (start, words, end, then padding 0).
pub const INSTRUCTION_TOKENS: usize = 16;
/// Push: the cube's centre must lie this far beyond the table's centre line on the named side, m.
pub const SIDE_LINE: f32 = 0.15;
/// Pick: the cube's bottom must be this far above the table while grasped, m.
pub const LIFT: f32 = 0.05;
/// Pick's dense reward leads the cube to this height above its start, m.
pub const LIFT_GOAL: f32 = 0.1;
/// Push's dense reward leads the cube this far past the side line, m.
const PUSH_PAST: f32 = 0.03;

/// Which episodes a run draws (config key `split`): the instruction
/// combinations, and for the out-of-distribution splits (RL4VLA's three)
/// the one thing each changes on the training combinations.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Split {
    /// The training combinations (the default).
    #[default]
    Train,
    /// The held-out combinations, never drawn in training.
    HeldOut,
    /// Every combination.
    All,
    /// Training combinations seen in other colours: other shades of each
    /// cube's named colour and another table (what a camera sees; the
    /// state is unchanged).
    Vision,
    /// Training combinations in words no training episode uses ("lift the
    /// red block", "place green onto blue").
    Semantic,
    /// Training combinations with the cubes starting outside the training
    /// square (in [`place::OUTSIDE`]).
    Position,
}

impl Split {
    /// Where this split's cubes start.
    pub fn region(self) -> Region {
        match self {
            Split::Position => Region::Outside,
            _ => Region::Square,
        }
    }
}

/// A side of the table, as the robot sees it (it stands at −x, facing +x).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// +y.
    Left,
    /// −y.
    Right,
    /// +x, away from the robot.
    Front,
    /// −x, towards the robot.
    Back,
}

impl Side {
    /// All four, in their canonical order.
    pub const ALL: [Side; 4] = [Side::Left, Side::Right, Side::Front, Side::Back];

    /// The unit vector pointing to this side, world frame.
    pub fn direction(self) -> Vec3 {
        match self {
            Side::Left => Vec3::Y,
            Side::Right => Vec3::NEG_Y,
            Side::Front => Vec3::X,
            Side::Back => Vec3::NEG_X,
        }
    }

    /// The word in an instruction.
    pub fn word(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
            Side::Front => "front",
            Side::Back => "back",
        }
    }
}

/// What an episode asks for; cubes are indices into the scene (colour = index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Instruction {
    /// "push the ⟨colour⟩ cube to the ⟨side⟩": the cube ends on the table beyond [`SIDE_LINE`].
    Push { cube: usize, side: Side },
    /// "pick up the ⟨colour⟩ cube": grasped with its bottom [`LIFT`] above the table for ¼ s.
    PickUp { cube: usize },
    /// "put the ⟨colour⟩ cube on the ⟨colour⟩ cube": on top, released and still for 1 s.
    PutOn { cube: usize, on: usize },
}

impl Instruction {
    /// Every instruction over `cubes` cubes, in a fixed order: pushes (cube-major), picks, puts.
    pub fn all(cubes: usize) -> Vec<Instruction> {
        let mut all = Vec::new();
        for cube in 0..cubes {
            all.extend(Side::ALL.map(|side| Instruction::Push { cube, side }));
        }
        all.extend((0..cubes).map(|cube| Instruction::PickUp { cube }));
        for cube in 0..cubes {
            all.extend(
                (0..cubes)
                    .filter(|&on| on != cube)
                    .map(|on| Instruction::PutOn { cube, on }),
            );
        }
        all
    }

    /// Whether this combination is held out of training: each template
    /// keeps some of it held out while every colour, side and template is
    /// still trained on — a Latin square for pushes (cube `c` is never pushed
    /// to side `(c + 3) mod 4` in training), the last colour for picks, and
    /// each cube on its successor (`c` on `c + 1 mod n`) for puts.
    pub fn held_out(self, cubes: usize) -> bool {
        match self {
            Instruction::Push { cube, side } => {
                Side::ALL.iter().position(|s| *s == side) == Some((cube + 3) % 4)
            }
            Instruction::PickUp { cube } => cube + 1 == cubes,
            Instruction::PutOn { cube, on } => on == (cube + 1) % cubes,
        }
    }

    /// Whether `split` draws this instruction (the vision, semantic and
    /// position splits draw the training combinations and change one other thing).
    pub fn in_split(self, split: Split, cubes: usize) -> bool {
        match split {
            Split::HeldOut => self.held_out(cubes),
            Split::All => true,
            Split::Train | Split::Vision | Split::Semantic | Split::Position => {
                !self.held_out(cubes)
            }
        }
    }

    /// The cube the instruction moves.
    pub fn cube(self) -> usize {
        match self {
            Instruction::Push { cube, .. }
            | Instruction::PickUp { cube }
            | Instruction::PutOn { cube, .. } => cube,
        }
    }

    /// The template's name, for per-template evaluation (`info["template"]` is its index).
    pub fn template(self) -> (usize, &'static str) {
        match self {
            Instruction::Push { .. } => (0, "push"),
            Instruction::PickUp { .. } => (1, "pick"),
            Instruction::PutOn { .. } => (2, "put"),
        }
    }

    /// The info key of this template's success (`success_push`, …): an
    /// evaluation's mean of it is the template's success rate.
    pub fn success_key(self) -> &'static str {
        match self {
            Instruction::Push { .. } => "success_push",
            Instruction::PickUp { .. } => "success_pick",
            Instruction::PutOn { .. } => "success_put",
        }
    }

    /// The instruction in its template's words (see [`Instruction::words`] for the others).
    pub fn text(self) -> String {
        let colour = |i: usize| CUBE_COLOURS[i].0;
        match self {
            Instruction::Push { cube, side } => {
                format!("push the {} cube to the {}", colour(cube), side.word())
            }
            Instruction::PickUp { cube } => format!("pick up the {} cube", colour(cube)),
            Instruction::PutOn { cube, on } => {
                format!("put the {} cube on the {} cube", colour(cube), colour(on))
            }
        }
    }

    /// The instruction as four floats (template + 1, cube, side or other
    /// cube, 0): how a kernel state stores it; all zeros is no instruction.
    pub fn encode(self) -> [f32; 4] {
        let t = self.template().0 + 1;
        let (cube, arg) = match self {
            Instruction::Push { cube, side } => (cube, Side::ALL.iter().position(|s| *s == side)),
            Instruction::PickUp { cube } => (cube, Some(0)),
            Instruction::PutOn { cube, on } => (cube, Some(on)),
        };
        [t as f32, cube as f32, arg.unwrap_or(0) as f32, 0.0]
    }

    /// The instruction [`Instruction::encode`] wrote, if `v` is one over `cubes` cubes.
    pub fn decode(v: [f32; 4], cubes: usize) -> Option<Instruction> {
        let whole = |x: f32| (x >= 0.0 && x.fract() == 0.0).then_some(x as usize);
        let (t, cube, arg) = (whole(v[0])?, whole(v[1])?, whole(v[2])?);
        let instruction = match t {
            1 => Instruction::Push {
                cube,
                side: *Side::ALL.get(arg)?,
            },
            2 => Instruction::PickUp { cube },
            3 => Instruction::PutOn { cube, on: arg },
            _ => return None,
        };
        Instruction::all(cubes)
            .contains(&instruction)
            .then_some(instruction)
    }

    /// Draws one instruction of `split` from the env's stream: a template
    /// uniformly, then one of its combinations in the split uniformly, so
    /// each template gets a third of the episodes whatever its count of combinations.
    pub fn draw(split: Split, cubes: usize, rng: &mut EnvRng) -> Instruction {
        let pool = || {
            Instruction::all(cubes)
                .into_iter()
                .filter(move |i| i.in_split(split, cubes))
        };
        let template = rng.random_range(0..3);
        let of_template = || pool().filter(move |i| i.template().0 == template);
        // Every split holds every template with 3 or 4 cubes (`Settings::new` checks the count).
        let k = rng.random_range(0..of_template().count().max(1));
        of_template()
            .nth(k)
            .unwrap_or(Instruction::PickUp { cube: 0 })
    }

    /// The point the dense reward leads the instructed cube to, given the
    /// cubes' start (push: past the side line straight out from the start;
    /// pick: [`LIFT_GOAL`] above the start; put: on the other cube, whose
    /// top is re-read every step).
    pub fn goal(self, starts: &[Vec3]) -> Vec3 {
        match self {
            Instruction::Push { cube, side } => {
                let d = side.direction();
                let start = starts[cube];
                start + d * (SIDE_LINE + PUSH_PAST - start.dot(d)).max(0.0)
            }
            Instruction::PickUp { cube } => starts[cube] + Vec3::Z * LIFT_GOAL,
            Instruction::PutOn { on, .. } => starts[on] + Vec3::Z * 2.0 * CUBE_HALF,
        }
    }
}

/// Whether a pushed cube at `position` is on the table beyond the side line.
pub fn pushed_to(position: Vec3, side: Side) -> bool {
    position.dot(side.direction()) >= SIDE_LINE && position.z < CUBE_HALF + 0.01
}

/// Whether a cube at `position`, `grasped`, counts as picked up.
pub fn lifted(position: Vec3, grasped: bool) -> bool {
    grasped && position.z - CUBE_HALF >= LIFT
}
