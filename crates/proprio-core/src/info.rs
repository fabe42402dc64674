//! Per-step diagnostic values (Gymnasium's `info` dict), reusable without allocating.

use serde::ser::{Serialize, SerializeMap, Serializer};

/// Named numeric diagnostics of one step or reset, e.g. `success`, `episode.return`.
///
/// Keys are `&'static str` so that clearing and refilling an `Info` on every
/// step allocates nothing once its capacity has grown.
#[derive(Debug, Default, PartialEq)]
pub struct Info {
    entries: Vec<(&'static str, f64)>,
}

impl Clone for Info {
    fn clone(&self) -> Self {
        Self {
            entries: self.entries.clone(),
        }
    }

    /// Reuses this info's capacity (the derived version would allocate).
    fn clone_from(&mut self, source: &Self) {
        self.entries.clone_from(&source.entries);
    }
}

impl Info {
    /// Removes every entry, keeping the capacity.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Sets `key` to `value`, replacing an earlier value of the same key.
    pub fn set(&mut self, key: &'static str, value: f64) {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key, value)),
        }
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.entries.iter().find(|(k, _)| *k == key).map(|e| e.1)
    }

    /// True when no entry is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        self.entries.iter().copied()
    }
}

impl Serialize for Info {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.entries.len()))?;
        for (k, v) in &self.entries {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}
