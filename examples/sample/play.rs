//! `--play PLAY.json`: the playback layer driven by a script. One
//! `playback::Player` per character; each frame applies its commands,
//! advances every player by its `dt` and prints one JSON object (always
//! JSON): per character its actions (animation, clip time, weight), the
//! root motion of PLAY.json's `root` over the step and the markers
//! crossed. With `--joints` each character also has its joint matrices,
//! sampled and blended on the GPU from those actions
//! (`Animator::with_mixer`), or by the CPU twin with `--backend cpu`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use keyframe_gpu::playback::{gather, Clips, Frame, Player};
use keyframe_gpu::{cpu, Action, Animator, BoundLibrary, MixerDesc, WrapMode, MAX_ACTIONS};

use crate::args::{Backend, Cli};
use crate::json::{num32, skins_json, time_str};
use crate::mix::skins_of;
use crate::play_file::{self, CommandSpec, Wrap};
use crate::source::Source;
use crate::Failure;

/// Runs PLAY.json at `path` over `source`'s clips.
pub fn run(cli: &Cli, path: &Path, source: &Source, out: &mut impl Write) -> Result<(), Failure> {
    let library = &source.library;
    let play = play_file::read(path, library.clips().len())?;
    let shown = path.display();
    let needs_rig = play.root.is_some() || cli.joints;
    let bound = if needs_rig {
        Some(source.bound("--play with a root or --joints")?)
    } else {
        None
    };
    let mut clips = match (&play.root, &bound) {
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
    let clips = Arc::new(clips);
    let mut players: Vec<Player> = (0..play.instances)
        .map(|k| Player::new(&clips).with_character(k))
        .collect();
    let mut gpu = match (&bound, cli.joints && cli.backend == Backend::Gpu) {
        (Some(b), true) => Some(Gpu::new(b, play.instances)?),
        _ => None,
    };
    let (mut actions, mut counts) = (Vec::new(), Vec::new());
    for (f, frame) in play.frames.iter().enumerate() {
        for (c, cmd) in frame.commands.iter().enumerate() {
            apply(&mut players[cmd.instance as usize], cmd).map_err(|e| {
                Failure::Message(format!("--play {shown}: frame {f}, command {c}: {e}"))
            })?;
        }
        for p in &mut players {
            p.advance(frame.dt)
                .map_err(|e| Failure::Message(format!("--play {shown}: frame {f}: {e}")))?;
        }
        let joints = match (&bound, cli.joints) {
            (Some(b), true) => {
                gather(&players, &mut actions, &mut counts);
                let poses = match &mut gpu {
                    Some(g) => g.frame(&actions, &counts)?,
                    None => cpu::mixed_poses(b, &[], &actions, &counts)?,
                };
                Some((b, poses))
            }
            _ => None,
        };
        let mut items = Vec::with_capacity(players.len());
        for (k, p) in players.iter().enumerate() {
            let skins = match &joints {
                Some((b, poses)) => skins_of(b.rig(), poses, k as u32).map(|s| skins_json(&s)),
                None => None,
            };
            items.push(character_json(k, p.frame(), skins));
        }
        writeln!(
            out,
            "{{\"frame\": {f}, \"instances\": [{}]}}",
            items.join(", ")
        )?;
    }
    Ok(())
}

/// One command on its character, field by field: play, wrap, speed,
/// crossfade, pause, seek.
fn apply(p: &mut Player, cmd: &CommandSpec) -> Result<(), keyframe_gpu::Error> {
    let clips = Arc::clone(p.clips());
    if let Some(clip) = cmd.play {
        p.play(clips.clip_at(clip)?)?;
    }
    if let Some(w) = cmd.wrap {
        p.set_wrap(match w {
            Wrap::Once => WrapMode::Clamp,
            Wrap::Repeat => WrapMode::Repeat,
            Wrap::PingPong => WrapMode::PingPong,
        });
    }
    if let Some(s) = cmd.speed {
        p.set_speed(s)?;
    }
    if let Some((to, d)) = cmd.crossfade {
        p.crossfade(clips.clip_at(to)?, d)?;
    }
    if let Some(paused) = cmd.pause {
        p.set_paused(paused);
    }
    if let Some(t) = cmd.seek {
        p.seek(t)?;
    }
    Ok(())
}

/// `{"instance": K, "actions": [...], "root_motion": {...}, "events":
/// [...]}` (and `"joints"` when given).
fn character_json(k: usize, f: &Frame, skins: Option<String>) -> String {
    let actions: Vec<String> = f
        .actions
        .iter()
        .map(|a| {
            format!(
                "{{\"animation\": {}, \"time\": {}, \"weight\": {}}}",
                a.clip,
                time_str(a.time),
                num32(a.weight)
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
    let mut s = format!(
        "{{\"instance\": {k}, \"actions\": [{}], \"root_motion\": {{\"translation\": [{}, {}, {}], \"rotation\": [{}, {}, {}, {}]}}, \"events\": [{}]",
        actions.join(", "),
        num32(t.x),
        num32(t.y),
        num32(t.z),
        num32(r.x),
        num32(r.y),
        num32(r.z),
        num32(r.w),
        events.join(", ")
    );
    if let Some(j) = skins {
        s.push_str(&format!(", \"joints\": {j}"));
    }
    s.push('}');
    s
}

/// The GPU mixer for `--joints`: every character's actions blended and
/// posed on the device, read back each frame.
struct Gpu {
    h: keyframe_gpu::gpu::headless::Headless,
    animator: Animator,
}

impl Gpu {
    fn new(bound: &BoundLibrary, characters: u32) -> Result<Gpu, Failure> {
        use keyframe_gpu::gpu::headless::{request_device, AdapterChoice};
        let h = request_device(AdapterChoice::PreferHardware)?;
        let desc = MixerDesc::new(characters, MAX_ACTIONS);
        let animator = Animator::with_mixer(&h.device, &h.queue, bound, &desc)?;
        Ok(Gpu { h, animator })
    }

    fn frame(
        &mut self,
        actions: &[Action],
        counts: &[u32],
    ) -> Result<keyframe_gpu::Poses, Failure> {
        let h = &self.h;
        self.animator.set_actions(&h.queue, actions, counts)?;
        let mut encoder = h.device.create_command_encoder(&Default::default());
        self.animator.record(&mut encoder);
        h.queue.submit([encoder.finish()]);
        Ok(self.animator.read_back(&h.device, &h.queue)?)
    }
}
