//! PLAY.json, the script of `--play`: how many characters, which node's
//! motion to report, markers, and per frame a time step and commands.
//!
//! `{"instances": N, "root": "NODE NAME", "markers": [{"animation": I,
//! "time": T, "name": S}], "frames": [{"dt": DT, "commands":
//! [{"instance": K, "play": I, "wrap": "repeat"|"once"|"pingpong",
//! "speed": X, "crossfade": {"to": I, "duration": D}, "pause": true,
//! "seek": T}]}]}`. `root`, `markers`, `commands` and every field of a
//! command but `instance` are optional. Anything malformed is refused
//! with one line naming the frame, the command and the field.

use std::path::Path;

use serde_json::{Map, Value};

use crate::Failure;

/// The most characters a PLAY.json may ask for.
pub const MAX_INSTANCES: u64 = 100_000;

/// How a played clip wraps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrap {
    /// Clamps at the ends, then is finished.
    Once,
    /// Loops.
    Repeat,
    /// Loops forth and back.
    PingPong,
}

/// A marker of an animation.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerSpec {
    pub animation: u32,
    pub time: f64,
    pub name: String,
}

/// One command of a frame, for one character.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommandSpec {
    pub instance: u32,
    pub play: Option<u32>,
    pub wrap: Option<Wrap>,
    pub speed: Option<f64>,
    /// (to, duration).
    pub crossfade: Option<(u32, f64)>,
    pub pause: Option<bool>,
    pub seek: Option<f64>,
}

/// One frame: its time step and commands (applied before advancing).
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSpec {
    pub dt: f64,
    pub commands: Vec<CommandSpec>,
}

/// A checked PLAY.json.
#[derive(Debug, Clone, PartialEq)]
pub struct PlayFile {
    pub instances: u32,
    pub root: Option<String>,
    pub markers: Vec<MarkerSpec>,
    pub frames: Vec<FrameSpec>,
}

/// Reads and checks PLAY.json against the number of animations
/// (`clip_count`: the file's, then each `--clips` file's).
pub fn read(path: &Path, clip_count: usize) -> Result<PlayFile, Failure> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Message(format!("--play {shown}: cannot read: {e}")))?;
    parse(&text, clip_count).map_err(|e| Failure::Message(format!("--play {shown}: {e}")))
}

/// [`read`] of a text already in memory.
pub fn parse(text: &str, clip_count: usize) -> Result<PlayFile, String> {
    let root: Value = serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))?;
    let Some(root) = root.as_object() else {
        return Err("the top level is not an object".into());
    };
    known_fields(
        root,
        &["instances", "root", "markers", "frames"],
        "the top level",
    )?;
    let instances = match root.get("instances") {
        Some(v) => match v.as_u64() {
            Some(n) if (1..=MAX_INSTANCES).contains(&n) => n as u32,
            _ => {
                return Err(format!(
                    "\"instances\" is not an integer from 1 to {MAX_INSTANCES}: {v}"
                ))
            }
        },
        None => return Err("\"instances\" is missing".into()),
    };
    let root_node = match root.get("root") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(v) => return Err(format!("\"root\" is not a node name: {v}")),
    };
    let animation = |v: &Value, field: &str| -> Result<u32, String> {
        match v.as_u64() {
            Some(i) if (i as usize) < clip_count => Ok(i as u32),
            Some(i) => Err(format!(
                "\"{field}\" {i} is out of range (there are {clip_count} animations)"
            )),
            None => Err(format!("\"{field}\" is not an animation index: {v}")),
        }
    };
    let mut markers = Vec::new();
    match root.get("markers") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for (m, v) in list.iter().enumerate() {
                let at = |e: String| format!("marker {m}: {e}");
                let Some(obj) = v.as_object() else {
                    return Err(at("not an object".into()));
                };
                known_fields(obj, &["animation", "time", "name"], "the marker").map_err(at)?;
                let a = animation(field(obj, "animation").map_err(at)?, "animation").map_err(at)?;
                let time = finite(field(obj, "time").map_err(at)?, "time").map_err(at)?;
                let name = match field(obj, "name").map_err(at)? {
                    Value::String(s) => s.clone(),
                    v => return Err(at(format!("\"name\" is not a string: {v}"))),
                };
                markers.push(MarkerSpec {
                    animation: a,
                    time,
                    name,
                });
            }
        }
        Some(v) => return Err(format!("\"markers\" is not an array: {v}")),
    }
    let Some(Value::Array(list)) = root.get("frames") else {
        return Err("\"frames\" is missing or not an array".into());
    };
    let mut frames = Vec::with_capacity(list.len());
    for (f, v) in list.iter().enumerate() {
        let at = |e: String| format!("frame {f}: {e}");
        let Some(obj) = v.as_object() else {
            return Err(at("not an object".into()));
        };
        known_fields(obj, &["dt", "commands"], "the frame").map_err(at)?;
        let dt = finite(field(obj, "dt").map_err(at)?, "dt").map_err(at)?;
        if dt < 0.0 {
            return Err(at(format!("\"dt\" {dt} is negative")));
        }
        let mut commands = Vec::new();
        match obj.get("commands") {
            None | Some(Value::Null) => {}
            Some(Value::Array(cmds)) => {
                for (c, v) in cmds.iter().enumerate() {
                    let at = |e: String| format!("frame {f}, command {c}: {e}");
                    commands.push(command(v, instances, &animation).map_err(at)?);
                }
            }
            Some(v) => return Err(at(format!("\"commands\" is not an array: {v}"))),
        }
        frames.push(FrameSpec { dt, commands });
    }
    Ok(PlayFile {
        instances,
        root: root_node,
        markers,
        frames,
    })
}

fn command(
    v: &Value,
    instances: u32,
    animation: &dyn Fn(&Value, &str) -> Result<u32, String>,
) -> Result<CommandSpec, String> {
    let Some(obj) = v.as_object() else {
        return Err("not an object".into());
    };
    known_fields(
        obj,
        &[
            "instance",
            "play",
            "wrap",
            "speed",
            "crossfade",
            "pause",
            "seek",
        ],
        "the command",
    )?;
    let instance = match field(obj, "instance")?.as_u64() {
        Some(k) if k < u64::from(instances) => k as u32,
        _ => {
            return Err(format!(
                "\"instance\" is not an index below \"instances\" ({instances}): {}",
                obj["instance"]
            ))
        }
    };
    let mut cmd = CommandSpec {
        instance,
        ..CommandSpec::default()
    };
    if let Some(v) = obj.get("play") {
        cmd.play = Some(animation(v, "play")?);
    }
    if let Some(v) = obj.get("wrap") {
        cmd.wrap = Some(match v.as_str() {
            Some("once") => Wrap::Once,
            Some("repeat") => Wrap::Repeat,
            Some("pingpong") => Wrap::PingPong,
            _ => {
                return Err(format!(
                    "\"wrap\" is not \"once\", \"repeat\" or \"pingpong\": {v}"
                ))
            }
        });
    }
    if let Some(v) = obj.get("speed") {
        cmd.speed = Some(finite(v, "speed")?);
    }
    if let Some(v) = obj.get("crossfade") {
        let Some(fade) = v.as_object() else {
            return Err(format!("\"crossfade\" is not an object: {v}"));
        };
        known_fields(fade, &["to", "duration"], "\"crossfade\"")?;
        let to = animation(field(fade, "to")?, "to")?;
        let duration = finite(field(fade, "duration")?, "duration")?;
        if duration <= 0.0 {
            return Err(format!("\"duration\" {duration} is not > 0"));
        }
        cmd.crossfade = Some((to, duration));
    }
    if let Some(v) = obj.get("pause") {
        cmd.pause = Some(
            v.as_bool()
                .ok_or_else(|| format!("\"pause\" is not true or false: {v}"))?,
        );
    }
    if let Some(v) = obj.get("seek") {
        cmd.seek = Some(finite(v, "seek")?);
    }
    Ok(cmd)
}

fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> Result<&'a Value, String> {
    obj.get(name)
        .ok_or_else(|| format!("\"{name}\" is missing"))
}

fn finite(v: &Value, name: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!("\"{name}\" is not a finite number: {v}")),
    }
}

/// A field the format does not have is refused (a misspelt "crossfade"
/// would otherwise be silently ignored).
fn known_fields(obj: &Map<String, Value>, known: &[&str], what: &str) -> Result<(), String> {
    match obj.keys().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(format!(
            "{what} has an unknown field \"{k}\" (known: {})",
            known.join(", ")
        )),
        None => Ok(()),
    }
}
