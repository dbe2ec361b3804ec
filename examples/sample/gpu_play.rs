//! `--play PLAY.json --gpu-playback`: the same script, its characters
//! played on the GPU (`playback::GpuPlayers` on one crowd model): each
//! frame's commands are written to the playback pass, which steps every
//! character on the device, and the state it holds is read back after
//! the frame and printed in `--play`'s schema (actions with finished and
//! loops, layers): the root motion and the events too are the GPU's, its
//! outputs of the frame read back with the state. A command the GPU's
//! state refuses (a full table, a layer gone) is found on a shadow
//! `Player` holding the state read back, and refused as `--play` refuses
//! it.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use crate::headless::{request_device, AdapterChoice, Headless};
use keyframe_gpu::playback::{
    ActionState, BlendSpaceId, ClipHandle, Clips, Command, GpuPlayers, Layer, LayerId, Player,
};
use keyframe_gpu::{CharacterId, Crowd, Error, MixerDesc, ModelId, WrapMode, MAX_ACTIONS};

use crate::args::Cli;
use crate::play::{self, Commands};
use crate::play_file::{self, LayerSpec};
use crate::source::Source;
use crate::Failure;

/// A character played on the GPU and its shadow: each command is given
/// to the shadow first (which refuses it as `--play` would, the shadow
/// holding the GPU's state), then to the GPU.
struct Both<'a> {
    shadow: &'a mut Player,
    gpu: &'a mut GpuPlayers,
    character: CharacterId,
}

impl Commands for Both<'_> {
    fn clips(&self) -> Arc<Clips> {
        Arc::clone(self.shadow.clips())
    }
    fn play(&mut self, clip: ClipHandle) -> Result<(), Error> {
        self.shadow.command(Command::Play(clip))?;
        self.gpu.command(self.character, Command::Play(clip))
    }
    fn crossfade(&mut self, to: ClipHandle, d: f64, at: Option<f64>) -> Result<(), Error> {
        Commands::crossfade(self.shadow, to, d, at)?;
        match at {
            Some(t) => self
                .gpu
                .command(self.character, Command::CrossfadeAt(to, d, t)),
            None => self.gpu.command(self.character, Command::Crossfade(to, d)),
        }
    }
    fn fade(&mut self, clip: ClipHandle, d: f64, out: bool) -> Result<(), Error> {
        self.shadow.fade(clip, d, out)?;
        if out {
            self.gpu.command(self.character, Command::FadeOut(clip, d))
        } else {
            self.gpu.command(self.character, Command::FadeIn(clip, d))
        }
    }
    fn wrap(&mut self, clip: Option<ClipHandle>, wrap: WrapMode) -> Result<(), Error> {
        self.shadow.wrap(clip, wrap)?;
        match clip {
            Some(c) => self
                .gpu
                .command(self.character, Command::SetClipWrap(c, wrap)),
            None => self.gpu.command(self.character, Command::SetWrap(wrap)),
        }
    }
    fn repetitions(&mut self, clip: Option<ClipHandle>, n: Option<u64>) -> Result<(), Error> {
        self.shadow.repetitions(clip, n)?;
        match clip {
            Some(c) => self
                .gpu
                .command(self.character, Command::SetClipRepetitions(c, n)),
            None => self.gpu.command(self.character, Command::SetRepetitions(n)),
        }
    }
    fn speed(&mut self, speed: f64) -> Result<(), Error> {
        self.shadow.speed(speed)?;
        self.gpu.command(self.character, Command::SetSpeed(speed))
    }
    fn pause(&mut self, paused: bool) -> Result<(), Error> {
        self.shadow.pause(paused)?;
        self.gpu.command(self.character, Command::SetPaused(paused))
    }
    fn seek(&mut self, time: f64) -> Result<(), Error> {
        Commands::seek(self.shadow, time)?;
        self.gpu.command(self.character, Command::Seek(time))
    }
    fn layer(&self, id: LayerId) -> Option<ActionState> {
        self.shadow.layer(id)
    }
    fn add_layer(&mut self, clip: ClipHandle, layer: Layer) -> Result<LayerId, Error> {
        let shadow = self.shadow.add_layer(clip, layer)?;
        let gpu = self.gpu.add_layer(self.character, clip, layer)?;
        // The shadow holds the GPU's layers under the same handles.
        debug_assert_eq!(shadow, gpu);
        Ok(gpu)
    }
    fn set_layer(&mut self, id: LayerId, layer: Layer) -> Result<(), Error> {
        self.shadow.command(Command::SetLayer(id, layer))?;
        self.gpu
            .command(self.character, Command::SetLayer(id, layer))
    }
    fn remove_layer(&mut self, id: LayerId) -> Result<(), Error> {
        self.shadow.command(Command::RemoveLayer(id))?;
        self.gpu.command(self.character, Command::RemoveLayer(id))
    }
    fn blend(
        &mut self,
        space: BlendSpaceId,
        params: glam::Vec2,
        enter: Option<f64>,
    ) -> Result<(), Error> {
        // The GPU first: it refuses blend spaces for now.
        let set = Command::SetBlendParams(space, params);
        self.gpu.command(self.character, set)?;
        if let Some(d) = enter {
            let play = Command::PlayBlendSpace(space, d);
            self.gpu.command(self.character, play)?;
        }
        self.shadow.blend(space, params, enter)
    }
}

/// The device, the crowd of one model of the script's characters played
/// on the GPU, and the characters.
struct OnGpu {
    h: Headless,
    crowd: Crowd,
    model: ModelId,
    players: GpuPlayers,
    characters: Vec<CharacterId>,
}

impl OnGpu {
    fn new(
        bound: &keyframe_gpu::BoundLibrary,
        instances: u32,
        masks: &[keyframe_gpu::Mask],
        clips: &Arc<Clips>,
    ) -> Result<OnGpu, Failure> {
        let h = request_device(AdapterChoice::PreferHardware)?;
        // As many actions per character as a Player holds by default.
        let mut desc = MixerDesc::new(instances, MAX_ACTIONS);
        for m in masks {
            desc.add_mask(m.clone());
        }
        let mut crowd = Crowd::new();
        let model = crowd.add_mixed_model(&h.device, &h.queue, "play", bound, &desc)?;
        let players = GpuPlayers::new(&h.device, &h.queue, &mut crowd, model, clips)?;
        let characters = (0..instances)
            .map(|_| crowd.add_character(model))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(OnGpu {
            h,
            crowd,
            model,
            players,
            characters,
        })
    }

    /// Steps the GPU by `dt` and reads every character back: its state,
    /// and its root motion and events of the frame.
    fn frame(&mut self, dt: f64) -> Result<Vec<Player>, Error> {
        let (device, queue) = (&self.h.device, &self.h.queue);
        self.players.advance(device, queue, &mut self.crowd, dt)?;
        let mut encoder = device.create_command_encoder(&Default::default());
        self.crowd.record(&mut encoder);
        queue.submit([encoder.finish()]);
        let got = self
            .players
            .read_back(device, queue, &self.crowd, &self.characters)?;
        Ok(got)
    }
}

/// Runs PLAY.json at `path` over `source`'s clips, its characters played
/// on the GPU.
pub fn run(cli: &Cli, path: &Path, source: &Source, out: &mut impl Write) -> Result<(), Failure> {
    let library = &source.library;
    let play = play_file::read(path, library.clips().len())?;
    let shown = path.display().to_string();
    let mask_names = play.masks();
    let bound = source.bound("--play --gpu-playback")?;
    let masks = play::masks(bound.rig(), &mask_names)
        .map_err(|e| Failure::Message(format!("--play {shown}: {e}")))?;
    let (clips, spaces) = play::clips(&play, Some(&bound), &masks, library, &shown)?;
    let clips = Arc::new(clips);
    let mut gpu = OnGpu::new(&bound, play.instances, &masks, &clips)?;
    let (device, queue) = (&gpu.h.device, &gpu.h.queue);
    let mut shadows = gpu
        .players
        .read_back(device, queue, &gpu.crowd, &gpu.characters)?;
    let mut layers = vec![HashMap::new(); shadows.len()];
    let mut current = vec![None; shadows.len()];
    for (f, frame) in play.frames.iter().enumerate() {
        for (c, cmd) in frame.commands.iter().enumerate() {
            let k = cmd.instance as usize;
            let mask = |s: &LayerSpec| play::mask_of(&mask_names, s);
            let mut both = Both {
                shadow: &mut shadows[k],
                gpu: &mut gpu.players,
                character: gpu.characters[k],
            };
            let state = (&mut layers[k], &mut current[k]);
            play::apply(&mut both, state, cmd, &mask, &spaces).map_err(|e| {
                Failure::Message(format!("--play {shown}: frame {f}, command {c}: {e}"))
            })?;
        }
        let got = gpu
            .frame(frame.dt)
            .map_err(|e| Failure::Message(format!("--play {shown}: frame {f}: {e}")))?;
        let posed = if cli.joints || cli.nodes {
            let (device, queue) = (&gpu.h.device, &gpu.h.queue);
            Some(gpu.crowd.read_back(device, queue)?)
        } else {
            None
        };
        let mut items = Vec::with_capacity(got.len());
        for (k, p) in got.iter().enumerate() {
            let pose = match &posed {
                Some(poses) => {
                    let model = poses.model(gpu.model);
                    model.map_or(String::new(), |m| {
                        play::pose_json(cli, bound.rig(), m, k as u32)
                    })
                }
                None => String::new(),
            };
            items.push(play::character_json(k, p, p.frame(), &pose));
        }
        writeln!(
            out,
            "{{\"frame\": {f}, \"instances\": [{}]}}",
            items.join(", ")
        )?;
        shadows = got;
    }
    Ok(())
}
