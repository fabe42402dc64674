//! `manipulation/instruct-v0`'s out-of-distribution splits each change
//! only what they say (vision: the colours a camera sees; semantic: the
//! words; position: where the cubes start) on the training combinations,
//! and the scripted expert still follows every one; an instruction a person
//! types is observed verbatim and followed by what it parses to.

#[path = "support/episodes.rs"]
mod episodes;

use proprio_core::serde_json::{Value, json};
use proprio_core::{Registry, Scene, Shape, VecOptions};
use proprio_manipulation::instruct::place::{OUTSIDE, START_HALF};
use proprio_manipulation::instruct::{
    INSTRUCTION_TOKENS, Instruction, Typed, understood, vocabulary,
};
use proprio_manipulation::{CUBE_COLOURS, CUBE_HALF};

const ID: &str = "manipulation/instruct-v0";

/// What the first observations of 64 envs over `resets` seeds hold: each
/// env's instruction tokens, the instruction they ask for, and the cubes' (x, y).
struct Drawn {
    tokens: Vec<Vec<f32>>,
    instructions: Vec<Instruction>,
    cubes: Vec<Vec<[f32; 2]>>,
}

fn drawn(config: &Value, resets: u64) -> Drawn {
    let registry = Registry::with(proprio_manipulation::register);
    let mut venv = registry
        .make_vec(ID, 64, config, VecOptions::default())
        .unwrap();
    let d = venv.spec().observation_space.flat_dim();
    let mut out = Drawn {
        tokens: Vec::new(),
        instructions: Vec::new(),
        cubes: Vec::new(),
    };
    for seed in 0..resets {
        venv.reset(Some(seed), None).unwrap();
        for obs in venv.batch().obs.chunks_exact(d) {
            let tokens = obs[d - INSTRUCTION_TOKENS..].to_vec();
            out.instructions
                .push(understood(&tokens, 3).expect("an instruction"));
            out.tokens.push(tokens);
            out.cubes.push(
                (0..3)
                    .map(|i| [obs[26 + 13 * i], obs[27 + 13 * i]])
                    .collect(),
            );
        }
    }
    out
}

fn in_square(xy: [f32; 2]) -> bool {
    xy[0].abs().max(xy[1].abs()) <= START_HALF
}

#[test]
fn each_out_of_distribution_split_changes_only_what_it_says() {
    let train = drawn(&json!({}), 4);
    let table = vocabulary(3);
    // Every token row a training episode can observe: the templates' words of the training combinations.
    let training_rows: Vec<Vec<f32>> = Instruction::all(3)
        .into_iter()
        .filter(|i| !i.held_out(3))
        .map(|i| table.tokens(i, 0).to_vec())
        .collect();
    assert!(train.tokens.iter().all(|t| training_rows.contains(t)));
    assert!(train.cubes.iter().flatten().all(|&xy| in_square(xy)));

    // Vision: the very same episodes, state and words, as training's.
    let vision = drawn(&json!({ "split": "vision" }), 4);
    assert_eq!(
        (&vision.tokens, &vision.cubes),
        (&train.tokens, &train.cubes)
    );

    // Semantic: training combinations, training start square, words no training episode has.
    let semantic = drawn(&json!({ "split": "semantic" }), 4);
    assert!(semantic.instructions.iter().all(|i| !i.held_out(3)));
    assert!(semantic.cubes.iter().flatten().all(|&xy| in_square(xy)));
    for tokens in &semantic.tokens {
        assert!(
            !training_rows.contains(tokens),
            "a training wording in the semantic split"
        );
        assert!(
            Instruction::all(3)
                .iter()
                .all(|i| table.tokens(*i, 0)[..] != tokens[..]),
            "a template's wording in the semantic split"
        );
    }
    let wordings = |p: u8| {
        semantic
            .tokens
            .iter()
            .zip(&semantic.instructions)
            .filter(|(t, i)| table.tokens(**i, p)[..] == t[..])
            .count()
    };
    assert!(
        wordings(1) > 50 && wordings(2) > 50,
        "{} {}",
        wordings(1),
        wordings(2)
    );
    assert_eq!(wordings(1) + wordings(2), semantic.tokens.len());

    // Position: training combinations in training words, every cube outside the square, inside the bounds.
    let position = drawn(&json!({ "split": "position" }), 4);
    assert!(position.tokens.iter().all(|t| training_rows.contains(t)));
    let (low, high, side) = OUTSIDE;
    for (cubes, instruction) in position.cubes.iter().zip(&position.instructions) {
        for &[x, y] in cubes {
            assert!(
                !in_square([x, y]),
                "a cube at ({x}, {y}) in the training square"
            );
            assert!((low..=high).contains(&x) && y.abs() <= side, "({x}, {y})");
        }
        // A push still has its cube short of the side line to push it over.
        if let Instruction::Push { cube, side } = instruction {
            let [x, y] = cubes[*cube];
            let along = side.direction().dot(glam::Vec3::new(x, y, 0.0));
            assert!(
                along <= START_HALF + 1e-6,
                "{instruction:?} starts {along} m toward its side"
            );
        }
    }
}

/// The cubes' colours and the table's in a reset env's scene.
fn colours(config: &Value) -> (Vec<[f32; 4]>, [f32; 4], String) {
    let registry = Registry::with(proprio_manipulation::register);
    let mut env = registry.make(ID, config).unwrap();
    env.reset(Some(1), None).unwrap();
    let mut scene = Scene::default();
    env.scene(&mut scene).unwrap();
    let cube = |v: &&proprio_core::Visual| matches!(v.shape, Shape::Cuboid { half_extents } if half_extents == [CUBE_HALF; 3]);
    let table = scene
        .bodies
        .iter()
        .find(|v| matches!(v.shape, Shape::Cuboid { half_extents } if half_extents[0] > 0.5))
        .unwrap();
    let cubes = scene.bodies.iter().filter(cube).map(|v| v.colour).collect();
    (cubes, table.colour, scene.text.concat())
}

#[test]
fn the_vision_split_repaints_the_cubes_and_table_and_the_viewer_shows_the_words() {
    for physics in ["kernel", "rapier"] {
        let (cubes, table, text) = colours(&json!({ "physics": physics }));
        assert_eq!(
            cubes,
            CUBE_COLOURS[..3].iter().map(|c| c.1).collect::<Vec<_>>()
        );
        let (shaded, other_table, same_text) =
            colours(&json!({ "physics": physics, "split": "vision" }));
        assert_eq!(shaded.len(), 3);
        for (new, (name, old)) in shaded.iter().zip(CUBE_COLOURS) {
            let apart: f32 = new.iter().zip(old).map(|(a, b)| (a - b).abs()).sum();
            assert!(apart > 0.2, "{physics}: the {name} cube barely changed");
        }
        assert_ne!(table, other_table, "{physics}");
        assert_eq!(
            text, same_text,
            "{physics}: the vision split keeps the words"
        );
        let typed = json!({ "physics": physics, "instruction": "Grab the GREEN one" });
        assert_eq!(colours(&typed).2, "grab the green one", "{physics}");
    }
}

/// Per template: (successes, episodes) of the scripted expert's first episodes.
fn expert(config: &Value, n: usize) -> [(usize, usize); 3] {
    let mut counts = [(0, 0); 3];
    episodes::first_episodes(ID, config, n, 11, |_, _, last| {
        if let Some(info) = last {
            let t = info.get("template").unwrap() as usize;
            counts[t].0 += usize::from(info.get("success") == Some(1.0));
            counts[t].1 += 1;
        }
    });
    counts
}

#[test]
fn the_scripted_expert_follows_every_out_of_distribution_split() {
    for split in ["semantic", "position"] {
        let counts = expert(
            &json!({ "split": split, "control": "pd_ee_delta_pos_yaw" }),
            150,
        );
        eprintln!("{split}: (successes, episodes) per template {counts:?}");
        for (t, (ok, all)) in counts.into_iter().enumerate() {
            assert!(
                all >= 30 && ok as f64 >= 0.9 * all as f64,
                "{split}, template {t}: {ok} of {all}"
            );
        }
    }
}

#[test]
fn a_typed_instruction_is_observed_verbatim_and_followed() {
    let text = "please lift the blue block";
    let typed = Typed::new(text, 3).unwrap();
    let config = json!({ "instruction": text, "control": "pd_ee_delta_pos_yaw" });
    let seen = drawn(&config, 1);
    assert!(seen.tokens.iter().all(|t| t[..] == typed.tokens[..]));
    assert!(
        seen.instructions
            .iter()
            .all(|i| *i == Instruction::PickUp { cube: 1 })
    );
    let [_, (ok, all), _] = expert(&config, 30);
    assert!(all == 30 && ok >= 27, "{ok} of {all}");
    // The blue cube is a training pick; the last colour's pick is held out, and says so.
    let registry = Registry::with(proprio_manipulation::register);
    let mut env = registry
        .make(ID, &json!({ "instruction": "lift green" }))
        .unwrap();
    let (_, info) = env.reset(Some(0), None).unwrap();
    assert_eq!(
        (info.get("template"), info.get("held_out")),
        (Some(1.0), Some(1.0))
    );
    // The text takes the place of any split's choice of instruction and words
    // (a run evaluated on held-out or semantic episodes can be given one).
    for split in ["held_out", "all", "semantic"] {
        let seen = drawn(&json!({ "instruction": text, "split": split }), 1);
        assert!(
            seen.tokens.iter().all(|t| t[..] == typed.tokens[..]),
            "{split}"
        );
    }
    // The position split keeps its starts.
    let outside = drawn(&json!({ "instruction": text, "split": "position" }), 1);
    assert!(outside.cubes.iter().flatten().all(|&xy| !in_square(xy)));
}

#[test]
fn a_bad_instruction_or_split_is_one_clear_error() {
    let registry = Registry::with(proprio_manipulation::register);
    for (id, config, says) in [
        (
            ID,
            json!({ "instruction": "dance" }),
            "names no cube colour (red, blue, green)",
        ),
        (
            ID,
            json!({ "instruction": "lift the yellow cube" }),
            "the scene has 3 cubes",
        ),
        (
            "manipulation/reach-v0",
            json!({ "instruction": "lift red" }),
            "instruct-v0 only",
        ),
        (
            ID,
            json!({ "split": "colours" }),
            "`vision`, `semantic`, `position`",
        ),
    ] {
        let error = registry
            .make(id, &config)
            .err()
            .expect("refused")
            .to_string();
        assert!(error.contains(says), "{config}: {error}");
        assert_eq!(error.lines().count(), 1, "{error}");
    }
}

/// A semantic episode's state restores to the same observation (its words
/// travel with it); a stored wording the env does not have is refused.
#[test]
fn a_state_keeps_its_wording_and_refuses_one_the_env_lacks() {
    let registry = Registry::with(proprio_manipulation::register);
    for physics in ["rapier", "kernel"] {
        let config = json!({ "physics": physics, "split": "semantic" });
        let mut env = registry.make(ID, &config).unwrap();
        let (first, _) = env.reset(Some(2), None).unwrap();
        let good = env.snapshot().unwrap();
        let mut obs = vec![0.0; first.len()];
        env.reset(Some(9), None).unwrap();
        env.restore(&good, &mut obs).unwrap();
        assert_eq!(obs, first, "{physics}");
        // Phrasing 3 is a typed text's, which this env has none of.
        let mut bad = good.clone();
        match physics {
            "rapier" => bad.state["task"]["phrasing"] = json!(3),
            _ => bad.state["instruction"][3] = json!(3.0),
        }
        let error = env
            .restore(&bad, &mut obs)
            .expect_err("refused")
            .to_string();
        assert!(error.contains("phrasing 3"), "{physics}: {error}");
    }
}
