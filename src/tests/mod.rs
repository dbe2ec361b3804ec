//! The tests that reach the implementation's pieces: the layout structs
//! against naga's view of the shaders, the CPU twin's per-stage functions,
//! the skin stage, the instance resolution and the compressed format built
//! by hand. They were integration tests; they run inside the crate, where
//! those pieces stay private, through the same `keyframe_gpu::` paths (the
//! crate names itself so under `cfg(test)`).

mod blend_space;
mod blocks;
#[path = "../../tests/common/mod.rs"]
mod common;
#[cfg(feature = "gltf")]
mod gltf_accessor;
#[cfg(feature = "gltf")]
mod gltf_container;
#[cfg(feature = "gltf")]
mod gltf_pointer;
#[cfg(feature = "gltf")]
mod gltf_uri;
mod gpu_errors;
mod gpu_playback;
mod run_keys;
mod run_values;
mod target;

mod compressed;
mod cpu_reference;
pub(crate) mod facades;
mod gpu_vs_cpu;
mod hostile_instances;
mod key_lookup;
mod layout;
mod library_cache;
mod loss;
mod mixer;
mod plans;
mod playback;
mod skin_entries;
mod skinning;
mod stages;
pub(crate) mod twins;

use facades::GpuSampler;
use keyframe_gpu::tables::library::LibraryTables;
use keyframe_gpu::{AnimationLibrary, DeviceProfile, Plan, SamplerPlan};

/// A library's flat tables, as the tests read them: derived once per
/// library (and its clones) on each test thread and kept for the thread,
/// so that a test reads them as often as it likes.
pub(crate) trait Derived {
    /// The tables (`LibraryTables::of`).
    fn tables(&self) -> &'static LibraryTables;
    /// All key times, shared inputs stored once.
    fn times(&self) -> &'static [f32] {
        self.tables().times()
    }
    /// All key values, track after track.
    fn values(&self) -> &'static [f32] {
        self.tables().values()
    }
}

impl Derived for AnimationLibrary {
    fn tables(&self) -> &'static LibraryTables {
        thread_local! {
            static MADE: std::cell::RefCell<Vec<(AnimationLibrary, &'static LibraryTables)>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        MADE.with_borrow_mut(|made| {
            if let Some((_, t)) = made.iter().find(|(l, _)| l.same_data(self)) {
                return *t;
            }
            let tables: &'static LibraryTables =
                Box::leak(Box::new(LibraryTables::of(self).unwrap()));
            made.push((self.clone(), tables));
            tables
        })
    }
}

/// A sampler of `library` for up to `capacity` instances with `plan`,
/// built as an animator builds it: the plan for this device
/// (`Plan::sampling`), then `GpuSampler::from_plan`.
pub(crate) fn sampler_with(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &AnimationLibrary,
    capacity: u32,
    plan: SamplerPlan,
) -> keyframe_gpu::Result<GpuSampler> {
    let plan = Plan::sampling(library, capacity, &DeviceProfile::of(device), plan)?;
    GpuSampler::from_plan(device, queue, &plan)
}

/// [`sampler_with`] the plan the profile picks.
pub(crate) fn sampler(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    library: &AnimationLibrary,
    capacity: u32,
) -> keyframe_gpu::Result<GpuSampler> {
    sampler_with(device, queue, library, capacity, SamplerPlan::Auto)
}

/// The stored value of key `k` of `track` (the value element for
/// CUBICSPLINE), read from the track's own data: what sampling gives on a
/// key, before the first and after the last.
fn key_value(track: &keyframe_gpu::Track, k: usize) -> Vec<f32> {
    let w = track.width as usize;
    let e = match track.interpolation {
        keyframe_gpu::Interpolation::CubicSpline => 3 * k + 1,
        _ => k,
    };
    track.values[e * w..(e + 1) * w].to_vec()
}

/// The bits of `v`, for comparisons that must be exact (and tell `-0.0`
/// from `0.0`).
fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Absolute tolerance of a unit-quaternion component, compared up to sign.
const QUAT_TOL: f32 = 2e-5;

/// Relative tolerance of an interpolated component:
/// `|gpu - cpu| <= REL_TOL * max(1, |cpu|)`.
const REL_TOL: f32 = 1e-5;

/// Checks the GPU output `g` of `track` at clip time `t` against the CPU
/// twin's `c`: bit for bit for STEP and for times on or outside the keys
/// (the shader copies the stored value), rotations within [`QUAT_TOL`] up
/// to sign, every other component within [`REL_TOL`]. `here` names the
/// place in the failure messages.
fn assert_track_matches(track: &keyframe_gpu::Track, t: f32, g: &[f32], c: &[f32], here: &str) {
    let first = track.times[0];
    let last = track.times[track.times.len() - 1];
    let on_or_outside = t <= first || t >= last || track.times.contains(&t);
    if on_or_outside || track.interpolation == keyframe_gpu::Interpolation::Step {
        assert_eq!(bits(g), bits(c), "bit-exact expected: {here}");
    } else if track.property == keyframe_gpu::Property::Rotation {
        let d: f32 = g.iter().zip(c).map(|(a, b)| a * b).sum();
        let sign = if d < 0.0 { -1.0 } else { 1.0 };
        for k in 0..4 {
            assert!(
                (g[k] - sign * c[k]).abs() <= QUAT_TOL,
                "component {k}: {here}"
            );
        }
    } else {
        for k in 0..g.len() {
            assert!(
                (g[k] - c[k]).abs() <= REL_TOL * c[k].abs().max(1.0),
                "component {k}: {here}"
            );
        }
    }
}

/// Calls `check(i, row, j, track, g, c)` for track `j` of every instance
/// `i` of `instances` (`row`: the instance resolved), with that track's
/// slice of the GPU output `gpu` (`g`) and of the CPU twin's `cpu` (`c`).
fn each_track_output(
    lib: &keyframe_gpu::AnimationLibrary,
    instances: &[keyframe_gpu::Instance],
    gpu: &[f32],
    cpu: &[f32],
    mut check: impl FnMut(
        usize,
        &keyframe_gpu::layout::GpuInstance,
        usize,
        &keyframe_gpu::Track,
        &[f32],
        &[f32],
    ),
) {
    let stride = lib.output_stride() as usize;
    let resolved = crate::tables::instance::resolve_instances(lib, instances).unwrap();
    for (i, row) in resolved.iter().enumerate() {
        let clip = &lib.clips()[row.clip as usize];
        for (j, track) in clip.tracks.iter().enumerate() {
            let (off, width) = lib.track_output(row.clip, j as u32).unwrap();
            let s = i * stride + off as usize;
            let g = &gpu[s..s + width as usize];
            let c = &cpu[s..s + width as usize];
            check(i, row, j, track, g, c);
        }
    }
}
