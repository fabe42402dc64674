//! `manipulation/instruct-v0`: the scripted expert follows every template,
//! on both physics and both splits; held-out combinations never reach
//! training episodes; the observation holds CLIP's ids of the instruction;
//! the captions an in-domain CLIP learns from follow the instruction.

#[path = "support/episodes.rs"]
mod episodes;

use proprio_core::serde_json::{Value, json};
use proprio_core::{ActMode, AutoresetMode, Registry, VecOptions};
use proprio_manipulation::CUBE_COLOURS;
use proprio_manipulation::instruct::{self, INSTRUCTION_TOKENS, Instruction};
use proprio_text::ClipTokenizer;

const ID: &str = "manipulation/instruct-v0";
const TEMPLATES: [&str; 3] = ["push", "pick", "put"];

/// Per template: (successes, episodes) of the scripted expert's first episodes of `n` envs.
fn per_template(config: &Value, n: usize, seed: u64) -> [(usize, usize); 3] {
    let mut counts = [(0, 0); 3];
    episodes::first_episodes(ID, config, n, seed, |i, _, last| {
        if let Some(info) = last {
            assert_eq!(info.get("blow_up"), Some(0.0), "env {i} blew up");
            let t = info.get("template").expect("instruct reports its template") as usize;
            // Only the episode's own template reports a success key, and it agrees with `success`.
            for (k, name) in TEMPLATES.iter().enumerate() {
                let own = info.get(&format!("success_{name}"));
                assert_eq!(
                    own,
                    (k == t).then(|| info.get("success").unwrap()),
                    "env {i}"
                );
            }
            counts[t].0 += usize::from(info.get("success") == Some(1.0));
            counts[t].1 += 1;
        }
    });
    counts
}

#[test]
fn the_scripted_expert_follows_every_template() {
    for (physics, split) in [("kernel", "all"), ("rapier", "all"), ("kernel", "held_out")] {
        let config = json!({ "physics": physics, "split": split });
        let counts = per_template(&config, 300, 7);
        for (name, (ok, all)) in TEMPLATES.iter().zip(counts) {
            assert!(all >= 20, "{physics}/{split}: only {all} {name} episodes");
            let rate = ok as f64 / all as f64;
            assert!(
                rate >= 0.95,
                "{physics}/{split}: scripted {name} succeeded in {ok} of {all}"
            );
        }
    }
}

/// Ids from OpenAI's own tokenizer (`open_clip`'s `SimpleTokenizer` with
/// `bpe_simple_vocab_16e6.txt.gz`, open_clip_torch 3.3.0), which also gives
/// `../shared/MISSION.md`'s reference ids for "a diagram".
const REFERENCE: [(&str, &[u32]); 4] = [
    (
        "push the red cube to the left",
        &[49406, 6831, 518, 736, 11353, 531, 518, 1823, 49407],
    ),
    (
        "pick up the yellow cube",
        &[49406, 3142, 705, 518, 4481, 11353, 49407],
    ),
    (
        "put the green cube on the blue cube",
        &[49406, 1983, 518, 1901, 11353, 525, 518, 1746, 11353, 49407],
    ),
    (
        "push the yellow cube to the back",
        &[49406, 6831, 518, 4481, 11353, 531, 518, 893, 49407],
    ),
];

#[test]
fn instructions_are_observed_as_clips_token_ids() {
    let vocabulary = instruct::vocabulary(4);
    for (text, ids) in REFERENCE {
        let instruction = Instruction::all(4)
            .into_iter()
            .find(|i| i.text() == text)
            .expect("a template writes this text");
        let row = vocabulary.tokens(instruction, 0);
        assert_eq!(
            &row[..ids.len()],
            ids.iter().map(|&i| i as f32).collect::<Vec<_>>()
        );
        assert!(row[ids.len()..].iter().all(|&t| t == 0.0), "padded with 0");
    }
    // What the env observes is such a row, and it reads back as one instruction.
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    let mut venv = registry
        .make_vec(ID, 32, &json!({ "cubes": 4 }), VecOptions::default())
        .unwrap();
    venv.reset(Some(5), None).unwrap();
    let d = venv.spec().observation_space.flat_dim();
    for obs in venv.batch().obs.chunks_exact(d) {
        let tokens = &obs[d - INSTRUCTION_TOKENS..];
        let instruction = vocabulary
            .read(tokens)
            .expect("the tokens of an instruction");
        let ids = ClipTokenizer::openai(77).encode(&instruction.text());
        assert_eq!(
            tokens[..ids.len()],
            ids.iter().map(|&i| i as f32).collect::<Vec<_>>()
        );
    }
}

/// The instructions of `n` envs' first episodes over `resets` seeds.
fn drawn(config: &Value, resets: u64) -> Vec<Instruction> {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    let mut venv = registry
        .make_vec(ID, 64, config, VecOptions::default())
        .unwrap();
    let d = venv.spec().observation_space.flat_dim();
    let cubes = config["cubes"].as_u64().unwrap_or(3) as usize;
    let mut out = Vec::new();
    for seed in 0..resets {
        venv.reset(Some(seed), None).unwrap();
        for obs in venv.batch().obs.chunks_exact(d) {
            out.extend(instruct::vocabulary(cubes).read(&obs[d - INSTRUCTION_TOKENS..]));
        }
    }
    out
}

#[test]
fn held_out_combinations_never_appear_in_training_episodes() {
    for cubes in [3, 4] {
        let all = Instruction::all(cubes);
        let held_out: Vec<_> = all.iter().filter(|i| i.held_out(cubes)).collect();
        // Every template keeps combinations on both sides of the split.
        for t in 0..3 {
            let of = |held: bool| {
                all.iter()
                    .filter(|i| i.template().0 == t && i.held_out(cubes) == held)
                    .count()
            };
            assert!(of(true) > 0 && of(false) > 0, "{cubes} cubes, template {t}");
        }
        let train = drawn(&json!({ "cubes": cubes }), 20);
        assert_eq!(train.len(), 64 * 20);
        assert!(
            train.iter().all(|i| !i.held_out(cubes)),
            "a held-out instruction in training"
        );
        for i in all.iter().filter(|i| !i.held_out(cubes)) {
            assert!(train.contains(i), "{} never drawn in training", i.text());
        }
        let test = drawn(&json!({ "cubes": cubes, "split": "held_out" }), 5);
        assert!(test.iter().all(|i| i.held_out(cubes)));
        for i in held_out {
            assert!(test.contains(i), "{} never drawn held out", i.text());
        }
        // Templates are drawn uniformly, not in proportion to their combinations.
        let picks = train.iter().filter(|i| i.template().0 == 1).count() as f64;
        assert!((picks / train.len() as f64 - 1.0 / 3.0).abs() < 0.05);
    }
}

#[test]
fn instruct_rejects_bad_configs_with_a_message() {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    for (id, config, says) in [
        (ID, json!({ "cubes": 2 }), "cubes must be 3 to 4"),
        (
            ID,
            json!({ "split": "test" }),
            "expected one of `train`, `held_out`, `all`",
        ),
        (
            "manipulation/pick-cube-v0",
            json!({ "split": "train" }),
            "instruct-v0 only",
        ),
    ] {
        let error = registry
            .make(id, &config)
            .err()
            .expect("rejected")
            .to_string();
        assert!(error.contains(says), "{id} {config}: {error}");
    }
}

#[test]
fn a_state_with_an_instruction_the_scene_cannot_hold_is_refused() {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    for physics in ["rapier", "kernel"] {
        let mut env = registry.make(ID, &json!({ "physics": physics })).unwrap();
        env.reset(Some(4), None).unwrap();
        let good = env.snapshot().unwrap();
        let mut obs = vec![0.0; env.spec().observation_space.flat_dim()];
        env.restore(&good, &mut obs).unwrap();
        // The yellow cube (index 3) is not in a 3-cube scene.
        let mut bad = good.clone();
        let yellow = Instruction::PickUp { cube: 3 };
        match physics {
            "rapier" => {
                bad.state["task"]["instruction"] =
                    proprio_core::serde_json::to_value(yellow).unwrap()
            }
            _ => bad.state["instruction"] = json!(yellow.encode()),
        }
        let error = env
            .restore(&bad, &mut obs)
            .expect_err("refused")
            .to_string();
        assert!(
            error.contains("instruction") || error.contains("3 cubes"),
            "{physics}: {error}"
        );
    }
}

#[test]
fn a_run_records_every_instruct_key() {
    let mut registry = Registry::new();
    proprio_manipulation::register(&mut registry);
    let config = registry.spec(ID, &json!({ "cubes": 4 })).unwrap().config;
    assert_eq!(
        (&config["cubes"], &config["split"], &config["dense_reward"]),
        (&json!(4), &json!("train"), &json!(false))
    );
}

/// The captions `fit-clip` learns instruct's frames from follow the
/// episode's own instruction, in its colours: the scripted expert's
/// approach, a push's pushing, then at its success the template's last
/// stage (the cube at the side, held up, or resting on the other cube),
/// read from the real observation (so a wrong index into it fails here).
#[test]
fn instruct_captions_follow_the_instruction_to_its_success() {
    let registry = Registry::with(proprio_manipulation::register);
    let caption = registry.caption(ID).unwrap();
    let options = VecOptions {
        autoreset: AutoresetMode::SameStep,
        threads: Some(2),
        ..VecOptions::default()
    };
    let n = 24;
    let mut venv = registry.make_vec(ID, n, &json!({}), options).unwrap();
    let mut expert = registry.scripted(ID, venv.spec()).unwrap();
    let mut actions = vec![0.0; n * venv.spec().action_space.flat_dim()];
    venv.reset(Some(3), None).unwrap();
    let first: Vec<String> = (0..n)
        .map(|i| caption(venv.batch().obs(i)).unwrap())
        .collect();
    let vocabulary = instruct::vocabulary(3);
    let mut ended = vec![false; n];
    let mut stages: Vec<Vec<String>> = vec![Vec::new(); n];
    let mut successes = [0; 3];
    while ended.contains(&false) {
        expert
            .act(&venv.batch().obs, &mut actions, ActMode::Deterministic)
            .unwrap();
        venv.step(&actions).unwrap();
        let b = venv.batch();
        for i in (0..n).filter(|&i| !ended[i] && !b.done(i)) {
            stages[i].push(caption(b.obs(i)).unwrap());
        }
        let ending: Vec<usize> = (0..n).filter(|&i| !ended[i] && b.done(i)).collect();
        for i in ending {
            ended[i] = true;
            let last = b.final_obs(i).unwrap();
            let tokens = &last[last.len() - INSTRUCTION_TOKENS..];
            let instruction = vocabulary.read(tokens).unwrap();
            let colour = CUBE_COLOURS[instruction.cube()].0;
            // At the start the gripper is away from the named cube.
            assert!(
                first[i].starts_with("the gripper is"),
                "env {i}: {}",
                first[i]
            );
            assert!(
                first[i].ends_with(&format!("the {colour} cube")),
                "{}",
                first[i]
            );
            if b.final_infos[i].get("success") != Some(1.0) {
                continue;
            }
            let expected = match instruction {
                Instruction::Push { side, .. } => {
                    // The push itself reads as a stage of its own, with the side's word.
                    let pushes = format!(
                        "the gripper pushes the {colour} cube to the {}",
                        side.word()
                    );
                    let steps = stages[i].iter().filter(|c| **c == pushes).count();
                    assert!(
                        steps >= 3,
                        "env {i}: {steps} steps read {pushes:?}: {:?}",
                        stages[i]
                    );
                    format!("the {colour} cube is at the {}", side.word())
                }
                Instruction::PickUp { .. } => format!("the gripper holds the {colour} cube up"),
                Instruction::PutOn { on, .. } => {
                    format!("the {colour} cube rests on the {} cube", CUBE_COLOURS[on].0)
                }
            };
            assert_eq!(caption(last).unwrap(), expected, "env {i}");
            successes[instruction.template().0] += 1;
        }
    }
    assert!(
        successes.iter().all(|&s| s >= 3),
        "successes per template: {successes:?}"
    );
    // Another layout (no instruction's tokens) has no caption.
    assert_eq!(caption(&vec![0.0; venv.batch().obs(0).len()]), None);
}
