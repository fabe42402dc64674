//! Instruction following from the command line: the expert's demonstrations,
//! a clone of them, a DAgger round of the clone's episodes, and its
//! evaluation on the held-out split per template.

mod common;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use common::{assert_one_line_error, assert_success, proprio};
use scratch::Scratch;
use serde_json::Value;

const INSTRUCT: &str = "manipulation/instruct-v0";

#[test]
fn demos_clone_and_held_out_evaluation_per_template() {
    let dir = Scratch::new("cli-instructions");
    let path = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let (demos, run) = (path("demos.safetensors"), path("bc"));
    let collect = [
        "demos",
        "--env",
        INSTRUCT,
        "--per-instruction",
        "1",
        "--out",
        &demos,
    ];
    let out = proprio(&collect);
    assert_success(&out);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains("14 episodes") && said.contains("of 14 instructions"),
        "{said}"
    );
    assert_one_line_error(&proprio(&collect), "already exists");
    let set_demos = format!("demos={demos}");
    let mut train = vec![
        "train",
        "--env",
        INSTRUCT,
        "--algo",
        "bc",
        "--threads",
        "1",
        "--out",
        &run,
    ];
    train.extend([
        "--eval-config",
        r#"{"split":"held_out"}"#,
        "--set",
        &set_demos,
    ]);
    for set in [
        "total_steps=2000",
        "eval_episodes=6",
        "hidden=[16]",
        "action_bins=11",
        "action_bin_spacing=square",
        "standardize_state=true",
    ] {
        train.extend(["--set", set]);
    }
    assert_success(&proprio(&train));
    let metrics = std::fs::read_to_string(dir.join("bc/metrics.jsonl")).unwrap();
    let last: Value = serde_json::from_str(metrics.lines().last().unwrap()).unwrap();
    for key in [
        "eval_success",
        "eval_success_push",
        "eval_success_pick",
        "eval_success_put",
    ] {
        assert!(last[key].is_number(), "{key} missing from {last}");
    }
    let eval = |config: &str| {
        proprio(&[
            "eval",
            "--checkpoint",
            &run,
            "--episodes",
            "9",
            "--config",
            config,
        ])
    };
    let out = eval(r#"{"split":"held_out"}"#);
    assert_success(&out);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    for template in ["push", "pick", "put"] {
        assert!(said.contains(&format!("success_{template}: ")), "{said}");
    }
    assert_one_line_error(&eval(r#"{"cubes":4}"#), "changes");
    // A typed instruction, also on a run evaluated on held-out episodes.
    let said = String::from_utf8_lossy(&eval(r#"{"instruction":"lift the blue block"}"#).stdout)
        .into_owned();
    assert!(
        said.contains("success_pick: ") && !said.contains("success_push"),
        "{said}"
    );
    assert_one_line_error(&eval(r#"{"instruction":"dance"}"#), "names no cube colour");
    // DAgger: the clone acts, the expert labels, the expert's file comes first.
    let aggregated = path("dagger.safetensors");
    let dagger = |onto: &str, out: &str| {
        proprio(&[
            "demos",
            "--dagger",
            &run,
            "--per-instruction",
            "1",
            "--aggregate",
            onto,
            "--out",
            out,
        ])
    };
    let out = dagger(&demos, &aggregated);
    assert_success(&out);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        said.contains("28 episodes") && said.contains("the policy (β 0) succeeded in"),
        "{said}"
    );
    let reach = path("reach.safetensors");
    let reach_demos = ["demos", "--env", "manipulation/reach-v0", "--out", &reach];
    assert_success(&proprio(&reach_demos));
    assert_one_line_error(&dagger(&reach, &path("mixed.safetensors")), "cannot join");
    assert!(!dir.join("mixed.safetensors").exists());
}

#[test]
fn cloning_without_demonstrations_is_a_one_line_error() {
    let dir = Scratch::new("cli-bc-refused");
    let out = |name: &str| dir.join(name).to_string_lossy().into_owned();
    let run = out("run");
    let base = ["train", "--env", INSTRUCT, "--out", &run];
    let bc = [&base[..], &["--algo", "bc"]].concat();
    assert_one_line_error(&proprio(&bc), "demos=FILE");
    let grpo = [
        &base[..],
        &["--algo", "grpo", "--eval-config", r#"{"split":"sideways"}"#],
    ]
    .concat();
    assert_one_line_error(&proprio(&grpo), "unknown variant `sideways`");
    assert!(!dir.join("run").exists(), "no run directory is left behind");
}
