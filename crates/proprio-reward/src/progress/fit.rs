//! Fitting a progress model: batches of windows drawn from the training
//! episodes (all of the window's length, see `samples::pad`), the mean
//! squared error of the progress of every frame that carries a target.

use super::samples::{EpisodeKind, ProgressData, Window, batch};
use super::score::{Presentation, Ranking, value_order_correlation};
use super::{ProgressConfig, ProgressNet};
use crate::{Result, RewardError};
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use proprio::rand::seq::SliceRandom;

/// What a fit achieved, measured on the held-out episodes.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    /// Loss of the last step.
    pub final_loss: f32,
    /// Demonstrations trained on.
    pub train_demos: usize,
    /// The held-out demonstrations (indices of the data's episodes).
    pub holdout: Vec<usize>,
    /// Mean value-order correlation over the held-out demonstrations, their
    /// frames shown shuffled (GVL's measure).
    pub holdout_voc: f64,
    /// The same, the frames shown in order (as a reward reads them).
    pub holdout_voc_in_order: f64,
    /// How the held-out demonstrations' and failures' final progress compare.
    pub ranking: Ranking,
}

/// Fits a fresh [`ProgressNet`] to `data` (its demonstrations split into
/// training and held-out ones, failures likewise); `progress(step, loss)` is
/// told every step.
pub fn fit(
    data: &ProgressData,
    cfg: &ProgressConfig,
    mut progress: impl FnMut(usize, f32),
) -> Result<(ProgressNet, FitReport)> {
    cfg.validate().map_err(RewardError::Input)?;
    data.validate()?;
    cfg.check_dims(data.dim, data.text_dim())
        .map_err(RewardError::Input)?;
    let split = |kind| {
        let mut all = data.of_kind(kind);
        all.shuffle(&mut proprio::episode_rng(cfg.seed, 1, kind as u64));
        let held = (all.len() as f64 * cfg.holdout).round() as usize;
        let held = held.min(all.len().saturating_sub(1));
        let train = all.split_off(held);
        (train, all)
    };
    let (demos, held_demos) = split(EpisodeKind::Demo);
    let (failures, held_failures) = split(EpisodeKind::Failure);
    if demos.is_empty() {
        return Err(RewardError::Input(
            "a progress model needs at least one demonstration".into(),
        ));
    }
    let device = Device::flex().autodiff();
    let mut rng = proprio::episode_rng(cfg.seed, 0, 0);
    let mut net = crate::seeded(&device, cfg.seed, || {
        ProgressNet::new(cfg, data.dim, data.text_dim(), &device)
    });
    let mut optim = AdamConfig::new().init();
    let mut final_loss = f32::NAN;
    for step in 0..cfg.steps {
        let windows: Vec<Window> = (0..cfg.batch)
            .map(|_| data.draw(&demos, &failures, cfg, &mut rng))
            .collect();
        let (frames, texts, targets, weights) = batch(data, &windows, &device);
        let predicted = net.forward(frames, texts);
        let scored = weights.clone().sum().clamp_min(1.0);
        let loss = ((predicted - targets).square() * weights).sum() / scored;
        final_loss = loss.clone().into_scalar::<f32>();
        if !final_loss.is_finite() {
            return Err(RewardError::Backend(format!(
                "the progress fit diverged at step {step}"
            )));
        }
        progress(step, final_loss);
        let grads = GradientsParams::from_grads(loss.backward(), &net);
        net = optim.step(cfg.learning_rate, net, grads);
    }
    let net = net.valid();
    let shuffled = Presentation::Shuffled(cfg.seed);
    let report = FitReport {
        holdout: held_demos.clone(),
        final_loss,
        train_demos: demos.len(),
        holdout_voc: value_order_correlation(&net, data, &held_demos, cfg.window, shuffled)?,
        holdout_voc_in_order: value_order_correlation(
            &net,
            data,
            &held_demos,
            cfg.window,
            Presentation::InOrder,
        )?,
        ranking: Ranking::of(&net, data, &held_demos, &held_failures, cfg.window)?,
    };
    Ok((net.to_device(&Device::flex()), report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::{Episode, running_progress};
    use proprio::rand::RngExt;

    /// Three instructions, each a pair of directions: a demonstration's
    /// frames turn from its first direction to its second as it progresses
    /// (plus noise); failures wander near the first; `dim` 12.
    fn synthetic(seed: u64) -> ProgressData {
        let dim = 12;
        let rng = &mut proprio::episode_rng(seed, 0, 0);
        let unit = |rng: &mut proprio::EnvRng| -> Vec<f32> {
            let v: Vec<f32> = (0..dim).map(|_| rng.random::<f32>() - 0.5).collect();
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect()
        };
        let dirs: Vec<(Vec<f32>, Vec<f32>)> = (0..3).map(|_| (unit(rng), unit(rng))).collect();
        let frame = |k: usize, p: f32, rng: &mut proprio::EnvRng| -> Vec<f32> {
            let (a, b) = &dirs[k];
            let angle = p * std::f32::consts::FRAC_PI_2;
            (0..dim)
                .map(|i| {
                    angle.cos() * a[i] + angle.sin() * b[i] + 0.15 * (rng.random::<f32>() - 0.5)
                })
                .collect()
        };
        let mut episodes = Vec::new();
        for e in 0..60 {
            let (k, len) = (e % 3, rng.random_range(20..40));
            let failed = e >= 45;
            let frames = (0..len)
                .flat_map(|t| {
                    let p = if failed {
                        0.15 * rng.random::<f32>()
                    } else {
                        t as f32 / (len - 1) as f32
                    };
                    frame(k, p, rng)
                })
                .collect();
            let kind = if failed {
                EpisodeKind::Failure
            } else {
                EpisodeKind::Demo
            };
            episodes.push(Episode {
                frames,
                text: k,
                kind,
                unscored: 0,
            });
        }
        ProgressData {
            dim,
            texts: (0..3).map(|_| unit(rng)).collect(),
            episodes,
        }
    }

    fn small() -> ProgressConfig {
        ProgressConfig {
            window: 8,
            width: 32,
            heads: 2,
            steps: 300,
            batch: 32,
            learning_rate: 2e-3,
            ..ProgressConfig::default()
        }
    }

    #[test]
    fn a_fit_reads_progress_from_frames_and_a_time_shuffled_control_reads_none() {
        let (data, cfg) = (synthetic(4), small());
        let (net, report) = fit(&data, &cfg, |_, _| {}).unwrap();
        assert!(report.holdout.len() >= 8, "{report:?}");
        assert!(
            report.holdout_voc > 0.9 && report.holdout_voc_in_order > 0.9,
            "{report:?}"
        );
        assert!(report.ranking.ordered > 0.95, "{report:?}");
        assert!(
            report.ranking.success > 0.8 && report.ranking.failure < 0.2,
            "{report:?}"
        );
        // Under another instruction a demonstration's last frame reads as no progress.
        let k = report.holdout[0];
        let mut other = data.clone();
        other.episodes[k].text = (other.episodes[k].text + 1) % 3;
        let right = *running_progress(&net, &data, k, cfg.window)
            .unwrap()
            .last()
            .unwrap();
        let wrong = *running_progress(&net, &other, k, cfg.window)
            .unwrap()
            .last()
            .unwrap();
        assert!(right > 0.8 && wrong < 0.2, "{right} {wrong}");
        // The same fit on demonstrations shuffled in time, judged on the
        // held-out ones as GVL shows them: no order learned.
        let shuffled = data.time_shuffled_control(&mut proprio::episode_rng(9, 0, 0));
        let long = ProgressConfig {
            steps: 1500,
            ..cfg.clone()
        };
        let (control, _) = fit(&shuffled, &long, |_, _| {}).unwrap();
        let shown = Presentation::Shuffled(3);
        let voc = value_order_correlation(&control, &data, &report.holdout, cfg.window, shown);
        let voc = voc.unwrap();
        assert!(voc.abs() < 0.25, "the time-shuffled control's VOC is {voc}");
    }

    /// Mean |read − true| progress over the frames of `episodes`.
    fn error(net: &ProgressNet, data: &ProgressData, episodes: &[usize], window: usize) -> f32 {
        let mut total = (0.0, 0usize);
        for &k in episodes {
            let read = running_progress(net, data, k, window).unwrap();
            for (t, r) in read.iter().enumerate() {
                total.0 += (r - data.episodes[k].progress(t, data.dim)).abs();
                total.1 += 1;
            }
        }
        total.0 / total.1 as f32
    }

    #[test]
    fn a_learners_failure_teaches_no_progress_only_where_it_drifts() {
        // Each failure follows a demonstration of its instruction halfway,
        // then wanders back near the start: its first half is a
        // demonstration's way, its second half no progress.
        let mut data = synthetic(6);
        let dim = data.dim;
        for k in 45..60 {
            let (demo, text) = (&data.episodes[k - 45].frames, data.episodes[k - 45].text);
            let half = demo.len() / dim / 2;
            let mut frames = demo[..half * dim].to_vec();
            let drift = &data.episodes[k].frames;
            frames.extend_from_slice(&drift[..drift.len().min(half * dim)]);
            data.episodes[k] = Episode {
                frames,
                text,
                kind: EpisodeKind::Failure,
                unscored: half,
            };
        }
        let cfg = ProgressConfig {
            failure: 0.3,
            ..small()
        };
        let (net, report) = fit(&data, &cfg, |_, _| {}).unwrap();
        let masked = error(&net, &data, &report.holdout, cfg.window);
        let mut whole = data.clone();
        whole.episodes.iter_mut().for_each(|e| e.unscored = 0);
        let (net, report) = fit(&whole, &cfg, |_, _| {}).unwrap();
        let unmasked = error(&net, &whole, &report.holdout, cfg.window);
        // Labelled as no progress along their whole length, the failures
        // contradict the demonstrations' own first halves.
        assert!(masked < 0.85 * unmasked, "{masked} vs {unmasked}");
    }

    /// Cubes of the synthetic puts.
    const CUBES: usize = 4;

    /// "put X on Y" as six one-hot words (start, put, X, on, Y, end).
    fn put(x: usize, y: usize) -> Vec<f32> {
        let vocabulary = CUBES + 4;
        [0, 1, 2 + x, 2 + CUBES, 2 + y, 3 + CUBES]
            .iter()
            .flat_map(|&word| (0..vocabulary).map(move |v| f32::from(u8::from(v == word))))
            .collect()
    }

    /// An episode of "put X on Y": its frames move from nothing to X's mark
    /// among their first `CUBES` values and Y's among the last (plus
    /// noise), or, a fifth of them failed, stay near nothing.
    fn put_episode(x: usize, y: usize, text: usize, rng: &mut proprio::EnvRng) -> Episode {
        let (len, failed) = (rng.random_range(20..30), rng.random::<f32>() < 0.2);
        let frames = (0..len)
            .flat_map(|t| {
                let p = match failed {
                    true => 0.1 * rng.random::<f32>(),
                    false => t as f32 / (len - 1) as f32,
                };
                let mut frame: Vec<f32> = (0..2 * CUBES)
                    .map(|_| 0.1 * (rng.random::<f32>() - 0.5))
                    .collect();
                frame[x] += p;
                frame[CUBES + y] += p;
                frame
            })
            .collect();
        let kind = match failed {
            true => EpisodeKind::Failure,
            false => EpisodeKind::Demo,
        };
        Episode {
            frames,
            text,
            kind,
            unscored: 0,
        }
    }

    #[test]
    fn a_model_reading_words_tells_an_instruction_from_its_reverse() {
        // Every put of two of four cubes: "put X on Y" and "put Y on X" hold
        // the same words, so only their order tells them apart.
        let pairs: Vec<(usize, usize)> = (0..CUBES)
            .flat_map(|x| (0..CUBES).map(move |y| (x, y)))
            .filter(|&(x, y)| x != y)
            .collect();
        let rng = &mut proprio::episode_rng(4, 0, 0);
        let mut episodes = |count: usize| -> Vec<Episode> {
            (0..count)
                .map(|e| {
                    let (x, y) = pairs[e % pairs.len()];
                    put_episode(x, y, e % pairs.len(), rng)
                })
                .collect()
        };
        let data = ProgressData {
            dim: 2 * CUBES,
            texts: pairs.iter().map(|&(x, y)| put(x, y)).collect(),
            episodes: episodes(200),
        };
        let cfg = ProgressConfig {
            words: 6,
            steps: 1500,
            mismatch: 0.3,
            ..small()
        };
        let (net, _) = fit(&data, &cfg, |_, _| {}).unwrap();
        // New demonstrations of every put, read under it and under its reverse.
        let mut fresh = ProgressData {
            episodes: episodes(120),
            ..data
        };
        fresh.episodes.retain(|e| e.kind == EpisodeKind::Demo);
        let end = |data: &ProgressData| -> f32 {
            let read = (0..data.episodes.len()).map(|k| {
                let read = running_progress(&net, data, k, cfg.window).unwrap();
                read[read.len() - 1]
            });
            read.sum::<f32>() / data.episodes.len() as f32
        };
        let mut reversed = fresh.clone();
        for e in &mut reversed.episodes {
            let (x, y) = pairs[e.text];
            e.text = pairs.iter().position(|&p| p == (y, x)).unwrap();
        }
        let (right, wrong) = (end(&fresh), end(&reversed));
        assert!(
            right > 0.8 && wrong < 0.2,
            "{right} under their own instructions, {wrong} under their reverses"
        );
    }

    /// Goals of the synthetic reaches: instruction `g` is the unit vector `e_g`.
    const GOALS: usize = 8;

    /// An episode under instruction `text` whose frames turn from the
    /// diagonal (every goal equally far) to `e_goal`, with noise.
    fn reach_episode(goal: usize, text: usize, rng: &mut proprio::EnvRng) -> Episode {
        let len = rng.random_range(15..25);
        let frames = (0..len)
            .flat_map(|t| {
                let p = t as f32 / (len - 1) as f32;
                (0..GOALS)
                    .map(|i| {
                        let toward = f32::from(u8::from(i == goal));
                        (1.0 - p) * (GOALS as f32).sqrt().recip()
                            + p * toward
                            + 0.1 * (rng.random::<f32>() - 0.5)
                    })
                    .collect::<Vec<f32>>()
            })
            .collect();
        Episode {
            frames,
            text,
            kind: EpisodeKind::Demo,
            unscored: 0,
        }
    }

    /// Progress at the end of demonstrations toward `GOALS − 2` and `GOALS − 1`
    /// (instructions no fitted episode carries), read under their own
    /// instruction and under each other's, for a model fitted on the other
    /// goals' demonstrations with mismatched-instruction negatives.
    fn unseen_reaches(similarity: bool) -> (f32, f32) {
        let rng = &mut proprio::episode_rng(6, 0, 0);
        let seen = GOALS - 2;
        let data = ProgressData {
            dim: GOALS,
            texts: (0..GOALS)
                .map(|g| (0..GOALS).map(|i| f32::from(u8::from(i == g))).collect())
                .collect(),
            episodes: (0..120)
                .map(|e| reach_episode(e % seen, e % seen, rng))
                .collect(),
        };
        let cfg = ProgressConfig {
            steps: 600,
            mismatch: 0.3,
            similarity,
            ..small()
        };
        let (net, _) = fit(&data, &cfg, |_, _| {}).unwrap();
        let mut end = |under: &dyn Fn(usize) -> usize| -> f32 {
            let fresh = ProgressData {
                episodes: (0..20)
                    .map(|e| reach_episode(seen + e % 2, under(seen + e % 2), rng))
                    .collect(),
                ..data.clone()
            };
            let read = (0..fresh.episodes.len()).map(|k| {
                let read = running_progress(&net, &fresh, k, cfg.window).unwrap();
                read[read.len() - 1]
            });
            read.sum::<f32>() / fresh.episodes.len() as f32
        };
        let other = |g: usize| 2 * seen + 1 - g;
        let own = end(&|g| g);
        (own, end(&other))
    }

    #[test]
    fn the_similarity_reads_an_instruction_the_fit_never_saw() {
        // Through its cosines with the frames, a new goal reads as the seen ones did.
        let (own, other) = unseen_reaches(true);
        assert!(
            own > 0.6 && other < 0.2,
            "{own} under their own unseen instruction, {other} under the other's"
        );
        // From the instruction's token alone, a new one is a guess.
        let (own, other) = unseen_reaches(false);
        assert!(
            own - other < 0.4,
            "{own} under their own unseen instruction, {other} under the other's"
        );
    }

    #[test]
    fn a_fit_is_deterministic_and_refuses_data_without_demonstrations() {
        let (data, cfg) = (
            synthetic(5),
            ProgressConfig {
                steps: 20,
                ..small()
            },
        );
        let (_, a) = fit(&data, &cfg, |_, _| {}).unwrap();
        let (_, b) = fit(&data, &cfg, |_, _| {}).unwrap();
        assert_eq!(a.final_loss.to_bits(), b.final_loss.to_bits());
        let mut failures = data.clone();
        failures.episodes.retain(|e| e.kind == EpisodeKind::Failure);
        let error = fit(&failures, &cfg, |_, _| {}).unwrap_err().to_string();
        assert!(error.contains("at least one demonstration"), "{error}");
    }
}
