//! `--plot`: a PNG chart of every channel of an animation over the clip,
//! densely sampled, with the keys marked, drawn with plotters.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::args::Backend;
use crate::canvas::{register_font, save_png, FONT, FRAME, GRID, PALETTE, TEXT};
use crate::engine::Engine;
use crate::source::Source;
use crate::Failure;

/// `FILE-<a>.png` for `FILE.png`: one chart per animation.
pub fn numbered(path: &Path, a: usize) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plot".into());
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "png".into());
    path.with_file_name(format!("{stem}-{a}.{ext}"))
}

/// One channel's panel.
const PANEL_W: usize = 400;
const PANEL_H: usize = 240;
/// The heading above the panels.
const HEADER_H: usize = 28;
/// Samples over the clip.
const DENSE: usize = 480;

/// The y range of a channel's panel from its smallest and largest finite
/// value: that range padded by 6 % each side. A constant channel (equal
/// ends, or a span under 1e-5 of its magnitude: rounding noise such as 1 and
/// 0.99999994) gets its value ± max(|value| / 10, 1e-3) instead, so its line
/// is drawn flat across the middle with distinct tick labels. With no
/// finite value (`lo > hi`) the range is -1 .. 1. Always finite, `lo < hi`.
pub fn value_range(lo: f64, hi: f64) -> (f64, f64) {
    if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
        return (-1.0, 1.0);
    }
    let magnitude = lo.abs().max(hi.abs());
    if hi - lo <= magnitude * 1e-5 {
        let mid = lo + (hi - lo) / 2.0;
        let half = (mid.abs() * 0.1).max(1e-3);
        return (mid - half, mid + half);
    }
    let pad = (hi - lo) * 0.06;
    (lo - pad, hi + pad)
}

/// Samples animation `a` at `DENSE` times over its clip on `backend` and
/// writes the chart to `path`.
pub fn plot(
    source: &Source,
    a: usize,
    backend: Backend,
    engine: &mut Engine<'_>,
    path: &Path,
) -> Result<(), Failure> {
    register_font()?;
    let lib = &source.library;
    let clip = &lib.clips()[a];
    let n = clip.tracks.len();
    let (t0, t1) = time_span(clip);
    let times: Vec<f64> = (0..DENSE)
        .map(|i| t0 + (t1 - t0) * i as f64 / (DENSE - 1) as f64)
        .collect();
    let instances = crate::source::instances(a, &times);
    let values = engine.sample(backend, &instances)?;
    let stride = lib.output_stride() as usize;

    let cols = ((n as f64 * 1.5).sqrt().ceil() as usize)
        .clamp(1, 6)
        .min(n.max(1));
    let rows = n.div_ceil(cols).max(1);
    let heading = format!(
        "{}  animation {a} {:?}  {} channels  t = {} .. {} s  ({})",
        source.name,
        clip.name,
        n,
        tick(t0, t1 - t0),
        tick(t1, t1 - t0),
        backend.name()
    );
    // DejaVu Sans at 15 px averages under 9 px a character.
    let heading_w = heading.chars().count() * 9 + 12;
    let (w, h) = (
        (cols * PANEL_W).max(heading_w.min(4096)),
        HEADER_H + rows * PANEL_H,
    );
    let mut rgb = vec![0u8; w * h * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w as u32, h as u32)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let (top, body) = root.split_vertically(HEADER_H as u32);
        top.draw_text(&heading, &(FONT, 15).into_font().color(&TEXT), (8, 7))
            .map_err(draw_error)?;
        let panels = body.split_evenly((rows, cols));
        for ((j, track), area) in clip.tracks.iter().enumerate().zip(&panels) {
            let (offset, width) = lib.track_output(a as u32, j as u32).unwrap_or((0, 0));
            let panel = Panel {
                title: format!("#{j} {} {}", source.label(a, j), track.interpolation),
                times: &times,
                series: channel_series(&values, stride, offset as usize, width as usize),
                keys: key_values(track, width as usize),
                width: width as usize,
                span: (t0, t1),
            };
            draw_panel(area, &panel)?;
        }
        root.present().map_err(draw_error)?;
    }
    save_png(path, w as u32, h as u32, &rgb)?;
    Ok(())
}

/// The times a chart spans: from its first key to the clip's end, or a
/// second around the end for a clip with no span.
fn time_span(clip: &keyframe_gpu::Clip) -> (f64, f64) {
    let start = clip
        .tracks
        .iter()
        .filter_map(|t| t.times.first().copied())
        .fold(f32::INFINITY, f32::min);
    let end = clip.duration();
    if start.is_finite() && end > start {
        (f64::from(start), f64::from(end))
    } else {
        (f64::from(end) - 0.5, f64::from(end) + 0.5)
    }
}

/// One channel's samples: per dense time, its `width` values at `offset`
/// of each `stride`-float sample (empty where out of range).
fn channel_series(values: &[f32], stride: usize, offset: usize, width: usize) -> Vec<&[f32]> {
    (0..DENSE)
        .map(|i| {
            let s = i * stride + offset;
            values.get(s..s + width).unwrap_or_default()
        })
        .collect()
}

/// A track's keys: per key its time and value element (never a tangent).
fn key_values(track: &keyframe_gpu::Track, width: usize) -> Vec<(f64, &[f32])> {
    let per_key = track.interpolation.elements_per_key();
    let value_el = if per_key == 3 { 1 } else { 0 };
    track
        .times
        .iter()
        .enumerate()
        .map(|(k, &t)| {
            let s = (k * per_key + value_el) * width;
            (
                f64::from(t),
                track.values.get(s..s + width).unwrap_or_default(),
            )
        })
        .collect()
}

/// What one channel's panel shows.
struct Panel<'a> {
    title: String,
    /// The dense sample times.
    times: &'a [f64],
    /// Per dense time, the channel's values.
    series: Vec<&'a [f32]>,
    /// Per key, its time and value.
    keys: Vec<(f64, &'a [f32])>,
    /// Components of the channel.
    width: usize,
    /// The time axis, first to last.
    span: (f64, f64),
}

/// Draws `panel` into `area`: axes, key lines, one line per component and
/// (few keys) the keys marked.
fn draw_panel(
    area: &DrawingArea<BitMapBackend<'_>, Shift>,
    panel: &Panel<'_>,
) -> Result<(), Failure> {
    let (t0, t1) = panel.span;
    let (series, keys) = (&panel.series, &panel.keys);
    let (lo, hi) = series
        .iter()
        .flat_map(|s| s.iter())
        .chain(keys.iter().flat_map(|k| k.1.iter()))
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(f64::from(v)), hi.max(f64::from(v)))
        });
    let (lo, hi) = value_range(lo, hi);
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, 14).into_font().color(&TEXT))
        .margin(6)
        .margin_right(16)
        .x_label_area_size(22)
        .y_label_area_size(62)
        .build_cartesian_2d(t0..t1, lo..hi)
        .map_err(draw_error)?;
    let x_label = |t: &f64| tick(*t, t1 - t0);
    let y_label = |v: &f64| tick(*v, hi - lo);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .max_light_lines(0)
        .axis_style(FRAME)
        .x_labels(5)
        .y_labels(5)
        .label_style((FONT, 12).into_font().color(&TEXT))
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .draw()
        .map_err(draw_error)?;
    // Keys: grid lines, or (many keys: baked clips) ticks on the
    // time axis and no markers.
    let sparse_keys = keys.len() <= 40;
    let key_top = if sparse_keys {
        hi
    } else {
        lo + (hi - lo) * 0.03
    };
    let key_style = if sparse_keys { GRID } else { FRAME };
    chart
        .draw_series(
            keys.iter()
                .map(|&(t, _)| PathElement::new(vec![(t, lo), (t, key_top)], key_style)),
        )
        .map_err(draw_error)?;
    for c in 0..panel.width {
        let color = PALETTE[c % PALETTE.len()];
        let line = panel
            .times
            .iter()
            .zip(series)
            .filter_map(|(&t, v)| v.get(c).map(|&v| (t, f64::from(v))));
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))
            .map_err(draw_error)?;
        if sparse_keys {
            let marks = keys
                .iter()
                .filter_map(|&(t, v)| v.get(c).map(|&v| (t, f64::from(v))));
            chart
                .draw_series(marks.map(|p| Circle::new(p, 3, color.filled())))
                .map_err(draw_error)?;
        }
    }
    Ok(())
}

fn draw_error(e: impl std::fmt::Display) -> Failure {
    Failure::Message(format!("drawing the chart: {e}"))
}

/// A tick label for `v` on an axis spanning `span`: enough decimals to tell
/// neighbouring ticks apart, trailing zeros dropped.
fn tick(v: f64, span: f64) -> String {
    let decimals = if span > 0.0 && span.is_finite() {
        (-(span / 10.0).log10()).ceil().clamp(0.0, 9.0) as usize
    } else {
        3
    };
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        &s
    };
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::{tick, value_range};

    fn assert_sane((lo, hi): (f64, f64)) {
        assert!(lo.is_finite() && hi.is_finite() && lo < hi, "{lo} .. {hi}");
    }

    #[test]
    fn constant_channel_is_centred() {
        let (lo, hi) = value_range(1.0, 1.0);
        assert!(
            (lo - 0.9).abs() < 1e-12 && (hi - 1.1).abs() < 1e-12,
            "{lo} {hi}"
        );
        let (lo, hi) = value_range(-5.0, -5.0);
        assert!(
            (lo + 5.5).abs() < 1e-12 && (hi + 4.5).abs() < 1e-12,
            "{lo} {hi}"
        );
        // Zero: the absolute floor keeps the range open.
        assert_eq!(value_range(0.0, 0.0), (-1e-3, 1e-3));
        assert_eq!(value_range(1e-9, 1e-9), (1e-9 - 1e-3, 1e-9 + 1e-3));
    }

    #[test]
    fn rounding_noise_is_constant() {
        // RiggedFigure's node 17 scale: a constant 1 read back as f32 noise.
        let (a, b) = (f64::from(0.99999994f32), 1.0);
        let (lo, hi) = value_range(a, b);
        assert_sane((lo, hi));
        // The noise spans a millionth of the panel: drawn flat, in the middle.
        assert!((b - a) / (hi - lo) < 1e-5);
        assert!(((a + b) / 2.0 - (lo + hi) / 2.0).abs() < 1e-12);
        assert!(hi - lo > 0.19, "{lo} {hi}");
        // Tick labels along it are distinct.
        let labels: Vec<String> = (0..5)
            .map(|i| tick(lo + (hi - lo) * f64::from(i) / 4.0, hi - lo))
            .collect();
        let mut unique = labels.clone();
        unique.dedup();
        assert_eq!(unique, labels);
        let (lo, hi) = value_range(-f64::from(100.00001f32), -100.0);
        assert!(hi - lo > 19.0, "{lo} {hi}");
    }

    #[test]
    fn normal_ranges_are_padded() {
        let (lo, hi) = value_range(0.0, 2.0);
        assert!(
            (lo + 0.12).abs() < 1e-12 && (hi - 2.12).abs() < 1e-12,
            "{lo} {hi}"
        );
        let (lo, hi) = value_range(-3.0, -1.0);
        assert!(
            (lo + 3.12).abs() < 1e-12 && (hi + 0.88).abs() < 1e-12,
            "{lo} {hi}"
        );
        // A small but real motion is not taken for noise.
        let (lo, hi) = value_range(1.0, 1.001);
        assert!(lo > 0.999 && hi < 1.002, "{lo} {hi}");
    }

    #[test]
    fn no_finite_values_give_a_default() {
        assert_eq!(value_range(f64::INFINITY, f64::NEG_INFINITY), (-1.0, 1.0));
        assert_eq!(value_range(f64::NAN, 1.0), (-1.0, 1.0));
        for (lo, hi) in [
            (0.0, 0.0),
            (-1e30, 1e30),
            (f64::MIN_POSITIVE, 1.0),
            (-7.0, 7.0),
        ] {
            assert_sane(value_range(lo, hi));
        }
    }

    #[test]
    fn tick_labels() {
        assert_eq!(tick(1.0, 0.2), "1");
        assert_eq!(tick(0.95, 0.2), "0.95");
        assert_eq!(tick(-0.0001, 2.0), "0");
        assert_eq!(tick(250.0, 1000.0), "250");
    }
}
