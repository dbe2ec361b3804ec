//! The key search's tables (`GpuTrack::lookup_scale`, `search_offset`,
//! `AnimationLibrary::search_keys`, `key_windows`): which tracks get a
//! bucket table, that every bucket and every search texel is what its
//! definition says (computed here by brute force), and that the search
//! finds the same key as a plain linear scan, on the CPU twin and on the
//! GPU, at times on keys, one ulp either side of keys, between keys, before
//! and after; also with a corrupted table or a wrong direct guess, where
//! the comparisons with the key times must still lead to the right key.
//!
//! The expected key comes from `oracle`, a linear scan written here from
//! the definition (the largest k with t_k <= T, 0 before the first key),
//! not from the code under test. The GPU check uses STEP tracks whose value
//! at key k is k, so the output is the found key itself, compared exactly.

use super::common;
use crate::tests::Derived;

use keyframe_gpu::{cpu, AnimationLibrary, Clip, Instance, Interpolation, Property, Track};

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

/// How a track's keys are found.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    /// Uniformly spaced: direct guess, no table (`lookup_scale < 0`).
    Direct,
    /// A bucket table (`lookup_scale > 0`).
    Table,
    /// All keys searched (`lookup_scale == 0`).
    Full,
}

fn cases() -> Vec<(&'static str, Vec<f32>, Kind)> {
    let mut jitter_small = Vec::new();
    let mut jitter_big = Vec::new();
    let mut irregular = Vec::new();
    let mut x = 12345u32;
    let mut t = 0.0f32;
    for k in 0..200 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let r = (x >> 8) as f32 / (1u32 << 24) as f32 - 0.5; // [-0.5, 0.5)
        jitter_small.push((k as f32 + 0.5 * r) / 10.0);
        jitter_big.push(if k == 100 {
            100.9 / 10.0
        } else {
            k as f32 / 10.0
        });
        irregular.push(t);
        t += (1.0 + r) / 30.0;
    }
    // 600 keys packed into the first millisecond and one far away: a bucket
    // of hundreds of keys, where the first texel misses and the search
    // bisects.
    let mut clustered: Vec<f32> = (0..600).map(|k| k as f32 * 1e-6).collect();
    clustered.push(1000.0);
    vec![
        ("3 keys", vec![0.0, 1.0, 2.0], Kind::Direct),
        (
            "k/30, 64",
            (0..64).map(|k| k as f32 / 30.0).collect(),
            Kind::Direct,
        ),
        (
            "k/30, 100000",
            (0..100_000).map(|k| k as f32 / 30.0).collect(),
            Kind::Direct,
        ),
        (
            "k/24 from 5",
            (0..1000).map(|k| 5.0 + k as f32 / 24.0).collect(),
            Kind::Direct,
        ),
        (
            "negative start",
            (0..500).map(|k| -3.0 + k as f32 * 0.01).collect(),
            Kind::Direct,
        ),
        // +-0.25 of a key interval: still indexed directly.
        ("jitter 0.25", jitter_small, Kind::Direct),
        // One key 0.9 of an interval late: too far for the direct guess.
        ("one key late", jitter_big, Kind::Table),
        ("irregular 0.5-1.5 frames", irregular, Kind::Table),
        ("clustered", clustered, Kind::Table),
        (
            "doubling",
            (0..20).map(|k| (1u32 << k) as f32).collect(),
            Kind::Table,
        ),
        ("2 keys", vec![0.0, 1.0], Kind::Full),
        ("1 key", vec![0.5], Kind::Full),
    ]
}

/// The bucket of time `t`, written here from the documented formula
/// (`2 (n - 1)` buckets).
fn bucket(t: f32, times: &[f32], scale: f32) -> u32 {
    let last = (2 * (times.len() - 1) - 1) as u32;
    (((t - times[0]) * scale).clamp(0.0, last as f32) as u32).min(last)
}

/// Search texel of key `p`, from its definition: `[p, t_p, t_(p+1),
/// t_(p+2)]`, indices clamped to the last key, times as bits.
fn texel(times: &[f32], p: usize) -> [u32; 4] {
    let at = |i: usize| times[i.min(times.len() - 1)].to_bits();
    [p as u32, at(p), at(p + 1), at(p + 2)]
}

#[test]
fn tables_hold_what_their_definition_says() {
    let mut crowded = 0;
    let mut direct = 0;
    for (name, times, kind) in cases() {
        let lib =
            AnimationLibrary::new(vec![Clip::new(name, vec![step_track(times.clone())])]).unwrap();
        let track = lib.tables().tracks()[0];
        let scale = track.lookup_scale;
        let n = times.len();
        let span = f64::from(times[n - 1]) - f64::from(times[0]);
        let keys = lib.tables().search_keys();
        let windows = lib.tables().key_windows();
        assert_eq!(windows.len(), keys.len(), "{name}");
        let so = track.search_offset as usize;
        // Every texel is its key's.
        for (j, &p) in keys.iter().enumerate() {
            assert_eq!(windows[j], texel(&times, p as usize), "{name}: texel {j}");
        }
        // The key texels: one per key, in order, after the buckets.
        let buckets = if kind == Kind::Table { 2 * (n - 1) } else { 0 };
        assert_eq!(keys.len(), so + buckets + n, "{name}");
        let own: Vec<u32> = (0..n as u32).collect();
        assert_eq!(&keys[so + buckets..], &own[..], "{name}: key texels");
        match kind {
            Kind::Full => {
                assert_eq!(scale, 0.0, "{name}");
                continue;
            }
            Kind::Direct => {
                // Keys per second, negated: (n - 1) / (t_last - t_0), from t_0.
                let want = (n - 1) as f64 / span;
                assert!(
                    (-f64::from(scale) - want).abs() <= want * 1e-6,
                    "{name}: lookup_scale {scale}, want -{want}"
                );
                assert_eq!(track.lookup_origin, times[0], "{name}");
                // Every key's own guess is within 0.75 of its index.
                for (k, &t) in times.iter().enumerate() {
                    let g = (f64::from(t) - f64::from(times[0])) * -f64::from(scale);
                    assert!((g - k as f64).abs() <= 0.75, "{name}: key {k} guessed {g}");
                }
                direct += 1;
                continue;
            }
            Kind::Table => assert!(scale > 0.0, "{name}: lookup_scale {scale}"),
        }
        // Buckets per second: 2 (n - 1) / (t_last - t_0), from t_0.
        assert_eq!(track.lookup_origin, times[0], "{name}");
        let want = (2 * (n - 1)) as f64 / span;
        assert!(
            (f64::from(scale) - want).abs() <= want * 1e-6,
            "{name}: lookup_scale {scale}, want {want}"
        );
        let of_key: Vec<u32> = times.iter().map(|&t| bucket(t, &times, scale)).collect();
        // A_b: the last key whose bucket is before b (0 when none).
        let first = |b: u32| -> u32 {
            (0..n)
                .rev()
                .find(|&k| of_key[k] < b)
                .map_or(0, |k| k as u32)
        };
        for b in 0..buckets as u32 {
            assert_eq!(keys[so + b as usize], first(b), "{name}: bucket {b}");
            // More than two keys can answer a time in the bucket: the
            // first texel misses for some.
            crowded += usize::from(first(b + 1) - first(b) >= 2);
        }
    }
    assert!(crowded > 0, "no case has a bucket the first texel can miss");
    assert!(direct > 0, "no case is indexed directly");
}

#[test]
fn lookup_finds_the_same_key_as_a_scan_on_the_cpu() {
    for (name, times, _) in cases() {
        let lib =
            AnimationLibrary::new(vec![Clip::new(name, vec![step_track(times.clone())])]).unwrap();
        let track = lib.tables().tracks()[0];
        for t in queries(&times) {
            let want = oracle(&times, t);
            let seg =
                cpu::sample::find_segment_track(lib.times(), lib.tables().search_keys(), &track, t);
            assert_eq!(seg.k, want, "{name}: time {t}");
            let on_key = t <= times[0] || t >= *times.last().unwrap() || times.contains(&t);
            assert_eq!(seg.exact, on_key, "{name}: time {t} exact");
            assert_eq!(
                seg,
                cpu::sample::find_segment(lib.times(), track.times_offset, track.key_count, t)
            );
        }
    }
}

#[test]
fn a_wrong_bucket_still_finds_the_key() {
    // A device that rounded the bucket differently would start from a
    // texel whose keys miss the time; here every bucket's key is replaced
    // by wrong ones (far off, key 0, the last key, half the right one), and
    // the result must still be the scan's.
    let times: Vec<f32> = (0..300).map(|k| (k as f32 * 1.37).sqrt()).collect();
    let lib =
        AnimationLibrary::new(vec![Clip::new("sqrt", vec![step_track(times.clone())])]).unwrap();
    let track = lib.tables().tracks()[0];
    assert!(track.lookup_scale > 0.0);
    let n = times.len() as u32;
    type Corrupt = Box<dyn Fn(u32, u32) -> u32>;
    let corruptions: [(&str, Corrupt); 4] = [
        ("shifted", Box::new(move |_, b| (b + 37) % n)),
        ("key 0", Box::new(|_, _| 0)),
        ("last key", Box::new(move |_, _| n - 1)),
        ("half", Box::new(|a, _| a / 2)),
    ];
    for (what, corrupt) in corruptions {
        let mut table = lib.tables().search_keys().to_vec();
        for b in 0..2 * (n - 1) {
            let at = (track.search_offset + b) as usize;
            table[at] = corrupt(table[at], b);
        }
        assert_ne!(table, lib.tables().search_keys(), "{what}");
        for t in queries(&times) {
            let seg = cpu::sample::find_segment_track(lib.times(), &table, &track, t);
            assert_eq!(seg.k, oracle(&times, t), "{what}: time {t}");
            assert_eq!(
                seg,
                cpu::sample::find_segment(lib.times(), track.times_offset, track.key_count, t),
                "{what}: time {t}"
            );
        }
    }
}

#[test]
fn a_wrong_direct_guess_still_finds_the_key() {
    // Uniform keys indexed directly, with the scale a device would need to
    // round very differently to guess wrong: 3% too big or too small, and
    // a guess from a wrong origin. The result must still be the scan's.
    let times: Vec<f32> = (0..400).map(|k| k as f32 / 30.0).collect();
    let lib =
        AnimationLibrary::new(vec![Clip::new("k/30", vec![step_track(times.clone())])]).unwrap();
    let track = lib.tables().tracks()[0];
    assert!(track.lookup_scale < 0.0, "indexed directly");
    for (what, scale, origin) in [
        ("3% too big", track.lookup_scale * 1.03, track.lookup_origin),
        (
            "3% too small",
            track.lookup_scale * 0.97,
            track.lookup_origin,
        ),
        (
            "origin 1 s late",
            track.lookup_scale,
            track.lookup_origin + 1.0,
        ),
    ] {
        let wrong = keyframe_gpu::layout::GpuTrack {
            lookup_scale: scale,
            lookup_origin: origin,
            ..track
        };
        for t in queries(&times) {
            let seg =
                cpu::sample::find_segment_track(lib.times(), lib.tables().search_keys(), &wrong, t);
            assert_eq!(seg.k, oracle(&times, t), "{what}: time {t}");
        }
    }
}

#[test]
fn lookup_finds_the_same_key_as_a_scan_on_the_gpu() {
    let Some(h) = common::gpu("lookup_finds_the_same_key_as_a_scan_on_the_gpu") else {
        return;
    };
    for (name, times, _) in cases() {
        let lib =
            AnimationLibrary::new(vec![Clip::new(name, vec![step_track(times.clone())])]).unwrap();
        let q = queries(&times);
        let instances: Vec<Instance> = q.iter().map(|&t| Instance::new(0, f64::from(t))).collect();
        let mut sampler =
            super::sampler(&h.device, &h.queue, &lib, instances.len() as u32).unwrap();
        let out = sampler.sample(&h.device, &h.queue, &instances).unwrap();
        let stride = lib.output_stride() as usize;
        // The key search sees the clip time the host resolved (Clamp rounds
        // to f32 and saturates); the oracle gets the same.
        let resolved = crate::tables::instance::resolve_instances(&lib, &instances).unwrap();
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

/// Key time arrays with the same bits are stored once, with one set of
/// search texels, whether they share an `Arc` or not; arrays that differ in one bit
/// (here the sign of a zero) are not. Sharing changes no result.
#[test]
fn equal_key_times_are_stored_once() {
    let irregular = vec![0.0, 0.4, 0.5, 1.25, 2.0, 2.1, 3.0];
    let mut signed = irregular.clone();
    signed[0] = -0.0;
    let a = step_track(irregular.clone());
    let b = step_track(irregular.clone()); // same contents, its own Arc
    let c = step_track(signed);
    let lib = AnimationLibrary::new(vec![Clip::new("shared", vec![a, b.clone(), c])]).unwrap();
    let offsets: Vec<u32> = lib
        .tables()
        .tracks()
        .iter()
        .map(|t| t.times_offset)
        .collect();
    assert_eq!(offsets[0], offsets[1], "{offsets:?}");
    assert_ne!(offsets[0], offsets[2], "{offsets:?}");
    assert_eq!(lib.times().len(), 2 * irregular.len());
    let search: Vec<u32> = lib
        .tables()
        .tracks()
        .iter()
        .map(|t| t.search_offset)
        .collect();
    assert_eq!(search[0], search[1], "{search:?}");
    assert_ne!(search[0], search[2], "{search:?}");
    let alone = AnimationLibrary::new(vec![Clip::new("alone", vec![b])]).unwrap();
    for t in queries(&irregular) {
        let shared = cpu::sample(&lib, &[Instance::new(0, f64::from(t))]).unwrap();
        let single = cpu::sample(&alone, &[Instance::new(0, f64::from(t))]).unwrap();
        let (o, _) = lib.track_output(0, 1).unwrap();
        assert_eq!(&shared[o as usize..o as usize + 3], &single[..3], "t = {t}");
    }
}

/// The track-row and clip-group texels the sampler reads instead of the
/// storage tables hold the fields of those tables, where the shader
/// unpacks them.
#[test]
fn track_and_clip_texels_hold_their_rows() {
    use keyframe_gpu::layout::{GROUP_ALL, SAMPLE_GROUPS};
    use keyframe_gpu::tables::key_lookup::{clip_group_texels, track_search_texels};
    let rotation = Track::new(
        1,
        Property::Rotation,
        Interpolation::CubicSpline,
        vec![0.0, 0.4, 1.0],
        // (in-tangent, value, out-tangent) per key; the values unit.
        (0..9)
            .flat_map(|e| {
                if e % 3 == 1 {
                    [0.0, 0.0, 0.0, 1.0]
                } else {
                    [0.0; 4]
                }
            })
            .collect(),
    );
    let lib = AnimationLibrary::new(vec![
        Clip::new("a", vec![step_track(vec![0.0, 0.5, 2.0, 2.1])]),
        Clip::new("b", vec![rotation, step_track(vec![0.0, 1.0])]),
    ])
    .unwrap();
    for t in lib.tables().tracks() {
        let [s, r] = track_search_texels(t);
        assert_eq!(
            s,
            [
                t.search_offset,
                t.key_count,
                t.lookup_scale.to_bits(),
                t.lookup_origin.to_bits()
            ]
        );
        // The shader's unpacking: values, output, width, interpolation in
        // the low 16 bits and kind above.
        assert_eq!(
            (r[0], r[1], r[2], r[3] & 0xffff, r[3] >> 16),
            (
                t.values_offset,
                t.output_offset,
                t.width,
                t.interpolation,
                t.kind
            )
        );
    }
    for c in lib.tables().clip_table() {
        let texels = clip_group_texels(c);
        assert_eq!(texels.len(), SAMPLE_GROUPS + 1);
        for (g, texel) in texels.iter().take(SAMPLE_GROUPS).enumerate() {
            assert_eq!(*texel, [c.group_first[g], c.group_count[g]], "group {g}");
        }
        assert_eq!(
            texels[GROUP_ALL as usize],
            [c.track_offset, c.track_count],
            "every row"
        );
    }
}
