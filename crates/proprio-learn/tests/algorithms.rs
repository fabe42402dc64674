//! Unit checks of the learners' mathematics, each able to fail if the formula were wrong.

use burn::optim::GradientsParams;
use burn::prelude::*;
use proprio::Backend;
use proprio::rng::episode_rng;
use proprio::serde_json;
use proprio::wrappers::RunningMeanStd;
use proprio_learn::estimators::{clipped_surrogate, gae};
use proprio_learn::nets::squashed::squash;
use proprio_learn::{
    ActionHead, Activation, EnvSource, Mlp, Normalization, NormalizerStats, TrainEnv, orthogonal,
};

fn cpu() -> Device {
    Device::flex()
}

fn values<const D: usize>(t: Tensor<D>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().unwrap()
}

fn close(a: &[f32], b: &[f32], tol: f32) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
    }
}

#[test]
fn gae_matches_a_hand_computed_rollout_with_a_truncation() {
    // One env, four steps, γ = 0.9, λ = 0.8. Step 1 was truncated: the learner
    // already added γ·V(final obs) = 0.9 · 10 to its reward (2 → 11), and obs[2]
    // starts a new episode (dones[2] = 1), so nothing flows back across it.
    let rewards = [1.0, 11.0, 3.0, 4.0];
    let values = [0.5, 1.0, 1.5, 2.0];
    let dones = [0.0, 0.0, 1.0, 0.0];
    let (adv, ret) = gae(&rewards, &values, &dones, &[3.0], &[0.0], 0.9, 0.8);
    // δ3 = 4 + 0.9·3 − 2 = 4.7;  δ2 = 3 + 0.9·2 − 1.5 = 3.3, A2 = 3.3 + 0.72·4.7 = 6.684
    // δ1 = 11 − 1 = 10 (episode boundary);  δ0 = 1 + 0.9·1 − 0.5 = 1.4, A0 = 1.4 + 0.72·10 = 8.6
    close(&adv, &[8.6, 10.0, 6.684, 4.7], 1e-5);
    close(&ret, &[9.1, 11.0, 8.184, 6.7], 1e-5);
}

#[test]
fn gae_keeps_envs_apart_and_stops_at_the_last_done() {
    // Two envs interleaved [T, N]; env 1's episode ended after the last step (next_done = 1).
    let rewards = [1.0, 1.0, 1.0, 1.0];
    let values = [0.0, 0.0, 0.0, 0.0];
    let (adv, _) = gae(
        &rewards,
        &values,
        &[0.0; 4],
        &[5.0, 5.0],
        &[0.0, 1.0],
        0.5,
        1.0,
    );
    // env 0: A1 = 1 + 0.5·5 = 3.5, A0 = 1 + 0.5·3.5 = 2.75; env 1: A1 = 1, A0 = 1 + 0.5 = 1.5
    close(&adv, &[2.75, 1.5, 3.5, 1.0], 1e-6);
}

#[test]
fn tanh_squashed_density_integrates_to_one_over_the_action_box() {
    // Pendulum-like box [−2, 2]: scale 2, bias 0. Integrate exp(log π(a)) over a.
    let device = cpu();
    let (mean, log_std) = (0.3f32, -0.4f32);
    let n = 20_000;
    let eps: Vec<f32> = (0..n)
        .map(|k| -8.0 + 16.0 * (k as f32 + 0.5) / n as f32)
        .collect();
    let sampled = squash(
        Tensor::<2>::full([n, 1], mean, &device),
        Tensor::<2>::full([n, 1], log_std, &device),
        Tensor::<2>::from_data(TensorData::new(eps.clone(), [n, 1]), &device),
        Tensor::<2>::full([1, 1], 2.0, &device),
        Tensor::<2>::zeros([1, 1], &device),
    );
    let actions = values(sampled.action);
    let log_prob = values(sampled.log_prob);
    let mut integral = 0.0f64;
    for k in 1..n {
        let da = f64::from(actions[k] - actions[k - 1]);
        integral += da * 0.5 * (f64::from(log_prob[k]).exp() + f64::from(log_prob[k - 1]).exp());
    }
    assert!(
        (integral - 1.0).abs() < 2e-3,
        "density integrates to {integral}"
    );
    // And one point against the closed form: log N(x) − log(2 (1 − tanh² x) + 1e-6).
    let x = mean + log_std.exp() * eps[n / 3];
    let expected = -0.5 * eps[n / 3].powi(2)
        - log_std
        - 0.918_938_5
        - (2.0 * (1.0 - x.tanh().powi(2)) + 1e-6).ln();
    assert!((log_prob[n / 3] - expected).abs() < 1e-4);
}

#[test]
fn clipped_surrogate_gradient_vanishes_only_where_clipped() {
    let device = cpu().autodiff();
    // Sample 0: A = +1, ratio 1.5 > 1.2 → clipped, no gradient.
    // Sample 1: A = +1, ratio 1.1 inside → d/d log ρ of −A·ρ/2 = −ρ/2 = −0.55.
    let log_ratio = Tensor::<1>::from_data(
        TensorData::new(vec![1.5f32.ln(), 1.1f32.ln()], [2]),
        &device,
    )
    .require_grad();
    let adv = Tensor::<1>::from_data(TensorData::new(vec![1.0f32, 1.0], [2]), &device);
    let loss = clipped_surrogate(log_ratio.clone().exp(), adv, 0.2);
    close(&values(loss.clone()), &[-(1.2 + 1.1) / 2.0], 1e-6);
    let grads = loss.backward();
    let g = values(log_ratio.grad(&grads).unwrap());
    close(&g, &[0.0, -0.55], 1e-6);

    // Negative advantages: ratio 0.5 < 0.8 is clipped (no gradient); ratio 1.5 is not (pessimistic bound).
    let log_ratio = Tensor::<1>::from_data(
        TensorData::new(vec![0.5f32.ln(), 1.5f32.ln()], [2]),
        &device,
    )
    .require_grad();
    let adv = Tensor::<1>::from_data(TensorData::new(vec![-1.0f32, -1.0], [2]), &device);
    let grads = clipped_surrogate(log_ratio.clone().exp(), adv, 0.2).backward();
    close(&values(log_ratio.grad(&grads).unwrap()), &[0.0, 0.75], 1e-6);
}

#[test]
fn polyak_update_mixes_every_parameter() {
    let device = cpu();
    let rng = &mut episode_rng(1, 0, 0);
    let online = Mlp::new(&[3, 4, 2], Activation::Tanh, 1.0, &device, rng);
    let target = Mlp::new(&[3, 4, 2], Activation::Tanh, 1.0, &device, rng);
    let x = Tensor::<2>::from_data(TensorData::new(vec![0.3f32, -1.0, 0.7], [1, 3]), &device);
    let mixed = online.polyak_into(target.clone(), 0.25);
    // A one-layer net is affine in its parameters: its output must mix exactly.
    let single_online = Mlp::new(&[3, 2], Activation::Relu, 1.0, &device, rng);
    let single_target = Mlp::new(&[3, 2], Activation::Relu, 1.0, &device, rng);
    let single_mixed = single_online.polyak_into(single_target.clone(), 0.25);
    let (o, t, m) = (
        values(single_online.forward(x.clone())),
        values(single_target.forward(x.clone())),
        values(single_mixed.forward(x.clone())),
    );
    let expected: Vec<f32> = o.iter().zip(&t).map(|(o, t)| 0.25 * o + 0.75 * t).collect();
    close(&m, &expected, 1e-5);
    assert_ne!(
        values(mixed.forward(x.clone())),
        values(target.forward(x.clone()))
    );
    let full = online.polyak_into(target, 1.0);
    close(
        &values(full.forward(x.clone())),
        &values(online.forward(x)),
        1e-6,
    );
}

#[test]
fn global_norm_clipping_scales_all_gradients_together() {
    let device = cpu().autodiff();
    let net = Mlp::new(
        &[2, 3, 1],
        Activation::Tanh,
        1.0,
        &device,
        &mut episode_rng(3, 0, 0),
    );
    let x = Tensor::<2>::from_data(TensorData::new(vec![5.0f32, -4.0], [1, 2]), &device);
    let loss = net.forward(x).square().sum().mul_scalar(100.0);
    let mut grads = GradientsParams::from_grads(loss.backward(), &net);
    let before = proprio_learn::clip_global_norm(&net, &mut grads, 0.5);
    assert!(
        before > 0.5,
        "the test needs a gradient above the bound, got {before}"
    );
    let after = proprio_learn::clip_global_norm(&net, &mut grads, 1e9);
    assert!((after - 0.5).abs() < 1e-3, "norm after clipping is {after}");
}

#[test]
fn categorical_head_samples_match_its_log_probabilities() {
    let head = ActionHead::Categorical {
        nvec: vec![3],
        start: vec![-1],
    };
    let logits = [0.0f32, 1.0, 2.0];
    let mut rng = episode_rng(0, 0, 0);
    let mut counts = [0usize; 3];
    let (mut stored, mut env_action) = ([0.0f32], [0.0f32]);
    for _ in 0..30_000 {
        let lp = head.sample(&logits, &[], &mut rng, false, &mut stored, &mut env_action);
        let k = stored[0] as usize;
        counts[k] += 1;
        assert_eq!(env_action[0], k as f32 - 1.0, "env action is index + start");
        let z: f32 = logits.iter().map(|l| l.exp()).sum();
        assert!((lp - (logits[k].exp() / z).ln()).abs() < 1e-5);
    }
    let z: f32 = logits.iter().map(|l| l.exp()).sum();
    for k in 0..3 {
        let p = counts[k] as f32 / 30_000.0;
        assert!((p - logits[k].exp() / z).abs() < 0.01, "category {k}: {p}");
    }
    head.sample(&logits, &[], &mut rng, true, &mut stored, &mut env_action);
    assert_eq!(stored[0], 2.0, "deterministic takes the mode");
}

#[test]
fn bounds_penalty_counts_only_what_strays_past_the_widened_box() {
    // Component 0 spans [−1, 1]; component 1 [0, 4] (centre 2, half-width 2);
    // component 2 is unbounded and never pays.
    let head = ActionHead::Gaussian {
        dim: 3,
        low: vec![-1.0, 0.0, f32::NEG_INFINITY],
        high: vec![1.0, 4.0, f32::INFINITY],
    };
    let means = Tensor::<2>::from_floats([[-1.5, 2.0, 1e6], [1.05, 6.6, -1e6]], &cpu());
    let excess = head.bound_excess(means, 0.1).unwrap();
    // Row 0: |−1.5| − 1.1 = 0.4 → 0.16. Row 1: 1.05 is inside the margin;
    // (6.6 − 2) / 2 − 1.1 = 1.2 → 1.44. Mean over the rows: 0.8.
    close(&values(excess), &[0.8], 1e-5);
    let categorical = ActionHead::Categorical {
        nvec: vec![2],
        start: vec![0],
    };
    assert!(
        categorical
            .bound_excess(Tensor::zeros([1, 2], &cpu()), 0.1)
            .is_none()
    );
}

#[test]
fn normaliser_statistics_round_trip_through_json() {
    let mut obs = RunningMeanStd::new(3);
    obs.update(&[1.0, 2.0, 3.0, -1.0, 0.5, 7.25], |_| false);
    let mut ret = RunningMeanStd::new(1);
    ret.update(&[0.1, 3.3, -2.0], |_| false);
    let stats = NormalizerStats {
        obs: Some(obs),
        ret: ret.clone(),
    };
    let text = serde_json::to_string(&stats).unwrap();
    let back: NormalizerStats = serde_json::from_str(&text).unwrap();
    assert_eq!(back, stats, "f64 statistics survive bit-exactly");
    let rewards_only = NormalizerStats { obs: None, ret };
    let text = serde_json::to_string(&rewards_only).unwrap();
    assert_eq!(
        serde_json::from_str::<NormalizerStats>(&text).unwrap(),
        rewards_only
    );
}

#[test]
fn rewards_only_normalisation_leaves_the_observations_raw() {
    let source = EnvSource::new("classic/pendulum-v1", serde_json::Value::Null, Backend::Cpu);
    let obs_after = |normalization| {
        let mut env = TrainEnv::new(&source, 4, Some(1), normalization, 0.99).unwrap();
        env.venv().reset(Some(3), None).unwrap();
        for _ in 0..20 {
            env.venv().step(&[0.5, -1.0, 2.0, 0.0]).unwrap();
        }
        let b = env.venv_ref().batch();
        (b.obs.clone(), b.reward.clone(), env.stats())
    };
    let (raw_obs, raw_reward, none) = obs_after(Normalization::None);
    let (obs, reward, stats) = obs_after(Normalization::Rewards);
    assert!(none.is_none());
    assert_eq!(obs, raw_obs, "observations pass through untouched");
    assert_ne!(reward, raw_reward, "rewards are scaled");
    assert!(stats.is_some_and(|s| s.obs.is_none()));
    let (both, _, stats) = obs_after(Normalization::Both);
    assert_ne!(both, raw_obs);
    assert!(stats.is_some_and(|s| s.obs.is_some()));
}

#[test]
fn orthogonal_initialisation_is_orthogonal_with_the_given_gain() {
    for (rows, cols) in [(4, 64), (64, 64), (64, 2)] {
        let w = orthogonal(rows, cols, 2.0, &mut episode_rng(9, 0, 0));
        // The shorter side's vectors are orthogonal with norm = gain.
        let (short, long) = (rows.min(cols), rows.max(cols));
        let at = |i: usize, k: usize| {
            if rows <= cols {
                w[i * cols + k]
            } else {
                w[k * cols + i]
            }
        };
        for i in 0..short {
            for j in 0..short {
                let dot: f32 = (0..long).map(|k| at(i, k) * at(j, k)).sum();
                let expected = if i == j { 4.0 } else { 0.0 };
                assert!(
                    (dot - expected).abs() < 1e-4,
                    "{rows}x{cols}: <{i},{j}> = {dot}"
                );
            }
        }
    }
    assert_eq!(
        orthogonal(3, 5, 1.0, &mut episode_rng(1, 0, 0)),
        orthogonal(3, 5, 1.0, &mut episode_rng(1, 0, 0))
    );
}

/// ArCHer's pieces on twenty questions, with a small transformer.
mod archer {
    use super::*;
    use burn::optim::AdamConfig;
    use proprio::Space;
    use proprio_learn::archer::{ArcherConfig, actor_step, critic_step, q_targets};
    use proprio_learn::base::polyak::polyak;
    use proprio_learn::nets::sequence::SequencePolicy;
    use proprio_learn::nets::turn_critic::TurnCritic;
    use proprio_learn::replay::Sample;

    /// Twenty questions' tokens (`envs/language/src/questions.rs`).
    const ASK_0: f32 = 1.0;
    const NAME_0: f32 = 11.0;
    const NAME_3: f32 = 14.0;
    const YES: f32 = 31.0;
    const CORRECT: f32 = 34.0;
    /// The transcript's length: 6 turns of (token, feedback).
    const D: usize = 12;

    fn spaces() -> (Space, Space) {
        let spec = proprio::registry()
            .spec("language/twenty-questions-v0", &serde_json::Value::Null)
            .unwrap();
        (spec.observation_space, spec.action_space)
    }

    fn config() -> ArcherConfig {
        ArcherConfig {
            d_model: 32,
            n_heads: 2,
            n_layers: 1,
            d_ff: 64,
            critic_lr: 3e-3,
            actor_lr: 3e-3,
            gamma: 0.9,
            tau: 0.2,
            ent_coef: 0.0,
            ..ArcherConfig::default()
        }
    }

    /// A transcript of the given (token, feedback) turns, padded.
    fn transcript(turns: &[f32]) -> Vec<f32> {
        let mut obs = turns.to_vec();
        obs.resize(D, 0.0);
        obs
    }

    #[test]
    fn the_q_target_bootstraps_until_the_episode_terminates() {
        let y = q_targets(&[0.0, 1.0, 0.5], &[0.0, 1.0, 0.0], &[0.5, 0.7, 2.0], 0.9);
        close(&y, &[0.45, 1.0, 0.5 + 1.8], 1e-6);
    }

    /// Ask question 0 (yes, reward 0), then name object 0 (right, reward 1,
    /// the end): the critic's fixed point is Q = V = 1 at the second turn and
    /// γ · 1 at the first, and TD steps on these two turns reach it.
    #[test]
    fn archer_critic_reaches_the_discounted_values_of_a_two_turn_episode() {
        let (obs_space, action_space) = spaces();
        let cfg = config();
        let device = cpu().autodiff();
        let rng = &mut episode_rng(3, 0, 0);
        let mut critic =
            TurnCritic::new(&obs_space, &action_space, &cfg.shape(), &device, rng).unwrap();
        let mut target = critic.valid();
        let mut optim = AdamConfig::new().init();
        let (s1, s2) = (transcript(&[]), transcript(&[ASK_0, YES]));
        let end = transcript(&[ASK_0, YES, NAME_0, CORRECT]);
        let batch = Sample {
            obs: [s1.clone(), s2.clone()].concat(),
            actions: vec![ASK_0, NAME_0],
            rewards: vec![0.0, 1.0],
            next_obs: [s2.clone(), end].concat(),
            terminated: vec![0.0, 1.0],
        };
        // The policy takes the same turns, so V(s) = Q(s, the turn taken).
        let taken = [ASK_0 as i64, NAME_0 as i64];
        for _ in 0..400 {
            let (next, _) =
                critic_step(critic, &target, &mut optim, &batch, &taken, &cfg, &device).unwrap();
            critic = next;
            target = polyak(&critic.valid(), target, cfg.tau);
        }
        let obs = [s1, s2].concat();
        let learned = critic.valid().values(&obs, &taken, 2);
        for q in learned.q {
            close(&values(q), &[0.9, 1.0], 0.05);
        }
        for v in learned.v {
            close(&values(v), &[0.9, 1.0], 0.05);
        }
    }

    /// At the first turn, naming object 3 pays 1 and every other token 0. A
    /// critic taught that, then actor steps: the actor's probability of
    /// naming object 3 rises (it would fall if the advantage's sign were wrong).
    #[test]
    fn archer_actor_moves_toward_the_answer_its_critic_values_higher() {
        let (obs_space, action_space) = spaces();
        let cfg = config();
        let device = cpu().autodiff();
        let rng = &mut episode_rng(4, 0, 0);
        let mut critic =
            TurnCritic::new(&obs_space, &action_space, &cfg.shape(), &device, rng).unwrap();
        let mut actor =
            SequencePolicy::new(&obs_space, &action_space, &cfg.shape(), &device, rng).unwrap();
        let mut target = critic.valid();
        let mut optim = AdamConfig::new().init();
        let tokens: Vec<f32> = (1..=30).map(|t| t as f32).collect();
        let n = tokens.len();
        let s1 = transcript(&[]);
        let batch = Sample {
            obs: s1.repeat(n),
            actions: tokens.clone(),
            rewards: tokens.iter().map(|&t| f32::from(t == NAME_3)).collect(),
            next_obs: s1.repeat(n),
            terminated: vec![1.0; n],
        };
        let answers: Vec<i64> = tokens.iter().map(|&t| t as i64).collect();
        for _ in 0..300 {
            let (next, _) =
                critic_step(critic, &target, &mut optim, &batch, &answers, &cfg, &device).unwrap();
            critic = next;
            target = polyak(&critic.valid(), target, cfg.tau);
        }
        let (q, v) = critic.valid().values(&batch.obs, &answers, n).min();
        let (q, v) = (values(q), values(v));
        assert!(q[13] > 0.8 && q[0] < 0.2, "Q learned the payoff: {q:?}");
        assert!(v[0] < 0.2, "V(s) is the mean payoff, about 1/30: {v:?}");
        let p_name_3 = |actor: &SequencePolicy| {
            let (logp, _, _) = actor.valid().score_answers(&s1, &[NAME_3 as i64], 1, 1.0);
            values(logp)[0].exp()
        };
        let before = p_name_3(&actor);
        let mut actor_optim = AdamConfig::new().init();
        let critic = critic.valid();
        let sampling = &mut episode_rng(5, 0, 0);
        for _ in 0..30 {
            let (next, stats) = actor_step(
                actor,
                &critic,
                &mut actor_optim,
                &s1.repeat(64),
                64,
                &cfg,
                sampling,
                &device,
            )
            .unwrap();
            assert!(stats.baseline_loss.is_finite());
            actor = next;
        }
        let after = p_name_3(&actor);
        assert!(
            after > 2.0 * before && after > 0.2,
            "π(name object 3) went from {before} to {after}"
        );
    }
}
