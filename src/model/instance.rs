//! [`Instance`]: what plays, from where, and how it wraps (resolved on the
//! host into the clip-local rows of the GPU instance table by
//! `tables::instance`).

use crate::model::track::WrapMode;

/// One animated instance: a clip of the library played at its own time.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Instance {
    /// Index of the clip in the [`AnimationLibrary`](crate::AnimationLibrary).
    pub clip: u32,
    /// Playback time in seconds. Kept in `f64` so that wrap modes stay exact
    /// far from zero; mapped to clip-local `f32` by its [`WrapMode`].
    pub time: f64,
    /// How `time` maps to clip time.
    pub wrap: WrapMode,
}

impl Instance {
    /// An instance of `clip` at `time` with [`WrapMode::Clamp`].
    #[must_use]
    pub fn new(clip: u32, time: f64) -> Self {
        Instance {
            clip,
            time,
            wrap: WrapMode::Clamp,
        }
    }

    /// The same instance with another wrap mode.
    #[must_use]
    pub fn with_wrap(self, wrap: WrapMode) -> Self {
        Instance { wrap, ..self }
    }
}
