//! `--json`: one object per animation and line, channels (or skins) in the
//! file's order. The schemas are in main.rs's doc comment and docs/USAGE.md;
//! tests/cli.rs and tests/cli_joints.rs check them.

use crate::mix::SkinJoints;

use crate::args::Backend;
use crate::source::Source;

/// A number for JSON: the shortest decimal that reads back to the same
/// `f32` (`null` if not finite).
pub fn num32(v: f32) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// A time for JSON: as the `f32` it is when it is one (key times), else as
/// the `f64` that was asked for.
pub fn time_str(t: f64) -> String {
    if f64::from(t as f32) == t {
        num32(t as f32)
    } else {
        format!("{t}")
    }
}

/// The file name as a JSON string.
fn file(source: &Source) -> String {
    serde_json::to_string(&source.name).unwrap_or_else(|_| "\"?\"".into())
}

/// Animation `a`'s channels at each time.
pub fn channels(
    source: &Source,
    a: usize,
    backend: Backend,
    times: &[f64],
    values: &[f32],
) -> String {
    let lib = &source.library;
    let clip = &lib.clips()[a];
    let stride = lib.output_stride() as usize;
    let mut s = String::new();
    s.push_str(&format!(
        "{{\"file\": {}, \"animation\": {a}, \"backend\": \"{}\", \"samples\": [",
        file(source),
        backend.name()
    ));
    for (i, &t) in times.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!("{{\"time\": {}, \"channels\": [", time_str(t)));
        let mut first = true;
        for (j, track) in clip.tracks.iter().enumerate() {
            // A track of a --clips file that binds to no node of FILE
            // poses nothing there: it is left out.
            let node = source.node(a, j);
            let pointer = source.pointer(a, j);
            if node.is_none() && pointer.is_none() {
                continue;
            }
            if !std::mem::take(&mut first) {
                s.push_str(", ");
            }
            let (offset, width) = lib.track_output(a as u32, j as u32).unwrap_or((0, 0));
            let start = i * stride + offset as usize;
            let v = values
                .get(start..start + width as usize)
                .unwrap_or_default();
            let nums: Vec<String> = v.iter().map(|&x| num32(x)).collect();
            match pointer {
                // A KHR_animation_pointer channel: its pointer as written;
                // a bool as [0] or [1], an int as [n], floats as read.
                Some(p) => s.push_str(&format!(
                    "{{\"pointer\": {}, \"value\": [{}]}}",
                    serde_json::to_string(p).unwrap_or_else(|_| "\"?\"".into()),
                    nums.join(", ")
                )),
                None => s.push_str(&format!(
                    "{{\"node\": {}, \"path\": \"{}\", \"value\": [{}]}}",
                    node.unwrap_or_default(),
                    track.property,
                    nums.join(", ")
                )),
            }
        }
        s.push_str("]}");
    }
    s.push_str("]}");
    s
}

/// Animation `a`'s joint matrices per skin at each time.
pub fn joints(source: &Source, a: usize, times: &[f64], values: &[Vec<SkinJoints>]) -> String {
    let mut s = format!(
        "{{\"file\": {}, \"animation\": {a}, \"samples\": [",
        file(source)
    );
    for (i, &t) in times.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&format!("{{\"time\": {}, \"skins\": ", time_str(t)));
        let skins = values.get(i).map_or(&[][..], Vec::as_slice);
        s.push_str(&skins_json(skins));
        s.push('}');
    }
    s.push_str("]}");
    s
}

/// One sample's skins: `[{"skin": 0, "node": 2, "joints": [[16 numbers],
/// ...]}, ...]`.
pub fn skins_json(skins: &[SkinJoints]) -> String {
    let items: Vec<String> = skins
        .iter()
        .map(|skin| {
            let node = skin.node.map_or_else(|| "null".into(), |n| n.to_string());
            let mats: Vec<String> = skin
                .joints
                .iter()
                .map(|m| {
                    let nums: Vec<String> = m.iter().map(|&x| num32(x)).collect();
                    format!("[{}]", nums.join(", "))
                })
                .collect();
            format!(
                "{{\"skin\": {}, \"node\": {node}, \"joints\": [{}]}}",
                skin.skin,
                mats.join(", ")
            )
        })
        .collect();
    format!("[{}]", items.join(", "))
}
