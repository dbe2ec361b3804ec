//! The CPU twin of the shaders: one module per shader stage, named like the
//! stage (`shaders/sample.wgsl` -> [`sample`](mod@sample),
//! `shaders/pose.wgsl` -> [`pose`], `shaders/skin.wgsl` -> [`skin`],
//! `shaders/mix.wgsl` -> [`mix`](mod@mix)). Each
//! function mirrors the WGSL function of the same name: the same `f32`
//! operations in the same order, the same constants, the same flat arrays.
//! It is the reference every GPU result is compared with; the tests check
//! it in turn against values computed by hand from the formulas of the
//! contract (`docs/ARCHITECTURE.md`).

pub mod mix;
pub mod pose;
pub mod sample;
pub mod skin;

pub use sample::*;
