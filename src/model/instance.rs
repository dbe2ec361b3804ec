//! [`Instance`]: what plays, from where, and how it wraps; resolved on the
//! host into the clip-local rows of the GPU instance table.

use crate::error::{Error, Result};
use crate::layout::GpuInstance;
use crate::model::library::AnimationLibrary;
use crate::model::track::WrapMode;

/// One animated instance: a clip of the library played at its own time.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Instance {
    /// Index of the clip in the [`AnimationLibrary`].
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

/// Checks `instances` against `library` and maps each playback time to clip
/// time (in `f64`, then rounded once to `f32`).
///
/// # Errors
/// [`Error::ClipOutOfRange`] or [`Error::InstanceTimeNotFinite`], naming the
/// first bad instance. Nothing is returned for the others.
pub(crate) fn resolve_instances(
    library: &AnimationLibrary,
    instances: &[Instance],
) -> Result<Vec<GpuInstance>> {
    let mut out = Vec::with_capacity(instances.len());
    resolve_instances_into(library, instances, &mut out)?;
    Ok(out)
}

/// `resolve_instances` into a caller's vector (cleared first), so that a
/// per-frame caller allocates nothing in steady state. On error `out` holds
/// an unspecified prefix.
///
/// # Errors
/// [`Error::ClipOutOfRange`] or [`Error::InstanceTimeNotFinite`], naming the
/// first bad instance.
pub fn resolve_instances_into(
    library: &AnimationLibrary,
    instances: &[Instance],
    out: &mut Vec<GpuInstance>,
) -> Result<()> {
    let clips = library.clip_table();
    out.clear();
    for (i, inst) in instances.iter().enumerate() {
        out.push({
            let clip = clips.get(inst.clip as usize).ok_or(Error::ClipOutOfRange {
                instance: i,
                clip: inst.clip,
                clip_count: clips.len(),
            })?;
            if !inst.time.is_finite() {
                return Err(Error::InstanceTimeNotFinite {
                    instance: i,
                    time: inst.time,
                });
            }
            GpuInstance {
                clip: inst.clip,
                time: inst.wrap.clip_time(inst.time, clip.duration),
                _pad0: 0,
                _pad1: 0,
            }
        });
    }
    Ok(())
}
