//! The draw of a [`Model`]: its vertices, indices and morph deltas on the
//! device, a texture per decoded image (sRGB, with mipmaps), a sampler per
//! glTF sampler, a bind group per material, and the pipelines
//! (`scene.wgsl`) its materials need: opaque and masked parts with depth
//! writes, blended ones after them, back to front, without; back faces
//! culled unless the material is double-sided.
//!
//! Each frame: [`SceneRenderer::write_frame`] (camera),
//! [`SceneRenderer::write_places`] (where each instance stands), then
//! [`SceneRenderer::draw`] in a render pass: one instanced draw per
//! (part, primitive), every instance reading its matrices from the
//! animator's output buffers (group 0), with no readback.

use glam::{Mat4, Vec3};
use keyframe_gpu::{Animator, AnimatorChunk};
use wgpu::util::DeviceExt;

use crate::image::Image;
use crate::material::{Alpha, Material};
use crate::model::Model;
use crate::uniforms::{self, Frame, Item, MaterialBlock};

/// The depth attachment's format.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// What the draw renders into: the colour target's format, and whether
/// the parts show the false-colour ramp instead of their materials.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// The colour target's format.
    pub format: wgpu::TextureFormat,
    /// Joint weights or nodes in a colour ramp instead of the materials.
    pub false_color: bool,
}

/// Bytes of one instance's place (`[f32; 4]`).
const PLACE_BYTES: u64 = 16;

/// Background colour of the view (sRGB-encoded RGBA8).
pub const BACKGROUND: [u8; 4] = [20, 20, 26, 255];

/// Where the instances stand: a grid in the XZ plane centred on the
/// origin, place `k` in column `k % cols`, row `k / cols`
/// ([`place`](Self::place)).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grid {
    /// Distance between columns (along X) and rows (along Z).
    pub spacing: [f32; 2],
    /// Columns.
    pub cols: u32,
    /// Rows.
    pub rows: u32,
}

impl Grid {
    /// A near-square grid for `n` instances (at least one).
    pub fn for_instances(n: u32, spacing: [f32; 2]) -> Grid {
        let n = n.max(1);
        let cols = (f64::from(n).sqrt().ceil() as u32).max(1);
        Grid {
            spacing,
            cols,
            rows: n.div_ceil(cols),
        }
    }

    /// Place `k`'s centre.
    pub fn place(&self, k: u32) -> Vec3 {
        let cols = self.cols.max(1);
        let col = (k % cols) as f32 - 0.5 * (cols as f32 - 1.0);
        let row = (k / cols) as f32 - 0.5 * (self.rows as f32 - 1.0);
        Vec3::new(col * self.spacing[0], 0.0, row * self.spacing[1])
    }

    /// The grid's whole extent along X and Z (a spacing per column and
    /// row).
    pub fn extent(&self) -> Vec3 {
        Vec3::new(
            self.cols as f32 * self.spacing[0],
            0.0,
            self.rows as f32 * self.spacing[1],
        )
    }

    /// Half the grid's extent along X and Z.
    pub fn half_extent(&self) -> Vec3 {
        Vec3::new(
            0.5 * (self.cols as f32 - 1.0) * self.spacing[0],
            0.0,
            0.5 * (self.rows as f32 - 1.0) * self.spacing[1],
        )
    }
}

/// What a frame's pipeline differs by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PipelineKey {
    blend: bool,
    cull: bool,
    /// The part's world matrix mirrors (negative determinant): glTF makes
    /// its clockwise triangles the front ones.
    mirrored: bool,
}

/// One (part, primitive) draw.
#[derive(Debug, Clone, Copy)]
struct DrawItem {
    indices: (u32, u32),
    material: usize,
    pipeline: usize,
    blend: bool,
    /// Its centre in the first pose, for sorting blended draws.
    centre: Vec3,
}

/// Where a primitive's data lies in the shared buffers.
#[derive(Debug, Clone, Copy)]
struct Placed {
    first_vertex: u32,
    vertex_count: u32,
    first_index: u32,
    index_count: u32,
    delta_base: u32,
}

/// The model on the device and the pipelines that draw it.
#[derive(Debug)]
pub struct SceneRenderer {
    pipelines: Vec<wgpu::RenderPipeline>,
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    frame_buf: wgpu::Buffer,
    /// Per instance, where it stands (xyz, w unused): the instance-rate
    /// vertex buffer.
    places: wgpu::Buffer,
    group: wgpu::BindGroup,
    materials: Vec<wgpu::BindGroup>,
    items: Vec<DrawItem>,
    /// The blended items, back to front for the last camera.
    blend_order: Vec<usize>,
    align: u64,
    frame: Frame,
}

/// Errors unless the adapter lets a vertex shader read the four storage
/// buffers the draw binds.
fn check_vertex_storage(adapter: &wgpu::Adapter, device: &wgpu::Device) -> Result<(), String> {
    let flags = adapter.get_downlevel_capabilities().flags;
    let limit = device.limits().max_storage_buffers_per_shader_stage;
    if !flags.contains(wgpu::DownlevelFlags::VERTEX_STORAGE) || limit < 4 {
        return Err(format!(
            "this adapter cannot read storage buffers in a vertex shader (VERTEX_STORAGE: {}, max_storage_buffers_per_shader_stage: {limit})",
            flags.contains(wgpu::DownlevelFlags::VERTEX_STORAGE),
        ));
    }
    Ok(())
}

/// The layouts of groups 1 (frame, item, morph deltas) and 2 (material).
fn layouts(device: &wgpu::Device) -> (wgpu::BindGroupLayout, wgpu::BindGroupLayout) {
    use wgpu::{BindGroupLayoutEntry as E, BindingType as B, ShaderStages as S};
    let uniform = |binding, visibility, dynamic, size: usize| E {
        binding,
        visibility,
        ty: B::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: dynamic,
            min_binding_size: std::num::NonZeroU64::new(size as u64),
        },
        count: None,
    };
    let frame = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("viewer.frame"),
        entries: &[
            uniform(0, S::VERTEX_FRAGMENT, false, std::mem::size_of::<Frame>()),
            uniform(1, S::VERTEX, true, std::mem::size_of::<Item>()),
            E {
                binding: 2,
                visibility: S::VERTEX,
                ty: B::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: true },
                    has_dynamic_offset: false,
                    min_binding_size: std::num::NonZeroU64::new(16),
                },
                count: None,
            },
        ],
    });
    let material = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("viewer.material"),
        entries: &[
            uniform(0, S::FRAGMENT, false, std::mem::size_of::<MaterialBlock>()),
            E {
                binding: 1,
                visibility: S::FRAGMENT,
                ty: B::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            E {
                binding: 2,
                visibility: S::FRAGMENT,
                ty: B::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
        ],
    });
    (frame, material)
}

impl SceneRenderer {
    /// Uploads `model` and builds its pipelines for colour targets of
    /// `target.format` (depth [`DEPTH_FORMAT`]), binding `animator`'s
    /// outputs as group 0, for up to `instances` instances. With
    /// `target.false_color` the parts show joint weights or their node in a colour
    /// ramp instead of their materials.
    ///
    /// # Errors
    /// When the adapter cannot read storage buffers in a vertex shader, the
    /// animator has no rig, or the model has no triangle to draw.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        adapter: &wgpu::Adapter,
        model: &Model,
        animator: &Animator,
        instances: u32,
        target: Target,
    ) -> Result<SceneRenderer, String> {
        check_vertex_storage(adapter, device)?;
        // wgpu's validation and allocation errors become this call's error
        // instead of the device's uncaptured-error panic.
        let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let renderer = Self::build(device, queue, model, animator, instances, target);
        let v = pollster::block_on(validation.pop());
        let o = pollster::block_on(oom.pop());
        match v.or(o) {
            Some(e) => Err(format!("building the draw: {e}")),
            None => renderer,
        }
    }

    fn build(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        model: &Model,
        animator: &Animator,
        instances: u32,
        target: Target,
    ) -> Result<SceneRenderer, String> {
        let Target {
            format: color_format,
            false_color,
        } = target;
        // Every chunk's outputs have the same layout: the first's serves.
        let (outputs_layout, _) = animator.chunks()[0]
            .output_bind_group()
            .ok_or("the animator has no rig")?;
        let layout = animator
            .rig()
            .map(keyframe_gpu::Rig::output_layout)
            .ok_or("the animator has no rig")?;
        let meshes = upload_meshes(device, model)?;
        let Draws {
            blocks,
            items,
            keys,
        } = draw_items(model, &meshes.placed)?;
        if items.iter().all(|i| i.indices.1 == 0) {
            return Err("the default scene's meshes have no triangles".into());
        }
        let align = u64::from(device.limits().min_uniform_buffer_offset_alignment).max(256);
        let (frame_layout, material_layout) = layouts(device);
        let frame_buf = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("viewer.frame"),
            size: std::mem::size_of::<Frame>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let places = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("viewer.places"),
            size: u64::from(instances.max(1)) * PLACE_BYTES,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let group = frame_group(
            device,
            &frame_layout,
            &frame_buf,
            &blocks,
            align,
            &meshes.deltas,
        );
        let materials = material_groups(device, queue, model, &material_layout);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("viewer.scene.wgsl"),
            source: wgpu::ShaderSource::Wgsl(include_str!("scene.wgsl").into()),
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("viewer.scene"),
            bind_group_layouts: &[
                Some(outputs_layout),
                Some(&frame_layout),
                Some(&material_layout),
            ],
            immediate_size: 0,
        });
        let pipelines = keys
            .iter()
            .map(|k| pipeline(device, &module, &pipeline_layout, color_format, *k))
            .collect();
        let blend_order = (0..items.len()).filter(|&i| items[i].blend).collect();
        let mut flags = 0;
        if false_color {
            flags |= uniforms::FALSE_COLOR;
        }
        if !color_format.is_srgb() {
            flags |= uniforms::ENCODE_SRGB;
        }
        Ok(SceneRenderer {
            pipelines,
            vertices: meshes.vertices,
            indices: meshes.indices,
            frame_buf,
            places,
            group,
            materials,
            items,
            blend_order,
            align,
            frame: Frame {
                view_proj: Mat4::IDENTITY.to_cols_array(),
                eye: [0.0; 4],
                light: [0.0, 1.0, 0.0, 0.0],
                node_stride: layout.nodes(),
                joint_stride: layout.joints(),
                morph_stride: layout.morph_weights(),
                flags,
            },
        })
    }

    /// Writes this frame's camera (`view_proj`, seen from `eye`, lit from
    /// direction `light`), and sorts the blended draws back to front for
    /// it.
    pub fn write_frame(&mut self, queue: &wgpu::Queue, view_proj: Mat4, eye: Vec3, light: Vec3) {
        self.frame.view_proj = view_proj.to_cols_array();
        self.frame.eye = eye.extend(1.0).to_array();
        self.frame.light = light.normalize_or(Vec3::Y).extend(0.0).to_array();
        queue.write_buffer(&self.frame_buf, 0, bytemuck::bytes_of(&self.frame));
        let items = &self.items;
        let distance = |i: usize| items[i].centre.distance_squared(eye);
        self.blend_order
            .sort_unstable_by(|&a, &b| distance(b).total_cmp(&distance(a)));
    }

    /// Writes where instance `k` stands, `places[k]` (xyz, w unused), for
    /// the first `places.len()` instances (at most the instances given to
    /// [`new`](Self::new)).
    pub fn write_places(&self, queue: &wgpu::Queue, places: &[[f32; 4]]) {
        let fit = (self.places.size() / PLACE_BYTES) as usize;
        let places = &places[..places.len().min(fit)];
        queue.write_buffer(&self.places, 0, bytemuck::cast_slice(places));
    }

    /// Draws `instances` instances from `animator`'s buffers (a crowd's
    /// chunk), standing at places `first..`: the opaque and masked parts,
    /// then the blended ones.
    pub fn draw(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        animator: &AnimatorChunk,
        first: u32,
        instances: u32,
    ) {
        let Some((_, outputs)) = animator.output_bind_group() else {
            return;
        };
        pass.set_bind_group(0, outputs, &[]);
        pass.set_vertex_buffer(0, self.vertices.slice(..));
        pass.set_vertex_buffer(1, self.places.slice(u64::from(first) * PLACE_BYTES..));
        pass.set_index_buffer(self.indices.slice(..), wgpu::IndexFormat::Uint32);
        let opaque = (0..self.items.len()).filter(|&i| !self.items[i].blend);
        let mut current = None;
        for i in opaque.chain(self.blend_order.iter().copied()) {
            let item = &self.items[i];
            if item.indices.1 == 0 {
                continue;
            }
            if current != Some(item.pipeline) {
                pass.set_pipeline(&self.pipelines[item.pipeline]);
                current = Some(item.pipeline);
            }
            pass.set_bind_group(1, &self.group, &[(self.align * i as u64) as u32]);
            pass.set_bind_group(2, &self.materials[item.material], &[]);
            let (first, count) = item.indices;
            pass.draw_indexed(first..first + count, 0, 0..instances);
        }
    }
}

/// Every mesh's primitives on the device.
struct Uploaded {
    /// Per mesh, per primitive: where it lies.
    placed: Vec<Vec<Placed>>,
    vertices: wgpu::Buffer,
    /// Indices, made absolute.
    indices: wgpu::Buffer,
    /// Morph deltas (one zero delta when there is none).
    deltas: wgpu::Buffer,
}

/// Every mesh's primitives in one vertex buffer, one index buffer and one
/// morph-delta buffer.
fn upload_meshes(device: &wgpu::Device, model: &Model) -> Result<Uploaded, String> {
    let mut vertices = Vec::new();
    let mut indices: Vec<u32> = Vec::new();
    let mut deltas: Vec<[f32; 4]> = Vec::new();
    let mut placed = Vec::with_capacity(model.meshes.len());
    for mesh in &model.meshes {
        let mut here = Vec::with_capacity(mesh.primitives.len());
        for prim in &mesh.primitives {
            let first_vertex = u32::try_from(vertices.len()).map_err(|_| "too many vertices")?;
            here.push(Placed {
                first_vertex,
                vertex_count: prim.vertices.len() as u32,
                first_index: indices.len() as u32,
                index_count: prim.indices.len() as u32,
                delta_base: deltas.len() as u32,
            });
            vertices.extend_from_slice(&prim.vertices);
            indices.extend(prim.indices.iter().map(|&i| first_vertex + i));
            deltas.extend_from_slice(&prim.deltas);
        }
        placed.push(here);
    }
    if deltas.is_empty() {
        deltas.push([0.0; 4]);
    }
    if indices.is_empty() {
        return Err("the model has no triangles".into());
    }
    let limit = device.limits().max_storage_buffer_binding_size;
    if (deltas.len() * 16) as u64 > limit {
        return Err(format!(
            "the morph targets take {} bytes, past the device's storage binding limit of {limit}",
            deltas.len() * 16
        ));
    }
    let buffer = |label, contents: &[u8], usage| {
        device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage,
        })
    };
    Ok(Uploaded {
        placed,
        vertices: buffer(
            "viewer.vertices",
            bytemuck::cast_slice(&vertices),
            wgpu::BufferUsages::VERTEX,
        ),
        indices: buffer(
            "viewer.indices",
            bytemuck::cast_slice(&indices),
            wgpu::BufferUsages::INDEX,
        ),
        deltas: buffer(
            "viewer.morph_deltas",
            bytemuck::cast_slice(&deltas),
            wgpu::BufferUsages::STORAGE,
        ),
    })
}

/// The draws of a model, one per (part, primitive) in part order.
struct Draws {
    /// Each draw's [`Item`] block.
    blocks: Vec<Item>,
    items: Vec<DrawItem>,
    /// The pipelines the draws use.
    keys: Vec<PipelineKey>,
}

/// The draws of `model`, whose primitives lie at `placed`.
fn draw_items(model: &Model, placed: &[Vec<Placed>]) -> Result<Draws, String> {
    let first_pose = first_pose(model)?;
    let mut keys: Vec<PipelineKey> = Vec::new();
    let mut items = Vec::new();
    let mut blocks = Vec::new();
    for part in &model.parts {
        let mesh = &model.meshes[part.mesh as usize];
        for (p, prim) in mesh.primitives.iter().enumerate() {
            let at = placed[part.mesh as usize][p];
            // A skinned part: placed by its skin's mesh node and joints.
            let skin = part.skin_node.zip(part.joints.clone());
            let (node, joints) = skin.unwrap_or((part.node, 0..0));
            blocks.push(Item {
                node,
                joint_offset: joints.start,
                joint_count: joints.len() as u32,
                morph_offset: part.morph_weights.start,
                targets: prim.targets.min(part.morph_weights.len() as u32),
                delta_base: at.delta_base,
                first_vertex: at.first_vertex,
                vertex_count: at.vertex_count,
            });
            let world = first_pose
                .get(node as usize)
                .copied()
                .unwrap_or(Mat4::IDENTITY);
            let material = prim.material.filter(|&m| m < model.materials.len());
            let default = Material::default();
            let mat = material.map_or(&default, |m| &model.materials[m]);
            let key = PipelineKey {
                blend: mat.alpha == Alpha::Blend,
                cull: !mat.double_sided,
                mirrored: joints.is_empty() && world.determinant() < 0.0,
            };
            let pipeline = keys.iter().position(|k| *k == key).unwrap_or_else(|| {
                keys.push(key);
                keys.len() - 1
            });
            items.push(DrawItem {
                indices: (at.first_index, at.index_count),
                material: material.unwrap_or(model.materials.len()),
                pipeline,
                blend: key.blend,
                centre: world.transform_point3((prim.lo + prim.hi) * 0.5),
            });
        }
    }
    Ok(Draws {
        blocks,
        items,
        keys,
    })
}

/// Group 1: the frame block, the item blocks (one per `align` bytes, bound
/// at a dynamic offset) and the morph deltas.
fn frame_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    frame: &wgpu::Buffer,
    blocks: &[Item],
    align: u64,
    deltas: &wgpu::Buffer,
) -> wgpu::BindGroup {
    let mut bytes = vec![0u8; (align as usize) * blocks.len().max(1)];
    for (i, b) in blocks.iter().enumerate() {
        let at = i * align as usize;
        bytes[at..at + std::mem::size_of::<Item>()].copy_from_slice(bytemuck::bytes_of(b));
    }
    let items = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("viewer.items"),
        contents: &bytes,
        usage: wgpu::BufferUsages::UNIFORM,
    });
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("viewer.frame"),
        layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: frame.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &items,
                    offset: 0,
                    size: std::num::NonZeroU64::new(std::mem::size_of::<Item>() as u64),
                }),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: deltas.as_entire_binding(),
            },
        ],
    })
}

/// World matrices of every node in the model's first pose (clip 0 at time
/// 0), on the CPU twin.
fn first_pose(model: &Model) -> Result<Vec<Mat4>, String> {
    let poses = keyframe_gpu::cpu::poses(&model.bound, &[keyframe_gpu::Instance::new(0, 0.0)])
        .map_err(|e| e.to_string())?;
    Ok((0..model.rig().nodes().len() as u32)
        .map(|n| poses.world(0, n).unwrap_or(Mat4::IDENTITY))
        .collect())
}

/// A bind group per material of the model, and last one for glTF's
/// default material.
fn material_groups(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    model: &Model,
    layout: &wgpu::BindGroupLayout,
) -> Vec<wgpu::BindGroup> {
    let max_side = device.limits().max_texture_dimension_2d;
    let views: Vec<Option<wgpu::TextureView>> = model
        .images
        .iter()
        .map(|img| {
            img.as_ref()
                .map(|i| upload_image(device, queue, i, max_side))
        })
        .collect();
    let white = upload_image(
        device,
        queue,
        &Image {
            width: 1,
            height: 1,
            rgba: vec![255; 4],
        },
        max_side,
    );
    let samplers: Vec<wgpu::Sampler> = model.samplers.iter().map(|s| s.create(device)).collect();
    let default = Material::default();
    model
        .materials
        .iter()
        .chain(std::iter::once(&default))
        .map(|m| {
            let texture = m
                .texture
                .and_then(|t| Some((t, views.get(t.image)?.as_ref()?)));
            let (view, sampler, uv) = match texture {
                Some((t, view)) => {
                    let s = t
                        .sampler
                        .unwrap_or(samplers.len() - 1)
                        .min(samplers.len() - 1);
                    (view, &samplers[s], t.transform)
                }
                None => (
                    &white,
                    &samplers[samplers.len() - 1],
                    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
                ),
            };
            let block = material_block(m, uv);
            let buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("viewer.material"),
                contents: bytemuck::bytes_of(&block),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("viewer.material"),
                layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: buf.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::TextureView(view),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: wgpu::BindingResource::Sampler(sampler),
                    },
                ],
            })
        })
        .collect()
}

/// `scene.wgsl`'s `Material` of `m`, its texture coordinates mapped by
/// `uv`.
fn material_block(m: &Material, uv: [[f32; 3]; 2]) -> MaterialBlock {
    MaterialBlock {
        base_color: m.base_color,
        uv_u: [uv[0][0], uv[0][1], uv[0][2], 0.0],
        uv_v: [uv[1][0], uv[1][1], uv[1][2], 0.0],
        emissive: [m.emissive[0], m.emissive[1], m.emissive[2], 0.0],
        alpha_mode: match m.alpha {
            Alpha::Opaque => uniforms::ALPHA_OPAQUE,
            Alpha::Mask(_) => uniforms::ALPHA_MASK,
            Alpha::Blend => uniforms::ALPHA_BLEND,
        },
        alpha_cutoff: match m.alpha {
            Alpha::Mask(c) => c,
            _ => 0.0,
        },
        unlit: u32::from(m.unlit),
        pad: 0,
    }
}

/// An sRGB texture of `image` with its mipmap chain, each side at most
/// `max_side`.
fn upload_image(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    image: &Image,
    max_side: u32,
) -> wgpu::TextureView {
    let levels = image.clone().mip_chain(max_side.max(1));
    let size = wgpu::Extent3d {
        width: levels[0].width,
        height: levels[0].height,
        depth_or_array_layers: 1,
    };
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some("viewer.base_color"),
        size,
        mip_level_count: levels.len() as u32,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    for (level, img) in levels.iter().enumerate() {
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &texture,
                mip_level: level as u32,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            &img.rgba,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(img.width * 4),
                rows_per_image: Some(img.height),
            },
            wgpu::Extent3d {
                width: img.width,
                height: img.height,
                depth_or_array_layers: 1,
            },
        );
    }
    texture.create_view(&Default::default())
}

/// The pipeline of `key`.
fn pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    layout: &wgpu::PipelineLayout,
    color_format: wgpu::TextureFormat,
    key: PipelineKey,
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("viewer.scene"),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: &[
                Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<crate::mesh::Vertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![
                        0 => Float32x3, 1 => Float32x3, 2 => Float32x2,
                        3 => Float32x4, 4 => Uint32x4, 5 => Float32x4
                    ],
                }),
                Some(wgpu::VertexBufferLayout {
                    array_stride: PLACE_BYTES,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &wgpu::vertex_attr_array![6 => Float32x4],
                }),
            ],
        },
        primitive: wgpu::PrimitiveState {
            front_face: if key.mirrored {
                wgpu::FrontFace::Cw
            } else {
                wgpu::FrontFace::Ccw
            },
            cull_mode: key.cull.then_some(wgpu::Face::Back),
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(!key.blend),
            depth_compare: Some(wgpu::CompareFunction::Less),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: color_format,
                blend: key.blend.then_some(wgpu::BlendState::ALPHA_BLENDING),
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// Begins a render pass that clears `color` to [`BACKGROUND`] and `depth`
/// to 1.
pub fn begin_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    color: &wgpu::TextureView,
    depth: &wgpu::TextureView,
    srgb: bool,
    label: &str,
) -> wgpu::RenderPass<'e> {
    // An sRGB target takes the clear colour in linear light.
    let channel = |c: u8| {
        let c = f64::from(c) / 255.0;
        if srgb {
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        } else {
            c
        }
    };
    let clear = BACKGROUND.map(channel);
    crate::gfx::clear_pass(encoder, label, color, depth, [clear[0], clear[1], clear[2]])
}
