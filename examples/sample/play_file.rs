//! PLAY.json, the script of `--play`: how many characters, which node's
//! motion to report, markers, and per frame a time step and commands.
//!
//! `{"instances": N, "root": "NODE NAME", "markers": [{"animation": I,
//! "time": T, "name": S}], "frames": [{"dt": DT, "commands":
//! [{"instance": K, ...}]}]}`. A command's fields (each optional but
//! `instance`), applied in this order: `"play": I`, `"crossfade": {"to":
//! I, "duration": D}`, `"crossfade_at": {"to": I, "duration": D, "at":
//! T}`, `"fade_in": {"animation": I, "duration": D}`, `"fade_out":
//! {"animation": I, "duration": D}`, `"wrap": "once"|"repeat"|"pingpong"`
//! and `"repetitions": N|null` (the action started last, or every action
//! of `"animation": I` when the command names it), `"speed": X`,
//! `"pause": true|false`, `"seek": T`, `"layer": {"animation": I,
//! "weight": W, "mode": "mix"|"additive"|"override", "mask": {"subtrees":
//! ["NODE NAME", ...]}}` (adds or updates that animation's layer; weight
//! 1, mode "mix" and no mask by default) and `"remove": I` (its layer).
//! Blend spaces: `"blend_spaces": [{"name": S, "mode": "1d" | "cartesian"
//! | "directional", "clips": [{"animation": I, "at": [x] or [x, y]}],
//! "smoothing": W_PER_S or null, "sync": "none" | "phase" | "markers"}]`
//! (`smoothing` and `sync` optional: null, "none"), and a command's
//! `"blend_space": S, "params": [x] or [x, y]` (one number for "1d", two
//! otherwise), with `"duration": D` when the character is not playing that
//! space yet: it crossfades into it over `D` (at once without), applied
//! after the command's other fields. `root`, `markers`, `blend_spaces`
//! and `commands` are optional. Anything malformed is refused with one
//! line naming the frame, the command and the field.

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

/// How a layer blends over the base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Weighed among the base's actions.
    Mix,
    /// Added on top, relative to its clip's first frame.
    Additive,
    /// Replacing the base by its weight, on its mask's nodes.
    Override,
}

impl Mode {
    /// Its name in PLAY.json and the output.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Mix => "mix",
            Mode::Additive => "additive",
            Mode::Override => "override",
        }
    }
}

/// A marker of an animation.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkerSpec {
    pub animation: u32,
    pub time: f64,
    pub name: String,
}

/// A layer command: the animation, its weight, mode and mask (the
/// subtrees of the named nodes).
#[derive(Debug, Clone, PartialEq)]
pub struct LayerSpec {
    pub animation: u32,
    pub weight: f32,
    pub mode: Mode,
    pub subtrees: Option<Vec<String>>,
}

/// A crossfade: to, duration and (crossfade_at) the incoming clip time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrossfadeSpec {
    pub to: u32,
    pub duration: f64,
    pub at: Option<f64>,
}

/// How a blend space weighs its clips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceMode {
    OneD,
    Cartesian,
    Directional,
}

/// How a blend space's clips keep in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpaceSync {
    None,
    Phase,
    Markers,
}

/// A blend space: its name, mode, clips at their points, smoothing and
/// sync.
#[derive(Debug, Clone, PartialEq)]
pub struct SpaceSpec {
    pub name: String,
    pub mode: SpaceMode,
    /// (animation, point; `[x, 0]` for "1d").
    pub clips: Vec<(u32, [f32; 2])>,
    pub smoothing: Option<f32>,
    pub sync: SpaceSync,
}

/// A blend-space command: the space (its index in `blend_spaces`), its
/// parameters (`[x, 0]` for "1d") and the duration of the crossfade into
/// it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlendSpec {
    pub space: usize,
    pub params: [f32; 2],
    pub duration: Option<f64>,
}

/// One command of a frame, for one character.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommandSpec {
    pub instance: u32,
    pub play: Option<u32>,
    pub crossfade: Option<CrossfadeSpec>,
    pub crossfade_at: Option<CrossfadeSpec>,
    /// (animation, duration).
    pub fade_in: Option<(u32, f64)>,
    pub fade_out: Option<(u32, f64)>,
    /// What `wrap` and `repetitions` apply to (`None`: the action started
    /// last).
    pub animation: Option<u32>,
    pub wrap: Option<Wrap>,
    /// `Some(None)`: unlimited.
    pub repetitions: Option<Option<u64>>,
    pub speed: Option<f64>,
    pub pause: Option<bool>,
    pub seek: Option<f64>,
    pub layer: Option<LayerSpec>,
    pub remove: Option<u32>,
    pub blend: Option<BlendSpec>,
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
    pub blend_spaces: Vec<SpaceSpec>,
    pub frames: Vec<FrameSpec>,
}

impl PlayFile {
    /// Every distinct mask its layers name (their subtree lists), in the
    /// order they first appear.
    pub fn masks(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        let named = self.frames.iter().flat_map(|f| &f.commands);
        for s in named.filter_map(|c| c.layer.as_ref()?.subtrees.as_ref()) {
            if !out.contains(s) {
                out.push(s.clone());
            }
        }
        out
    }
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
        &["instances", "root", "markers", "blend_spaces", "frames"],
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
    let markers = markers(root.get("markers"), &animation)?;
    let blend_spaces = blend_spaces(root.get("blend_spaces"), &animation)?;
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
                    let mut cmd = command(v, instances, &animation).map_err(at)?;
                    cmd.blend = blend_command(v, &blend_spaces).map_err(at)?;
                    commands.push(cmd);
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
        blend_spaces,
        frames,
    })
}

type Animation<'a> = &'a dyn Fn(&Value, &str) -> Result<u32, String>;

fn markers(v: Option<&Value>, animation: Animation<'_>) -> Result<Vec<MarkerSpec>, String> {
    let mut markers = Vec::new();
    match v {
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
    Ok(markers)
}

/// The fields a command may have, in the order they apply.
const COMMAND_FIELDS: [&str; 17] = [
    "instance",
    "play",
    "crossfade",
    "crossfade_at",
    "fade_in",
    "fade_out",
    "animation",
    "wrap",
    "repetitions",
    "speed",
    "pause",
    "seek",
    "layer",
    "remove",
    "blend_space",
    "params",
    "duration",
];

fn command(v: &Value, instances: u32, animation: Animation<'_>) -> Result<CommandSpec, String> {
    let Some(obj) = v.as_object() else {
        return Err("not an object".into());
    };
    known_fields(obj, &COMMAND_FIELDS, "the command")?;
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
    if let Some(v) = obj.get("crossfade") {
        cmd.crossfade = Some(crossfade(v, "crossfade", animation)?);
    }
    if let Some(v) = obj.get("crossfade_at") {
        cmd.crossfade_at = Some(crossfade(v, "crossfade_at", animation)?);
    }
    if let Some(v) = obj.get("fade_in") {
        cmd.fade_in = Some(fade(v, "fade_in", animation)?);
    }
    if let Some(v) = obj.get("fade_out") {
        cmd.fade_out = Some(fade(v, "fade_out", animation)?);
    }
    if let Some(v) = obj.get("animation") {
        cmd.animation = Some(animation(v, "animation")?);
    }
    if let Some(v) = obj.get("wrap") {
        cmd.wrap = Some(wrap(v)?);
    }
    if let Some(v) = obj.get("repetitions") {
        cmd.repetitions =
            Some(match v {
                Value::Null => None,
                v => Some(v.as_u64().ok_or_else(|| {
                    format!("\"repetitions\" is not an integer >= 0 or null: {v}")
                })?),
            });
    }
    if cmd.animation.is_some() && cmd.wrap.is_none() && cmd.repetitions.is_none() {
        return Err(
            "\"animation\" names what \"wrap\" or \"repetitions\" apply to, and neither is given"
                .into(),
        );
    }
    rest_of_command(obj, &mut cmd, animation)?;
    Ok(cmd)
}

/// A command's speed, pause, seek, layer and remove.
fn rest_of_command(
    obj: &Map<String, Value>,
    cmd: &mut CommandSpec,
    animation: Animation<'_>,
) -> Result<(), String> {
    if let Some(v) = obj.get("speed") {
        cmd.speed = Some(finite(v, "speed")?);
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
    if let Some(v) = obj.get("layer") {
        cmd.layer = Some(layer(v, animation)?);
    }
    if let Some(v) = obj.get("remove") {
        cmd.remove = Some(animation(v, "remove")?);
    }
    Ok(())
}

fn wrap(v: &Value) -> Result<Wrap, String> {
    match v.as_str() {
        Some("once") => Ok(Wrap::Once),
        Some("repeat") => Ok(Wrap::Repeat),
        Some("pingpong") => Ok(Wrap::PingPong),
        _ => Err(format!(
            "\"wrap\" is not \"once\", \"repeat\" or \"pingpong\": {v}"
        )),
    }
}

/// A duration `> 0`.
fn duration(obj: &Map<String, Value>) -> Result<f64, String> {
    let d = finite(field(obj, "duration")?, "duration")?;
    if d <= 0.0 {
        return Err(format!("\"duration\" {d} is not > 0"));
    }
    Ok(d)
}

/// `{"to": I, "duration": D}`, with `"at": T` for `crossfade_at`.
fn crossfade(v: &Value, name: &str, animation: Animation<'_>) -> Result<CrossfadeSpec, String> {
    let Some(fade) = v.as_object() else {
        return Err(format!("\"{name}\" is not an object: {v}"));
    };
    let at = name == "crossfade_at";
    let fields: &[&str] = if at {
        &["to", "duration", "at"]
    } else {
        &["to", "duration"]
    };
    known_fields(fade, fields, &format!("\"{name}\""))?;
    Ok(CrossfadeSpec {
        to: animation(field(fade, "to")?, "to")?,
        duration: duration(fade)?,
        at: if at {
            Some(finite(field(fade, "at")?, "at")?)
        } else {
            None
        },
    })
}

/// `{"animation": I, "duration": D}`.
fn fade(v: &Value, name: &str, animation: Animation<'_>) -> Result<(u32, f64), String> {
    let Some(fade) = v.as_object() else {
        return Err(format!("\"{name}\" is not an object: {v}"));
    };
    known_fields(fade, &["animation", "duration"], &format!("\"{name}\""))?;
    Ok((
        animation(field(fade, "animation")?, "animation")?,
        duration(fade)?,
    ))
}

fn layer(v: &Value, animation: Animation<'_>) -> Result<LayerSpec, String> {
    let Some(obj) = v.as_object() else {
        return Err(format!("\"layer\" is not an object: {v}"));
    };
    known_fields(obj, &["animation", "weight", "mode", "mask"], "\"layer\"")?;
    let weight = match obj.get("weight") {
        None => 1.0,
        Some(v) => finite(v, "weight")?,
    };
    if weight < 0.0 || weight > f64::from(f32::MAX) {
        return Err(format!("\"weight\" {weight} is not a finite number >= 0"));
    }
    let mode = match obj.get("mode").map(|m| (m, m.as_str())) {
        None | Some((_, Some("mix"))) => Mode::Mix,
        Some((_, Some("additive"))) => Mode::Additive,
        Some((_, Some("override"))) => Mode::Override,
        Some((m, _)) => {
            return Err(format!(
                "\"mode\" is not \"mix\", \"additive\" or \"override\": {m}"
            ))
        }
    };
    let subtrees = match obj.get("mask") {
        None | Some(Value::Null) => None,
        Some(Value::Object(mask)) => {
            known_fields(mask, &["subtrees"], "\"mask\"")?;
            let list = match field(mask, "subtrees")? {
                Value::Array(list) => list,
                v => return Err(format!("\"subtrees\" is not an array of node names: {v}")),
            };
            let names = list
                .iter()
                .map(|n| n.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
                .ok_or_else(|| format!("\"subtrees\" is not an array of node names: {list:?}"))?;
            Some(names)
        }
        Some(v) => return Err(format!("\"mask\" is not an object: {v}")),
    };
    Ok(LayerSpec {
        animation: animation(field(obj, "animation")?, "animation")?,
        weight: weight as f32,
        mode,
        subtrees,
    })
}

/// `"blend_spaces"`: each space's name (unique), mode, clips (an
/// animation and a point of as many numbers as the mode has parameters),
/// smoothing and sync.
fn blend_spaces(v: Option<&Value>, animation: Animation<'_>) -> Result<Vec<SpaceSpec>, String> {
    let list = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(v) => return Err(format!("\"blend_spaces\" is not an array: {v}")),
    };
    let mut spaces: Vec<SpaceSpec> = Vec::with_capacity(list.len());
    for (k, v) in list.iter().enumerate() {
        let at = |e: String| format!("blend space {k}: {e}");
        let Some(obj) = v.as_object() else {
            return Err(at("not an object".into()));
        };
        let fields = ["name", "mode", "clips", "smoothing", "sync"];
        known_fields(obj, &fields, "the blend space").map_err(at)?;
        let name = match field(obj, "name").map_err(at)? {
            Value::String(s) if !spaces.iter().any(|o| o.name == *s) => s.clone(),
            Value::String(s) => return Err(at(format!("\"name\" {s:?} is another space's"))),
            v => return Err(at(format!("\"name\" is not a string: {v}"))),
        };
        let at = |e: String| format!("blend space {name:?}: {e}");
        let mode = match field(obj, "mode").map_err(at)?.as_str() {
            Some("1d") => SpaceMode::OneD,
            Some("cartesian") => SpaceMode::Cartesian,
            Some("directional") => SpaceMode::Directional,
            _ => {
                return Err(at(format!(
                    "\"mode\" is not \"1d\", \"cartesian\" or \"directional\": {}",
                    obj["mode"]
                )))
            }
        };
        let sync = match obj.get("sync").map(|s| (s, s.as_str())) {
            None | Some((Value::Null, _)) | Some((_, Some("none"))) => SpaceSync::None,
            Some((_, Some("phase"))) => SpaceSync::Phase,
            Some((_, Some("markers"))) => SpaceSync::Markers,
            Some((s, _)) => {
                return Err(at(format!(
                    "\"sync\" is not \"none\", \"phase\" or \"markers\": {s}"
                )))
            }
        };
        let smoothing = match obj.get("smoothing") {
            None | Some(Value::Null) => None,
            Some(v) => Some(finite(v, "smoothing").map_err(at)? as f32),
        };
        let Value::Array(list) = field(obj, "clips").map_err(at)? else {
            return Err(at(format!("\"clips\" is not an array: {}", obj["clips"])));
        };
        let mut clips = Vec::with_capacity(list.len());
        for (c, v) in list.iter().enumerate() {
            let at = |e: String| at(format!("clip {c}: {e}"));
            let Some(clip) = v.as_object() else {
                return Err(at("not an object".into()));
            };
            known_fields(clip, &["animation", "at"], "the clip").map_err(at)?;
            let a = animation(field(clip, "animation").map_err(at)?, "animation").map_err(at)?;
            let point = numbers(field(clip, "at").map_err(at)?, "at", mode).map_err(at)?;
            clips.push((a, point));
        }
        spaces.push(SpaceSpec {
            name,
            mode,
            clips,
            smoothing,
            sync,
        });
    }
    Ok(spaces)
}

/// `[x]` ("1d") or `[x, y]`, finite, as `[x, y]` (`y` 0 for "1d").
fn numbers(v: &Value, name: &str, mode: SpaceMode) -> Result<[f32; 2], String> {
    let want = if mode == SpaceMode::OneD { 1 } else { 2 };
    let list = match v {
        Value::Array(list) if list.len() == want => list,
        _ => {
            return Err(format!(
                "\"{name}\" is not an array of {want} number{}: {v}",
                if want == 1 { "" } else { "s" }
            ))
        }
    };
    let mut out = [0.0f32; 2];
    for (o, v) in out.iter_mut().zip(list) {
        let x = finite(v, name)?;
        if x.abs() > f64::from(f32::MAX) {
            return Err(format!("\"{name}\" is not a finite number: {v}"));
        }
        *o = x as f32;
    }
    Ok(out)
}

/// A command's `"blend_space"`, `"params"` and `"duration"`.
fn blend_command(v: &Value, spaces: &[SpaceSpec]) -> Result<Option<BlendSpec>, String> {
    let Some(obj) = v.as_object() else {
        return Ok(None);
    };
    let Some(name) = obj.get("blend_space") else {
        if let Some(k) = ["params", "duration"]
            .iter()
            .find(|k| obj.contains_key(**k))
        {
            return Err(format!(
                "\"{k}\" belongs to a \"blend_space\" command, and none is given"
            ));
        }
        return Ok(None);
    };
    let space = spaces
        .iter()
        .position(|s| Some(s.name.as_str()) == name.as_str())
        .ok_or_else(|| format!("\"blend_space\" names no blend space: {name}"))?;
    let params = numbers(field(obj, "params")?, "params", spaces[space].mode)?;
    let duration = match obj.get("duration") {
        None => None,
        Some(_) => Some(duration(obj)?),
    };
    Ok(Some(BlendSpec {
        space,
        params,
        duration,
    }))
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
