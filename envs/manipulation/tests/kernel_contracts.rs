//! The foundation's contracts hold for the kernel physics: determinism across
//! batch sizes and threads, bit-identical snapshots through JSON, clear
//! refusals of bad states, blow-up truncation, every controller.

use proprio_core::VecOptions;
use proprio_core::serde_json::{Value, json};
use proprio_manipulation::kernel::Sim;

const TASKS: [&str; 4] = [
    "manipulation/reach-v0",
    "manipulation/push-cube-v0",
    "manipulation/pick-cube-v0",
    "manipulation/stack-cube-v0",
];

mod support;
use support::registry;

fn kernel() -> Value {
    json!({"physics": "kernel"})
}

#[test]
fn trajectories_do_not_depend_on_batch_size_or_threads() {
    for id in TASKS {
        support::assert_batch_invariant(&kernel(), id, 110, &[(5, 2), (130, 2)], (70, 30));
    }
}

#[test]
fn a_snapshot_continues_bit_for_bit_through_json() {
    support::assert_snapshots_continue(&kernel(), &TASKS, 30);
}

/// The snapshot of a fresh pick-cube env, its kernel state and an observation buffer.
fn pick_state() -> (Box<dyn proprio_core::Env>, proprio_core::State, Sim) {
    let mut env = registry()
        .make("manipulation/pick-cube-v0", &kernel())
        .unwrap();
    env.reset(Some(1), None).unwrap();
    let snapshot = env.snapshot().unwrap();
    let sim: Sim = proprio_core::serde_json::from_value(snapshot.state.clone()).unwrap();
    (env, snapshot, sim)
}

#[test]
fn a_cube_flung_out_of_the_workspace_truncates_with_the_reason() {
    let (mut env, mut snapshot, mut sim) = pick_state();
    sim.cubes[0][9] = 200.0;
    snapshot.state = proprio_core::serde_json::to_value(sim).unwrap();
    let mut obs = vec![0.0; 49];
    env.restore(&snapshot, &mut obs).unwrap();
    let step = env.step(&[0.0; 7]).unwrap();
    assert!(step.truncated && !step.terminated);
    assert_eq!(step.info.get("blow_up"), Some(2.0), "left the workspace");
    assert!(step.obs.iter().all(|v| v.is_finite()));
}

#[test]
fn bad_states_are_refused_with_one_line_reasons() {
    let (mut env, snapshot, sim) = pick_state();
    let mut obs = vec![0.0; 49];
    let mut bad = sim;
    bad.cubes[0][3] = 2.0;
    let mut broken = snapshot.clone();
    broken.state = proprio_core::serde_json::to_value(bad).unwrap();
    let err = env
        .restore(&broken, &mut obs)
        .expect_err("refused")
        .to_string();
    assert!(
        err.contains("unit quaternion") && !err.contains('\n'),
        "{err}"
    );
    let mut short = snapshot.state.clone();
    short["contact_impulse"] = json!([[0.0, 0.0, 0.0]]);
    broken.state = short;
    let err = env
        .restore(&broken, &mut obs)
        .expect_err("refused")
        .to_string();
    assert!(err.contains("contact_impulse"), "{err}");
    let mut nan = snapshot.state.clone();
    nan["q"][2] = json!(null);
    broken.state = nan;
    assert!(
        env.restore(&broken, &mut obs).is_err(),
        "a missing joint angle is refused"
    );
}

#[test]
fn every_controller_drives_the_arm_and_the_gripper() {
    support::assert_every_controller_drives("kernel");
}

#[test]
fn the_yaw_controller_turns_the_hand_about_the_vertical_up_to_90_degrees() {
    support::assert_yaw_turns_the_hand("kernel");
}

#[test]
fn the_kernel_is_the_default_and_runs_recorded_without_the_key_stay_on_rapier() {
    let r = registry();
    let spec = r.spec("manipulation/pick-cube-v0", &Value::Null).unwrap();
    assert_eq!(spec.config["physics"], "kernel");
    let mut old = json!({"control": "pd_ee_delta_pos"});
    r.complete_legacy("manipulation/pick-cube-v0", &mut old);
    assert_eq!(
        old,
        json!({"control": "pd_ee_delta_pos", "physics": "rapier"})
    );
    let mut recorded = json!({"physics": "kernel"});
    r.complete_legacy("manipulation/pick-cube-v0", &mut recorded);
    assert_eq!(recorded["physics"], "kernel", "an explicit key is kept");
    let mut none = Value::Null;
    r.complete_legacy("manipulation/reach-v0", &mut none);
    assert_eq!(none, json!({"physics": "rapier"}));
}

#[test]
fn both_physics_start_episodes_alike_and_draw_the_same_parts() {
    let r = registry();
    for id in TASKS {
        let mut rapier = r
            .make_vec(id, 3, &Value::Null, VecOptions::default())
            .unwrap();
        let mut ours = r.make_vec(id, 3, &kernel(), VecOptions::default()).unwrap();
        rapier.reset(Some(8), None).unwrap();
        ours.reset(Some(8), None).unwrap();
        let (a, b) = (rapier.batch(), ours.batch());
        for (i, (x, y)) in a.obs.iter().zip(&b.obs).enumerate() {
            assert!(
                (x - y).abs() < 2e-3,
                "{id}: observation {i} (field {}) {x} vs {y}",
                i % a.obs_dim
            );
        }
        let (mut s1, mut s2) = (
            proprio_core::Scene::default(),
            proprio_core::Scene::default(),
        );
        rapier.scene(0, &mut s1).unwrap();
        ours.scene(0, &mut s2).unwrap();
        assert_eq!(
            s1.bodies.len(),
            s2.bodies.len(),
            "{id}: one visual per collider"
        );
        assert_eq!(s1.cameras.len(), s2.cameras.len());
    }
}
