//! The staged rewards of pick-cube and stack-cube on hand-placed states: each
//! stage scores what the formula in `docs/envs.md` says, and no state scores
//! above the stated maximum; instruct-v0's success test of every template;
//! the binary reward every task pays without `dense_reward`.

#[path = "support/episodes.rs"]
mod episodes;

use glam::{Quat, Vec3};
use proprio_core::rand::{RngExt, SeedableRng};
use proprio_core::serde_json::json;
use proprio_manipulation::instruct::{Instruction, LIFT, SIDE_LINE, Side};
use proprio_manipulation::reward::{self, PICK_STAGES, STACK_STAGES, closeness, progress};
use proprio_manipulation::task::STACK_OFFSET;
use proprio_manipulation::task::{Measure, TaskState};
use proprio_manipulation::{BodyState, ControlState, ManipConfig, Settings, TaskKind};

/// A hand-placed state: what a physics would report, set by the test.
#[derive(Clone, Copy)]
struct Placed {
    q: [f32; 9],
    qd: [f32; 9],
    tcp: Vec3,
    cubes: [BodyState; 3],
    grasped: bool,
    /// The cube the fingers touch while `grasped`.
    holding: usize,
}

impl Measure for Placed {
    fn joints(&self) -> ([f32; 9], [f32; 9]) {
        (self.q, self.qd)
    }
    fn tcp(&self) -> (Vec3, Quat) {
        (self.tcp, Quat::IDENTITY)
    }
    fn cube(&self, i: usize) -> BodyState {
        self.cubes[i]
    }
    fn touches(&self, i: usize) -> bool {
        i == self.holding && self.grasped
    }
}

fn at(position: Vec3) -> BodyState {
    BodyState {
        position,
        rotation: Quat::IDENTITY,
        linvel: Vec3::ZERO,
        angvel: Vec3::ZERO,
    }
}

fn settings(task: TaskKind) -> Settings {
    Settings::new(task, &ManipConfig::default()).unwrap()
}

fn task(goal: Vec3) -> TaskState {
    TaskState {
        goal: goal.to_array(),
        held: 0,
        control: ControlState {
            ee_position: [0.0; 3],
            ee_rotation: [0.0, 0.0, 0.0, 1.0],
            targets: [0.0; 9],
        },
        instruction: None,
        phrasing: 0,
    }
}

const HALF: f32 = 0.02;
const A: Vec3 = Vec3::new(0.05, -0.03, HALF);
const B: Vec3 = Vec3::new(-0.05, 0.06, HALF);
const C: Vec3 = Vec3::new(0.08, 0.08, HALF);

fn placed(tcp: Vec3) -> Placed {
    Placed {
        q: [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.04, 0.04],
        qd: [0.0; 9],
        tcp,
        cubes: [at(A), at(B), at(C)],
        grasped: false,
        holding: 0,
    }
}

fn close(a: f32, b: f32) {
    assert!((a - b).abs() < 1e-5, "{a} != {b}");
}

#[test]
fn pick_stages_score_the_formula() {
    let s = settings(TaskKind::PickCube);
    let goal = Vec3::new(0.0, 0.0, 0.25);
    let t = task(goal);
    // Reaching: only the TCP's closeness to the cube counts, whatever the goal.
    let mut p = placed(A + Vec3::new(0.0, 0.0, 0.1));
    let r = progress(&s, &p, &t);
    close(r.score, closeness(0.1) / PICK_STAGES);
    assert!(!r.holds);
    close(r.distance, (A - goal).length());
    // Grasped on the table: reach 1 + grasp 1 + the place term.
    p.tcp = A;
    p.grasped = true;
    let r = progress(&s, &p, &t);
    close(
        r.score,
        (2.0 + closeness((A - goal).length())) / PICK_STAGES,
    );
    // At the goal but the arm moving: the static term pays 1 − tanh(5 |q̇|); no success.
    p.cubes[0] = at(goal + Vec3::new(0.01, 0.0, 0.0));
    p.tcp = p.cubes[0].position;
    p.qd[3] = 0.3;
    let r = progress(&s, &p, &t);
    assert!(!r.holds, "a joint at 0.3 rad/s is not still");
    close(
        r.score,
        (2.0 + closeness(0.01) + 1.0 - (5.0f32 * 0.3).tanh()) / PICK_STAGES,
    );
    // Still: the success condition holds and scores 1.
    p.qd[3] = 0.1;
    let r = progress(&s, &p, &t);
    assert!(r.holds);
    close(r.score, 1.0);
    // Fingers on the cube with their targets at its faces: a touch, not a grasp.
    let mut loose = t;
    loose.control.targets[7] = 0.02;
    loose.control.targets[8] = 0.02;
    p.q[7] = 0.02;
    p.q[8] = 0.02;
    assert!(!reward::grasped(&p, &loose, 0));
    let r = progress(&s, &p, &loose);
    assert!(!r.holds, "an unsqueezed cube is not held");
    close(r.score, 1.0 / PICK_STAGES);
    // Targets 6 mm inside the faces (3 mm a finger): squeezed, held.
    loose.control.targets[7] = 0.017;
    assert!(
        !reward::grasped(&p, &loose, 0),
        "3 mm in all is below SQUEEZE"
    );
    loose.control.targets[8] = 0.017;
    assert!(reward::grasped(&p, &loose, 0));
    assert!(progress(&s, &p, &loose).holds);
    // At the goal without a grasp (pushed or thrown there): no grasp, place or static pay.
    p.grasped = false;
    let r = progress(&s, &p, &t);
    assert!(!r.holds);
    close(r.score, 1.0 / PICK_STAGES);
}

#[test]
fn stack_stages_score_the_formula() {
    let s = settings(TaskKind::StackCube);
    let t = task(B + Vec3::new(0.0, 0.0, 2.0 * HALF));
    // Reaching A: twice its closeness.
    let mut p = placed(A + Vec3::new(0.0, 0.0, 0.08));
    close(
        progress(&s, &p, &t).score,
        2.0 * closeness(0.08) / STACK_STAGES,
    );
    // A grasped and lifted: 4 + closeness to its place on B.
    let lifted = A + Vec3::new(0.0, 0.0, 0.1);
    p.cubes[0] = at(lifted);
    p.tcp = lifted;
    p.grasped = true;
    let place = B + Vec3::new(0.0, 0.0, 2.0 * HALF);
    let r = progress(&s, &p, &t);
    close(
        r.score,
        (4.0 + closeness((lifted - place).length())) / STACK_STAGES,
    );
    close(r.distance, (lifted - place).length());
    // On B, squeezed with the fingers commanded shut: 6 + (0 + static) / 2.
    p.cubes[0] = at(place + Vec3::new(0.01, 0.0, 0.002));
    p.cubes[0].linvel = Vec3::new(0.02, 0.0, 0.0);
    p.q[7] = 0.02;
    p.q[8] = 0.02;
    let r = progress(&s, &p, &t);
    assert!(!r.holds);
    let still = 1.0 - (10.0f32 * 0.02).tanh();
    close(r.score, (6.0 + still / 2.0) / STACK_STAGES);
    // The grip loosened but still squeezing (targets 3 cm in all, 1 cm inside
    // the 4 cm opening): the commanded opening pays, 3 / 8 of the widest.
    let mut loosened = t;
    loosened.control.targets[7] = 0.015;
    loosened.control.targets[8] = 0.015;
    let r = progress(&s, &p, &loosened);
    assert!(!r.holds && reward::grasped(&p, &loosened, 0));
    close(r.score, (6.0 + (0.375 + still) / 2.0) / STACK_STAGES);
    // Released but still sliding: ungrasp pays 1.
    p.grasped = false;
    let r = progress(&s, &p, &t);
    assert!(!r.holds, "A moves at 2 cm/s");
    close(r.score, (6.0 + (1.0 + still) / 2.0) / STACK_STAGES);
    // Released and at rest: the success condition.
    p.cubes[0].linvel = Vec3::ZERO;
    let r = progress(&s, &p, &t);
    assert!(r.holds);
    close(r.score, 1.0);
    // Beside B rather than on it: back to reaching.
    p.cubes[0] = at(B + Vec3::new(0.06, 0.0, 0.0));
    p.tcp = p.cubes[0].position;
    close(progress(&s, &p, &t).score, 2.0 / STACK_STAGES);
}

#[test]
fn no_state_scores_above_the_maximum() {
    // Random states, success aside: pick stays below 4/5 (success is 1), stack below 7/8.
    let mut rng = proprio_core::EnvRng::seed_from_u64(7);
    let mut v = |scale: f32| scale * (2.0 * rng.random::<f32>() - 1.0);
    for task_kind in [TaskKind::PickCube, TaskKind::StackCube] {
        let s = settings(task_kind);
        let ceiling = match task_kind {
            TaskKind::PickCube => 4.0 / PICK_STAGES,
            _ => 7.0 / STACK_STAGES,
        };
        for k in 0..20_000 {
            let near = k % 2 == 0;
            let spread = if near { 0.02 } else { 0.3 };
            let mut p = placed(A + Vec3::new(v(spread), v(spread), v(spread)));
            for i in 0..2 {
                let base = if i == 0 { A } else { B };
                p.cubes[i].position = base + Vec3::new(v(spread), v(spread), v(spread).abs());
                p.cubes[i].linvel = Vec3::new(v(0.05), v(0.05), v(0.05));
                p.cubes[i].angvel = Vec3::new(v(1.0), v(1.0), v(1.0));
            }
            if near && task_kind == TaskKind::StackCube {
                p.cubes[0].position = B + Vec3::new(v(0.02), v(0.02), 2.0 * HALF + v(0.004));
            }
            for j in 0..9 {
                p.qd[j] = v(0.5);
            }
            p.q[7] = v(0.04).abs();
            p.q[8] = v(0.04).abs();
            p.grasped = k % 3 != 0;
            let goal = if near { p.cubes[0].position } else { A };
            let r = progress(&s, &p, &task(goal + Vec3::new(v(0.02), 0.0, 0.0)));
            assert!(r.score.is_finite() && r.score >= 0.0);
            if r.holds {
                assert_eq!(r.score, 1.0);
            } else {
                assert!(r.score <= ceiling + 1e-6, "{task_kind:?}: {}", r.score);
            }
        }
    }
}

#[test]
fn static_terms_follow_their_formulas() {
    let mut qd = [0.0; 9];
    qd[0] = 0.3;
    qd[1] = 0.4;
    qd[8] = 5.0; // the fingers do not count
    close(reward::arm_static(&qd), 1.0 - 2.5f32.tanh());
    let mut b = at(A);
    b.linvel = Vec3::new(0.0, 0.03, 0.0);
    b.angvel = Vec3::new(0.5, 0.0, 0.0);
    close(reward::cube_static(&b), 1.0 - 0.8f32.tanh());
    let mut q = [0.0; 9];
    q[7] = 0.01;
    q[8] = 0.03;
    close(reward::openness(&q), 0.5);
}

/// The scripted expert's episodes on the kernel: rewards stay in [−1, 0]
/// except +1 exactly on success, and the grasp stage is reached before success.
#[test]
fn scripted_episodes_pay_within_the_bounds() {
    for (id, grasp_floor) in [
        ("manipulation/pick-cube-v0", 2.0 / PICK_STAGES - 1.0),
        ("manipulation/stack-cube-v0", 4.0 / STACK_STAGES - 1.0),
    ] {
        let mut best = [-1.0f32; 16];
        let config = json!({"physics": "kernel"});
        episodes::first_episodes(id, &config, 16, 3, |i, r, last| {
            if last.is_some_and(|info| info.get("success") == Some(1.0)) {
                assert_eq!(r, 1.0, "{id}: success pays 1");
                assert!(best[i] >= grasp_floor, "{id}: env {i} never grasped");
            } else {
                assert!((-1.0..=0.0).contains(&r), "{id}: reward {r}");
                best[i] = best[i].max(r);
            }
        });
    }
}

/// `dense_reward: false` turns every task's staged reward into the binary
/// success one: the scripted expert's episodes pay 0 each step and 1 on
/// the success that ends them, where the dense default pays in [−1, 0].
#[test]
fn without_the_dense_reward_only_success_pays() {
    for id in [
        "manipulation/reach-v0",
        "manipulation/push-cube-v0",
        "manipulation/pick-cube-v0",
    ] {
        for dense in [false, true] {
            let config = json!({"physics": "kernel", "dense_reward": dense});
            let mut successes = 0;
            episodes::first_episodes(id, &config, 8, 5, |_, r, last| {
                if last.is_some_and(|info| info.get("success") == Some(1.0)) {
                    assert_eq!(r, 1.0, "{id} dense {dense}: success pays 1");
                    successes += 1;
                } else if dense {
                    assert!((-1.0..=0.0).contains(&r), "{id}: dense reward {r}");
                } else {
                    assert_eq!(r, 0.0, "{id}: binary reward before success");
                }
            });
            assert!(successes >= 6, "{id} dense {dense}: {successes} of 8");
        }
    }
}

fn instructed(instruction: Instruction) -> (Settings, TaskState) {
    let s = Settings::new(TaskKind::Instruct, &ManipConfig::default()).unwrap();
    let mut t = task(instruction.goal(&[A, B, C]));
    t.instruction = Some(instruction);
    (s, t)
}

#[test]
fn push_instructions_succeed_beyond_their_side_line_on_the_table() {
    for side in Side::ALL {
        let (s, t) = instructed(Instruction::Push { cube: 1, side });
        let d = side.direction();
        let mut p = placed(Vec3::new(0.0, 0.0, 0.3));
        let beyond = |k: f32| (B - d * B.dot(d)) + d * k;
        p.cubes[1] = at(beyond(SIDE_LINE - 0.002));
        assert!(!progress(&s, &p, &t).holds, "{side:?}: short of the line");
        p.cubes[1] = at(beyond(SIDE_LINE + 0.002));
        assert!(progress(&s, &p, &t).holds, "{side:?}: past the line");
        assert_eq!(reward::hold_steps(&s, &t), 1);
        p.cubes[1].position.z += 0.03;
        assert!(!progress(&s, &p, &t).holds, "{side:?}: lifted, not pushed");
        // Another cube past the line does not count.
        p.cubes[1] = at(B);
        p.cubes[0] = at(beyond(SIDE_LINE + 0.05).with_z(HALF));
        assert!(!progress(&s, &p, &t).holds, "{side:?}: the wrong cube");
    }
}

#[test]
fn pick_up_succeeds_when_the_named_cube_is_grasped_5cm_up() {
    let (s, t) = instructed(Instruction::PickUp { cube: 2 });
    let mut p = placed(C + Vec3::new(0.0, 0.0, 0.06));
    p.q[7] = 0.03; // the fingers squeeze: targets 0, opening 6 cm
    p.q[8] = 0.03;
    p.grasped = true;
    p.holding = 2;
    p.cubes[2] = at(C + Vec3::new(0.0, 0.0, LIFT - 0.002));
    assert!(!progress(&s, &p, &t).holds, "not high enough");
    p.cubes[2] = at(C + Vec3::new(0.0, 0.0, LIFT + 0.002));
    assert!(progress(&s, &p, &t).holds, "grasped and lifted");
    assert_eq!(reward::hold_steps(&s, &t), s.control_hz.div_ceil(4));
    p.holding = 0;
    assert!(!progress(&s, &p, &t).holds, "lifted but held by nothing");
}

#[test]
fn put_on_succeeds_on_the_named_cube_released_and_still() {
    let (s, t) = instructed(Instruction::PutOn { cube: 2, on: 0 });
    let mut p = placed(A + Vec3::new(0.0, 0.0, 0.15));
    p.cubes[2] = at(A + Vec3::new(0.01, 0.0, 2.0 * HALF));
    assert!(progress(&s, &p, &t).holds, "on the red cube, released");
    assert_eq!(reward::hold_steps(&s, &t), s.control_hz);
    p.cubes[2].linvel = Vec3::new(0.02, 0.0, 0.0);
    assert!(!progress(&s, &p, &t).holds, "still moving");
    p.cubes[2] = at(A + Vec3::new(STACK_OFFSET + 0.002, 0.0, 2.0 * HALF));
    assert!(!progress(&s, &p, &t).holds, "off centre");
    p.cubes[2] = at(B + Vec3::new(0.0, 0.0, 2.0 * HALF));
    assert!(!progress(&s, &p, &t).holds, "on the wrong cube");
    // Its dense stages are stack-cube's with the named cubes.
    p.cubes[2] = at(C);
    let r = progress(&s, &p, &t);
    close(
        r.score,
        2.0 * closeness((p.tcp - C).length()) / STACK_STAGES,
    );
}
