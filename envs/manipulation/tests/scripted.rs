//! The scripted reference policies solve every task in ≥ 95% of 100 seeded
//! episodes, on both physics: the physics allows reaching, pushing, a grasp that does not slip
//! and a stack that stays for a second.

#[path = "support/episodes.rs"]
mod episodes;

use proprio_core::serde_json::{Value, json};

/// Success rate of the scripted policy over the first episode of 100 envs seeded from `seed`.
fn success_rate(id: &str, config: &Value, seed: u64) -> f64 {
    let mut successes = 0;
    episodes::first_episodes(id, config, 100, seed, |i, _, last| {
        if let Some(info) = last {
            assert_eq!(info.get("blow_up"), Some(0.0), "{id}: env {i} blew up");
            successes += usize::from(info.get("success") == Some(1.0));
        }
    });
    successes as f64 / 100.0
}

#[test]
fn scripted_policies_solve_every_task() {
    for id in [
        "manipulation/reach-v0",
        "manipulation/push-cube-v0",
        "manipulation/pick-cube-v0",
        "manipulation/stack-cube-v0",
    ] {
        for physics in ["rapier", "kernel"] {
            let rate = success_rate(id, &json!({ "physics": physics }), 2026);
            assert!(rate >= 0.95, "{id} on {physics}: scripted success {rate}");
        }
    }
}

#[test]
fn scripted_pick_and_stack_also_solve_with_the_yaw_controller() {
    for id in ["manipulation/pick-cube-v0", "manipulation/stack-cube-v0"] {
        let config = json!({ "physics": "kernel", "control": "pd_ee_delta_pos_yaw" });
        let rate = success_rate(id, &config, 2026);
        assert!(
            rate >= 0.95,
            "{id} with pd_ee_delta_pos_yaw: scripted success {rate}"
        );
    }
}
