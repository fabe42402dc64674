//! `proprio plot`: learning curves from `metrics.jsonl` files, drawn to PNG.

use crate::base::error::{LearnError, Result};
use plotters::prelude::*;
use plotters::style::{FontFamily, register_font};
use proprio::serde_json::{self, Value};
use std::path::{Path, PathBuf};

/// DejaVu Sans, bundled so plots and video overlays need no system fonts.
static FONT: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");

/// Makes the bundled font plotters' `sans-serif`, once per process; false if
/// it cannot be loaded.
pub(crate) fn register_bundled_font() -> bool {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *REGISTERED.get_or_init(|| register_font("sans-serif", FontStyle::Normal, FONT).is_ok())
}

/// One line of a plot: a run's (global step, metric) points.
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// Points in step order.
    pub points: Vec<(f64, f64)>,
}

/// Reads `metric` against `global_step` from a run directory's `metrics.jsonl`.
pub fn read_curve(run: &Path, metric: &str) -> Result<Curve> {
    let path = run.join("metrics.jsonl");
    let text = std::fs::read_to_string(&path).map_err(LearnError::io(&path))?;
    let mut points = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let row: Value = serde_json::from_str(line).map_err(|e| LearnError::Checkpoint {
            path: path.clone(),
            message: format!("line {}: {e}", n + 1),
        })?;
        if let (Some(x), Some(y)) = (row["global_step"].as_f64(), row[metric].as_f64()) {
            points.push((x, y));
        }
    }
    let label = run
        .file_name()
        .map_or_else(|| run.display().to_string(), |n| n.to_string_lossy().into());
    Ok(Curve { label, points })
}

/// Draws `curves` of `metric` into a PNG at `out`.
pub fn plot(curves: &[Curve], metric: &str, title: &str, out: &PathBuf) -> Result<()> {
    let points = curves.iter().flat_map(|c| c.points.iter());
    let (mut x_max, mut y_min, mut y_max) = (1.0f64, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in points {
        x_max = x_max.max(x);
        y_min = y_min.min(y);
        y_max = y_max.max(y);
    }
    if !y_min.is_finite() {
        return Err(LearnError::Config(format!("no '{metric}' values to plot")));
    }
    // 5% of the span as margin (a flat curve gets 5% of its value, at least 0.05).
    let span = y_max - y_min;
    let pad = if span > 0.0 {
        span * 0.05
    } else {
        (y_max.abs() * 0.05).max(0.05)
    };
    let draw_error = |e: &dyn std::fmt::Display| LearnError::Io {
        path: out.clone(),
        source: std::io::Error::other(e.to_string()),
    };
    if !register_bundled_font() {
        return Err(draw_error(&"cannot load the bundled font"));
    }
    let root = BitMapBackend::new(out, (960, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| draw_error(&e))?;
    let font = |size| (FontFamily::SansSerif, size).into_font();
    let mut chart = ChartBuilder::on(&root)
        .caption(title, font(24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0.0..x_max, (y_min - pad)..(y_max + pad))
        .map_err(|e| draw_error(&e))?;
    chart
        .configure_mesh()
        .x_desc("env steps")
        .x_label_formatter(&|x| {
            if x_max >= 10_000.0 {
                format!("{:.0}k", x / 1000.0)
            } else {
                format!("{x:.0}")
            }
        })
        .y_desc(metric)
        .label_style(font(15))
        .axis_desc_style(font(17))
        .draw()
        .map_err(|e| draw_error(&e))?;
    for (i, curve) in curves.iter().enumerate() {
        let color = Palette99::pick(i).mix(0.9);
        chart
            .draw_series(LineSeries::new(
                curve.points.iter().copied(),
                color.stroke_width(2),
            ))
            .map_err(|e| draw_error(&e))?
            .label(curve.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .label_font(font(14))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::LowerRight)
        .draw()
        .map_err(|e| draw_error(&e))?;
    root.present().map_err(|e| draw_error(&e))
}
