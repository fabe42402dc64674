//! The transformer policy: what it reads, and that sampling and scoring agree.

use burn::prelude::*;
use proprio::Space;
use proprio_learn::nets::actor::Actor;
use proprio_learn::nets::sequence::{SequencePolicy, SequenceShape};

fn shape() -> SequenceShape {
    SequenceShape {
        d_model: 32,
        n_heads: 4,
        n_layers: 2,
        d_ff: 64,
        patch: 4,
    }
}

fn policy(obs: &Space, answer_len: usize) -> SequencePolicy {
    let action = Space::Tokens {
        vocab: 7,
        max_len: answer_len,
    };
    SequencePolicy::new(
        obs,
        &action,
        &shape(),
        &Device::flex(),
        &mut proprio::episode_rng(1, 0, 0),
    )
    .unwrap()
}

fn logp(p: &SequencePolicy, obs: &[f32], answers: &[f32], n: usize) -> Vec<f32> {
    p.score(obs, answers, n, 1.0)
        .logp
        .into_data()
        .try_into_vec::<f32>()
        .unwrap()
}

#[test]
fn sampled_log_probabilities_are_the_scored_ones() {
    let obs_space = Space::Dict {
        spaces: vec![
            (
                "picture".into(),
                Space::Image {
                    height: 8,
                    width: 8,
                    channels: 3,
                },
            ),
            (
                "prompt".into(),
                Space::Tokens {
                    vocab: 7,
                    max_len: 5,
                },
            ),
        ],
    };
    let p = policy(&obs_space, 3);
    let mut rng = proprio::episode_rng(2, 0, 0);
    let n = 6;
    let obs: Vec<f32> = (0..n * (192 + 5))
        .map(|i| {
            if i % 197 < 192 {
                (i * 37 % 256) as f32
            } else {
                (i % 7) as f32
            }
        })
        .collect();
    let sampled = p.sample(&obs, n, 1.3, false, &mut rng).unwrap();
    let scored = p
        .score(&obs, &sampled.stored, n, 1.3)
        .logp
        .into_data()
        .try_into_vec::<f32>()
        .unwrap();
    for (a, b) in sampled.logp.iter().zip(&scored) {
        assert!((a - b).abs() < 1e-5, "{:?} vs {scored:?}", sampled.logp);
    }
}

#[test]
fn an_answer_token_sees_the_prompt_and_earlier_tokens_only() {
    let p = policy(
        &Space::Tokens {
            vocab: 7,
            max_len: 4,
        },
        3,
    );
    let obs = [1.0, 2.0, 3.0, 0.0];
    let base = logp(&p, &obs, &[1.0, 2.0, 3.0], 1);
    // Changing the last answer token leaves the first two log-probabilities alone.
    let later = logp(&p, &obs, &[1.0, 2.0, 5.0], 1);
    assert_eq!(&base[..2], &later[..2]);
    assert_ne!(base[2], later[2]);
    // Changing the first answer token changes what follows it.
    let earlier = logp(&p, &obs, &[4.0, 2.0, 3.0], 1);
    assert_ne!(base[1], earlier[1]);
    // The prompt is read: another prompt, other probabilities.
    assert_ne!(
        base[0],
        logp(&p, &[1.0, 5.0, 3.0, 0.0], &[1.0, 2.0, 3.0], 1)[0]
    );
}

#[test]
fn rows_of_a_batch_do_not_mix_and_padding_is_not_read() {
    let p = policy(
        &Space::Tokens {
            vocab: 7,
            max_len: 5,
        },
        1,
    );
    // A short transcript next to a long one gives what it gives alone.
    let short = [3.0, 1.0, 0.0, 0.0, 0.0];
    let long = [2.0, 2.0, 4.0, 5.0, 6.0];
    let alone = logp(&p, &short, &[2.0], 1)[0];
    let batched = logp(&p, &[long, short].concat(), &[2.0, 2.0], 2);
    assert!((batched[1] - alone).abs() < 1e-6, "{batched:?} vs {alone}");
}

#[test]
fn an_image_is_read_patch_by_patch() {
    let p = policy(
        &Space::Image {
            height: 8,
            width: 8,
            channels: 3,
        },
        1,
    );
    let grey = vec![100.0; 192];
    let mut corner = grey.clone();
    corner[0] = 255.0; // one pixel of the first patch
    assert_ne!(logp(&p, &grey, &[1.0], 1), logp(&p, &corner, &[1.0], 1));
    let err = SequencePolicy::new(
        &Space::Image {
            height: 6,
            width: 8,
            channels: 3,
        },
        &Space::Tokens {
            vocab: 7,
            max_len: 1,
        },
        &shape(),
        &Device::flex(),
        &mut proprio::episode_rng(1, 0, 0),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("patch"), "{err}");
}
