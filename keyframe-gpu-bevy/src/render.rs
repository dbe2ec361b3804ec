//! The render world: one keyframe-gpu `Crowd` on Bevy's device and queue
//! for every animated scene of the world, the frame's action table
//! extracted from the main world, and the compute passes submitted
//! before the render graph draws.

use bevy::extract::Extract;
use bevy::prelude::*;
use bevy::render::render_resource::Buffer;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use keyframe_gpu::{Action, BoundLibrary, Crowd, CrowdCharacter, MixerDesc, ModelId};

use crate::model::{ChunkSizes, GpuModels};
use crate::world_joints::{ChunkWorldJoints, WorldJointsPipeline};
use crate::ACTIONS_PER_CHARACTER;

/// One model as the render world knows it.
struct RenderModel {
    posed: BoundLibrary,
    capacity: u32,
    generation: u32,
    counts: Vec<u32>,
    actions: Vec<Action>,
    /// Per slot, the character's placement in the world: world(mesh
    /// entity) * inverse(rest(mesh node)); zero for a free slot.
    placements: Vec<Mat4>,
}

/// The crowd and the frame's table.
#[derive(Resource, Default)]
pub(crate) struct RenderAnimation {
    models: Vec<RenderModel>,
    crowd: Option<Crowd>,
    ids: Vec<ModelId>,
    /// The models changed since the crowd was made.
    stale: bool,
    /// The frame's table, in crowd order.
    characters: Vec<CrowdCharacter>,
    actions: Vec<Action>,
    /// Whether this frame's table was accepted (the passes have work).
    ready: bool,
    /// The device is lost: nothing is recorded until a new one comes.
    lost: bool,
    /// The world-space joint pass, made with the crowd.
    world_joints: Option<WorldJointsPipeline>,
    /// Per model, per chunk, that pass's buffers.
    chunks: Vec<Vec<ChunkWorldJoints>>,
    /// Characters per chunk, per model.
    chunk_sizes: Vec<u32>,
    scratch: Vec<f32>,
}

/// A chunk's output buffers, which the materials bind.
#[derive(Debug, Clone)]
pub(crate) struct ModelBuffers {
    generation: u32,
    pub(crate) joints: Buffer,
    pub(crate) worlds: Buffer,
    /// The crate's morph weights (a small unused buffer for a rig
    /// without morph targets).
    pub(crate) morph_weights: Buffer,
}

/// Every model's output buffers, per chunk (see [`ModelBuffers`]).
#[derive(Resource, Debug, Default)]
pub struct RenderAnimationBuffers {
    models: Vec<Vec<ModelBuffers>>,
}

impl RenderAnimationBuffers {
    /// Chunk `chunk` of model `model`: its buffers if they are of
    /// `generation`.
    pub(crate) fn chunk(&self, model: u32, generation: u32, chunk: u32) -> Option<&ModelBuffers> {
        self.models
            .get(model as usize)?
            .get(chunk as usize)
            .filter(|b| b.generation == generation)
    }
}

/// Copies the frame's table (and any new or grown model) from the main
/// world.
pub(crate) fn extract_frame(
    mut render: ResMut<RenderAnimation>,
    models: Extract<Res<GpuModels>>,
    transforms: Extract<Query<&GlobalTransform>>,
) {
    let render = &mut *render;
    for (i, m) in models.models.iter().enumerate() {
        match render.models.get_mut(i) {
            Some(r) if r.generation == m.generation => {}
            Some(r) => {
                r.capacity = m.capacity;
                r.generation = m.generation;
                render.stale = true;
            }
            None => {
                render.models.push(RenderModel {
                    posed: m.posed.clone(),
                    capacity: m.capacity,
                    generation: m.generation,
                    counts: Vec::new(),
                    actions: Vec::new(),
                    placements: Vec::new(),
                });
                // A model without characters (its scene was refused)
                // waits; its first character starts a new generation of
                // every model.
                render.stale |= m.capacity > 0;
            }
        }
        if let Some(r) = render.models.get_mut(i) {
            r.counts.clear();
            r.counts.extend_from_slice(&m.frame_counts);
            r.actions.clear();
            r.actions.extend_from_slice(&m.frame_actions);
            r.placements.clear();
            r.placements.extend(m.meshes.iter().map(|meshes| {
                meshes
                    .first()
                    .and_then(|&(entity, part, _)| {
                        let world = transforms.get(entity).ok()?.to_matrix();
                        let node = m.parts.get(part)?.node;
                        Some(world * *m.inverse_rest.get(node as usize)?)
                    })
                    .unwrap_or(Mat4::ZERO)
            }));
        }
    }
}

/// Forgets the crowd and its buffers when Bevy has a new device (after a
/// loss): first in the render schedule, before [`make_crowd`] makes
/// them again on the new one, so that no material binds a buffer of the
/// lost device.
pub(crate) fn forget_lost_device(
    device: Res<RenderDevice>,
    mut render: ResMut<RenderAnimation>,
    mut buffers: ResMut<RenderAnimationBuffers>,
) {
    // Also true on the first frame, when there is nothing to forget.
    if device.is_changed() {
        render.lost = false;
        render.stale = true;
        render.crowd = None;
        render.world_joints = None;
        render.chunks.clear();
        buffers.models.clear();
    }
}

/// Makes the crowd and its buffers again when models came or grew (or
/// the device is new). Runs before Bevy prepares the frame's materials,
/// which bind the buffers made here: a grown model's characters are
/// drawn in the frame its buffers are made again.
pub(crate) fn make_crowd(
    mut render: ResMut<RenderAnimation>,
    mut buffers: ResMut<RenderAnimationBuffers>,
    sizes: Res<ChunkSizes>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
) {
    let render = &mut *render;
    let wgpu_device = device.wgpu_device();
    if render.lost || render.models.iter().all(|m| m.capacity == 0) {
        return;
    }
    let wgpu_queue: &wgpu::Queue = &queue;
    if render.stale || render.crowd.is_none() {
        let mut crowd = match sizes.limit {
            Some(limit) => Crowd::new().with_chunk_limit(limit),
            None => Crowd::new(),
        };
        let mut ids = Vec::with_capacity(render.models.len());
        buffers.models.clear();
        render.chunks.clear();
        render.chunk_sizes.clear();
        let pipeline = render
            .world_joints
            .get_or_insert_with(|| WorldJointsPipeline::new(wgpu_device));
        for (i, m) in render.models.iter().enumerate() {
            let desc = MixerDesc::new(m.capacity.max(1), ACTIONS_PER_CHARACTER);
            let id = match crowd.add_mixed_model(
                wgpu_device,
                wgpu_queue,
                &i.to_string(),
                &m.posed,
                &desc,
            ) {
                Ok(id) => id,
                Err(e) => {
                    report(render, &e);
                    return;
                }
            };
            let model_chunks = crowd.model(id).map_or(&[][..], |a| a.chunks());
            let size = crowd.model(id).map_or(m.capacity, |a| a.chunk_capacity());
            let chunks: Vec<ChunkWorldJoints> = model_chunks
                .iter()
                .map_while(|a| pipeline.chunk(wgpu_device, wgpu_queue, m.posed.rig(), a, size))
                .collect();
            buffers.models.push(
                model_chunks
                    .iter()
                    .zip(&chunks)
                    .map_while(|(a, w)| chunk_buffers(wgpu_device, a, w, m.generation))
                    .collect(),
            );
            render.chunks.push(chunks);
            render.chunk_sizes.push(size);
            sizes.report(i, m.generation, size);
            ids.push(id);
        }
        render.crowd = Some(crowd);
        render.ids = ids;
        render.stale = false;
    }
}

/// Writes the frame's placements and actions to the crowd that
/// [`make_crowd`] made.
pub(crate) fn write_frame(mut render: ResMut<RenderAnimation>, queue: Res<RenderQueue>) {
    let render = &mut *render;
    render.ready = false;
    if render.lost || render.stale || render.models.iter().all(|m| m.capacity == 0) {
        return;
    }
    let wgpu_queue: &wgpu::Queue = &queue;
    for ((m, chunks), &size) in render
        .models
        .iter()
        .zip(&render.chunks)
        .zip(&render.chunk_sizes)
    {
        for (c, chunk) in chunks.iter().enumerate() {
            let first = (c * size as usize).min(m.placements.len());
            chunk.write(wgpu_queue, &m.placements[first..], &mut render.scratch);
        }
    }
    render.characters.clear();
    render.actions.clear();
    for (m, &id) in render.models.iter().zip(&render.ids) {
        render
            .characters
            .extend(m.counts.iter().map(|&n| CrowdCharacter::new(id, n)));
        render.actions.extend_from_slice(&m.actions);
    }
    let Some(crowd) = render.crowd.as_mut() else {
        return;
    };
    match crowd.set_actions(wgpu_queue, &render.characters, &render.actions) {
        Ok(()) => render.ready = !render.characters.is_empty(),
        Err(e) => report(render, &e),
    }
}

/// The buffers of one chunk's animator (`None`: an animator without a
/// rig, which the plugin never makes).
fn chunk_buffers(
    device: &wgpu::Device,
    animator: &keyframe_gpu::AnimatorChunk,
    world_joints: &ChunkWorldJoints,
    generation: u32,
) -> Option<ModelBuffers> {
    let morph = animator.morph_weight_buffer().cloned().unwrap_or_else(|| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("keyframe_gpu_bevy.no_morph_weights"),
            size: 16,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        })
    });
    Some(ModelBuffers {
        generation,
        joints: Buffer::from(world_joints.output.clone()),
        worlds: Buffer::from(animator.world_matrix_buffer()?.clone()),
        morph_weights: Buffer::from(morph),
    })
}

fn report(render: &mut RenderAnimation, e: &keyframe_gpu::Error) {
    if matches!(e, keyframe_gpu::Error::DeviceLost { .. }) {
        if !render.lost {
            error!(
                "keyframe-gpu-bevy: the GPU device was lost; animation stops until a new device"
            );
        }
        render.lost = true;
        render.crowd = None;
    } else {
        error!("keyframe-gpu-bevy: {e}");
    }
}

/// Records the crowd's compute passes and submits them, before the
/// cameras' passes of the frame.
pub(crate) fn submit_passes(
    render: Res<RenderAnimation>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
) {
    if !render.ready || render.lost {
        return;
    }
    let Some(crowd) = render.crowd.as_ref() else {
        return;
    };
    let mut encoder =
        device
            .wgpu_device()
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("keyframe_gpu_bevy.animation"),
            });
    crowd.record(&mut encoder);
    if let Some(pipeline) = &render.world_joints {
        pipeline.record(&mut encoder, render.chunks.iter().flatten());
    }
    let wgpu_queue: &wgpu::Queue = &queue;
    wgpu_queue.submit([encoder.finish()]);
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use keyframe_gpu::Rig;

    use super::*;

    /// A device and its queue for the tests (the crate makes none).
    struct Headless {
        device: wgpu::Device,
        queue: wgpu::Queue,
    }

    /// The fallback adapter's device (lavapipe; `WGPU_BACKEND` picks the
    /// backend), with the adapter's own limits and the crate's optional
    /// features it has, as the crate's own tests make theirs.
    fn request_fallback() -> Result<Headless, String> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            force_fallback_adapter: true,
            ..Default::default()
        }))
        .map_err(|e| e.to_string())?;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            required_limits: adapter.limits(),
            required_features: adapter.features() & keyframe_gpu::optional_features(),
            ..Default::default()
        }))
        .map_err(|e| e.to_string())?;
        Ok(Headless { device, queue })
    }

    /// Lavapipe's device, or `None` (a skip line; a failure under
    /// `KEYFRAME_GPU_REQUIRE_ADAPTER=1`).
    fn fallback_device() -> Option<Headless> {
        match request_fallback() {
            Ok(h) => Some(h),
            Err(_) => {
                assert!(
                    std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() != Ok("1"),
                    "no adapter, and KEYFRAME_GPU_REQUIRE_ADAPTER=1"
                );
                eprintln!("no adapter: skipped");
                None
            }
        }
    }

    /// The committed column's rig and its clips bound to it.
    fn column() -> (Rig, BoundLibrary) {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/column.gltf");
        let imported = keyframe_gpu::gltf::load(&path).expect("the committed column");
        let rig = Rig::from_document(&imported.document).expect("its rig");
        let bound = imported.library.bind(&rig).expect("its clips bound");
        (rig, bound)
    }

    /// A render world on `h` with one model.
    fn render_world(h: &Headless, model: RenderModel) -> World {
        let mut world = World::new();
        world.insert_resource(RenderDevice::new(h.device.clone()));
        world.insert_resource(RenderQueue::new(h.queue.clone()));
        world.init_resource::<RenderAnimationBuffers>();
        world.init_resource::<ChunkSizes>();
        let mut animation = RenderAnimation::default();
        animation.models.push(model);
        world.insert_resource(animation);
        world
    }

    /// The plugin's render-world systems in their order, one run a frame:
    /// one schedule for every frame, so that change detection sees the
    /// device replaced between two runs, as in Bevy's render world.
    fn frames() -> Schedule {
        let mut schedule = Schedule::default();
        schedule.add_systems((forget_lost_device, make_crowd, write_frame, submit_passes).chain());
        schedule
    }

    /// `buffer`'s first `count` matrices, read back.
    fn read_matrices(h: &Headless, buffer: &wgpu::Buffer, count: usize) -> Vec<Mat4> {
        let size = (count * 64) as u64;
        let staging = h.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = h.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
        h.queue.submit([encoder.finish()]);
        staging
            .slice(..)
            .map_async(wgpu::MapMode::Read, |r| r.expect("mapped"));
        h.device
            .poll(wgpu::PollType::wait_indefinitely())
            .expect("the copy finishes");
        let view = staging
            .slice(..)
            .get_mapped_range()
            .expect("the mapped range");
        let floats: Vec<f32> = bytemuck::cast_slice(&view).to_vec();
        floats
            .chunks_exact(16)
            .map(|c| Mat4::from_cols_slice(c))
            .collect()
    }

    /// The plugin's pass: each character's joint matrices, world-space,
    /// are its placement times its skin node's world matrix times the
    /// crate's joint matrix, worked out here on the CPU from the crate's
    /// own outputs of the same frame.
    #[test]
    fn world_joints_are_placement_times_skin_node_times_joint() {
        let Some(h) = fallback_device() else {
            return;
        };
        let (rig, bound) = column();
        let layout = rig.output_layout();
        let skin_node = rig
            .parts()
            .iter()
            .find_map(|p| p.joints.as_ref().map(|_| p.skin_node.unwrap_or(p.node)))
            .expect("a skinned part");
        let placements = [
            Mat4::from_scale_rotation_translation(
                Vec3::splat(2.0),
                Quat::from_rotation_y(0.7),
                Vec3::new(3.0, -1.0, 5.0),
            ),
            Mat4::from_rotation_x(-0.4) * Mat4::from_translation(Vec3::new(-2.0, 0.5, 1.0)),
        ];
        let mut world = render_world(
            &h,
            RenderModel {
                posed: bound,
                capacity: 2,
                generation: 1,
                counts: vec![1, 1],
                actions: vec![Action::new(0, 0.3), Action::new(1, 0.6)],
                placements: placements.to_vec(),
            },
        );
        let mut schedule = frames();
        schedule.run(&mut world);
        let animation = world.resource::<RenderAnimation>();
        assert!(animation.ready, "the frame was accepted");
        let crowd = animation.crowd.as_ref().expect("the crowd");
        let animator = &crowd.model(animation.ids[0]).expect("its model").chunks()[0];
        let per = layout.joints() as usize;
        let nodes = layout.nodes() as usize;
        let joints = read_matrices(&h, animator.joint_matrix_buffer().expect("joints"), 2 * per);
        let worlds = read_matrices(
            &h,
            animator.world_matrix_buffer().expect("worlds"),
            2 * nodes,
        );
        let out = read_matrices(&h, &animation.chunks[0][0].output, 2 * per);
        let mut largest = 0.0f32;
        for c in 0..2 {
            for j in 0..per {
                let expected =
                    placements[c] * worlds[c * nodes + skin_node as usize] * joints[c * per + j];
                let got = out[c * per + j];
                let d = (expected - got)
                    .abs()
                    .to_cols_array()
                    .into_iter()
                    .fold(0.0, f32::max);
                largest = largest.max(d);
            }
        }
        assert!(
            largest < 1e-4,
            "world-space joint matrices differ from the CPU's by {largest}"
        );
        // The characters' poses differ, so a pass that read one
        // character's matrices for both would fail above.
        assert_ne!(joints[..per], joints[per..2 * per], "two poses");
        assert!(
            out.iter().any(|m| m.w_axis.truncate().length() > 1.0),
            "the placements moved the joints"
        );
    }

    /// The render world's systems on a device that is destroyed between
    /// two frames: the loss is reported, nothing more is recorded, and
    /// nothing panics; on the next device the crowd is made again.
    #[test]
    fn a_lost_device_stops_the_passes_and_a_new_one_starts_them() {
        let Some(h) = fallback_device() else {
            return;
        };
        let (_, bound) = column();
        let mut world = render_world(
            &h,
            RenderModel {
                posed: bound,
                capacity: 4,
                generation: 1,
                counts: vec![1, 2],
                placements: vec![Mat4::IDENTITY; 2],
                actions: vec![
                    Action::new(0, 0.25),
                    Action::new(0, 0.5).with_weight(0.5),
                    Action::new(1, 0.5).with_weight(0.5),
                ],
            },
        );
        let mut schedule = frames();
        let mut frame = |world: &mut World| schedule.run(world);
        frame(&mut world);
        assert!(
            world.resource::<RenderAnimation>().ready,
            "the frame was accepted"
        );
        assert!(
            world
                .resource::<RenderAnimationBuffers>()
                .chunk(0, 1, 0)
                .is_some(),
            "the materials' buffers exist"
        );
        h.device.destroy();
        for _ in 0..3 {
            frame(&mut world);
        }
        let animation = world.resource::<RenderAnimation>();
        assert!(animation.lost, "the loss is known");
        assert!(!animation.ready, "nothing is recorded after the loss");
        assert!(
            animation.crowd.is_none(),
            "the crowd of the lost device is dropped"
        );
        // Bevy's new device: the materials get no buffer of the lost one,
        // and the next frame makes everything again on the new one.
        let Ok(new) = request_fallback() else {
            panic!("a second device of the adapter that gave the first");
        };
        world.insert_resource(RenderDevice::new(new.device.clone()));
        world.insert_resource(RenderQueue::new(new.queue.clone()));
        assert!(
            world
                .resource::<RenderAnimationBuffers>()
                .chunk(0, 1, 0)
                .is_some(),
            "the lost device's buffers are kept until the new device is seen"
        );
        frame(&mut world);
        assert!(
            world.resource::<RenderAnimation>().ready,
            "the frame on the new device was accepted"
        );
        assert!(
            world
                .resource::<RenderAnimationBuffers>()
                .chunk(0, 1, 0)
                .is_some(),
            "the materials' buffers exist on the new device"
        );
    }
}
