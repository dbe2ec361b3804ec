//! The render world: one keyframe-gpu `Crowd` on Bevy's device and queue
//! for every animated scene of the world, each model's characters played
//! on the GPU by a `GpuPlayers` that the frame's commands (extracted from
//! the main world: only those of players given one) and step drive, and
//! the compute passes submitted before the render graph draws.

use std::sync::Arc;

use bevy::extract::Extract;
use bevy::prelude::*;
use bevy::render::render_resource::Buffer;
use bevy::render::renderer::{RenderDevice, RenderQueue};
use keyframe_gpu::playback::{Clips, Command, GpuPlayers};
use keyframe_gpu::{BoundLibrary, CharacterId, Crowd, MixerDesc, ModelId};

use crate::model::{ChunkSizes, GpuModels};
use crate::world_joints::{ChunkWorldJoints, WorldJointsPipeline};
use crate::ACTIONS_PER_CHARACTER;

/// One model as the render world knows it.
struct RenderModel {
    posed: BoundLibrary,
    clips: Arc<Clips>,
    capacity: u32,
    generation: u32,
    /// The frame's commands, by slot.
    commands: Vec<(u32, Command)>,
    /// Slots a new character took this frame.
    resets: Vec<u32>,
    /// Per slot, the character's placement in the world: world(mesh
    /// entity) * inverse(rest(mesh node)); zero for a free slot.
    placements: Vec<Mat4>,
    /// The model in the crowd, its players and its characters (one per
    /// slot of its capacity), once made.
    played: Option<Played>,
}

/// A model of the crowd played on the GPU.
struct Played {
    id: ModelId,
    players: GpuPlayers,
    /// Per slot, the crowd's character there.
    characters: Vec<CharacterId>,
}

/// The crowd and the frame's step.
#[derive(Resource, Default)]
pub(crate) struct RenderAnimation {
    models: Vec<RenderModel>,
    crowd: Option<Crowd>,
    /// The models changed since the crowd was made or grown.
    stale: bool,
    /// The frame's step (seconds).
    dt: f64,
    /// Whether this frame's step was written (the passes have work).
    ready: bool,
    /// The device is lost: nothing is recorded until a new one comes.
    lost: bool,
    /// A crowd was made before: the next one made is on a new device.
    made_before: bool,
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

/// Copies the frame's commands and step (and any new or grown model)
/// from the main world, and each character's placement.
pub(crate) fn extract_frame(
    mut render: ResMut<RenderAnimation>,
    models: Extract<Res<GpuModels>>,
    transforms: Extract<Query<&GlobalTransform>>,
) {
    let render = &mut *render;
    render.dt = models.dt;
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
                    clips: Arc::clone(&m.clips),
                    capacity: m.capacity,
                    generation: m.generation,
                    commands: Vec::new(),
                    resets: Vec::new(),
                    placements: Vec::new(),
                    played: None,
                });
                // A model without characters (its scene was refused)
                // waits; its first character makes it in the crowd.
                render.stale |= m.capacity > 0;
            }
        }
        if let Some(r) = render.models.get_mut(i) {
            r.commands.clear();
            r.commands.extend_from_slice(&m.commands);
            r.resets.clear();
            r.resets.extend_from_slice(&m.resets);
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

/// Makes the crowd (when there is none: the first model, or a new
/// device), adds the models that came and grows those that grew, in
/// place: the playback state of every character there stays on the GPU.
/// Then makes the world-space joint pass's buffers and the materials'
/// table of buffers again. Runs before Bevy prepares the frame's
/// materials, which bind the buffers made here: a grown model's
/// characters are drawn in the frame its buffers grow.
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
    if render.crowd.is_none() {
        render.crowd = Some(match sizes.limit {
            Some(limit) => Crowd::new().with_chunk_limit(limit),
            None => Crowd::new(),
        });
        for m in &mut render.models {
            m.played = None;
        }
        if render.made_before {
            sizes.crowd_made_anew();
        }
        render.made_before = true;
        render.stale = true;
    }
    if !render.stale {
        return;
    }
    let Some(crowd) = render.crowd.as_mut() else {
        return;
    };
    for (i, m) in render.models.iter_mut().enumerate() {
        if m.capacity == 0 {
            continue;
        }
        if let Err(e) = add_or_grow(crowd, wgpu_device, wgpu_queue, i, m) {
            report(render, &e);
            return;
        }
    }
    buffers.models.clear();
    render.chunks.clear();
    render.chunk_sizes.clear();
    let pipeline = render
        .world_joints
        .get_or_insert_with(|| WorldJointsPipeline::new(wgpu_device));
    for (i, m) in render.models.iter().enumerate() {
        let animator = m
            .played
            .as_ref()
            .and_then(|p| crowd_model(&render.crowd, p.id));
        let model_chunks = animator.map_or(&[][..], |a| a.chunks());
        let size = animator.map_or(m.capacity, |a| a.chunk_capacity());
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
        if animator.is_some() {
            sizes.report(i, m.generation, size);
        }
    }
    render.stale = false;
}

/// The crowd's animator of model `id`.
fn crowd_model(crowd: &Option<Crowd>, id: ModelId) -> Option<&keyframe_gpu::Animator> {
    crowd.as_ref()?.model(id)
}

/// Adds model `m` (model `index`) to `crowd` with its players and a
/// character per slot of its capacity, or grows it in place to its
/// capacity (new characters at rest in the new slots).
fn add_or_grow(
    crowd: &mut Crowd,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    index: usize,
    m: &mut RenderModel,
) -> Result<(), keyframe_gpu::Error> {
    if let Some(p) = &m.played {
        crowd.grow_model(device, p.id, m.capacity)?;
    } else {
        let desc = MixerDesc::new(m.capacity.max(1), ACTIONS_PER_CHARACTER);
        let id = crowd.add_mixed_model(device, queue, &index.to_string(), &m.posed, &desc)?;
        let players = GpuPlayers::new(device, queue, crowd, id, &m.clips)?;
        m.played = Some(Played {
            id,
            players,
            characters: Vec::new(),
        });
    }
    let Some(played) = m.played.as_mut() else {
        return Ok(());
    };
    while (played.characters.len() as u32) < m.capacity {
        played.characters.push(crowd.add_character(played.id)?);
    }
    Ok(())
}

/// Writes the frame's placements, and each model's commands and step to
/// its players on the crowd that [`make_crowd`] made.
pub(crate) fn write_frame(
    mut render: ResMut<RenderAnimation>,
    device: Res<RenderDevice>,
    queue: Res<RenderQueue>,
) {
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
    let Some(crowd) = render.crowd.as_mut() else {
        return;
    };
    let dt = render.dt;
    let mut result = Ok(());
    for m in &mut render.models {
        let Some(played) = m.played.as_mut() else {
            continue;
        };
        let frame = (&m.resets[..], &m.commands[..], dt);
        result = play_frame(crowd, device.wgpu_device(), wgpu_queue, played, frame);
        if result.is_err() {
            break;
        }
        render.ready = true;
    }
    if let Err(e) = result {
        render.ready = false;
        report(render, &e);
    }
}

/// One model's frame on the GPU: the slots taken by a new character start
/// again at rest, then the commands, then the step.
fn play_frame(
    crowd: &mut Crowd,
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    played: &mut Played,
    (resets, commands, dt): (&[u32], &[(u32, Command)], f64),
) -> Result<(), keyframe_gpu::Error> {
    for &slot in resets {
        let Some(&character) = played.characters.get(slot as usize) else {
            continue;
        };
        // The only free slot is the one just freed: the new character
        // takes it, at rest.
        crowd.remove_character(character)?;
        let again = crowd.add_character(played.id)?;
        played.characters[slot as usize] = again;
    }
    for &(slot, command) in commands {
        let Some(&character) = played.characters.get(slot as usize) else {
            continue;
        };
        if let Err(e) = played.players.command(character, command) {
            warn!("keyframe-gpu-bevy: character {slot}: {command:?}: {e}");
        }
    }
    played.players.advance(device, queue, crowd, dt)
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

    /// Model `posed` (its clips made from its library) with `capacity`
    /// slots, generation 1, the characters' commands `commands` and
    /// placements `placements` (one per character); every slot taken by
    /// a new character.
    fn model(
        posed: BoundLibrary,
        capacity: u32,
        commands: &[(u32, &str, f64)],
        placements: Vec<Mat4>,
    ) -> RenderModel {
        let clips = Arc::new(Clips::new(posed.library()));
        let commands = commands
            .iter()
            .flat_map(|&(slot, clip, time)| {
                let clip = clips.clip(clip).expect("a clip of the column");
                [(slot, Command::Play(clip)), (slot, Command::Seek(time))]
            })
            .collect();
        RenderModel {
            posed,
            clips,
            capacity,
            generation: 1,
            commands,
            resets: (0..placements.len() as u32).collect(),
            placements,
            played: None,
        }
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
        let commands = [(0, "bend", 0.3), (1, "sway", 0.6)];
        let mut world = render_world(&h, model(bound, 2, &commands, placements.to_vec()));
        let mut schedule = frames();
        schedule.run(&mut world);
        let animation = world.resource::<RenderAnimation>();
        assert!(animation.ready, "the frame was accepted");
        let crowd = animation.crowd.as_ref().expect("the crowd");
        let id = animation.models[0].played.as_ref().expect("played").id;
        let animator = &crowd.model(id).expect("its model").chunks()[0];
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
        let commands = [(0, "bend", 0.25), (1, "sway", 0.5)];
        let placements = vec![Mat4::IDENTITY; 2];
        let mut world = render_world(&h, model(bound, 4, &commands, placements));
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
