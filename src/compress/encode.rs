//! Quantizing a track's elements on a grid of a given step: the encoders
//! of the format (`crate::compress::format`), which the compressor
//! (`src/compressor/`) tries within each track's tolerance.

use glam::{DMat3, DQuat, DVec3, DVec4};

use crate::compress::format::{BitWriter, Frame, Quantized, MAX_FRAMED_BITS, MAX_QUANTIZED};
use crate::kinds::Encoding;

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
pub(crate) fn quantize_vectors(values: &[f32], width: u32, step: f32) -> Option<Quantized> {
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
        frame: None,
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
pub(crate) fn quantize_rotations(values: &[f32], step: f32) -> Option<Quantized> {
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
        frame: None,
        words: out.finish(),
    })
}

/// Unit quaternions `values` (4 floats each) in a frame of their own
/// ([`Encoding::Framed`]) on a grid of `step`: `left` the keys' mean
/// turned so that the principal axes of their motion about it are x, y
/// and z, `right` that turn's inverse; each field with the fewest bits
/// that hold its range. `None` when a key is half a turn or more from the
/// mean (its `w` in the frame would be negative, which the format does not
/// hold), a field needs more than [`MAX_FRAMED_BITS`], or the keys have no
/// mean.
#[must_use]
pub(crate) fn quantize_framed(values: &[f32], step: f32) -> Option<Quantized> {
    let keys: Vec<DQuat> = values
        .chunks_exact(4)
        .map(|q| DQuat::from_xyzw(q[0].into(), q[1].into(), q[2].into(), q[3].into()))
        .collect();
    let (left, right) = frame_of(&keys)?;
    let (l, r) = (to_dquat(left), to_dquat(right));
    let (li, ri) = (
        l.conjugate() / l.length_squared(),
        r.conjugate() / r.length_squared(),
    );
    let mut fields = Vec::with_capacity(keys.len() * 3);
    for q in &keys {
        let v = li * *q * ri;
        if v.w <= 0.0 {
            return None;
        }
        fields.extend_from_slice(&[v.x as f32, v.y as f32, v.z as f32]);
    }
    let q = grid(&fields, step)?;
    let mut bits = [0u32; 3];
    let mut offsets = Vec::with_capacity(3);
    for (c, b) in bits.iter_mut().enumerate() {
        let column = q.iter().skip(c).step_by(3);
        let lo = column.clone().copied().min().unwrap_or(0);
        let hi = column.copied().max().unwrap_or(0);
        *b = if hi == lo { 0 } else { bits_for(hi - lo) };
        if *b > MAX_FRAMED_BITS || lo.abs() + (1i64 << *b) - 1 > MAX_QUANTIZED {
            return None;
        }
        offsets.push(i32::try_from(lo).ok()?);
    }
    let mut out = BitWriter::new();
    for (i, &v) in q.iter().enumerate() {
        if bits[i % 3] > 0 {
            out.push((v - i64::from(offsets[i % 3])) as u32, bits[i % 3]);
        }
    }
    let total: u32 = bits.iter().sum();
    let mut words = out.finish();
    words.resize(
        (keys.len() as u64 * u64::from(total)).div_ceil(32) as usize,
        0,
    );
    Some(Quantized {
        encoding: Encoding::Framed,
        bits: total,
        step,
        offsets,
        frame: Some(Frame { left, right, bits }),
        words,
    })
}

fn to_dquat(q: [f32; 4]) -> DQuat {
    DQuat::from_xyzw(q[0].into(), q[1].into(), q[2].into(), q[3].into())
}

fn to_f32(q: DQuat) -> [f32; 4] {
    let q = q.normalize();
    [q.x as f32, q.y as f32, q.z as f32, q.w as f32]
}

/// The frame of `keys`: their mean `m` (signs aligned with the first key)
/// and the turn `p` whose axes are the principal axes of the vector parts
/// of `conjugate(m) * key`, largest first; `(m * p, conjugate(p))` in
/// `f32`.
fn frame_of(keys: &[DQuat]) -> Option<([f32; 4], [f32; 4])> {
    let first = *keys.first()?;
    let sum = keys.iter().fold(DVec4::ZERO, |acc, q| {
        let v = DVec4::from(*q);
        if v.dot(DVec4::from(first)) < 0.0 {
            acc - v
        } else {
            acc + v
        }
    });
    let length = sum.length();
    if length.is_nan() || length <= 1e-9 {
        return None;
    }
    let s = sum.normalize();
    let mean = DQuat::from_xyzw(s.x, s.y, s.z, s.w);
    let parts: Vec<DVec3> = keys
        .iter()
        .map(|q| {
            let r = mean.conjugate() * *q;
            let v = DVec3::new(r.x, r.y, r.z);
            if r.w < 0.0 {
                -v
            } else {
                v
            }
        })
        .collect();
    let centre = parts.iter().copied().sum::<DVec3>() / parts.len() as f64;
    let mut cov = [[0.0f64; 3]; 3];
    for v in &parts {
        let d = *v - centre;
        let d = [d.x, d.y, d.z];
        for i in 0..3 {
            for j in 0..3 {
                cov[i][j] += d[i] * d[j];
            }
        }
    }
    let axes = principal_axes(cov);
    let p = DQuat::from_mat3(&axes);
    if !p.is_finite() {
        return None;
    }
    Some((to_f32(mean * p), to_f32(p.conjugate())))
}

/// The eigenvectors of the symmetric matrix `a` (cyclic Jacobi), as the
/// columns of a rotation, largest eigenvalue first.
fn principal_axes(mut a: [[f64; 3]; 3]) -> DMat3 {
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for _ in 0..32 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        if off < 1e-30 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q].abs() < 1e-300 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            for row in &mut a {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (rp, rq) = (a[p], a[q]);
            for k in 0..3 {
                a[p][k] = c * rp[k] - s * rq[k];
                a[q][k] = s * rp[k] + c * rq[k];
            }
            for row in &mut v {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[j][j].total_cmp(&a[i][i]));
    let col = |i: usize| DVec3::new(v[0][i], v[1][i], v[2][i]).normalize_or_zero();
    let (x, y) = (col(order[0]), col(order[1]));
    DMat3::from_cols(x, y, x.cross(y))
}
