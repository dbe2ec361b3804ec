//! The key search's tables: a track's key times as search texels
//! ([`key_texel`]), and where the search starts, from a direct key guess
//! (uniformly spaced keys) or from a table of buckets (irregular keys).
//! [`AnimationLibrary`](crate::AnimationLibrary) builds them, the shader
//! (`sample.wgsl`) and its CPU twin read them; the bucket formula is shared
//! by all three.

use crate::layout::{GpuClip, GpuTrack, GROUP_ALL, MAX_LOOKUP_KEYS, SAMPLE_GROUPS};

const _: () = assert!(GROUP_ALL as usize == SAMPLE_GROUPS);

/// The bucket of `time` in a bucket table of `buckets` buckets that
/// starts at `t0`, `scale` buckets per second: the shader's formula in the
/// same `f32` operations. The library builds its tables with it, the CPU twin
/// (`cpu::sample`) searches with it.
#[must_use]
pub(crate) fn lookup_bucket(time: f32, t0: f32, scale: f32, buckets: u32) -> u32 {
    let last = buckets - 1;
    // WGSL: min(u32(clamp((time - t0) * scale, 0.0, f32(last))), last)
    (((time - t0) * scale).clamp(0.0, last as f32) as u32).min(last)
}

/// The largest key count indexed directly: the guess `(T - t_0) * s`
/// stays within 1/8 of a key of the exact value in `f32` up to here.
const MAX_DIRECT_KEYS: usize = 1 << 20;

/// Keys per second for direct key indexing of uniformly spaced keys
/// (`GpuTrack::lookup_scale < 0`), or 0 when they are not uniform enough.
///
/// Direct indexing guesses the key of time `T` as
/// `c = u32(clamp((T - t_0) * s, 0, last))` and starts from the window
/// `[c - 1, c + 1]`: no table to read, and the keys it needs share a cache
/// line. The window holds the right key `k` (the largest with
/// `t_k <= T`) when every key's own guess is `k` or `k - 1`: the guess is
/// monotonic in `T` (a correctly rounded subtraction and multiplication),
/// so for `t_k <= T < t_(k+1)` it lies between the guesses of `t_k` and
/// `t_(k+1)`, that is in `[k - 1, k + 1]`. This checks, in `f64` from the
/// `f32` inputs, that `(t_k - t_0) s` is within 0.75 of `k` for every key,
/// which leaves more than the `f32` rounding of the product (under 0.2 for
/// up to [`MAX_DIRECT_KEYS`] keys) to spare. Keys baked at a fixed rate
/// (`k / 30` rounded to `f32`) pass; irregular keys get a bucket table.
/// The sampler tries key `c`'s texel first (the answer is `c` or `c + 1`
/// unless the time is within a rounding of a key); as with the table, it
/// goes on searching when the texel's key times say the guess missed.
pub(crate) fn uniform_key_scale(times: &[f32]) -> f32 {
    let n = times.len();
    if !(3..=MAX_DIRECT_KEYS).contains(&n) {
        return 0.0;
    }
    let t0 = f64::from(times[0]);
    let span = f64::from(times[n - 1]) - t0;
    if span <= 0.0 || !span.is_finite() {
        return 0.0;
    }
    let s = ((n - 1) as f64 / span) as f32;
    if !s.is_finite() || s <= 0.0 || s > 1e30 {
        return 0.0;
    }
    let uniform = times.iter().enumerate().all(|(k, &t)| {
        let guess = (f64::from(t) - t0) * f64::from(s);
        (guess - k as f64).abs() <= 0.75
    });
    if uniform {
        s
    } else {
        0.0
    }
}

/// The bucket table of one track's key times (`GpuTrack::lookup_scale`
/// and `lookup_origin`, and per bucket the key to try first), or `None`
/// when the keys get no table (fewer than 3 keys, more than
/// [`MAX_LOOKUP_KEYS`], or a span whose scale is not a finite `f32`).
///
/// The `B = 2 (n - 1)` buckets split `[t_0, t_last]` evenly: time `T`
/// falls in bucket `g(T) = min(u32(clamp((T - t_0) * s, 0, B - 1)), B - 1)`
/// with `s = B / (t_last - t_0)`, computed in `f32` exactly as the shader
/// does ([`lookup_bucket`]). Bucket `b`'s entry is `A_b`, the last key
/// whose bucket is before `b` (0 when none). Because `g` is monotonic in
/// `T` (a correctly rounded subtraction and multiplication), the key of
/// any time in bucket `b`, the last `k` with `t_k <= T`, lies in
/// `[A_b, A_(b+1)]`: keys of earlier buckets are before `T`, keys of later
/// buckets after it. With twice as many buckets as key intervals that
/// window is `A_b` or `A_b + 1` unless two keys share a bucket (keys closer
/// than half their average spacing), and one texel of the search table
/// ([`key_texel`]) holds the three key times that decide between them and
/// bound the segment. The sampler tries that texel first and goes on
/// searching from what its comparisons told it when the guess misses, so
/// a device that rounds `g` differently gets the same answer, later.
pub(crate) fn key_lookup(times: &[f32]) -> Option<(f32, Vec<u32>)> {
    let n = times.len();
    if !(3..=MAX_LOOKUP_KEYS).contains(&n) {
        return None;
    }
    let t0 = times[0];
    let span = f64::from(times[n - 1]) - f64::from(t0);
    let buckets = 2 * (n - 1);
    let s = (buckets as f64 / span) as f32;
    if !(s.is_finite() && s > 0.0) {
        return None;
    }
    Some((s, bucket_firsts(times, t0, s, buckets as u32).collect()))
}

/// For each of the `buckets` buckets from `t0`, `scale` buckets per second
/// ([`lookup_bucket`]), the last key of `times` whose bucket is before it
/// (0 when none): a track's bucket table ([`key_lookup`]), and a row's
/// entries in its run's table (`crate::tables::run_keys`, which shares one origin
/// and scale among the run's rows).
pub(crate) fn bucket_firsts(
    times: &[f32],
    t0: f32,
    scale: f32,
    buckets: u32,
) -> impl Iterator<Item = u32> + '_ {
    // Keys are sorted and the bucket is monotonic in the time, so the keys
    // of buckets before b are a prefix of the keys: `before` counts them.
    let mut before = 0usize;
    (0..buckets).map(move |b| {
        while before < times.len() && lookup_bucket(times[before], t0, scale, buckets) < b {
            before += 1;
        }
        before.saturating_sub(1) as u32
    })
}

/// The search texel of key `p` of `times` (a track's key times, `p` less
/// than their count): `[p, t_p, t_(p+1), t_(p+2)]`, the times as their
/// bits, the indices past the last key clamped to it. One `Rgba32Uint`
/// texel of the sampler's `key_windows` texture: the key search reads one
/// per step, and one is enough when the answer is `p` or `p + 1`.
#[must_use]
pub(crate) fn key_texel(times: &[f32], p: usize) -> [u32; 4] {
    let last = times.len() - 1;
    [
        p as u32,
        times[p].to_bits(),
        times[(p + 1).min(last)].to_bits(),
        times[(p + 2).min(last)].to_bits(),
    ]
}

/// How many search texels a track's key times take from its
/// `search_offset`: one per key, after `2 (n - 1)` bucket texels when it
/// has a bucket table.
#[must_use]
pub(crate) fn search_texel_count(track: &crate::layout::GpuTrack) -> usize {
    let n = track.key_count as usize;
    n + if track.lookup_scale > 0.0 {
        2 * n.saturating_sub(1)
    } else {
        0
    }
}

/// The two texels of track row `row` in the `track_search` texture
/// (`Rgba32Uint`), everything `sample_main` reads of a track:
/// texel `2 row` the key search's fields, `[search_offset, key_count,
/// lookup_scale, lookup_origin]` (the two floats as their bits), texel
/// `2 row + 1` the rest, `[values_offset, output_offset, width,
/// interpolation | kind << 16]`.
#[must_use]
pub(crate) fn track_search_texels(track: &GpuTrack) -> [[u32; 4]; 2] {
    [
        [
            track.search_offset,
            track.key_count,
            track.lookup_scale.to_bits(),
            track.lookup_origin.to_bits(),
        ],
        [
            track.values_offset,
            track.output_offset,
            track.width,
            track.interpolation | (track.kind << 16),
        ],
    ]
}

/// The texels of clip `clip` in the `clip_groups` texture (`Rg32Uint`),
/// `SAMPLE_GROUPS + 1` from texel `clip (SAMPLE_GROUPS + 1)`: for each
/// track group `g` its first track row and row count (`GpuClip::group_first`
/// and `group_count`), then the clip's first row and count of all its
/// rows (the reference plan's `GROUP_ALL`, which is `SAMPLE_GROUPS`).
#[must_use]
pub(crate) fn clip_group_texels(clip: &GpuClip) -> [[u32; 2]; SAMPLE_GROUPS + 1] {
    let mut texels = [[clip.track_offset, clip.track_count]; SAMPLE_GROUPS + 1];
    for (g, texel) in texels.iter_mut().take(SAMPLE_GROUPS).enumerate() {
        *texel = [clip.group_first[g], clip.group_count[g]];
    }
    texels
}
