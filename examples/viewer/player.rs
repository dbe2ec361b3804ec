//! What the viewer does each frame, without a window: the playback of
//! every character, the action table, the animation passes (one
//! [`Crowd`] of every model, each with a mixer, timed with the crate's
//! [`PassTimer`] where the device has timestamp queries) and the draw of
//! every model. The window ([`crate::window`]) and the offscreen path
//! ([`crate::offscreen`]) drive it the same way:
//!
//! ```text
//! record(encoder, colour view)   // action table, compute passes, render pass
//! queue.submit(encoder)
//! after_submit(device)           // timestamps on their way back
//! advance(seconds)               // playback: playheads, fades, root motion
//! ```
//!
//! Each character (`--instances` per model, the models' characters
//! alternating on the grid) is a [`playback::Player`] of two actions,
//! every character at its own phase: character `k` of `n` of a model plays
//! its clip at playback time `time + d * k / n` (`d` the first clip's
//! duration). A clip change (keys 1-9, `--switch-at`) is the playback
//! layer's crossfade over [`FADE_SECONDS`] of playback time
//! ([`playback::Player::crossfade_at`], the new clip at the character's
//! own time): the old clip's weight ramps to 0 while the new one's ramps
//! up, their sum staying 1. A change during a fade drops the lighter of
//! the two clips (the table holds two actions per character) and the new
//! clip starts from the weight it had; a change back to the clip fading
//! out fades it in again from its current weight; pressing the key of the
//! clip fading in changes nothing. A model without clip k keeps playing
//! its clip.
//!
//! With `--root-motion` each character walks across the floor by its
//! clips' root motion ([`crate::motion`]).

use std::sync::Arc;

use glam::Vec3;
use keyframe_gpu::gpu::PassTimer;
use keyframe_gpu::playback::{self, Clips, Command};
use keyframe_gpu::{Action, BoundLibrary, Crowd, CrowdCharacter, MixerDesc, ModelId, WrapMode};

use crate::camera::Orbit;
use crate::draw::{self, Grid, SceneRenderer, Target, DEPTH_FORMAT};
use crate::model::Model;
use crate::motion::{self, Root};
use crate::Options;

/// Speed factor of one `+` or `-`.
const SPEED_STEP: f64 = 1.25;
/// Playback seconds a clip change takes to fade from the old clip to the
/// new one.
pub const FADE_SECONDS: f64 = 0.3;
/// Actions per character: the clip fading out and the one fading in.
const ACTIONS_PER_INSTANCE: u32 = 2;

/// An adapter (compatible with `surface` when there is one, only a CPU
/// fallback adapter with `fallback`) and a device with the limits the crate
/// needs (`keyframe_gpu::required_limits`) and timestamp queries where the
/// adapter has them.
pub fn request_device(
    instance: &wgpu::Instance,
    surface: Option<&wgpu::Surface<'_>>,
    fallback: bool,
) -> Result<(wgpu::Adapter, wgpu::Device, wgpu::Queue), String> {
    let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        force_fallback_adapter: fallback,
        compatible_surface: surface,
        apply_limit_buckets: false,
    }))
    .map_err(|e| format!("no GPU adapter: {e}"))?;
    let features = keyframe_gpu::required_features()
        | (adapter.features()
            & (wgpu::Features::TIMESTAMP_QUERY | keyframe_gpu::optional_features()));
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("viewer"),
        required_features: features,
        required_limits: keyframe_gpu::required_limits(&adapter.limits()),
        ..Default::default()
    }))
    .map_err(|e| format!("no GPU adapter: {e}"))?;
    Ok((adapter, device, queue))
}

/// Why a frame could not be recorded: the device is gone (the window
/// rebuilds on a new one), or anything else (the viewer exits with one
/// line).
#[derive(Debug)]
pub enum FrameError {
    /// The device was lost: every call on it reports it.
    DeviceLost,
    /// Any other error, as its message.
    Failed(String),
}

impl From<FrameError> for String {
    fn from(e: FrameError) -> String {
        match e {
            FrameError::DeviceLost => "the GPU device was lost".into(),
            FrameError::Failed(m) => m,
        }
    }
}

/// The adapter, device and queue a cast is uploaded to.
type Gpu<'a> = (&'a wgpu::Adapter, &'a wgpu::Device, &'a wgpu::Queue);

/// One model of the crowd: what it draws, what the crowd poses and what
/// its players share.
#[derive(Debug)]
struct Cast {
    model: Model,
    /// What the crowd animates: the model's clips, the root in place with
    /// `--root-motion`.
    posed: BoundLibrary,
    /// Its root motion, with `--root-motion`.
    root: Option<Root>,
    clips: Arc<Clips>,
    id: ModelId,
    renderer: SceneRenderer,
    /// This frame's place of each of its characters.
    places: Vec<[f32; 4]>,
}

/// One character: its model, its playback and where it stands.
#[derive(Debug)]
struct Character {
    cast: usize,
    player: playback::Player,
    /// It plays at playback time `time + phase`.
    phase: f64,
    /// Its place on the grid.
    home: Vec3,
    /// How far its root motion moved it from there (wrapped to the grid's
    /// area).
    offset: Vec3,
    /// How far its root motion moved it in all (not wrapped).
    travelled: Vec3,
}

/// The viewer's state between frames.
#[derive(Debug)]
pub struct Player {
    casts: Vec<Cast>,
    /// The colour ramp instead of the materials (kept for a rebuild).
    false_color: bool,
    /// The most characters per chunk (kept for a rebuild).
    chunk_limit: u32,
    crowd: Crowd,
    timer: Option<PassTimer>,
    /// The animation passes' GPU time in ms, smoothed.
    gpu_ms: Option<f64>,
    /// The colour target is sRGB (the clear colour is given in linear
    /// light).
    srgb: bool,
    /// The camera (the window turns and zooms it).
    pub camera: Orbit,
    grid: Grid,
    /// Every character, model by model (a model's characters in crowd
    /// order).
    characters: Vec<Character>,
    /// Clip changes due at given playback times (`--switch-at`), in time
    /// order; `switches[next_switch..]` are still to come.
    switches: Vec<(f64, u32)>,
    next_switch: usize,
    /// This frame's crowd table and actions, refilled in place within the
    /// capacity allocated up front (no allocation per frame).
    table: Vec<CrowdCharacter>,
    actions: Vec<Action>,
    time: f64,
    speed: f64,
    paused: bool,
    depth: Option<(wgpu::TextureView, u32, u32)>,
    rng: u64,
}

impl Player {
    /// Uploads the models, builds the crowd (per model a mixer of
    /// `options.instances` characters of two actions each) and the
    /// pipelines for `color_format`, starts every character on
    /// `options.clip` and frames the camera on the grid for a view of
    /// `aspect`.
    pub fn new(
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        models: Vec<Model>,
        options: &Options,
        color_format: wgpu::TextureFormat,
        aspect: f32,
    ) -> Result<Player, String> {
        let n = options.instances.max(1);
        let count = models.len().max(1) as u32;
        let mut crowd = Crowd::new().with_chunk_limit(options.chunk_limit.unwrap_or(u32::MAX));
        let mut casts = Vec::with_capacity(models.len());
        let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
        for model in models {
            let (l, h) = model.bounds()?;
            lo = lo.min(l);
            hi = hi.max(h);
            let target = Target {
                format: color_format,
                false_color: options.false_color,
            };
            let gpu = (adapter, device, queue);
            casts.push(Cast::new(gpu, &mut crowd, model, options, target)?);
        }
        let extent = hi - lo;
        let gap = 0.2 * extent.max_element();
        let grid = Grid::for_instances(n * count, [extent.x + gap, extent.z + gap]);
        let camera = Orbit::framing(
            lo - grid.half_extent(),
            hi + grid.half_extent(),
            aspect,
            options.yaw.to_radians(),
            options.pitch.to_radians(),
        );
        let mut characters = Vec::with_capacity((n * count) as usize);
        for (c, cast) in casts.iter().enumerate() {
            let duration = cast.clips.duration(options.clip).unwrap_or(0.0);
            for k in 0..n {
                let global = characters.len() as u32;
                let phase = duration * f64::from(k) / f64::from(n);
                let mut player = playback::Player::new(&cast.clips)
                    .with_character(global)
                    .with_max_actions(ACTIONS_PER_INSTANCE);
                let clip = cast
                    .clips
                    .clip_at(options.clip)
                    .map_err(|e| e.to_string())?;
                for command in [
                    Command::Play(clip),
                    Command::SetWrap(WrapMode::Repeat),
                    Command::Seek(options.time + phase),
                ] {
                    player.command(command).map_err(|e| e.to_string())?;
                }
                characters.push(Character {
                    cast: c,
                    player,
                    phase,
                    // The models alternate along the grid.
                    home: grid.place(k * count + c as u32),
                    offset: Vec3::ZERO,
                    travelled: Vec3::ZERO,
                });
            }
        }
        let mut switches = options.switches.clone();
        // Stable: changes due at the same time keep their order.
        switches.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut player = Player {
            casts,
            false_color: options.false_color,
            chunk_limit: options.chunk_limit.unwrap_or(u32::MAX),
            crowd,
            timer: PassTimer::new(device, queue),
            gpu_ms: None,
            srgb: color_format.is_srgb(),
            camera,
            grid,
            table: Vec::with_capacity(characters.len()),
            actions: Vec::with_capacity(characters.len() * ACTIONS_PER_INSTANCE as usize),
            characters,
            switches,
            next_switch: 0,
            time: options.time,
            speed: 1.0,
            paused: false,
            depth: None,
            rng: 0x9e37_79b9_7f4a_7c15,
        };
        // Changes due by the first frame start with it; the frame's tables.
        player.step(0.0)?;
        Ok(player)
    }

    /// Rebuilds everything on the device from the models, after the old
    /// device was lost: the crowd (the models hold no GPU object), the
    /// renderers and the timer. Playback (time, clips, fades, places,
    /// camera) goes on where it was.
    pub fn rebuild(
        &mut self,
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        color_format: wgpu::TextureFormat,
    ) -> Result<(), String> {
        let mut crowd = Crowd::new().with_chunk_limit(self.chunk_limit);
        for cast in &mut self.casts {
            let n = cast.places.capacity() as u32;
            let target = Target {
                format: color_format,
                false_color: self.false_color,
            };
            let gpu = (adapter, device, queue);
            let (id, renderer) =
                Cast::upload(gpu, &mut crowd, &cast.model, &cast.posed, n, target)?;
            cast.id = id;
            cast.renderer = renderer;
        }
        self.crowd = crowd;
        self.timer = PassTimer::new(device, queue);
        self.gpu_ms = None;
        self.depth = None;
        Ok(())
    }

    /// Fades every character over to clip `clip` (0-based) in
    /// [`FADE_SECONDS`] of playback time from now; a model without that
    /// clip keeps its own. Each character keeps its time. During a fade,
    /// see the module's documentation.
    pub fn switch_clip(&mut self, clip: u32) {
        self.fade_to(clip);
    }

    /// Starts a fade to `clip` now, for every character whose model has it
    /// and does not play it already as its current clip.
    fn fade_to(&mut self, clip: u32) {
        for ch in &mut self.characters {
            let current = ch.player.current().map(|c| c.clip.index());
            let Ok(handle) = self.casts[ch.cast].clips.clip_at(clip) else {
                continue;
            };
            if current == Some(clip) {
                continue;
            }
            // The clip is the player's and the numbers are finite: nothing
            // to refuse.
            let fade = Command::CrossfadeAt(handle, FADE_SECONDS, self.time + ch.phase);
            let _ = ch.player.command(fade);
        }
    }

    /// Pauses or resumes the clock.
    pub fn toggle_pause(&mut self) {
        self.paused = !self.paused;
    }

    /// Plays faster (`faster`) or slower by one step.
    pub fn change_speed(&mut self, faster: bool) {
        let f = if faster { SPEED_STEP } else { 1.0 / SPEED_STEP };
        self.speed = (self.speed * f).clamp(1.0 / 64.0, 64.0);
    }

    /// Gives every character a random time within its current clip.
    pub fn randomize_times(&mut self) {
        for ch in &mut self.characters {
            let clip = ch.player.current().map_or(0, |c| c.clip.index());
            let duration = self.casts[ch.cast].clips.duration(clip).unwrap_or(0.0);
            // xorshift64: reproducible, no dependency.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            let t = duration * (self.rng >> 11) as f64 / (1u64 << 53) as f64;
            if ch.player.command(Command::Seek(t)).is_ok() {
                ch.phase = t - self.time;
            }
        }
    }

    /// Moves playback on by `seconds` (times the speed), unless paused:
    /// every playhead, fade and root motion, with each `--switch-at`
    /// change started at its own time within the step.
    pub fn advance(&mut self, seconds: f64) -> Result<(), String> {
        if self.paused {
            return Ok(());
        }
        self.step(self.speed * seconds)
    }

    /// Moves playback on by `dt` seconds of playback time, starting the
    /// changes due on the way at their times.
    fn step(&mut self, dt: f64) -> Result<(), String> {
        let end = self.time + dt;
        while let Some(&(at, clip)) = self.switches.get(self.next_switch) {
            if at > end {
                break;
            }
            self.next_switch += 1;
            if at > self.time {
                self.step_players(at - self.time)?;
                self.time = at;
            }
            self.fade_to(clip);
        }
        self.step_players(end - self.time)?;
        self.time = end;
        Ok(())
    }

    /// Advances every player by `dt` and moves each character by its root
    /// motion.
    fn step_players(&mut self, dt: f64) -> Result<(), String> {
        let half = 0.5 * self.grid.extent();
        for ch in &mut self.characters {
            let frame = ch.player.advance(dt).map_err(|e| e.to_string())?;
            if let Some(root) = &self.casts[ch.cast].root {
                let step = root.world_step(&frame.root_motion);
                ch.travelled += step;
                let at = ch.home + ch.offset + step;
                let wrapped =
                    Vec3::new(motion::wrap(at.x, half.x), at.y, motion::wrap(at.z, half.z));
                ch.offset = wrapped - ch.home;
            }
        }
        Ok(())
    }

    /// Prints how far character 0 of each model walked by its root motion
    /// (with `--root-motion`): one line per model, `root motion of NAME:
    /// ROOT moved character 0 by (x, y, z)`.
    pub fn print_root_motion(&self) {
        for (c, cast) in self.casts.iter().enumerate() {
            let Some(root) = &cast.root else {
                continue;
            };
            if let Some(ch) = self.characters.iter().find(|ch| ch.cast == c) {
                let d = ch.travelled;
                println!(
                    "root motion of {}: {} moved character 0 by ({:.4}, {:.4}, {:.4})",
                    cast.model.name, root.name, d.x, d.y, d.z
                );
            }
        }
    }

    /// Records a whole frame into `encoder`: the instance table, the
    /// animation passes, and the instanced draw into `color` (`width` x
    /// `height`).
    pub fn record(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        color: &wgpu::TextureView,
        width: u32,
        height: u32,
    ) -> Result<(), FrameError> {
        self.record_animation(queue, encoder)?;
        self.record_draw(device, queue, encoder, color, (width, height));
        Ok(())
    }

    /// The action table, the places and the animation passes (sampling,
    /// mix, pose, skin of every model) in one compute pass, between
    /// timestamps when they are measured.
    pub fn record_animation(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(), FrameError> {
        self.table.clear();
        self.actions.clear();
        for cast in &mut self.casts {
            cast.places.clear();
        }
        for ch in &self.characters {
            let cast = &mut self.casts[ch.cast];
            let own = &ch.player.frame().actions;
            self.table
                .push(CrowdCharacter::new(cast.id, own.len() as u32));
            self.actions.extend_from_slice(own);
            cast.places
                .push((ch.home + ch.offset).extend(1.0).to_array());
        }
        self.crowd
            .set_actions(queue, &self.table, &self.actions)
            .map_err(|e| match e {
                keyframe_gpu::Error::DeviceLost { .. } => FrameError::DeviceLost,
                e => FrameError::Failed(e.to_string()),
            })?;
        for cast in &self.casts {
            cast.renderer.write_places(queue, &cast.places);
        }
        match &mut self.timer {
            Some(timer) => self.crowd.record_timed(encoder, timer),
            None => self.crowd.record(encoder),
        }
        Ok(())
    }

    /// The render pass: every part of every instance, from the matrices
    /// the animation passes wrote (no readback).
    pub fn record_draw(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        color: &wgpu::TextureView,
        (width, height): (u32, u32),
    ) {
        let aspect = width as f32 / height.max(1) as f32;
        let view_proj = self.camera.view_proj(aspect);
        for cast in &mut self.casts {
            cast.renderer
                .write_frame(queue, view_proj, self.camera.eye(), self.camera.light());
        }
        self.ensure_depth(device, width, height);
        let Some((depth, _, _)) = &self.depth else {
            return;
        };
        let mut pass = draw::begin_pass(encoder, color, depth, self.srgb, "viewer.draw");
        // A model past one storage binding is split into chunks, each
        // with buffers of its own: one draw per chunk, from its places on.
        for cast in &self.casts {
            let Some(animator) = self.crowd.model(cast.id) else {
                continue;
            };
            let size = animator.chunk_capacity();
            for (k, chunk) in animator.chunks().iter().enumerate() {
                let n = chunk.instance_count();
                if n > 0 {
                    cast.renderer.draw(&mut pass, chunk, k as u32 * size, n);
                }
            }
        }
    }

    /// After the frame's submit: starts reading its timestamps back and
    /// collects any that arrived.
    pub fn after_submit(&mut self, device: &wgpu::Device) {
        if let Some(timer) = &mut self.timer {
            timer.after_submit();
            let _ = device.poll(wgpu::PollType::Poll);
            if let Some(t) = timer.poll() {
                let ms = t.as_secs_f64() * 1e3;
                self.gpu_ms = Some(self.gpu_ms.map_or(ms, |p| 0.9 * p + 0.1 * ms));
            }
        }
    }

    /// The window title: the models, the clip of each model's first
    /// character (`A -> B` during a fade), the characters, frame time, the
    /// animation passes' GPU time ("n/a" without timestamp queries),
    /// speed.
    pub fn title(&self, frame_ms: Option<f64>) -> String {
        let names: Vec<&str> = self.casts.iter().map(|c| c.model.name.as_str()).collect();
        let clips: Vec<String> = (0..self.casts.len())
            .filter_map(|c| self.characters.iter().find(|ch| ch.cast == c))
            .map(|ch| self.clip_label(ch))
            .collect();
        let gpu = match &self.timer {
            None => "n/a".to_string(),
            Some(_) => self
                .gpu_ms
                .map_or("...".to_string(), |ms| format!("{ms:.2} ms")),
        };
        let frame = frame_ms.map_or("...".to_string(), |ms| format!("{ms:.1} ms"));
        let n = self.characters.len();
        format!(
            "keyframe-gpu viewer | {} | clip {} | {n} instance{} | frame {frame} | animation GPU {gpu} | speed {:.2}x{}",
            names.join(" + "),
            clips.join(" + "),
            if n == 1 { "" } else { "s" },
            self.speed,
            if self.paused { " (paused)" } else { "" },
        )
    }

    /// A character's clip as `k/n "name"`, or `A -> B` while a clip fades
    /// out (`B` the current one).
    fn clip_label(&self, ch: &Character) -> String {
        let clips = self.casts[ch.cast].model.library().clips();
        let name = |c: u32| {
            let clip = clips.get(c as usize).map_or("?", |c| c.name.as_str());
            format!("{}/{} \"{clip}\"", c + 1, clips.len())
        };
        let Some(current) = ch.player.current().map(|c| c.clip.index()) else {
            return "none".into();
        };
        let fading = ch
            .player
            .frame()
            .actions
            .iter()
            .find(|a| a.clip != current)
            .map(|a| a.clip);
        match fading {
            Some(from) => format!("{} -> {}", name(from), name(current)),
            None => name(current),
        }
    }

    /// Makes the depth attachment match a `width` x `height` target.
    fn ensure_depth(&mut self, device: &wgpu::Device, width: u32, height: u32) {
        if !matches!(&self.depth, Some((_, w, h)) if (*w, *h) == (width, height)) {
            let texture = crate::gfx::texture_2d(
                device,
                "viewer.depth",
                (width, height),
                DEPTH_FORMAT,
                wgpu::TextureUsages::RENDER_ATTACHMENT,
            );
            self.depth = Some((texture.create_view(&Default::default()), width, height));
        }
    }
}

impl Cast {
    /// One model in `crowd` with its renderer; with `--root-motion` posed
    /// in place.
    fn new(
        gpu: Gpu<'_>,
        crowd: &mut Crowd,
        model: Model,
        options: &Options,
        target: Target,
    ) -> Result<Cast, String> {
        let n = options.instances.max(1);
        let root = match &options.root_motion {
            Some(name) => Some(Root::choose(&model.bound, name.as_deref(), &model.name)?),
            None => None,
        };
        let (posed, clips) = match &root {
            Some(root) => (
                root.in_place(&model.bound)?,
                Clips::with_root(&model.bound, root.node).map_err(|e| e.to_string())?,
            ),
            None => (model.bound.clone(), Clips::new(model.library())),
        };
        let (id, renderer) = Cast::upload(gpu, crowd, &model, &posed, n, target)?;
        Ok(Cast {
            model,
            posed,
            root,
            clips: Arc::new(clips),
            id,
            renderer,
            places: Vec::with_capacity(n as usize),
        })
    }

    /// Adds `posed` to `crowd` as `model` (a mixer of `n` characters) and
    /// builds its renderer.
    fn upload(
        (adapter, device, queue): Gpu<'_>,
        crowd: &mut Crowd,
        model: &Model,
        posed: &BoundLibrary,
        n: u32,
        target: Target,
    ) -> Result<(ModelId, SceneRenderer), String> {
        let desc = MixerDesc::new(n, ACTIONS_PER_INSTANCE);
        let id = crowd
            .add_mixed_model(device, queue, &model.name, posed, &desc)
            .map_err(|e| e.to_string())?;
        let animator = crowd.model(id).ok_or("the crowd lost a model")?;
        let renderer = SceneRenderer::new(device, queue, adapter, model, animator, n, target)?;
        Ok((id, renderer))
    }
}
