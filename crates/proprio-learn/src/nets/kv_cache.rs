//! Keys and values of what a sequence policy has already read, kept per env
//! between its steps, so each step reads only its new tokens.
//!
//! An env's transcript only grows within an episode, and every position
//! attends only to those before it (or, within what is fixed for the
//! episode — image patches, a prompt — to one another), so the keys and
//! values of what was read never change. An entry is reused only while the
//! env shows the same pixels, the same fixed part and a token stream that
//! extends the cached one; anything else (a reset, a restored snapshot)
//! starts the entry again. The keys and values belong to one set
//! of weights: make a new cache after every update.

use burn::prelude::*;

/// One env's cached stream: its pixels, its tokens, and every layer's keys
/// and values of its positions (patches, then tokens), position-major `[len × d]`.
#[derive(Debug, Clone, Default)]
struct Entry {
    pixels: Vec<f32>,
    tokens: Vec<i64>,
    len: usize,
    /// Positions that read one another both ways (patches and prompt).
    fixed: usize,
    keys: Vec<Vec<f32>>,
    values: Vec<Vec<f32>>,
}

/// The caches of a batch of envs, by slot (the env's index).
#[derive(Debug, Clone)]
pub struct KvCache {
    entries: Vec<Entry>,
    enabled: bool,
}

impl Default for KvCache {
    fn default() -> Self {
        Self::new(true)
    }
}

impl KvCache {
    /// An empty cache; `enabled: false` keeps nothing, so every step reads
    /// its whole transcript again (to measure what the cache saves).
    pub fn new(enabled: bool) -> Self {
        Self {
            entries: Vec::new(),
            enabled,
        }
    }

    /// Positions slot `slot` can reuse when it reads `pixels` and `tokens`
    /// (its first `fixed` positions both ways): all it holds if they extend
    /// what it read, else none (the entry is cleared).
    pub(crate) fn reusable(
        &mut self,
        slot: usize,
        pixels: &[f32],
        tokens: &[i64],
        patches: usize,
        fixed: usize,
    ) -> usize {
        if self.entries.len() <= slot {
            self.entries.resize_with(slot + 1, Entry::default);
        }
        let entry = &mut self.entries[slot];
        let same = entry.len == patches + entry.tokens.len()
            && entry.fixed == fixed
            && entry.pixels == pixels
            && tokens.starts_with(&entry.tokens);
        if entry.len > 0 && !same {
            *entry = Entry::default();
        }
        entry.len
    }

    /// Every layer's cached keys and values of `slots` as `[n, C, d]`
    /// tensors, rows padded with zeros to the longest, `C`; `None` when nothing is cached.
    pub(crate) fn past(
        &self,
        slots: &[usize],
        layers: usize,
        d: usize,
        device: &Device,
    ) -> Option<(Vec<(Tensor<3>, Tensor<3>)>, usize)> {
        let entry = |slot: usize| self.entries.get(slot).filter(|e| e.len > 0);
        let c = slots
            .iter()
            .filter_map(|&s| entry(s))
            .map(|e| e.len)
            .max()?;
        let n = slots.len();
        let gather = |layer: usize, keys: bool| {
            let mut out = vec![0.0f32; n * c * d];
            for (i, &slot) in slots.iter().enumerate() {
                if let Some(e) = entry(slot) {
                    let src = if keys {
                        &e.keys[layer]
                    } else {
                        &e.values[layer]
                    };
                    out[i * c * d..i * c * d + src.len()].copy_from_slice(src);
                }
            }
            Tensor::<3>::from_data(TensorData::new(out, [n, c, d]), device)
        };
        Some((
            (0..layers)
                .map(|l| (gather(l, true), gather(l, false)))
                .collect(),
            c,
        ))
    }

    /// Records that `slot` has read `pixels` and `tokens` (`len` positions,
    /// the first `fixed` both ways), appending every layer's keys and values
    /// of the positions it had not cached.
    pub(crate) fn keep(
        &mut self,
        slot: usize,
        pixels: &[f32],
        tokens: &[i64],
        (len, fixed): (usize, usize),
        new: &[(&[f32], &[f32])],
    ) {
        if !self.enabled {
            return;
        }
        let entry = &mut self.entries[slot];
        entry.keys.resize_with(new.len(), Vec::new);
        entry.values.resize_with(new.len(), Vec::new);
        for ((keys, values), (k, v)) in entry.keys.iter_mut().zip(&mut entry.values).zip(new) {
            keys.extend_from_slice(k);
            values.extend_from_slice(v);
        }
        entry.pixels.clear();
        entry.pixels.extend_from_slice(pixels);
        entry.tokens.clear();
        entry.tokens.extend_from_slice(tokens);
        entry.len = len;
        entry.fixed = fixed;
    }
}
