//! The images of a glTF file, decoded to RGBA8 for base colour textures:
//! from a buffer view (GLB), a `data:` URI, or a file next to the model
//! (resolved by `keyframe_gpu::gltf::resolve_uri`, with the same asset-root
//! checks as the buffers). PNG (through `png`) and JPEG (through
//! `zune-jpeg`), told apart by their first bytes; other formats (WebP,
//! KTX2, AVIF) are reported and their textures left out. Mipmaps are made
//! on the CPU, averaging in linear light.

use std::path::Path;

use keyframe_gpu::gltf::{Document, LoadOptions};

/// An image decoded to 8-bit RGBA (sRGB-encoded colour, linear alpha),
/// rows top to bottom.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes.
    pub rgba: Vec<u8>,
}

/// What reading an image gave.
#[derive(Debug)]
pub enum Read {
    /// Decoded.
    Image(Image),
    /// A format the viewer does not decode (named), drawn without.
    Unsupported(String),
}

/// Reads and decodes image `index` of `doc`, whose external URIs resolve
/// from `base_dir` (`None`: a file held in memory, which may use none).
///
/// # Errors
/// A message naming the image: a buffer view out of range, a URI the
/// asset root refuses or that names no file, a broken `data:` URI, or a
/// PNG or JPEG that fails to decode.
pub fn read(
    doc: &Document,
    index: usize,
    base_dir: Option<&Path>,
    options: &LoadOptions,
) -> Result<Read, String> {
    let what = |e: String| format!("image {index}: {e}");
    let image = doc
        .root
        .images
        .get(index)
        .ok_or_else(|| what("out of range".into()))?;
    let bytes = match (&image.uri, image.buffer_view) {
        (Some(uri), _) if uri.starts_with("data:") => data_uri(uri).map_err(what)?,
        (Some(uri), _) => {
            let base = base_dir.ok_or_else(|| {
                what(format!(
                    "external URI {uri:?} in a file held in memory (no folder)"
                ))
            })?;
            let path = keyframe_gpu::gltf::resolve_uri(uri, base, options)
                .map_err(|e| what(uri_error(e)))?;
            std::fs::read(&path).map_err(|e| what(format!("{}: {e}", path.display())))?
        }
        (None, Some(view)) => view_bytes(doc, view.value()).map_err(what)?.to_vec(),
        (None, None) => return Err(what("neither a URI nor a buffer view".into())),
    };
    decode(&bytes).map_err(what)
}

/// `resolve_uri`'s error for an image's URI, without the buffer index the
/// library's message gives every URI.
fn uri_error(e: keyframe_gpu::Error) -> String {
    use keyframe_gpu::gltf::ImportErrorKind as K;
    match e {
        keyframe_gpu::Error::Import {
            kind: K::UnsafeUri { uri, why, .. },
            ..
        } => format!("uri {uri:?} refused: {why}"),
        keyframe_gpu::Error::Import {
            kind: K::BadUri { reason, .. },
            ..
        } => format!("bad uri: {reason}"),
        other => other.to_string(),
    }
}

/// The bytes of buffer view `view`, checked against its buffer.
fn view_bytes(doc: &Document, view: usize) -> Result<&[u8], String> {
    let v = doc.root.buffer_views.get(view).ok_or_else(|| {
        format!(
            "buffer view {view} is out of range ({} views)",
            doc.root.buffer_views.len()
        )
    })?;
    let buffer = doc
        .buffers
        .get(v.buffer.value())
        .ok_or_else(|| format!("buffer view {view}: its buffer is out of range"))?;
    let start = v.byte_offset.map_or(0, |o| o.0);
    start
        .checked_add(v.byte_length.0)
        .and_then(|end| buffer.get(usize::try_from(start).ok()?..usize::try_from(end).ok()?))
        .ok_or_else(|| format!("buffer view {view} ends past its buffer"))
}

/// The payload of a base64 `data:` URI.
fn data_uri(uri: &str) -> Result<Vec<u8>, String> {
    let (head, payload) = uri.split_once(',').ok_or("a data: URI without a comma")?;
    if !head.ends_with(";base64") {
        return Err("a data: URI that is not base64".into());
    }
    base64(payload).ok_or_else(|| "a data: URI with broken base64".into())
}

/// Standard base64 (RFC 4648), padding optional.
fn base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let digits = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= u32::from(value(c)?) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        match chunk.len() {
            4 => out.extend_from_slice(&bytes[1..4]),
            3 => out.extend_from_slice(&bytes[1..3]),
            2 => out.push(bytes[1]),
            _ => return None,
        }
    }
    Some(out)
}

/// Decodes PNG or JPEG bytes (told apart by their signature, not by the
/// file's MIME type, which exporters get wrong).
pub fn decode(bytes: &[u8]) -> Result<Read, String> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        return decode_png(bytes).map(Read::Image);
    }
    if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        return decode_jpeg(bytes).map(Read::Image);
    }
    let kind = if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "WebP"
    } else if bytes.starts_with(b"\xabKTX 20") {
        "KTX2"
    } else if bytes.len() >= 12 && &bytes[4..8] == b"ftyp" {
        "AVIF"
    } else {
        "an unknown format"
    };
    Ok(Read::Unsupported(kind.into()))
}

fn decode_png(bytes: &[u8]) -> Result<Image, String> {
    let mut decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    // Palettes and low bit depths to 8 bits per channel, 16 bits to 8.
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().map_err(|e| format!("PNG: {e}"))?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("PNG: {e}"))?;
    let px = &buf[..info.buffer_size()];
    let rgba: Vec<u8> = match info.color_type {
        png::ColorType::Rgba => px.to_vec(),
        png::ColorType::Rgb => px
            .chunks_exact(3)
            .flat_map(|c| [c[0], c[1], c[2], 255])
            .collect(),
        png::ColorType::GrayscaleAlpha => px
            .chunks_exact(2)
            .flat_map(|c| [c[0], c[0], c[0], c[1]])
            .collect(),
        png::ColorType::Grayscale => px.iter().flat_map(|&g| [g, g, g, 255]).collect(),
        png::ColorType::Indexed => return Err("PNG: palette left unexpanded".into()),
    };
    Ok(Image {
        width: info.width,
        height: info.height,
        rgba,
    })
}

fn decode_jpeg(bytes: &[u8]) -> Result<Image, String> {
    use zune_jpeg::zune_core::{bytestream::ZCursor, colorspace::ColorSpace, options};
    let options = options::DecoderOptions::default().jpeg_set_out_colorspace(ColorSpace::RGBA);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(ZCursor::new(bytes), options);
    let rgba = decoder.decode().map_err(|e| format!("JPEG: {e:?}"))?;
    let info = decoder.info().ok_or("JPEG: no header")?;
    let (width, height) = (u32::from(info.width), u32::from(info.height));
    if rgba.len() != (width * height * 4) as usize {
        return Err(format!(
            "JPEG: {} bytes decoded for {width}x{height} RGBA",
            rgba.len()
        ));
    }
    Ok(Image {
        width,
        height,
        rgba,
    })
}

/// sRGB-encoded byte to linear light.
fn to_linear(c: u8) -> f32 {
    let c = f32::from(c) / 255.0;
    if c <= 0.04045 {
        c / 12.92
    } else {
        ((c + 0.055) / 1.055).powf(2.4)
    }
}

/// Linear light to an sRGB-encoded byte.
fn to_srgb(c: f32) -> u8 {
    let c = c.clamp(0.0, 1.0);
    let s = if c <= 0.003_130_8 {
        12.92 * c
    } else {
        1.055 * c.powf(1.0 / 2.4) - 0.055
    };
    (s * 255.0).round() as u8
}

impl Image {
    /// The image at half the size (each side rounded down, at least 1):
    /// each pixel the average of up to 2 x 2 pixels, colour in linear light.
    pub fn half(&self) -> Image {
        let (w, h) = ((self.width / 2).max(1), (self.height / 2).max(1));
        let mut linear = [0.0f32; 256];
        for (i, l) in linear.iter_mut().enumerate() {
            *l = to_linear(i as u8);
        }
        let mut rgba = Vec::with_capacity((w * h * 4) as usize);
        for y in 0..h {
            for x in 0..w {
                let mut sum = [0.0f32; 4];
                let mut n = 0.0;
                for (sx, sy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let (px, py) = (
                        (2 * x + sx).min(self.width - 1),
                        (2 * y + sy).min(self.height - 1),
                    );
                    let at = ((py * self.width + px) * 4) as usize;
                    for c in 0..3 {
                        sum[c] += linear[self.rgba[at + c] as usize];
                    }
                    sum[3] += f32::from(self.rgba[at + 3]);
                    n += 1.0;
                }
                for s in &sum[..3] {
                    rgba.push(to_srgb(s / n));
                }
                rgba.push((sum[3] / n).round() as u8);
            }
        }
        Image {
            width: w,
            height: h,
            rgba,
        }
    }

    /// The mipmap chain, from the largest level that fits `max_side`
    /// pixels down to 1 x 1.
    pub fn mip_chain(self, max_side: u32) -> Vec<Image> {
        let mut levels = vec![self];
        while let Some(last) = levels.last() {
            if last.width == 1 && last.height == 1 {
                break;
            }
            let next = last.half();
            if last.width > max_side || last.height > max_side {
                // Too large for the device: dropped.
                levels.pop();
            }
            levels.push(next);
        }
        levels
    }
}
