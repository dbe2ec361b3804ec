//! The key lookup tables of the sampler's key search: how a track's key
//! times map to a direct key guess (uniformly spaced keys) or to a table of
//! key windows (irregular keys). [`AnimationLibrary`](crate::AnimationLibrary)
//! builds them, the shader (`sample.wgsl`) and its CPU twin read them; the
//! bucket formula is shared by all three.

use crate::layout::{LOOKUP_COUNT_BITS, LOOKUP_COUNT_SATURATED, MAX_LOOKUP_KEYS};

/// The bucket of `time` in a key lookup table of `buckets` buckets that
/// starts at `t0`, `scale` buckets per second: the shader's formula in the
/// same `f32` operations. The library builds its tables with it, the CPU twin
/// ([`crate::cpu::sample()`]) searches with it.
#[must_use]
pub fn lookup_bucket(time: f32, t0: f32, scale: f32, buckets: u32) -> u32 {
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
/// (`k / 30` rounded to `f32`) pass; irregular keys get a lookup table.
/// As with the table, the sampler checks the key it finds and searches all
/// keys if a device rounded differently.
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

/// The key lookup table of one track's key times (`GpuTrack::lookup_scale`
/// and `lookup_origin`, and the `key_lookup` entries at twice the times'
/// offset), or `None` when the keys are searched in full (fewer than 3
/// keys, more than [`MAX_LOOKUP_KEYS`], or a span whose scale is not a
/// finite `f32`).
///
/// The `B = 2 (n - 1)` buckets split `[t_0, t_last]` evenly: time `T`
/// falls in bucket `g(T) = min(u32(clamp((T - t_0) * s, 0, B - 1)), B - 1)`
/// with `s = B / (t_last - t_0)`, computed in `f32` exactly as the shader
/// does ([`lookup_bucket`]). Entry `b` holds `A_b`, the last key whose
/// bucket is before `b` (0 when none), and the number of keys in bucket
/// `b`, `A_(b+1) - A_b`, saturated at [`LOOKUP_COUNT_SATURATED`]. Because
/// `g` is monotonic in `T` (a correctly rounded subtraction and
/// multiplication), the key of any time in bucket `b`, the last `k` with
/// `t_k <= T`, lies in `[A_b, A_(b+1)]`: keys of earlier buckets are before
/// `T`, keys of later buckets after it. With twice as many buckets as key
/// intervals, a window holds one or two keys unless keys come closer than
/// half their average spacing. The sampler searches only that window and
/// then checks the result against the key times it reads anyway; a device
/// that rounds `g` differently falls back to the full search instead of
/// returning a wrong key.
///
/// A saturated window runs to the last key (the binary search narrows it).
/// Two zeros pad the table to `2 n` entries.
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
    // Keys are sorted and g is monotonic, so the keys of buckets before b
    // are a prefix of the keys: `before` counts them.
    let b_count = buckets as u32;
    let mut first = Vec::with_capacity(buckets + 1);
    let mut before = 0usize;
    for b in 0..b_count {
        while before < n && lookup_bucket(times[before], t0, s, b_count) < b {
            before += 1;
        }
        first.push(before.saturating_sub(1) as u32);
    }
    first.push((n - 1) as u32);
    let mut entries: Vec<u32> = (0..buckets)
        .map(|b| {
            let count = (first[b + 1] - first[b]).min(LOOKUP_COUNT_SATURATED);
            (first[b] << LOOKUP_COUNT_BITS) | count
        })
        .collect();
    entries.extend([0, 0]);
    Some((s, entries))
}
