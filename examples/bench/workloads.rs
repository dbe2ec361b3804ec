//! The named workloads and their sizes (data built by `data.rs`).

use keyframe_gpu::Rig;
use keyframe_gpu::{Clip, Instance, WrapMode};

use crate::data::{self, Rng, Spacing};

/// A named workload: its library and its instances.
pub struct Workload {
    pub name: &'static str,
    pub clips: Vec<Clip>,
    pub instances: Vec<Instance>,
    /// Advance every instance by 1/60 s per frame.
    pub coherent: bool,
    pub note: &'static str,
    /// For `skin_chain`: the rig whose pose and joint passes follow the
    /// sampling pass.
    pub rig: Option<Rig>,
}

struct Sizes {
    crowd: usize,
    skin: usize,
    long_instances: usize,
    long_keys: usize,
}

/// A workload's name and how to build it (built only when it runs).
pub type Builder = (&'static str, Box<dyn Fn() -> Workload>);

/// What a workload is, beyond its clips: instances at random times
/// (`wrap`), drawn after the clips from the same generator (`seed`).
#[derive(Clone, Copy)]
struct Spec {
    name: &'static str,
    note: &'static str,
    seed: u64,
    instances: usize,
    wrap: WrapMode,
    coherent: bool,
}

impl Spec {
    /// A workload of `instances` clamped instances, not advancing.
    fn new(name: &'static str, seed: u64, instances: usize, note: &'static str) -> Spec {
        Spec {
            name,
            note,
            seed,
            instances,
            wrap: WrapMode::Clamp,
            coherent: false,
        }
    }

    /// The builder of this workload, its clips (and rig) made by `make`.
    fn build(self, make: impl Fn(&mut Rng) -> (Vec<Clip>, Option<Rig>) + 'static) -> Builder {
        let build = move || {
            let mut rng = Rng::new(self.seed);
            let (clips, rig) = make(&mut rng);
            let durations: Vec<f32> = clips.iter().map(Clip::duration).collect();
            let instances = data::random_instances(&mut rng, self.instances, &durations, self.wrap);
            Workload {
                name: self.name,
                clips,
                instances,
                coherent: self.coherent,
                note: self.note,
                rig,
            }
        };
        (self.name, Box::new(build))
    }
}

pub fn workloads(quick: bool) -> Vec<Builder> {
    let s = if quick {
        Sizes {
            crowd: 2_000,
            skin: 300,
            long_instances: 256,
            long_keys: 10_000,
        }
    } else {
        Sizes {
            crowd: 10_000,
            skin: 1_000,
            long_instances: 256,
            long_keys: 100_000,
        }
    };
    let crowd = s.crowd;
    let (li, lk) = (s.long_instances, s.long_keys);
    let crowd_rot = |rng: &mut Rng| {
        let clips = data::rotation_clips(rng, 16, 64, 64, Spacing::Irregular);
        (clips, None)
    };
    vec![
        Spec::new(
            "crowd_rot",
            1,
            crowd,
            "16 clips x 64 LINEAR rotation tracks x 64 irregular keys",
        )
        .build(crowd_rot),
        Spec::new(
            "crowd_mixed",
            2,
            crowd,
            "16 clips x 24 x (T, R, S), STEP/LINEAR/CUBICSPLINE, 60 irregular keys",
        )
        .build(|rng| (data::mixed_clips(rng, 16, 24, 60), None)),
        Spec {
            wrap: WrapMode::Repeat,
            coherent: true,
            ..Spec::new(
                "crowd_coherent",
                1,
                crowd,
                "crowd_rot's data, every instance advancing 1/60 s per frame (repeat)",
            )
        }
        .build(crowd_rot),
        Spec::new(
            "long_keys",
            4,
            li,
            "1 clip x 64 LINEAR rotation tracks, keys baked at 30 fps (k/30 in f32): equal in every track, so the library stores them once",
        )
        .build(move |rng| {
            let clips = data::rotation_clips(rng, 1, 64, lk, Spacing::Uniform30);
            (clips, None)
        }),
        Spec::new(
            "long_keys_irregular",
            5,
            li,
            "as long_keys with irregular key intervals, different in every track (no direct indexing, no sharing)",
        )
        .build(move |rng| {
            let clips = data::rotation_clips(rng, 1, 64, lk, Spacing::Irregular);
            (clips, None)
        }),
        Spec::new(
            "morph",
            6,
            crowd,
            "16 clips x 1 LINEAR weights track of 64 targets x 32 irregular keys",
        )
        .build(|rng| (data::morph_clips(rng, 16, 64, 32), None)),
        Spec::new(
            "skin_chain",
            8,
            s.skin,
            "64-joint chain, 4 clips x 64 LINEAR rotation tracks x 60 keys; \
             sampling + local pose, hierarchy and joint matrices",
        )
        .build(|rng| {
            let (rig, clips) = data::skin_chain(rng, 4, 64, 60);
            (clips, Some(rig))
        }),
        Spec::new(
            "tiny",
            7,
            1,
            "1 instance x 1 rotation track (per-frame overhead)",
        )
        .build(|rng| {
            let clips = data::rotation_clips(rng, 1, 1, 64, Spacing::Irregular);
            (clips, None)
        }),
    ]
}
