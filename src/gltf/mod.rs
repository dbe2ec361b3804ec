//! glTF 2.0 import (feature `gltf`): every animation of a `.gltf` or `.glb`
//! file as one [`Clip`](crate::Clip), every channel as one
//! [`Track`](crate::Track), in the order of the
//! animation's `channels` array.
//!
//! The JSON is parsed with the `gltf` crate's JSON model (`gltf::json`), but
//! without its validation pass and without its accessor readers: this module
//! checks every index, range, stride and count itself, so that a hostile
//! file ends in an [`Error::Import`](crate::Error::Import) naming the
//! animation, channel and accessor, never in a panic or a huge allocation.
//!
//! - Buffers: the GLB binary chunk, base64 `data:` URIs, or files relative
//!   to the glTF file's folder that stay inside it, or inside a wider root
//!   the caller names ([`LoadOptions`]; why the default is strict, and what
//!   is refused: [`UriEscape`]). No other schemes.
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
//!   `time[0] >= 0`); every track also passes
//!   [`Track::validate`](crate::Track::validate).
//! - An input accessor shared by several channels becomes one
//!   [`Arc<[f32]>`](std::sync::Arc), so the library uploads it once.
//!
//! One concern per file: `container.rs` (files, GLB, buffer URIs,
//! [`Document`]), `accessor.rs` (the one accessor reader), `animation.rs`
//! (channels to tracks, morph-target counts), `rig.rs` (the rig of a
//! file: [`Rig::from_document`](crate::model::rig::Rig::from_document)), `error.rs`
//! ([`ImportErrorKind`]).

use std::path::Path;

use crate::error::Result;
use crate::model::library::AnimationLibrary;

pub(crate) mod accessor;
mod animation;
mod bone_map;
pub(crate) mod container;
mod error;
pub(crate) mod pointer;
pub(crate) mod rig;
pub(crate) mod uri;

pub use self::{
    accessor::AccessorData,
    animation::{AnimationInfo, ChannelInfo},
    container::Document,
    uri::{resolve_uri, LoadOptions},
};
pub use crate::error::import::{ImportErrorKind, PointerProblem, UriEscape};
pub(crate) use container::SUPPORTED_EXTENSIONS;

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
/// folder and must stay inside it ([`load_with`] names a wider root).
///
/// # Errors
/// [`Error::Import`](crate::Error::Import) naming the animation, channel
/// and accessor where the problem is (unreadable file, broken JSON or GLB,
/// unsupported required extension, a buffer URI outside the asset root,
/// out-of-range indices or byte ranges, bad component types, counts that
/// do not match, invalid key times or values, ...).
pub fn load(path: impl AsRef<Path>) -> Result<Imported> {
    load_with(path, &LoadOptions::default())
}

/// [`load`] with options: external buffers may come from anywhere inside
/// `options.asset_root`.
///
/// # Errors
/// As [`load`].
pub fn load_with(path: impl AsRef<Path>, options: &LoadOptions) -> Result<Imported> {
    imported(Document::load_with(path, options)?)
}

/// Imports every animation of a glTF file held in memory (JSON or GLB).
/// `base_dir` resolves external buffer URIs, which must stay inside it;
/// with `None` only GLB and `data:` buffers can be used.
///
/// # Errors
/// As [`load`].
pub fn from_slice(bytes: &[u8], base_dir: Option<&Path>) -> Result<Imported> {
    imported(Document::from_slice(bytes, base_dir)?)
}

fn imported(document: Document) -> Result<Imported> {
    let (library, animations) = document.animations()?;
    Ok(Imported {
        library,
        animations,
        document,
    })
}
