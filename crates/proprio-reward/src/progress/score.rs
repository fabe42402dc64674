//! A progress model judged on its own, before any RL: value-order
//! correlation (GVL: the rank correlation of the predicted progress with
//! the frames' order, per held-out demonstration, the frames shown
//! shuffled or in order) and how demonstrations and failures rank by the
//! progress their last frame reads as.

use super::ProgressNet;
use super::samples::{ProgressData, Window, WindowKind, batch, pad};
use crate::{Result, RewardError};
use burn::prelude::*;
use proprio::rand::seq::SliceRandom;

/// The progress the model reads at each frame of episode `episode`, as a
/// reward reads it during the episode: frame `t` with the `window − 1` before
/// it (the episode's first frame repeated in front of those it lacks).
pub fn running_progress(
    net: &ProgressNet,
    data: &ProgressData,
    episode: usize,
    window: usize,
) -> Result<Vec<f32>> {
    let order: Vec<usize> = (0..data.episodes[episode].len(data.dim)).collect();
    read_along(net, data, episode, &order, 0, window)
}

/// What the model reads at the last frame of episode `episode`.
fn last_progress(
    net: &ProgressNet,
    data: &ProgressData,
    episode: usize,
    window: usize,
) -> Result<f32> {
    let order: Vec<usize> = (0..data.episodes[episode].len(data.dim)).collect();
    let last = read_along(net, data, episode, &order, order.len() - 1, window)?;
    Ok(last[0])
}

/// The progress read at each position from `from` on, when episode
/// `episode`'s frames are shown in `order` (indices of its frames): position
/// `t` with the `window − 1` shown before it, the first repeated in front.
fn read_along(
    net: &ProgressNet,
    data: &ProgressData,
    episode: usize,
    order: &[usize],
    from: usize,
    window: usize,
) -> Result<Vec<f32>> {
    let text = data.episodes[episode].text;
    let windows: Vec<Window> = (from..order.len())
        .map(|t| Window {
            episode,
            frames: pad(&order[t + 1 - window.min(t + 1)..=t], window),
            text,
            targets: Vec::new(),
            weights: Vec::new(),
            kind: WindowKind::Forward,
        })
        .collect();
    let device = net.devices()[0].clone();
    let mut out = Vec::with_capacity(windows.len());
    for chunk in windows.chunks(256) {
        let (frames, texts, _, _) = batch(data, chunk, &device);
        let [n, l, _] = frames.dims();
        let values = net
            .forward(frames, texts)
            .into_data()
            .try_into_vec::<f32>()
            .map_err(crate::clip::backend)?;
        out.extend((0..n).map(|i| values[i * l + l - 1]));
    }
    if out.iter().any(|v| !v.is_finite()) {
        return Err(RewardError::Backend(
            "the progress model produced a non-finite value".into(),
        ));
    }
    Ok(out)
}

/// Spearman's rank correlation of `x` and `y` (ties share their mean rank);
/// 0 when either is constant.
pub fn spearman(x: &[f32], y: &[f32]) -> f64 {
    let (rx, ry) = (ranks(x), ranks(y));
    let n = rx.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = (rx.iter().sum::<f64>() / n, ry.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in rx.iter().zip(&ry) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    if sxx == 0.0 || syy == 0.0 {
        0.0
    } else {
        sxy / (sxx * syy).sqrt()
    }
}

/// Ranks from 1, ties given their mean rank.
fn ranks(x: &[f32]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&a, &b| x[a].total_cmp(&x[b]));
    let mut ranks = vec![0.0; x.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && x[order[j + 1]] == x[order[i]] {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0;
        order[i..=j].iter().for_each(|&k| ranks[k] = rank);
        i = j + 1;
    }
    ranks
}

/// How an episode's frames are shown to the model when its value-order
/// correlation is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presentation {
    /// In time order, as a reward reads them during an episode (the window
    /// is short at the start, which a model may read as early).
    InOrder,
    /// Shuffled first with this seed, as GVL shows them (so no order leaks
    /// through the window); the predictions are then put back in time order.
    Shuffled(u64),
}

/// Mean value-order correlation over `episodes` (demonstrations): each
/// one's running progress, its frames shown as `presentation` says, against
/// its frames' order. 1: progress rises frame after frame; 0: it says nothing of the order.
pub fn value_order_correlation(
    net: &ProgressNet,
    data: &ProgressData,
    episodes: &[usize],
    window: usize,
    presentation: Presentation,
) -> Result<f64> {
    let each = episode_value_orders(net, data, episodes, window, presentation)?;
    Ok(mean_value_order(&each))
}

/// The value-order correlation of each of `episodes`, in order (an
/// episode's shuffle depends on it alone, so any subset's mean is that
/// subset's [`value_order_correlation`]).
pub fn episode_value_orders(
    net: &ProgressNet,
    data: &ProgressData,
    episodes: &[usize],
    window: usize,
    presentation: Presentation,
) -> Result<Vec<f64>> {
    episodes
        .iter()
        .map(|&k| {
            let len = data.episodes[k].len(data.dim);
            let mut order: Vec<usize> = (0..len).collect();
            if let Presentation::Shuffled(seed) = presentation {
                order.shuffle(&mut proprio::episode_rng(seed, 2, k as u64));
            }
            let predicted = read_along(net, data, k, &order, 0, window)?;
            let times: Vec<f32> = order.iter().map(|&t| t as f32).collect();
            Ok(spearman(&predicted, &times))
        })
        .collect()
}

/// The mean of episodes' value-order correlations, 0 for none (as [`value_order_correlation`] gives it).
pub fn mean_value_order(values: &[f64]) -> f64 {
    match values.is_empty() {
        true => 0.0,
        false => values.iter().sum::<f64>() / values.len() as f64,
    }
}

/// How successful and failed episodes rank by the progress of their last
/// frame (NaN, `null` in JSON, where either side has no episode).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ranking {
    /// Mean last-frame progress of the demonstrations.
    pub success: f64,
    /// Mean last-frame progress of the failures.
    pub failure: f64,
    /// Share of (demonstration, failure) pairs where the demonstration reads
    /// higher (ties count half): 1 ranks every success above every failure.
    pub ordered: f64,
}

impl Ranking {
    /// The ranking of `demos` against `failures` (episode indices of `data`).
    pub fn of(
        net: &ProgressNet,
        data: &ProgressData,
        demos: &[usize],
        failures: &[usize],
        window: usize,
    ) -> Result<Self> {
        let last = |k: usize| last_progress(net, data, k, window);
        let success: Vec<f32> = demos.iter().map(|&k| last(k)).collect::<Result<_>>()?;
        let failure: Vec<f32> = failures.iter().map(|&k| last(k)).collect::<Result<_>>()?;
        let mean = |v: &[f32]| v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        let pairs = (success.len() * failure.len()) as f64;
        let ordered = success
            .iter()
            .flat_map(|s| failure.iter().map(move |f| (s, f)))
            .map(|(s, f)| match s.total_cmp(f) {
                std::cmp::Ordering::Greater => 1.0,
                std::cmp::Ordering::Equal => 0.5,
                std::cmp::Ordering::Less => 0.0,
            })
            .sum::<f64>()
            / pairs;
        Ok(Self {
            success: mean(&success),
            failure: mean(&failure),
            ordered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_is_one_for_any_rising_sequence_and_minus_one_for_a_falling_one() {
        let t: Vec<f32> = (0..10).map(|t| t as f32).collect();
        let rising: Vec<f32> = t.iter().map(|x| x.exp()).collect();
        let falling: Vec<f32> = t.iter().map(|x| -x * x).collect();
        assert!((spearman(&rising, &t) - 1.0).abs() < 1e-12);
        assert!((spearman(&falling, &t) + 1.0).abs() < 1e-12);
        assert_eq!(spearman(&[3.0; 10], &t), 0.0);
    }

    #[test]
    fn spearman_gives_ties_their_mean_rank() {
        // Ranks of x: 1, 2.5, 2.5, 4 against 1, 2, 3, 4: Pearson of the ranks.
        let x = [0.1, 0.5, 0.5, 0.9];
        let y = [1.0, 2.0, 3.0, 4.0];
        let (rx, ry) = ([1.0, 2.5, 2.5, 4.0], [1.0, 2.0, 3.0, 4.0]);
        let m = 2.5;
        let sxy: f64 = rx.iter().zip(ry).map(|(a, b)| (a - m) * (b - m)).sum();
        let sxx: f64 = rx.iter().map(|a| (a - m) * (a - m)).sum();
        let syy: f64 = ry.iter().map(|b| (b - m) * (b - m)).sum();
        assert!((spearman(&x, &y) - sxy / (sxx * syy).sqrt()).abs() < 1e-12);
    }
}
