//! `--screenshot` without a display: the same frames as in the window,
//! rendered into an sRGB RGBA8 texture of the window's size instead of a
//! surface.

use std::path::Path;

use crate::capture::Capture;
use crate::model::Model;
use crate::player::{request_device, Player};
use crate::Options;

/// Renders `options.frames` frames offscreen and writes the last to `path`.
/// `why` says why there is no window (printed with the result).
pub fn run(models: Vec<Model>, options: &Options, path: &Path, why: &str) -> Result<(), String> {
    let instance =
        wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let (adapter, device, queue) = request_device(&instance, None, options.fallback)?;
    let (width, height) = options.size;
    let format = wgpu::TextureFormat::Rgba8UnormSrgb;
    let texture = crate::gfx::texture_2d(
        &device,
        "viewer.offscreen",
        (width, height),
        format,
        wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC,
    );
    let view = texture.create_view(&Default::default());
    let mut player = Player::new(
        &adapter,
        &device,
        &queue,
        models,
        options,
        format,
        width as f32 / height as f32,
    )?;
    let step = options.fixed_step.unwrap_or(1.0 / 30.0);
    let mut capture = None;
    for frame in 0..options.frames {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("viewer.frame"),
        });
        player.record(&device, &queue, &mut encoder, &view, width, height)?;
        if frame + 1 == options.frames {
            capture = Some(Capture::record(&device, &mut encoder, &texture)?);
        }
        queue.submit([encoder.finish()]);
        player.after_submit(&device);
        if frame + 1 < options.frames {
            player.advance(step)?;
        }
    }
    let capture = capture.ok_or("no frame rendered")?;
    capture.write_png(&device, path)?;
    let info = adapter.get_info();
    println!("{}", player.title(None));
    player.print_root_motion();
    println!(
        "wrote {} ({width}x{height}, frame {} rendered offscreen on {} ({:?}, {:?}): {why})",
        path.display(),
        options.frames,
        info.name,
        info.backend,
        info.device_type
    );
    Ok(())
}
