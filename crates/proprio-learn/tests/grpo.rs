//! The group learner's mathematics and group starts, each able to fail if the formula were wrong.

use burn::prelude::*;
use proprio::serde_json::{self, Value};
use proprio::{AutoresetMode, VecOptions};
use proprio_learn::estimators::{clipped_surrogate_per_unit, k3};
use proprio_learn::grpo::advantage::{all_equal, group_advantages, step_advantages, unit_weights};
use proprio_learn::grpo::rollout::{Groups, Rollout, start_groups};
use proprio_learn::grpo::{AdvantageMode, GrpoConfig, LossAggregation, prepare, registry_envs};
use proprio_learn::nets::actor::ControlPolicy;
use proprio_learn::nets::actor_critic::AgentShape;
use proprio_learn::{ActionHead, EnvSource};

fn close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol, "{a:?} vs {b:?}");
    }
}

fn values(t: Tensor<2>) -> Vec<f32> {
    t.into_data().try_into_vec::<f32>().unwrap()
}

#[test]
fn group_advantages_match_hand_computed_values_for_all_three_options() {
    let rewards = [1.0, 0.0, 0.0, 1.0];
    // mean 0.5, sample std √(4 · 0.25 / 3) = 0.57735
    let s = (1.0f64 / 3.0).sqrt() + 1e-4;
    let std = group_advantages(&rewards, AdvantageMode::Std).unwrap();
    close(&std, &[0.5 / s, -0.5 / s, -0.5 / s, 0.5 / s], 1e-9);
    let none = group_advantages(&rewards, AdvantageMode::None).unwrap();
    close(&none, &[0.5, -0.5, -0.5, 0.5], 1e-12);
    // Leave-one-out: 1 − (1/3), 0 − (2/3).
    let loo = group_advantages(&rewards, AdvantageMode::LeaveOneOut).unwrap();
    close(&loo, &[2.0 / 3.0, -2.0 / 3.0, -2.0 / 3.0, 2.0 / 3.0], 1e-12);
    // Unequal rewards: the options really differ.
    let r = [3.0, 1.0, 2.0];
    close(
        &group_advantages(&r, AdvantageMode::None).unwrap(),
        &[1.0, -1.0, 0.0],
        1e-12,
    );
    close(
        &group_advantages(&r, AdvantageMode::LeaveOneOut).unwrap(),
        &[1.5, -1.5, 0.0],
        1e-12,
    );
    close(
        &group_advantages(&r, AdvantageMode::Std).unwrap(),
        &[1.0 / 1.0001, -1.0 / 1.0001, 0.0],
        1e-9,
    );
}

#[test]
fn a_group_of_equal_rewards_has_no_advantage_and_one_rollout_is_refused() {
    for mode in [
        AdvantageMode::Std,
        AdvantageMode::None,
        AdvantageMode::LeaveOneOut,
    ] {
        let adv = group_advantages(&[0.7; 5], mode).unwrap();
        assert!(adv.iter().all(|a| a.abs() < 1e-12), "{mode:?}: {adv:?}");
        let err = group_advantages(&[1.0], mode).unwrap_err().to_string();
        assert!(err.contains("at least 2"), "{err}");
    }
    assert!(all_equal(&[0.7; 5]) && !all_equal(&[0.7, 0.7, 0.71]));
    let cfg = GrpoConfig {
        group_size: 1,
        ..GrpoConfig::default()
    };
    let err = cfg.validate().unwrap_err();
    assert!(err.contains("group_size must be at least 2"), "{err}");
    // PPO through the same learner needs no groups.
    assert!(GrpoConfig::ppo().validate().is_ok());
}

#[test]
fn per_step_advantages_are_normalised_step_rewards_summed_to_go() {
    // All step rewards of the group: [1, 0, 0], mean 1/3; with `none` no std division.
    let adv =
        step_advantages(&[vec![1.0, 0.0], vec![0.0]], AdvantageMode::None, 1.0, true).unwrap();
    close(&adv[0], &[1.0 / 3.0, -1.0 / 3.0], 1e-12);
    close(&adv[1], &[-1.0 / 3.0], 1e-12);
    let discounted =
        step_advantages(&[vec![1.0, 0.0], vec![0.0]], AdvantageMode::None, 0.5, true).unwrap();
    close(&discounted[0], &[2.0 / 3.0 - 1.0 / 6.0, -1.0 / 3.0], 1e-12);
    assert!(step_advantages(&[vec![1.0]], AdvantageMode::None, 1.0, true).is_err());
    // Per position: step 0 against step 0 (mean 0.5), step 1 reached by one rollout only (0).
    let adv = step_advantages(
        &[vec![1.0, 0.0], vec![0.0]],
        AdvantageMode::None,
        1.0,
        false,
    )
    .unwrap();
    close(&adv[0], &[0.5, 0.0], 1e-12);
    close(&adv[1], &[-0.5], 1e-12);
    // An easy first token and a hard second one are not mixed: [1, 0] vs [1, 1].
    let adv = step_advantages(
        &[vec![1.0, 0.0], vec![1.0, 1.0]],
        AdvantageMode::None,
        0.0,
        false,
    )
    .unwrap();
    close(&adv[0], &[0.0, -0.5], 1e-12);
    close(&adv[1], &[0.0, 0.5], 1e-12);
}

#[test]
fn loss_weights_follow_the_aggregation() {
    close(
        &unit_weights(&[2, 4], LossAggregation::Token, 1.0),
        &[1.0 / 6.0, 1.0 / 6.0],
        1e-12,
    );
    close(
        &unit_weights(&[2, 4], LossAggregation::Sequence, 1.0),
        &[0.25, 0.125],
        1e-12,
    );
    close(
        &unit_weights(&[2, 4], LossAggregation::Constant, 10.0),
        &[0.05, 0.05],
        1e-12,
    );
}

#[test]
fn k3_is_never_negative_and_zero_for_equal_policies() {
    let device = Device::flex();
    let mut rng = proprio::episode_rng(3, 0, 0);
    let a: Vec<f32> = (0..200)
        .map(|_| -5.0 * proprio_learn::standard_normal(&mut rng).abs())
        .collect();
    let b: Vec<f32> = (0..200)
        .map(|_| -5.0 * proprio_learn::standard_normal(&mut rng).abs())
        .collect();
    let t = |v: &[f32]| Tensor::<2>::from_data(TensorData::new(v.to_vec(), [20, 10]), &device);
    let kl = values(k3(t(&a), t(&b)));
    assert!(kl.iter().all(|&k| k >= 0.0), "{kl:?}");
    assert!(kl.iter().any(|&k| k > 0.01));
    assert!(values(k3(t(&a), t(&a))).iter().all(|&k| k == 0.0));
}

/// d loss / d log π at ratio ρ for advantage `a` under clips `(low, high)`.
fn surrogate_grad(ratio: f32, a: f32, low: f32, high: f32) -> f32 {
    let device = Device::flex().autodiff();
    let logp =
        Tensor::<2>::from_data(TensorData::new(vec![ratio.ln()], [1, 1]), &device).require_grad();
    let adv = Tensor::<2>::from_data(TensorData::new(vec![a], [1, 1]), &device);
    let loss = clipped_surrogate_per_unit(logp.clone().exp(), adv, low, high).sum();
    let grads = loss.backward();
    logp.grad(&grads)
        .map_or(0.0, |g| g.into_data().try_into_vec::<f32>().unwrap()[0])
}

#[test]
fn clip_higher_only_widens_the_upper_clip() {
    // A > 0 at ρ = 1.25: clipped under a symmetric 0.2, still pushed under DAPO's 0.28.
    assert_eq!(surrogate_grad(1.25, 1.0, 0.2, 0.2), 0.0);
    assert!((surrogate_grad(1.25, 1.0, 0.2, 0.28) + 1.25).abs() < 1e-5);
    // A < 0 at ρ = 0.75: clipped at 1 − ε_low whatever ε_high is.
    assert_eq!(surrogate_grad(0.75, -1.0, 0.2, 0.2), 0.0);
    assert_eq!(surrogate_grad(0.75, -1.0, 0.2, 0.28), 0.0);
    // ...and pushed once ε_low is wider: d(−Aρ)/d log π = ρ.
    assert!((surrogate_grad(0.75, -1.0, 0.3, 0.28) - 0.75).abs() < 1e-5);
    // A < 0 above 1 + ε_high is never clipped (the pessimistic bound keeps the gradient).
    assert!((surrogate_grad(1.5, -1.0, 0.2, 0.28) - 1.5).abs() < 1e-5);
}

fn single_step_groups(rewards: &[f64]) -> Groups {
    let rollouts = rewards
        .iter()
        .enumerate()
        .map(|(i, &r)| Rollout {
            first_row: i,
            steps: 1,
            rewards: vec![r],
            success: Some(r > 0.5),
            response_len: 1,
        })
        .collect();
    Groups {
        obs: (0..rewards.len()).map(|i| i as f32).collect(),
        stored: vec![0.0; rewards.len()],
        logp: vec![-0.7; rewards.len()],
        rollouts,
    }
}

#[test]
fn groups_with_equal_rewards_are_dropped_and_the_rest_kept() {
    let head = ActionHead::for_space(&proprio::Space::discrete(2)).unwrap();
    let actor = ControlPolicy::new(
        &proprio::Space::uniform_box(1, -1.0, 1.0),
        head,
        &AgentShape {
            hidden: vec![4],
            ..AgentShape::default()
        },
        &Device::flex(),
        &mut proprio::episode_rng(0, 0, 0),
    )
    .unwrap();
    let groups = single_step_groups(&[1.0, 1.0, 1.0, 0.0]);
    let cfg = GrpoConfig {
        group_size: 2,
        groups: 2,
        ..GrpoConfig::default()
    };
    let batch = prepare(&groups, &cfg, &actor, None, 1.0, 1).unwrap();
    assert_eq!((batch.kept_groups, batch.rows), (1, 2));
    assert_eq!(batch.obs, vec![2.0, 3.0], "the second group's rows");
    assert!(batch.advantages[0] > 0.0 && batch.advantages[1] < 0.0);
    close(
        &batch
            .weights
            .iter()
            .map(|&w| f64::from(w))
            .collect::<Vec<_>>(),
        &[0.5, 0.5],
        1e-7,
    );
    let keep = GrpoConfig {
        drop_equal_groups: false,
        ..cfg
    };
    let batch = prepare(&groups, &keep, &actor, None, 1.0, 1).unwrap();
    assert_eq!((batch.kept_groups, batch.rows), (2, 4));
    assert_eq!(&batch.advantages[..2], &[0.0, 0.0]);
}

/// DAPO's refill: the unequal groups of each new batch are appended until
/// the batch holds `groups` groups again, rows and all.
#[test]
fn refilled_batches_keep_their_size_and_their_rows() {
    let unequal = |g: &[Rollout]| {
        let outcomes: Vec<f64> = g.iter().map(Rollout::outcome).collect();
        !all_equal(&outcomes)
    };
    // Three groups of 2; only the middle one is unequal.
    let first = single_step_groups(&[1.0, 1.0, 0.0, 1.0, 0.0, 0.0]);
    let mut kept = first.select(2, 3, unequal);
    assert_eq!(kept.rollouts.len(), 2);
    assert_eq!(kept.obs, vec![2.0, 3.0], "the middle group's rows");
    // The refill: two more unequal groups in a batch of three; room for two.
    let mut more = single_step_groups(&[0.0, 1.0, 1.0, 1.0, 1.0, 0.0]);
    more.obs.iter_mut().for_each(|o| *o += 10.0);
    kept.append(more.select(2, 2, unequal));
    assert_eq!(kept.rollouts.len(), 3 * 2, "three groups, as wanted");
    assert_eq!(kept.obs, vec![2.0, 3.0, 10.0, 11.0, 14.0, 15.0]);
    let starts: Vec<usize> = kept.rollouts.iter().map(|r| r.first_row).collect();
    assert_eq!(starts, [0, 1, 2, 3, 4, 5], "rows re-based");
    assert_eq!(kept.rows(), 6);
    // A limit stops at the room left.
    assert_eq!(more.select(2, 1, unequal).rollouts.len(), 2);
    // The learner refills until its batch is full: at a low temperature both
    // rollouts of a cartpole group often balance alike, and it samples more.
    let cfg = GrpoConfig {
        group_size: 2,
        groups: 3,
        max_refills: 4,
        temperature: 0.05,
        total_steps: 4_000,
        hidden: vec![8],
        ..GrpoConfig::default()
    };
    let source = EnvSource::new("classic/cartpole-v1", Value::Null, Default::default());
    let mut learner =
        proprio_learn::grpo::Grpo::control(registry_envs(&source), cfg, 1, Device::flex(), Some(1))
            .unwrap();
    let rows = learner.fit(2_000).unwrap();
    let refills: Vec<u64> = rows
        .iter()
        .map(|r| r["refills"].as_u64().unwrap())
        .collect();
    assert!(
        refills.iter().any(|&r| r > 0),
        "no refill was needed: {refills:?}"
    );
    for row in &rows {
        let full = row["groups_kept"] == 3;
        assert!(full || row["refills"] == 4, "{row:?}");
    }
}

fn group_snapshots(id: &str, group_size: usize, groups: usize) -> Vec<Vec<(Vec<f32>, Value)>> {
    let source = EnvSource::new(id, Value::Null, proprio::Backend::Cpu);
    let options = VecOptions {
        autoreset: AutoresetMode::NextStep,
        threads: Some(2),
        backend: proprio::Backend::Cpu,
    };
    let mut venv = registry_envs(&source)(group_size * groups, options).unwrap();
    let mut starts = Vec::new();
    for round in 0..2 {
        start_groups(venv.as_mut(), group_size, (round == 0).then_some(5)).unwrap();
        for g in 0..groups {
            starts.push(
                (g * group_size..(g + 1) * group_size)
                    .map(|i| {
                        let mut state = serde_json::to_value(venv.snapshot(i).unwrap()).unwrap();
                        state.as_object_mut().unwrap().remove("episode_return");
                        (venv.batch().obs(i).to_vec(), state)
                    })
                    .collect(),
            );
        }
        venv.step(&vec![
            0.0;
            venv.num_envs() * venv.spec().action_space.flat_dim()
        ])
        .or_else(|_| {
            venv.step(&vec![
                1.0;
                venv.num_envs() * venv.spec().action_space.flat_dim()
            ])
        })
        .unwrap();
    }
    starts
}

#[test]
fn snapshot_started_groups_really_start_identical() {
    for id in [
        "language/arithmetic-v0",
        "language/jigsaw-v0",
        "classic/cartpole-v1",
    ] {
        let starts = group_snapshots(id, 4, 3);
        for group in &starts {
            for member in &group[1..] {
                assert_eq!(member, &group[0], "{id}: a group member starts elsewhere");
            }
        }
        // Distinct groups, and a new start every round.
        for (a, b) in [(0, 1), (1, 2), (0, 3), (2, 5)] {
            assert_ne!(
                starts[a][0].0, starts[b][0].0,
                "{id}: groups {a} and {b} start alike"
            );
        }
    }
}
