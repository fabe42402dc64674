//! Where the objects' values lie in an observation (`text.entities`): the
//! state's parts named in the config, found anywhere in its dicts.

use proprio::Space;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;

/// Which parts of the observation describe the objects (`text.entities`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityConfig {
    /// Each part of the observation the objects share, by its name, and how
    /// many values one object has in it (instruct-v0: `{"cubes": 13,
    /// "grasped": 1, "cube_from_tcp": 3}`); object `i`'s are the `i`-th block.
    #[serde(default)]
    pub fields: BTreeMap<String, usize>,
    /// How many objects an instruction refers to (2: the one moved, the one it goes on).
    #[serde(default = "two")]
    pub roles: usize,
    /// The naming layer's initial bias (a logit): every word starts out
    /// naming an object with chance sigmoid(`naming_bias`). −3 (0.05) keeps
    /// a start token from taking the first role early (the synthetic binding
    /// test: 15 seeds of 16 bind, 6 at −1); instruct-v0's clones bind on
    /// more seeds at −1 (0.27), their pointers learning while the colour
    /// words are still weakly named (docs/benchmarks.md, "Every seed bound").
    #[serde(default = "minus_three")]
    pub naming_bias: f32,
    /// The objects are the cells of the CNN's last feature map (a pixel
    /// policy, the cubes hidden by `critic_only`): each cell's channels and
    /// place, its key read from them; `fields` stays empty.
    #[serde(default)]
    pub cells: bool,
}

fn two() -> usize {
    2
}

fn minus_three() -> f32 {
    -3.0
}

impl EntityConfig {
    /// Where the fields lie in `space`: every name must be one box of the
    /// observation, and every field must hold the same number of objects.
    pub fn resolve(&self, space: &Space) -> std::result::Result<Objects, String> {
        if !(self.naming_bias.is_finite() && self.naming_bias.abs() <= 10.0) {
            return Err(format!(
                "text.entities: naming_bias is a logit between -10 and 10, got {}",
                self.naming_bias
            ));
        }
        if self.cells != self.fields.is_empty() {
            return Err(if self.cells {
                "text.entities: the objects are either the image's cells or state fields, not both"
                    .into()
            } else {
                "text.entities names no fields: list the objects' state parts, or set cells: true for a pixel policy".into()
            });
        }
        let mut fields = Vec::new();
        let mut count = None;
        for (name, &width) in &self.fields {
            let mut found = Vec::new();
            find(space, name, &mut 0, &mut found);
            let [(at, dim)] = found[..] else {
                return Err(format!(
                    "text.entities: the observation has {} box parts named \"{name}\" (it needs one; its parts: {})",
                    found.len(),
                    names(space).join(", ")
                ));
            };
            if width == 0 || dim % width != 0 || count.is_some_and(|n| n != dim / width) {
                return Err(format!(
                    "text.entities: \"{name}\" holds {dim} values, not {} objects of {width}",
                    count.map_or("whole".to_string(), |n: usize| n.to_string())
                ));
            }
            count = Some(dim / width);
            fields.push([at, width]);
        }
        Ok(Objects {
            count: count.unwrap_or(0),
            fields,
            roles: self.roles,
            naming_bias: self.naming_bias,
        })
    }
}

/// Offsets and sizes of the boxes named `name` anywhere in `space`.
fn find(space: &Space, name: &str, at: &mut usize, found: &mut Vec<(usize, usize)>) {
    match space {
        Space::Dict { spaces } => {
            for (key, part) in spaces {
                if key == name && matches!(part, Space::Box { .. }) {
                    found.push((*at, part.flat_dim()));
                }
                find(part, name, at, found);
            }
        }
        Space::Tuple { spaces } => spaces.iter().for_each(|part| find(part, name, at, found)),
        other => *at += other.flat_dim(),
    }
}

/// The names of the boxes in `space`.
fn names(space: &Space) -> Vec<String> {
    match space {
        Space::Dict { spaces } => spaces
            .iter()
            .flat_map(|(key, part)| match part {
                Space::Box { .. } => vec![key.clone()],
                _ => names(part),
            })
            .collect(),
        Space::Tuple { spaces } => spaces.iter().flat_map(names).collect(),
        _ => Vec::new(),
    }
}

/// The objects' fields found in an observation: `[offset, width]` each,
/// object `i`'s values of a field at `offset + i·width`.
#[derive(Debug, Clone, PartialEq)]
pub struct Objects {
    /// How many objects the state describes.
    pub count: usize,
    /// `[offset, width]` of each field.
    pub fields: Vec<[usize; 2]>,
    /// How many objects an instruction refers to.
    pub roles: usize,
    /// The naming layer's initial bias ([`EntityConfig::naming_bias`]).
    pub naming_bias: f32,
}

impl Objects {
    /// Rejects zero sizes and fields that overlap or leave the observation's `state` runs.
    pub fn validate(&self, state: &[Range<usize>]) -> std::result::Result<(), String> {
        if self.count == 0 || self.roles == 0 || self.fields.is_empty() {
            return Err(
                "text.entities needs a positive count, at least one role and at least one field"
                    .into(),
            );
        }
        let mut columns = self.columns();
        let inside = |k: &usize| state.iter().any(|r| r.contains(k));
        if let Some(k) = columns.iter().find(|k| !inside(k)) {
            return Err(format!(
                "text.entities: component {k} is not a state value of this observation (fields {:?}, {} objects)",
                self.fields, self.count
            ));
        }
        let all = columns.len();
        columns.sort_unstable();
        columns.dedup();
        if columns.len() != all || self.fields.iter().any(|&[_, w]| w == 0) {
            return Err(format!(
                "text.entities: the fields {:?} are empty or overlap",
                self.fields
            ));
        }
        Ok(())
    }

    /// Every observation component an object's values take, object-major.
    pub(super) fn columns(&self) -> Vec<usize> {
        (0..self.count)
            .flat_map(|i| {
                self.fields
                    .iter()
                    .flat_map(move |&[at, w]| at + i * w..at + (i + 1) * w)
            })
            .collect()
    }

    /// Values one object has.
    pub fn width(&self) -> usize {
        self.fields.iter().map(|&[_, w]| w).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_are_found_by_name_in_nested_parts() {
        let boxed = |n: usize| Space::Box {
            low: vec![-1.0; n],
            high: vec![1.0; n],
        };
        let state = Space::Dict {
            spaces: vec![
                ("arm".to_string(), boxed(4)),
                ("cubes".to_string(), boxed(6)),
                ("grasped".to_string(), boxed(2)),
            ],
        };
        let space = Space::Dict {
            spaces: vec![("state".to_string(), state)],
        };
        let config = |fields: &[(&str, usize)]| EntityConfig {
            fields: fields.iter().map(|&(k, w)| (k.to_string(), w)).collect(),
            roles: 2,
            naming_bias: -3.0,
            cells: false,
        };
        let objects = config(&[("cubes", 3), ("grasped", 1)])
            .resolve(&space)
            .unwrap();
        assert_eq!(objects.count, 2);
        assert_eq!(objects.fields, vec![[4, 3], [10, 1]]);
        assert_eq!(objects.columns(), vec![4, 5, 6, 10, 7, 8, 9, 11]);
        let error = config(&[("cube", 3)]).resolve(&space).unwrap_err();
        assert!(error.contains("arm, cubes, grasped"), "{error}");
        let error = config(&[]).resolve(&space).unwrap_err();
        assert!(error.contains("cells: true"), "{error}");
        let error = config(&[("cubes", 4)]).resolve(&space).unwrap_err();
        assert!(error.contains("6 values"), "{error}");
        let error = config(&[("cubes", 2), ("grasped", 1)])
            .resolve(&space)
            .unwrap_err();
        assert!(error.contains("not 3 objects"), "{error}");
        for bad in [f32::NAN, 40.0] {
            let config = EntityConfig {
                naming_bias: bad,
                ..config(&[("cubes", 3)])
            };
            let error = config.resolve(&space).unwrap_err();
            assert!(error.contains("naming_bias"), "{error}");
        }
    }
}
