//! Spaces: what observations and actions look like, as flat `f32` vectors.
//!
//! Every space has a flat encoding of `flat_dim()` numbers; batched buffers
//! hold N of them back to back. Discrete values, token ids and pixel values
//! are whole numbers stored exactly in `f32` (exact up to 2^24).

use crate::error::ActionError;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};
use std::fmt;

mod columns;

/// The shape and range of observations or actions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Space {
    /// Continuous vector with per-component bounds (±∞ allowed).
    Box {
        #[serde(with = "bounds")]
        low: Vec<f32>,
        #[serde(with = "bounds")]
        high: Vec<f32>,
    },
    /// One integer in `start .. start + n`.
    Discrete { n: u32, start: i32 },
    /// One integer per component, component `k` in `0 .. nvec[k]`.
    MultiDiscrete { nvec: Vec<u32> },
    /// Up to `max_len` token ids in `0 .. vocab`; id 0 is padding, placed after the sequence.
    Tokens { vocab: u32, max_len: usize },
    /// `height × width × channels` pixel values in `0 ..= 255`, row-major, channels last.
    Image {
        height: usize,
        width: usize,
        channels: usize,
    },
    /// Components concatenated in order.
    Tuple { spaces: Vec<Space> },
    /// Named components concatenated in the given order.
    Dict { spaces: Vec<(String, Space)> },
}

impl Space {
    /// A box with the same bounds on every one of `dim` components.
    pub fn uniform_box(dim: usize, low: f32, high: f32) -> Self {
        Self::Box {
            low: vec![low; dim],
            high: vec![high; dim],
        }
    }

    /// `Discrete(n)` starting at 0.
    pub fn discrete(n: u32) -> Self {
        Self::Discrete { n, start: 0 }
    }

    /// Rejects degenerate spaces (no valid value, or malformed bounds).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Self::Box { low, high } => {
                if low.len() != high.len() {
                    return Err(format!(
                        "box bounds differ in length ({} vs {})",
                        low.len(),
                        high.len()
                    ));
                }
                match low
                    .iter()
                    .zip(high)
                    .position(|(l, h)| l.is_nan() || h.is_nan() || l > h)
                {
                    Some(k) => Err(format!(
                        "box component {k} has low {} above high {}",
                        low[k], high[k]
                    )),
                    None => Ok(()),
                }
            }
            Self::Discrete { n: 0, .. } => Err("Discrete(0) has no valid value".into()),
            Self::MultiDiscrete { nvec } if nvec.contains(&0) => Err(format!(
                "MultiDiscrete({nvec:?}) has a component with no valid value"
            )),
            Self::Tokens { vocab: 0, .. } => {
                Err("a token space needs a vocabulary of at least 1".into())
            }
            Self::Tuple { spaces } => spaces.iter().try_for_each(Space::validate),
            Self::Dict { spaces } => spaces.iter().try_for_each(|(_, s)| s.validate()),
            _ => Ok(()),
        }
    }

    /// Number of `f32` values in the flat encoding.
    pub fn flat_dim(&self) -> usize {
        match self {
            Self::Box { low, .. } => low.len(),
            Self::Discrete { .. } => 1,
            Self::MultiDiscrete { nvec } => nvec.len(),
            Self::Tokens { max_len, .. } => *max_len,
            Self::Image {
                height,
                width,
                channels,
            } => height * width * channels,
            Self::Tuple { spaces } => spaces.iter().map(Space::flat_dim).sum(),
            Self::Dict { spaces } => spaces.iter().map(|(_, s)| s.flat_dim()).sum(),
        }
    }

    /// True for spaces whose components are whole numbers.
    pub fn is_integral(&self) -> bool {
        !matches!(self, Self::Box { .. })
    }

    /// Checks that `x` is a well-formed value: right length, finite, and whole
    /// numbers in range for integral spaces. Box bounds are not enforced here —
    /// each env documents whether it clips continuous actions — see [`Space::contains`].
    #[inline]
    pub fn check(&self, x: &[f32]) -> Result<(), ActionError> {
        // Fast path for the common valid cases; anything else takes the
        // detailed path below, which also builds the error.
        let valid = match self {
            Self::Discrete { n, start } => {
                x.len() == 1 && is_whole(x[0]) && {
                    let v = x[0] as i64 - i64::from(*start);
                    (0..i64::from(*n)).contains(&v)
                }
            }
            Self::Box { low, .. } => x.len() == low.len() && x.iter().all(|v| v.is_finite()),
            _ => false,
        };
        if valid {
            Ok(())
        } else {
            self.check_detailed(x)
        }
    }

    fn check_detailed(&self, x: &[f32]) -> Result<(), ActionError> {
        let expected = self.flat_dim();
        if x.len() != expected {
            return Err(ActionError::Length {
                expected,
                got: x.len(),
            });
        }
        self.check_from(x, 0)
    }

    fn check_from(&self, x: &[f32], offset: usize) -> Result<(), ActionError> {
        match self {
            Self::Box { .. } => match x.iter().position(|v| !v.is_finite()) {
                Some(k) => Err(ActionError::NonFinite {
                    index: offset + k,
                    value: x[k],
                }),
                None => Ok(()),
            },
            Self::Discrete { n, start } => {
                let start = i64::from(*start);
                check_integers(x, offset, |_| (start, start + i64::from(*n) - 1))
            }
            Self::MultiDiscrete { nvec } => {
                check_integers(x, offset, |k| (0, i64::from(nvec[k]) - 1))
            }
            Self::Tokens { vocab, .. } => check_integers(x, offset, |_| (0, i64::from(*vocab) - 1)),
            Self::Image { .. } => check_integers(x, offset, |_| (0, 255)),
            Self::Tuple { spaces } => check_parts(spaces.iter(), x, offset),
            Self::Dict { spaces } => check_parts(spaces.iter().map(|(_, s)| s), x, offset),
        }
    }

    /// True if `x` is a member of the space, box bounds included.
    pub fn contains(&self, x: &[f32]) -> bool {
        if self.check(x).is_err() {
            return false;
        }
        match self {
            Self::Box { low, high } => x
                .iter()
                .zip(low.iter().zip(high))
                .all(|(v, (lo, hi))| lo <= v && v <= hi),
            Self::Tuple { spaces } => parts_contain(spaces.iter(), x),
            Self::Dict { spaces } => parts_contain(spaces.iter().map(|(_, s)| s), x),
            _ => true,
        }
    }

    /// Writes a random member into `out` (length `flat_dim()`). Bounded box
    /// components are uniform; unbounded ones follow Gymnasium (normal,
    /// or exponential on a half-line). The space must pass [`Space::validate`].
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut [f32]) {
        debug_assert_eq!(out.len(), self.flat_dim());
        match self {
            Self::Box { low, high } => {
                for ((o, &lo), &hi) in out.iter_mut().zip(low).zip(high) {
                    *o = sample_interval(rng, lo, hi);
                }
            }
            Self::Discrete { n, start } => {
                out[0] = (*start as i64 + i64::from(rng.random_range(0..(*n).max(1)))) as f32;
            }
            Self::MultiDiscrete { nvec } => {
                for (o, &n) in out.iter_mut().zip(nvec) {
                    *o = rng.random_range(0..n.max(1)) as f32;
                }
            }
            Self::Tokens { vocab, .. } => {
                let len = rng.random_range(0..=out.len());
                for (k, o) in out.iter_mut().enumerate() {
                    *o = if k < len {
                        rng.random_range(1.min(vocab.saturating_sub(1))..(*vocab).max(1)) as f32
                    } else {
                        0.0
                    };
                }
            }
            Self::Image { .. } => out
                .iter_mut()
                .for_each(|o| *o = f32::from(rng.random::<u8>())),
            Self::Tuple { spaces } => sample_parts(spaces.iter(), rng, out),
            Self::Dict { spaces } => sample_parts(spaces.iter().map(|(_, s)| s), rng, out),
        }
    }
}

/// True for finite whole numbers; avoids `f32::fract`, a libm call on baseline x86-64.
#[inline]
fn is_whole(v: f32) -> bool {
    v.is_finite() && (v.abs() >= 8_388_608.0 || (v as i64) as f32 == v)
}

/// Checks that every value is a whole number within `range(k)` for component `k`.
fn check_integers(
    x: &[f32],
    offset: usize,
    range: impl Fn(usize) -> (i64, i64),
) -> Result<(), ActionError> {
    for (k, &v) in x.iter().enumerate() {
        let index = offset + k;
        if !v.is_finite() {
            return Err(ActionError::NonFinite { index, value: v });
        }
        if !is_whole(v) {
            return Err(ActionError::NotInteger { index, value: v });
        }
        let (low, high) = range(k);
        if (v as i64) < low || (v as i64) > high {
            return Err(ActionError::OutOfRange {
                index,
                value: v,
                low,
                high,
            });
        }
    }
    Ok(())
}

fn check_parts<'a>(
    parts: impl Iterator<Item = &'a Space>,
    x: &[f32],
    mut offset: usize,
) -> Result<(), ActionError> {
    let mut rest = x;
    for part in parts {
        let (head, tail) = rest.split_at(part.flat_dim());
        part.check_from(head, offset)?;
        offset += head.len();
        rest = tail;
    }
    Ok(())
}

fn parts_contain<'a>(parts: impl Iterator<Item = &'a Space>, x: &[f32]) -> bool {
    let mut rest = x;
    parts.into_iter().all(|part| {
        let (head, tail) = rest.split_at(part.flat_dim());
        rest = tail;
        part.contains(head)
    })
}

fn sample_parts<'a, R: Rng + ?Sized>(
    parts: impl Iterator<Item = &'a Space>,
    rng: &mut R,
    out: &mut [f32],
) {
    let mut rest = out;
    for part in parts {
        let (head, tail) = rest.split_at_mut(part.flat_dim());
        part.sample(rng, head);
        rest = tail;
    }
}

fn sample_interval<R: Rng + ?Sized>(rng: &mut R, lo: f32, hi: f32) -> f32 {
    let unit: f32 = rng.random();
    let exponential = |rng: &mut R| -(1.0 - rng.random::<f32>()).ln();
    match (lo.is_finite(), hi.is_finite()) {
        (true, true) => lo + (hi - lo) * unit,
        (true, false) => lo + exponential(rng),
        (false, true) => hi - exponential(rng),
        (false, false) => {
            // Box–Muller: one standard normal draw.
            let radius = (-2.0 * (1.0 - unit).ln()).sqrt();
            radius * (std::f32::consts::TAU * rng.random::<f32>()).cos()
        }
    }
}

impl fmt::Display for Space {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Box { low, high } => {
                write!(f, "Box({})", low.len())?;
                let uniform = |v: &[f32]| v.windows(2).all(|w| w[0] == w[1]);
                if !low.is_empty() && uniform(low) && uniform(high) {
                    write!(f, " in [{}, {}]", low[0], high[0])?;
                }
                Ok(())
            }
            Self::Discrete { n, start: 0 } => write!(f, "Discrete({n})"),
            Self::Discrete { n, start } => write!(f, "Discrete({n}, start={start})"),
            Self::MultiDiscrete { nvec } => write!(f, "MultiDiscrete({nvec:?})"),
            Self::Tokens { vocab, max_len } => {
                write!(f, "Tokens(vocab={vocab}, max_len={max_len})")
            }
            Self::Image {
                height,
                width,
                channels,
            } => write!(f, "Image({height}x{width}x{channels})"),
            Self::Tuple { spaces } => {
                let parts: Vec<String> = spaces.iter().map(Space::to_string).collect();
                write!(f, "Tuple({})", parts.join(", "))
            }
            Self::Dict { spaces } => {
                let parts: Vec<String> = spaces.iter().map(|(k, s)| format!("{k}: {s}")).collect();
                write!(f, "Dict({})", parts.join(", "))
            }
        }
    }
}

/// JSON has no infinity: bounds serialise as numbers, or `"inf"` / `"-inf"`.
pub(crate) mod bounds {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Bound {
        Finite(f64),
        Named(String),
    }

    pub fn serialize<S: Serializer>(values: &[f32], s: S) -> Result<S::Ok, S::Error> {
        let encoded: Vec<Bound> = values.iter().map(|&v| encode(f64::from(v))).collect();
        encoded.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f32>, D::Error> {
        let raw = Vec::<Bound>::deserialize(d)?;
        raw.into_iter()
            .map(|b| {
                decode(b)
                    .map(|v| v as f32)
                    .map_err(serde::de::Error::custom)
            })
            .collect()
    }

    fn encode(v: f64) -> Bound {
        match v {
            f64::INFINITY => Bound::Named("inf".into()),
            f64::NEG_INFINITY => Bound::Named("-inf".into()),
            v => Bound::Finite(v),
        }
    }

    fn decode(b: Bound) -> Result<f64, String> {
        match b {
            Bound::Finite(v) => Ok(v),
            Bound::Named(s) if s == "inf" => Ok(f64::INFINITY),
            Bound::Named(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
            Bound::Named(s) => Err(format!(
                "bound '{s}' is neither a number nor \"inf\"/\"-inf\""
            )),
        }
    }

    /// The same encoding for a `(low, high)` pair of `f64`.
    pub mod pair {
        use super::*;

        pub fn serialize<S: Serializer>(v: &(f64, f64), s: S) -> Result<S::Ok, S::Error> {
            (encode(v.0), encode(v.1)).serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<(f64, f64), D::Error> {
            let (a, b) = <(Bound, Bound)>::deserialize(d)?;
            Ok((
                decode(a).map_err(serde::de::Error::custom)?,
                decode(b).map_err(serde::de::Error::custom)?,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::episode_rng;

    fn cartpole_obs() -> Space {
        Space::Box {
            low: vec![-4.8, f32::NEG_INFINITY, -0.42, f32::NEG_INFINITY],
            high: vec![4.8, f32::INFINITY, 0.42, f32::INFINITY],
        }
    }

    #[test]
    fn every_space_samples_members_and_round_trips_json() {
        let spaces = [
            cartpole_obs(),
            Space::Discrete { n: 3, start: -1 },
            Space::MultiDiscrete { nvec: vec![2, 5] },
            Space::Tokens {
                vocab: 12,
                max_len: 6,
            },
            Space::Image {
                height: 2,
                width: 3,
                channels: 3,
            },
            Space::Dict {
                spaces: vec![
                    ("pos".into(), Space::uniform_box(2, -1.0, 1.0)),
                    ("mode".into(), Space::discrete(4)),
                ],
            },
        ];
        let mut rng = episode_rng(0, 0, 0);
        for space in spaces {
            let mut x = vec![0.0; space.flat_dim()];
            for _ in 0..200 {
                space.sample(&mut rng, &mut x);
                assert!(space.contains(&x), "{space} sampled {x:?}");
            }
            let json = serde_json::to_string(&space).unwrap();
            assert_eq!(
                serde_json::from_str::<Space>(&json).unwrap(),
                space,
                "{json}"
            );
        }
    }

    #[test]
    fn discrete_check_reports_what_is_wrong() {
        let space = Space::Discrete { n: 2, start: 0 };
        assert!(space.check(&[1.0]).is_ok());
        assert!(matches!(
            space.check(&[2.0]),
            Err(ActionError::OutOfRange {
                value: 2.0,
                high: 1,
                ..
            })
        ));
        assert!(matches!(
            space.check(&[0.5]),
            Err(ActionError::NotInteger { .. })
        ));
        assert!(matches!(
            space.check(&[f32::NAN]),
            Err(ActionError::NonFinite { .. })
        ));
        assert!(matches!(
            space.check(&[0.0, 1.0]),
            Err(ActionError::Length {
                expected: 1,
                got: 2
            })
        ));
    }

    #[test]
    fn box_check_rejects_non_finite_but_contains_enforces_bounds() {
        let space = Space::uniform_box(2, -2.0, 2.0);
        assert!(space.check(&[5.0, 0.0]).is_ok());
        assert!(!space.contains(&[5.0, 0.0]));
        assert!(matches!(
            space.check(&[0.0, f32::INFINITY]),
            Err(ActionError::NonFinite { index: 1, .. })
        ));
    }

    #[test]
    fn nested_errors_name_the_flat_index() {
        let space = Space::Tuple {
            spaces: vec![Space::uniform_box(2, -1.0, 1.0), Space::discrete(3)],
        };
        assert!(matches!(
            space.check(&[0.0, 0.0, 7.0]),
            Err(ActionError::OutOfRange { index: 2, .. })
        ));
    }

    #[test]
    fn degenerate_spaces_are_rejected() {
        assert!(Space::discrete(0).validate().is_err());
        assert!(
            Space::MultiDiscrete { nvec: vec![3, 0] }
                .validate()
                .is_err()
        );
        assert!(
            Space::Tokens {
                vocab: 0,
                max_len: 4
            }
            .validate()
            .is_err()
        );
        let inverted = Space::Box {
            low: vec![0.0, 1.0],
            high: vec![1.0, 0.0],
        };
        assert_eq!(
            inverted.validate().unwrap_err(),
            "box component 1 has low 1 above high 0"
        );
        let nested = Space::Tuple {
            spaces: vec![Space::discrete(2), Space::discrete(0)],
        };
        assert!(nested.validate().is_err());
        assert!(Space::discrete(2).validate().is_ok());
    }

    #[test]
    fn infinite_bounds_serialise_as_strings() {
        let json = serde_json::to_value(cartpole_obs()).unwrap();
        assert_eq!(json["high"][1], "inf");
        assert_eq!(json["low"][1], "-inf");
    }
}
