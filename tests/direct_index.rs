//! Direct key indexing of uniformly spaced tracks (`GpuTrack::key_scale`):
//! which tracks get it, and that it finds the same key as a plain linear
//! scan, on the CPU twin and on the GPU, at times on keys, one ulp either
//! side of keys, between keys, before and after.
//!
//! The expected key comes from `oracle`, a linear scan written here from
//! the definition (the largest k with t_k <= T, 0 before the first key),
//! not from the code under test. The GPU check uses STEP tracks whose value
//! at key k is k, so the output is the found key itself, compared exactly.

mod common;

use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, GpuSampler, Instance, Interpolation, Property, Track,
};

fn oracle(times: &[f32], t: f32) -> u32 {
    // The number of keys at or before t, minus one (0 when there is none),
    // with the standard library's partition point.
    times.partition_point(|&x| x <= t).saturating_sub(1) as u32
}

fn up(x: f32) -> f32 {
    if x == 0.0 {
        f32::from_bits(1)
    } else if x > 0.0 {
        f32::from_bits(x.to_bits() + 1)
    } else {
        f32::from_bits(x.to_bits() - 1)
    }
}

fn down(x: f32) -> f32 {
    -up(-x)
}

/// Query times: every key, one ulp either side, midpoints, quarter points,
/// and outside the range.
fn queries(times: &[f32]) -> Vec<f32> {
    let mut q = vec![times[0] - 1.0, *times.last().unwrap() + 1.0];
    // Long tracks: every 97th interval, plus the first and last few.
    let step = if times.len() > 10_000 { 97 } else { 1 };
    for (i, w) in times.windows(2).enumerate() {
        if i % step != 0 && i + 5 < times.len() {
            continue;
        }
        q.extend([w[0], up(w[0]), down(w[0]), 0.5 * (w[0] + w[1])]);
        q.push(w[0] + 0.25 * (w[1] - w[0]));
        q.push(w[0] + 0.75 * (w[1] - w[0]));
    }
    let l = *times.last().unwrap();
    q.extend([l, up(l), down(l)]);
    q
}

fn step_track(times: Vec<f32>) -> Track {
    let n = times.len();
    let values = (0..n).flat_map(|k| [k as f32, 0.0, 0.0]).collect();
    Track::new(0, Property::Translation, Interpolation::Step, times, values)
}

fn cases() -> Vec<(&'static str, Vec<f32>, bool)> {
    let mut jitter_small = Vec::new();
    let mut jitter_big = Vec::new();
    let mut x = 12345u32;
    for k in 0..200 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let r = (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5; // [-0.5, 0.5)
        jitter_small.push((k as f32 + 0.5 * r) / 10.0);
        jitter_big.push(if k == 100 {
            100.9 / 10.0
        } else {
            k as f32 / 10.0
        });
    }
    vec![
        ("3 keys", vec![0.0, 1.0, 2.0], true),
        ("k/30, 64", (0..64).map(|k| k as f32 / 30.0).collect(), true),
        (
            "k/30, 100000",
            (0..100_000).map(|k| k as f32 / 30.0).collect(),
            true,
        ),
        (
            "k/24 from 5",
            (0..1000).map(|k| 5.0 + k as f32 / 24.0).collect(),
            true,
        ),
        (
            "negative start",
            (0..500).map(|k| -3.0 + k as f32 * 0.01).collect(),
            true,
        ),
        // +-0.25 of a key interval: still indexed directly.
        ("jitter 0.25", jitter_small, true),
        // One key 0.9 of an interval late: too far, searched.
        ("one key late", jitter_big, false),
        ("2 keys", vec![0.0, 1.0], false),
        (
            "doubling",
            (0..20).map(|k| (1u32 << k) as f32).collect(),
            false,
        ),
    ]
}

#[test]
fn uniform_tracks_get_a_key_scale_and_others_do_not() {
    for (name, times, direct) in cases() {
        let lib =
            AnimationLibrary::new(vec![Clip::new(name, vec![step_track(times.clone())])]).unwrap();
        let scale = lib.tracks()[0].key_scale;
        assert_eq!(scale > 0.0, direct, "{name}: key_scale {scale}");
        if direct {
            // Keys per second: (n - 1) / (t_last - t_0).
            let want = (times.len() - 1) as f64
                / (f64::from(*times.last().unwrap()) - f64::from(times[0]));
            assert!(
                (f64::from(scale) - want).abs() <= want * 1e-6,
                "{name}: key_scale {scale}, want {want}"
            );
        }
    }
}

#[test]
fn direct_index_finds_the_same_key_as_a_scan_on_the_cpu() {
    for (name, times, _) in cases() {
        let lib =
            AnimationLibrary::new(vec![Clip::new(name, vec![step_track(times.clone())])]).unwrap();
        let track = lib.tracks()[0];
        for t in queries(&times) {
            let want = oracle(&times, t);
            let seg = cpu::find_segment_track(lib.times(), &track, t);
            assert_eq!(seg.k, want, "{name}: time {t}");
            let on_key = t <= times[0] || t >= *times.last().unwrap() || times.contains(&t);
            assert_eq!(seg.exact, on_key, "{name}: time {t} exact");
            assert_eq!(
                seg,
                cpu::find_segment(lib.times(), track.times_offset, track.key_count, t)
            );
        }
    }
}

#[test]
fn direct_index_finds_the_same_key_as_a_scan_on_the_gpu() {
    let Some(h) = common::gpu("direct_index_finds_the_same_key_as_a_scan_on_the_gpu") else {
        return;
    };
    for (name, times, _) in cases() {
        let lib =
            AnimationLibrary::new(vec![Clip::new(name, vec![step_track(times.clone())])]).unwrap();
        let q = queries(&times);
        let instances: Vec<Instance> = q.iter().map(|&t| Instance::new(0, f64::from(t))).collect();
        let mut sampler = GpuSampler::new(&h.device, &lib, instances.len() as u32).unwrap();
        let out = sampler.sample(&h.device, &h.queue, &instances).unwrap();
        let stride = lib.output_stride() as usize;
        // The key search sees the clip time the host resolved (Clamp rounds
        // to f32 and saturates); the oracle gets the same.
        let resolved = keyframe_gpu::resolve_instances(&lib, &instances).unwrap();
        for (i, r) in resolved.iter().enumerate() {
            let want = oracle(&times, r.time) as f32;
            assert_eq!(
                out[i * stride],
                want,
                "{name}: time {} (clip time {})",
                q[i],
                r.time
            );
        }
    }
}
