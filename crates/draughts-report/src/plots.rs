//! The three report plots, drawn with plotters into an RGB buffer and encoded as PNG.
//!
//! Each function returns [`Rendered::NoData`] with a reason instead of drawing empty axes.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::metrics::{Metrics, SelfplayRecord, TrainRecord};

/// Result of drawing one plot.
pub(crate) enum Rendered {
    /// PNG file bytes.
    Png(Vec<u8>),
    /// Nothing to draw; the reason says which data are missing.
    NoData(String),
}

/// Font family name every text style in this module uses; the embedded font is registered
/// under it (plotters' own elements also ask for "sans-serif").
const FONT: &str = "sans-serif";

/// Registers DejaVu Sans (regular and bold) with plotters' `ab_glyph` text renderer, once.
/// Returns false if the embedded bytes were rejected, which would be a packaging bug.
pub(crate) fn register_fonts() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    *REGISTERED.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    })
}

/// Tableau 10: distinguishable, and readable on white.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

const WIDTH: u32 = 1200;
const HEIGHT: u32 = 700;
/// Series with at most this many points also get a marker per point, so that a run of one or
/// two cycles still shows something (a line through one point is invisible).
const MAX_MARKED_POINTS: usize = 120;
/// Opponents with at most this many ratings get error bars; beyond, a shaded band.
const MAX_BARRED_POINTS: usize = 60;

/// Turns plotters' error types (generic over the backend) into a message.
trait OrMessage<T> {
    fn or_msg(self) -> Result<T, String>;
}

impl<T, E: Display> OrMessage<T> for Result<T, E> {
    fn or_msg(self) -> Result<T, String> {
        self.map_err(|e| e.to_string())
    }
}

fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| format!("PNG encoder: {e}"))?;
        writer
            .write_image_data(rgb)
            .map_err(|e| format!("PNG encoder: {e}"))?;
        writer.finish().map_err(|e| format!("PNG encoder: {e}"))?;
    }
    Ok(out)
}

/// Range `[min, max]` of the finite values, widened by a margin (and to a nonzero width).
fn padded_range(values: impl IntoIterator<Item = f64>, margin: f64) -> Option<(f64, f64)> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite() && v.abs() <= MAX_PLOTTABLE)
        .fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
    // A span lost in rounding (1e12 + 1e-6) is treated as a single value: plotters' tick
    // placement is not meant for ranges at the edge of f64 precision.
    let span = if hi - lo > (lo.abs() + hi.abs()) * 1e-9 {
        hi - lo
    } else {
        0.0
    };
    let pad = if span > 0.0 {
        span * margin
    } else {
        lo.abs().max(1.0) * 0.1
    };
    Some((lo - pad, hi + pad))
}

/// Short tick label: no trailing zeros, thousands as "k", millions as "M".
pub(crate) fn fmt_tick(x: f64) -> String {
    let a = x.abs();
    if a >= 1e6 {
        format!("{}M", trim(x / 1e6, 2))
    } else if a >= 1e3 {
        format!("{}k", trim(x / 1e3, 2))
    } else if a >= 100.0 {
        format!("{x:.0}")
    } else if a >= 1.0 {
        trim(x, 2)
    } else {
        trim(x, 4)
    }
}

fn trim(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// Maps unix seconds to a readable elapsed-time axis, in a unit that suits the run's length.
struct TimeAxis {
    origin: f64,
    scale: f64,
    label: &'static str,
}

impl TimeAxis {
    fn new(origin: f64, last: f64) -> Self {
        let span = last - origin;
        let (scale, label) = if span <= 180.0 {
            (1.0, "seconds since start")
        } else if span <= 2.0 * 3600.0 {
            (60.0, "minutes since start")
        } else {
            (3600.0, "hours since start")
        };
        TimeAxis {
            origin,
            scale,
            label,
        }
    }

    fn at(&self, t: f64) -> f64 {
        (t - self.origin) / self.scale
    }
}

struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// How one line chart looks.
struct LineChart<'a> {
    caption: &'a str,
    caption_size: u32,
    x_desc: &'a str,
    y_desc: &'a str,
    /// The x axis counts something (cycles): label it with whole numbers only.
    integer_x: bool,
    /// Draw a legend (a single-series panel is named by its caption instead).
    legend: bool,
    /// Palette index of the first series.
    first_color: usize,
}

type Ranges = (std::ops::Range<f64>, std::ops::Range<f64>);

/// The axis ranges for the series, or `None` when there is no plottable point. With
/// `y_from_zero` the values are magnitudes: the axis starts at zero so that changes are seen in
/// proportion.
fn chart_ranges(series: &[Series], y_from_zero: bool, legend_rows: usize) -> Option<Ranges> {
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (x0, x1) = padded_range(xs, 0.03)?;
    let (mut y0, y1) = if y_from_zero {
        padded_range(ys.chain([0.0]), 0.08)?
    } else {
        padded_range(ys, 0.08)?
    };
    if y_from_zero && series.iter().all(|s| s.points.iter().all(|p| p.1 >= 0.0)) {
        y0 = 0.0;
    }
    let y1 = reserve_legend_band(y0, y1, legend_rows);
    Some((x0..x1, y0..y1))
}

/// Raises the top of a y range so that the legend (drawn inside the plot, at the top) covers
/// no data: each legend row takes about `LEGEND_ROW` of the plot height.
fn reserve_legend_band(y0: f64, y1: f64, rows: usize) -> f64 {
    if rows == 0 {
        return y1;
    }
    let band = (LEGEND_ROW * rows as f64 + LEGEND_ROW).min(0.45);
    y0 + (y1 - y0) / (1.0 - band)
}

/// Height of one legend row as a fraction of a plot's height (about 21 pixels of 570).
const LEGEND_ROW: f64 = 0.037;

fn x_label_count(x: &std::ops::Range<f64>, integer_x: bool) -> usize {
    if integer_x {
        ((x.end - x.start).round() as usize + 1).clamp(2, 12)
    } else {
        10
    }
}

/// Formats integer-axis ticks; fractional positions get no label.
fn integer_tick(x: f64) -> String {
    if (x - x.round()).abs() < 1e-6 {
        format!("{}", x.round() as i64)
    } else {
        String::new()
    }
}

/// Draws line series (plus markers for short series) and a legend onto a drawing area.
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    look: &LineChart<'_>,
    series: &[Series],
    (xr, yr): Ranges,
) -> Result<(), String> {
    let x_labels = x_label_count(&xr, look.integer_x);
    let mut chart = ChartBuilder::on(area)
        .caption(look.caption, (FONT, look.caption_size))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(80)
        .build_cartesian_2d(xr, yr)
        .or_msg()?;
    let integer_x = look.integer_x;
    chart
        .configure_mesh()
        .x_desc(look.x_desc)
        .y_desc(look.y_desc)
        .x_labels(x_labels)
        .y_labels(7)
        .x_label_formatter(&|x| {
            if integer_x {
                integer_tick(*x)
            } else {
                fmt_tick(*x)
            }
        })
        .y_label_formatter(&|y| fmt_tick(*y))
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .light_line_style(RGBColor(243, 243, 243))
        .max_light_lines(4)
        .draw()
        .or_msg()?;
    for (i, s) in series.iter().enumerate() {
        let c = color(look.first_color + i);
        let drawn = chart
            .draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(2)))
            .or_msg()?;
        if look.legend {
            drawn.label(s.name.as_str()).legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3))
            });
        }
        if s.points.len() <= MAX_MARKED_POINTS {
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 3, c.filled())))
                .or_msg()?;
        }
    }
    if look.legend {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .label_font((FONT, 15))
            .draw()
            .or_msg()?;
    }
    Ok(())
}

/// `losses.png`: every loss against the training step.
pub(crate) fn losses(m: &Metrics) -> Result<Rendered, String> {
    let mut series = Vec::new();
    type Pick = fn(&TrainRecord) -> Option<f64>;
    let pick: [(&str, Pick); 4] = [
        ("total", |r| r.loss),
        ("policy", |r| r.policy_loss),
        ("value", |r| r.value_loss),
        ("moves left", |r| r.moves_left_loss),
    ];
    for (name, get) in pick {
        let points: Vec<(f64, f64)> = m
            .train
            .iter()
            .filter_map(|r| plottable(r.step? as f64, get(r)?))
            .collect();
        if !points.is_empty() {
            series.push(Series {
                name: name.to_string(),
                points,
            });
        }
    }
    let Some(ranges) = chart_ranges(&series, false, series.len()) else {
        return Ok(Rendered::NoData(
            "no training line has both a step and a loss".into(),
        ));
    };
    let look = LineChart {
        caption: "Training losses",
        caption_size: 28,
        x_desc: "training step",
        y_desc: "loss",
        integer_x: false,
        legend: true,
        first_color: 0,
    };
    let mut buf = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).or_msg()?;
        draw_lines(&root, &look, &series, ranges)?;
        root.present().or_msg()?;
    }
    encode_png(&buf, WIDTH, HEIGHT).map(Rendered::Png)
}

/// A point both of whose coordinates are finite and of sane magnitude (plotters' tick
/// computation is not meant for values near the limits of `f64`).
fn plottable(x: f64, y: f64) -> Option<(f64, f64)> {
    (x.abs() <= MAX_PLOTTABLE && y.abs() <= MAX_PLOTTABLE).then_some((x, y))
}

/// Larger magnitudes are left out of the plots (they are still in the summary).
const MAX_PLOTTABLE: f64 = 1e12;

/// One rated evaluation: x, Elo, and the 95% interval if known.
type RatedPoint = (f64, f64, Option<(f64, f64)>);

/// `rating.png`: Elo against each ladder opponent with its 95% interval as error bars.
pub(crate) fn rating(m: &Metrics) -> Result<Rendered, String> {
    rating_against(m, false)
}

/// `learning.png`: the same ratings against the hours of self-play and training that came before
/// each evaluation (the sum of those stages' `seconds`; evaluations and pauses not counted): the
/// learning curve per hour of work, comparable between runs of other cycle sizes.
pub(crate) fn learning(m: &Metrics) -> Result<Rendered, String> {
    if !m.selfplay.iter().any(|r| r.seconds.is_some()) && !m.train.iter().any(|r| r.seconds.is_some()) {
        return Ok(Rendered::NoData("no self-play or training line says how long it took".into()));
    }
    rating_against(m, true)
}

/// Hours of self-play and training on the lines before `line`.
fn work_hours(m: &Metrics, line: u64) -> f64 {
    let sp = m.selfplay.iter().filter(|r| r.line < line).filter_map(|r| r.seconds);
    let tr = m.train.iter().filter(|r| r.line < line).filter_map(|r| r.seconds);
    sp.chain(tr).filter(|s| s.is_finite() && *s > 0.0).sum::<f64>() / 3600.0
}

fn rating_against(m: &Metrics, hours: bool) -> Result<Rendered, String> {
    // Cycles are the natural axis; fall back to time if some rated line has no cycle.
    let rated: Vec<_> = m.eval.iter().filter(|r| r.elo.is_some()).collect();
    let by_cycle = !hours && rated.iter().all(|r| r.cycle.is_some());
    let origin = m.first_time.unwrap_or(0.0);
    let axis = TimeAxis::new(
        origin,
        rated.iter().filter_map(|r| r.time).fold(origin, f64::max),
    );
    // Opponents in order of first appearance.
    let mut order: Vec<String> = Vec::new();
    let mut points: BTreeMap<String, Vec<RatedPoint>> = BTreeMap::new();
    for r in &rated {
        let x = if hours {
            Some(work_hours(m, r.line))
        } else if by_cycle {
            r.cycle.map(|c| c as f64)
        } else {
            r.time.map(|t| axis.at(t))
        };
        let Some((x, elo)) = x.zip(r.elo).and_then(|(x, e)| plottable(x, e)) else {
            continue;
        };
        let name = r
            .opponent
            .clone()
            .unwrap_or_else(|| "(unnamed)".to_string());
        if !points.contains_key(&name) {
            order.push(name.clone());
        }
        // An interval is drawn only when both ends are there and bracket the estimate.
        let interval = match (r.elo_low, r.elo_high) {
            (Some(l), Some(h)) if l <= elo && elo <= h && h - l <= MAX_PLOTTABLE => Some((l, h)),
            _ => None,
        };
        points.entry(name).or_default().push((x, elo, interval));
    }
    if order.is_empty() {
        return Ok(Rendered::NoData(
            "no evaluation line has an Elo (with a cycle or time)".into(),
        ));
    }
    let all = || points.values().flatten();
    let Some((mut x0, mut x1)) = padded_range(all().map(|p| p.0), 0.05) else {
        return Ok(Rendered::NoData(
            "no evaluation line has a plottable cycle or time".into(),
        ));
    };
    if by_cycle {
        // Half a cycle of room on each side keeps the end points off the axes.
        x0 = x0.min(all().map(|p| p.0).fold(f64::INFINITY, f64::min) - 0.3);
        x1 = x1.max(all().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max) + 0.3);
    }
    // Zero Elo (as strong as the opponent) is always in view.
    let ys = all()
        .flat_map(|p| [Some(p.1), p.2.map(|i| i.0), p.2.map(|i| i.1)])
        .flatten();
    let Some((y0, y1)) = padded_range(ys.chain([0.0]), 0.08) else {
        return Ok(Rendered::NoData("no plottable Elo".into()));
    };
    let y1 = reserve_legend_band(y0, y1, order.len());
    // Few points: each interval is an error bar, and opponents rated at the same x are spread
    // sideways a little so that their bars stay apart. Many points: bars would merge into a
    // blur, so each interval becomes a shaded band instead.
    let bars = points.values().all(|v| v.len() <= MAX_BARRED_POINTS);
    let dodge = if bars { (x1 - x0) * 0.008 } else { 0.0 };
    let n = order.len() as f64;

    let mut buf = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).or_msg()?;
        let xr = x0..x1;
        let x_labels = x_label_count(&xr, by_cycle);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                if hours {
                    "Elo against ladder opponents by hours of work (95% interval)"
                } else {
                    "Elo against ladder opponents (95% interval)"
                },
                (FONT, 28),
            )
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(xr, y0..y1)
            .or_msg()?;
        chart
            .configure_mesh()
            .x_desc(if hours {
                "hours of self-play and training before the evaluation (wall clock)"
            } else if by_cycle {
                "cycle"
            } else {
                axis.label
            })
            .y_desc("Elo difference to opponent")
            .x_labels(x_labels)
            .y_labels(8)
            .x_label_formatter(&|x| {
                if by_cycle {
                    integer_tick(*x)
                } else {
                    fmt_tick(*x)
                }
            })
            .y_label_formatter(&|y| {
                if y.abs() < 0.5 {
                    "0".to_string()
                } else {
                    format!("{y:+.0}")
                }
            })
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 17))
            .light_line_style(RGBColor(243, 243, 243))
            .max_light_lines(4)
            .draw()
            .or_msg()?;
        chart
            .draw_series(LineSeries::new(
                [(x0, 0.0), (x1, 0.0)],
                RGBColor(120, 120, 120).stroke_width(1),
            ))
            .or_msg()?;
        if !bars {
            for (i, name) in order.iter().enumerate() {
                let band = color(i).mix(0.18).filled();
                for run in points[name].split(|p| p.2.is_none()) {
                    if run.len() < 2 {
                        continue;
                    }
                    let upper = run.iter().filter_map(|p| Some((p.0, p.2?.1)));
                    let lower = run.iter().rev().filter_map(|p| Some((p.0, p.2?.0)));
                    let outline: Vec<(f64, f64)> = upper.chain(lower).collect();
                    chart.draw_series([Polygon::new(outline, band)]).or_msg()?;
                }
            }
        }
        for (i, name) in order.iter().enumerate() {
            let c = color(i);
            let shift = (i as f64 - (n - 1.0) / 2.0) * dodge;
            let pts = &points[name];
            chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|p| (p.0 + shift, p.1)),
                    c.stroke_width(2),
                ))
                .or_msg()?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 24, y)], c.stroke_width(3))
                });
            if !bars {
                continue;
            }
            chart
                .draw_series(pts.iter().filter_map(|&(x, elo, interval)| {
                    let (lo, hi) = interval?;
                    Some(ErrorBar::new_vertical(
                        x + shift,
                        lo,
                        elo,
                        hi,
                        c.stroke_width(2),
                        10,
                    ))
                }))
                .or_msg()?;
            chart
                .draw_series(
                    pts.iter()
                        .map(|p| Circle::new((p.0 + shift, p.1), 4, c.filled())),
                )
                .or_msg()?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(160, 160, 160))
            .label_font((FONT, 15))
            .draw()
            .or_msg()?;
        root.present().or_msg()?;
    }
    encode_png(&buf, WIDTH, HEIGHT).map(Rendered::Png)
}

/// `throughput.png`: one panel per throughput figure that has data, against elapsed time.
pub(crate) fn throughput(m: &Metrics) -> Result<Rendered, String> {
    let Some(origin) = m.first_time else {
        return Ok(Rendered::NoData("no line has a time".into()));
    };
    let axis = TimeAxis::new(origin, m.last_time.unwrap_or(origin));
    let selfplay = |get: fn(&SelfplayRecord) -> Option<f64>| -> Vec<(f64, f64)> {
        m.selfplay
            .iter()
            .filter_map(|r| plottable(axis.at(r.time?), get(r)?))
            .collect()
    };
    type Panel<'a> = (&'a str, &'a str, Vec<(f64, f64)>);
    let candidates: [Panel; 3] = [
        (
            "Self-play games per hour",
            "games / hour",
            selfplay(|r| r.games_per_hour),
        ),
        (
            "Self-play network evaluations per second",
            "evaluations / s",
            selfplay(|r| r.evals_per_second),
        ),
        (
            "Training samples per second",
            "samples / s",
            m.train
                .iter()
                .filter_map(|r| plottable(axis.at(r.time?), r.samples_per_second?))
                .collect(),
        ),
    ];
    // Panels keep their colour whichever others are missing.
    let panels: Vec<_> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(i, (title, unit, points))| {
            let series = vec![Series {
                name: unit.to_string(),
                points,
            }];
            let ranges = chart_ranges(&series, true, 0)?;
            Some((i, title, unit, series, ranges))
        })
        .collect();
    if panels.is_empty() {
        return Ok(Rendered::NoData(
            "no self-play or training line has both a time and a throughput figure".into(),
        ));
    }
    // One time axis for all panels, so that they line up.
    let xs = panels
        .iter()
        .flat_map(|p| p.3.iter().flat_map(|s| s.points.iter().map(|q| q.0)));
    let shared_x = padded_range(xs, 0.03);
    const TITLE: u32 = 50;
    const PANEL: u32 = 300;
    let height = TITLE + PANEL * panels.len() as u32;
    let mut buf = vec![0u8; (WIDTH * height * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE).or_msg()?;
        let root = root.titled("Throughput", (FONT, 28)).or_msg()?;
        let areas = root.split_evenly((panels.len(), 1));
        for (area, (i, title, unit, series, (xr, yr))) in areas.iter().zip(panels) {
            let xr = shared_x.map_or(xr, |(a, b)| a..b);
            let look = LineChart {
                caption: title,
                caption_size: 20,
                x_desc: axis.label,
                y_desc: unit,
                integer_x: false,
                legend: false,
                first_color: i,
            };
            draw_lines(area, &look, &series, (xr, yr))?;
        }
        root.present().or_msg()?;
    }
    encode_png(&buf, WIDTH, height).map(Rendered::Png)
}

#[cfg(test)]
mod tests {
    #[test]
    fn work_hours_count_the_self_play_and_training_before_an_evaluation() {
        use crate::metrics::{SelfplayRecord, TrainRecord};
        let mut m = Metrics::default();
        m.selfplay.push(SelfplayRecord { line: 1, seconds: Some(3600.0), ..SelfplayRecord::default() });
        m.train.push(TrainRecord { line: 2, seconds: Some(1800.0), ..TrainRecord::default() });
        m.selfplay.push(SelfplayRecord { line: 4, seconds: Some(900.0), ..SelfplayRecord::default() });
        m.train.push(TrainRecord { line: 5, seconds: None, ..TrainRecord::default() });
        assert_eq!(work_hours(&m, 3), 1.5);
        assert_eq!(work_hours(&m, 6), 1.75);
        assert_eq!(work_hours(&m, 1), 0.0);
    }

    use super::*;

    #[test]
    fn ticks_are_short() {
        assert_eq!(fmt_tick(0.0), "0");
        assert_eq!(fmt_tick(2.5), "2.5");
        assert_eq!(fmt_tick(0.00125), "0.0013");
        assert_eq!(fmt_tick(350.0), "350");
        assert_eq!(fmt_tick(2500.0), "2.5k");
        assert_eq!(fmt_tick(12500.0), "12.5k");
        assert_eq!(fmt_tick(-20000.0), "-20k");
        assert_eq!(fmt_tick(3_250_000.0), "3.25M");
    }

    #[test]
    fn ranges_are_padded_and_never_empty() {
        assert_eq!(padded_range([1.0, 3.0], 0.5), Some((0.0, 4.0)));
        let (lo, hi) = padded_range([5.0], 0.1).expect("one value");
        assert!(lo < 5.0 && hi > 5.0);
        assert_eq!(padded_range([f64::NAN], 0.1), None);
        let (lo, hi) = padded_range([1e11, 1e11 + 1e-6], 0.1).expect("two values");
        assert!(
            hi - lo >= 1e10,
            "a span lost in rounding is widened: {lo}..{hi}"
        );
        assert_eq!(padded_range(std::iter::empty(), 0.1), None);
    }
}
