//! One candidate of one track: sampled alone through the CPU twin's
//! decoder, and the two candidates every track has (one key; lossless).

use crate::compress::format::{packed_block, split_cubic, CompressedTrack, KeyTimes, Quantized};
use crate::cpu::sample::sample_track_compressed;
use crate::kinds::Interpolation;
use crate::layout::GpuTrack;
use crate::model::track::{normalize_rotation_keys, Track};

/// Samples a candidate for `track` at each of `times`, through the CPU
/// twin's decoder on a block (or verbatim words) of its own: what a
/// library holding it gives (the search starts elsewhere there, which
/// changes no result). Returns `times.len() * width` floats.
#[must_use]
pub(crate) fn sample_candidate(
    track: &Track,
    candidate: &CompressedTrack,
    times: &[f32],
) -> Vec<f32> {
    let w = track.width as usize;
    let verbatim = candidate.is_verbatim(track.interpolation);
    let (packed, verbatim_start) = if verbatim {
        (candidate.verbatim_words(), 0)
    } else {
        (packed_block(candidate, track.width), u32::MAX)
    };
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
        sample_track_compressed(
            &key_times,
            &search_keys,
            (&packed, verbatim_start),
            &row,
            *time,
            o,
        );
    }
    out
}

/// A track of one key: `track`'s first value element (and zero tangents),
/// stored raw (verbatim: no block).
#[must_use]
pub(crate) fn constant(track: &Track, values: &[f32]) -> CompressedTrack {
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

impl CompressedTrack {
    /// `track` stored losslessly: its key times as a list, its values (and
    /// tangents) as raw `f32`s, rotation keys normalized as an uncompressed
    /// library stores them; verbatim ([`is_verbatim`](Self::is_verbatim)),
    /// so it takes the bytes of the uncompressed track's values. Sampled,
    /// it gives the uncompressed track's results bit for bit.
    #[must_use]
    pub(crate) fn lossless(track: &Track) -> CompressedTrack {
        let mut values = track.values.clone();
        normalize_rotation_keys(track.property, track.interpolation, &mut values);
        let w = track.width as usize;
        let (values, tangents) = if track.interpolation == Interpolation::CubicSpline {
            let (v, t) = split_cubic(&values, w);
            (v, Some(Quantized::raw(&t, track.width)))
        } else {
            (values, None)
        };
        CompressedTrack {
            times: KeyTimes::List(track.times.clone()),
            values: Quantized::raw(&values, track.width),
            tangents,
        }
    }
}
