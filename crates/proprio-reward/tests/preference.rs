//! The Bradley–Terry reward model learns from an oracle's labels: after
//! fitting on labelled pairs of segments, it ranks held-out pairs as the
//! oracle does, above 90% of the time.

use proprio::rand::RngExt;
use proprio_reward::preference::{Pair, PreferenceConfig, PreferenceModel, oracle_label};

const DIM: usize = 4;
const LEN: usize = 5;

/// The hidden reward the oracle knows: nonlinear in two of four features.
fn true_reward(x: &[f32]) -> f64 {
    f64::from(-(x[0] - 0.3).powi(2) + 0.5 * (2.0 * x[1]).sin())
}

fn segment(rng: &mut proprio::EnvRng) -> (Vec<f32>, f64) {
    let values: Vec<f32> = (0..LEN * DIM)
        .map(|_| rng.random_range(-1.0f32..1.0))
        .collect();
    let ret = values.chunks(DIM).map(true_reward).sum();
    (values, ret)
}

fn pairs(n: usize, rng: &mut proprio::EnvRng) -> Vec<(Pair, f64, f64)> {
    (0..n)
        .map(|_| {
            let ((a, ra), (b, rb)) = (segment(rng), segment(rng));
            let pair = Pair {
                first: a,
                second: b,
                label: oracle_label(ra, rb),
            };
            (pair, ra, rb)
        })
        .collect()
}

#[test]
fn the_fitted_model_ranks_held_out_pairs_as_the_oracle_does() {
    let mut rng = proprio::episode_rng(11, 0, 0);
    let train: Vec<Pair> = pairs(2000, &mut rng).into_iter().map(|p| p.0).collect();
    let test = pairs(300, &mut rng);
    let config = PreferenceConfig {
        segment: LEN,
        learning_rate: 3e-3,
        epochs: 30,
        batch: 100,
        ..PreferenceConfig::default()
    };
    let mut model = PreferenceModel::new(DIM, config).unwrap();
    let ranked = |model: &PreferenceModel| {
        let correct = test
            .iter()
            .filter(|(pair, ra, rb)| {
                let sum = |f: &[f32]| model.rewards(f).unwrap().iter().sum::<f32>();
                (sum(&pair.first) > sum(&pair.second)) == (ra > rb)
            })
            .count();
        correct as f64 / test.len() as f64
    };
    let before = ranked(&model);
    let loss = model.fit(&train).unwrap();
    let after = ranked(&model);
    eprintln!("held-out pairs ranked right: {before:.3} before, {after:.3} after; loss {loss}");
    assert!(
        after > 0.9,
        "held-out pairs ranked right: {before:.3} before, {after:.3} after (loss {loss})"
    );
    assert!(loss < 0.4, "final Bradley–Terry loss {loss}");
    let err = model
        .fit(&[Pair {
            first: vec![0.0; 3],
            second: vec![0.0; 3],
            label: 1.0,
        }])
        .unwrap_err();
    assert!(err.to_string().contains("not 20"), "{err}");
}
