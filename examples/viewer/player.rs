//! What the viewer does each frame, without a window: the clock, the
//! instance table, the animation passes (one [`Animator`] for every
//! instance, timed with timestamp queries where the device has them) and
//! the instanced draw. The window ([`crate::window`]) and the offscreen
//! path ([`crate::offscreen`]) drive it the same way:
//!
//! ```text
//! record(encoder, colour view)   // instance table, compute passes, render pass
//! queue.submit(encoder)
//! after_submit(device)           // timestamps on their way back
//! advance(seconds)               // the clock
//! ```

use glam::Vec3;
use keyframe_gpu::{Animator, Instance, WrapMode};

use crate::camera::Orbit;
use crate::render::{self, Grid, MeshRenderer, Pose, Scene, DEPTH_FORMAT};
use crate::timer::GpuTimer;
use crate::Options;

/// Bounds come from the mesh posed on the CPU at this many times per clip.
const BOUNDS_SAMPLES: u32 = 9;
/// Speed factor of one `+` or `-`.
const SPEED_STEP: f64 = 1.25;

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
    let features =
        keyframe_gpu::required_features() | (adapter.features() & wgpu::Features::TIMESTAMP_QUERY);
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("viewer"),
        required_features: features,
        required_limits: keyframe_gpu::required_limits(&adapter.limits()),
        ..Default::default()
    }))
    .map_err(|e| format!("no GPU adapter: {e}"))?;
    Ok((adapter, device, queue))
}

/// The viewer's state between frames.
#[derive(Debug)]
pub struct Player {
    scene: Scene,
    animator: Animator,
    renderer: MeshRenderer,
    timer: Option<GpuTimer>,
    /// The camera (the window turns and zooms it).
    pub camera: Orbit,
    grid: Grid,
    /// The clip every instance plays.
    clip: u32,
    /// Instance `i` plays at `time + phases[i]`.
    phases: Vec<f64>,
    /// This frame's instance table (rewritten in place).
    instances: Vec<Instance>,
    time: f64,
    speed: f64,
    paused: bool,
    depth: Option<(wgpu::TextureView, u32, u32)>,
    rng: u64,
}

impl Player {
    /// Uploads the scene, builds the animator for `options.instances`
    /// instances and the pipeline for `color_format`, and frames the
    /// camera on the instance grid for a view of `aspect`.
    pub fn new(
        adapter: &wgpu::Adapter,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        scene: Scene,
        options: &Options,
        color_format: wgpu::TextureFormat,
        aspect: f32,
    ) -> Result<Player, String> {
        let n = options.instances.max(1);
        let animator = Animator::with_rig(device, queue, &scene.library, &scene.rig, n)
            .map_err(|e| e.to_string())?;
        let renderer = MeshRenderer::new(
            device,
            adapter,
            &scene,
            &animator,
            color_format,
            1,
            Pose::Animated,
        )?;
        let (lo, hi) = bounds(&scene)?;
        let extent = hi - lo;
        let gap = 0.2 * extent.max_element();
        let grid = Grid::for_instances(n, [extent.x + gap, extent.z + gap]);
        let camera = Orbit::framing(lo - grid.half_extent(), hi + grid.half_extent(), aspect);
        let duration = f64::from(scene.library.clips()[scene.clip as usize].duration());
        let mut player = Player {
            clip: scene.clip,
            scene,
            animator,
            renderer,
            timer: GpuTimer::new(device, queue),
            camera,
            grid,
            phases: (0..n)
                .map(|i| duration * f64::from(i) / f64::from(n))
                .collect(),
            instances: vec![Instance::new(0, 0.0); n as usize],
            time: options.time,
            speed: 1.0,
            paused: false,
            depth: None,
            rng: 0x9e37_79b9_7f4a_7c15,
        };
        player.switch_clip(player.clip);
        Ok(player)
    }

    /// Switches every instance to clip `clip` (0-based); clips that do not
    /// exist are ignored. Each instance keeps its time. A cut for now; a
    /// crossfade goes here when the crate has a mixer.
    pub fn switch_clip(&mut self, clip: u32) {
        if (clip as usize) < self.scene.library.clips().len() {
            self.clip = clip;
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
        let duration = f64::from(self.scene.library.clips()[self.clip as usize].duration());
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
    ) -> Result<(), String> {
        self.record_animation(queue, encoder)?;
        self.record_draw(device, queue, encoder, color, width, height);
        Ok(())
    }

    /// The instance table and the animation passes (sampling, pose, skin)
    /// in one compute pass, between timestamps when they are measured.
    pub fn record_animation(
        &mut self,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<(), String> {
        for (inst, phase) in self.instances.iter_mut().zip(&self.phases) {
            *inst = Instance::new(self.clip, self.time + phase).with_wrap(WrapMode::Repeat);
        }
        self.animator
            .set_instances(queue, &self.instances)
            .map_err(|e| e.to_string())?;
        {
            let timestamp_writes = self.timer.as_mut().and_then(GpuTimer::pass_writes);
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("viewer.animate"),
                timestamp_writes,
            });
            self.animator.record_pass(&mut pass);
        }
        if let Some(timer) = &self.timer {
            timer.resolve(encoder);
        }
        Ok(())
    }

    /// The render pass: every instance in one instanced draw, skinned from
    /// the joint matrices the animation passes wrote (no readback).
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
        self.renderer
            .write_draw(queue, 0, self.camera.view_proj(aspect), 0, self.grid);
        self.ensure_depth(device, width, height);
        let Some((depth, _, _)) = &self.depth else {
            return;
        };
        let mut pass = render::begin_pass(encoder, color, depth, "viewer.draw");
        self.renderer
            .draw(&mut pass, &self.animator, 0, self.instances.len() as u32);
    }

    /// After the frame's submit: starts reading its timestamps back and
    /// collects any that arrived.
    pub fn after_submit(&mut self, device: &wgpu::Device) {
        if let Some(timer) = &mut self.timer {
            timer.after_submit();
            let _ = device.poll(wgpu::PollType::Poll);
            timer.collect();
        }
    }

    /// The window title: clip, instances, frame time, the animation
    /// passes' GPU time ("n/a" without timestamp queries), speed.
    pub fn title(&self, frame_ms: Option<f64>) -> String {
        let clips = self.scene.library.clips();
        let gpu = match &self.timer {
            None => "n/a".to_string(),
            Some(t) => t
                .last_ms()
                .map_or("...".to_string(), |ms| format!("{ms:.2} ms")),
        };
        let frame = frame_ms.map_or("...".to_string(), |ms| format!("{ms:.1} ms"));
        format!(
            "keyframe-gpu viewer | clip {}/{} \"{}\" | {} instance{} | frame {frame} | animation GPU {gpu} | speed {:.2}x{}",
            self.clip + 1,
            clips.len(),
            clips[self.clip as usize].name,
            self.instances.len(),
            if self.instances.len() == 1 { "" } else { "s" },
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

/// Bounds of one instance over every clip: the mesh posed on the CPU twin
/// at `BOUNDS_SAMPLES` times across each clip.
fn bounds(scene: &Scene) -> Result<(Vec3, Vec3), String> {
    let mut inst = Vec::new();
    for (c, clip) in scene.library.clips().iter().enumerate() {
        let d = f64::from(clip.duration());
        for k in 0..BOUNDS_SAMPLES {
            let t = d * f64::from(k) / f64::from(BOUNDS_SAMPLES - 1);
            inst.push(Instance::new(c as u32, t));
        }
    }
    let points = render::pose_on_cpu(scene, &inst)?;
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for p in points {
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if !lo.is_finite() || !hi.is_finite() {
        return Err("the posed mesh has no finite bounds".into());
    }
    Ok((lo, hi))
}
