//! [`PlaybackError`]: a playback command or step the playback layer refuses.

use super::count;

/// Why a playback command or step was refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlaybackError {
    /// A clip index the library does not have
    /// (`Clips::clip_at`).
    #[error("clip {clip} is out of range (the library has {})", count(*.clip_count as u64, "clip"))]
    UnknownClip {
        /// The clip index asked for.
        clip: u32,
        /// Clips in the library.
        clip_count: usize,
    },
    /// A clip name the library does not have
    /// (`Clips::clip`).
    #[error("no clip is named {name:?} (the library has {})", count(*.clip_count as u64, "clip"))]
    NoClipNamed {
        /// The name asked for.
        name: String,
        /// Clips in the library.
        clip_count: usize,
    },
    /// Clips made from another library than a crowd model's, given to
    /// play that model's characters on the GPU (`playback::GpuPlayers`):
    /// not the same clips, names and durations.
    #[error("clips #{clips} are not the clips of model {model:?} (another library: clips, names or durations differ)")]
    ClipsOfOtherModel {
        /// The identity of the clips.
        clips: u64,
        /// The model's name.
        model: String,
    },
    /// A clip handle of another `Clips` than the
    /// player's: a clip of another model or library.
    #[error("character {character}, {command}: clip {clip} belongs to clips #{clips}, not to this player's clips #{own}")]
    ClipOfOtherLibrary {
        /// The player's character (`Player::with_character`).
        character: u32,
        /// The command.
        command: &'static str,
        /// The clip's index in its own library.
        clip: u32,
        /// The identity of the clip's `Clips`
        /// (`ClipsId::get`).
        clips: u64,
        /// The identity of the player's `Clips`.
        own: u64,
    },
    /// A time, time step, speed or weight that is NaN or infinite, or a
    /// negative time step or weight.
    #[error("character {character}, {command}: {what} {value} is not a finite number{}", if *.non_negative { " >= 0" } else { "" })]
    BadNumber {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
        /// What the number is (`"dt"`, `"speed"`, ...).
        what: &'static str,
        /// The number.
        value: f64,
        /// Whether it must also be `>= 0`.
        non_negative: bool,
    },
    /// A fade or crossfade of duration `<= 0` (or not finite).
    #[error("character {character}, {command}: duration {duration} is not > 0")]
    BadDuration {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
        /// The duration.
        duration: f64,
    },
    /// A layer this player does not have (removed, or another player's).
    #[error("character {character}, {command}: layer {layer} is not a layer of this player")]
    UnknownLayer {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
        /// The layer's index (`LayerId::index`).
        layer: u32,
    },
    /// A layer both additive and override.
    #[error("character {character}, {command}: a layer is additive or override, not both")]
    AdditiveOverride {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
    },
    /// An action that does not fit in the player's table
    /// (`Player::with_max_actions`): layers are never dropped to make
    /// room, and a layer or a `play` does not fit when the layers fill it.
    #[error("character {character}, {command}: the action table holds at most {}, its layers included", count(*.max, "action"))]
    TooManyActions {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
        /// The most actions the table holds.
        max: u32,
    },
    /// Root motion asked of a node the rig does not have.
    #[error("root motion: node {node} is out of range (the rig has {})", count(*.node_count as u64, "node"))]
    UnknownRoot {
        /// The node.
        node: u32,
        /// Nodes in the rig.
        node_count: usize,
    },
    /// A ground plane that cannot be found for
    /// `in_place`: an up axis that is zero or
    /// not finite, or a root whose parent's rest transform cannot be
    /// inverted (a zero scale).
    #[error("in place: node {node}: {reason}")]
    BadGround {
        /// The root node.
        node: u32,
        /// What is wrong.
        reason: &'static str,
    },
    /// A marker at a time that is NaN or infinite, or of a clip the
    /// library does not have.
    #[error("marker {name:?} of clip {clip} at {time}: {reason}")]
    BadMarker {
        /// The clip.
        clip: u32,
        /// The marker's time.
        time: f64,
        /// The marker's name.
        name: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// `Crowd::player` cannot make a player for a model of the crowd: one
    /// added without a mixer, or clips made from another library than the
    /// model's (other clip names or durations).
    #[error("crowd model {model} ({name:?}): no player of these clips: {reason}")]
    NoPlayerForModel {
        /// The model's index in the crowd.
        model: usize,
        /// The model's name.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A crowd character given to `Crowd::set_players` with a player that
    /// `Crowd::player` did not make for the character's model: another
    /// model's player (its clips are another library's, its table has
    /// another limit), one of another crowd, or one made by `Player::new`.
    #[error("crowd character {entry} (model {model} ({name:?}), slot {slot}): its player was made {player}, not by Crowd::player for this model")]
    PlayerOfOtherModel {
        /// Index of the character in the players given.
        entry: usize,
        /// The character's model (its index in the crowd).
        model: usize,
        /// The character's model's name.
        name: String,
        /// The character's slot.
        slot: u32,
        /// What the player was made for (`"for model 1 (\"fox\")"`,
        /// `"by Player::new"`).
        player: String,
    },
    /// A command of `GpuPlayers` alone given to a `Player`
    /// (`Command::SetPlacement`: a player has no placement).
    #[error("character {character}: {command} is a GpuPlayers command, not a Player's")]
    NotAPlayerCommand {
        /// The player's character (`Player::with_character`).
        character: u32,
        /// The command.
        command: &'static str,
    },
    /// A blend space that cannot be played (`Clips::add_blend_space`):
    /// no clip, a name taken, a clip of other clips or listed twice, a
    /// point that is not finite, a 1D point with a `y`, two clips at one
    /// point, a smoothing that is not a number `> 0`.
    #[error("blend space {space:?}{}: {reason}", clip.map(|c| format!(", clip {c}")).unwrap_or_default())]
    BadBlendSpace {
        /// The space's name.
        space: String,
        /// The clip at fault (its index), if one is.
        clip: Option<u32>,
        /// What is wrong.
        reason: String,
    },
    /// A blend space's parameters that are not finite, or two for a 1D
    /// space (`Command::SetBlendParams`).
    #[error("character {character}, set_blend_params: blend space {space:?}: {reason}")]
    BadBlendParams {
        /// The player's character.
        character: u32,
        /// The space's name.
        space: String,
        /// What is wrong.
        reason: String,
    },
    /// A blend space of other clips than the player's (or of none).
    #[error("character {character}, {command}: blend space {space} is not a blend space of this player's clips #{own}")]
    UnknownBlendSpace {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
        /// The space's index in its own clips.
        space: u32,
        /// The identity of the player's `Clips`.
        own: u64,
    },
    /// A command `GpuPlayers` does not take yet (blend spaces play on the
    /// CPU `Player` alone for now).
    #[error("character {character}: {command} is not played on the GPU yet (a Player plays it)")]
    NotOnGpu {
        /// The character (its model slot).
        character: u32,
        /// The command.
        command: &'static str,
    },
}
