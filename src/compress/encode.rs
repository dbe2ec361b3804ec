//! Quantizing a track's elements on a grid of a given step: the encoders
//! of the format (`crate::model::compressed`), and the standalone sampling
//! of a candidate through the CPU twin's decoder.

use crate::cpu::sample::sample_track_compressed;
use crate::layout::GpuTrack;
use crate::library::PACKED_PADDING;
use crate::model::compressed::{
    packed_block, BitWriter, CompressedTrack, Encoding, KeyTimes, Quantized, MAX_QUANTIZED,
};
use crate::track::{Interpolation, Track};

/// Grid indices `round(v / step)` of `values`, `None` when one passes
/// 2^24.
fn grid(values: &[f32], step: f32) -> Option<Vec<i64>> {
    let step = f64::from(step);
    values
        .iter()
        .map(|&v| {
            let q = (f64::from(v) / step).round();
            (q.is_finite() && q.abs() <= MAX_QUANTIZED as f64).then_some(q as i64)
        })
        .collect()
}

/// The bits of a field holding `0..=range`.
fn bits_for(range: i64) -> u32 {
    (64 - (range.max(1) as u64).leading_zeros()).max(1)
}

/// Offsets and bits for per-component grid indices `(min, max)`, `None`
/// when they need more than `max_bits` or would decode past 2^24.
fn offsets_and_bits(ranges: &[(i64, i64)], max_bits: u32) -> Option<(Vec<i32>, u32)> {
    let bits = ranges
        .iter()
        .map(|&(lo, hi)| bits_for(hi - lo))
        .max()
        .unwrap_or(1);
    if bits > max_bits {
        return None;
    }
    let span = (1i64 << bits) - 1;
    let offsets = ranges
        .iter()
        .map(|&(lo, _)| {
            (lo.abs() + span <= MAX_QUANTIZED)
                .then(|| i32::try_from(lo).ok())
                .flatten()
        })
        .collect::<Option<Vec<i32>>>()?;
    Some((offsets, bits))
}

/// `values` (elements of `width` floats) as quantized vectors on a grid of
/// `step`, with the fewest bits that hold every component's range; `None`
/// when that is more than 24 bits.
#[must_use]
pub fn quantize_vectors(values: &[f32], width: u32, step: f32) -> Option<Quantized> {
    let w = width.max(1) as usize;
    let q = grid(values, step)?;
    let ranges: Vec<(i64, i64)> = (0..w)
        .map(|c| {
            let column = q.iter().skip(c).step_by(w);
            let lo = column.clone().copied().min().unwrap_or(0);
            let hi = column.copied().max().unwrap_or(0);
            (lo, hi)
        })
        .collect();
    let (offsets, bits) = offsets_and_bits(&ranges, Encoding::Vector.bit_range().end().to_owned())?;
    let mut out = BitWriter::new();
    for (i, &v) in q.iter().enumerate() {
        out.push((v - i64::from(offsets[i % w])) as u32, bits);
    }
    Some(Quantized {
        encoding: Encoding::Vector,
        bits,
        step,
        offsets,
        words: out.finish(),
    })
}

/// The component a smallest-three key drops: the largest in magnitude
/// (the first of equals).
fn dropped(q: &[f32]) -> usize {
    let mut best = 0;
    for c in 1..4 {
        if q[c].abs() > q[best].abs() {
            best = c;
        }
    }
    best
}

/// Unit quaternions `values` (4 floats each) as smallest-three keys on a
/// grid of `step`: per key the dropped component's index and sign, the
/// others' fields against per-component offsets; `None` when a field
/// needs more than 15 bits.
#[must_use]
pub fn quantize_rotations(values: &[f32], step: f32) -> Option<Quantized> {
    let q = grid(values, step)?;
    let mut ranges = [(i64::MAX, i64::MIN); 4];
    for (key, v) in values.chunks_exact(4).enumerate() {
        let drop = dropped(v);
        for c in (0..4).filter(|&c| c != drop) {
            let x = q[4 * key + c];
            ranges[c] = (ranges[c].0.min(x), ranges[c].1.max(x));
        }
    }
    for r in &mut ranges {
        if r.0 > r.1 {
            *r = (0, 0);
        }
    }
    let (offsets, bits) = offsets_and_bits(
        &ranges,
        Encoding::SmallestThree.bit_range().end().to_owned(),
    )?;
    let mut out = BitWriter::new();
    for (key, v) in values.chunks_exact(4).enumerate() {
        let drop = dropped(v);
        out.push(drop as u32, 2);
        out.push(u32::from(v[drop] < 0.0), 1);
        for c in (0..4).filter(|&c| c != drop) {
            out.push((q[4 * key + c] - i64::from(offsets[c])) as u32, bits);
        }
    }
    Some(Quantized {
        encoding: Encoding::SmallestThree,
        bits,
        step,
        offsets,
        words: out.finish(),
    })
}

/// Samples a candidate for `track` at each of `times`, through the CPU
/// twin's decoder on a block of its own: what a library holding it gives
/// (the search starts elsewhere there, which changes no result). Returns
/// `times.len() * width` floats.
#[must_use]
pub fn sample_candidate(track: &Track, candidate: &CompressedTrack, times: &[f32]) -> Vec<f32> {
    let w = track.width as usize;
    let mut packed = packed_block(candidate, track.width);
    packed.resize(packed.len() + PACKED_PADDING, 0);
    let (key_times, scale, origin): (Vec<f32>, f32, f32) = match &candidate.times {
        KeyTimes::Uniform { start, rate, .. } => (Vec::new(), -rate, *start),
        KeyTimes::List(t) => (t.to_vec(), 0.0, 0.0),
    };
    let n = candidate.key_count() as u32;
    let search_keys: Vec<u32> = (0..n).collect();
    let row = GpuTrack {
        times_offset: 0,
        key_count: n,
        values_offset: 0,
        width: track.width,
        interpolation: track.interpolation as u32,
        kind: track.value_kind() as u32,
        output_offset: 0,
        node: 0,
        lookup_scale: scale,
        lookup_origin: origin,
        search_offset: 0,
    };
    let mut out = vec![0.0; times.len() * w];
    for (time, o) in times.iter().zip(out.chunks_exact_mut(w.max(1))) {
        sample_track_compressed(&key_times, &search_keys, &packed, &row, *time, o);
    }
    out
}

/// A track of one key: `track`'s first value element (and zero tangents),
/// stored raw.
#[must_use]
pub fn constant(track: &Track, values: &[f32]) -> CompressedTrack {
    let w = track.width as usize;
    let cubic = track.interpolation == Interpolation::CubicSpline;
    let first = if cubic {
        &values[w..2 * w]
    } else {
        &values[..w]
    };
    CompressedTrack {
        times: KeyTimes::Uniform {
            start: track.times[0],
            rate: 1.0,
            count: 1,
        },
        values: Quantized::raw(first, track.width),
        tangents: cubic.then(|| Quantized::raw(&vec![0.0; 2 * w], track.width)),
    }
}
