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

/// Every weight drawn N(0, 0.3²): positions and relative biases included,
/// which start at 0, so a cache that put a key at the wrong place would show.
struct Scramble(proprio::EnvRng);

impl burn::module::ModuleMapper for Scramble {
    fn map_float<const D: usize>(
        &mut self,
        param: burn::module::Param<Tensor<D>>,
    ) -> burn::module::Param<Tensor<D>> {
        use proprio::rand::RngExt;
        let t = param.val();
        let shape = t.shape();
        let values: Vec<f32> = (0..shape.num_elements())
            .map(|_| 0.3 * (self.0.random::<f32>() * 2.0 - 1.0) * 1.7)
            .collect();
        burn::module::Param::from_tensor(Tensor::from_data(
            TensorData::new(values, shape),
            &t.device(),
        ))
    }
}

/// Episodes of real multi-turn envs with random answers, some envs skipped
/// on some steps (as finished ones are) and episodes ending and restarting:
/// at every answer token the cached logits are the full forward's.
#[test]
fn cached_logits_equal_a_full_forward_as_transcripts_grow() {
    use proprio::rand::RngExt;
    use proprio::{AutoresetMode, VecOptions, serde_json::json};
    use proprio_learn::nets::kv_cache::KvCache;
    let envs = [
        ("language/jigsaw-v0", json!({"max_turns": 3})),
        ("language/arithmetic-v0", json!({"max_turns": 3})),
        ("language/guess-number-v0", json!({})),
        ("language/twenty-questions-v0", json!({"try_again": true})),
    ];
    for (id, config) in envs {
        let n = 5;
        let options = VecOptions {
            autoreset: AutoresetMode::NextStep,
            threads: Some(1),
            backend: proprio::Backend::Cpu,
        };
        let mut venv = proprio::registry()
            .make_vec(id, n, &config, options)
            .unwrap();
        venv.reset(Some(3), None).unwrap();
        let spec = venv.spec().clone();
        let Space::Tokens { vocab, max_len } = spec.action_space else {
            panic!("{id} answers in tokens")
        };
        let p = SequencePolicy::new(
            &spec.observation_space,
            &spec.action_space,
            &shape(),
            &Device::flex(),
            &mut proprio::episode_rng(1, 0, 0),
        )
        .unwrap()
        .map(&mut Scramble(proprio::episode_rng(9, 0, 0)));
        let mut cache = KvCache::default();
        let mut rng = proprio::episode_rng(4, 0, 0);
        let dim = spec.observation_space.flat_dim();
        let mut actions = vec![0.0f32; n * max_len];
        let mut largest = 0.0f32;
        for step in 0..30 {
            // Env `step % n` sits this step out.
            let slots: Vec<usize> = (0..n).filter(|&i| i != step % n).collect();
            let obs: Vec<f32> = slots
                .iter()
                .flat_map(|&i| venv.batch().obs(i).to_vec())
                .collect();
            assert_eq!(obs.len(), slots.len() * dim);
            let k = slots.len();
            let mut prefix: Vec<i64> = Vec::new();
            for t in 0..max_len {
                let full = p.next_logits(&obs, k, &prefix, t);
                let cached = p
                    .next_logits_cached(&obs, &slots, &mut cache, &prefix, t)
                    .unwrap();
                let (full, cached) = (
                    full.into_data().try_into_vec::<f32>().unwrap(),
                    cached.into_data().try_into_vec::<f32>().unwrap(),
                );
                for (a, b) in full.iter().zip(&cached) {
                    largest = largest.max(a.abs());
                    assert!(
                        (a - b).abs() < 1e-5,
                        "{id}, step {step}, token {t}: {a} vs {b}"
                    );
                }
                // The next prefix: each row's answer so far and one more random token.
                prefix = (0..k)
                    .flat_map(|i| {
                        let mut row = prefix[i * t..(i + 1) * t].to_vec();
                        row.push(rng.random_range(1..vocab) as i64);
                        row
                    })
                    .collect();
            }
            for (r, &i) in slots.iter().enumerate() {
                for (a, &token) in actions[i * max_len..(i + 1) * max_len]
                    .iter_mut()
                    .zip(&prefix[r * max_len..(r + 1) * max_len])
                {
                    *a = token as f32;
                }
            }
            venv.step(&actions).unwrap();
        }
        assert!(
            largest > 0.1,
            "{id}: the logits are not all near 0 ({largest})"
        );
    }
}
