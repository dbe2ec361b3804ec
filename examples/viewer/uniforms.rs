//! The Rust twins of `scene.wgsl`'s uniform structs, with their layouts
//! by member name for the test that compares them with naga's layout of
//! the shader (`tests/viewer_scene.rs`). Included by path there.
#![allow(dead_code, reason = "the test uses only the layouts")]

/// `scene.wgsl`'s `Frame`: written once per frame.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Frame {
    pub view_proj: [f32; 16],
    pub eye: [f32; 4],
    pub light: [f32; 4],
    pub node_stride: u32,
    pub joint_stride: u32,
    pub morph_stride: u32,
    pub flags: u32,
}
const _: () = assert!(std::mem::size_of::<Frame>() == 112);

/// `Frame::flags`: the false-colour ramp instead of the materials.
pub const FALSE_COLOR: u32 = 1;
/// `Frame::flags`: the target is not sRGB, the shader encodes.
pub const ENCODE_SRGB: u32 = 2;

/// `scene.wgsl`'s `Item`: one (part, primitive), written once.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct Item {
    pub node: u32,
    pub joint_offset: u32,
    pub joint_count: u32,
    pub morph_offset: u32,
    pub targets: u32,
    pub delta_base: u32,
    pub first_vertex: u32,
    pub vertex_count: u32,
}
const _: () = assert!(std::mem::size_of::<Item>() == 32);

/// `scene.wgsl`'s `Material`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MaterialBlock {
    pub base_color: [f32; 4],
    pub uv_u: [f32; 4],
    pub uv_v: [f32; 4],
    pub emissive: [f32; 4],
    pub alpha_mode: u32,
    pub alpha_cutoff: f32,
    pub unlit: u32,
    pub pad: u32,
}
const _: () = assert!(std::mem::size_of::<MaterialBlock>() == 80);

/// `MaterialBlock::alpha_mode` values.
pub const ALPHA_OPAQUE: u32 = 0;
/// Alpha below the cutoff is dropped.
pub const ALPHA_MASK: u32 = 1;
/// Blended.
pub const ALPHA_BLEND: u32 = 2;

/// A struct's name, its members (name, byte offset) and its size.
pub type Layout = (&'static str, Vec<(&'static str, usize)>, usize);

/// Each struct's layout.
pub fn layouts() -> Vec<Layout> {
    use std::mem::{offset_of, size_of};
    vec![
        (
            "Frame",
            vec![
                ("view_proj", offset_of!(Frame, view_proj)),
                ("eye", offset_of!(Frame, eye)),
                ("light", offset_of!(Frame, light)),
                ("node_stride", offset_of!(Frame, node_stride)),
                ("joint_stride", offset_of!(Frame, joint_stride)),
                ("morph_stride", offset_of!(Frame, morph_stride)),
                ("flags", offset_of!(Frame, flags)),
            ],
            size_of::<Frame>(),
        ),
        (
            "Item",
            vec![
                ("node", offset_of!(Item, node)),
                ("joint_offset", offset_of!(Item, joint_offset)),
                ("joint_count", offset_of!(Item, joint_count)),
                ("morph_offset", offset_of!(Item, morph_offset)),
                ("targets", offset_of!(Item, targets)),
                ("delta_base", offset_of!(Item, delta_base)),
                ("first_vertex", offset_of!(Item, first_vertex)),
                ("vertex_count", offset_of!(Item, vertex_count)),
            ],
            size_of::<Item>(),
        ),
        (
            "Material",
            vec![
                ("base_color", offset_of!(MaterialBlock, base_color)),
                ("uv_u", offset_of!(MaterialBlock, uv_u)),
                ("uv_v", offset_of!(MaterialBlock, uv_v)),
                ("emissive", offset_of!(MaterialBlock, emissive)),
                ("alpha_mode", offset_of!(MaterialBlock, alpha_mode)),
                ("alpha_cutoff", offset_of!(MaterialBlock, alpha_cutoff)),
                ("unlit", offset_of!(MaterialBlock, unlit)),
                ("pad", offset_of!(MaterialBlock, pad)),
            ],
            size_of::<MaterialBlock>(),
        ),
    ]
}

/// The constants `scene.wgsl` shares with Rust, by name.
pub fn constants() -> Vec<(&'static str, u32)> {
    vec![
        ("FALSE_COLOR", FALSE_COLOR),
        ("ENCODE_SRGB", ENCODE_SRGB),
        ("ALPHA_OPAQUE", ALPHA_OPAQUE),
        ("ALPHA_MASK", ALPHA_MASK),
        ("ALPHA_BLEND", ALPHA_BLEND),
    ]
}
