//! The reward curriculum of the off-policy learners (`reward_curriculum`):
//! rebuilding the envs carries their episodes over untouched, a growth
//! changes what the learner is paid from its stage on, and a resumed run
//! grows where the uninterrupted one did.

use crate::{request, rows, scratch::Scratch, tiny_off_policy};
use proprio::serde_json::{Value, json};
use proprio_learn::{Algo, resume, train};
use std::path::Path;

/// SAC on hover with Learning to Fly's reward, whose `constant` the curriculum grows every 100 steps.
fn hover(dir: &Path, name: &str, factor: Option<f64>, total_steps: u64) -> std::path::PathBuf {
    let mut overrides = tiny_off_policy();
    overrides["total_steps"] = json!(total_steps);
    overrides["num_envs"] = json!(2);
    overrides["reward_curriculum"] = match factor {
        Some(factor) => json!({
            "every": 100,
            "grow": {"squared_reward.constant": {"factor": factor, "limit": 100.0}}
        }),
        None => Value::Null,
    };
    let mut request = request(Algo::Sac, "drones/hover-v0", overrides, dir.join(name));
    request.env.config = json!({"squared_reward": {"constant": 1.0, "exit": 0.3}});
    train(request).unwrap()
}

#[test]
fn a_growth_of_one_changes_nothing_and_a_real_growth_pays_from_its_stage_on() {
    let dir = Scratch::new("learn-curriculum");
    let plain = rows(&hover(&dir, "plain", None, 300));
    // Rebuilding the envs at steps 100 and 200 and restoring their episodes is invisible.
    assert_eq!(rows(&hover(&dir, "unit", Some(1.0), 300)), plain);
    // Learning starts at step 100, the first growth too: every row after it is paid differently.
    let grown = rows(&hover(&dir, "grown", Some(3.0), 300));
    assert_eq!(grown.len(), plain.len());
    for (g, p) in grown.iter().zip(&plain) {
        assert_ne!(g["q_loss"], p["q_loss"], "step {}", g["global_step"]);
    }
}

#[test]
fn a_run_with_a_curriculum_resumes_where_an_uninterrupted_run_would_be() {
    let dir = Scratch::new("learn-curriculum-resume");
    let whole = hover(&dir, "whole", Some(3.0), 300);
    // Stopped at 150, mid-way through the first grown stage.
    let part = hover(&dir, "part", Some(3.0), 150);
    resume(part.clone(), Some(300)).unwrap();
    // The learner's state: the drone's episodes in flight at a resume are
    // counted apart in `episode_return` and `episode_length` (with or without a curriculum).
    let learner = |run: &Path| {
        let mut row = rows(run).pop().unwrap();
        row.retain(|key, _| !key.starts_with("episode_"));
        row
    };
    assert_eq!(learner(&part), learner(&whole));
}

#[test]
fn a_curriculum_key_the_env_does_not_have_is_a_config_error() {
    let dir = Scratch::new("learn-curriculum-bad");
    let mut overrides = tiny_off_policy();
    overrides["reward_curriculum"] =
        json!({"every": 100, "grow": {"squared_reward.nothing": {"factor": 2.0, "limit": 4.0}}});
    let mut request = request(Algo::Td3, "drones/hover-v0", overrides, dir.join("bad"));
    request.env.config = json!({"squared_reward": {}});
    let error = train(request).unwrap_err().to_string();
    assert!(error.contains("squared_reward.nothing"), "{error}");
}
