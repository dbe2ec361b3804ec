//! [`PlaybackError`]: a playback command or step the playback layer refuses.

/// Why a playback command or step was refused. Nothing changed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlaybackError {
    /// A clip the library does not have.
    #[error("character {character}, {command}: clip {clip} is out of range (the library has {clip_count} clips)")]
    UnknownClip {
        /// The player's character (`Player::with_character`).
        character: u32,
        /// The command.
        command: &'static str,
        /// The clip named.
        clip: u32,
        /// Clips in the library.
        clip_count: usize,
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
    /// A layer this player does not have.
    #[error("character {character}, {command}: layer {layer} is not a layer of this player")]
    UnknownLayer {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
        /// The layer.
        layer: u32,
    },
    /// An action that does not fit in the player's table
    /// (`Player::with_max_actions`): layers are never dropped to make
    /// room, and a layer or a `play` does not fit when the layers fill it.
    #[error("character {character}, {command}: the action table holds at most {max} actions, its layers included")]
    TooManyActions {
        /// The player's character.
        character: u32,
        /// The command.
        command: &'static str,
        /// The most actions the table holds.
        max: u32,
    },
    /// Root motion asked of a node the rig does not have.
    #[error("root motion: node {node} is out of range (the rig has {node_count} nodes)")]
    UnknownRoot {
        /// The node.
        node: u32,
        /// Nodes in the rig.
        node_count: usize,
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
}
