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
    let skin = s.skin;
    let (li, lk) = (s.long_instances, s.long_keys);
    let durations = |clips: &[Clip]| clips.iter().map(Clip::duration).collect::<Vec<_>>();
    vec![
        (
            "crowd_rot",
            Box::new(move || {
                let mut rng = Rng::new(1);
                let clips = data::rotation_clips(&mut rng, 16, 64, 64, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "crowd_rot",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "16 clips x 64 LINEAR rotation tracks x 64 irregular keys",
                }
            }),
        ),
        (
            "crowd_mixed",
            Box::new(move || {
                let mut rng = Rng::new(2);
                let clips = data::mixed_clips(&mut rng, 16, 24, 60);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "crowd_mixed",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "16 clips x 24 x (T, R, S), STEP/LINEAR/CUBICSPLINE, 60 irregular keys",
                }
            }),
        ),
        (
            "crowd_coherent",
            Box::new(move || {
                let mut rng = Rng::new(1);
                let clips = data::rotation_clips(&mut rng, 16, 64, 64, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Repeat);
                Workload {
                    name: "crowd_coherent",
                    clips,
                    instances,
                    rig: None,
                    coherent: true,
                    note: "crowd_rot's data, every instance advancing 1/60 s per frame (repeat)",
                }
            }),
        ),
        (
            "long_keys",
            Box::new(move || {
                let mut rng = Rng::new(4);
                let clips = data::rotation_clips(&mut rng, 1, 64, lk, Spacing::Uniform30);
                let instances =
                    data::random_instances(&mut rng, li, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "long_keys",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "1 clip x 64 LINEAR rotation tracks, keys baked at 30 fps (k/30 in f32): equal in every track, so the library stores them once",
                }
            }),
        ),
        (
            "long_keys_irregular",
            Box::new(move || {
                let mut rng = Rng::new(5);
                let clips = data::rotation_clips(&mut rng, 1, 64, lk, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, li, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "long_keys_irregular",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "as long_keys with irregular key intervals, different in every track (no direct indexing, no sharing)",
                }
            }),
        ),
        (
            "morph",
            Box::new(move || {
                let mut rng = Rng::new(6);
                let clips = data::morph_clips(&mut rng, 16, 64, 32);
                let instances =
                    data::random_instances(&mut rng, crowd, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "morph",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "16 clips x 1 LINEAR weights track of 64 targets x 32 irregular keys",
                }
            }),
        ),
        (
            "skin_chain",
            Box::new(move || {
                let mut rng = Rng::new(8);
                let (rig, clips) = data::skin_chain(&mut rng, 4, 64, 60);
                let instances =
                    data::random_instances(&mut rng, skin, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "skin_chain",
                    clips,
                    instances,
                    rig: Some(rig),
                    coherent: false,
                    note: "64-joint chain, 4 clips x 64 LINEAR rotation tracks x 60 keys; \
                           sampling + local pose, hierarchy and joint matrices",
                }
            }),
        ),
        (
            "tiny",
            Box::new(move || {
                let mut rng = Rng::new(7);
                let clips = data::rotation_clips(&mut rng, 1, 1, 64, Spacing::Irregular);
                let instances =
                    data::random_instances(&mut rng, 1, &durations(&clips), WrapMode::Clamp);
                Workload {
                    name: "tiny",
                    clips,
                    instances,
                    rig: None,
                    coherent: false,
                    note: "1 instance x 1 rotation track (per-frame overhead)",
                }
            }),
        ),
    ]
}
