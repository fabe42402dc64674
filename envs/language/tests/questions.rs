//! Twenty questions: the answers the env gives, "try again", and the exact
//! solver's bound — which the solver meets for every hidden object.

use proprio_core::serde_json::{Value, json};
use proprio_core::{ActMode, Env, Registry};
use proprio_language::questions::{
    CATALOGUE, CORRECT, INVALID, NO, QUESTIONS, WRONG, YES, ask, name, worst_case_turns,
};
use std::collections::HashMap;

const ID: &str = "language/twenty-questions-v0";

fn registry() -> Registry {
    Registry::with(proprio_language::register)
}

fn object(called: &str) -> usize {
    CATALOGUE.iter().position(|(n, _)| *n == called).unwrap()
}

fn question(text: &str) -> usize {
    QUESTIONS.iter().position(|q| *q == text).unwrap()
}

/// A game of `config` with the hidden object `hidden`, and its first observation.
fn start(config: Value, hidden: usize) -> (Box<dyn Env>, Vec<f32>) {
    let mut env = registry().make(ID, &config).unwrap();
    let (mut obs, _) = env.reset(Some(0), None).unwrap();
    let mut state = env.snapshot().unwrap();
    state.state["hidden"] = json!(hidden);
    env.restore(&state, &mut obs).unwrap();
    (env, obs)
}

fn game(config: Value, hidden: usize) -> Box<dyn Env> {
    start(config, hidden).0
}

#[test]
fn every_object_answers_differently() {
    for (i, (a, x)) in CATALOGUE.iter().enumerate() {
        for (b, y) in &CATALOGUE[i + 1..] {
            assert_ne!(x, y, "{a} and {b} answer every question alike");
        }
    }
}

#[test]
fn questions_are_answered_and_a_wrong_name_ends_the_game() {
    let mut env = game(Value::Null, object("parrot"));
    let step = env.step(&[ask(question("can it fly?")) as f32]).unwrap();
    assert_eq!(
        (step.obs[1], step.reward, step.terminated),
        (YES as f32, -0.05, false)
    );
    assert_eq!(step.info.get("turn_end"), Some(1.0), "every step is a turn");
    let step = env
        .step(&[ask(question("does it live in water?")) as f32])
        .unwrap();
    assert_eq!(step.obs[3], NO as f32);
    let step = env.step(&[name(object("eagle")) as f32]).unwrap();
    assert_eq!((step.obs[5], step.terminated), (WRONG as f32, true));
    assert_eq!(step.info.get("success"), Some(0.0));
}

#[test]
fn try_again_keeps_the_game_going_and_counts_repeated_answers() {
    let mut env = game(json!({"try_again": true}), object("parrot"));
    let eagle = name(object("eagle")) as f32;
    let step = env.step(&[eagle]).unwrap();
    assert_eq!((step.obs[1], step.terminated), (WRONG as f32, false));
    assert_eq!(step.info.get("repeated_answers"), Some(0.0));
    let step = env.step(&[eagle]).unwrap();
    assert_eq!(step.info.get("wrong_answers"), Some(2.0));
    assert_eq!(step.info.get("repeated_answers"), Some(1.0));
    let step = env.step(&[0.0]).unwrap();
    assert_eq!((step.obs[5], step.reward), (INVALID as f32, -0.55));
    assert_eq!(step.info.get("format_error"), Some(1.0));
    let step = env.step(&[name(object("parrot")) as f32]).unwrap();
    assert_eq!((step.obs[7], step.terminated), (CORRECT as f32, true));
    assert!((step.reward - 0.95).abs() < 1e-12);
    assert_eq!(
        (step.info.get("success"), step.info.get("turns")),
        (Some(1.0), Some(4.0))
    );
    assert_eq!(
        step.info.get("repeated_answers"),
        Some(1.0),
        "counts the episode's"
    );
}

#[test]
fn the_game_ends_after_max_turns() {
    let mut env = game(json!({"max_turns": 2, "try_again": true}), 0);
    let wrong = name(1) as f32;
    assert!(!env.step(&[wrong]).unwrap().terminated);
    let step = env.step(&[wrong]).unwrap();
    assert!(step.terminated && !step.truncated);
    assert_eq!(step.info.get("success"), Some(0.0));
}

/// Sixteen objects need at least 4 yes/no answers and a name; this
/// catalogue's questions split unevenly and need one more in the worst case.
#[test]
fn the_solver_bound_of_the_catalogue() {
    let mut memo = HashMap::new();
    assert_eq!(worst_case_turns((1 << 16) - 1, &mut memo), 6);
    assert_eq!(worst_case_turns((1 << 20) - 1, &mut memo), 6);
    assert_eq!(worst_case_turns((1 << 4) - 1, &mut memo), 3);
    assert_eq!(worst_case_turns(1 << 3, &mut memo), 1);
}

/// The registry's scripted solver finds every object within the bound, and
/// always asks before it names (it never guesses between two candidates).
#[test]
fn the_scripted_solver_finds_every_object_within_the_bound() {
    let r = registry();
    for (config, objects) in [(Value::Null, 16), (json!({"objects": 20}), 20)] {
        let spec = r.spec(ID, &config).unwrap();
        let mut solver = r.scripted(ID, &spec).unwrap();
        let mut total = 0;
        for hidden in 0..objects {
            let (mut env, mut obs) = start(config.clone(), hidden);
            let mut action = [0.0];
            let mut turns = 0;
            loop {
                solver
                    .act(&obs, &mut action, ActMode::Deterministic)
                    .unwrap();
                let step = env.step(&action).unwrap();
                turns += 1;
                obs = step.obs.clone();
                if step.terminated || step.truncated {
                    assert_eq!(step.info.get("success"), Some(1.0), "object {hidden}");
                    break;
                }
            }
            assert!(turns <= 6, "object {hidden}: {turns} turns");
            total += turns;
        }
        // Some objects take fewer turns than the worst case (16: 5.25 on average, 20: 5.55).
        let mean = total as f64 / objects as f64;
        assert!(mean < 5.6, "{config}: {mean} turns on average");
    }
}
