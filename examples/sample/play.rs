//! `--play PLAY.json`: the playback layer driven by a script. One
//! `playback::Player` per character; each frame applies its commands,
//! advances every player by its `dt` and prints one JSON object (always
//! JSON): per character its base actions (animation, clip time, weight,
//! finished, loops), its layers (mode, weight and their actions), the
//! root motion of PLAY.json's `root` over the step and the markers
//! crossed. With `--joints` each character also has its joint matrices,
//! with `--nodes` every node's blended local pose, sampled and blended on
//! the GPU from those actions (`Animator::with_mixer`), or by the CPU twin
//! with `--backend cpu`.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use glam::Vec2;
use keyframe_gpu::playback::{
    ActionState, BlendMode, BlendSpace, BlendSpaceId, BlendSync, ClipHandle, Clips, Command, Frame,
    Layer, LayerId, Player,
};
use keyframe_gpu::{
    cpu, Action, Animator, BoundLibrary, Error, Mask, MaskId, MixerDesc, Poses, Rig, WrapMode,
    MAX_ACTIONS,
};

use crate::args::{Backend, Cli};
use crate::json::{num32, skins_json, time_str};
use crate::mix::{nodes_json, skins_of};
use crate::play_file::{
    self, CommandSpec, LayerSpec, Mode, PlayFile, SpaceMode, SpaceSpec, SpaceSync, Wrap,
};
use crate::source::Source;
use crate::Failure;

/// Runs PLAY.json at `path` over `source`'s clips.
pub fn run(cli: &Cli, path: &Path, source: &Source, out: &mut impl Write) -> Result<(), Failure> {
    let library = &source.library;
    let play = play_file::read(path, library.clips().len())?;
    let shown = path.display();
    let mask_names = play.masks();
    let posed = cli.joints || cli.nodes;
    let needs_rig = play.root.is_some() || posed || !mask_names.is_empty();
    let bound = if needs_rig {
        Some(source.bound("--play with a root, layer masks, --joints or --nodes")?)
    } else {
        None
    };
    let masks = match &bound {
        Some(b) => masks(b.rig(), &mask_names)
            .map_err(|e| Failure::Message(format!("--play {shown}: {e}")))?,
        None => Vec::new(),
    };
    let (clips, spaces) = clips(&play, bound.as_ref(), &masks, library, &shown.to_string())?;
    let clips = Arc::new(clips);
    let mut current = vec![None; play.instances as usize];
    let mut players: Vec<Player> = (0..play.instances)
        .map(|k| Player::new(&clips).with_character(k))
        .collect();
    let mut layers = vec![HashMap::new(); players.len()];
    let mut gpu = match (&bound, posed && cli.backend == Backend::Gpu) {
        (Some(b), true) => Some(Gpu::new(b, play.instances, &masks)?),
        _ => None,
    };
    let (mut actions, mut counts) = (Vec::new(), Vec::new());
    for (f, frame) in play.frames.iter().enumerate() {
        for (c, cmd) in frame.commands.iter().enumerate() {
            let k = cmd.instance as usize;
            let mask = |s: &LayerSpec| mask_of(&mask_names, s);
            let state = (&mut layers[k], &mut current[k]);
            apply(&mut players[k], state, cmd, &mask, &spaces).map_err(|e| {
                Failure::Message(format!("--play {shown}: frame {f}, command {c}: {e}"))
            })?;
        }
        for p in &mut players {
            p.advance(frame.dt)
                .map_err(|e| Failure::Message(format!("--play {shown}: frame {f}: {e}")))?;
        }
        let poses = match (&bound, posed) {
            (Some(b), true) => {
                actions.clear();
                counts.clear();
                for p in &players {
                    actions.extend_from_slice(&p.frame().actions);
                    counts.push(p.frame().actions.len() as u32);
                }
                Some(match &mut gpu {
                    Some(g) => g.frame(&actions, &counts)?,
                    None => cpu::mixed_poses(b, &masks, &actions, &counts)?,
                })
            }
            _ => None,
        };
        let mut items = Vec::with_capacity(players.len());
        for (k, p) in players.iter().enumerate() {
            let posed = match (&bound, &poses) {
                (Some(b), Some(poses)) => pose_json(cli, b.rig(), poses, k as u32),
                _ => String::new(),
            };
            items.push(character_json(k, p, p.frame(), &posed));
        }
        writeln!(
            out,
            "{{\"frame\": {f}, \"instances\": [{}]}}",
            items.join(", ")
        )?;
    }
    Ok(())
}

/// The clips the players share: with the root's motion when PLAY.json
/// names a root, its markers, the layers' masks for root motion and its
/// blend spaces (their handles, in PLAY.json's order).
pub fn clips(
    play: &PlayFile,
    bound: Option<&BoundLibrary>,
    masks: &[Mask],
    library: &keyframe_gpu::AnimationLibrary,
    shown: &str,
) -> Result<(Clips, Vec<BlendSpaceId>), Failure> {
    let mut clips = match (&play.root, bound) {
        (Some(name), Some(b)) => {
            let node = b.rig().node_by_name(name).ok_or_else(|| {
                Failure::Message(format!(
                    "--play {shown}: \"root\" names no node of the rig: {name:?}"
                ))
            })?;
            Clips::with_root(b, node)?
        }
        _ => Clips::new(library),
    };
    for m in &play.markers {
        clips.add_marker(m.animation, m.time, &m.name)?;
    }
    if let Some(b) = bound {
        clips.set_masks(b, masks)?;
    }
    let mut spaces = Vec::with_capacity(play.blend_spaces.len());
    for s in &play.blend_spaces {
        let space = blend_space(&clips, s)?;
        let id = clips
            .add_blend_space(space)
            .map_err(|e| Failure::Message(format!("--play {shown}: {e}")))?;
        spaces.push(id);
    }
    Ok((clips, spaces))
}

/// The library's blend space of a PLAY.json space.
fn blend_space(clips: &Clips, s: &SpaceSpec) -> Result<BlendSpace, Failure> {
    let mut points = Vec::with_capacity(s.clips.len());
    for &(animation, at) in &s.clips {
        points.push((clips.clip_at(animation)?, Vec2::from_array(at)));
    }
    Ok(BlendSpace {
        name: s.name.clone(),
        kind: match s.mode {
            SpaceMode::OneD => BlendMode::OneD,
            SpaceMode::Cartesian => BlendMode::Cartesian,
            SpaceMode::Directional => BlendMode::Directional,
        },
        clips: points,
        smoothing: s.smoothing,
        sync: match s.sync {
            SpaceSync::None => BlendSync::Off,
            SpaceSync::Phase => BlendSync::Phase,
            SpaceSync::Markers => BlendSync::Markers,
        },
    })
}

/// The layers' masks: factor 1 on each named node and every node below
/// it, 0 elsewhere, one per distinct list of names.
pub fn masks(rig: &Rig, lists: &[Vec<String>]) -> Result<Vec<Mask>, String> {
    lists
        .iter()
        .map(|names| {
            let mut mask = Mask::filled(rig, 0.0).map_err(|e| e.to_string())?;
            for name in names {
                let node = rig.node_by_name(name).ok_or_else(|| {
                    format!("layer mask: \"subtrees\" names no node of the rig: {name:?}")
                })?;
                let subtree = Mask::subtree(rig, node).map_err(|e| e.to_string())?;
                for (n, &f) in subtree.factors().iter().enumerate() {
                    if f > 0.0 {
                        mask.set(n as u32, 1.0).map_err(|e| e.to_string())?;
                    }
                }
            }
            Ok(mask)
        })
        .collect()
}

/// The mask of a layer command: its place among PLAY.json's masks.
pub fn mask_of(lists: &[Vec<String>], spec: &LayerSpec) -> Option<MaskId> {
    let names = spec.subtrees.as_ref()?;
    let k = lists.iter().position(|l| l == names)?;
    Some(MaskId::new(k as u32))
}

fn wrap_mode(w: Wrap) -> WrapMode {
    match w {
        Wrap::Once => WrapMode::Clamp,
        Wrap::Repeat => WrapMode::Repeat,
        Wrap::PingPong => WrapMode::PingPong,
    }
}

/// What a PLAY.json command drives: a `Player` (`--play`), or a
/// character played on the GPU with its CPU shadow (`--gpu-playback`,
/// `gpu_play.rs`). The methods are `Player`'s.
pub trait Commands {
    fn clips(&self) -> Arc<Clips>;
    fn play(&mut self, clip: ClipHandle) -> Result<(), Error>;
    fn crossfade(&mut self, to: ClipHandle, d: f64, at: Option<f64>) -> Result<(), Error>;
    fn fade(&mut self, clip: ClipHandle, d: f64, out: bool) -> Result<(), Error>;
    fn wrap(&mut self, clip: Option<ClipHandle>, wrap: WrapMode) -> Result<(), Error>;
    fn repetitions(&mut self, clip: Option<ClipHandle>, n: Option<u64>) -> Result<(), Error>;
    fn speed(&mut self, speed: f64) -> Result<(), Error>;
    fn pause(&mut self, paused: bool) -> Result<(), Error>;
    fn seek(&mut self, time: f64) -> Result<(), Error>;
    fn layer(&self, id: LayerId) -> Option<ActionState>;
    fn add_layer(&mut self, clip: ClipHandle, layer: Layer) -> Result<LayerId, Error>;
    fn set_layer(&mut self, id: LayerId, layer: Layer) -> Result<(), Error>;
    fn remove_layer(&mut self, id: LayerId) -> Result<(), Error>;
    /// A blend space's parameters, then (`Some(duration)`, 0 at once)
    /// entering it.
    fn blend(&mut self, space: BlendSpaceId, params: Vec2, enter: Option<f64>)
        -> Result<(), Error>;
}

impl Commands for Player {
    fn clips(&self) -> Arc<Clips> {
        Arc::clone(Player::clips(self))
    }
    fn play(&mut self, clip: ClipHandle) -> Result<(), Error> {
        self.command(Command::Play(clip))
    }
    fn crossfade(&mut self, to: ClipHandle, d: f64, at: Option<f64>) -> Result<(), Error> {
        self.command(match at {
            Some(t) => Command::CrossfadeAt(to, d, t),
            None => Command::Crossfade(to, d),
        })
    }
    fn fade(&mut self, clip: ClipHandle, d: f64, out: bool) -> Result<(), Error> {
        self.command(if out {
            Command::FadeOut(clip, d)
        } else {
            Command::FadeIn(clip, d)
        })
    }
    fn wrap(&mut self, clip: Option<ClipHandle>, wrap: WrapMode) -> Result<(), Error> {
        self.command(match clip {
            Some(c) => Command::SetClipWrap(c, wrap),
            None => Command::SetWrap(wrap),
        })
    }
    fn repetitions(&mut self, clip: Option<ClipHandle>, n: Option<u64>) -> Result<(), Error> {
        self.command(match clip {
            Some(c) => Command::SetClipRepetitions(c, n),
            None => Command::SetRepetitions(n),
        })
    }
    fn speed(&mut self, speed: f64) -> Result<(), Error> {
        self.command(Command::SetSpeed(speed))
    }
    fn pause(&mut self, paused: bool) -> Result<(), Error> {
        self.command(Command::SetPaused(paused))
    }
    fn seek(&mut self, time: f64) -> Result<(), Error> {
        self.command(Command::Seek(time))
    }
    fn layer(&self, id: LayerId) -> Option<ActionState> {
        Player::layer(self, id)
    }
    fn add_layer(&mut self, clip: ClipHandle, layer: Layer) -> Result<LayerId, Error> {
        Player::add_layer(self, clip, layer)
    }
    fn set_layer(&mut self, id: LayerId, layer: Layer) -> Result<(), Error> {
        self.command(Command::SetLayer(id, layer))
    }
    fn remove_layer(&mut self, id: LayerId) -> Result<(), Error> {
        self.command(Command::RemoveLayer(id))
    }
    fn blend(
        &mut self,
        space: BlendSpaceId,
        params: Vec2,
        enter: Option<f64>,
    ) -> Result<(), Error> {
        self.command(Command::SetBlendParams(space, params))?;
        match enter {
            Some(d) => self.command(Command::PlayBlendSpace(space, d)),
            None => Ok(()),
        }
    }
}

/// One command on its character, field by field in PLAY.json's order:
/// play, crossfade, crossfade_at, fade_in, fade_out, wrap and repetitions
/// (of `animation`, or the action started last), speed, pause, seek,
/// layer, remove, blend space. `layers` maps each animation to its layer,
/// `current` is the blend space the character plays (an index of
/// `spaces`, PLAY.json's spaces).
pub fn apply<P: Commands + ?Sized>(
    p: &mut P,
    (layers, current): (&mut HashMap<u32, LayerId>, &mut Option<usize>),
    cmd: &CommandSpec,
    mask: &dyn Fn(&LayerSpec) -> Option<MaskId>,
    spaces: &[BlendSpaceId],
) -> Result<(), String> {
    let clips = p.clips();
    let clip = |i: u32| clips.clip_at(i).map_err(|e| e.to_string());
    let err = |e: keyframe_gpu::Error| e.to_string();
    if let Some(c) = cmd.play {
        p.play(clip(c)?).map_err(err)?;
    }
    for fade in [cmd.crossfade, cmd.crossfade_at].into_iter().flatten() {
        p.crossfade(clip(fade.to)?, fade.duration, fade.at)
            .map_err(err)?;
    }
    if let Some((c, d)) = cmd.fade_in {
        p.fade(clip(c)?, d, false).map_err(err)?;
    }
    if let Some((c, d)) = cmd.fade_out {
        p.fade(clip(c)?, d, true).map_err(err)?;
    }
    let named = match cmd.wrap.is_some() || cmd.repetitions.is_some() {
        true => cmd.animation.map(clip).transpose()?,
        false => None,
    };
    if let Some(w) = cmd.wrap {
        p.wrap(named, wrap_mode(w)).map_err(err)?;
    }
    if let Some(r) = cmd.repetitions {
        p.repetitions(named, r).map_err(err)?;
    }
    if let Some(s) = cmd.speed {
        p.speed(s).map_err(err)?;
    }
    if let Some(paused) = cmd.pause {
        p.pause(paused).map_err(err)?;
    }
    if let Some(t) = cmd.seek {
        p.seek(t).map_err(err)?;
    }
    if let Some(spec) = &cmd.layer {
        set_layer(p, layers, spec, mask(spec))?;
    }
    if let Some(c) = cmd.remove {
        let id = layers
            .remove(&c)
            .ok_or_else(|| format!("\"remove\": animation {c} has no layer here"))?;
        p.remove_layer(id).map_err(err)?;
    }
    let base = [
        cmd.play,
        cmd.crossfade.map(|f| f.to),
        cmd.crossfade_at.map(|f| f.to),
    ];
    let faded = [cmd.fade_in.map(|f| f.0), cmd.fade_out.map(|f| f.0)];
    if base.iter().chain(&faded).any(Option::is_some) {
        // A base command stops the blend spaces.
        *current = None;
    }
    if let Some(b) = cmd.blend {
        let enter = (*current != Some(b.space)).then_some(b.duration.unwrap_or(0.0));
        let id = spaces.get(b.space).copied().ok_or("no such blend space")?;
        p.blend(id, Vec2::from_array(b.params), enter)
            .map_err(err)?;
        *current = Some(b.space);
    }
    Ok(())
}

/// Adds the layer of `spec`'s animation, or updates it (its weight, mode
/// and mask; its playhead, wrap and repetitions go on).
fn set_layer<P: Commands + ?Sized>(
    p: &mut P,
    layers: &mut HashMap<u32, LayerId>,
    spec: &LayerSpec,
    mask: Option<MaskId>,
) -> Result<(), String> {
    let mut layer = Layer {
        weight: spec.weight,
        mask,
        additive: (spec.mode == Mode::Additive).then_some(0.0),
        overrides: spec.mode == Mode::Override,
        ..Layer::default()
    };
    let err = |e: keyframe_gpu::Error| e.to_string();
    match layers.get(&spec.animation) {
        Some(&id) => {
            if let Some(now) = p.layer(id) {
                layer.wrap = now.wrap;
                layer.repetitions = now.repetitions;
            }
            p.set_layer(id, layer).map_err(err)
        }
        None => {
            let clip = p.clips().clip_at(spec.animation).map_err(err)?;
            let id = p.add_layer(clip, layer).map_err(err)?;
            layers.insert(spec.animation, id);
            Ok(())
        }
    }
}

/// `, "joints": [...]` and `, "nodes": [...]` for character `k`, as the
/// options ask.
pub fn pose_json(cli: &Cli, rig: &Rig, poses: &Poses, k: u32) -> String {
    let mut s = String::new();
    if cli.joints {
        if let Some(skins) = skins_of(rig, poses, k) {
            s.push_str(&format!(", \"joints\": {}", skins_json(&skins)));
        }
    }
    if cli.nodes {
        if let Some(nodes) = nodes_json(rig, poses, k) {
            s.push_str(&format!(", \"nodes\": {nodes}"));
        }
    }
    s
}

/// An action's row: `{"animation", "time", "weight", "finished", "loops"}`.
fn row(a: &ActionState) -> String {
    format!(
        "{{\"animation\": {}, \"time\": {}, \"weight\": {}, \"finished\": {}, \"loops\": {}}}",
        a.clip.index(),
        time_str(a.time),
        num32(a.weight),
        a.finished,
        a.loops
    )
}

/// `{"instance": K, "actions": [...], "layers": [...], "root_motion":
/// {...}, "events": [...]}` with `posed` (joints, nodes) at the end.
pub fn character_json(k: usize, p: &Player, f: &Frame, posed: &str) -> String {
    let base: Vec<String> = p
        .actions()
        .filter(|a| a.layer.is_none())
        .map(|a| row(&a))
        .collect();
    let layers: Vec<String> = p
        .actions()
        .filter(|a| a.layer.is_some())
        .map(|a| {
            let mode = match (a.additive, a.overrides) {
                (Some(_), _) => Mode::Additive,
                (None, true) => Mode::Override,
                (None, false) => Mode::Mix,
            };
            format!(
                "{{\"mode\": \"{}\", \"weight\": {}, \"actions\": [{}]}}",
                mode.name(),
                num32(a.weight),
                row(&a)
            )
        })
        .collect();
    let t = f.root_motion.translation;
    let r = f.root_motion.rotation;
    let events: Vec<String> = f
        .events
        .iter()
        .map(|e| {
            format!(
                "{{\"name\": {}, \"animation\": {}, \"time\": {}}}",
                serde_json::to_string(&*e.name).unwrap_or_else(|_| "\"?\"".into()),
                e.clip.index(),
                time_str(e.time)
            )
        })
        .collect();
    format!(
        "{{\"instance\": {k}, \"actions\": [{}], \"layers\": [{}], \"root_motion\": {{\"translation\": [{}, {}, {}], \"rotation\": [{}, {}, {}, {}]}}, \"events\": [{}]{posed}}}",
        base.join(", "),
        layers.join(", "),
        num32(t.x),
        num32(t.y),
        num32(t.z),
        num32(r.x),
        num32(r.y),
        num32(r.z),
        num32(r.w),
        events.join(", ")
    )
}

/// The GPU mixer for `--joints` and `--nodes`: every character's actions
/// blended and posed on the device, read back each frame.
struct Gpu {
    h: crate::headless::Headless,
    animator: Animator,
}

impl Gpu {
    fn new(bound: &BoundLibrary, characters: u32, masks: &[Mask]) -> Result<Gpu, Failure> {
        use crate::headless::{request_device, AdapterChoice};
        let h = request_device(AdapterChoice::PreferHardware)?;
        let mut desc = MixerDesc::new(characters, MAX_ACTIONS);
        for m in masks {
            desc.add_mask(m.clone());
        }
        let animator = Animator::with_mixer(&h.device, &h.queue, bound, &desc)?;
        Ok(Gpu { h, animator })
    }

    fn frame(&mut self, actions: &[Action], counts: &[u32]) -> Result<Poses, Failure> {
        let h = &self.h;
        self.animator.set_actions(&h.queue, actions, counts)?;
        let mut encoder = h.device.create_command_encoder(&Default::default());
        self.animator.record(&mut encoder);
        h.queue.submit([encoder.finish()]);
        Ok(self.animator.read_back(&h.device, &h.queue)?)
    }
}
