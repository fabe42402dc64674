//! The standard wrappers behave as Gymnasium's do.

use crate::vec_env;
use proprio::serde_json::json;
use proprio::wrappers::{
    ClipAction, NormalizeObservation, NormalizeReward, RecordEpisodeStatistics, RescaleAction,
    RunningMeanStd, SameStepAutoreset,
};
use proprio::{AutoresetMode, VecEnv, VecOptions};

#[test]
fn running_mean_std_matches_the_two_pass_formula() {
    let data: Vec<f32> = (0..300)
        .map(|k| ((k * 37) % 101) as f32 * 0.5 - 7.0)
        .collect();
    let mut rms = RunningMeanStd::new(3);
    for chunk in data.chunks(30) {
        rms.update(chunk, |_| false);
    }
    for k in 0..3 {
        let column: Vec<f64> = data
            .iter()
            .skip(k)
            .step_by(3)
            .map(|&v| f64::from(v))
            .collect();
        let mean = column.iter().sum::<f64>() / 100.0;
        let var = column.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 100.0;
        assert!((rms.mean[k] - mean).abs() < 1e-4, "mean {k}");
        assert!((rms.var[k] - var).abs() / var < 1e-4, "var {k}");
    }
}

#[test]
fn observations_are_normalised_with_the_running_statistics() {
    let mut raw = vec_env("classic/pendulum-v1", 4, AutoresetMode::SameStep, 2);
    let mut venv = NormalizeObservation::new(
        vec_env("classic/pendulum-v1", 4, AutoresetMode::SameStep, 2),
        Some(3.0),
    );
    raw.reset(Some(0), None).unwrap();
    venv.reset(Some(0), None).unwrap();
    let mut expected = RunningMeanStd::new(3);
    expected.update(&raw.batch().obs, |_| false);
    let mut finals = 0;
    for t in 0..450 {
        let actions = crate::actions_for(&venv, t);
        raw.step(&actions).unwrap();
        venv.step(&actions).unwrap();
        expected.update(&raw.batch().obs, |_| false);
        let normalise = |x: f32, k: usize| {
            (((f64::from(x) - expected.mean[k]) / (expected.var[k] + 1e-8).sqrt()) as f32)
                .clamp(-3.0, 3.0)
        };
        for (j, (&x, &z)) in raw.batch().obs.iter().zip(&venv.batch().obs).enumerate() {
            assert!((normalise(x, j % 3) - z).abs() < 1e-5, "step {t} value {j}");
        }
        for i in 0..4 {
            if let Some(last) = raw.batch().final_obs(i) {
                let got = venv.batch().final_obs(i).unwrap();
                for k in 0..3 {
                    assert!(
                        (normalise(last[k], k) - got[k]).abs() < 1e-5,
                        "final obs of env {i}"
                    );
                }
                finals += 1;
            }
        }
    }
    assert_eq!(finals, 8, "two truncations per env in 450 steps");
    // The shared formula, as `Policy` applies it to raw observations, is the wrapper's bit for bit.
    let mut raw_obs = raw.batch().obs.clone();
    venv.stats()
        .normalize_components(&mut raw_obs, 3, &[0, 1, 2], Some(3.0));
    assert_eq!(raw_obs, venv.batch().obs);
    assert!(venv.batch().obs.iter().all(|z| z.abs() <= 3.0));
    let frozen = venv.stats().clone();
    venv.set_update(false);
    venv.step(&crate::actions_for(&venv, 0)).unwrap();
    assert_eq!(venv.stats(), &frozen);
}

#[test]
fn reward_normalisation_divides_by_the_return_std() {
    // Pendulum never terminates, so the discounted return is r_t + gamma * G_{t-1}.
    let gamma = 0.9;
    let mut raw = vec_env("classic/pendulum-v1", 1, AutoresetMode::NextStep, 1);
    let mut scaled = NormalizeReward::new(
        vec_env("classic/pendulum-v1", 1, AutoresetMode::NextStep, 1),
        gamma,
        Some(1.5),
    );
    raw.reset(Some(3), None).unwrap();
    scaled.reset(Some(3), None).unwrap();
    let mut expected_rms = RunningMeanStd::new(1);
    let mut ret = 0.0f32;
    let mut clipped = 0;
    for t in 0..50 {
        let a = [((t % 5) as f32 - 2.0) * 0.7];
        raw.step(&a).unwrap();
        scaled.step(&a).unwrap();
        let r = raw.batch().reward[0];
        ret = ret * gamma + r;
        expected_rms.update(&[ret], |_| false);
        let expected =
            ((f64::from(r) / (expected_rms.var[0] + 1e-8).sqrt()) as f32).clamp(-1.5, 1.5);
        clipped += usize::from(expected.abs() == 1.5);
        assert!(
            (scaled.batch().reward[0] - expected).abs() < 1e-5,
            "step {t}"
        );
    }
    assert!(
        clipped > 0,
        "the clip bound was never reached, so clipping went untested"
    );
}

#[test]
fn episode_statistics_sum_rewards_and_count_steps() {
    for mode in [AutoresetMode::NextStep, AutoresetMode::SameStep] {
        let mut venv = RecordEpisodeStatistics::new(vec_env("classic/cartpole-v1", 3, mode, 1), 10);
        venv.reset(Some(0), None).unwrap();
        let mut running = [0.0f64; 3];
        let mut lengths = [0u64; 3];
        let mut skip = [false; 3];
        for _ in 0..200 {
            venv.step(&[1.0, 0.0, 1.0]).unwrap();
            let b = venv.batch();
            for i in 0..3 {
                if skip[i] {
                    skip[i] = false;
                    continue;
                }
                running[i] += f64::from(b.reward[i]);
                lengths[i] += 1;
                if b.done(i) {
                    assert_eq!(b.infos[i].get("episode.return"), Some(running[i]), "{mode}");
                    assert_eq!(b.infos[i].get("episode.length"), Some(lengths[i] as f64));
                    running[i] = 0.0;
                    lengths[i] = 0;
                    skip[i] = mode == AutoresetMode::NextStep;
                } else {
                    assert!(b.infos[i].get("episode.return").is_none());
                }
            }
        }
        assert!(venv.episodes() > 20, "{mode}: {} episodes", venv.episodes());
        assert_eq!(venv.recent().len(), 10);
    }
}

/// A reward model's stack keeps the statistics below a same-step autoreset
/// (they stay the task's): the ending step's info moves to `final_infos`, and
/// `episode_info` still finds it, where the learners read their curves.
#[test]
fn episode_statistics_under_a_same_step_autoreset_are_found_in_the_final_info() {
    let inner = vec_env("classic/cartpole-v1", 2, AutoresetMode::Disabled, 1);
    let mut venv = SameStepAutoreset::new(RecordEpisodeStatistics::new(inner, 10)).unwrap();
    venv.reset(Some(0), None).unwrap();
    let mut lengths = [0u64; 2];
    let mut ended = 0;
    for _ in 0..200 {
        venv.step(&[1.0, 0.0]).unwrap();
        let b = venv.batch();
        for (i, length) in lengths.iter_mut().enumerate() {
            *length += 1;
            if b.done(i) {
                assert!(
                    b.infos[i].get("episode.return").is_none(),
                    "infos hold the new start"
                );
                let info = b.episode_info(i).expect("the ending step's statistics");
                assert_eq!(info.get("episode.length"), Some(*length as f64));
                assert_eq!(
                    info.get("episode.return"),
                    Some(*length as f64),
                    "cart-pole pays 1 a step"
                );
                *length = 0;
                ended += 1;
            } else {
                assert!(b.episode_info(i).is_none());
            }
        }
    }
    assert!(ended > 10, "{ended} episodes");
}

#[test]
fn clip_and_rescale_map_actions_into_the_box() {
    let options = VecOptions {
        autoreset: AutoresetMode::NextStep,
        threads: Some(1),
        ..VecOptions::default()
    };
    let make = || proprio::make_vec("classic/pendulum-v1", 1, &json!({}), options).unwrap();
    let mut direct = make();
    let mut clipped = ClipAction::new(make()).unwrap();
    let mut rescaled = RescaleAction::new(make(), -1.0, 1.0).unwrap();
    assert_eq!(
        rescaled.spec().action_space,
        proprio::Space::uniform_box(1, -1.0, 1.0)
    );
    for v in [&mut direct as &mut dyn VecEnv, &mut clipped, &mut rescaled] {
        v.reset(Some(2), None).unwrap();
    }
    direct.step(&[1.0]).unwrap();
    clipped.step(&[1.0]).unwrap();
    rescaled.step(&[0.5]).unwrap();
    assert_eq!(direct.batch().obs, clipped.batch().obs);
    assert_eq!(
        direct.batch().obs,
        rescaled.batch().obs,
        "0.5 in [-1, 1] is torque 1 in [-2, 2]"
    );
    assert!(
        ClipAction::new(vec_env(
            "classic/cartpole-v1",
            1,
            AutoresetMode::NextStep,
            1
        ))
        .is_err()
    );
    let nan = clipped.step(&[f32::NAN]).unwrap_err();
    assert!(nan.to_string().contains("NaN"), "{nan}");
}

#[test]
fn episode_statistics_continue_a_restored_episode() {
    let mut venv = RecordEpisodeStatistics::new(
        vec_env("classic/pendulum-v1", 2, AutoresetMode::NextStep, 1),
        10,
    );
    venv.reset(Some(4), None).unwrap();
    let mut total = 0.0f64;
    for _ in 0..50 {
        venv.step(&[0.5, 0.5]).unwrap();
        total += f64::from(venv.batch().reward[0]);
    }
    let state = venv.snapshot(0).unwrap();
    assert_eq!(state.elapsed_steps, 50);
    assert!(
        (state.episode_return - total).abs() < 1e-3 * total.abs(),
        "{} vs {total}",
        state.episode_return
    );
    venv.restore(&state, &[1]).unwrap();
    for _ in 50..200 {
        venv.step(&[0.5, 0.5]).unwrap();
    }
    let b = venv.batch();
    assert_eq!(
        b.infos[1].get("episode.length"),
        Some(200.0),
        "length counts the steps before the snapshot"
    );
    let (original, copy) = (
        b.infos[0].get("episode.return").unwrap(),
        b.infos[1].get("episode.return").unwrap(),
    );
    // The wrapper sums f32 batch rewards, the snapshot the env's f64 rewards: equal to rounding.
    assert!(
        (original - copy).abs() < 1e-4 * original.abs(),
        "the restored copy reports the whole episode: {original} vs {copy}"
    );
}

#[test]
fn image_pixels_and_token_ids_are_not_normalised() {
    let jigsaw = vec_env("language/jigsaw-v0", 1, AutoresetMode::NextStep, 1);
    assert!(
        jigsaw
            .spec()
            .observation_space
            .normalized_components()
            .is_empty(),
        "a picture and answer tokens are read as they are"
    );
    // instruct-v0: 80 state values (the arm's 26, 17 per cube, the goal's 3), then 16 token ids.
    let make = || vec_env("manipulation/instruct-v0", 3, AutoresetMode::NextStep, 1);
    let (mut raw, mut venv) = (make(), NormalizeObservation::new(make(), Some(10.0)));
    raw.reset(Some(5), None).unwrap();
    venv.reset(Some(5), None).unwrap();
    let space = raw.spec().observation_space.clone();
    let dim = space.flat_dim();
    let normalised = space.normalized_components();
    assert_eq!(normalised, (0..80).collect::<Vec<_>>(), "the state only");
    assert_eq!(venv.stats().mean.len(), normalised.len());
    for (j, (x, z)) in raw.batch().obs.iter().zip(&venv.batch().obs).enumerate() {
        if j % dim >= 80 {
            assert_eq!(x, z, "token id {j} changed");
        }
    }
    let mut again = raw.batch().obs.clone();
    venv.stats()
        .normalize_components(&mut again, dim, &normalised, Some(10.0));
    assert_eq!(again, venv.batch().obs);
}

#[test]
fn a_restore_or_partial_reset_normalises_only_its_own_rows() {
    let make = || vec_env("classic/pendulum-v1", 4, AutoresetMode::SameStep, 1);
    let (mut raw, mut venv) = (make(), NormalizeObservation::new(make(), Some(10.0)));
    raw.reset(Some(3), None).unwrap();
    venv.reset(Some(3), None).unwrap();
    for t in 0..20 {
        let actions = crate::actions_for(&venv, t);
        raw.step(&actions).unwrap();
        venv.step(&actions).unwrap();
    }
    let state = venv.snapshot(2).unwrap();
    for t in 20..25 {
        let actions = crate::actions_for(&venv, t);
        raw.step(&actions).unwrap();
        venv.step(&actions).unwrap();
    }
    // A restore (as a resumed run makes, one env at a time) rewrites row 2
    // only and is not a new sample for the statistics.
    let (before, stats) = (venv.batch().obs.clone(), venv.stats().clone());
    for _ in 0..3 {
        venv.restore(&state, &[2]).unwrap();
    }
    raw.restore(&state, &[2]).unwrap();
    assert_eq!(venv.stats(), &stats, "a restore moved the statistics");
    let mut expected = raw.batch().obs.clone();
    stats.normalize_components(&mut expected, 3, &[0, 1, 2], Some(10.0));
    assert_eq!(venv.batch().obs[6..9], expected[6..9], "the restored row");
    for i in [0, 1, 3] {
        assert_eq!(
            venv.batch().obs[i * 3..i * 3 + 3],
            before[i * 3..i * 3 + 3],
            "row {i} was normalised again"
        );
    }
    // A partial reset normalises the reset row and leaves the others.
    let before = venv.batch().obs.clone();
    let mask = [false, true, false, false];
    venv.reset_envs(&mask, Default::default()).unwrap();
    for i in [0, 2, 3] {
        assert_eq!(venv.batch().obs[i * 3..i * 3 + 3], before[i * 3..i * 3 + 3]);
    }
    assert!(venv.batch().obs[3..6].iter().all(|z| z.abs() <= 10.0));
}
