//! glTF 2.0 import (feature `gltf`): every animation of a `.gltf` or `.glb`
//! file as one [`Clip`], every channel as one [`Track`], in the order of the
//! animation's `channels` array.
//!
//! The JSON is parsed with the `gltf` crate's JSON model (`gltf::json`), but
//! without its validation pass and without its accessor readers: this module
//! checks every index, range, stride and count itself, so that a hostile
//! file ends in an [`Error::Import`] naming the animation, channel and
//! accessor, never in a panic or a huge allocation.
//!
//! - Buffers: the GLB binary chunk, base64 `data:` URIs, or files relative
//!   to the glTF file's folder (no absolute paths, no other schemes).
//! - Accessors: dense, sparse (for inputs and outputs), and without a buffer
//!   view (zeros, then the sparse substitution). Output component types:
//!   `FLOAT` for every path; for rotations and weights also the normalized
//!   `BYTE`, `UNSIGNED_BYTE`, `SHORT` and `UNSIGNED_SHORT`, decoded with the
//!   spec's formulas (`max(c / 127, -1)`, `c / 255`, `max(c / 32767, -1)`,
//!   `c / 65535`). Values are imported as stored; the library then
//!   normalizes rotation keys within [`QUAT_UNIT_TOLERANCE`](crate::QUAT_UNIT_TOLERANCE)
//!   of unit length and refuses those further off.
//! - Morph weights: the width is the target node's mesh's morph-target count
//!   (from its primitives, or its default `weights`).
//! - Key times must be finite, strictly increasing and not negative (glTF:
//!   `time[0] >= 0`); every track also passes [`Track::validate`].
//! - An input accessor shared by several channels becomes one
//!   [`Arc<[f32]>`](Arc), so the library uploads it once.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use ::gltf::json;
use json::accessor::{ComponentType, GenericComponentType, IndexComponentType, Type};
use json::validation::Checked;

use crate::error::{Error, ImportErrorKind, Result};
use crate::library::AnimationLibrary;
use crate::track::{Clip, Interpolation, Property, Track};

/// Required extensions this importer accepts. None of them changes how
/// animation samplers, accessors, nodes or morph-target counts are read
/// (`KHR_mesh_quantization` only widens the component types of mesh
/// attributes). Any other entry of `extensionsRequired` is refused.
pub const SUPPORTED_EXTENSIONS: &[&str] = &[
    "KHR_mesh_quantization",
    "KHR_texture_transform",
    "KHR_texture_basisu",
    "KHR_materials_unlit",
    "KHR_materials_emissive_strength",
    "KHR_materials_ior",
    "KHR_materials_specular",
    "KHR_materials_transmission",
    "KHR_materials_volume",
    "KHR_materials_clearcoat",
    "KHR_materials_sheen",
    "KHR_materials_iridescence",
    "KHR_materials_anisotropy",
    "KHR_materials_dispersion",
    "KHR_materials_pbrSpecularGlossiness",
    "KHR_materials_variants",
    "KHR_lights_punctual",
    "KHR_xmp_json_ld",
    "EXT_texture_webp",
    "EXT_texture_avif",
];

/// The most elements (components, all counted) that an accessor without a
/// buffer view may declare. Such an accessor is all zeros plus its sparse
/// substitutions, so its size is not bounded by the file's size; this limit
/// keeps a header from making the importer allocate gigabytes.
pub const MAX_UNBACKED_COMPONENTS: u64 = 1 << 24;

/// The most key values (`f32`s, all channels of all animations together)
/// one import decodes: 2^24, 64 MiB (far above any real clip: Fox.glb has
/// about 4,000). Outputs are decoded once per channel, so a file whose many
/// channels share one large accessor would otherwise multiply its size;
/// past this the import is refused. Sampling such a file on the GPU holds
/// the values a few times over (library, upload, driver copies: about 490
/// MiB peak at this limit on lavapipe), which keeps any accepted file under
/// 1 GiB.
pub const MAX_IMPORTED_VALUES: u64 = 1 << 24;

const GLB_MAGIC: &[u8; 4] = b"glTF";
const GLB_CHUNK_JSON: u32 = 0x4E4F_534A;
const GLB_CHUNK_BIN: u32 = 0x004E_4942;

/// A parsed glTF file with its buffers loaded: the JSON model (unvalidated;
/// use the checked readers here) and each buffer's bytes, cut to its
/// declared `byteLength`.
#[derive(Debug, Clone)]
pub struct Document {
    /// The glTF JSON, as parsed. Indices in it are not checked: look objects
    /// up with `get`, never by indexing.
    pub root: json::Root,
    /// The bytes of buffer `i`, exactly its `byteLength` long.
    pub buffers: Vec<Vec<u8>>,
}

/// One accessor decoded to `f32`.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessorData {
    /// Components per element (1 for SCALAR, 3 for VEC3, 16 for MAT4, ...).
    pub components: usize,
    /// Number of elements.
    pub count: usize,
    /// `count * components` values, element after element. Normalized
    /// integers are decoded with the glTF formulas; other integers are
    /// converted as they are.
    pub values: Vec<f32>,
    /// The stored component type.
    pub component_type: ComponentType,
    /// The accessor's `normalized` flag.
    pub normalized: bool,
}

/// Where a channel of an imported animation came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ChannelInfo {
    /// The glTF node index of the channel's target.
    pub node: usize,
    /// The target path.
    pub property: Property,
    /// The sampler's interpolation.
    pub interpolation: Interpolation,
    /// Index of the sampler inside the animation.
    pub sampler: usize,
    /// The sampler's input (key times) accessor.
    pub input: usize,
    /// The sampler's output (key values) accessor.
    pub output: usize,
}

/// Where an imported clip came from: one entry per glTF animation.
#[derive(Debug, Clone, PartialEq)]
pub struct AnimationInfo {
    /// The animation's name, if it has one.
    pub name: Option<String>,
    /// One entry per channel, in the order of the `channels` array; entry
    /// `j` describes track `j` of the clip.
    pub channels: Vec<ChannelInfo>,
}

/// The result of [`load`] / [`from_slice`].
#[derive(Debug, Clone)]
pub struct Imported {
    /// One clip per glTF animation (clip `i` is animation `i`), one track per
    /// channel in `channels` order, validated and flattened.
    pub library: AnimationLibrary,
    /// Per animation: its name and where each channel points.
    pub animations: Vec<AnimationInfo>,
    /// The parsed file and its buffers, for readers of other parts (skins,
    /// meshes).
    pub document: Document,
}

/// Loads a `.gltf` (external or data-URI buffers) or `.glb` file and imports
/// every animation. External buffers are resolved relative to the file's
/// folder.
///
/// # Errors
/// [`Error::Import`] naming the animation, channel and accessor where the
/// problem is (unreadable file, broken JSON or GLB, unsupported required
/// extension, out-of-range indices or byte ranges, bad component types,
/// counts that do not match, invalid key times or values, ...).
pub fn load(path: impl AsRef<Path>) -> Result<Imported> {
    let path = path.as_ref();
    let bytes = read_file(path, None)?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    from_slice(&bytes, Some(dir))
}

/// Imports every animation of a glTF file held in memory (JSON or GLB).
/// `base_dir` resolves external buffer URIs; with `None` only GLB and
/// `data:` buffers can be used.
///
/// # Errors
/// As [`load`].
pub fn from_slice(bytes: &[u8], base_dir: Option<&Path>) -> Result<Imported> {
    let document = Document::from_slice(bytes, base_dir)?;
    let (library, animations) = document.animations()?;
    Ok(Imported {
        library,
        animations,
        document,
    })
}

fn import_err(kind: ImportErrorKind) -> Error {
    Error::Import {
        animation: None,
        channel: None,
        accessor: None,
        kind,
    }
}

fn read_file(path: &Path, limit: Option<u64>) -> Result<Vec<u8>> {
    let io = |e: std::io::Error| {
        import_err(ImportErrorKind::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(import_err(ImportErrorKind::Io {
            path: path.display().to_string(),
            message: "not a regular file".into(),
        }));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut out = Vec::new();
    match limit {
        Some(n) => file.take(n).read_to_end(&mut out),
        None => (&file).read_to_end(&mut out),
    }
    .map_err(io)?;
    Ok(out)
}

fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Splits a GLB container into its JSON chunk and optional BIN chunk.
fn parse_glb(bytes: &[u8]) -> std::result::Result<(&[u8], Option<&[u8]>), ImportErrorKind> {
    let glb = |m: &str| ImportErrorKind::Glb(m.to_string());
    let version = le_u32(bytes, 4).ok_or_else(|| glb("truncated header"))?;
    let length = le_u32(bytes, 8).ok_or_else(|| glb("truncated header"))? as usize;
    if version != 2 {
        return Err(ImportErrorKind::Glb(format!(
            "version {version} is not supported (only 2)"
        )));
    }
    if length > bytes.len() {
        return Err(ImportErrorKind::Glb(format!(
            "header declares {length} bytes but the file holds {}",
            bytes.len()
        )));
    }
    if length < 12 {
        return Err(glb("header declares fewer than 12 bytes"));
    }
    let bytes = &bytes[..length];
    let mut at = 12usize;
    let mut json = None;
    let mut bin = None;
    let mut index = 0usize;
    while at < bytes.len() {
        let chunk_len = le_u32(bytes, at)
            .ok_or_else(|| ImportErrorKind::Glb(format!("chunk {index}: truncated chunk header")))?
            as usize;
        let chunk_type = le_u32(bytes, at + 4).ok_or_else(|| {
            ImportErrorKind::Glb(format!("chunk {index}: truncated chunk header"))
        })?;
        let start = at + 8;
        let end = start
            .checked_add(chunk_len)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| {
                ImportErrorKind::Glb(format!(
                    "chunk {index}: length {chunk_len} runs past the end of the file ({} bytes)",
                    bytes.len()
                ))
            })?;
        let data = &bytes[start..end];
        match (index, chunk_type) {
            (0, GLB_CHUNK_JSON) => json = Some(data),
            (0, _) => return Err(glb("the first chunk is not JSON")),
            (1, GLB_CHUNK_BIN) => bin = Some(data),
            (_, GLB_CHUNK_JSON) => return Err(glb("more than one JSON chunk")),
            (_, GLB_CHUNK_BIN) => return Err(glb("a BIN chunk that is not the second chunk")),
            _ => {} // Unknown chunk types are skipped, as the spec says.
        }
        at = end;
        index += 1;
    }
    let json = json.ok_or_else(|| glb("no JSON chunk"))?;
    Ok((json, bin))
}

fn base64_decode(text: &str) -> std::result::Result<Vec<u8>, String> {
    let trimmed = text.trim_end_matches('=');
    if text.len() - trimmed.len() > 2 {
        return Err("too much padding".into());
    }
    let mut out = Vec::with_capacity(trimmed.len() / 4 * 3 + 3);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for (i, c) in trimmed.bytes().enumerate() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("character {i} ({:?}) is not base64", c as char)),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if bits >= 6 {
        return Err("length is not a valid base64 length".into());
    }
    Ok(out)
}

fn percent_decode(uri: &str) -> std::result::Result<String, String> {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent escape at byte {i}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "not UTF-8 after percent decoding".to_string())
}

fn component_size(ct: ComponentType) -> u64 {
    match ct {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

fn component_name(ct: ComponentType) -> &'static str {
    match ct {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

fn type_name(t: Type) -> &'static str {
    match t {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

/// (columns, rows) of an accessor type.
fn type_shape(t: Type) -> (u64, u64) {
    match t {
        Type::Scalar => (1, 1),
        Type::Vec2 => (1, 2),
        Type::Vec3 => (1, 3),
        Type::Vec4 => (1, 4),
        Type::Mat2 => (2, 2),
        Type::Mat3 => (3, 3),
        Type::Mat4 => (4, 4),
    }
}

/// Decodes one component at `bytes[at..]`; the caller has checked the range.
fn read_component(bytes: &[u8], at: usize, ct: ComponentType, normalized: bool) -> f32 {
    let b = |i: usize| bytes.get(at + i).copied().unwrap_or(0);
    match ct {
        ComponentType::F32 => f32::from_le_bytes([b(0), b(1), b(2), b(3)]),
        ComponentType::U32 => u32::from_le_bytes([b(0), b(1), b(2), b(3)]) as f32,
        ComponentType::I8 => {
            let c = f32::from(b(0) as i8);
            if normalized {
                (c / 127.0).max(-1.0)
            } else {
                c
            }
        }
        ComponentType::U8 => {
            let c = f32::from(b(0));
            if normalized {
                c / 255.0
            } else {
                c
            }
        }
        ComponentType::I16 => {
            let c = f32::from(i16::from_le_bytes([b(0), b(1)]));
            if normalized {
                (c / 32767.0).max(-1.0)
            } else {
                c
            }
        }
        ComponentType::U16 => {
            let c = f32::from(u16::from_le_bytes([b(0), b(1)]));
            if normalized {
                c / 65535.0
            } else {
                c
            }
        }
    }
}

fn read_index(bytes: &[u8], at: usize, ct: ComponentType) -> u64 {
    let b = |i: usize| bytes.get(at + i).copied().unwrap_or(0);
    match ct {
        ComponentType::U8 => u64::from(b(0)),
        ComponentType::U16 => u64::from(u16::from_le_bytes([b(0), b(1)])),
        _ => u64::from(u32::from_le_bytes([b(0), b(1), b(2), b(3)])),
    }
}

fn out_of_range(what: &'static str, index: usize, count: usize) -> ImportErrorKind {
    ImportErrorKind::IndexOutOfRange {
        what,
        index: index as u64,
        count,
    }
}

impl Document {
    /// Reads a `.gltf` or `.glb` file and its buffers (external buffers
    /// relative to the file's folder).
    ///
    /// # Errors
    /// [`Error::Import`] for an unreadable file, broken JSON or GLB, an
    /// unsupported required extension, or a buffer that cannot be loaded.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = read_file(path, None)?;
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        Document::from_slice(&bytes, Some(dir))
    }

    /// Parses a glTF file held in memory (JSON, or GLB when it starts with
    /// `glTF`) and loads its buffers; `base_dir` resolves external URIs.
    ///
    /// # Errors
    /// As [`Document::load`].
    pub fn from_slice(bytes: &[u8], base_dir: Option<&Path>) -> Result<Self> {
        let (json_bytes, bin) = if bytes.starts_with(GLB_MAGIC) {
            parse_glb(bytes).map_err(import_err)?
        } else {
            (bytes, None)
        };
        let root = json::Root::from_slice(json_bytes)
            .map_err(|e| import_err(ImportErrorKind::Json(e.to_string())))?;
        if root.asset.version.split('.').next() != Some("2") {
            return Err(import_err(ImportErrorKind::Json(format!(
                "asset.version {:?} is not a glTF 2.x version",
                root.asset.version
            ))));
        }
        for ext in &root.extensions_required {
            if !SUPPORTED_EXTENSIONS.contains(&ext.as_str()) {
                return Err(import_err(ImportErrorKind::UnsupportedExtension(
                    ext.clone(),
                )));
            }
        }
        let mut buffers = Vec::with_capacity(root.buffers.len());
        for (i, buffer) in root.buffers.iter().enumerate() {
            let declared = buffer.byte_length.0;
            let mut data = match &buffer.uri {
                None => match (i, bin) {
                    (0, Some(bin)) => bin.to_vec(),
                    _ => return Err(import_err(ImportErrorKind::MissingBuffer { buffer: i })),
                },
                Some(uri) => load_uri(uri, i, declared, base_dir)?,
            };
            if (data.len() as u64) < declared {
                return Err(import_err(ImportErrorKind::BufferTooShort {
                    buffer: i,
                    declared,
                    actual: data.len() as u64,
                }));
            }
            data.truncate(declared as usize);
            buffers.push(data);
        }
        Ok(Document { root, buffers })
    }

    /// Decodes accessor `index` to `f32`, with every range checked: the
    /// accessor inside its buffer view, the view inside its buffer, the
    /// stride, and the sparse indices and values.
    ///
    /// # Errors
    /// [`Error::Import`] with `accessor` set.
    pub fn read_accessor(&self, index: usize) -> Result<AccessorData> {
        self.read_accessor_kind(index)
            .map_err(|kind| Error::Import {
                animation: None,
                channel: None,
                accessor: Some(index),
                kind,
            })
    }

    /// The accessor's JSON, or an out-of-range error.
    fn accessor(&self, index: usize) -> std::result::Result<&json::Accessor, ImportErrorKind> {
        self.root
            .accessors
            .get(index)
            .ok_or_else(|| out_of_range("accessor", index, self.root.accessors.len()))
    }

    /// A buffer view's bytes, checked against its buffer.
    fn view_bytes(
        &self,
        view: usize,
    ) -> std::result::Result<(&[u8], Option<u64>), ImportErrorKind> {
        let v = self
            .root
            .buffer_views
            .get(view)
            .ok_or_else(|| out_of_range("bufferView", view, self.root.buffer_views.len()))?;
        let b = v.buffer.value();
        let data = self
            .buffers
            .get(b)
            .ok_or_else(|| out_of_range("buffer", b, self.buffers.len()))?;
        let offset = v.byte_offset.map_or(0, |o| o.0);
        let end = offset.checked_add(v.byte_length.0);
        match end {
            Some(end) if end <= data.len() as u64 => Ok((
                &data[offset as usize..end as usize],
                v.byte_stride.map(|s| s.0 as u64),
            )),
            _ => Err(ImportErrorKind::ViewOutOfRange {
                view,
                buffer: b,
                end: end.unwrap_or(u64::MAX),
                length: data.len() as u64,
            }),
        }
    }

    fn read_accessor_kind(
        &self,
        index: usize,
    ) -> std::result::Result<AccessorData, ImportErrorKind> {
        let acc = self.accessor(index)?;
        let Checked::Valid(GenericComponentType(ct)) = acc.component_type else {
            return Err(ImportErrorKind::BadComponentType {
                usage: "any accessor",
                found: "unknown".into(),
                normalized: acc.normalized,
            });
        };
        let Checked::Valid(ty) = acc.type_ else {
            return Err(ImportErrorKind::BadAccessorType {
                expected: "a glTF accessor type",
                found: "unknown".into(),
            });
        };
        let (cols, rows) = type_shape(ty);
        let cs = component_size(ct);
        // Matrix columns of 1- and 2-byte components are padded to 4 bytes.
        let column_bytes = if cols > 1 {
            (rows * cs).div_ceil(4) * 4
        } else {
            rows * cs
        };
        let element_size = cols * column_bytes;
        let components = cols * rows;
        let count = acc.count.0;
        let total = count
            .checked_mul(components)
            .ok_or(ImportErrorKind::TooLarge {
                what: "accessor",
                count,
                limit: u64::MAX / components,
            })?;
        let offsets: Vec<usize> = (0..cols)
            .flat_map(|c| (0..rows).map(move |r| (c * column_bytes + r * cs) as usize))
            .collect();
        let mut values: Vec<f32>;
        match acc.buffer_view {
            Some(view) => {
                let view = view.value();
                let (bytes, stride) = self.view_bytes(view)?;
                let stride = match stride {
                    // glTF: 4 to 252, a multiple of 4.
                    Some(s) if s < element_size || !(4..=252).contains(&s) || s % 4 != 0 => {
                        return Err(ImportErrorKind::BadStride {
                            view,
                            stride: s,
                            element_size,
                        })
                    }
                    Some(s) => s,
                    None => element_size,
                };
                let start = acc.byte_offset.map_or(0, |o| o.0);
                let end = if count == 0 {
                    Some(start)
                } else {
                    (count - 1)
                        .checked_mul(stride)
                        .and_then(|n| n.checked_add(start))
                        .and_then(|n| n.checked_add(element_size))
                };
                match end {
                    Some(end) if end <= bytes.len() as u64 => {}
                    _ => {
                        return Err(ImportErrorKind::AccessorOutOfRange {
                            part: "accessor",
                            view,
                            end: end.unwrap_or(u64::MAX),
                            length: bytes.len() as u64,
                        })
                    }
                }
                // Bounded by the view's length: count * components <= bytes.
                values = Vec::with_capacity(total as usize);
                for e in 0..count {
                    let base = (start + e * stride) as usize;
                    for &o in &offsets {
                        values.push(read_component(bytes, base + o, ct, acc.normalized));
                    }
                }
            }
            None => {
                if total > MAX_UNBACKED_COMPONENTS {
                    return Err(ImportErrorKind::TooLarge {
                        what: "accessor without bufferView",
                        count: total,
                        limit: MAX_UNBACKED_COMPONENTS,
                    });
                }
                values = vec![0.0; total as usize];
            }
        }
        if let Some(sparse) = &acc.sparse {
            let n = sparse.count.0;
            if n > count {
                return Err(ImportErrorKind::Sparse(format!(
                    "{n} sparse entries for an accessor of {count} elements"
                )));
            }
            let Checked::Valid(IndexComponentType(ict)) = sparse.indices.component_type else {
                return Err(ImportErrorKind::BadComponentType {
                    usage: "sparse indices",
                    found: "unknown".into(),
                    normalized: false,
                });
            };
            if !matches!(
                ict,
                ComponentType::U8 | ComponentType::U16 | ComponentType::U32
            ) {
                return Err(ImportErrorKind::BadComponentType {
                    usage: "sparse indices",
                    found: component_name(ict).into(),
                    normalized: false,
                });
            }
            let iview = sparse.indices.buffer_view.value();
            let (ibytes, _) = self.view_bytes(iview)?;
            let istart = sparse.indices.byte_offset.0;
            let isize = component_size(ict);
            let iend = n.checked_mul(isize).and_then(|x| x.checked_add(istart));
            if !matches!(iend, Some(e) if e <= ibytes.len() as u64) {
                return Err(ImportErrorKind::AccessorOutOfRange {
                    part: "sparse indices",
                    view: iview,
                    end: iend.unwrap_or(u64::MAX),
                    length: ibytes.len() as u64,
                });
            }
            let vview = sparse.values.buffer_view.value();
            let (vbytes, _) = self.view_bytes(vview)?;
            let vstart = sparse.values.byte_offset.0;
            let vend = n
                .checked_mul(element_size)
                .and_then(|x| x.checked_add(vstart));
            if !matches!(vend, Some(e) if e <= vbytes.len() as u64) {
                return Err(ImportErrorKind::AccessorOutOfRange {
                    part: "sparse values",
                    view: vview,
                    end: vend.unwrap_or(u64::MAX),
                    length: vbytes.len() as u64,
                });
            }
            let mut previous: Option<u64> = None;
            for s in 0..n {
                let target = read_index(ibytes, (istart + s * isize) as usize, ict);
                if target >= count {
                    return Err(ImportErrorKind::Sparse(format!(
                        "index {target} (entry {s}) is past the accessor's {count} elements"
                    )));
                }
                if previous.is_some_and(|p| target <= p) {
                    return Err(ImportErrorKind::Sparse(format!(
                        "indices are not strictly increasing at entry {s}"
                    )));
                }
                previous = Some(target);
                let base = (vstart + s * element_size) as usize;
                let dst = (target * components) as usize;
                for (k, &o) in offsets.iter().enumerate() {
                    if let Some(slot) = values.get_mut(dst + k) {
                        *slot = read_component(vbytes, base + o, ct, acc.normalized);
                    }
                }
            }
        }
        Ok(AccessorData {
            components: components as usize,
            count: count as usize,
            values,
            component_type: ct,
            normalized: acc.normalized,
        })
    }

    /// The morph-target count of mesh `mesh`: the primitives' common target
    /// count, or the length of the mesh's default `weights`.
    ///
    /// # Errors
    /// [`ImportErrorKind::MorphTargets`] when the mesh has no targets or its
    /// primitives and weights disagree; an out-of-range error for a bad index.
    pub fn morph_target_count(&self, mesh: usize) -> std::result::Result<u32, ImportErrorKind> {
        let m = self
            .root
            .meshes
            .get(mesh)
            .ok_or_else(|| out_of_range("mesh", mesh, self.root.meshes.len()))?;
        let mut targets: Option<usize> = None;
        for (p, prim) in m.primitives.iter().enumerate() {
            let n = prim.targets.as_ref().map_or(0, Vec::len);
            match targets {
                Some(t) if t != n => {
                    return Err(ImportErrorKind::MorphTargets {
                        mesh,
                        reason: format!(
                            "primitive {p} has {n} morph targets, the ones before it {t}"
                        ),
                    })
                }
                _ => targets = Some(n),
            }
        }
        let targets = targets.unwrap_or(0);
        let weights = m.weights.as_ref().map(Vec::len);
        let count = match weights {
            Some(w) if targets > 0 && w != targets => {
                return Err(ImportErrorKind::MorphTargets {
                    mesh,
                    reason: format!(
                        "default weights has {w} entries but the primitives have {targets} morph targets"
                    ),
                })
            }
            Some(w) if targets == 0 => w,
            _ => targets,
        };
        if count == 0 {
            return Err(ImportErrorKind::MorphTargets {
                mesh,
                reason: "no morph targets".into(),
            });
        }
        u32::try_from(count).map_err(|_| ImportErrorKind::MorphTargets {
            mesh,
            reason: format!("{count} morph targets"),
        })
    }

    /// Imports every animation: one [`Clip`] per animation, one [`Track`]
    /// per channel in `channels` order, validated into an
    /// [`AnimationLibrary`].
    ///
    /// # Errors
    /// [`Error::Import`] naming the animation, channel and accessor;
    /// [`ImportErrorKind::NoAnimations`] when there is none.
    pub fn animations(&self) -> Result<(AnimationLibrary, Vec<AnimationInfo>)> {
        if self.root.animations.is_empty() {
            return Err(import_err(ImportErrorKind::NoAnimations));
        }
        let mut inputs: HashMap<usize, Arc<[f32]>> = HashMap::new();
        let mut budget = MAX_IMPORTED_VALUES;
        let mut clips = Vec::with_capacity(self.root.animations.len());
        let mut infos = Vec::with_capacity(self.root.animations.len());
        for (a, anim) in self.root.animations.iter().enumerate() {
            let mut tracks = Vec::with_capacity(anim.channels.len());
            let mut channels = Vec::with_capacity(anim.channels.len());
            for c in 0..anim.channels.len() {
                let (track, info) =
                    self.channel(a, c, &mut inputs, &mut budget)
                        .map_err(|(accessor, kind)| Error::Import {
                            animation: Some(a),
                            channel: Some(c),
                            accessor,
                            kind,
                        })?;
                tracks.push(track);
                channels.push(info);
            }
            let name = anim.name.clone();
            clips.push(Clip::new(
                name.clone().unwrap_or_else(|| format!("animation {a}")),
                tracks,
            ));
            infos.push(AnimationInfo { name, channels });
        }
        let library = AnimationLibrary::new(clips)?;
        Ok((library, infos))
    }

    /// Imports channel `c` of animation `a`. Errors carry the accessor
    /// involved, if any.
    fn channel(
        &self,
        a: usize,
        c: usize,
        inputs: &mut HashMap<usize, Arc<[f32]>>,
        budget: &mut u64,
    ) -> std::result::Result<(Track, ChannelInfo), (Option<usize>, ImportErrorKind)> {
        let anim = &self.root.animations[a];
        let channel = &anim.channels[c];
        let s = channel.sampler.value();
        let sampler = anim
            .samplers
            .get(s)
            .ok_or_else(|| (None, out_of_range("sampler", s, anim.samplers.len())))?;
        let node = channel.target.node.value();
        let node_json = self
            .root
            .nodes
            .get(node)
            .ok_or_else(|| (None, out_of_range("node", node, self.root.nodes.len())))?;
        let property = match channel.target.path {
            Checked::Valid(json::animation::Property::Translation) => Property::Translation,
            Checked::Valid(json::animation::Property::Rotation) => Property::Rotation,
            Checked::Valid(json::animation::Property::Scale) => Property::Scale,
            Checked::Valid(json::animation::Property::MorphTargetWeights) => Property::Weights,
            Checked::Invalid => return Err((None, ImportErrorKind::UnknownPath)),
        };
        let interpolation = match sampler.interpolation {
            Checked::Valid(json::animation::Interpolation::Step) => Interpolation::Step,
            Checked::Valid(json::animation::Interpolation::Linear) => Interpolation::Linear,
            Checked::Valid(json::animation::Interpolation::CubicSpline) => {
                Interpolation::CubicSpline
            }
            Checked::Invalid => return Err((None, ImportErrorKind::UnknownInterpolation)),
        };
        let input = sampler.input.value();
        let output = sampler.output.value();
        let width = match property.fixed_width() {
            Some(w) => w,
            None => {
                let mesh = node_json
                    .mesh
                    .ok_or((None, ImportErrorKind::NodeWithoutMesh { node }))?;
                self.morph_target_count(mesh.value())
                    .map_err(|k| (None, k))?
            }
        };

        // Input: SCALAR FLOAT key times, shared between channels.
        let in_acc = self.accessor(input).map_err(|k| (Some(input), k))?;
        check_type(in_acc, Type::Scalar).map_err(|k| (Some(input), k))?;
        if !matches!(
            in_acc.component_type,
            Checked::Valid(GenericComponentType(ComponentType::F32))
        ) {
            return Err((
                Some(input),
                bad_component(in_acc, "animation input (key times)"),
            ));
        }
        let times = match inputs.get(&input) {
            Some(t) => t.clone(),
            None => {
                let data = self
                    .read_accessor_kind(input)
                    .map_err(|k| (Some(input), k))?;
                let t: Arc<[f32]> = data.values.into();
                inputs.insert(input, t.clone());
                t
            }
        };

        // Output: type and component type per path, count per interpolation.
        let out_acc = self.accessor(output).map_err(|k| (Some(output), k))?;
        let (ty, usage, ints_allowed) = match property {
            Property::Translation => (Type::Vec3, "translation output", false),
            Property::Scale => (Type::Vec3, "scale output", false),
            Property::Rotation => (Type::Vec4, "rotation output", true),
            Property::Weights => (Type::Scalar, "weights output", true),
        };
        check_type(out_acc, ty).map_err(|k| (Some(output), k))?;
        let ct_ok = match out_acc.component_type {
            Checked::Valid(GenericComponentType(ComponentType::F32)) => true,
            Checked::Valid(GenericComponentType(
                ComponentType::I8 | ComponentType::U8 | ComponentType::I16 | ComponentType::U16,
            )) => ints_allowed && out_acc.normalized,
            _ => false,
        };
        if !ct_ok {
            return Err((Some(output), bad_component(out_acc, usage)));
        }
        let keys = times.len() as u64;
        let per_key = interpolation.elements_per_key() as u64;
        let per_element = if property == Property::Weights {
            u64::from(width)
        } else {
            1
        };
        let expected = keys.saturating_mul(per_key).saturating_mul(per_element);
        if out_acc.count.0 != expected {
            return Err((
                Some(output),
                ImportErrorKind::CountMismatch {
                    input: keys,
                    output: out_acc.count.0,
                    expected,
                },
            ));
        }
        let floats = expected.saturating_mul(if property == Property::Weights {
            1
        } else {
            u64::from(width)
        });
        if floats > *budget {
            return Err((
                Some(output),
                ImportErrorKind::TooLarge {
                    what: "key values of all channels",
                    count: (MAX_IMPORTED_VALUES - *budget).saturating_add(floats),
                    limit: MAX_IMPORTED_VALUES,
                },
            ));
        }
        *budget -= floats;
        let values = self
            .read_accessor_kind(output)
            .map_err(|k| (Some(output), k))?
            .values;
        let track = Track {
            node: node as u32,
            property,
            interpolation,
            width,
            times,
            values,
        };
        track.validate().map_err(|kind| {
            let accessor = match kind {
                crate::TrackError::NoKeys
                | crate::TrackError::TimeNotFinite { .. }
                | crate::TrackError::TimesNotIncreasing { .. }
                | crate::TrackError::CubicSplineTooFewKeys { .. } => input,
                _ => output,
            };
            (Some(accessor), ImportErrorKind::InvalidTrack(kind))
        })?;
        // Strictly increasing, so only the first key can be the negative one.
        if let Some(&time) = track.times.first().filter(|t| **t < 0.0) {
            return Err((Some(input), ImportErrorKind::NegativeTime { key: 0, time }));
        }
        Ok((
            track,
            ChannelInfo {
                node,
                property,
                interpolation,
                sampler: s,
                input,
                output,
            },
        ))
    }
}

fn check_type(acc: &json::Accessor, expected: Type) -> std::result::Result<(), ImportErrorKind> {
    match acc.type_ {
        Checked::Valid(t) if t == expected => Ok(()),
        Checked::Valid(t) => Err(ImportErrorKind::BadAccessorType {
            expected: type_name(expected),
            found: type_name(t).into(),
        }),
        Checked::Invalid => Err(ImportErrorKind::BadAccessorType {
            expected: type_name(expected),
            found: "unknown".into(),
        }),
    }
}

fn bad_component(acc: &json::Accessor, usage: &'static str) -> ImportErrorKind {
    ImportErrorKind::BadComponentType {
        usage,
        found: match acc.component_type {
            Checked::Valid(GenericComponentType(ct)) => component_name(ct).into(),
            Checked::Invalid => "unknown".into(),
        },
        normalized: acc.normalized,
    }
}

/// Loads the bytes behind a buffer URI: base64 `data:` or a relative file
/// (at most `declared` bytes are read).
fn load_uri(uri: &str, buffer: usize, declared: u64, base_dir: Option<&Path>) -> Result<Vec<u8>> {
    let bad = |reason: String| import_err(ImportErrorKind::BadUri { buffer, reason });
    if let Some(rest) = uri.strip_prefix("data:") {
        let (header, data) = rest
            .split_once(',')
            .ok_or_else(|| bad("data URI without ','".into()))?;
        if !header.ends_with(";base64") {
            return Err(bad("data URI is not base64".into()));
        }
        return base64_decode(data).map_err(|e| bad(format!("data URI: {e}")));
    }
    let scheme = uri
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && !s.contains('/'));
    if scheme {
        return Err(bad(format!("unsupported URI scheme in {uri:?}")));
    }
    let path = percent_decode(uri).map_err(bad)?;
    if path.starts_with('/') || path.starts_with('\\') || path.is_empty() {
        return Err(bad(format!("{uri:?} is not a relative path")));
    }
    let dir = base_dir.ok_or_else(|| bad(format!("external {uri:?} without a base folder")))?;
    read_file(&dir.join(path), Some(declared))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_known_values() {
        assert_eq!(base64_decode("").unwrap(), b"");
        assert_eq!(base64_decode("TQ==").unwrap(), b"M");
        assert_eq!(base64_decode("TWE=").unwrap(), b"Ma");
        assert_eq!(base64_decode("TWFu").unwrap(), b"Man");
        assert_eq!(base64_decode("TWE").unwrap(), b"Ma");
        assert!(base64_decode("T").is_err());
        assert!(base64_decode("TW!u").is_err());
        assert!(base64_decode("T===").is_err());
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b.bin").unwrap(), "a b.bin");
        assert!(percent_decode("a%2").is_err());
    }

    #[test]
    fn normalized_formulas() {
        let one = |ct, bytes: &[u8]| read_component(bytes, 0, ct, true);
        assert_eq!(one(ComponentType::I8, &[0x80]), -1.0);
        assert_eq!(one(ComponentType::I8, &[0x81]), -1.0);
        assert_eq!(one(ComponentType::I8, &[127]), 1.0);
        assert_eq!(one(ComponentType::U8, &[255]), 1.0);
        assert_eq!(one(ComponentType::I16, &[0x00, 0x80]), -1.0);
        assert_eq!(one(ComponentType::U16, &[0xff, 0xff]), 1.0);
        assert_eq!(one(ComponentType::U16, &[0x00, 0x80]), 32768.0 / 65535.0);
    }

    #[test]
    fn glb_header_checks() {
        assert!(parse_glb(b"glTF").is_err());
        let mut b = b"glTF".to_vec();
        b.extend_from_slice(&2u32.to_le_bytes());
        b.extend_from_slice(&100u32.to_le_bytes());
        assert!(matches!(parse_glb(&b), Err(ImportErrorKind::Glb(_))));
    }
}
