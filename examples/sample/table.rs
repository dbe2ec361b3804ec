//! The human-readable tables: channel values per time, and joint matrices
//! per skin per time.

use std::io::Write;

use crate::mix::SkinJoints;

use crate::json::time_str;
use crate::source::Source;
use crate::Failure;

/// `[  0.00000,   1.00000]`: fixed width, 5 decimals.
pub fn fmt_values(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x:>9.5}")).collect();
    format!("[{}]", parts.join(", "))
}

/// Animation `a`'s channels at each time.
pub fn channels(
    source: &Source,
    a: usize,
    times: &[f64],
    values: &[f32],
    out: &mut impl Write,
) -> Result<(), Failure> {
    let lib = &source.library;
    let clip = &lib.clips()[a];
    let stride = lib.output_stride() as usize;
    writeln!(
        out,
        "animation {a} ({:?}): {} channel(s), keys from {} s to {} s",
        clip.name,
        clip.tracks.len(),
        clip.tracks
            .iter()
            .filter_map(|t| t.times.first().copied())
            .fold(f32::INFINITY, f32::min),
        clip.duration()
    )?;
    for (i, &t) in times.iter().enumerate() {
        writeln!(out, "time {}", time_str(t))?;
        writeln!(out, "  ch   node  path         interp       value")?;
        for (j, track) in clip.tracks.iter().enumerate() {
            let (offset, width) = lib.track_output(a as u32, j as u32).unwrap_or((0, 0));
            let start = i * stride + offset as usize;
            let v = values
                .get(start..start + width as usize)
                .unwrap_or_default();
            match source.pointer(a, j) {
                Some(p) => writeln!(
                    out,
                    "  {:<4} {:<5} {:<12} {:<12} {}  {p}",
                    j,
                    "-",
                    "pointer",
                    track.interpolation.to_string(),
                    fmt_values(v)
                )?,
                None => writeln!(
                    out,
                    "  {:<4} {:<5} {:<12} {:<12} {}",
                    j,
                    source
                        .node(a, j)
                        .map_or_else(|| "-".to_string(), |n| n.to_string()),
                    track.property.to_string(),
                    track.interpolation.to_string(),
                    fmt_values(v)
                )?,
            }
        }
    }
    Ok(())
}

/// Animation `a`'s joint matrices per skin at each time: the largest
/// element and joint 0's matrix.
pub fn joints(
    source: &Source,
    a: usize,
    times: &[f64],
    values: &[Vec<SkinJoints>],
    out: &mut impl Write,
) -> Result<(), Failure> {
    let clip = &source.library.clips()[a];
    writeln!(
        out,
        "animation {a} ({:?}): {} time(s), joint matrices (inverse(global(node)) * global(joint) * inverseBindMatrix)",
        clip.name,
        times.len()
    )?;
    for (i, &t) in times.iter().enumerate() {
        writeln!(out, "time {}", time_str(t))?;
        for skin in values.get(i).map_or(&[][..], Vec::as_slice) {
            let largest = skin
                .joints
                .iter()
                .flat_map(|m| m.iter())
                .fold(0.0f32, |m, x| m.max(x.abs()));
            writeln!(
                out,
                "  skin {}  node {}  {} joint(s)  max|element| {largest:.5}",
                skin.skin,
                skin.node.map_or_else(|| "-".into(), |n| n.to_string()),
                skin.joints.len()
            )?;
            if let Some(m) = skin.joints.first() {
                writeln!(out, "    joint 0 (rows):")?;
                for r in 0..4 {
                    let row: Vec<f32> = (0..4).map(|c| m[4 * c + r]).collect();
                    writeln!(out, "      {}", fmt_values(&row))?;
                }
            }
        }
    }
    Ok(())
}
