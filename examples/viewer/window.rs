//! The window: winit 0.30's `ApplicationHandler`, a wgpu surface, and input
//! turned into [`Player`] calls. Each redraw renders one frame into the
//! surface texture; with `--screenshot` the last frame is also copied to a
//! buffer (from the surface texture itself where the surface allows copies,
//! else from the same frame drawn a second time into a texture of the
//! surface's format) and written as PNG, and the loop exits.

use std::sync::Arc;
use std::time::Instant;

use winit::application::ApplicationHandler;
use winit::dpi::{PhysicalPosition, PhysicalSize};
use winit::event::{ElementState, MouseButton, MouseScrollDelta, WindowEvent};
use winit::event_loop::{ActiveEventLoop, ControlFlow, EventLoop};
use winit::keyboard::{Key, NamedKey};
use winit::window::{Window, WindowId};

use crate::capture::{self, Capture};
use crate::model::Model;
use crate::player::{request_device, FrameError, Player};
use crate::Options;

/// Seconds between title updates.
const TITLE_INTERVAL: f64 = 0.25;

/// Runs the viewer in a window until it is closed (or, with
/// `--screenshot`, until the last frame is written).
pub fn run(event_loop: EventLoop<()>, models: Vec<Model>, options: &Options) -> Result<(), String> {
    event_loop.set_control_flow(ControlFlow::Poll);
    let mut app = App {
        options,
        models: Some(models),
        win: None,
        error: None,
        frames: 0,
        ticks: 0,
        last_frame: None,
        frame_ms: None,
        title_at: Instant::now(),
        cursor: None,
        dragging: false,
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| format!("event loop: {e}"))?;
    match app.error {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// What exists once the window does.
struct Win {
    window: Arc<Window>,
    instance: wgpu::Instance,
    surface: wgpu::Surface<'static>,
    config: wgpu::SurfaceConfiguration,
    adapter: wgpu::Adapter,
    device: wgpu::Device,
    queue: wgpu::Queue,
    player: Player,
    /// The surface texture can be copied from (`COPY_SRC`).
    surface_copies: bool,
    /// The window is 0 x 0 (minimised): nothing is drawn until it is not.
    minimized: bool,
    /// The first error wgpu reported outside an error scope, if any.
    uncaptured: Arc<std::sync::Mutex<Option<String>>>,
}

struct App<'a> {
    options: &'a Options,
    /// Until the window exists.
    models: Option<Vec<Model>>,
    win: Option<Win>,
    error: Option<String>,
    frames: u32,
    /// Redraws requested so far, drawn or not (the fault flags count
    /// these: a minimised window draws no frame).
    ticks: u32,
    last_frame: Option<Instant>,
    /// Wall time per frame, smoothed.
    frame_ms: Option<f64>,
    title_at: Instant,
    cursor: Option<PhysicalPosition<f64>>,
    dragging: bool,
}

impl App<'_> {
    fn fail(&mut self, event_loop: &ActiveEventLoop, error: String) {
        self.error.get_or_insert(error);
        event_loop.exit();
    }

    /// Creates the window, the surface, the device and the player.
    fn open(&mut self, event_loop: &ActiveEventLoop, models: Vec<Model>) -> Result<Win, String> {
        let (w, h) = self.options.size;
        let window = Arc::new(
            event_loop
                .create_window(
                    Window::default_attributes()
                        .with_title("keyframe-gpu viewer")
                        .with_inner_size(PhysicalSize::new(w, h)),
                )
                .map_err(|e| format!("cannot open a window: {e}"))?,
        );
        // The display handle lets the GL backend present too.
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_with_display_handle_from_env(
                Box::new(event_loop.owned_display_handle()),
            ));
        let surface = instance
            .create_surface(window.clone())
            .map_err(|e| format!("cannot create a surface for the window: {e}"))?;
        let (adapter, device, queue) =
            request_device(&instance, Some(&surface), self.options.fallback)?;
        let caps = surface.get_capabilities(&adapter);
        // The shader works in linear light: an sRGB format encodes it (and
        // blends in linear light); on a surface without one the shader
        // encodes.
        let format = caps
            .formats
            .iter()
            .copied()
            .find(|f| f.is_srgb() && capture::supported(*f))
            .or_else(|| caps.formats.first().copied())
            .ok_or("the surface supports no format on this adapter")?;
        let surface_copies = caps.usages.contains(wgpu::TextureUsages::COPY_SRC);
        let mut usage = wgpu::TextureUsages::RENDER_ATTACHMENT;
        if self.options.screenshot.is_some() && surface_copies {
            usage |= wgpu::TextureUsages::COPY_SRC;
        }
        let size = window.inner_size();
        let config = wgpu::SurfaceConfiguration {
            usage,
            format,
            width: size.width.max(1),
            height: size.height.max(1),
            present_mode: wgpu::PresentMode::AutoVsync,
            desired_maximum_frame_latency: 2,
            alpha_mode: caps
                .alpha_modes
                .first()
                .copied()
                .unwrap_or(wgpu::CompositeAlphaMode::Auto),
            view_formats: vec![],
            color_space: wgpu::SurfaceColorSpace::Auto,
        };
        surface.configure(&device, &config);
        let aspect = config.width as f32 / config.height as f32;
        let player = Player::new(
            &adapter,
            &device,
            &queue,
            models,
            self.options,
            format,
            aspect,
        )?;
        let info = adapter.get_info();
        println!(
            "window {}x{} ({:?}) on {} ({:?}, {:?})",
            config.width, config.height, format, info.name, info.backend, info.device_type
        );
        window.set_title(&player.title(None));
        let uncaptured = Arc::new(std::sync::Mutex::new(None));
        watch_errors(&device, &uncaptured);
        Ok(Win {
            window,
            instance,
            surface,
            config,
            adapter,
            device,
            queue,
            player,
            surface_copies,
            minimized: false,
            uncaptured,
        })
    }

    /// Renders, presents and, on the last `--screenshot` frame, writes the
    /// PNG and exits. A minimised window draws nothing; an outdated surface
    /// is configured again, a lost one made again; a lost device is
    /// replaced by a new one and everything on it rebuilt from the model.
    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<(), String> {
        self.ticks += 1;
        self.inject_faults()?;
        let fallback = self.options.fallback;
        let Some(win) = &mut self.win else {
            return Ok(());
        };
        if win.minimized {
            return Ok(());
        }
        let frame = match win.surface.get_current_texture() {
            wgpu::CurrentSurfaceTexture::Success(t)
            | wgpu::CurrentSurfaceTexture::Suboptimal(t) => t,
            wgpu::CurrentSurfaceTexture::Timeout | wgpu::CurrentSurfaceTexture::Occluded => {
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Outdated => {
                win.surface.configure(&win.device, &win.config);
                return Ok(());
            }
            wgpu::CurrentSurfaceTexture::Lost | wgpu::CurrentSurfaceTexture::Validation
                if keyframe_gpu::gpu::is_device_lost(&win.device) =>
            {
                return win.rebuild_device(fallback);
            }
            wgpu::CurrentSurfaceTexture::Lost => return win.remake_surface(),
            wgpu::CurrentSurfaceTexture::Validation => {
                return Err("the surface texture could not be acquired".into());
            }
        };
        let now = Instant::now();
        let wall = self
            .last_frame
            .map_or(0.0, |t| now.duration_since(t).as_secs_f64());
        self.last_frame = Some(now);
        if wall > 0.0 {
            let ms = wall * 1e3;
            self.frame_ms = Some(self.frame_ms.map_or(ms, |p| 0.9 * p + 0.1 * ms));
        }

        let (width, height) = (win.config.width, win.config.height);
        let view = frame.texture.create_view(&Default::default());
        let mut encoder = win
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("viewer.frame"),
            });
        match win
            .player
            .record(&win.device, &win.queue, &mut encoder, &view, width, height)
        {
            Ok(()) => {}
            Err(FrameError::DeviceLost) => return win.rebuild_device(fallback),
            Err(e) => return Err(e.into()),
        }
        let last = self.options.screenshot.is_some() && self.frames + 1 >= self.options.frames;
        let capture = if !last {
            None
        } else if win.surface_copies {
            Some(Capture::record(&win.device, &mut encoder, &frame.texture)?)
        } else {
            // The same frame again, into a texture that can be copied.
            let size = frame.texture.size();
            let texture = crate::gfx::texture_2d(
                &win.device,
                "viewer.screenshot",
                (size.width, size.height),
                win.config.format,
                wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
            );
            let copy_view = texture.create_view(&Default::default());
            win.player.record_draw(
                &win.device,
                &win.queue,
                &mut encoder,
                &copy_view,
                (width, height),
            );
            Some(Capture::record(&win.device, &mut encoder, &texture)?)
        };
        win.queue.submit([encoder.finish()]);
        win.window.pre_present_notify();
        win.queue.present(frame);
        win.player.after_submit(&win.device);
        if let Some(e) = win.uncaptured.lock().map_or(None, |mut e| e.take()) {
            if keyframe_gpu::gpu::is_device_lost(&win.device) {
                return win.rebuild_device(fallback);
            }
            return Err(format!("wgpu: {}", crate::cli::one_line(&e)));
        }
        self.frames += 1;
        match (&self.options.screenshot, capture) {
            (Some(path), Some(capture)) => {
                capture.write_png(&win.device, path)?;
                println!("{}", win.player.title(self.frame_ms));
                win.player.print_root_motion();
                println!(
                    "wrote {} ({width}x{height}, frame {} of the window)",
                    path.display(),
                    self.frames
                );
                event_loop.exit();
            }
            _ => {
                let step = self.options.fixed_step.unwrap_or(wall);
                win.player.advance(step)?;
            }
        }
        if now.duration_since(self.title_at).as_secs_f64() >= TITLE_INTERVAL {
            self.title_at = now;
            win.window.set_title(&win.player.title(self.frame_ms));
        }
        Ok(())
    }

    /// Keys: 1-9 crossfade to clip k, space pause, + and - speed, R random times, Esc quit.
    fn key(&mut self, event_loop: &ActiveEventLoop, key: &Key) {
        let Some(win) = &mut self.win else {
            return;
        };
        let player = &mut win.player;
        match key {
            Key::Named(NamedKey::Space) => player.toggle_pause(),
            Key::Named(NamedKey::Escape) => event_loop.exit(),
            Key::Character(c) => match c.as_str() {
                "+" | "=" => player.change_speed(true),
                "-" | "_" => player.change_speed(false),
                "r" | "R" => player.randomize_times(),
                s => {
                    if let Ok(d @ 1..=9) = s.parse::<u32>() {
                        player.switch_clip(d - 1);
                    }
                }
            },
            _ => return,
        }
        win.window.set_title(&player.title(self.frame_ms));
    }
}

impl App<'_> {
    /// The fault flags (`--resize-at`, `--lose-surface-at`,
    /// `--lose-device-at`) due at this redraw.
    fn inject_faults(&mut self) -> Result<(), String> {
        let tick = self.ticks;
        let options = self.options;
        let Some(win) = &mut self.win else {
            return Ok(());
        };
        for &(at, (w, h)) in &options.resize_at {
            if at == tick {
                // Through winit, as a user's resize; a 0 x 0 (minimised)
                // size X cannot give is handled as its event would be.
                if w > 0 && h > 0 {
                    let _ = win.window.request_inner_size(PhysicalSize::new(w, h));
                }
                win.resize(PhysicalSize::new(w, h));
            }
        }
        if options.lose_surface_at == Some(tick) {
            win.remake_surface()?;
            println!("viewer: surface lost at redraw {tick}, made again");
        }
        if options.lose_device_at == Some(tick) {
            win.device.destroy();
            println!("viewer: device destroyed at redraw {tick}");
        }
        Ok(())
    }
}

impl Win {
    /// A new size: 0 x 0 (minimised) draws nothing until the next size;
    /// any other is configured.
    fn resize(&mut self, size: PhysicalSize<u32>) {
        self.minimized = size.width == 0 || size.height == 0;
        if !self.minimized {
            self.config.width = size.width;
            self.config.height = size.height;
            self.surface.configure(&self.device, &self.config);
        }
    }

    /// The surface made again from the window, and configured: what a
    /// lost surface needs.
    fn remake_surface(&mut self) -> Result<(), String> {
        self.surface = self
            .instance
            .create_surface(self.window.clone())
            .map_err(|e| format!("cannot make the surface again: {e}"))?;
        self.surface.configure(&self.device, &self.config);
        Ok(())
    }

    /// A new device, the surface configured for it, and the player rebuilt
    /// on it from the model: what a lost device needs.
    fn rebuild_device(&mut self, fallback: bool) -> Result<(), String> {
        let (adapter, device, queue) =
            request_device(&self.instance, Some(&self.surface), fallback)?;
        self.surface.configure(&device, &self.config);
        self.player
            .rebuild(&adapter, &device, &queue, self.config.format)?;
        watch_errors(&device, &self.uncaptured);
        println!(
            "viewer: the device was lost; rebuilt on {}",
            adapter.get_info().name
        );
        (self.adapter, self.device, self.queue) = (adapter, device, queue);
        Ok(())
    }
}

/// Keeps the first error wgpu reports outside an error scope in `slot`
/// (the default handler panics; the viewer rebuilds on a lost device or
/// exits with one line instead).
fn watch_errors(device: &wgpu::Device, slot: &Arc<std::sync::Mutex<Option<String>>>) {
    let slot = Arc::clone(slot);
    device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
        if let Ok(mut s) = slot.lock() {
            s.get_or_insert_with(|| e.to_string());
        }
    }));
}

impl ApplicationHandler for App<'_> {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        let Some(models) = self.models.take() else {
            return;
        };
        match self.open(event_loop, models) {
            Ok(win) => {
                win.window.request_redraw();
                self.win = Some(win);
            }
            Err(e) => self.fail(event_loop, e),
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let Some(win) = &mut self.win {
                    win.resize(size);
                }
            }
            WindowEvent::KeyboardInput { event, .. } if event.state == ElementState::Pressed => {
                self.key(event_loop, &event.logical_key);
            }
            WindowEvent::MouseInput {
                state,
                button: MouseButton::Left,
                ..
            } => self.dragging = state == ElementState::Pressed,
            WindowEvent::CursorMoved { position, .. } => {
                if let (true, Some(prev), Some(win)) = (self.dragging, self.cursor, &mut self.win) {
                    win.player
                        .camera
                        .rotate((position.x - prev.x) as f32, (position.y - prev.y) as f32);
                }
                self.cursor = Some(position);
            }
            WindowEvent::MouseWheel { delta, .. } => {
                if let Some(win) = &mut self.win {
                    let steps = match delta {
                        MouseScrollDelta::LineDelta(_, y) => y,
                        MouseScrollDelta::PixelDelta(p) => (p.y / 40.0) as f32,
                    };
                    win.player.camera.zoom(steps);
                }
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw(event_loop) {
                    self.fail(event_loop, e);
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        if let Some(win) = &self.win {
            win.window.request_redraw();
        }
    }
}
