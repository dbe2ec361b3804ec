//! The material of meshes animated by keyframe-gpu: `StandardMaterial`
//! (its look: base colour, textures, lights, shadows) extended with a
//! vertex stage that places each vertex by the crate's matrices.

use bevy::asset::{embedded_asset, Asset};
use bevy::ecs::system::lifetimeless::SRes;
use bevy::ecs::system::SystemParamItem;
use bevy::mesh::MeshVertexBufferLayoutRef;
use bevy::pbr::{
    ExtendedMaterial, MaterialExtension, MaterialExtensionKey, MaterialExtensionPipeline,
    StandardMaterial,
};
use bevy::prelude::*;
use bevy::render::render_resource::{
    AsBindGroup, AsBindGroupError, BindGroupBuilder, BindGroupLayout, BindGroupLayoutEntry,
    BindingType, BufferBindingType, BufferInitDescriptor, BufferUsages, RenderPipelineDescriptor,
    ShaderStages, SpecializedMeshPipelineError, UnpreparedBindingResource,
};
use bevy::render::renderer::RenderDevice;
use bevy::shader::ShaderRef;

use crate::render::RenderAnimationBuffers;

/// The material of a mesh animated by the plugin: the file's
/// `StandardMaterial` with the [`GpuSkin`] vertex stage.
pub type GpuSkinnedMaterial = ExtendedMaterial<StandardMaterial, GpuSkin>;

const SKIN_SHADER: &str = "embedded://keyframe_gpu_bevy/shaders/skin.wesl";
const SKIN_PREPASS_SHADER: &str = "embedded://keyframe_gpu_bevy/shaders/skin_prepass.wesl";

/// Registers the shaders (embedded in the crate).
pub(crate) fn add_shaders(app: &mut App) {
    bevy::shader::load_shader_library!(app, "shaders/placement.wesl");
    embedded_asset!(app, "shaders/skin.wesl");
    embedded_asset!(app, "shaders/skin_prepass.wesl");
}

/// The vertex stage of a mesh part animated by the plugin: which model's
/// buffers it reads and where its matrices sit. Made by the plugin when
/// it sets up a scene; one per (model, part, base material, chunk),
/// shared by every character of the model's chunk (the character is the
/// mesh's `MeshTag`, its index in the chunk).
#[derive(Asset, TypePath, Clone, Debug, PartialEq)]
pub struct GpuSkin {
    /// The model (index among the plugin's models).
    pub(crate) model: u32,
    /// The model's buffers' generation this material was made for; a
    /// model that grows gets new buffers and its materials a new
    /// generation.
    pub(crate) generation: u32,
    /// The chunk of the model's characters whose buffers it binds
    /// (keyframe-gpu's `Crowd` splits a model's characters into chunks
    /// that each fit one storage binding).
    pub(crate) chunk: u32,
    pub(crate) part: PartUniform,
}

/// The part's constants, as `GpuSkinPart` in `placement.wesl`.
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
pub(crate) struct PartUniform {
    pub(crate) inverse_rest: [f32; 16],
    pub(crate) node: u32,
    pub(crate) joint_offset: u32,
    pub(crate) joints_per_character: u32,
    pub(crate) nodes_per_character: u32,
    pub(crate) skinned: u32,
    pub(crate) morph_offset: u32,
    pub(crate) morph_per_character: u32,
    pub(crate) morph_count: u32,
    pub(crate) placed_node_is_static: u32,
    pub(crate) pad: [u32; 3],
}

const _: () = assert!(std::mem::size_of::<PartUniform>() == 112);

/// The pipeline key of a [`GpuSkin`]: none of its data changes the
/// pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuSkinKey;

const PART_BINDING: u32 = 100;
const JOINTS_BINDING: u32 = 101;
const WORLDS_BINDING: u32 = 102;
const MORPH_BINDING: u32 = 103;

impl AsBindGroup for GpuSkin {
    type Data = GpuSkinKey;
    type Param = Option<SRes<RenderAnimationBuffers>>;

    fn label() -> &'static str {
        "keyframe_gpu_bevy.skin"
    }

    fn bind_group_data(&self) -> Self::Data {
        GpuSkinKey
    }

    fn build_bind_group(
        &self,
        _layout: &BindGroupLayout,
        render_device: &RenderDevice,
        param: &mut SystemParamItem<'_, '_, Self::Param>,
        _force_no_bindless: bool,
        output: &mut BindGroupBuilder,
    ) -> Result<(), AsBindGroupError> {
        // The model's buffers exist once the render world has built its
        // crowd for this generation; until then, the next frame.
        let buffers = param
            .as_ref()
            .and_then(|b| b.chunk(self.model, self.generation, self.chunk))
            .ok_or(AsBindGroupError::RetryNextUpdate)?;
        let part = render_device.create_buffer_with_data(&BufferInitDescriptor {
            label: Some("keyframe_gpu_bevy.part"),
            contents: bytemuck::bytes_of(&self.part),
            usage: BufferUsages::UNIFORM,
        });
        output.push((PART_BINDING, UnpreparedBindingResource::Buffer(part)));
        output.push((
            JOINTS_BINDING,
            UnpreparedBindingResource::Buffer(buffers.joints.clone()),
        ));
        output.push((
            WORLDS_BINDING,
            UnpreparedBindingResource::Buffer(buffers.worlds.clone()),
        ));
        output.push((
            MORPH_BINDING,
            UnpreparedBindingResource::Buffer(buffers.morph_weights.clone()),
        ));
        Ok(())
    }

    fn bind_group_layout_entries(
        _render_device: &RenderDevice,
        _force_no_bindless: bool,
    ) -> Vec<BindGroupLayoutEntry> {
        let storage = |binding| BindGroupLayoutEntry {
            binding,
            visibility: ShaderStages::VERTEX,
            ty: BindingType::Buffer {
                ty: BufferBindingType::Storage { read_only: true },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        vec![
            BindGroupLayoutEntry {
                binding: PART_BINDING,
                visibility: ShaderStages::VERTEX,
                ty: BindingType::Buffer {
                    ty: BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: std::num::NonZeroU64::new(
                        std::mem::size_of::<PartUniform>() as u64
                    ),
                },
                count: None,
            },
            storage(JOINTS_BINDING),
            storage(WORLDS_BINDING),
            storage(MORPH_BINDING),
        ]
    }
}

impl MaterialExtension for GpuSkin {
    fn vertex_shader() -> ShaderRef {
        SKIN_SHADER.into()
    }

    fn prepass_vertex_shader() -> ShaderRef {
        SKIN_PREPASS_SHADER.into()
    }

    fn deferred_vertex_shader() -> ShaderRef {
        SKIN_PREPASS_SHADER.into()
    }

    /// Bevy's mesh pipeline sees the joint attributes and prepares for
    /// its own skinning (the joint matrices in the mesh bind group). Here
    /// the joints come from the material's buffers: the mesh bind group
    /// is the one without a skin, as Bevy binds for an entity without
    /// `SkinnedMesh`.
    fn specialize(
        pipeline: &MaterialExtensionPipeline,
        descriptor: &mut RenderPipelineDescriptor,
        _layout: &MeshVertexBufferLayoutRef,
        _key: MaterialExtensionKey<Self>,
    ) -> Result<(), SpecializedMeshPipelineError> {
        let layouts = &pipeline.mesh_pipeline.mesh_layouts;
        let swaps = [
            (&layouts.skinned, &layouts.model_only),
            (&layouts.skinned_motion, &layouts.model_only),
            (&layouts.morphed_skinned, &layouts.morphed),
            (&layouts.morphed_skinned_motion, &layouts.morphed_motion),
        ];
        for layout in &mut descriptor.layout {
            if let Some((_, without_skin)) = swaps.iter().find(|(skinned, _)| *skinned == layout) {
                *layout = (*without_skin).clone();
            }
        }
        Ok(())
    }
}
