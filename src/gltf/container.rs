//! The container: reading files, GLB chunks, buffer URIs (base64 `data:`
//! and relative files inside the asset root, percent-decoded), and [`Document::load`] /
//! [`Document::from_slice`], which parse the JSON and load every buffer.

use std::io::Read;
use std::path::Path;

use ::gltf::json;

use super::error::import_err;
use super::pointer::PointerChannels;
use super::uri::{self, LoadOptions};
use crate::error::ImportErrorKind;
use crate::error::Result;
use crate::error::UriEscape;

/// Required extensions this importer accepts. None of them changes how
/// animation samplers, accessors, nodes or morph-target counts are read
/// (`KHR_mesh_quantization` only widens the component types of mesh
/// attributes), except `KHR_animation_pointer`, whose channels the importer
/// reads (see [`PointerChannels`]). Any other entry of `extensionsRequired`
/// is refused.
pub(crate) const SUPPORTED_EXTENSIONS: &[&str] = &[
    "KHR_mesh_quantization",
    "KHR_animation_pointer",
    "KHR_node_visibility",
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
    /// The file's identity (of its JSON's contents): its clips and its rig
    /// carry it, so that they bind to each other by node index.
    pub source: crate::model::SourceId,
    /// The `KHR_animation_pointer` channels, which `root` cannot hold:
    /// where a file has any, `root.animations[a].channels` holds only the
    /// core channels of animation `a`. Empty (the default) otherwise.
    pub(crate) pointers: PointerChannels,
}

impl Document {
    /// Reads a `.gltf` or `.glb` file and its buffers. External buffers
    /// resolve relative to the file's folder and must stay inside it (see
    /// [`LoadOptions`] for a wider root).
    ///
    /// # Errors
    /// [`Error::Import`](crate::Error::Import) for an unreadable file, broken
    /// JSON or GLB, an unsupported required extension, or a buffer that
    /// cannot be loaded ([`ImportErrorKind::UnsafeUri`] for one outside the
    /// asset root).
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        Document::load_with(path, &LoadOptions::default())
    }

    /// [`Document::load`] with options: external buffers may come from
    /// anywhere inside `options.asset_root`.
    ///
    /// # Errors
    /// As [`Document::load`].
    pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Self> {
        let path = path.as_ref();
        let bytes = read_file(path, None)?;
        let dir = path.parent().unwrap_or_else(|| Path::new("."));
        Document::from_slice_with(&bytes, Some(dir), options)
    }

    /// Parses a glTF file held in memory (JSON, or GLB when it starts with
    /// `glTF`) and loads its buffers; `base_dir` resolves external URIs,
    /// which must stay inside it. With `None` only GLB and `data:` buffers
    /// can be used.
    ///
    /// # Errors
    /// As [`Document::load`].
    pub fn from_slice(bytes: &[u8], base_dir: Option<&Path>) -> Result<Self> {
        Document::from_slice_with(bytes, base_dir, &LoadOptions::default())
    }

    /// [`Document::from_slice`] with options: external URIs resolve from
    /// `base_dir` and must stay inside `options.asset_root` (default:
    /// `base_dir` itself).
    ///
    /// # Errors
    /// As [`Document::load`].
    pub(crate) fn from_slice_with(
        bytes: &[u8],
        base_dir: Option<&Path>,
        options: &LoadOptions,
    ) -> Result<Self> {
        let (json_bytes, bin) = if bytes.starts_with(GLB_MAGIC) {
            parse_glb(bytes).map_err(import_err)?
        } else {
            (bytes, None)
        };
        let (root, pointers) = parse_root(json_bytes)?;
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
                Some(uri) => load_uri(uri, i, declared, base_dir, options)?,
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
        Ok(Document {
            root,
            buffers,
            source: crate::model::SourceId::of_contents(json_bytes),
            pointers,
        })
    }
}

/// Parses the JSON into the `gltf` crate's model. A file with
/// `KHR_animation_pointer` channels (which that model refuses: they have no
/// `target.node`) is read as a JSON value first, its pointer channels taken
/// out, and the rest parsed with every check of the model; any other file
/// is parsed from the bytes exactly as it always was.
fn parse_root(bytes: &[u8]) -> Result<(json::Root, PointerChannels)> {
    let json_err = |e: json::Error| import_err(ImportErrorKind::Json(e.to_string()));
    if bytes.windows(7).any(|w| w == b"pointer") {
        if let Ok(mut value) = json::deserialize::from_slice::<json::Value>(bytes) {
            if let Some(pointers) = PointerChannels::take(&mut value) {
                let root = json::deserialize::from_value(value).map_err(json_err)?;
                return Ok((root, pointers));
            }
        }
    }
    let root = json::Root::from_slice(bytes).map_err(json_err)?;
    Ok((root, PointerChannels::default()))
}

pub(super) fn read_file(path: &Path, limit: Option<u64>) -> Result<Vec<u8>> {
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
pub(crate) fn parse_glb(
    bytes: &[u8],
) -> std::result::Result<(&[u8], Option<&[u8]>), ImportErrorKind> {
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

pub(crate) fn base64_decode(text: &str) -> std::result::Result<Vec<u8>, String> {
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

pub(crate) fn percent_decode(uri: &str) -> std::result::Result<String, String> {
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

/// Loads the bytes behind a buffer URI: base64 `data:` or a relative file
/// inside the asset root (at most `declared` bytes are read).
fn load_uri(
    uri: &str,
    buffer: usize,
    declared: u64,
    base_dir: Option<&Path>,
    options: &LoadOptions,
) -> Result<Vec<u8>> {
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
    let Some(dir) = base_dir else {
        checked_path(uri, buffer)?;
        return Err(bad(format!("external {uri:?} without a base folder")));
    };
    let path = resolve_external(uri, buffer, dir, options)?;
    read_file(&path, Some(declared))
}

/// The checks of an external URI that need no file system: no `file:` or
/// other scheme, no control character, backslash, absolute path or drive
/// letter; returns the percent-decoded path.
fn checked_path(uri: &str, buffer: usize) -> Result<String> {
    let bad = |reason: String| import_err(ImportErrorKind::BadUri { buffer, reason });
    let unsafe_uri = |why: UriEscape| {
        import_err(ImportErrorKind::UnsafeUri {
            buffer,
            uri: uri.to_string(),
            why,
        })
    };
    uri::check_raw(uri).map_err(unsafe_uri)?;
    let scheme = uri
        .split_once(':')
        .is_some_and(|(s, _)| !s.is_empty() && !s.contains('/'));
    if scheme {
        return Err(bad(format!("unsupported URI scheme in {uri:?}")));
    }
    let path = percent_decode(uri).map_err(bad)?;
    if path.is_empty() {
        return Err(bad(format!("{uri:?} is not a relative path")));
    }
    uri::check_text(&path).map_err(unsafe_uri)?;
    Ok(path)
}

/// The path an external (not `data:`) URI of a file in `dir` names,
/// checked against the asset root: what [`load_uri`] reads, and
/// [`super::resolve_uri`].
pub(super) fn resolve_external(
    uri: &str,
    buffer: usize,
    dir: &Path,
    options: &LoadOptions,
) -> Result<std::path::PathBuf> {
    let path = checked_path(uri, buffer)?;
    let root = options.asset_root.as_deref().unwrap_or(dir);
    match uri::resolve(&path, dir, root) {
        Ok(file) => Ok(file),
        Err(uri::Resolve::Refused(why)) => Err(import_err(ImportErrorKind::UnsafeUri {
            buffer,
            uri: uri.to_string(),
            why,
        })),
        Err(uri::Resolve::Io { path, message }) => Err(import_err(ImportErrorKind::Io {
            path: path.display().to_string(),
            message,
        })),
    }
}
