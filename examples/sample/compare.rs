//! `--compare`: GPU against the CPU reference, the largest error per
//! channel (or per skin with `--joints`), and the verdict against `--tol`.

use std::io::Write;

use crate::mix::SkinJoints;
use keyframe_gpu::AnimationLibrary;
use keyframe_gpu::Rig;

use crate::Failure;

/// A comparison's report, and whether an error exceeded the tolerance.
pub struct Verdict {
    /// The report, one line per channel or skin, ending with
    /// `max_abs_err=... tol=... ok|FAIL`.
    pub text: String,
    pub failed: bool,
}

impl Verdict {
    /// Prints the report: to stderr with `--json` (stdout is reserved for
    /// the JSON), else to `out`.
    pub fn print(&self, json: bool, out: &mut impl Write) -> Result<(), Failure> {
        if json {
            eprint!("{}", self.text);
        } else {
            write!(out, "{}", self.text)?;
        }
        Ok(())
    }
}

fn exceeds(e: f32, tol: f32) -> bool {
    e.is_nan() || e > tol
}

fn last_line(worst: f32, tol: f32, failed: bool) -> String {
    format!(
        "max_abs_err={worst:e} tol={tol:e} {}\n",
        if failed { "FAIL" } else { "ok" }
    )
}

/// Animation `a`'s channels sampled at `times` times on the GPU (`gpu`)
/// and the CPU (`cpu`).
pub fn channels(
    source: &crate::source::Source,
    a: usize,
    times: usize,
    gpu: &[f32],
    cpu: &[f32],
    tol: f32,
) -> Verdict {
    let library = &source.library;
    let clip = &library.clips()[a];
    let clips = vec![a as u32; times];
    let report = crate::track_diff::compare(library, &clips, gpu, cpu);
    let worst = report.max_abs_err();
    let failed = report.tracks.iter().any(|t| exceeds(t.max_abs_err, tol));
    let mut text = String::new();
    text.push_str(&format!(
        "animation {a} ({:?}): {} channel(s), {} time(s), GPU vs CPU\n",
        clip.name,
        clip.tracks.len(),
        times
    ));
    text.push_str("  ch   node  path         interp       max_abs_err\n");
    for t in &report.tracks {
        let track = &clip.tracks[t.track];
        let flag = if exceeds(t.max_abs_err, tol) {
            "  > tol"
        } else {
            ""
        };
        let node = match source.node(a, t.track) {
            Some(n) if track.property != keyframe_gpu::Property::Pointer => n.to_string(),
            _ => "-".to_string(),
        };
        text.push_str(&format!(
            "  {:<4} {:<5} {:<12} {:<12} {:.3e}{flag}\n",
            t.track,
            node,
            track.property.to_string(),
            track.interpolation.to_string(),
            t.max_abs_err
        ));
    }
    text.push_str(&last_line(worst, tol, failed));
    Verdict { text, failed }
}

/// Animation `a`'s joint matrices at `times` times on the GPU (`gpu`) and
/// the CPU (`cpu`), per skin of `rig`.
pub fn skins(
    rig: &Rig,
    library: &AnimationLibrary,
    a: usize,
    times: usize,
    gpu: &[Vec<SkinJoints>],
    cpu: &[Vec<SkinJoints>],
    tol: f32,
) -> Verdict {
    let clip = &library.clips()[a];
    let errors = skin_errors(rig.skins().len(), gpu, cpu);
    let failed = errors.iter().any(|&e| exceeds(e, tol));
    let worst = errors.iter().copied().fold(0.0f32, |m, e| {
        if e.is_nan() || m.is_nan() {
            f32::NAN
        } else {
            m.max(e)
        }
    });
    let mut text = format!(
        "animation {a} ({:?}): {} skin(s), {} time(s), joint matrices GPU vs CPU\n  skin  node   joints  max_abs_err\n",
        clip.name,
        errors.len(),
        times
    );
    for (s, (e, skin)) in errors.iter().zip(rig.skins()).enumerate() {
        let flag = if exceeds(*e, tol) { "  > tol" } else { "" };
        text.push_str(&format!(
            "  {s:<5} {:<6} {:<7} {e:.3e}{flag}\n",
            skin.mesh_node.map_or_else(|| "-".into(), |n| n.to_string()),
            skin.joints.len()
        ));
    }
    text.push_str(&last_line(worst, tol, failed));
    Verdict { text, failed }
}

/// The largest absolute difference per skin over every time (NaN when a
/// value is not finite or the shapes differ).
fn skin_errors(skins: usize, a: &[Vec<SkinJoints>], b: &[Vec<SkinJoints>]) -> Vec<f32> {
    let mut err = vec![0.0f32; skins];
    if a.len() != b.len() {
        return vec![f32::NAN; skins];
    }
    for (ta, tb) in a.iter().zip(b) {
        for (s, e) in err.iter_mut().enumerate() {
            let (Some(sa), Some(sb)) = (ta.get(s), tb.get(s)) else {
                *e = f32::NAN;
                continue;
            };
            if sa.joints.len() != sb.joints.len() {
                *e = f32::NAN;
                continue;
            }
            for (ma, mb) in sa.joints.iter().zip(&sb.joints) {
                for (x, y) in ma.iter().zip(mb) {
                    let d = (x - y).abs();
                    if d.is_nan() || e.is_nan() {
                        *e = f32::NAN;
                    } else {
                        *e = e.max(d);
                    }
                }
            }
        }
    }
    err
}
