//! `--mix MIX.json`: blended poses. Each sample of MIX.json is one
//! character with its ordered actions; the file's masks are uploaded once.
//! Prints the blended local pose of every node (or, with `--joints`, every
//! skin's joint matrices from the blended pose), as a table or as JSON,
//! sampled and blended on the GPU (`Animator::with_mixer`) or the CPU twin
//! (`cpu::mixed_poses`), or both with `--compare`.
//!
//! MIX.json:
//! `{"masks": [{"default": 0.0, "nodes": {"5": 1.0}}], "samples":
//! [{"actions": [{"animation": 0, "time": 0.35, "weight": 0.6, "mask": 0,
//! "mode": "additive", "reference_time": 0.0, "wrap": "repeat"}]}]}`;
//! `masks`, `mask`, `mode` ("mix", the default, "additive" or
//! "override"; `"additive": true` is the same as `"mode": "additive"`),
//! `reference_time` (additive only, default 0) and `wrap` ("clamp", the
//! default, "repeat" or "pingpong") are optional, a mask's `default` is 0
//! when absent. Anything malformed is refused with one line naming the
//! sample, the action and the field.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use keyframe_gpu::Rig;
use keyframe_gpu::{
    cpu, Action, Animator, BoundLibrary, Mask, MixerDesc, Poses, WrapMode, MAX_ACTIONS,
};
use serde_json::Value;

use crate::args::{Backend, Cli};
use crate::engine::Engine;
use crate::json::{num32, skins_json};
use crate::source::Source;
use crate::table::fmt_values;
use crate::Failure;

/// Characters per GPU dispatch.
const CHUNK: usize = 1024;

/// A parsed MIX.json: masks, and per sample its actions.
struct MixFile {
    masks: Vec<Mask>,
    samples: Vec<Vec<Action>>,
}

fn fail<T>(msg: String) -> Result<T, Failure> {
    Err(Failure::Message(msg))
}

/// The mixer MIX.json asks for, for `characters` characters: its masks
/// and its most actions per character (for `--plan`).
pub fn desc(path: &Path, bound: &BoundLibrary, characters: u32) -> Result<MixerDesc, Failure> {
    let mix = parse(path, bound.rig(), bound.library().clips().len())?;
    let per = mix.samples.iter().map(Vec::len).max().unwrap_or(1).max(1) as u32;
    let mut desc = MixerDesc::new(characters, per);
    for mask in mix.masks {
        desc.add_mask(mask);
    }
    Ok(desc)
}

/// Reads and checks MIX.json against the file's rig and animations.
fn parse(path: &Path, rig: &Rig, clip_count: usize) -> Result<MixFile, Failure> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .or_else(|e| fail(format!("--mix {shown}: cannot read: {e}")))?;
    let root: Value = serde_json::from_str(&text)
        .or_else(|e| fail(format!("--mix {shown}: not valid JSON: {e}")))?;
    let Some(root) = root.as_object() else {
        return fail(format!("--mix {shown}: the top level is not an object"));
    };
    let node_count = rig.nodes().len();
    let mut masks = Vec::new();
    match root.get("masks") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for (m, v) in list.iter().enumerate() {
                masks.push(
                    parse_mask(v, rig, node_count)
                        .or_else(|e| fail(format!("--mix {shown}: mask {m}: {e}")))?,
                );
            }
        }
        Some(_) => return fail(format!("--mix {shown}: \"masks\" is not an array")),
    }
    let Some(Value::Array(list)) = root.get("samples") else {
        return fail(format!(
            "--mix {shown}: \"samples\" is missing or not an array"
        ));
    };
    let mut samples = Vec::with_capacity(list.len());
    for (s, sample) in list.iter().enumerate() {
        let Some(Value::Array(actions)) = sample.get("actions") else {
            return fail(format!(
                "--mix {shown}: sample {s}: \"actions\" is missing or not an array"
            ));
        };
        if actions.len() > MAX_ACTIONS as usize {
            return fail(format!(
                "--mix {shown}: sample {s}: {} actions, at most {MAX_ACTIONS} are allowed",
                actions.len()
            ));
        }
        let mut parsed = Vec::with_capacity(actions.len());
        for (a, action) in actions.iter().enumerate() {
            parsed.push(
                parse_action(action, clip_count, masks.len())
                    .or_else(|e| fail(format!("--mix {shown}: sample {s}, action {a}: {e}")))?,
            );
        }
        samples.push(parsed);
    }
    Ok(MixFile { masks, samples })
}

fn number(v: &Value, field: &str) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.is_finite() => Ok(x),
        _ => Err(format!("\"{field}\" is not a finite number: {v}")),
    }
}

fn index(v: &Value, field: &str) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("\"{field}\" is not a non-negative integer: {v}"))
}

fn parse_mask(v: &Value, rig: &Rig, node_count: usize) -> Result<Mask, String> {
    let Some(obj) = v.as_object() else {
        return Err("not an object".into());
    };
    let default = match obj.get("default") {
        None => 0.0,
        Some(d) => number(d, "default")?,
    };
    let factor = |x: f64, what: &str| {
        if (0.0..=1.0).contains(&x) {
            Ok(x as f32)
        } else {
            Err(format!("{what} {x} is not in [0, 1]"))
        }
    };
    let mut mask = Mask::filled(rig, factor(default, "\"default\"")?).map_err(|e| e.to_string())?;
    match obj.get("nodes") {
        None => {}
        Some(Value::Object(nodes)) => {
            for (key, f) in nodes {
                let node: usize = key
                    .parse()
                    .map_err(|_| format!("\"nodes\": key {key:?} is not a node index"))?;
                if node >= node_count {
                    return Err(format!(
                        "\"nodes\": node {node} is out of range (the file has {node_count} nodes)"
                    ));
                }
                let f = factor(
                    number(f, "nodes")?,
                    &format!("\"nodes\": node {node}'s factor"),
                )?;
                mask.set(node as u32, f).map_err(|e| e.to_string())?;
            }
        }
        Some(_) => return Err("\"nodes\" is not an object".into()),
    }
    Ok(mask)
}

fn parse_action(v: &Value, clip_count: usize, mask_count: usize) -> Result<Action, String> {
    let Some(obj) = v.as_object() else {
        return Err("not an object".into());
    };
    let get = |field: &str| obj.get(field).filter(|v| !v.is_null());
    let animation = index(
        get("animation").ok_or("\"animation\" is missing")?,
        "animation",
    )?;
    if animation >= clip_count as u64 {
        return Err(format!(
            "\"animation\" {animation} is out of range (the file has {clip_count} animations)"
        ));
    }
    let time = number(get("time").ok_or("\"time\" is missing")?, "time")?;
    let weight = number(get("weight").ok_or("\"weight\" is missing")?, "weight")?;
    if weight < 0.0 || weight > f64::from(f32::MAX) {
        return Err(format!("\"weight\" {weight} is not a finite number >= 0"));
    }
    let mut action = Action::new(animation as u32, time).with_weight(weight as f32);
    if let Some(m) = get("mask") {
        let m = index(m, "mask")?;
        if m >= mask_count as u64 {
            return Err(format!(
                "\"mask\" {m} is out of range (MIX.json has {mask_count} masks)"
            ));
        }
        action = action.with_mask(keyframe_gpu::MaskId::new(m as u32));
    }
    if let Some(w) = get("wrap") {
        action = action.with_wrap(match w.as_str() {
            Some("clamp") => WrapMode::Clamp,
            Some("repeat") => WrapMode::Repeat,
            Some("pingpong") => WrapMode::PingPong,
            _ => {
                return Err(format!(
                    "\"wrap\" is not \"clamp\", \"repeat\" or \"pingpong\": {w}"
                ))
            }
        });
    }
    let mut additive = match get("additive") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => return Err(format!("\"additive\" is not a boolean: {other}")),
    };
    if let Some(mode) = get("mode") {
        if get("additive").is_some() {
            return Err("give \"mode\" or \"additive\", not both".into());
        }
        match mode.as_str() {
            Some("mix") => {}
            Some("additive") => additive = true,
            Some("override") => action = action.overriding(),
            _ => {
                return Err(format!(
                    "\"mode\" is not \"mix\", \"additive\" or \"override\": {mode}"
                ))
            }
        }
    }
    let reference = match get("reference_time") {
        None => 0.0,
        Some(r) => number(r, "reference_time")?,
    };
    if additive {
        action = action.additive(reference);
    } else if get("reference_time").is_some() {
        return Err("\"reference_time\" is given but the action is not additive".into());
    }
    Ok(action)
}

/// One node's local pose: translation, rotation (`xyzw`) and scale, each
/// padded to four components like the crate's pose buffers.
#[derive(Debug, Clone, Copy, PartialEq)]
struct LocalPose {
    translation: [f32; 4],
    rotation: [f32; 4],
    scale: [f32; 4],
}

/// One backend's results, per sample: every node's local pose, every
/// mesh's weights, every skin's joint matrices.
struct Blended {
    locals: Vec<Vec<LocalPose>>,
    weights: Vec<Vec<Vec<f32>>>,
    skins: Vec<Vec<SkinJoints>>,
}

impl Blended {
    fn new() -> Blended {
        Blended {
            locals: Vec::new(),
            weights: Vec::new(),
            skins: Vec::new(),
        }
    }

    /// Appends every character of `poses` (the GPU's or the CPU twin's:
    /// the same type, the same indices).
    fn push(&mut self, rig: &Rig, poses: &Poses) -> Result<(), Failure> {
        for c in 0..poses.instance_count() {
            self.push_one(rig, poses, c)?;
        }
        Ok(())
    }

    /// Appends character `c` of `poses`.
    fn push_one(&mut self, rig: &Rig, poses: &Poses, c: u32) -> Result<(), Failure> {
        let missing = || Failure::Message(format!("no result for sample {c}"));
        let mut locals = Vec::with_capacity(rig.nodes().len());
        for n in 0..rig.nodes().len() as u32 {
            let t = poses.local(c, n).ok_or_else(missing)?;
            locals.push(LocalPose {
                translation: t.translation.extend(0.0).to_array(),
                rotation: t.rotation.to_array(),
                scale: t.scale.extend(0.0).to_array(),
            });
        }
        self.locals.push(locals);
        // Per mesh: the weights of the first node that uses it.
        let weights = (0..rig.meshes().len() as u32)
            .map(|m| {
                let node = rig.nodes().iter().position(|n| n.mesh == Some(m));
                node.and_then(|n| poses.morph_weights(c, n as u32))
                    .map(<[f32]>::to_vec)
                    .unwrap_or_default()
            })
            .collect();
        self.weights.push(weights);
        self.skins
            .push(skins_of(rig, poses, c).ok_or_else(missing)?);
        Ok(())
    }
}

/// One skin's joint matrices for one instance, in the skin's joint order.
#[derive(Debug, Clone, PartialEq)]
pub struct SkinJoints {
    /// The skin's index.
    pub skin: u32,
    /// Its mesh node (lowest-index node using it), if any.
    pub node: Option<u32>,
    /// Column-major joint matrices.
    pub joints: Vec<[f32; 16]>,
}

/// Character (or instance) `c`'s joint matrices, skin by skin.
pub fn skins_of(rig: &Rig, poses: &Poses, c: u32) -> Option<Vec<SkinJoints>> {
    (0..rig.skins().len() as u32)
        .map(|s| {
            Some(SkinJoints {
                skin: s,
                node: rig.skins()[s as usize].mesh_node,
                joints: poses
                    .joints(c, s)?
                    .iter()
                    .map(|m| m.to_cols_array())
                    .collect(),
            })
        })
        .collect()
}

fn run_cpu(bound: &BoundLibrary, mix: &MixFile) -> Result<Blended, Failure> {
    let actions: Vec<Action> = mix.samples.iter().flatten().copied().collect();
    let counts: Vec<u32> = mix.samples.iter().map(|s| s.len() as u32).collect();
    let poses = cpu::mixed_poses(bound, &mix.masks, &actions, &counts)?;
    let mut b = Blended::new();
    b.push(bound.rig(), &poses)?;
    Ok(b)
}

fn run_gpu(
    engine: &mut Engine<'_>,
    bound: &BoundLibrary,
    mix: &MixFile,
) -> Result<Blended, Failure> {
    let h = engine.device()?;
    let per = mix.samples.iter().map(Vec::len).max().unwrap_or(1).max(1) as u32;
    let characters = mix.samples.len().clamp(1, CHUNK) as u32;
    let mut desc = MixerDesc::new(characters, per);
    for mask in &mix.masks {
        desc.add_mask(mask.clone());
    }
    let mut animator = Animator::with_mixer(&h.device, &h.queue, bound, &desc)?;
    let mut b = Blended::new();
    for chunk in mix.samples.chunks(CHUNK) {
        let actions: Vec<Action> = chunk.iter().flatten().copied().collect();
        let counts: Vec<u32> = chunk.iter().map(|s| s.len() as u32).collect();
        animator.set_actions(&h.queue, &actions, &counts)?;
        let mut encoder = h
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("sample --mix"),
            });
        animator.record(&mut encoder);
        h.queue.submit([encoder.finish()]);
        b.push(bound.rig(), &animator.read_back(&h.device, &h.queue)?)?;
    }
    Ok(b)
}

/// Largest difference between two results: local poses (rotations up to
/// sign) and weights, and joint matrices.
fn differences(a: &Blended, b: &Blended) -> (f32, f32) {
    let mut pose = 0.0f32;
    for (la, lb) in a.locals.iter().flatten().zip(b.locals.iter().flatten()) {
        let d = |x: &[f32; 4], y: &[f32; 4], sign: f32| {
            x.iter()
                .zip(y)
                .map(|(p, q)| (p - sign * q).abs())
                .fold(0.0, f32::max)
        };
        pose = pose
            .max(d(&la.translation, &lb.translation, 1.0))
            .max(d(&la.scale, &lb.scale, 1.0))
            .max(d(&la.rotation, &lb.rotation, 1.0).min(d(&la.rotation, &lb.rotation, -1.0)));
    }
    for (wa, wb) in a.weights.iter().flatten().zip(b.weights.iter().flatten()) {
        for (x, y) in wa.iter().zip(wb) {
            pose = pose.max((x - y).abs());
        }
    }
    let mut joints = 0.0f32;
    for (sa, sb) in a.skins.iter().flatten().zip(b.skins.iter().flatten()) {
        for (ma, mb) in sa.joints.iter().zip(&sb.joints) {
            for (x, y) in ma.iter().zip(mb) {
                joints = joints.max((x - y).abs());
            }
        }
    }
    (pose, joints)
}

fn vec_json(v: &[f32]) -> String {
    let nums: Vec<String> = v.iter().map(|&x| num32(x)).collect();
    format!("[{}]", nums.join(", "))
}

/// One node's `{"node": n, "translation": .., "rotation": .., "scale":
/// ..}`, with `"weights"` when given.
fn node_json(n: usize, p: &LocalPose, weights: Option<&[f32]>) -> String {
    let mut s = format!(
        "{{\"node\": {n}, \"translation\": {}, \"rotation\": {}, \"scale\": {}",
        vec_json(&p.translation[..3]),
        vec_json(&p.rotation),
        vec_json(&p.scale[..3])
    );
    if let Some(w) = weights {
        s.push_str(&format!(", \"weights\": {}", vec_json(w)));
    }
    s.push('}');
    s
}

/// Character `c`'s nodes of `poses` as `--mix --json` prints a sample's
/// (`[{"node": 0, ...}, ...]`, every node in index order, `"weights"`
/// where its mesh has morph targets): `--play --nodes`.
pub fn nodes_json(rig: &Rig, poses: &Poses, c: u32) -> Option<String> {
    let mut b = Blended::new();
    b.push_one(rig, poses, c).ok()?;
    let nodes: Vec<String> = b.locals[0]
        .iter()
        .enumerate()
        .map(|(n, p)| node_json(n, p, node_weights(rig, &b, 0, n)))
        .collect();
    Some(format!("[{}]", nodes.join(", ")))
}

/// The `--json` line.
fn to_json(source: &Source, rig: &Rig, backend: Backend, joints: bool, b: &Blended) -> String {
    let file = serde_json::to_string(&source.name).unwrap_or_else(|_| "\"?\"".into());
    let samples: Vec<String> = (0..b.locals.len())
        .map(|c| {
            if joints {
                return format!("{{\"skins\": {}}}", skins_json(&b.skins[c]));
            }
            let nodes: Vec<String> = b.locals[c]
                .iter()
                .enumerate()
                .map(|(n, p)| node_json(n, p, node_weights(rig, b, c, n)))
                .collect();
            format!("{{\"nodes\": [{}]}}", nodes.join(", "))
        })
        .collect();
    format!(
        "{{\"file\": {file}, \"backend\": \"{}\", \"samples\": [{}]}}",
        backend.name(),
        samples.join(", ")
    )
}

/// Sample `c`'s weights of node `n`'s mesh, when it has morph targets.
fn node_weights<'a>(rig: &Rig, b: &'a Blended, c: usize, n: usize) -> Option<&'a [f32]> {
    let mesh = rig.nodes()[n].mesh? as usize;
    if rig.meshes().get(mesh)?.target_count == 0 {
        return None;
    }
    b.weights[c].get(mesh).map(Vec::as_slice)
}

fn table(rig: &Rig, joints: bool, b: &Blended, out: &mut impl Write) -> Result<(), Failure> {
    for c in 0..b.locals.len() {
        writeln!(out, "sample {c}:")?;
        if joints {
            for skin in &b.skins[c] {
                writeln!(out, "  skin {} ({} joints)", skin.skin, skin.joints.len())?;
                for (j, m) in skin.joints.iter().enumerate() {
                    writeln!(out, "    joint {j}: {}", fmt_values(m))?;
                }
            }
            continue;
        }
        for (n, p) in b.locals[c].iter().enumerate() {
            write!(
                out,
                "  node {n}: T {}  R {}  S {}",
                fmt_values(&p.translation[..3]),
                fmt_values(&p.rotation),
                fmt_values(&p.scale[..3])
            )?;
            if let Some(w) = node_weights(rig, b, c, n) {
                write!(out, "  W {}", fmt_values(w))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

/// Runs `--mix`.
pub fn run(
    cli: &Cli,
    path: &Path,
    source: &Source,
    tol: f32,
    out: &mut impl Write,
) -> Result<ExitCode, Failure> {
    let bound = source.bound("--mix")?;
    let rig = bound.rig();
    let mix = parse(path, rig, source.library.clips().len())?;
    if cli.joints && rig.skins().is_empty() {
        return fail(format!("--joints: no skins in {}", source.name));
    }
    let mut engine = Engine::new(&source.library);
    let mut code = ExitCode::SUCCESS;
    let mut verdict = None;
    let shown = if cli.compare {
        let gpu = run_gpu(&mut engine, &bound, &mix)?;
        let cpu = run_cpu(&bound, &mix)?;
        let (pose, joints) = differences(&gpu, &cpu);
        let worst = if cli.joints { joints } else { pose };
        let failed = worst > tol || worst.is_nan();
        if failed {
            code = ExitCode::from(1);
        }
        verdict = Some(format!(
            "compare gpu/cpu: local poses max_abs_err={pose:e}, joint matrices max_abs_err={joints:e} (tol {tol:e}): {}",
            if failed { "FAIL" } else { "ok" }
        ));
        if cli.backend == Backend::Gpu {
            gpu
        } else {
            cpu
        }
    } else if cli.backend == Backend::Gpu {
        run_gpu(&mut engine, &bound, &mix)?
    } else {
        run_cpu(&bound, &mix)?
    };
    if cli.json {
        writeln!(
            out,
            "{}",
            to_json(source, rig, cli.backend, cli.joints, &shown)
        )?;
    } else {
        writeln!(
            out,
            "file: {}  mix: {}  ({} sample(s), {} mask(s))",
            source.name,
            path.display(),
            mix.samples.len(),
            mix.masks.len()
        )?;
        if cli.uses_gpu() {
            writeln!(out, "adapter: {}", engine.describe()?)?;
        }
        writeln!(out, "backend: {}", cli.backend_label())?;
        if let Some(v) = verdict {
            writeln!(out, "{v}")?;
        }
        table(rig, cli.joints, &shown, out)?;
    }
    Ok(code)
}
