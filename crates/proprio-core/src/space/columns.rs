//! Which flat columns of a space's values hold what: the ones observation
//! normalisation touches, and the token parts an instruction fills.

use super::Space;
use std::ops::Range;

impl Space {
    /// Indices of the flat components observation normalisation touches:
    /// all but image pixels (the network scales them) and token ids (an
    /// embedding reads them).
    pub fn normalized_components(&self) -> Vec<usize> {
        fn walk(space: &Space, at: &mut usize, out: &mut Vec<usize>) {
            match space {
                Space::Image { .. } | Space::Tokens { .. } => *at += space.flat_dim(),
                Space::Tuple { spaces } => spaces.iter().for_each(|s| walk(s, at, out)),
                Space::Dict { spaces } => spaces.iter().for_each(|(_, s)| walk(s, at, out)),
                other => {
                    let dim = other.flat_dim();
                    out.extend(*at..*at + dim);
                    *at += dim;
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut 0, &mut out);
        out
    }

    /// Flat columns of every token part (an instruction's ids), in order.
    pub fn token_parts(&self) -> Vec<Range<usize>> {
        fn walk(space: &Space, at: &mut usize, out: &mut Vec<Range<usize>>) {
            match space {
                Space::Tuple { spaces } => spaces.iter().for_each(|s| walk(s, at, out)),
                Space::Dict { spaces } => spaces.iter().for_each(|(_, s)| walk(s, at, out)),
                other => {
                    let dim = other.flat_dim();
                    if matches!(other, Space::Tokens { .. }) {
                        out.push(*at..*at + dim);
                    }
                    *at += dim;
                }
            }
        }
        let mut out = Vec::new();
        walk(self, &mut 0, &mut out);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> Space {
        Space::Box {
            low: vec![-1.0; 4],
            high: vec![1.0; 4],
        }
    }

    #[test]
    fn token_parts_and_normalised_columns_are_found_inside_dicts_and_tuples() {
        let tokens = |max_len| Space::Tokens { vocab: 9, max_len };
        let space = Space::Dict {
            spaces: vec![
                ("state".into(), state()),
                ("instruction".into(), tokens(5)),
                (
                    "more".into(),
                    Space::Tuple {
                        spaces: vec![Space::discrete(2), tokens(3)],
                    },
                ),
            ],
        };
        assert_eq!(space.token_parts(), vec![4..9, 10..13]);
        assert!(state().token_parts().is_empty());
        // Normalisation touches the rest: the state and the discrete value.
        assert_eq!(space.normalized_components(), vec![0, 1, 2, 3, 9]);
    }
}
