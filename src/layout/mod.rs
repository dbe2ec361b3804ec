//! The Rust side of `shaders/prelude.wgsl`: `#[repr(C)]` twins of every
//! WGSL struct that crosses the boundary, every constant both languages
//! use, and the binding tables the bind group layouts are built from. This
//! is the flat format that the shaders and the CPU twin (`cpu`)
//! read.
//!
//! A test (`src/tests/layout.rs`) parses the shaders with naga and compares
//! every struct's size and member offsets, every shared constant's value and
//! every binding with these, so a change on one side only fails
//! `cargo test`, without an adapter.

mod compressed;
pub(crate) mod mix;
mod playback;
pub(crate) mod rig;
pub(crate) mod sample;
pub(crate) mod shaders;

pub(crate) use compressed::*;
pub(crate) use mix::*;
pub(crate) use playback::*;
pub(crate) use rig::*;
pub(crate) use sample::*;
pub(crate) use shaders::*;

/// How a binding of a shader is accessed; see [`SAMPLE_BINDINGS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BindingKind {
    /// `var<storage, read>`.
    StorageRead,
    /// `var<storage, read_write>`.
    StorageReadWrite,
    /// `var<uniform>`.
    Uniform,
    /// `texture_2d<f32>` of a non-filterable float format, read with
    /// `textureLoad` only.
    TextureFloat,
    /// `texture_2d<u32>`, read with `textureLoad`.
    TextureUint,
}

/// One `@group(0) @binding(n)` of a shader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Binding {
    /// The binding number.
    pub(crate) binding: u32,
    /// The WGSL variable's name.
    pub(crate) name: &'static str,
    /// How it is accessed.
    pub(crate) kind: BindingKind,
    /// The smallest buffer (or buffer range) the binding accepts, in bytes:
    /// one element of an array, the whole of a uniform; 0 for textures.
    pub(crate) min_size: u64,
}

const fn binding(binding: u32, name: &'static str, kind: BindingKind, min_size: usize) -> Binding {
    Binding {
        binding,
        name,
        kind,
        min_size: min_size as u64,
    }
}
