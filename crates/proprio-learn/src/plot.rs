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

/// What the x axis shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Axis {
    /// Env steps (`global_step`).
    #[default]
    Steps,
    /// Wall-clock seconds since the run started (`time_s`).
    Time,
}

impl std::str::FromStr for Axis {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "steps" => Ok(Self::Steps),
            "time" => Ok(Self::Time),
            other => Err(format!("unknown x axis '{other}' (expected steps or time)")),
        }
    }
}

impl Axis {
    fn key(self) -> &'static str {
        match self {
            Self::Steps => "global_step",
            Self::Time => "time_s",
        }
    }
}

/// One line of a plot: a run's (x, metric) points.
pub struct Curve {
    /// Legend label.
    pub label: String,
    /// Points in step order.
    pub points: Vec<(f64, f64)>,
}

/// Reads `metric` against `axis` from a run directory's `metrics.jsonl`.
pub fn read_curve(run: &Path, metric: &str, axis: Axis) -> Result<Curve> {
    let path = run.join("metrics.jsonl");
    let text = std::fs::read_to_string(&path).map_err(LearnError::io(&path))?;
    let mut points = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let row: Value = serde_json::from_str(line).map_err(|e| LearnError::Checkpoint {
            path: path.clone(),
            message: format!("line {}: {e}", n + 1),
        })?;
        if let (Some(x), Some(y)) = (row[axis.key()].as_f64(), row[metric].as_f64()) {
            points.push((x, y));
        }
    }
    let label = run
        .file_name()
        .map_or_else(|| run.display().to_string(), |n| n.to_string_lossy().into());
    Ok(Curve { label, points })
}

/// Draws `curves` of `metric` against `axis` into a PNG at `out`.
pub fn plot(curves: &[Curve], metric: &str, axis: Axis, title: &str, out: &PathBuf) -> Result<()> {
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
    // Ten minutes or more of wall-clock are drawn in minutes, so the ticks fall on whole ones.
    let minutes = axis == Axis::Time && x_max >= 600.0;
    let x_scale = if minutes { 1.0 / 60.0 } else { 1.0 };
    let x_max = x_max * x_scale;
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
        .x_desc(match axis {
            Axis::Steps => "env steps",
            Axis::Time if minutes => "wall-clock, minutes",
            Axis::Time => "wall-clock, seconds",
        })
        .x_label_formatter(&|x| match axis {
            Axis::Steps if x_max >= 10_000.0 => format!("{:.0}k", x / 1000.0),
            _ => format!("{x:.0}"),
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
                curve.points.iter().map(|&(x, y)| (x * x_scale, y)),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curves_read_against_steps_or_wall_clock_and_draw() {
        let dir = std::env::temp_dir().join(format!("proprio-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rows = [
            r#"{"global_step": 1000, "time_s": 2.5, "sps": 400.0}"#,
            r#"{"global_step": 2000, "time_s": 4.0, "eval_success": 0.5}"#,
            r#"{"global_step": 3000, "time_s": 900.0, "eval_success": 0.9}"#,
        ];
        std::fs::write(dir.join("metrics.jsonl"), rows.join("\n")).unwrap();
        let steps = read_curve(&dir, "eval_success", Axis::Steps).unwrap();
        assert_eq!(steps.points, vec![(2000.0, 0.5), (3000.0, 0.9)]);
        let time = read_curve(&dir, "eval_success", Axis::Time).unwrap();
        assert_eq!(time.points, vec![(4.0, 0.5), (900.0, 0.9)]);
        assert_eq!("time".parse::<Axis>(), Ok(Axis::Time));
        assert!("hours".parse::<Axis>().is_err());
        let out = dir.join("curve.png");
        plot(&[time], "eval_success", Axis::Time, "t", &out).unwrap();
        assert!(std::fs::metadata(&out).unwrap().len() > 1000);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
