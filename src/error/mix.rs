//! [`MixError`]: an action table, mask or mixer the mixer refuses.

/// Why a mixer or one frame of actions was refused. Action errors name
/// the character and the action (its index among the character's).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MixError {
    /// An action names a clip the library does not have.
    #[error("character {character}, action {action}: clip {clip} is out of range (the library has {})", super::count(*.clip_count as u64, "clip"))]
    UnknownClip {
        /// The character.
        character: usize,
        /// The action, among the character's.
        action: usize,
        /// The clip it names.
        clip: u32,
        /// Clips in the library.
        clip_count: usize,
    },
    /// An action names a mask the mixer does not have.
    #[error("character {character}, action {action}: mask {mask} is out of range (the mixer has {})", super::count(*.mask_count as u64, "mask"))]
    UnknownMask {
        /// The character.
        character: usize,
        /// The action, among the character's.
        action: usize,
        /// The mask it names.
        mask: u32,
        /// Masks of the mixer.
        mask_count: usize,
    },
    /// An action's weight is negative, NaN or infinite.
    #[error("character {character}, action {action}: weight {weight} is not a finite number >= 0")]
    BadWeight {
        /// The character.
        character: usize,
        /// The action, among the character's.
        action: usize,
        /// The weight.
        weight: f32,
    },
    /// An action's time (or additive reference time) is NaN or infinite.
    #[error("character {character}, action {action}: {field} {time} is not finite")]
    TimeNotFinite {
        /// The character.
        character: usize,
        /// The action, among the character's.
        action: usize,
        /// `"time"` or `"reference time"`.
        field: &'static str,
        /// The time.
        time: f64,
    },
    /// An action both additive (a reference time) and override.
    #[error("character {character}, action {action}: an action is additive or override, not both")]
    AdditiveOverride {
        /// The character.
        character: usize,
        /// The action, among the character's.
        action: usize,
    },
    /// A character has more actions than the mixer was created for.
    #[error("character {character}: {}, but the mixer was created for at most {} per character", super::count(*.count, "action"), super::count(*.capacity, "action"))]
    TooManyActions {
        /// The character.
        character: usize,
        /// Its action count.
        count: u32,
        /// The mixer's actions per character.
        capacity: u32,
    },
    /// More characters than the mixer was created for.
    #[error("{}, but the mixer was created for at most {}", super::count(*.count as u64, "character"), super::count(*.capacity, "character"))]
    TooManyCharacters {
        /// Characters given.
        count: usize,
        /// The mixer's capacity.
        capacity: u32,
    },
    /// The per-character counts do not add up to the number of actions.
    #[error("the characters' action counts add up to {counted}, but {} {} given", super::count(*.actions as u64, "action"), if *.actions == 1 { "was" } else { "were" })]
    CountMismatch {
        /// The sum of the counts.
        counted: u64,
        /// `actions.len()`.
        actions: usize,
    },
    /// A mixer asked for 0 or more than `MAX_ACTIONS` actions per
    /// character.
    #[error("{} per character: a mixer takes 1 to {max}", super::count(*.asked, "action"))]
    ActionCapacity {
        /// The capacity asked for.
        asked: u32,
        /// `MAX_ACTIONS`.
        max: u32,
    },
    /// A mask names a node the rig does not have.
    #[error("mask: node {node} is out of range (the rig has {})", super::count(*.node_count as u64, "node"))]
    MaskNodeOutOfRange {
        /// The node.
        node: u32,
        /// Nodes in the rig.
        node_count: usize,
    },
    /// A mask factor is not in `[0, 1]`.
    #[error("mask: factor {factor} of node {node} is not in [0, 1]")]
    MaskFactor {
        /// The node (`u32::MAX` for a fill value).
        node: u32,
        /// The factor.
        factor: f32,
    },
    /// A mask has another length than the rig has nodes.
    #[error("mask: {} for a rig of {}", super::count(*.len as u64, "factor"), super::count(*.node_count as u64, "node"))]
    MaskLength {
        /// Factors given.
        len: usize,
        /// Nodes in the rig.
        node_count: usize,
    },
    /// A mask made for another rig than the mixer's.
    #[error("mask {mask} was made for another rig than the mixer's")]
    MaskOfOtherRig {
        /// The mask's index.
        mask: usize,
    },
    /// Actions were given to an animator created without a mixer.
    #[error("this animator has no mixer: create it with Animator::with_mixer to set actions")]
    NoMixer,
}
