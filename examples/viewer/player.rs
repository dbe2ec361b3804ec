//! What the viewer does each frame, without a window: the clock, the
//! action table, the animation passes (one [`Animator`] with a mixer for
//! every instance, timed with the crate's [`PassTimer`] where the device
//! has timestamp queries) and the draw of every part of the model. The
//! window ([`crate::window`]) and the offscreen path ([`crate::offscreen`])
//! drive it the same way:
//!
//! ```text
//! record(encoder, colour view)   // action table, compute passes, render pass
//! queue.submit(encoder)
//! after_submit(device)           // timestamps on their way back
//! advance(seconds)               // the clock
//! ```
//!
//! A clip change (keys 1-9, `--switch-at`) is a crossfade of
//! [`FADE_SECONDS`] of playback time: each instance is a mixer character
//! playing the old clip at weight `1 - f` and the new one at weight `f`,
//! both at the instance's own time, `f` going from 0 to 1; outside a fade
//! it plays its one clip at weight 1. A change during a fade starts a new
//! fade from the clip that weighs more at that moment (the new one from
//! `f = 0.5` on) and drops the other at once: the mixer holds two actions
//! per character, and the dominant clip is the one the eye follows, so the
//! jump is at most half a weight. Pressing the key of the clip fading in
//! changes nothing; pressing the key of the dominant clip fading out
//! drops the fade and plays that clip alone.

use keyframe_gpu::gpu::PassTimer;
use keyframe_gpu::{Action, Animator, MixerDesc, WrapMode};

use crate::camera::Orbit;
use crate::draw::{self, Grid, SceneRenderer, DEPTH_FORMAT};
use crate::model::Model;
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

/// The viewer's state between frames.
#[derive(Debug)]
pub struct Player {
    model: Model,
    /// The colour ramp instead of the materials (kept for a rebuild).
    false_color: bool,
    animator: Animator,
    renderer: SceneRenderer,
    timer: Option<PassTimer>,
    /// The animation passes' GPU time in ms, smoothed.
    gpu_ms: Option<f64>,
    /// The colour target is sRGB (the clear colour is given in linear
    /// light).
    srgb: bool,
    /// The camera (the window turns and zooms it).
    pub camera: Orbit,
    grid: Grid,
    /// The clip every instance plays (during a fade, the one fading in).
    clip: u32,
    /// The fade in progress, if any.
    fade: Option<Fade>,
    /// Clip changes due at given playback times (`--switch-at`), in time
    /// order; `switches[next_switch..]` are still to come.
    switches: Vec<(f64, u32)>,
    next_switch: usize,
    /// Instance `i` plays at `time + phases[i]`.
    phases: Vec<f64>,
    /// This frame's action table and actions per instance, refilled in
    /// place within the capacity allocated up front (no allocation per
    /// frame).
    actions: Vec<Action>,
    counts: Vec<u32>,
    time: f64,
    speed: f64,
    paused: bool,
    depth: Option<(wgpu::TextureView, u32, u32)>,
    rng: u64,
}

/// A clip change in progress: `from` fades out while the player's clip
/// fades in, from playback time `start` to `start + FADE_SECONDS`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fade {
    from: u32,
    start: f64,
}

impl Fade {
    /// The new clip's weight at playback time `time`: 0 at the start, 1
    /// from `FADE_SECONDS` later on.
    fn weight(self, time: f64) -> f64 {
        ((time - self.start) / FADE_SECONDS).clamp(0.0, 1.0)
    }
}

impl Player {
    /// Uploads the model, builds the animator (a mixer of
    /// `options.instances` characters of two actions each, no masks) and
    /// the pipelines for `color_format`, and frames the camera on the
    /// instance grid for a view of `aspect`.
    pub fn new(
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        model: Model,
        options: &Options,
        color_format: wgpu::TextureFormat,
        aspect: f32,
    ) -> Result<Player, String> {
        let n = options.instances.max(1);
        let desc = MixerDesc {
            characters: n,
            actions_per_character: ACTIONS_PER_INSTANCE,
            masks: Vec::new(),
        };
        let animator =
            Animator::with_mixer(device, queue, &model.bound, &desc).map_err(|e| e.to_string())?;
        let renderer = SceneRenderer::new(
            device,
            queue,
            adapter,
            &model,
            &animator,
            color_format,
            options.false_color,
        )?;
        let (lo, hi) = model.bounds()?;
        let extent = hi - lo;
        let gap = 0.2 * extent.max_element();
        let grid = Grid::for_instances(n, [extent.x + gap, extent.z + gap]);
        let camera = Orbit::framing(
            lo - grid.half_extent(),
            hi + grid.half_extent(),
            aspect,
            options.yaw.to_radians(),
            options.pitch.to_radians(),
        );
        let clip = options.clip;
        let duration = f64::from(model.library().clips()[clip as usize].duration());
        let mut switches = options.switches.clone();
        // Stable: changes due at the same time keep their order.
        switches.sort_by(|a, b| a.0.total_cmp(&b.0));
        Ok(Player {
            false_color: options.false_color,
            clip,
            fade: None,
            switches,
            next_switch: 0,
            model,
            animator,
            renderer,
            timer: PassTimer::new(device, queue),
            gpu_ms: None,
            srgb: color_format.is_srgb(),
            camera,
            grid,
            phases: (0..n)
                .map(|i| duration * f64::from(i) / f64::from(n))
                .collect(),
            actions: Vec::with_capacity((n * ACTIONS_PER_INSTANCE) as usize),
            counts: Vec::with_capacity(n as usize),
            time: options.time,
            speed: 1.0,
            paused: false,
            depth: None,
            rng: 0x9e37_79b9_7f4a_7c15,
        })
    }

    /// Rebuilds everything on the device from the model, after the old
    /// device was lost: the animator (the model holds no GPU object), the
    /// renderer and the timer. Playback (time, clip, fade, camera) goes on
    /// where it was.
    pub fn rebuild(
        &mut self,
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        color_format: wgpu::TextureFormat,
    ) -> Result<(), String> {
        let desc = MixerDesc::new(self.phases.len() as u32, ACTIONS_PER_INSTANCE);
        self.animator = Animator::with_mixer(device, queue, &self.model.bound, &desc)
            .map_err(|e| e.to_string())?;
        self.renderer = SceneRenderer::new(
            device,
            queue,
            adapter,
            &self.model,
            &self.animator,
            color_format,
            self.false_color,
        )?;
        self.timer = PassTimer::new(device, queue);
        self.gpu_ms = None;
        self.depth = None;
        Ok(())
    }

    /// Fades every instance over to clip `clip` (0-based) in
    /// [`FADE_SECONDS`] of playback time from now; clips that do not exist
    /// are ignored. Each instance keeps its time. During a fade, see the
    /// module's documentation.
    pub fn switch_clip(&mut self, clip: u32) {
        self.fade_to(clip, self.time);
    }

    /// Starts a fade to `clip` at playback time `at` (now, or a
    /// `--switch-at` time that the clock has reached).
    fn fade_to(&mut self, clip: u32, at: f64) {
        if clip as usize >= self.model.library().clips().len() || clip == self.clip {
            return;
        }
        // The clip that weighs more at `at` (the new one from 0.5 on).
        let from = match self.fade {
            Some(fade) if fade.weight(at) < 0.5 => fade.from,
            _ => self.clip,
        };
        self.fade = (from != clip).then_some(Fade { from, start: at });
        self.clip = clip;
    }

    /// Starts the `--switch-at` changes that the clock has reached, each
    /// at its own time, and ends a fade that is over.
    fn update_fade(&mut self) {
        while let Some(&(at, clip)) = self.switches.get(self.next_switch) {
            if at > self.time {
                break;
            }
            self.next_switch += 1;
            self.fade_to(clip, at);
        }
        if self.fade.is_some_and(|f| f.weight(self.time) >= 1.0) {
            self.fade = None;
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

    /// Gives every instance a random time within the current clip.
    pub fn randomize_times(&mut self) {
        let duration = f64::from(self.model.library().clips()[self.clip as usize].duration());
        for p in &mut self.phases {
            // xorshift64: reproducible, no dependency.
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            *p = duration * (self.rng >> 11) as f64 / (1u64 << 53) as f64;
        }
    }

    /// Moves the clock on by `seconds` of playback (times the speed),
    /// unless paused.
    pub fn advance(&mut self, seconds: f64) {
        if !self.paused {
            self.time += self.speed * seconds;
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
        self.record_draw(device, queue, encoder, color, width, height);
        Ok(())
    }

    /// The action table and the animation passes (sampling, mix, pose,
    /// skin) in one compute pass, between timestamps when they are
    /// measured.
    pub fn record_animation(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(), FrameError> {
        self.update_fade();
        self.actions.clear();
        self.counts.clear();
        let fade = self.fade.map(|f| (f.from, f.weight(self.time) as f32));
        for phase in &self.phases {
            let action = |clip| Action::new(clip, self.time + phase).with_wrap(WrapMode::Repeat);
            match fade {
                Some((from, f)) => {
                    self.actions.push(action(from).with_weight(1.0 - f));
                    self.actions.push(action(self.clip).with_weight(f));
                    self.counts.push(2);
                }
                None => {
                    self.actions.push(action(self.clip));
                    self.counts.push(1);
                }
            }
        }
        self.animator
            .set_actions(queue, &self.actions, &self.counts)
            .map_err(|e| match e {
                keyframe_gpu::Error::DeviceLost { .. } => FrameError::DeviceLost,
                e => FrameError::Failed(e.to_string()),
            })?;
        match &mut self.timer {
            Some(timer) => self.animator.record_timed(encoder, timer),
            None => self.animator.record(encoder),
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
        width: u32,
        height: u32,
    ) {
        let aspect = width as f32 / height.max(1) as f32;
        self.renderer.write_frame(
            queue,
            self.camera.view_proj(aspect),
            self.camera.eye(),
            self.camera.light(),
            self.grid,
        );
        self.ensure_depth(device, width, height);
        let Some((depth, _, _)) = &self.depth else {
            return;
        };
        let mut pass = draw::begin_pass(encoder, color, depth, self.srgb, "viewer.draw");
        self.renderer
            .draw(&mut pass, &self.animator, self.phases.len() as u32);
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

    /// The window title: the model, clip (`A -> B` during a fade), instances, frame
    /// time, the animation passes' GPU time ("n/a" without timestamp
    /// queries), speed.
    pub fn title(&self, frame_ms: Option<f64>) -> String {
        let clips = self.model.library().clips();
        let name = |c: u32| format!("{}/{} \"{}\"", c + 1, clips.len(), clips[c as usize].name);
        let clip = match self.fade {
            Some(fade) => format!("{} -> {}", name(fade.from), name(self.clip)),
            None => name(self.clip),
        };
        let gpu = match &self.timer {
            None => "n/a".to_string(),
            Some(_) => self
                .gpu_ms
                .map_or("...".to_string(), |ms| format!("{ms:.2} ms")),
        };
        let frame = frame_ms.map_or("...".to_string(), |ms| format!("{ms:.1} ms"));
        format!(
            "keyframe-gpu viewer | {} | clip {clip} | {} instance{} | frame {frame} | animation GPU {gpu} | speed {:.2}x{}",
            self.model.name,
            self.phases.len(),
            if self.phases.len() == 1 { "" } else { "s" },
            self.speed,
            if self.paused { " (paused)" } else { "" },
        )
    }

    /// Makes the depth attachment match a `width` x `height` target.
    fn ensure_depth(&mut self, device: &wgpu::Device, width: u32, height: u32) {
        if !matches!(&self.depth, Some((_, w, h)) if (*w, *h) == (width, height)) {
            let texture = device.create_texture(&wgpu::TextureDescriptor {
                label: Some("viewer.depth"),
                size: wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: DEPTH_FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
                view_formats: &[],
            });
            self.depth = Some((texture.create_view(&Default::default()), width, height));
        }
    }
}
