//! The playback pass's side of the layout (`shaders/playback.wgsl`): each
//! character's state ([`GpuCharacter`]) and action slots
//! ([`GpuActionSlot`]), the per-clip table the pass reads
//! ([`GpuPlaybackClip`]), one frame's commands ([`GpuPlaybackCommand`]
//! after a [`GpuPlaybackFrame`]), the constants of their flags and kinds,
//! and the pass's bindings. The playback layer's `Player` keeps the same
//! records on the host (`cpu::playback` is the twin of the shader), so a
//! character's state moves between the GPU and a `Player` as it is.
//!
//! Times are integer ticks ([`TICKS_PER_SECOND`] a second) in two `u32`
//! words (`_lo`, `_hi`): a playhead keeps its phase exactly however long
//! it plays. Speeds are `f64` bit patterns in two words, applied by integer
//! arithmetic (`cpu::playback::scale_ticks`), so a WGSL pass without `f64`
//! computes what the host does.

use std::mem::size_of;

use bytemuck::{Pod, Zeroable};

use super::{binding, Binding, BindingKind};

/// Flicks per second: 705,600,000 (Facebook's unit for media time), so
/// that the steps of every common frame rate (24, 25, 30, 48, 50, 60, 90,
/// 100, 120, 144 Hz) and every whole millisecond are whole numbers of
/// flicks.
pub(crate) const FLICKS_PER_SECOND: u32 = 705_600_000;

/// Ticks per flick, as a shift: a tick is 2^-16 flick.
pub(crate) const TICK_SHIFT: u32 = 16;

/// Ticks per second of a playhead: 2^16 flicks, 46,242,201,600,000
/// (`1378125 * 2^25`). The steps of the common frame rates and whole
/// milliseconds are whole numbers of ticks, and so is every `f32` clip
/// duration of at least 0.25 s (a shorter one is rounded by at most half
/// a tick, 1.1e-14 s); a time or step of up to 2^63 ticks (55.4 hours)
/// fits a signed 64-bit count.
pub(crate) const TICKS_PER_SECOND: u64 = (FLICKS_PER_SECOND as u64) << TICK_SHIFT;

/// One character's playback state (WGSL `PlaybackCharacter`): what a
/// `Player` keeps besides its actions.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GpuCharacter {
    /// The player's speed, an `f64`'s bits (low word).
    pub(crate) speed_lo: u32,
    /// The player's speed, an `f64`'s bits (high word).
    pub(crate) speed_hi: u32,
    /// The wrap of clips without one of their own (bits `WRAP_BITS`),
    /// `SLOT_REPS` when they start with a repetition limit, and
    /// `CHARACTER_PAUSED`.
    pub(crate) flags: u32,
    /// Actions in use: slots `0 .. count`.
    pub(crate) count: u32,
    /// The repetition limit clips without one of their own start with.
    pub(crate) repetitions_lo: u32,
    /// High word of `repetitions`.
    pub(crate) repetitions_hi: u32,
    /// The most actions the table holds (`max_actions`, at most the slots
    /// a character has).
    pub(crate) max_actions: u32,
    /// Padding (32-byte records).
    pub(crate) _pad0: u32,
}

/// One action of a character (WGSL `ActionSlot`): its clip, playhead
/// (clock), counts, speed, weight and fade, and for a layer its mask and
/// blend. Slots `0 .. count` of a character are its actions in table
/// order: the base actions, then the layers.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuActionSlot {
    /// The clip (its index in the library).
    pub(crate) clip: u32,
    /// The wrap (bits `WRAP_BITS`) and the `SLOT_*` flags.
    pub(crate) flags: u32,
    /// A layer's number in its player (with `SLOT_LAYER`).
    pub(crate) layer: u32,
    /// Its mask, `NO_MASK` for none.
    pub(crate) mask: u32,
    /// The playhead: clip time in ticks, in `[0, duration]`.
    pub(crate) time_lo: u32,
    /// High word of `time`.
    pub(crate) time_hi: u32,
    /// Passes ended since the clock was set (for the repetition limit).
    pub(crate) passes_lo: u32,
    /// High word of `passes`.
    pub(crate) passes_hi: u32,
    /// Loop ends (repeat) or turns (ping-pong) crossed since it started.
    pub(crate) loops_lo: u32,
    /// High word of `loops`.
    pub(crate) loops_hi: u32,
    /// Its repetition limit (with `SLOT_REPS`).
    pub(crate) repetitions_lo: u32,
    /// High word of `repetitions`.
    pub(crate) repetitions_hi: u32,
    /// Its own time scale (layers; 1 for base actions), an `f64`'s bits.
    pub(crate) speed_lo: u32,
    /// High word of `speed`.
    pub(crate) speed_hi: u32,
    /// Its weight now (`f32` bits).
    pub(crate) weight: f32,
    /// Its fade's starting weight (with `SLOT_FADING`).
    pub(crate) fade_from: f32,
    /// Its fade's end weight.
    pub(crate) fade_to: f32,
    /// `1 / fade duration in ticks`, rounded to `f32` once, on the host.
    pub(crate) fade_rate: f32,
    /// Ticks of the fade played.
    pub(crate) fade_elapsed_lo: u32,
    /// High word of `fade_elapsed`.
    pub(crate) fade_elapsed_hi: u32,
    /// The fade's duration in ticks (at least 1).
    pub(crate) fade_duration_lo: u32,
    /// High word of `fade_duration`.
    pub(crate) fade_duration_hi: u32,
    /// An additive layer's reference time (`f64` bits, as given).
    pub(crate) reference_lo: u32,
    /// High word of `reference`.
    pub(crate) reference_hi: u32,
    /// The reference time as the sampler takes it (`f32`).
    pub(crate) reference_time: f32,
    /// Padding (112-byte records).
    pub(crate) _pad0: u32,
    /// Padding.
    pub(crate) _pad1: u32,
    /// Padding.
    pub(crate) _pad2: u32,
}

/// What the playback pass knows of a clip (WGSL `PlaybackClip`): its
/// duration in ticks and in seconds, its markers, and the root's motion
/// over it (the root's value at its start and end, and its tracks).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuPlaybackClip {
    /// The root's translation at clip time 0 (its rest without a track).
    pub(crate) root_start_translation: [f32; 4],
    /// The root's translation at the clip's end.
    pub(crate) root_end_translation: [f32; 4],
    /// The root's rotation at clip time 0 (x, y, z, w).
    pub(crate) root_start_rotation: [f32; 4],
    /// The root's rotation at the clip's end.
    pub(crate) root_end_rotation: [f32; 4],
    /// The duration in ticks (low word).
    pub(crate) ticks_lo: u32,
    /// High word of the duration in ticks.
    pub(crate) ticks_hi: u32,
    /// The duration in seconds, as the clip table has it.
    pub(crate) duration: f32,
    /// Its first marker in the marker table.
    pub(crate) marker_first: u32,
    /// Its markers (by time).
    pub(crate) marker_count: u32,
    /// The root's translation track in the root track table, `NO_TRACK`
    /// for none.
    pub(crate) root_translation: u32,
    /// The root's rotation track, `NO_TRACK` for none.
    pub(crate) root_rotation: u32,
    /// Padding (96-byte records).
    pub(crate) _pad0: u32,
}

/// One of the root node's tracks (WGSL `RootTrack`): its keys in the root
/// key table (`root_keys`: times, then values).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuRootTrack {
    /// `Interpolation` as `u32`.
    pub(crate) interpolation: u32,
    /// Keys.
    pub(crate) key_count: u32,
    /// Its first key time in `root_keys`.
    pub(crate) times_offset: u32,
    /// Its first value (CUBICSPLINE: in-tangent, value, out-tangent per
    /// key).
    pub(crate) values_offset: u32,
    /// Keys per second after the first, `(keys - 1) / (last - first)`,
    /// where its key times are evenly spaced (the search starts from the
    /// key it gives); 0 otherwise (a binary search).
    pub(crate) rate: f32,
    /// Padding (32-byte records).
    pub(crate) _pad0: u32,
    /// Padding.
    pub(crate) _pad1: u32,
    /// Padding.
    pub(crate) _pad2: u32,
}

/// A root track's `GpuPlaybackClip::root_translation` when the clip has
/// none.
pub(crate) const NO_TRACK: u32 = u32::MAX;

/// One command for one character (WGSL `PlaybackCommand`): a `Player`
/// method's arguments, checked on the host, applied by the pass (or by a
/// `Player`) in the order given.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuPlaybackCommand {
    /// The character: its slot in the model (a `Player`: 0).
    pub(crate) character: u32,
    /// `CMD_*`.
    pub(crate) kind: u32,
    /// The clip it names.
    pub(crate) clip: u32,
    /// A wrap (bits `WRAP_BITS`) and `SLOT_REPS`, `SLOT_OVERRIDES`,
    /// `SLOT_ADDITIVE`, `CHARACTER_PAUSED` as the kind needs.
    pub(crate) flags: u32,
    /// A fade's duration in ticks (at least 1).
    pub(crate) duration_lo: u32,
    /// High word of `duration`.
    pub(crate) duration_hi: u32,
    /// A time in ticks (signed: seek, crossfade_at).
    pub(crate) time_lo: u32,
    /// High word of `time`.
    pub(crate) time_hi: u32,
    /// `1 / duration`, rounded to `f32` on the host.
    pub(crate) rate: f32,
    /// A weight (layers, fade_layer).
    pub(crate) weight: f32,
    /// A speed (`f64` bits).
    pub(crate) speed_lo: u32,
    /// High word of `speed`.
    pub(crate) speed_hi: u32,
    /// A repetition limit (with `SLOT_REPS`).
    pub(crate) repetitions_lo: u32,
    /// High word of `repetitions`.
    pub(crate) repetitions_hi: u32,
    /// A layer's mask, `NO_MASK` for none.
    pub(crate) mask: u32,
    /// A layer's number.
    pub(crate) layer: u32,
    /// An additive layer's reference time (`f64` bits).
    pub(crate) reference_lo: u32,
    /// High word of `reference`.
    pub(crate) reference_hi: u32,
    /// The reference time as the sampler takes it.
    pub(crate) reference_time: f32,
    /// Padding (80-byte records).
    pub(crate) _pad0: u32,
}

/// The head of a frame's command buffer (WGSL `PlaybackFrame`): the time
/// step and how many commands follow.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
pub(crate) struct GpuPlaybackFrame {
    /// The step in ticks (low word).
    pub(crate) dt_lo: u32,
    /// High word of the step.
    pub(crate) dt_hi: u32,
    /// Commands after the head.
    pub(crate) command_count: u32,
    /// Padding.
    pub(crate) _pad0: u32,
}

/// What one chunk's playback dispatches cover (WGSL `PlaybackParams`, a
/// uniform written once): its characters and the layout of the rows and
/// tables it writes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuPlaybackParams {
    /// The model's slot of the chunk's first character.
    pub(crate) first_character: u32,
    /// Characters of the chunk.
    pub(crate) character_count: u32,
    /// Action slots per character (the mixer's `actions_per_character`).
    pub(crate) actions: u32,
    /// Clips of the library.
    pub(crate) clip_count: u32,
    /// The first reference row: `character_count * actions`.
    pub(crate) reference_rows: u32,
    /// `1 / TICKS_PER_SECOND` rounded to `f32` (`cpu::playback::clock::clip_time`).
    pub(crate) tick_seconds: f32,
    /// `1 / FLICKS_PER_SECOND` rounded to `f32`.
    pub(crate) flick_seconds: f32,
    /// Whether the clips have a root node whose motion is reported (1) or
    /// not (0).
    pub(crate) has_root: u32,
    /// The linear part of the root's parent's rest world matrix (columns
    /// x, y, z; w unused): the root's motion into the model's space.
    pub(crate) root_linear: [[f32; 4]; 3],
    /// That matrix's rotation (x, y, z, w).
    pub(crate) root_turn: [f32; 4],
    /// Where the root's factor in each of the mixer's masks starts in
    /// `root_keys`.
    pub(crate) mask_offset: u32,
    /// How many masks have a factor there (a mask past them moves no
    /// root).
    pub(crate) mask_count: u32,
    /// Entries the events buffer holds.
    pub(crate) event_capacity: u32,
    /// Padding.
    pub(crate) _pad0: u32,
}

/// The most events one character reports in one frame on the GPU (the
/// markers crossed past them are counted in the events buffer's
/// `dropped`).
#[cfg(test)]
pub(crate) const EVENTS_PER_CHARACTER: u32 = 16;

/// [`GpuActionSlot::flags`]: the wrap's bits (`WrapMode` as `u32`).
pub(crate) const WRAP_BITS: u32 = 3;
/// Ping-pong: the current pass runs backwards.
pub(crate) const SLOT_BACKWARDS: u32 = 1 << 2;
/// The clock played its last repetition and holds at its end.
pub(crate) const SLOT_DONE: u32 = 1 << 3;
/// No step has moved the clock since it was set.
pub(crate) const SLOT_FRESH: u32 = 1 << 4;
/// The clock's next fold is a start backwards' free one (no pass).
pub(crate) const SLOT_FREE_FOLD: u32 = 1 << 5;
/// It reached the end it moves towards, or its last repetition.
pub(crate) const SLOT_FINISHED: u32 = 1 << 6;
/// Its weight is fading (`fade_*`).
pub(crate) const SLOT_FADING: u32 = 1 << 7;
/// It has a repetition limit (`repetitions`).
pub(crate) const SLOT_REPS: u32 = 1 << 8;
/// A layer (`layer`), not a base action.
pub(crate) const SLOT_LAYER: u32 = 1 << 9;
/// An override layer.
pub(crate) const SLOT_OVERRIDES: u32 = 1 << 10;
/// An additive layer (`reference`).
pub(crate) const SLOT_ADDITIVE: u32 = 1 << 11;
/// A kept-settings entry holds a clip's own wrap and repetitions.
pub(crate) const KEPT_SET: u32 = 1 << 12;
/// [`GpuCharacter::flags`]: paused.
pub(crate) const CHARACTER_PAUSED: u32 = 1 << 13;

/// `u32`s per entry of the kept-settings table (per character and clip:
/// flags, repetitions low and high word).
pub(crate) const KEPT_WORDS: u32 = 3;

/// [`GpuPlaybackCommand::kind`]: `Player::play`.
pub(crate) const CMD_PLAY: u32 = 0;
/// `Player::crossfade`.
pub(crate) const CMD_CROSSFADE: u32 = 1;
/// `Player::crossfade_at` (`time`).
pub(crate) const CMD_CROSSFADE_AT: u32 = 2;
/// `Player::fade_in`.
pub(crate) const CMD_FADE_IN: u32 = 3;
/// `Player::fade_out`.
pub(crate) const CMD_FADE_OUT: u32 = 4;
/// `Player::set_speed`.
pub(crate) const CMD_SPEED: u32 = 5;
/// `Player::set_paused` (`CHARACTER_PAUSED` in `flags`).
pub(crate) const CMD_PAUSE: u32 = 6;
/// `Player::seek`.
pub(crate) const CMD_SEEK: u32 = 7;
/// `Player::set_wrap`.
pub(crate) const CMD_WRAP: u32 = 8;
/// `Player::set_clip_wrap`.
pub(crate) const CMD_CLIP_WRAP: u32 = 9;
/// `Player::set_repetitions`.
pub(crate) const CMD_REPETITIONS: u32 = 10;
/// `Player::set_clip_repetitions`.
pub(crate) const CMD_CLIP_REPETITIONS: u32 = 11;
/// `Player::add_layer`.
pub(crate) const CMD_ADD_LAYER: u32 = 12;
/// `Player::set_layer`.
pub(crate) const CMD_SET_LAYER: u32 = 13;
/// `Player::fade_layer`.
pub(crate) const CMD_FADE_LAYER: u32 = 14;
/// `Player::remove_layer`.
pub(crate) const CMD_REMOVE_LAYER: u32 = 15;
/// A character that came or went (crowd slots): at rest, speed 1, clips
/// on repeat with no limit, nothing kept.
pub(crate) const CMD_RESET: u32 = 16;
/// Sets a character's placement: its translation in `weight`, `rate`,
/// `reference_time` and its rotation (x, y, z, w) in `speed_lo`,
/// `speed_hi`, `repetitions_lo`, `repetitions_hi` (`f32` bits).
pub(crate) const CMD_PLACE: u32 = 17;

/// What applying a command did: applied.
pub(crate) const APPLIED: u32 = 0;
/// Refused: the table has no room (the layers fill it).
pub(crate) const REFUSED_FULL: u32 = 1;
/// Refused: the character has no such layer.
pub(crate) const REFUSED_NO_LAYER: u32 = 2;

/// A sampler row no action holds: the sampler skips it (a clip past the
/// clip table).
#[cfg(test)]
pub(crate) const NO_CLIP: u32 = u32::MAX;

/// The playback pass's workgroup size.
pub(crate) const PLAYBACK_WORKGROUP_SIZE: u32 = 64;

const _: () = assert!(size_of::<GpuCharacter>() == 32);
const _: () = assert!(size_of::<GpuPlaybackClip>() == 96);
const _: () = assert!(size_of::<GpuPlaybackParams>() == 112);
const _: () = assert!(size_of::<GpuActionSlot>() == 112);
const _: () = assert!(size_of::<GpuPlaybackCommand>() == 80);

/// The bindings of `shaders/playback.wgsl`, a module of its own (group 0).
pub(crate) const PLAYBACK_BINDINGS: [Binding; 15] = [
    binding(
        0,
        "playback_params",
        BindingKind::Uniform,
        size_of::<GpuPlaybackParams>(),
    ),
    binding(
        1,
        "frame",
        BindingKind::StorageRead,
        size_of::<GpuPlaybackFrame>() + size_of::<GpuPlaybackCommand>(),
    ),
    binding(
        2,
        "playback_clips",
        BindingKind::StorageRead,
        size_of::<GpuPlaybackClip>(),
    ),
    binding(
        3,
        "characters_state",
        BindingKind::StorageReadWrite,
        size_of::<GpuCharacter>(),
    ),
    binding(
        4,
        "slots",
        BindingKind::StorageReadWrite,
        size_of::<GpuActionSlot>(),
    ),
    binding(5, "kept", BindingKind::StorageReadWrite, 4),
    binding(6, "rows", BindingKind::StorageReadWrite, 16),
    binding(
        7,
        "mix_actions_out",
        BindingKind::StorageReadWrite,
        size_of::<super::GpuMixAction>(),
    ),
    binding(8, "ranges", BindingKind::StorageReadWrite, 8),
    binding(
        9,
        "root_tracks",
        BindingKind::StorageRead,
        size_of::<GpuRootTrack>(),
    ),
    binding(10, "root_keys", BindingKind::StorageRead, 4),
    binding(11, "markers", BindingKind::StorageRead, 8),
    binding(12, "motion", BindingKind::StorageReadWrite, 16),
    binding(13, "events", BindingKind::StorageReadWrite, 32),
    binding(14, "placements", BindingKind::StorageReadWrite, 16),
];

/// The bindings the command pass (`playback_commands_main`) uses.
pub(crate) const PLAYBACK_COMMANDS_USES: [u32; 8] = [0, 1, 2, 3, 4, 5, 13, 14];
/// The bindings the advance pass (`playback_main`) uses.
pub(crate) const PLAYBACK_USES: [u32; 13] = [0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13];
/// The bindings the placement pass (`placement_main`) uses.
pub(crate) const PLACEMENT_USES: [u32; 3] = [0, 12, 14];
