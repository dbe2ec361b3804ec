//! The GPU instance table: each [`Instance`]'s playback time mapped to
//! clip time on the host, in `f64`, then rounded once to `f32`.

use crate::error::{Error, Result};
use crate::layout::GpuInstance;
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;

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
    let durations = library.durations();
    out.clear();
    for (i, inst) in instances.iter().enumerate() {
        out.push({
            let duration = durations
                .get(inst.clip as usize)
                .ok_or(Error::ClipOutOfRange {
                    instance: i,
                    clip: inst.clip,
                    clip_count: durations.len(),
                })?;
            if !inst.time.is_finite() {
                return Err(Error::InstanceTimeNotFinite {
                    instance: i,
                    time: inst.time,
                });
            }
            GpuInstance {
                clip: inst.clip,
                time: inst.wrap.clip_time(inst.time, *duration),
                _pad0: 0,
                _pad1: 0,
            }
        });
    }
    Ok(())
}
