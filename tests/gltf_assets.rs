//! Real and generated glTF assets through the importer, sampled on the GPU
//! and checked against the CPU reference; the shared sample assets also
//! decoded by the `gltf` crate's own readers as an independent check.
//! The shared assets live in `../shared/assets`; tests that need them print
//! a SKIP line when the folder is absent.
#![cfg(feature = "gltf")]

mod common;
#[path = "common/gltf_builder.rs"]
mod gltf_builder;

use std::path::{Path, PathBuf};

use common::track_diff as compare;
use keyframe_gpu::{cpu, gltf, AnimationLibrary, Animator, Instance, Property};

/// GPU vs CPU tolerance: 2e-5 absolute (rotations up to sign). Slerp and
/// cubic results go through sin/acos and a normalization on both sides;
/// the project's stated bound for unit-quaternion components is 2e-5.
const TOL: f32 = 2e-5;

fn shared_assets(test: &str) -> Option<Vec<PathBuf>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!("SKIP {test}: {} is absent", dir.display());
        return None;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("gltf") || e.eq_ignore_ascii_case("glb"))
        })
        .collect();
    files.sort();
    if files.is_empty() {
        println!("SKIP {test}: no .gltf/.glb in {}", dir.display());
        return None;
    }
    Some(files)
}

/// Times that cover every case: before the first key, every key, every
/// midpoint, after the last key.
fn probe_times(library: &AnimationLibrary, clip: usize) -> Vec<f64> {
    let c = &library.clips()[clip];
    let mut keys: Vec<f32> = c
        .tracks
        .iter()
        .flat_map(|t| t.times.iter().copied())
        .collect();
    keys.sort_by(f32::total_cmp);
    keys.dedup();
    let mut times = vec![f64::from(keys[0]) - 0.25];
    for (i, &k) in keys.iter().enumerate() {
        if i > 0 {
            times.push((f64::from(keys[i - 1]) + f64::from(k)) / 2.0);
            times.push(f64::from(keys[i - 1]) * 0.25 + f64::from(k) * 0.75);
        }
        times.push(f64::from(k));
    }
    times.push(f64::from(c.duration()) + 0.25);
    times
}

/// Samples every clip at its probe times on the GPU and the CPU; returns
/// the largest error.
fn gpu_vs_cpu(h: &common::headless::Headless, library: &AnimationLibrary, what: &str) -> f32 {
    let mut instances = Vec::new();
    for c in 0..library.clips().len() {
        for t in probe_times(library, c) {
            instances.push(Instance::new(c as u32, t));
        }
    }
    let mut sampler =
        Animator::sampler_only(&h.device, &h.queue, library, instances.len() as u32).unwrap();
    let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
    let cpu = cpu::sample(library, &instances).unwrap();
    assert_eq!(gpu.len(), cpu.len());
    let clips: Vec<u32> = instances.iter().map(|i| i.clip).collect();
    let report = compare::compare(library, &clips, &gpu, &cpu);
    // Every track of every clip was compared.
    let tracks: usize = library.clips().iter().map(|c| c.tracks.len()).sum();
    assert_eq!(report.tracks.len(), tracks, "{what}");
    let err = report.max_abs_err();
    println!(
        "{what}: {} clips, {} samples, max_abs_err={err:e}",
        library.clips().len(),
        instances.len()
    );
    assert!(err <= TOL, "{what}: max_abs_err {err} > {TOL}");
    err
}

#[test]
fn shared_assets_gpu_matches_cpu() {
    let Some(files) = shared_assets("shared_assets_gpu_matches_cpu") else {
        return;
    };
    let Some(h) = common::gpu("shared_assets_gpu_matches_cpu") else {
        return;
    };
    for f in files {
        let imported = gltf::load(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        gpu_vs_cpu(&h, &imported.library, &f.display().to_string());
    }
}

/// Compressing a shared asset never makes it larger: bound to its rig at
/// the default bound, every track takes at most the bytes of its raw
/// values and the library at most the uncompressed one's (ratio at least
/// 1), and the report's largest error is within the bound.
#[test]
fn compressing_a_shared_asset_never_makes_it_larger() {
    let Some(files) = shared_assets("compressing_a_shared_asset_never_makes_it_larger") else {
        return;
    };
    for f in files {
        let imported = gltf::load(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let rig = keyframe_gpu::Rig::from_document(&imported.document).unwrap();
        let raw = imported.library.bind(&rig).unwrap();
        let (lossy, report) = raw
            .compress(&keyframe_gpu::compress::CompressOptions::default())
            .unwrap();
        let name = f.display();
        assert_eq!(report.uncompressed_bytes, raw.library().stored_bytes());
        assert_eq!(report.compressed_bytes, lossy.library().stored_bytes());
        assert!(
            report.compressed_bytes <= report.uncompressed_bytes && report.ratio() >= 1.0,
            "{name}: {} bytes compressed from {} (ratio {})",
            report.compressed_bytes,
            report.uncompressed_bytes,
            report.ratio()
        );
        for (c, clip) in raw.library().clips().iter().enumerate() {
            for (t, (track, tr)) in clip.tracks.iter().zip(&report.tracks[c]).enumerate() {
                assert_eq!(tr.raw_bytes, 4 * track.values.len() as u64);
                assert!(
                    tr.bytes <= tr.raw_bytes,
                    "{name} clip {c} track {t}: {tr:?}"
                );
            }
        }
        assert!(report.max_error <= report.bound, "{name}: {report:?}");
        println!("{name}: ratio {:.2}", report.ratio());
    }
}

#[test]
fn generated_assets_gpu_matches_cpu() {
    let Some(h) = common::gpu("generated_assets_gpu_matches_cpu") else {
        return;
    };
    let (b, _) = gltf_builder::full_asset();
    let imported = gltf::from_slice(&b.to_glb(), None).unwrap();
    gpu_vs_cpu(&h, &imported.library, "full_asset");

    let mut b = gltf_builder::Builder::new();
    let mesh = b.mesh_with_targets(64);
    let n = b.node(Some(mesh));
    let input = b.accessor_f32(&[0.5, 1.0, 3.0], "SCALAR");
    let w: Vec<f32> = (0..3 * 3 * 64)
        .map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0)
        .collect();
    let out = b.accessor_f32(&w, "SCALAR");
    b.animation(
        "morph64",
        &[(input, out, "CUBICSPLINE")],
        &[(0, n, "weights")],
    );
    let imported = gltf::from_slice(&b.to_glb(), None).unwrap();
    gpu_vs_cpu(&h, &imported.library, "morph64");
}

/// The `gltf` crate decodes the same channels (its own accessor readers,
/// its own normalization code): times must agree exactly, values to 1e-6
/// (it multiplies by 1/127 where we divide by 127).
#[test]
fn shared_assets_decode_like_the_gltf_crate() {
    let Some(files) = shared_assets("shared_assets_decode_like_the_gltf_crate") else {
        return;
    };
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        let reference = ::gltf::Gltf::from_slice(&bytes).unwrap();
        let ours = gltf::load(&f).unwrap();
        let buffers = &ours.document.buffers;
        assert_eq!(
            reference.animations().count(),
            ours.library.clips().len(),
            "{}",
            f.display()
        );
        let mut channels = 0;
        for (a, anim) in reference.animations().enumerate() {
            let clip = &ours.library.clips()[a];
            assert_eq!(anim.channels().count(), clip.tracks.len());
            for (c, ch) in anim.channels().enumerate() {
                let track = &clip.tracks[c];
                let what = format!("{} animation {a} channel {c}", f.display());
                assert_eq!(track.node as usize, ch.target().node().index(), "{what}");
                assert_eq!(
                    ours.animations[a].channels[c].input,
                    ch.sampler().input().index()
                );
                let reader = ch.reader(|b| buffers.get(b.index()).map(Vec::as_slice));
                let times: Vec<f32> = reader.read_inputs().unwrap().collect();
                assert_eq!(&track.times[..], &times[..], "{what}");
                use ::gltf::animation::util::ReadOutputs;
                let (property, values): (Property, Vec<f32>) = match reader.read_outputs().unwrap()
                {
                    ReadOutputs::Translations(it) => {
                        (Property::Translation, it.flatten().collect())
                    }
                    ReadOutputs::Rotations(r) => {
                        (Property::Rotation, r.into_f32().flatten().collect())
                    }
                    ReadOutputs::Scales(it) => (Property::Scale, it.flatten().collect()),
                    ReadOutputs::MorphTargetWeights(w) => {
                        (Property::Weights, w.into_f32().collect())
                    }
                };
                assert_eq!(track.property, property, "{what}");
                assert_eq!(track.values.len(), values.len(), "{what}");
                for (i, (x, y)) in track.values.iter().zip(&values).enumerate() {
                    assert!((x - y).abs() <= 1e-6, "{what} value {i}: {x} vs {y}");
                }
                channels += 1;
            }
        }
        println!(
            "{}: {channels} channels agree with the gltf crate",
            f.display()
        );
        assert!(channels > 0);
    }
}

/// AnimatedTriangle's keys, as listed in the Khronos sample: a quarter turn
/// about z every 0.25 s, stored with 0.707 for sqrt(1/2).
#[test]
fn animated_triangle_keys() {
    let Some(files) = shared_assets("animated_triangle_keys") else {
        return;
    };
    let Some(f) = files.iter().find(|f| f.ends_with("AnimatedTriangle.gltf")) else {
        println!("SKIP animated_triangle_keys: AnimatedTriangle.gltf absent");
        return;
    };
    let imported = gltf::load(f).unwrap();
    let t = &imported.library.clips()[0].tracks[0];
    assert_eq!(&t.times[..], &[0.0, 0.25, 0.5, 0.75, 1.0]);
    assert_eq!(t.property, Property::Rotation);
    #[rustfmt::skip]
    let want = [
        0.0, 0.0, 0.0, 1.0,
        0.0, 0.0, 0.707, 0.707,
        0.0, 0.0, 1.0, 0.0,
        0.0, 0.0, 0.707, -0.707,
        0.0, 0.0, 0.0, 1.0,
    ];
    assert_eq!(t.values, want);
}
