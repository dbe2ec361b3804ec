//! What can go wrong between a spawned scene and its animation.

use std::path::PathBuf;

/// Why a [`GpuAnimationPlayer`](crate::GpuAnimationPlayer) does not
/// animate, or why one of its commands was refused. Reported in the log
/// and kept on the player ([`GpuAnimationPlayer::error`](crate::GpuAnimationPlayer::error)).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum GpuAnimationError {
    /// The scene's file (or a file of extra clips) could not be read or
    /// imported by keyframe-gpu.
    #[error("{path}: {message}")]
    Import {
        /// The file.
        path: PathBuf,
        /// keyframe-gpu's error.
        message: String,
    },
    /// The scene's file is not known: the scene was not loaded from a file
    /// and the player names none ([`GpuAnimationPlayer::with_source`](crate::GpuAnimationPlayer::with_source)).
    #[error("the scene's glTF file is unknown: name it with GpuAnimationPlayer::with_source")]
    UnknownSource,
    /// A command named a clip the model does not have.
    #[error("no clip named {0:?}")]
    UnknownClip(String),
    /// The spawned scene does not have the nodes of the file it came from.
    #[error("the spawned scene does not match its file: {0}")]
    SceneMismatch(String),
    /// The playback layer refused a command or a step.
    #[error("playback: {0}")]
    Playback(String),
}
