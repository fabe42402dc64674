//! Behaviour cloning and what instruction following evaluates with: the
//! expert's demonstrations (per instruction, repeatable, a file that round-
//! trips), a clone that acts like the expert, GRPO starting from the clone,
//! and evaluation on another split of the env, per template.

#[path = "support/clones.rs"]
mod clones;
#[path = "../../../tests/support/scratch.rs"]
mod scratch;
use clones::{INSTRUCT, REACH, reach_demos, request, source};
use proprio::render::ObsMode;
use proprio::serde_json::{Map, json};
use proprio::{ActMode, Agent, AutoresetMode, VecOptions};
use proprio_learn::bc::{Bc, BcConfig, Demonstrations, collect, dagger};
use proprio_learn::nets::head::BinSpacing;
use proprio_learn::{Algo, ComputeDevice, EnvSource, Learner, Policy, train};
use scratch::Scratch;
use std::path::Path;

#[test]
fn demonstrations_keep_each_instruction_and_repeat_per_seed() {
    let demos = collect(&source(INSTRUCT), 2, 0.0, 5).unwrap();
    // 3 cubes: 12 pushes, 3 picks and 6 puts; the held-out split keeps 3, 1 and 3 of them.
    assert_eq!(demos.header.instructions, 14);
    assert_eq!(demos.header.episodes, 28);
    assert!(demos.header.expert_successes >= demos.header.episodes);
    let (d, a) = (demos.header.obs_dim, demos.header.action_dim);
    assert_eq!((demos.obs.len(), demos.obs.dim()), (demos.rows(), d));
    assert_eq!(demos.actions.len(), demos.rows() * a);
    assert!(demos.actions.iter().all(|x| (-1.0..=1.0).contains(x)));
    let mut held_out = source(INSTRUCT);
    held_out.config["split"] = json!("held_out");
    assert_eq!(
        collect(&held_out, 1, 0.0, 5).unwrap().header.instructions,
        7
    );
    assert_eq!(collect(&source(INSTRUCT), 2, 0.0, 5).unwrap(), demos);
    assert_ne!(collect(&source(INSTRUCT), 2, 0.0, 6).unwrap(), demos);
}

#[test]
fn a_demonstrations_file_round_trips_and_is_never_replaced() {
    let scratch = Scratch::new("demos-file");
    let demos = collect(&source(REACH), 3, 0.05, 1).unwrap();
    assert_eq!(demos.header.noise, 0.05);
    let path = scratch.join("d.safetensors");
    demos.write(&path).unwrap();
    assert_eq!(Demonstrations::read(&path).unwrap(), demos);
    // Each kept episode's rows are recorded, and they make up the file.
    let episodes: Vec<_> = demos.episodes().unwrap().collect();
    assert_eq!(episodes.len(), demos.header.episodes);
    assert_eq!(episodes.last().unwrap().end, demos.rows());
    // A file from before episodes were recorded still reads, as one run of rows.
    let old = Demonstrations {
        episode_rows: Vec::new(),
        ..demos.clone()
    };
    let old_path = scratch.join("old.safetensors");
    old.write(&old_path).unwrap();
    assert!(
        Demonstrations::read(&old_path)
            .unwrap()
            .episodes()
            .is_none()
    );
    let again = demos.write(&path).unwrap_err().to_string();
    assert!(again.contains("already exists"), "{again}");
    let other = scratch.join("not.safetensors");
    std::fs::write(&other, b"not a file of rows").unwrap();
    let error = Demonstrations::read(&other).unwrap_err().to_string();
    assert!(error.contains("not a demonstrations file"), "{error}");
    let error = collect(&source(REACH), 0, 0.0, 1).unwrap_err().to_string();
    assert!(error.contains("per_instruction"), "{error}");
}

#[test]
fn pixels_are_stored_as_bytes_and_read_back_exactly() {
    let scratch = Scratch::new("demos-pixels");
    let mut pixels = source(REACH);
    (pixels.obs.mode, pixels.obs.image_size) = (ObsMode::RgbState, 16);
    let demos = match collect(&pixels, 2, 0.0, 1) {
        Ok(demos) => demos,
        // Images need a wgpu adapter: without one this skips, like every test that renders.
        Err(e)
            if e.to_string().contains("no GPU adapter")
                && std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() =>
        {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let path = scratch.join("p.safetensors");
    demos.write(&path).unwrap();
    assert_eq!(Demonstrations::read(&path).unwrap(), demos);
    let bytes = 16 * 16 * 3 * demos.rows();
    assert_eq!(demos.obs.parts().1.len(), bytes, "pixels held as bytes");
    let floats = demos.obs.parts().0.len() + demos.actions.len();
    let size = std::fs::metadata(&path).unwrap().len() as usize;
    assert!(
        (bytes + 4 * floats..bytes + 4 * floats + 4096).contains(&size),
        "{size} bytes for {bytes} pixels and {floats} floats"
    );
}

/// An agent whose actions are another's rounded to the nearest of `bins`
/// tokens per component (what a perfect clone with those tokens would act).
struct Rounded(Box<dyn Agent>, BinSpacing);

impl Agent for Rounded {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], mode: ActMode) -> proprio::Result<()> {
        self.0.act(obs, actions, mode)?;
        for x in actions.iter_mut() {
            *x = self
                .1
                .value(self.1.nearest(*x, 21, -1.0, 1.0), 21, -1.0, 1.0);
        }
        Ok(())
    }
}

/// A clone can only be as good as its tokens let the expert be: instruct's
/// expert, its actions rounded to 21 even tokens (1 cm steps), stops short
/// of every grasp, while the square spacing (1 mm steps near zero) keeps it
/// succeeding — the recipe's tokens.
#[test]
fn the_instruct_expert_rounded_to_square_tokens_still_succeeds() {
    let registry = proprio::registry();
    let config = json!({"control": "pd_ee_delta_pos_yaw"});
    let per_template = |spacing: BinSpacing| {
        let options = VecOptions {
            autoreset: AutoresetMode::SameStep,
            ..VecOptions::default()
        };
        let mut venv = registry.make_vec(INSTRUCT, 90, &config, options).unwrap();
        let expert = registry.scripted(INSTRUCT, venv.spec()).unwrap();
        let mut rounded = Rounded(expert, spacing);
        let mut counts = [(0, 0); 3];
        proprio::first_episodes(venv.as_mut(), &mut rounded, 7, |_, _, last| {
            if let Some(info) = last {
                let t = info.get("template").unwrap() as usize;
                counts[t].0 += usize::from(info.get("success") == Some(1.0));
                counts[t].1 += 1;
            }
        })
        .unwrap();
        counts.map(|(ok, all)| ok as f64 / all as f64)
    };
    let [push, pick, put] = per_template(BinSpacing::Square);
    assert!(
        push > 0.95 && pick > 0.95 && put > 0.9,
        "{push} {pick} {put}"
    );
    let [_, pick, put] = per_template(BinSpacing::Even);
    assert!(
        pick < 0.1 && put < 0.1,
        "even tokens: pick {pick}, put {put}"
    );
}

/// An agent that acts `f(observation row)` on each row of `width` values.
struct ByRow(usize, usize, fn(&[f32], &mut [f32]));

impl Agent for ByRow {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], _: ActMode) -> proprio::Result<()> {
        for (o, a) in obs
            .chunks_exact(self.0)
            .zip(actions.chunks_exact_mut(self.1))
        {
            (self.2)(o, a);
        }
        Ok(())
    }
}

/// DAgger's hand-made pair: a learner that pushes the hand one way whatever
/// it sees, and an "expert" whose action is a function of the state that
/// the learner's never equals.
fn learner_and_expert(d: usize, a: usize) -> (ByRow, ByRow) {
    let learner = ByRow(d, a, |_, act| {
        for (k, x) in act.iter_mut().enumerate() {
            *x = if k % 2 == 0 { 0.5 } else { -0.3 };
        }
    });
    let expert = ByRow(d, a, |obs, act| {
        for (k, x) in act.iter_mut().enumerate() {
            *x = 0.9 * (7.0 * obs[k % obs.len()] + k as f32).sin();
        }
    });
    (learner, expert)
}

/// The first episode of env 0 from `seed`, acted by `agent`: its observation rows.
fn replay(source: &EnvSource, agent: &mut dyn Agent, seed: u64, steps: usize) -> Vec<f32> {
    let options = VecOptions {
        autoreset: AutoresetMode::Disabled,
        ..VecOptions::default()
    };
    let mut venv = proprio::registry()
        .make_vec(&source.id, 1, &source.config, options)
        .unwrap();
    venv.reset(Some(seed), None).unwrap();
    let mut action = vec![0.0; venv.spec().action_space.flat_dim()];
    let mut rows = Vec::new();
    for _ in 0..steps {
        rows.extend_from_slice(&venv.batch().obs);
        agent
            .act(&venv.batch().obs, &mut action, ActMode::Deterministic)
            .unwrap();
        venv.step(&action).unwrap();
    }
    rows
}

/// Reach's env, and the widths of its observations and actions.
fn reach_widths() -> (EnvSource, usize, usize) {
    let reach = source(REACH);
    let spec = proprio::registry().spec(REACH, &reach.config).unwrap();
    let (obs, actions) = (&spec.observation_space, &spec.action_space);
    (reach, obs.flat_dim(), actions.flat_dim())
}

/// DAgger records the states the learner visits (not the expert's) and at
/// each the expert's action (not the learner's); with β = 1 the expert acts.
#[test]
fn dagger_labels_the_learners_states_with_the_experts_actions() {
    let (reach, d, a) = reach_widths();
    let round = |beta: f32| {
        let (learner, expert) = learner_and_expert(d, a);
        dagger(
            &reach,
            Box::new(learner),
            Some(Box::new(expert)),
            "hand-made",
            beta,
            3,
            9,
        )
        .unwrap()
    };
    let demos = round(0.0);
    assert_eq!((demos.header.episodes, demos.header.rounds.len()), (3, 1));
    let r = &demos.header.rounds[0];
    assert_eq!(
        (r.policy.as_str(), r.beta, r.episodes, r.seed),
        ("hand-made", 0.0, 3, 9)
    );
    let (mut learner, mut expert) = learner_and_expert(d, a);
    let mut label = vec![0.0; a];
    let all = demos.obs.slice(0..demos.rows());
    for (obs, act) in all.chunks_exact(d).zip(demos.actions.chunks_exact(a)) {
        expert.act(obs, &mut label, ActMode::Deterministic).unwrap();
        assert_eq!(
            act,
            label.as_slice(),
            "a label that is not the expert's action there"
        );
    }
    // The first kept episode is env 0's (all end together, at the time limit).
    let first = demos.episodes().unwrap().next().unwrap();
    let rows = demos.obs.slice(first.clone());
    assert_eq!(
        rows,
        replay(&reach, &mut learner, 9, first.len()),
        "the learner's states"
    );
    assert_ne!(rows, replay(&reach, &mut expert, 9, first.len()));
    // β = 1: the expert acts every step, so the states are its own.
    let own = round(1.0);
    let first = own.episodes().unwrap().next().unwrap();
    let rows = own.obs.slice(first.clone());
    assert_eq!(
        rows,
        replay(&reach, &mut expert, 9, first.len()),
        "the expert's states"
    );
    let error = dagger(&reach, Box::new(learner), None, "x", 1.5, 3, 9)
        .unwrap_err()
        .to_string();
    assert!(error.contains("beta"), "{error}");
}

/// DAgger's dataset grows by rounds: a round joins the expert's file, in
/// order, and never a file of another env.
#[test]
fn a_dagger_round_joins_demonstrations_of_its_own_env_only() {
    let (reach, d, a) = reach_widths();
    let mut all = collect(&reach, 2, 0.0, 1).unwrap();
    let (expert_rows, expert_episodes) = (all.rows(), all.episode_rows.clone());
    let (learner, _) = learner_and_expert(d, a);
    let round = dagger(&reach, Box::new(learner), None, "run", 0.0, 2, 2).unwrap();
    all.aggregate(round.clone()).unwrap();
    assert_eq!(all.rows(), expert_rows + round.rows());
    assert_eq!(all.header.episodes, 4);
    assert_eq!(
        all.episode_rows,
        [expert_episodes, round.episode_rows.clone()].concat()
    );
    assert_eq!(&all.actions[expert_rows * a..], round.actions.as_slice());
    assert_eq!(all.header.rounds, round.header.rounds);
    let scratch = Scratch::new("dagger-file");
    let path = scratch.join("all.safetensors");
    all.write(&path).unwrap();
    assert_eq!(Demonstrations::read(&path).unwrap(), all);
    let mut other = collect(&source(INSTRUCT), 1, 0.0, 1).unwrap();
    let error = other.aggregate(round).unwrap_err().to_string();
    assert!(error.contains("cannot join"), "{error}");
}

fn cfg(demos: &Path) -> BcConfig {
    BcConfig {
        demos: demos.to_path_buf(),
        hidden: vec![64, 64],
        eval_episodes: 50,
        ..BcConfig::default()
    }
}

/// Reach's expert moves the hand straight to the goal; its clone must do
/// the same on goals it never saw, which an untrained policy does not.
#[test]
fn a_clone_of_the_reach_expert_reaches_new_goals() {
    let scratch = Scratch::new("bc-reach");
    let demos = reach_demos(&scratch.join(""), 30);
    let device = ComputeDevice::Cpu.device().unwrap();
    let mut bc = Bc::new(source(REACH), cfg(&demos), 1, device, Some(1)).unwrap();
    let before = bc.evaluate(50).unwrap().success_rate.unwrap();
    while bc.global_step() < 100_000 {
        bc.iterate().unwrap();
    }
    let mut row = Map::new();
    bc.metrics(&mut row);
    let after = bc.evaluate(50).unwrap().success_rate.unwrap();
    assert!(before <= 0.2 && after >= 0.7, "{before} → {after}, {row:?}");
}

/// Two clones of one seed are the same clone, instruction encoder included
/// (its table was once drawn from burn's unseeded generator).
#[test]
fn a_clone_of_one_seed_is_the_same_clone() {
    let scratch = Scratch::new("bc-seeded");
    let path = scratch.join("instruct.safetensors");
    collect(&source(INSTRUCT), 1, 0.0, 2)
        .unwrap()
        .write(&path)
        .unwrap();
    let device = ComputeDevice::Cpu.device().unwrap();
    let losses = |seed: u64| {
        let cfg = BcConfig {
            hidden: vec![32],
            action_bins: 5,
            ..cfg(&path)
        };
        let mut bc = Bc::new(source(INSTRUCT), cfg, seed, device.clone(), None).unwrap();
        (0..2)
            .map(|_| {
                bc.iterate().unwrap();
                let mut row = Map::new();
                bc.metrics(&mut row);
                row["loss"].as_f64().unwrap()
            })
            .collect::<Vec<f64>>()
    };
    let first = losses(4);
    assert_eq!(first, losses(4));
    assert_ne!(first, losses(5), "the check cannot fail");
}

#[test]
fn cloning_refuses_demonstrations_of_another_env() {
    let scratch = Scratch::new("bc-refused");
    let demos = reach_demos(&scratch.join(""), 2);
    let device = ComputeDevice::Cpu.device().unwrap();
    let push = source("manipulation/push-cube-v0");
    let error = Bc::new(push, cfg(&demos), 1, device.clone(), None)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("other observations"), "{error}");
    let error = Bc::new(source(REACH), BcConfig::default(), 1, device, None)
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("demos=FILE"), "{error}");
}

/// A clone whose instruction encoder is a frozen CLIP text tower trains,
/// saves, and acts again from its checkpoint (the tower reloaded from its directory).
#[test]
fn a_clone_reads_instructions_through_a_frozen_clip_text_tower() {
    let scratch = Scratch::new("bc-clip");
    let demos = scratch.join("instruct.safetensors");
    collect(&source(INSTRUCT), 1, 0.0, 2)
        .unwrap()
        .write(&demos)
        .unwrap();
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/clip-tiny");
    let overrides = json!({
        "demos": demos, "hidden": [32], "action_bins": 5, "total_steps": 3000,
        "eval_episodes": 2, "text": {"clip": clip},
    });
    let mut bc = request(Algo::Bc, overrides, scratch.join("bc"));
    bc.env = source(INSTRUCT);
    let run = train(bc).unwrap();
    let mut policy = Policy::load(&run).unwrap();
    let space = policy.env().observation_space().unwrap();
    let mut obs = vec![0.0; space.flat_dim()];
    let tokens = proprio_reward::clip::ClipTokenizer::openai(77).encode("pick up the red cube");
    let at = obs.len() - 16;
    for (o, t) in obs[at..].iter_mut().zip(&tokens) {
        *o = *t as f32;
    }
    let action = policy
        .action(&obs, proprio::ActMode::Deterministic)
        .unwrap();
    assert!(action.iter().all(|a| a.is_finite()), "{action:?}");
    let architecture = std::fs::read_to_string(run.join("checkpoint/policy.json")).unwrap();
    assert!(architecture.contains("clip-tiny"), "{architecture}");
}

/// `eval_config` evaluates on another split; per-template success lands in the row.
#[test]
fn evaluation_runs_on_the_held_out_split_per_template() {
    let mut instruct = source(INSTRUCT);
    instruct.eval_config = Some(json!({"split": "held_out"}));
    let held_out = instruct.for_evaluation().unwrap();
    assert_eq!(held_out.config["split"], json!("held_out"));
    assert_eq!(held_out.config["cubes"], instruct.config["cubes"]);
    let still = |source: &EnvSource| {
        proprio_learn::evaluate(
            source,
            30,
            9,
            None,
            &mut |_: &[f32], actions: &mut [f32], _: proprio::ActMode| {
                actions.fill(0.0);
                Ok(())
            },
        )
        .unwrap()
    };
    let evaluation = still(&instruct);
    assert_eq!(evaluation.infos["held_out"], 1.0, "every episode held out");
    assert_eq!(still(&source(INSTRUCT)).infos["held_out"], 0.0);
    let mut row = Map::new();
    evaluation.record(&mut row);
    for template in ["push", "pick", "put"] {
        assert_eq!(
            row[&format!("eval_success_{template}")],
            json!(0.0),
            "{row:?}"
        );
    }
    instruct.eval_config = Some(json!({"cubes": 4}));
    let error = instruct.for_evaluation().unwrap_err().to_string();
    assert!(error.contains("changes"), "{error}");
}

/// Multi-turn measures reach the metrics row: an agent that always names
/// the dog uses every turn on any other object, each name after the first a repeat.
#[test]
fn evaluation_reports_turns_and_repeated_answers() {
    let id = "language/twenty-questions-v0";
    let source = EnvSource::new(id, json!({"try_again": true}), Default::default());
    let dog = proprio_language::questions::name(0) as f32;
    let evaluation = proprio_learn::evaluate(
        &source,
        64,
        3,
        None,
        &mut |_: &[f32], actions: &mut [f32], _: proprio::ActMode| {
            actions.fill(dog);
            Ok(())
        },
    )
    .unwrap();
    let found = evaluation.success_rate.unwrap();
    assert!(found > 0.0 && found < 0.2, "{found}");
    let mut row = Map::new();
    evaluation.record(&mut row);
    let mean = |key: &str| row[key].as_f64().unwrap();
    assert!((mean("eval_turns") - (found + 6.0 * (1.0 - found))).abs() < 1e-9);
    assert!((mean("eval_wrong_answers") - 6.0 * (1.0 - found)).abs() < 1e-9);
    assert!(
        (mean("eval_repeated_answer_rate") - 5.0 / 6.0).abs() < 1e-9,
        "{row:?}"
    );
    assert_eq!(evaluation.solved_by_turn, vec![found; 6]);
    // Asking first, then naming the dog: solved at the second turn, never the first.
    let ask = proprio_language::questions::ask(0) as f32;
    let asking = proprio_learn::evaluate(
        &source,
        64,
        3,
        None,
        &mut |obs: &[f32], actions: &mut [f32], _: proprio::ActMode| {
            for (a, transcript) in actions.iter_mut().zip(obs.chunks_exact(12)) {
                *a = if transcript[0] == 0.0 { ask } else { dog };
            }
            Ok(())
        },
    )
    .unwrap();
    let by_turn = &asking.solved_by_turn;
    assert_eq!(by_turn.len(), 6);
    assert_eq!(by_turn[0], 0.0);
    assert!(
        (by_turn[1] - found).abs() < 1e-9 && by_turn[5] == by_turn[1],
        "{by_turn:?}"
    );
}
