//! A frame to a PNG: the colour texture is copied into a mappable buffer in
//! the frame's own encoder, then read back once the frame is submitted.

use std::path::Path;

/// Whether a texture of `format` can be written as an 8-bit RGBA PNG.
pub fn supported(format: wgpu::TextureFormat) -> bool {
    use wgpu::TextureFormat as F;
    matches!(
        format,
        F::Rgba8Unorm | F::Rgba8UnormSrgb | F::Bgra8Unorm | F::Bgra8UnormSrgb
    )
}

/// A copy of a frame on its way back.
#[derive(Debug)]
pub struct Capture {
    buffer: wgpu::Buffer,
    row_bytes: u32,
    width: u32,
    height: u32,
    bgra: bool,
}

impl Capture {
    /// Records a copy of `texture` (created with `COPY_SRC`) into a new
    /// buffer.
    pub fn record(
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        texture: &wgpu::Texture,
    ) -> Result<Capture, String> {
        let format = texture.format();
        if !supported(format) {
            return Err(format!("cannot write a {format:?} frame as PNG"));
        }
        let (width, height) = (texture.width(), texture.height());
        let row_bytes = (width * 4).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
            * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("viewer.capture"),
            size: u64::from(row_bytes) * u64::from(height),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_texture_to_buffer(
            texture.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(row_bytes),
                    rows_per_image: Some(height),
                },
            },
            texture.size(),
        );
        let bgra = matches!(
            format,
            wgpu::TextureFormat::Bgra8Unorm | wgpu::TextureFormat::Bgra8UnormSrgb
        );
        Ok(Capture {
            buffer,
            row_bytes,
            width,
            height,
            bgra,
        })
    }

    /// Waits for the copy (submit it first) and writes it to `path` as an
    /// opaque RGBA PNG.
    pub fn write_png(&self, device: &wgpu::Device, path: &Path) -> Result<(), String> {
        let (tx, rx) = std::sync::mpsc::channel();
        self.buffer
            .map_async(wgpu::MapMode::Read, .., move |r| drop(tx.send(r)));
        device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| format!("waiting for the frame: {e}"))?;
        rx.recv()
            .map_err(|_| "the frame's readback was dropped".to_string())?
            .map_err(|e| format!("reading the frame back: {e}"))?;
        let mut rgba = Vec::with_capacity((self.width * self.height * 4) as usize);
        {
            let view = self
                .buffer
                .get_mapped_range(..)
                .map_err(|e| format!("reading the frame back: {e}"))?;
            for row in view.chunks(self.row_bytes as usize) {
                for px in row[..(self.width * 4) as usize].chunks_exact(4) {
                    let [a, b, c, _] = [px[0], px[1], px[2], px[3]];
                    rgba.extend_from_slice(&if self.bgra {
                        [c, b, a, 255]
                    } else {
                        [a, b, c, 255]
                    });
                }
            }
        }
        self.buffer.unmap();
        let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut enc = png::Encoder::new(std::io::BufWriter::new(file), self.width, self.height);
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let mut w = enc
            .write_header()
            .map_err(|e| format!("{}: {e}", path.display()))?;
        w.write_image_data(&rgba)
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}
