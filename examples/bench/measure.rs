//! Frame budgets, the measuring loop and medians.

use std::time::{Duration, Instant};

use keyframe_gpu::Instance;

/// How many frames to measure.
#[derive(Clone, Copy)]
pub struct Frames {
    pub warmup: usize,
    pub min: usize,
    pub max: usize,
    pub min_time: Duration,
}

/// How instances move between frames.
pub type Advance = Box<dyn Fn(&mut [Instance])>;

pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

pub fn median_u64(v: &[u64]) -> u64 {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// Runs `frame` for the warm-up frames, then measures until the frame
/// budget is met. `advance` moves the instances between frames (coherent
/// playback); it is not timed.
pub fn measure<T>(
    frames: Frames,
    instances: &mut [Instance],
    advance: &dyn Fn(&mut [Instance]),
    mut frame: impl FnMut(&[Instance]) -> T,
) -> Vec<T> {
    for _ in 0..frames.warmup {
        frame(instances);
        advance(instances);
    }
    let mut out = Vec::with_capacity(frames.max);
    let start = Instant::now();
    while out.len() < frames.max && (out.len() < frames.min || start.elapsed() < frames.min_time) {
        out.push(frame(instances));
        advance(instances);
    }
    out
}
