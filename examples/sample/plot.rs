//! `--plot`: a PNG chart of every channel of an animation over the clip,
//! densely sampled, with the keys marked.

use std::path::{Path, PathBuf};

use keyframe_gpu::{Instance, WrapMode};

use crate::args::Backend;
use crate::canvas::{Canvas, FRAME, GRID, PALETTE, TEXT, WHITE};
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
const PANEL_W: usize = 360;
const PANEL_H: usize = 210;
/// Samples over the clip.
const DENSE: usize = 480;

/// Samples animation `a` at `DENSE` times over its clip on `backend` and
/// writes the chart to `path`.
pub fn plot(
    source: &Source,
    a: usize,
    backend: Backend,
    engine: &mut Engine<'_>,
    path: &Path,
) -> Result<(), Failure> {
    let lib = &source.library;
    let clip = &lib.clips()[a];
    let n = clip.tracks.len();
    let start = clip
        .tracks
        .iter()
        .filter_map(|t| t.times.first().copied())
        .fold(f32::INFINITY, f32::min);
    let end = clip.duration();
    let (t0, t1) = if start.is_finite() && end > start {
        (f64::from(start), f64::from(end))
    } else {
        (f64::from(end) - 0.5, f64::from(end) + 0.5)
    };
    let times: Vec<f64> = (0..DENSE)
        .map(|i| t0 + (t1 - t0) * i as f64 / (DENSE - 1) as f64)
        .collect();
    let instances: Vec<Instance> = times
        .iter()
        .map(|&t| Instance::new(a as u32, t).with_wrap(WrapMode::Clamp))
        .collect();
    let values = engine.sample(backend, &instances)?;
    let stride = lib.output_stride() as usize;

    let cols = ((n as f64 * 1.5).sqrt().ceil() as usize)
        .clamp(1, 6)
        .min(n.max(1));
    let rows = n.div_ceil(cols);
    let header = 24usize;
    let heading = format!(
        "{}  animation {a} {:?}  {} channels  t = {} .. {} s  ({})",
        source.name,
        clip.name,
        n,
        short(t0),
        short(t1),
        backend.name()
    );
    let heading_w = Canvas::text_width(&heading, 2) as usize + 12;
    let mut canvas = Canvas::new(
        (cols * PANEL_W).max(heading_w.min(4096)),
        header + rows * PANEL_H,
        WHITE,
    );
    canvas.text(6, 6, &heading, 2, TEXT);
    for (j, track) in clip.tracks.iter().enumerate() {
        let (offset, width) = lib.track_output(a, j).unwrap_or((0, 0));
        let width = width as usize;
        let series: Vec<&[f32]> = (0..DENSE)
            .map(|i| {
                let s = i * stride + offset as usize;
                values.get(s..s + width).unwrap_or_default()
            })
            .collect();
        // Keys: the value element of each key (never a tangent).
        let per_key = track.interpolation.elements_per_key();
        let value_el = if per_key == 3 { 1 } else { 0 };
        let keys: Vec<(f32, &[f32])> = track
            .times
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let s = (k * per_key + value_el) * width;
                (t, track.values.get(s..s + width).unwrap_or_default())
            })
            .collect();
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for v in series
            .iter()
            .flat_map(|s| s.iter())
            .chain(keys.iter().flat_map(|k| k.1.iter()))
        {
            if v.is_finite() {
                lo = lo.min(*v);
                hi = hi.max(*v);
            }
        }
        if !(lo.is_finite() && hi.is_finite()) {
            (lo, hi) = (-1.0, 1.0);
        }
        if hi - lo < 1e-6 {
            (lo, hi) = (lo - 0.5, hi + 0.5);
        }
        let pad = (hi - lo) * 0.06;
        let (lo, hi) = (f64::from(lo - pad), f64::from(hi + pad));

        let px = (j % cols) * PANEL_W;
        let py = header + (j / cols) * PANEL_H;
        let (left, right) = (px as f64 + 60.0, (px + PANEL_W) as f64 - 10.0);
        let (top, bottom) = (py as f64 + 26.0, (py + PANEL_H) as f64 - 22.0);
        let x_of = |t: f64| left + (t - t0) / (t1 - t0) * (right - left);
        let y_of = |v: f64| bottom - (v - lo) / (hi - lo) * (bottom - top);
        let title = format!(
            "#{j} node {} {} {}",
            track.node,
            track.property.as_gltf_str(),
            track.interpolation.as_gltf_str()
        );
        canvas.text(px as i64 + 6, py as i64 + 6, &title, 2, TEXT);
        // Many keys (baked clips): thin ticks instead of grid lines and boxes.
        let sparse_keys = keys.len() <= 40;
        if lo < 0.0 && hi > 0.0 {
            canvas.line_f(left, y_of(0.0), right, y_of(0.0), GRID);
        }
        for &(t, _) in &keys {
            let x = x_of(f64::from(t));
            if sparse_keys && x >= left && x <= right {
                canvas.line_f(x, top, x, bottom, GRID);
            } else if x >= left && x <= right {
                canvas.line_f(x, bottom - 4.0, x, bottom, FRAME);
            }
        }
        canvas.rect(left as i64, top as i64, right as i64, bottom as i64, FRAME);
        canvas.text(px as i64 + 4, top as i64, &short(hi), 2, TEXT);
        canvas.text(px as i64 + 4, bottom as i64 - 10, &short(lo), 2, TEXT);
        canvas.text(left as i64, bottom as i64 + 6, &short(t0), 2, TEXT);
        let t1s = short(t1);
        canvas.text(
            right as i64 - Canvas::text_width(&t1s, 2),
            bottom as i64 + 6,
            &t1s,
            2,
            TEXT,
        );
        for c in 0..width {
            let color = PALETTE[c % PALETTE.len()];
            for i in 1..DENSE {
                let (Some(&v0), Some(&v1)) = (series[i - 1].get(c), series[i].get(c)) else {
                    continue;
                };
                canvas.line_f(
                    x_of(times[i - 1]),
                    y_of(f64::from(v0)),
                    x_of(times[i]),
                    y_of(f64::from(v1)),
                    color,
                );
            }
            for &(t, v) in &keys {
                if let Some(&v) = v.get(c).filter(|_| sparse_keys) {
                    canvas.marker(x_of(f64::from(t)), y_of(f64::from(v)), color);
                }
            }
        }
    }
    canvas.save_png(path)?;
    Ok(())
}

/// A short label for an axis value.
fn short(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}
