//! [`PlaybackPass`]: the playback state of a crowd model's characters on
//! the GPU and the passes that change and step it (`shaders/playback.wgsl`,
//! twin `cpu::playback`). Per chunk of the model: each character's record,
//! action slots and kept settings, with the bind groups over the chunk's
//! sampler rows, mixer records and character ranges that the pass writes.
//! Per frame the host writes the frame's commands in one buffer write
//! (sorted by character); nothing per character.

use std::num::NonZeroU64;

use super::chunk::AnimatorChunk;
use super::{bind, buffer_init, check_size, dispatch_grid, map_read, scoped, Health};
use crate::cpu::playback::commands::new_character;
use crate::error::{Error, Result};
use crate::layout::{
    GpuActionSlot, GpuCharacter, GpuPlaybackClip, GpuPlaybackCommand, GpuPlaybackFrame,
    GpuPlaybackParams, FLICKS_PER_SECOND, KEPT_WORDS, PLAYBACK_BINDINGS, PLAYBACK_COMMANDS_USES,
    PLAYBACK_USES, PLAYBACK_WGSL, PLAYBACK_WORKGROUP_SIZE, SLOT_ADDITIVE, TICKS_PER_SECOND,
};

/// The commands a frame buffer holds at first (it grows when a frame
/// brings more).
const FIRST_COMMAND_CAPACITY: u32 = 1024;

/// One character's state as read back: its record, its action slots and
/// its kept settings.
pub(crate) type CharacterState = (GpuCharacter, Vec<GpuActionSlot>, Vec<u32>);

/// The state of one chunk's characters and its bind groups.
#[derive(Debug)]
struct ChunkState {
    characters: wgpu::Buffer,
    slots: wgpu::Buffer,
    kept: wgpu::Buffer,
    params: wgpu::Buffer,
    commands_group: wgpu::BindGroup,
    advance_group: wgpu::BindGroup,
    /// The chunk's characters (its capacity).
    count: u32,
    /// The chunk's buffers the pass writes, kept for its bind groups when
    /// the frame buffer grows.
    targets: [wgpu::Buffer; 3],
}

/// A model's playback on the GPU (see the module documentation).
#[derive(Debug)]
pub(crate) struct PlaybackPass {
    health: Health,
    commands_layout: wgpu::BindGroupLayout,
    advance_layout: wgpu::BindGroupLayout,
    commands_pipeline: wgpu::ComputePipeline,
    advance_pipeline: wgpu::ComputePipeline,
    clips: wgpu::Buffer,
    clip_count: u32,
    frame: wgpu::Buffer,
    frame_capacity: u32,
    chunks: Vec<ChunkState>,
    /// Action slots per character.
    actions: u32,
    /// Characters per chunk.
    chunk_capacity: u32,
    /// This frame's commands.
    command_count: u32,
    /// The slots whose characters came or went since the last frame: their
    /// state is reset before this frame's commands.
    resets: Vec<u32>,
    /// Whether an additive layer was ever commanded: then the reference
    /// rows are sampled too.
    additive: bool,
    /// Whether every chunk samples and blends what the pass writes (a
    /// grown model's new chunks do from the next frame).
    driven: bool,
    bytes: Vec<u8>,
    max_dim: u32,
}

/// The pipelines of both entry points and their layouts.
type Pipelines = (
    wgpu::BindGroupLayout,
    wgpu::BindGroupLayout,
    wgpu::ComputePipeline,
    wgpu::ComputePipeline,
);

fn pipelines(device: &wgpu::Device) -> Result<Pipelines> {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("keyframe-gpu.playback.wgsl"),
        source: wgpu::ShaderSource::Wgsl(PLAYBACK_WGSL.into()),
    });
    let make = |label, uses: &[u32], entry| -> Result<_> {
        let layout = bind::layout(device, label, &PLAYBACK_BINDINGS, uses)?;
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some(entry),
            compilation_options: Default::default(),
            cache: None,
        });
        Ok((layout, pipeline))
    };
    let (commands_layout, commands) = make(
        "keyframe-gpu.playback.commands",
        &PLAYBACK_COMMANDS_USES,
        "playback_commands_main",
    )?;
    let (advance_layout, advance) = make("keyframe-gpu.playback", &PLAYBACK_USES, "playback_main")?;
    Ok((commands_layout, advance_layout, commands, advance))
}

impl PlaybackPass {
    /// The playback of the characters of `chunks` (each of
    /// `chunk_capacity` characters of `actions` slots) playing clips
    /// `clips`: every character at rest (no action), speed 1, clips
    /// starting on repeat. Each chunk is driven by the pass from now on.
    pub(crate) fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        chunks: &mut [AnimatorChunk],
        (chunk_capacity, actions): (u32, u32),
        clips: &[GpuPlaybackClip],
    ) -> Result<Self> {
        let health = Health::of(device);
        health.check("Crowd (GPU playback)")?;
        let limits = device.limits();
        let frame_bytes = frame_size(FIRST_COMMAND_CAPACITY);
        check_size(&limits, "playback commands", frame_bytes, false)?;
        let (commands_layout, advance_layout, commands_pipeline, advance_pipeline) =
            scoped(device, "Crowd (GPU playback pipelines)", || {
                pipelines(device)
            })??;
        let clips_buffer = buffer_init(
            device,
            "keyframe-gpu.playback.clips",
            bytemuck::cast_slice(clips),
            wgpu::BufferUsages::STORAGE,
        )?;
        let frame = storage(device, "keyframe-gpu.playback.frame", frame_bytes);
        let mut pass = PlaybackPass {
            health,
            commands_layout,
            advance_layout,
            commands_pipeline,
            advance_pipeline,
            clips: clips_buffer,
            clip_count: clips.len() as u32,
            frame,
            frame_capacity: FIRST_COMMAND_CAPACITY,
            chunks: Vec::new(),
            actions,
            chunk_capacity,
            command_count: 0,
            resets: Vec::new(),
            additive: false,
            driven: false,
            bytes: Vec::with_capacity(frame_bytes as usize),
            max_dim: limits.max_compute_workgroups_per_dimension.max(1),
        };
        pass.grow(device, chunks)?;
        pass.drive(queue, chunks);
        Ok(pass)
    }

    /// Adds the state of `chunks` past those it has (a model grown); they
    /// are driven from the next frame written.
    pub(crate) fn grow(&mut self, device: &wgpu::Device, chunks: &[AnimatorChunk]) -> Result<()> {
        let first = self.chunks.len();
        let limits = device.limits();
        let per = u64::from(self.chunk_capacity);
        let slot_bytes =
            per * u64::from(self.actions) * std::mem::size_of::<GpuActionSlot>() as u64;
        let kept_bytes = per * u64::from(self.clip_count.max(1)) * u64::from(KEPT_WORDS) * 4;
        check_size(&limits, "playback action slots", slot_bytes, false)?;
        check_size(&limits, "playback kept settings", kept_bytes, false)?;
        let mut more = Vec::with_capacity(chunks.len().saturating_sub(first));
        for (k, chunk) in chunks.iter().enumerate().skip(first) {
            more.push(self.chunk_state(device, chunk, k as u32)?);
        }
        self.chunks.extend(more);
        self.driven = false;
        Ok(())
    }

    /// Chunk `k`'s state: every character at rest.
    fn chunk_state(
        &self,
        device: &wgpu::Device,
        chunk: &AnimatorChunk,
        k: u32,
    ) -> Result<ChunkState> {
        let Some(targets) = chunk.playback_targets() else {
            return Err(Error::Gpu {
                during: "Crowd (GPU playback)",
                message: "the model has no mixer".into(),
            });
        };
        let targets = targets.map(Clone::clone);
        let n = self.chunk_capacity;
        let rest = vec![new_character(self.actions); n as usize];
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        scoped(
            device,
            "Crowd (GPU playback state)",
            || -> Result<ChunkState> {
                let characters = buffer_init(
                    device,
                    "keyframe-gpu.playback.characters",
                    bytemuck::cast_slice(&rest),
                    usage,
                )?;
                let slots = storage_with(
                    device,
                    "keyframe-gpu.playback.slots",
                    u64::from(n)
                        * u64::from(self.actions)
                        * std::mem::size_of::<GpuActionSlot>() as u64,
                    usage,
                );
                let kept = storage_with(
                    device,
                    "keyframe-gpu.playback.kept",
                    u64::from(n) * u64::from(self.clip_count.max(1)) * u64::from(KEPT_WORDS) * 4,
                    usage,
                );
                let params = GpuPlaybackParams {
                    first_character: k * n,
                    character_count: n,
                    actions: self.actions,
                    clip_count: self.clip_count,
                    reference_rows: n * self.actions,
                    tick_seconds: (1.0 / TICKS_PER_SECOND as f64) as f32,
                    flick_seconds: (1.0 / f64::from(FLICKS_PER_SECOND)) as f32,
                    _pad1: 0,
                };
                let params = buffer_init(
                    device,
                    "keyframe-gpu.playback.params",
                    bytemuck::bytes_of(&params),
                    wgpu::BufferUsages::UNIFORM,
                )?;
                let (commands_group, advance_group) =
                    self.bind_groups(device, [&params, &characters, &slots, &kept], &targets)?;
                Ok(ChunkState {
                    characters,
                    slots,
                    kept,
                    params,
                    commands_group,
                    advance_group,
                    count: n,
                    targets,
                })
            },
        )?
    }

    /// The two passes' bind groups over a chunk's state and targets.
    fn bind_groups(
        &self,
        device: &wgpu::Device,
        [params, characters, slots, kept]: [&wgpu::Buffer; 4],
        [rows, actions, ranges]: &[wgpu::Buffer; 3],
    ) -> Result<(wgpu::BindGroup, wgpu::BindGroup)> {
        let head = std::mem::size_of::<GpuPlaybackFrame>() as u64;
        let frame = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.frame,
            offset: 0,
            size: NonZeroU64::new(frame_size(self.frame_capacity).max(head)),
        });
        let commands = bind::group(
            device,
            "keyframe-gpu.playback.commands",
            &self.commands_layout,
            &PLAYBACK_COMMANDS_USES,
            &[
                (0, params.as_entire_binding()),
                (1, frame.clone()),
                (2, self.clips.as_entire_binding()),
                (3, characters.as_entire_binding()),
                (4, slots.as_entire_binding()),
                (5, kept.as_entire_binding()),
            ],
        )?;
        let advance = bind::group(
            device,
            "keyframe-gpu.playback",
            &self.advance_layout,
            &PLAYBACK_USES,
            &[
                (0, params.as_entire_binding()),
                (1, frame),
                (2, self.clips.as_entire_binding()),
                (3, characters.as_entire_binding()),
                (4, slots.as_entire_binding()),
                (6, rows.as_entire_binding()),
                (7, actions.as_entire_binding()),
                (8, ranges.as_entire_binding()),
            ],
        )?;
        Ok((commands, advance))
    }

    /// Sets every chunk to sample the rows and blend the characters the
    /// pass writes.
    fn drive(&mut self, queue: &wgpu::Queue, chunks: &mut [AnimatorChunk]) {
        let rows = self.chunk_capacity * self.actions * if self.additive { 2 } else { 1 };
        for chunk in chunks.iter_mut() {
            chunk.drive(queue, rows, self.chunk_capacity);
        }
        self.driven = true;
    }

    /// The character in model slot `slot` comes or goes: its state is
    /// reset (at rest, speed 1, clips on repeat, nothing kept) before the
    /// next frame's commands.
    pub(crate) fn reset(&mut self, slot: u32) {
        self.resets.push(slot);
    }

    /// Whether the character in model slot `slot` came or went since the
    /// last frame (its state on the GPU is reset with the next frame).
    pub(crate) fn resets(&self, slot: u32) -> bool {
        self.resets.contains(&slot)
    }

    /// Writes the next frame: a step of `dt` ticks, and `commands` (sorted
    /// by character, each character's in the order given) after the
    /// resets of the characters that came or went. One buffer write;
    /// a frame with more commands than the buffer holds makes it again
    /// (and the bind groups), once per doubling.
    pub(crate) fn write_frame(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        chunks: &mut [AnimatorChunk],
        dt: u64,
        commands: &[GpuPlaybackCommand],
    ) -> Result<()> {
        self.health.check("GpuPlayers::advance")?;
        let n = commands.len() + self.resets.len();
        let n = u32::try_from(n).map_err(|_| Error::LimitExceeded {
            what: "playback commands in one frame",
            needed: n as u64,
            limit_name: "u32 indexing",
            limit: u64::from(u32::MAX),
        })?;
        if n > self.frame_capacity {
            self.grow_frame(device, n.next_power_of_two())?;
        }
        if !self.additive && commands.iter().any(|c| c.flags & SLOT_ADDITIVE != 0) {
            self.additive = true;
            self.driven = false;
        }
        if !self.driven {
            self.drive(queue, chunks);
        }
        self.resets.sort_unstable();
        self.resets.dedup();
        let head = GpuPlaybackFrame {
            dt_lo: dt as u32,
            dt_hi: (dt >> 32) as u32,
            command_count: n,
            _pad0: 0,
        };
        self.bytes.clear();
        self.bytes.extend_from_slice(bytemuck::bytes_of(&head));
        // Resets first: a character's reset comes before its commands,
        // and the pass needs each character's commands together.
        merge_resets(&self.resets, commands, &mut self.bytes);
        queue.write_buffer(&self.frame, 0, &self.bytes);
        self.command_count = n;
        self.resets.clear();
        Ok(())
    }

    fn grow_frame(&mut self, device: &wgpu::Device, capacity: u32) -> Result<()> {
        let bytes = frame_size(capacity);
        check_size(&device.limits(), "playback commands", bytes, false)?;
        self.frame = storage(device, "keyframe-gpu.playback.frame", bytes);
        self.frame_capacity = capacity;
        for k in 0..self.chunks.len() {
            let c = &self.chunks[k];
            let buffers = [&c.params, &c.characters, &c.slots, &c.kept];
            let (commands, advance) = self.bind_groups(device, buffers, &c.targets)?;
            self.chunks[k].commands_group = commands;
            self.chunks[k].advance_group = advance;
        }
        Ok(())
    }

    /// Records each chunk's command pass (when the frame has commands) and
    /// its step, before the chunk's sampling (nothing once the device is
    /// known lost).
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.health.is_lost() {
            return;
        }
        for c in &self.chunks {
            if self.command_count > 0 {
                let (x, y) =
                    dispatch_grid(self.command_count, PLAYBACK_WORKGROUP_SIZE, self.max_dim);
                pass.set_pipeline(&self.commands_pipeline);
                pass.set_bind_group(0, &c.commands_group, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
            let (x, y) = dispatch_grid(c.count, PLAYBACK_WORKGROUP_SIZE, self.max_dim);
            pass.set_pipeline(&self.advance_pipeline);
            pass.set_bind_group(0, &c.advance_group, &[]);
            pass.dispatch_workgroups(x, y, 1);
        }
    }

    /// Reads the state of model slots `slots` back (blocking: it waits
    /// for the GPU), in one copy: each one's record, action slots and
    /// kept settings.
    pub(crate) fn read_states(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        slots: &[u32],
    ) -> Result<Vec<CharacterState>> {
        self.health.check("GpuPlayers::read_back")?;
        let character_size = std::mem::size_of::<GpuCharacter>() as u64;
        let slot_size = std::mem::size_of::<GpuActionSlot>() as u64 * u64::from(self.actions);
        let kept_size = u64::from(self.clip_count) * u64::from(KEPT_WORDS) * 4;
        let mut ranges = Vec::with_capacity(slots.len() * 3);
        for &slot in slots {
            let (k, i) = (slot / self.chunk_capacity, slot % self.chunk_capacity);
            let Some(c) = self.chunks.get(k as usize) else {
                return Err(Error::Gpu {
                    during: "GpuPlayers::read_back",
                    message: format!("slot {slot} is past the model's chunks"),
                });
            };
            ranges.push((&c.characters, u64::from(i) * character_size, character_size));
            ranges.push((&c.slots, u64::from(i) * slot_size, slot_size));
            ranges.push((&c.kept, u64::from(i) * kept_size, kept_size));
        }
        let bytes = self.read_ranges(device, queue, &ranges)?;
        let each = (character_size + slot_size + kept_size) as usize;
        Ok(bytes
            .chunks_exact(each.max(1))
            .take(slots.len())
            .map(|b| {
                let (head, rest) = b.split_at(character_size as usize);
                let (actions, kept) = rest.split_at(slot_size as usize);
                (
                    bytemuck::pod_read_unaligned::<GpuCharacter>(head),
                    bytemuck::pod_collect_to_vec::<u8, GpuActionSlot>(actions),
                    bytemuck::pod_collect_to_vec::<u8, u32>(kept),
                )
            })
            .collect())
    }

    /// The bytes of `ranges` (buffer, offset, size), one after the other.
    fn read_ranges(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        ranges: &[(&wgpu::Buffer, u64, u64)],
    ) -> Result<Vec<u8>> {
        let total: u64 = ranges.iter().map(|r| r.2).sum();
        let staging = scoped(device, "GpuPlayers::subscribe (copy)", || {
            let staging = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("keyframe-gpu.playback.readback"),
                size: total.max(4),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            let mut encoder = device.create_command_encoder(&Default::default());
            let mut at = 0;
            for &(buffer, offset, size) in ranges {
                if size > 0 {
                    encoder.copy_buffer_to_buffer(buffer, offset, &staging, at, size);
                }
                at += size;
            }
            queue.submit([encoder.finish()]);
            staging
        })?;
        map_read(&self.health, device, &staging, total.max(4), |view| {
            view[..total as usize].to_vec()
        })
    }

    /// Every character's state of chunk `k` (for tests): records, slots,
    /// kept settings.
    #[cfg(test)]
    pub(crate) fn read_chunk(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        k: usize,
    ) -> Result<(Vec<GpuCharacter>, Vec<GpuActionSlot>, Vec<u32>)> {
        let c = &self.chunks[k];
        let ranges = [
            (&c.characters, 0, c.characters.size()),
            (&c.slots, 0, c.slots.size()),
            (&c.kept, 0, c.kept.size()),
        ];
        let bytes = self.read_ranges(device, queue, &ranges)?;
        let (a, b) = (c.characters.size() as usize, c.slots.size() as usize);
        Ok((
            bytemuck::pod_collect_to_vec(&bytes[..a]),
            bytemuck::pod_collect_to_vec(&bytes[a..a + b]),
            bytemuck::pod_collect_to_vec(&bytes[a + b..]),
        ))
    }
}

/// The bytes of a frame buffer holding `commands` commands.
fn frame_size(commands: u32) -> u64 {
    std::mem::size_of::<GpuPlaybackFrame>() as u64
        + u64::from(commands.max(1)) * std::mem::size_of::<GpuPlaybackCommand>() as u64
}

fn storage(device: &wgpu::Device, label: &'static str, size: u64) -> wgpu::Buffer {
    storage_with(device, label, size, wgpu::BufferUsages::COPY_DST)
}

/// A zeroed storage buffer of `size` bytes (at least 4) with `usage` too.
fn storage_with(
    device: &wgpu::Device,
    label: &'static str,
    size: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(4).div_ceil(4) * 4,
        usage: wgpu::BufferUsages::STORAGE | usage,
        mapped_at_creation: false,
    })
}

/// Appends to `out` the reset commands of `resets` (sorted slots) and
/// `commands` (sorted by character), merged by character, resets first.
fn merge_resets(resets: &[u32], commands: &[GpuPlaybackCommand], out: &mut Vec<u8>) {
    let mut r = resets.iter().peekable();
    for c in commands {
        while let Some(&&slot) = r.peek().filter(|&&&s| s <= c.character) {
            out.extend_from_slice(bytemuck::bytes_of(&GpuPlaybackCommand::reset(slot)));
            r.next();
        }
        out.extend_from_slice(bytemuck::bytes_of(c));
    }
    for &slot in r {
        out.extend_from_slice(bytemuck::bytes_of(&GpuPlaybackCommand::reset(slot)));
    }
}
