//! [`PlaybackPass`]: the playback state of a crowd model's characters on
//! the GPU and the passes that change and step it (`shaders/playback.wgsl`,
//! twin `cpu::playback` and the `Player`). Per chunk of the model: each
//! character's record, action slots and kept settings, its root motion of
//! the frame and its placement, with the bind groups over the chunk's
//! sampler rows, mixer records and character ranges that the pass writes;
//! per model: the clips' durations, markers and root tracks, and the
//! frame's events. Per frame the host writes the frame's commands in one
//! buffer write (sorted by character); nothing per character.

use std::num::NonZeroU64;

use super::chunk::AnimatorChunk;
use super::{bind, buffer_filled, check_playback_device, map_read, scoped, Health};
use crate::cpu::playback::commands::new_character;
use crate::cpu::playback::PlaybackTables;
use crate::error::{Error, Result};
use crate::layout::{
    GpuActionSlot, GpuCharacter, GpuPlaybackCommand, GpuPlaybackFrame, GpuPlaybackParams,
    FLICKS_PER_SECOND, KEPT_WORDS, PLACEMENT_USES, PLAYBACK_BINDINGS, PLAYBACK_COMMANDS_USES,
    PLAYBACK_USES, PLAYBACK_WGSL, PLAYBACK_WORKGROUP_SIZE, SLOT_ADDITIVE, TICKS_PER_SECOND,
};
use crate::plan::dispatch_grid;

/// The commands a frame buffer holds at first (it grows when a frame
/// brings more).
const FIRST_COMMAND_CAPACITY: u32 = 1024;

/// Bytes of the events buffer's head (count, dropped, capacity, padding)
/// and of one event (model slot, clip, marker, weight bits).
pub(crate) const EVENT_HEAD: u64 = 16;
pub(crate) const EVENT_BYTES: u64 = 16;

/// One character's state as read back: its record, its action slots, its
/// kept settings and its root motion of the last frame (translation,
/// rotation).
pub(crate) type CharacterState = (GpuCharacter, Vec<GpuActionSlot>, Vec<u32>, [[f32; 4]; 2]);

/// The events of an events buffer's bytes (its head, then its entries:
/// model slot, clip, marker, weight bits), and how many did not fit (or
/// were past a character's share of a frame).
pub(crate) fn decode_events(bytes: &[u8]) -> (Vec<[u32; 4]>, u32) {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
        .collect();
    let (Some(&count), Some(&dropped), Some(&capacity)) =
        (words.first(), words.get(1), words.get(2))
    else {
        return (Vec::new(), 0);
    };
    let stored = count.min(capacity) as usize;
    let entries = words[4..]
        .chunks_exact(4)
        .take(stored)
        .map(|e| [e[0], e[1], e[2], e[3]])
        .collect();
    (entries, dropped)
}

/// The state of one chunk's characters and its bind groups.
#[derive(Debug)]
struct ChunkState {
    characters: wgpu::Buffer,
    slots: wgpu::Buffer,
    kept: wgpu::Buffer,
    params: wgpu::Buffer,
    /// Per character its root motion of the frame: translation, rotation
    /// (two `vec4`s).
    motion: wgpu::Buffer,
    /// Per character its placement: translation, rotation.
    placements: wgpu::Buffer,
    /// The three passes' bind groups (commands, step, placement).
    groups: Option<[wgpu::BindGroup; 3]>,
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
    /// The three entry points' layouts and pipelines (commands, step,
    /// placement).
    layouts: [wgpu::BindGroupLayout; 3],
    pipelines: [wgpu::ComputePipeline; 3],
    clips: wgpu::Buffer,
    clip_count: u32,
    /// The root's tracks, their keys and the masks' factors, the markers.
    root_tracks: wgpu::Buffer,
    root_keys: wgpu::Buffer,
    markers: wgpu::Buffer,
    /// The model's events of the frame (every chunk appends to it).
    events: wgpu::Buffer,
    /// The parameters the chunks share (each has its first character).
    params: GpuPlaybackParams,
    /// Whether the placement pass runs.
    moves: bool,
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

/// The entry points, each with the bindings it uses.
const ENTRIES: [(&str, &str, &[u32]); 3] = [
    (
        "keyframe-gpu.playback.commands",
        "playback_commands_main",
        &PLAYBACK_COMMANDS_USES,
    ),
    ("keyframe-gpu.playback", "playback_main", &PLAYBACK_USES),
    (
        "keyframe-gpu.playback.placement",
        "placement_main",
        &PLACEMENT_USES,
    ),
];

/// The layouts and pipelines of [`ENTRIES`].
type Pipelines = ([wgpu::BindGroupLayout; 3], [wgpu::ComputePipeline; 3]);

fn pipelines(device: &wgpu::Device) -> Result<Pipelines> {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("keyframe-gpu.playback.wgsl"),
        source: wgpu::ShaderSource::Wgsl(PLAYBACK_WGSL.into()),
    });
    let make = |(label, entry, uses): (&'static str, &'static str, &[u32])| -> Result<_> {
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
    let [a, b, c] = ENTRIES;
    let ((la, pa), (lb, pb), (lc, pc)) = (make(a)?, make(b)?, make(c)?);
    Ok(([la, lb, lc], [pa, pb, pc]))
}

impl PlaybackPass {
    /// The playback of the characters of `chunks` (each of
    /// `chunk_capacity` characters of `actions` slots) playing the clips
    /// of `tables`: every character at rest (no action), speed 1, clips
    /// starting on repeat, placed at the origin. Each chunk is driven by
    /// the pass from now on.
    pub(crate) fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        chunks: &mut [AnimatorChunk],
        (chunk_capacity, actions): (u32, u32),
        tables: &PlaybackTables,
    ) -> Result<Self> {
        let health = Health::of(device);
        health.check("Crowd (GPU playback)")?;
        check_playback_device(device)?;
        let limits = device.limits();
        let frame_bytes = frame_size(FIRST_COMMAND_CAPACITY);
        check_size(&limits, "playback commands", frame_bytes, false)?;
        // As many events a frame as the model has characters at first.
        let total = u64::from(chunk_capacity) * chunks.len() as u64;
        let event_capacity = u32::try_from(total.clamp(1024, 1 << 20)).unwrap_or(1 << 20);
        let event_bytes = EVENT_HEAD + u64::from(event_capacity) * EVENT_BYTES;
        check_size(&limits, "playback events", event_bytes, false)?;
        let (layouts, pipelines) = scoped(device, "Crowd (GPU playback pipelines)", || {
            pipelines(device)
        })??;
        // Each at least one element of the largest record long (a
        // binding's minimum).
        let init = |label, bytes: &[u8]| {
            let mut padded = bytes.to_vec();
            padded.resize(bytes.len().max(256), 0);
            buffer_init(device, label, &padded, wgpu::BufferUsages::STORAGE)
        };
        let (linear, turn) = tables.root.unwrap_or(([[0.0; 4]; 3], [0.0, 0.0, 0.0, 1.0]));
        let params = GpuPlaybackParams {
            first_character: 0,
            character_count: chunk_capacity,
            actions,
            clip_count: tables.clips.len() as u32,
            reference_rows: chunk_capacity * actions,
            tick_seconds: (1.0 / TICKS_PER_SECOND as f64) as f32,
            flick_seconds: (1.0 / f64::from(FLICKS_PER_SECOND)) as f32,
            has_root: u32::from(tables.root.is_some()),
            root_linear: linear,
            root_turn: turn,
            mask_offset: tables.mask_offset,
            mask_count: tables.mask_count,
            event_capacity,
            _pad0: 0,
        };
        let mut pass = PlaybackPass {
            health,
            layouts,
            pipelines,
            clips: init(
                "keyframe-gpu.playback.clips",
                bytemuck::cast_slice(&tables.clips),
            )?,
            clip_count: tables.clips.len() as u32,
            root_tracks: init(
                "keyframe-gpu.playback.root_tracks",
                bytemuck::cast_slice(&tables.root_tracks),
            )?,
            root_keys: init(
                "keyframe-gpu.playback.root_keys",
                bytemuck::cast_slice(&tables.root_keys),
            )?,
            markers: init(
                "keyframe-gpu.playback.markers",
                bytemuck::cast_slice(&tables.markers),
            )?,
            events: storage_with(
                device,
                "keyframe-gpu.playback.events",
                event_bytes,
                wgpu::BufferUsages::COPY_SRC,
            ),
            params,
            moves: false,
            frame: storage(device, "keyframe-gpu.playback.frame", frame_bytes),
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

    /// Chunk `k`'s state: every character at rest, placed at the origin.
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
        let n = self.chunk_capacity;
        let rest = vec![new_character(self.actions); n as usize];
        let origin = vec![[0.0f32, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]; n as usize];
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let slot_bytes =
            u64::from(n) * u64::from(self.actions) * std::mem::size_of::<GpuActionSlot>() as u64;
        let kept_bytes =
            u64::from(n) * u64::from(self.clip_count.max(1)) * u64::from(KEPT_WORDS) * 4;
        let params = GpuPlaybackParams {
            first_character: k * n,
            ..self.params
        };
        let mut c = scoped(
            device,
            "Crowd (GPU playback state)",
            || -> Result<ChunkState> {
                Ok(ChunkState {
                    characters: buffer_init(
                        device,
                        "keyframe-gpu.playback.characters",
                        bytemuck::cast_slice(&rest),
                        usage,
                    )?,
                    slots: storage_with(device, "keyframe-gpu.playback.slots", slot_bytes, usage),
                    kept: storage_with(device, "keyframe-gpu.playback.kept", kept_bytes, usage),
                    params: buffer_init(
                        device,
                        "keyframe-gpu.playback.params",
                        bytemuck::bytes_of(&params),
                        wgpu::BufferUsages::UNIFORM,
                    )?,
                    motion: storage_with(
                        device,
                        "keyframe-gpu.playback.motion",
                        u64::from(n) * 32,
                        usage,
                    ),
                    placements: buffer_init(
                        device,
                        "keyframe-gpu.playback.placements",
                        bytemuck::cast_slice(&origin),
                        usage,
                    )?,
                    groups: None,
                    count: n,
                    targets: targets.map(Clone::clone),
                })
            },
        )??;
        self.bind(device, &mut c)?;
        Ok(c)
    }

    /// The three passes' bind groups over chunk `c`'s state and targets.
    fn bind(&self, device: &wgpu::Device, c: &mut ChunkState) -> Result<()> {
        let head = std::mem::size_of::<GpuPlaybackFrame>() as u64;
        let frame = wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: &self.frame,
            offset: 0,
            size: NonZeroU64::new(frame_size(self.frame_capacity).max(head)),
        });
        let [rows, actions, ranges] = &c.targets;
        let resource = |n: u32| -> wgpu::BindingResource<'_> {
            match n {
                0 => c.params.as_entire_binding(),
                1 => frame.clone(),
                2 => self.clips.as_entire_binding(),
                3 => c.characters.as_entire_binding(),
                4 => c.slots.as_entire_binding(),
                5 => c.kept.as_entire_binding(),
                6 => rows.as_entire_binding(),
                7 => actions.as_entire_binding(),
                8 => ranges.as_entire_binding(),
                9 => self.root_tracks.as_entire_binding(),
                10 => self.root_keys.as_entire_binding(),
                11 => self.markers.as_entire_binding(),
                12 => c.motion.as_entire_binding(),
                13 => self.events.as_entire_binding(),
                _ => c.placements.as_entire_binding(),
            }
        };
        let mut groups = Vec::with_capacity(3);
        for ((label, _, uses), layout) in ENTRIES.iter().zip(&self.layouts) {
            let resources: Vec<_> = uses.iter().map(|&n| (n, resource(n))).collect();
            groups.push(bind::group(device, label, layout, uses, &resources)?);
        }
        c.groups = <[wgpu::BindGroup; 3]>::try_from(groups).ok();
        Ok(())
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
        // A slot whose character went and another came since the last
        // frame is reset once: the count is of the entries written.
        self.resets.sort_unstable();
        self.resets.dedup();
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
        let mut chunks = std::mem::take(&mut self.chunks);
        let bound = chunks.iter_mut().try_for_each(|c| self.bind(device, c));
        self.chunks = chunks;
        bound
    }

    /// Moves each character's placement by its root motion every frame
    /// (`placement_main`), or stops.
    pub(crate) fn set_moving(&mut self, moves: bool) {
        self.moves = moves;
    }

    /// Chunk `k`'s placements and root motions of the frame (per
    /// character: translation, rotation).
    pub(crate) fn chunk_outputs(&self, k: usize) -> Option<(&wgpu::Buffer, &wgpu::Buffer)> {
        self.chunks.get(k).map(|c| (&c.placements, &c.motion))
    }

    /// The model's events buffer of the frame.
    pub(crate) fn events(&self) -> &wgpu::Buffer {
        &self.events
    }

    /// Records each chunk's command pass, its step and (when moving) its
    /// placement pass, before the chunk's sampling (nothing once the
    /// device is known lost).
    pub(crate) fn record_pass(&self, pass: &mut wgpu::ComputePass<'_>) {
        if self.health.is_lost() {
            return;
        }
        for c in &self.chunks {
            let Some([commands, advance, placement]) = &c.groups else {
                continue;
            };
            // At least one invocation: the first chunk's clears the frame's
            // events.
            let n = self.command_count.max(1);
            let (x, y) = dispatch_grid(n, PLAYBACK_WORKGROUP_SIZE, self.max_dim);
            pass.set_pipeline(&self.pipelines[0]);
            pass.set_bind_group(0, commands, &[]);
            pass.dispatch_workgroups(x, y, 1);
            let (x, y) = dispatch_grid(c.count, PLAYBACK_WORKGROUP_SIZE, self.max_dim);
            pass.set_pipeline(&self.pipelines[1]);
            pass.set_bind_group(0, advance, &[]);
            pass.dispatch_workgroups(x, y, 1);
            if self.moves {
                pass.set_pipeline(&self.pipelines[2]);
                pass.set_bind_group(0, placement, &[]);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// Reads the state of model slots `slots` back (blocking: it waits
    /// for the GPU), in one copy: each one's record, action slots, kept
    /// settings and root motion of the last frame; and that frame's
    /// events (every character's: model slot, clip, marker, weight bits),
    /// with the count of events that did not fit.
    pub(crate) fn read_states(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        slots: &[u32],
    ) -> Result<(Vec<CharacterState>, Vec<[u32; 4]>, u32)> {
        self.health.check("GpuPlayers::read_back")?;
        let character_size = std::mem::size_of::<GpuCharacter>() as u64;
        let slot_size = std::mem::size_of::<GpuActionSlot>() as u64 * u64::from(self.actions);
        let kept_size = u64::from(self.clip_count) * u64::from(KEPT_WORDS) * 4;
        let mut ranges = Vec::with_capacity(slots.len() * 4 + 1);
        for &slot in slots {
            let (k, i) = (slot / self.chunk_capacity, slot % self.chunk_capacity);
            let Some(c) = self.chunks.get(k as usize) else {
                return Err(Error::Gpu {
                    during: "GpuPlayers::read_back",
                    message: format!("slot {slot} is past the model's chunks"),
                });
            };
            let i = u64::from(i);
            ranges.push((&c.characters, i * character_size, character_size));
            ranges.push((&c.slots, i * slot_size, slot_size));
            ranges.push((&c.kept, i * kept_size, kept_size));
            ranges.push((&c.motion, i * 32, 32));
        }
        ranges.push((&self.events, 0, self.events.size()));
        let bytes = self.read_ranges(device, queue, &ranges)?;
        let each = (character_size + slot_size + kept_size + 32) as usize;
        let (states, events) = bytes.split_at(each * slots.len());
        let states = states
            .chunks_exact(each.max(1))
            .map(|b| {
                let (head, rest) = b.split_at(character_size as usize);
                let (actions, rest) = rest.split_at(slot_size as usize);
                let (kept, motion) = rest.split_at(kept_size as usize);
                (
                    bytemuck::pod_read_unaligned::<GpuCharacter>(head),
                    bytemuck::pod_collect_to_vec::<u8, GpuActionSlot>(actions),
                    bytemuck::pod_collect_to_vec::<u8, u32>(kept),
                    bytemuck::pod_read_unaligned::<[[f32; 4]; 2]>(motion),
                )
            })
            .collect();
        let (list, dropped) = decode_events(events);
        Ok((states, list, dropped))
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

/// A buffer holding `contents` (at least 4 bytes).
fn buffer_init(
    device: &wgpu::Device,
    label: &'static str,
    contents: &[u8],
    usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer> {
    let size = (contents.len() as u64)
        .div_ceil(wgpu::COPY_BUFFER_ALIGNMENT)
        .max(1)
        * wgpu::COPY_BUFFER_ALIGNMENT;
    buffer_filled(device, label, size, usage, |view| {
        view.slice(..contents.len()).copy_from_slice(contents);
    })
}

/// Refuses a storage (or uniform) buffer of `bytes` past the device's
/// binding-size or buffer-size limit, naming the limit.
fn check_size(
    limits: &wgpu::Limits,
    what: &'static str,
    bytes: u64,
    is_uniform: bool,
) -> Result<()> {
    let (limit_name, limit) = if is_uniform {
        (
            "max_uniform_buffer_binding_size",
            limits.max_uniform_buffer_binding_size,
        )
    } else {
        (
            "max_storage_buffer_binding_size",
            limits.max_storage_buffer_binding_size,
        )
    };
    if bytes > limit {
        return Err(Error::LimitExceeded {
            what,
            needed: bytes,
            limit_name,
            limit,
        });
    }
    if bytes > limits.max_buffer_size {
        return Err(Error::LimitExceeded {
            what,
            needed: bytes,
            limit_name: "max_buffer_size",
            limit: limits.max_buffer_size,
        });
    }
    Ok(())
}
