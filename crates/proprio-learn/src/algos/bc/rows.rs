//! Observation rows as demonstrations hold them in memory: pixels as bytes,
//! every other value as f32 — a 64 × 64 RGB row takes 12 kB, not 48 kB, so
//! 500 pixel demonstrations per instruction fit in a small machine's memory.

use std::ops::Range;

/// A run of adjacent columns, all pixels or all values.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    columns: Range<usize>,
    pixels: bool,
    /// Where the run starts in a row's pixels (or its other values).
    at: usize,
}

/// Observation rows of `dim` values whose pixel columns are kept as bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ObsRows {
    dim: usize,
    runs: Vec<Run>,
    /// Values per row that are not pixels.
    value_width: usize,
    values: Vec<f32>,
    pixels: Vec<u8>,
}

impl ObsRows {
    /// No rows yet; `pixel_columns` are the images' column ranges, in order,
    /// inside `0..dim`.
    pub fn new(dim: usize, pixel_columns: &[Range<usize>]) -> Self {
        let mut rows = Self {
            dim,
            runs: Vec::new(),
            value_width: 0,
            values: Vec::new(),
            pixels: Vec::new(),
        };
        let mut end = 0;
        for columns in pixel_columns.iter().filter(|c| !c.is_empty()) {
            rows.add_run(end..columns.start, false);
            rows.add_run(columns.clone(), true);
            end = columns.end;
        }
        rows.add_run(end..dim, false);
        rows
    }

    /// Appends a run of columns to the row layout (nothing for an empty one).
    fn add_run(&mut self, columns: Range<usize>, pixels: bool) {
        if columns.is_empty() {
            return;
        }
        let same = self.runs.iter().filter(|run| run.pixels == pixels);
        let at = same.map(|run| run.columns.len()).sum();
        if !pixels {
            self.value_width += columns.len();
        }
        self.runs.push(Run {
            columns,
            pixels,
            at,
        });
    }

    /// Rows made of the non-pixel values and the pixels, row by row, as a
    /// file stores them; `None` if their lengths disagree.
    pub fn from_parts(mut self, values: Vec<f32>, pixels: Vec<u8>) -> Option<Self> {
        let pixel_width = self.pixel_width();
        let rows = (pixels.len().checked_div(pixel_width))
            .unwrap_or(values.len() / self.value_width.max(1));
        let fits = values.len() == rows * self.value_width && pixels.len() == rows * pixel_width;
        (fits && self.dim > 0).then(|| {
            self.values = values;
            self.pixels = pixels;
            self
        })
    }

    /// Values of one row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Pixels of one row.
    pub fn pixel_width(&self) -> usize {
        self.dim - self.value_width
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        (self.values.len().checked_div(self.value_width))
            .unwrap_or(self.pixels.len() / self.dim.max(1))
    }

    /// Whether no row is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `rows` (whole rows, `dim` values each); a pixel is stored
    /// rounded into 0–255 (rendered pixels are whole numbers already).
    pub fn extend_from_slice(&mut self, rows: &[f32]) {
        for row in rows.chunks_exact(self.dim) {
            for run in &self.runs {
                let part = &row[run.columns.clone()];
                if run.pixels {
                    self.pixels
                        .extend(part.iter().map(|&x| x.round().clamp(0.0, 255.0) as u8));
                } else {
                    self.values.extend_from_slice(part);
                }
            }
        }
    }

    /// Writes row `r` into `out` (`dim` values).
    pub fn row_into(&self, r: usize, out: &mut [f32]) {
        let (v, p) = (r * self.value_width, r * self.pixel_width());
        for run in &self.runs {
            let target = &mut out[run.columns.clone()];
            let n = target.len();
            if run.pixels {
                let bytes = &self.pixels[p + run.at..p + run.at + n];
                for (x, &byte) in target.iter_mut().zip(bytes) {
                    *x = f32::from(byte);
                }
            } else {
                target.copy_from_slice(&self.values[v + run.at..v + run.at + n]);
            }
        }
    }

    /// Rows `rows`, one after another (`rows.len() × dim` values).
    pub fn gather(&self, rows: &[usize]) -> Vec<f32> {
        let mut out = vec![0.0; rows.len() * self.dim];
        for (&r, row) in rows.iter().zip(out.chunks_exact_mut(self.dim)) {
            self.row_into(r, row);
        }
        out
    }

    /// Rows `range`, one after another.
    pub fn slice(&self, range: Range<usize>) -> Vec<f32> {
        let mut out = vec![0.0; range.len() * self.dim];
        for (r, row) in range.zip(out.chunks_exact_mut(self.dim)) {
            self.row_into(r, row);
        }
        out
    }

    /// Column `k` of every row, in order (none for a column past `dim`).
    pub fn column(&self, k: usize) -> impl Iterator<Item = f32> + '_ {
        let run = self.runs.iter().find(|run| run.columns.contains(&k));
        let rows = if run.is_some() { self.len() } else { 0 };
        let (pixels, offset) = run.map_or((false, 0), |run| {
            (run.pixels, run.at + k - run.columns.start)
        });
        let pixel_width = self.pixel_width();
        (0..rows).map(move |r| {
            if pixels {
                f32::from(self.pixels[r * pixel_width + offset])
            } else {
                self.values[r * self.value_width + offset]
            }
        })
    }

    /// Appends `later`'s rows; `false` (and nothing appended) if their
    /// layouts differ.
    pub fn append(&mut self, later: ObsRows) -> bool {
        if later.dim != self.dim || later.runs != self.runs {
            return false;
        }
        self.values.extend(later.values);
        self.pixels.extend(later.pixels);
        true
    }

    /// The non-pixel values and the pixels, row by row, as a file stores them.
    pub fn parts(&self) -> (&[f32], &[u8]) {
        (&self.values, &self.pixels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first column as the pixels of a two-column row.
    const ONE: Range<usize> = Range { start: 0, end: 1 };

    /// Rows of 7: a value, a 3-pixel image, two values, a 1-pixel image.
    fn rows() -> (ObsRows, Vec<f32>) {
        let mut rows = ObsRows::new(7, &[1..4, 6..7]);
        let data = vec![
            0.5, 0.0, 128.0, 255.0, -1.0, 2.0, 7.0, //
            1.5, 3.0, 4.0, 5.0, -2.0, 3.0, 9.0,
        ];
        rows.extend_from_slice(&data);
        (rows, data)
    }

    #[test]
    fn rows_come_back_as_they_went_in_with_pixels_as_bytes() {
        let (rows, data) = rows();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows.slice(0..2), data);
        assert_eq!(rows.gather(&[1, 0]), [&data[7..], &data[..7]].concat());
        let (values, pixels) = rows.parts();
        assert_eq!(values, [0.5, -1.0, 2.0, 1.5, -2.0, 3.0]);
        assert_eq!(pixels, [0, 128, 255, 7, 3, 4, 5, 9]);
        for k in 0..7 {
            let column: Vec<f32> = rows.column(k).collect();
            assert_eq!(column, [data[k], data[7 + k]], "column {k}");
        }
        let again = ObsRows::new(7, &[1..4, 6..7])
            .from_parts(values.to_vec(), pixels.to_vec())
            .unwrap();
        assert_eq!(again, rows);
    }

    #[test]
    fn pixels_out_of_range_are_clamped_and_mismatched_parts_refused() {
        let mut rows = ObsRows::new(2, &[ONE]);
        rows.extend_from_slice(&[300.0, 1.0, -4.0, 2.0, 12.6, 3.0]);
        assert_eq!(rows.parts().1, [255, 0, 13]);
        assert!(
            ObsRows::new(2, &[ONE])
                .from_parts(vec![1.0], vec![1, 2])
                .is_none()
        );
        let mut other = ObsRows::new(2, &[Range { start: 1, end: 2 }]);
        other.extend_from_slice(&[1.0, 2.0]);
        assert!(!rows.append(other));
        let mut same = ObsRows::new(2, &[ONE]);
        same.extend_from_slice(&[5.0, 6.0]);
        assert!(rows.append(same));
        assert_eq!(rows.slice(3..4), [5.0, 6.0]);
    }

    #[test]
    fn rows_without_pixels_are_plain_floats() {
        let mut rows = ObsRows::new(3, &[]);
        rows.extend_from_slice(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!((rows.len(), rows.parts().1.len()), (2, 0));
        assert_eq!(rows.column(2).collect::<Vec<_>>(), [3.0, 6.0]);
    }
}
