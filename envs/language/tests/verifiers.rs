//! Verifiers on hand-written right, wrong and malformed answers.

use proprio_core::serde_json::{Value, json};
use proprio_core::{Env, Registry, State};
use proprio_language::arithmetic::{EQUALS, PLUS, TIMES};
use proprio_language::guess::{CORRECT, HIGHER, INVALID, LOWER};
use proprio_language::vocab::digit;

fn registry() -> Registry {
    Registry::with(proprio_language::register)
}

fn make(id: &str, config: Value) -> Box<dyn Env> {
    registry().make(id, &config).unwrap()
}

/// An arithmetic env showing `a op b` (its state set through a snapshot).
fn arithmetic(config: Value, a: u64, b: u64) -> (Box<dyn Env>, Vec<f32>) {
    let mut env = make("language/arithmetic-v0", config);
    let (mut obs, _) = env.reset(Some(0), None).unwrap();
    let mut state: State = env.snapshot().unwrap();
    state.state = json!({"instance": {"a": a, "b": b}, "answer": [], "credit": 0.0});
    env.restore(&state, &mut obs).unwrap();
    (env, obs)
}

fn tokens(digits: &str) -> Vec<f32> {
    digits
        .bytes()
        .map(|c| digit(u64::from(c - b'0')) as f32)
        .collect()
}

/// Answers token by token; returns the summed reward, the last info's success and format error.
fn answer_tokens(env: &mut Box<dyn Env>, answer: &[f32]) -> (f64, f64, f64) {
    let mut total = 0.0;
    for (k, &t) in answer.iter().enumerate() {
        let step = env.step(&[t]).unwrap();
        total += step.reward;
        if step.terminated {
            assert_eq!(k + 1, answer.len(), "ended early");
            return (
                total,
                step.info.get("success").unwrap(),
                step.info.get("format_error").unwrap(),
            );
        }
    }
    panic!("the answer did not end the episode");
}

#[test]
fn arithmetic_prompt_reads_as_written() {
    let (_, obs) = arithmetic(Value::Null, 42, 7);
    let mut expected = tokens("42");
    expected.push(PLUS as f32);
    expected.extend(tokens("07"));
    expected.push(EQUALS as f32);
    expected.extend([0.0; 3]);
    assert_eq!(obs, expected);
    let (mut env, obs) = arithmetic(json!({"digits": 3, "operation": "mul"}), 123, 45);
    assert_eq!(obs[3], TIMES as f32);
    assert_eq!(obs.len(), 8 + 6);
    // The answer so far follows the prompt.
    let step = env.step(&tokens("0")).unwrap();
    assert_eq!(&step.obs[8..10], &[tokens("0")[0], 0.0]);
}

#[test]
fn arithmetic_rewards_right_wrong_and_malformed_answers() {
    // 42 + 44 = 086.
    let (mut env, _) = arithmetic(Value::Null, 42, 44);
    let (r, success, format) = answer_tokens(&mut env, &tokens("086"));
    assert!((r - 2.0).abs() < 1e-12 && success == 1.0 && format == 0.0);
    let (mut env, _) = arithmetic(Value::Null, 42, 44);
    let (r, success, _) = answer_tokens(&mut env, &tokens("087"));
    assert!((r - 2.0 / 3.0).abs() < 1e-12 && success == 0.0);
    let (mut env, _) = arithmetic(Value::Null, 42, 44);
    assert_eq!(answer_tokens(&mut env, &tokens("860")).0, 0.0);
    // Padding or an operator where a digit belongs: the format penalty, and the episode ends.
    for bad in [0.0, PLUS as f32] {
        let (mut env, _) = arithmetic(Value::Null, 42, 44);
        let mut a = tokens("0");
        a.push(bad);
        let (r, success, format) = answer_tokens(&mut env, &a);
        assert!((r - (1.0 / 3.0 - 1.0)).abs() < 1e-12);
        assert_eq!((success, format), (0.0, 1.0));
    }
    // 99 × 99 = 9801, four digits.
    let (mut env, _) = arithmetic(json!({"operation": "mul"}), 99, 99);
    let (r, success, _) = answer_tokens(&mut env, &tokens("9801"));
    assert!((r - 2.0).abs() < 1e-12 && success == 1.0);
}

/// UFO's "try again": a wrong answer is followed by another turn that sees
/// it, rewards decay per turn, and the episode's wrong and repeated answers are counted.
#[test]
fn try_again_gives_another_turn_that_sees_the_wrong_answers() {
    // 42 + 44 = 086; three answers at most, each later turn's rewards halved.
    let (mut env, obs) = arithmetic(json!({"max_turns": 3}), 42, 44);
    assert_eq!(
        obs.len(),
        6 + 2 * 3 + 3,
        "prompt, two earlier answers, the answer"
    );
    let mut total = 0.0;
    for (k, &t) in tokens("087").iter().enumerate() {
        let step = env.step(&[t]).unwrap();
        total += step.reward;
        assert!(
            !step.terminated,
            "a wrong answer ends nothing before the last turn"
        );
        if k == 2 {
            assert_eq!(
                &step.obs[6..9],
                &tokens("087")[..],
                "the wrong answer is shown"
            );
            assert_eq!(&step.obs[12..15], &[0.0; 3], "and the answer starts again");
            assert_eq!(step.info.get("wrong_answers"), Some(1.0));
        }
        assert_eq!(step.info.get("turn_end"), Some(f64::from(u8::from(k == 2))));
    }
    assert!((total - 2.0 / 3.0).abs() < 1e-12);
    let r = answer_and_go_on(&mut env, &tokens("087"));
    assert!((r - 0.5 * 2.0 / 3.0).abs() < 1e-12, "{r}");
    let step = env.step(&tokens("0")).unwrap();
    assert_eq!(
        &step.obs[6..12],
        &[tokens("087"), tokens("087")].concat()[..]
    );
    env.step(&tokens("8")).unwrap();
    let last = env.step(&tokens("6")).unwrap();
    assert!(last.terminated);
    assert_eq!(last.info.get("success"), Some(1.0));
    assert_eq!(
        (
            last.info.get("turns"),
            last.info.get("wrong_answers"),
            last.info.get("repeated_answers")
        ),
        (Some(3.0), Some(2.0), Some(1.0))
    );
    // Turn 3 pays a quarter: 0.25 × (1 + the exact bonus).
    assert!(
        (last.reward - 0.25 * (1.0 / 3.0 + 1.0)).abs() < 1e-12,
        "{}",
        last.reward
    );
    // The last turn's wrong answer ends the episode.
    let (mut env, _) = arithmetic(json!({"max_turns": 2}), 42, 44);
    answer_and_go_on(&mut env, &tokens("111"));
    let (_, success, _) = answer_tokens(&mut env, &tokens("111"));
    assert_eq!(success, 0.0);
    // Without try-again the first wrong answer ends the episode, the layout kept.
    let (mut env, _) = arithmetic(json!({"max_turns": 5, "try_again": false}), 42, 44);
    assert_eq!(env.spec().observation_space.flat_dim(), 6 + 4 * 3 + 3);
    let (_, success, _) = answer_tokens(&mut env, &tokens("111"));
    assert_eq!(success, 0.0);
    for bad in [
        json!({"max_turns": 0}),
        json!({"turn_decay": 1.5}),
        json!({"max_turns": 2, "grid": 1}),
    ] {
        let e = registry()
            .make("language/arithmetic-v0", &bad)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("max_turns") || e.contains("unknown field"),
            "{bad}: {e}"
        );
    }
}

/// Answers token by token, the episode going on; returns the summed reward.
fn answer_and_go_on(env: &mut Box<dyn Env>, answer: &[f32]) -> f64 {
    answer
        .iter()
        .map(|&t| {
            let step = env.step(&[t]).unwrap();
            assert!(!step.terminated, "the episode ended");
            step.reward
        })
        .sum()
}

#[test]
fn least_significant_first_answers_are_read_units_first() {
    let lsd = json!({"order": "least_significant_first"});
    // 47 + 85 = 132, asked for as 2, 3, 1.
    let (mut env, _) = arithmetic(lsd.clone(), 47, 85);
    let (r, success, _) = answer_tokens(&mut env, &tokens("231"));
    assert!((r - 2.0).abs() < 1e-12 && success == 1.0);
    // The same digits most significant first: only the middle one is in place.
    let (mut env, _) = arithmetic(lsd.clone(), 47, 85);
    let (r, success, _) = answer_tokens(&mut env, &tokens("132"));
    assert!((r - 1.0 / 3.0).abs() < 1e-12 && success == 0.0);
    // 99 × 99 = 9801: 1, 0, 8, 9.
    let (mut env, _) = arithmetic(
        json!({"order": "least_significant_first", "operation": "mul"}),
        99,
        99,
    );
    assert!((answer_tokens(&mut env, &tokens("1089")).0 - 2.0).abs() < 1e-12);
    let bad = json!({"order": "backwards"});
    let e = registry()
        .make("language/arithmetic-v0", &bad)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("order") || e.contains("backwards"), "{e}");
}

#[test]
fn tokens_outside_the_vocabulary_are_typed_errors_not_panics() {
    let (mut env, _) = arithmetic(Value::Null, 1, 2);
    for bad in [[14.0], [-1.0], [0.5], [f32::NAN]] {
        let err = env.step(&bad).unwrap_err();
        assert!(
            matches!(err, proprio_core::Error::InvalidAction { .. }),
            "{err}"
        );
    }
    assert!(env.step(&[1.0, 2.0]).is_err(), "two tokens in one step");
}

/// A jigsaw env and the slot of every shown piece.
fn jigsaw(config: Value, seed: u64) -> (Box<dyn Env>, Vec<f32>, Vec<usize>) {
    let mut env = make("language/jigsaw-v0", config);
    let (obs, _) = env.reset(Some(seed), None).unwrap();
    let state = env.snapshot().unwrap();
    let slots =
        proprio_core::serde_json::from_value(state.state["instance"]["slots"].clone()).unwrap();
    (env, obs, slots)
}

#[test]
fn jigsaw_scores_right_wrong_repeated_and_malformed_permutations() {
    let (_, _, slots) = jigsaw(Value::Null, 3);
    let right: Vec<f32> = slots.iter().map(|&s| (s + 1) as f32).collect();
    let run = |answer: &[f32]| {
        let (mut env, _, _) = jigsaw(Value::Null, 3);
        answer_tokens(&mut env, answer)
    };
    assert_eq!(run(&right), (2.0, 1.0, 0.0));
    // Two pieces swapped: half in place.
    let mut swapped = right.clone();
    swapped.swap(0, 1);
    assert_eq!(run(&swapped), (0.5, 0.0, 0.0));
    // One slot named twice: scored piece by piece, never exact.
    let mut repeated = right.clone();
    repeated[1] = repeated[0];
    assert_eq!(run(&repeated), (0.75, 0.0, 0.0));
    // Padding is no slot: the format penalty, and the answer ends there.
    assert_eq!(run(&[right[0], 0.0]), (0.25 - 1.0, 0.0, 1.0));
    // A token past the last slot is outside the vocabulary: a typed error.
    let (mut env, _, _) = jigsaw(Value::Null, 3);
    assert!(env.step(&[5.0]).is_err());
    assert!(env.step(&[1.0, 2.0]).is_err(), "one token per step");
}

#[test]
fn jigsaw_pieces_are_the_picture_cut_and_moved() {
    // Undoing the shuffle must give back the same picture for every seed and grid.
    for (config, seed) in [
        (json!({}), 0),
        (json!({"rows": 3, "cols": 4, "piece_px": 5}), 1),
    ] {
        let (_, shuffled, slots) = jigsaw(config.clone(), seed);
        let (rows, cols) = (
            config["rows"].as_u64().unwrap_or(2) as usize,
            config["cols"].as_u64().unwrap_or(2) as usize,
        );
        let px = config["piece_px"].as_u64().unwrap_or(8) as usize;
        let w = cols * px;
        let mut env = make("language/jigsaw-v0", config.clone());
        let (_, _) = env.reset(Some(seed), None).unwrap();
        let mut state = env.snapshot().unwrap();
        state.state["instance"]["slots"] = json!((0..rows * cols).collect::<Vec<_>>());
        let mut solved = vec![0.0; shuffled.len()];
        env.restore(&state, &mut solved).unwrap();
        assert_ne!(shuffled, solved, "seed {seed} left the puzzle solved");
        for (shown, &slot) in slots.iter().enumerate() {
            for dy in 0..px {
                let at = |piece: usize| ((piece / cols * px + dy) * w + piece % cols * px) * 3;
                assert_eq!(
                    shuffled[at(shown)..at(shown) + px * 3],
                    solved[at(slot)..at(slot) + px * 3]
                );
            }
        }
    }
}

#[test]
fn a_snapshot_with_a_broken_instance_is_refused() {
    let (mut env, mut obs, _) = jigsaw(Value::Null, 0);
    let mut state = env.snapshot().unwrap();
    state.state["instance"]["slots"] = json!([0, 0, 1, 2]);
    assert!(env.restore(&state, &mut obs).is_err());
    let (mut env, mut obs) = arithmetic(Value::Null, 1, 2);
    let mut state = env.snapshot().unwrap();
    state.state = json!({"instance": {"a": 100, "b": 2}, "answer": [], "credit": 0.0});
    assert!(env.restore(&state, &mut obs).is_err());
}

/// A guessing game with secret `secret`.
fn game(secret: u64) -> (Box<dyn Env>, Vec<f32>) {
    let mut env = make("language/guess-number-v0", Value::Null);
    let (mut obs, _) = env.reset(Some(0), None).unwrap();
    let mut state = env.snapshot().unwrap();
    state.state["secret"] = json!(secret);
    env.restore(&state, &mut obs).unwrap();
    (env, obs)
}

#[test]
fn guess_number_answers_higher_lower_correct_and_invalid() {
    let (mut env, _) = game(37);
    let step = env.step(&tokens("50")).unwrap();
    assert_eq!(
        (step.obs[2], step.reward, step.terminated),
        (LOWER as f32, -0.1, false)
    );
    let step = env.step(&tokens("20")).unwrap();
    assert_eq!(step.obs[5], HIGHER as f32);
    assert_eq!(
        &step.obs[..3],
        &[tokens("50"), vec![LOWER as f32]].concat()[..]
    );
    let step = env.step(&[digit(3) as f32, PLUS as f32]).unwrap();
    assert_eq!((step.obs[8], step.reward), (INVALID as f32, -0.6));
    assert_eq!(step.info.get("format_error"), Some(1.0));
    let step = env.step(&tokens("37")).unwrap();
    assert_eq!((step.obs[11], step.terminated), (CORRECT as f32, true));
    assert!((step.reward - 0.9).abs() < 1e-12);
    assert_eq!(
        (step.info.get("success"), step.info.get("turns")),
        (Some(1.0), Some(4.0))
    );
}

#[test]
fn binary_search_always_wins_and_a_stubborn_guesser_runs_out_of_turns() {
    for secret in 0..=99 {
        let (mut env, _) = game(secret);
        let (mut lo, mut hi) = (0u64, 99u64);
        for turn in 1..=7 {
            let guess = (lo + hi) / 2;
            let step = env.step(&tokens(&format!("{guess:02}"))).unwrap();
            match step.obs[turn * 3 - 1] as u32 {
                t if t == CORRECT => break,
                t if t == HIGHER => lo = guess + 1,
                t if t == LOWER => hi = guess - 1,
                other => panic!("feedback {other}"),
            }
            assert!(turn < 7, "binary search missed {secret}");
        }
    }
    let (mut env, _) = game(5);
    for turn in 1..=10 {
        let step = env.step(&tokens("99")).unwrap();
        assert_eq!(step.terminated, turn == 10);
        if turn == 10 {
            assert_eq!(step.info.get("success"), Some(0.0));
        }
    }
    assert!(env.step(&tokens("99")).is_err(), "the game is over");
}
