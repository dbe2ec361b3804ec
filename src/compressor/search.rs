//! The search for the fewest bits within the bound: per track a
//! tolerance, the coarsest grid (and the fewest keys, where that pays)
//! that meets it alone, then per clip the whole pose checked against the
//! bound, with the tolerances of the tracks that move a failing node
//! tightened until it holds.

use std::sync::Arc;

use glam::Mat4;

use super::candidate::{constant, sample_candidate};
use crate::compress::encode::{quantize_framed, quantize_rotations, quantize_vectors};
use crate::compress::format::{split_cubic, CompressedTrack, KeyTimes, Quantized};
use crate::compress::{Metric, TrackCompression};
use crate::cpu::sample::sample_resolved;
use crate::cpu::skin::pose_resolved;
use crate::error::Result;
use crate::kinds::{Interpolation, Property, ValueKind};
use crate::layout::GpuInstance;
use crate::model::library::AnimationLibrary;
use crate::model::rig::Rig;
use crate::model::track::{normalize_rotation_keys, Clip, Track};
use crate::tables::library::LibraryTables;
use crate::tables::rig::SkinTables;

/// How many times a node track's tolerance is tightened before it is
/// stored losslessly (2^-12 of its tolerance alone).
const MAX_TIGHTENINGS: u32 = 24;

/// The factor of one tightening: half a bit of grid, so that a chain that
/// fails by a little costs its tracks less than a whole bit each.
const TIGHTEN: f64 = std::f64::consts::FRAC_1_SQRT_2;

/// The most times a clip is checked as a whole (after each failing check
/// the tolerances of the chains that fail are tightened).
const MAX_CHECKS: u32 = 40;

/// Grid exponents tried below the first, per stream.
const EXPONENTS: i32 = 24;

/// The times a clip is checked at: every key of every track and the
/// midpoint of every key interval, sorted, each once.
pub(super) fn check_times(clip: &Clip) -> Vec<f32> {
    let mut times: Vec<f32> = Vec::new();
    for track in &clip.tracks {
        times.extend_from_slice(&track.times);
        for w in track.times.windows(2) {
            times.push(w[0] + (w[1] - w[0]) * 0.5);
        }
    }
    times.sort_by(f32::total_cmp);
    times.dedup_by(|a, b| a.to_bits() == b.to_bits());
    times
}

/// The error of `lossy` against `raw` (samples of `width` floats) by
/// `metric`: the largest over samples.
pub(super) fn error(metric: Metric, width: usize, raw: &[f32], lossy: &[f32]) -> f64 {
    let w = width.max(1);
    raw.chunks_exact(w)
        .zip(lossy.chunks_exact(w))
        .map(|(a, b)| match metric {
            Metric::Angle => angle(a, b),
            Metric::Distance => a
                .iter()
                .zip(b)
                .map(|(x, y)| (f64::from(*x) - f64::from(*y)).powi(2))
                .sum::<f64>()
                .sqrt(),
            Metric::Component => a
                .iter()
                .zip(b)
                .map(|(x, y)| (f64::from(*x) - f64::from(*y)).abs())
                .fold(0.0, f64::max),
        })
        .fold(0.0, f64::max)
}

/// The angle between two rotations (quaternions, normalized here, in
/// either sign): `4 asin(|a - b| / 2)` for the nearer sign.
fn angle(a: &[f32], b: &[f32]) -> f64 {
    let unit = |q: &[f32]| {
        let v: Vec<f64> = q.iter().map(|&x| f64::from(x)).collect();
        let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v.into_iter()
            .map(|x| if n > 0.0 { x / n } else { x })
            .collect::<Vec<f64>>()
    };
    let (a, b) = (unit(a), unit(b));
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let sign = if dot < 0.0 { -1.0 } else { 1.0 };
    let d = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - sign * y).powi(2))
        .sum::<f64>()
        .sqrt();
    4.0 * (d / 2.0).min(1.0).asin()
}

/// One track to compress: its values as the library stores them
/// (rotations normalized), its samples at the check times, and how its
/// error is measured.
struct Job<'a> {
    track: &'a Track,
    values: Vec<f32>,
    raw: Vec<f32>,
    metric: Metric,
    /// Its tolerance at scale 1: what one track may cost alone.
    tolerance: f64,
    /// The rig node whose pose it moves, when the world check covers it
    /// (a node track bound to the rig): its tolerance is then tightened
    /// where a virtual point of the node or a descendant moves too far.
    node: Option<usize>,
}

impl Job<'_> {
    fn world(&self) -> bool {
        self.node.is_some()
    }
}

/// What the world check needs of the uncompressed clip: per check time
/// and node its global matrix.
struct World<'a> {
    rig: &'a Rig,
    globals: Vec<Mat4>,
    bound: f64,
    distance: f64,
}

/// The compressed tracks of one clip and what was done.
pub(super) struct ClipResult {
    pub tracks: Vec<CompressedTrack>,
    pub reports: Vec<TrackCompression>,
    /// The largest error, in the bound's units.
    pub max_error: f64,
    /// The most times a track's tolerance was tightened.
    pub tightenings: u32,
}

/// Compresses clip `clip` of a library (its tracks' nodes in the rig as
/// `nodes` gives them) within `bound` (absolute, in the rig's units) with
/// virtual points at `distance`; without a rig every track is held to a
/// value tolerance of `relative` times its largest value (rotations:
/// `relative` radians).
pub(super) fn compress_clip(
    clip: &Clip,
    rig: Option<&Rig>,
    nodes: &dyn Fn(usize) -> Option<u32>,
    bound: f64,
    distance: f64,
    relative: f64,
) -> Result<ClipResult> {
    let raw_library = AnimationLibrary::new(vec![clip.clone()])?;
    let times = check_times(clip);
    let instances = check_instances(&times);
    let stride = raw_library.output_stride() as usize;
    let mut raw_samples = vec![0.0; instances.len() * stride];
    sample_resolved(
        &LibraryTables::of(&raw_library)?,
        &instances,
        &mut raw_samples,
    );
    let world = match rig {
        Some(rig) => {
            let bound_raw = raw_library.bind(rig)?;
            let tables = SkinTables::of(&bound_raw)?;
            let clips = vec![0u32; instances.len()];
            let globals = pose_resolved(&tables, &raw_samples, &clips).globals;
            Some(World {
                rig,
                globals,
                bound,
                distance,
            })
        }
        None => None,
    };
    let reach = world.as_ref().map(|w| Reach::of(w, times.len()));
    let raw = RawSamples {
        library: &raw_library,
        samples: &raw_samples,
        stride,
    };
    let jobs = make_jobs(clip, &raw, reach.as_ref(), nodes, bound, relative);
    // Each track starts at its tolerance alone. Errors of the tracks on
    // one chain add up: where the clip check finds a node whose virtual
    // points move too far, the tracks on its chain from the root that move
    // them most (at least half as much as the one that moves them most, by
    // their errors alone times their lever on the node) have their
    // tolerance tightened by TIGHTEN and are compressed again, until every node holds;
    // the other tracks keep their coarser grids. A track tightened
    // MAX_TIGHTENINGS times is stored losslessly.
    let mut levels = vec![0u32; jobs.len()];
    let mut tracks: Vec<(CompressedTrack, f64)> = jobs
        .iter()
        .map(|j| compress_track(j, &times, j.tolerance))
        .collect();
    let on_node = tracks_on_nodes(&jobs, rig.map_or(0, |r| r.nodes().len()));
    for _ in 0..MAX_CHECKS {
        let checked = check(clip, &jobs, &tracks, &instances, world.as_ref(), bound)?;
        if checked.ok {
            return Ok(finish(&jobs, tracks, checked.max_error, &levels));
        }
        let (Some(reach), Some(world)) = (&reach, &world) else {
            break;
        };
        let tighten = to_tighten(reach, world, &jobs, &tracks, &on_node, &checked.node_errors);
        let mut changed = false;
        for (t, job) in jobs.iter().enumerate() {
            if !tighten[t] || levels[t] >= MAX_TIGHTENINGS {
                continue;
            }
            levels[t] += 1;
            changed = true;
            tracks[t] = if levels[t] == MAX_TIGHTENINGS {
                (CompressedTrack::lossless(job.track), 0.0)
            } else {
                compress_track(job, &times, job.tolerance * TIGHTEN.powi(levels[t] as i32))
            };
        }
        if !changed {
            break;
        }
    }
    // The bound is tighter than the grids can meet: node tracks lossless.
    for (t, job) in jobs.iter().enumerate().filter(|(_, j)| j.world()) {
        levels[t] = MAX_TIGHTENINGS;
        tracks[t] = (CompressedTrack::lossless(job.track), 0.0);
    }
    let checked = check(clip, &jobs, &tracks, &instances, world.as_ref(), bound)?;
    Ok(finish(&jobs, tracks, checked.max_error, &levels))
}

/// One instance of clip 0 per check time.
fn check_instances(times: &[f32]) -> Vec<GpuInstance> {
    times
        .iter()
        .map(|&time| GpuInstance {
            clip: 0,
            time,
            _pad0: 0,
            _pad1: 0,
        })
        .collect()
}

/// The uncompressed clip's samples at the check times: `stride` floats
/// per time, laid out as `library` lays out its output.
struct RawSamples<'a> {
    library: &'a AnimationLibrary,
    samples: &'a [f32],
    stride: usize,
}

/// The jobs of a clip's tracks: each with its raw samples, its values as
/// stored and its tolerance (from the rig's reach where its node is
/// checked in the world, else by value).
fn make_jobs<'a>(
    clip: &'a Clip,
    raw: &RawSamples<'_>,
    reach: Option<&Reach>,
    nodes: &dyn Fn(usize) -> Option<u32>,
    bound: f64,
    relative: f64,
) -> Vec<Job<'a>> {
    clip.tracks
        .iter()
        .enumerate()
        .map(|(t, track)| {
            let (offset, width) = raw.library.track_output(0, t as u32).unwrap_or((0, 0));
            let samples: Vec<f32> = raw
                .samples
                .chunks_exact(raw.stride.max(1))
                .flat_map(|s| s[offset as usize..][..width as usize].iter().copied())
                .collect();
            let mut values = track.values.clone();
            normalize_rotation_keys(track.property, track.interpolation, &mut values);
            let node = nodes(t).filter(|_| track.property != Property::Weights);
            let (metric, tolerance, node) = match (reach, node) {
                (Some(reach), Some(n)) => {
                    let (m, tol) = reach.tolerance(track.property, n as usize, bound);
                    (m, tol, Some(n as usize))
                }
                _ => {
                    let (m, tol) = value_tolerance(track, &values, relative);
                    (m, tol, None)
                }
            };
            Job {
                track,
                values,
                raw: samples,
                metric,
                tolerance,
                node,
            }
        })
        .collect()
}

/// Per rig node (of `nodes`), the jobs whose tracks move it.
fn tracks_on_nodes(jobs: &[Job<'_>], nodes: usize) -> Vec<Vec<usize>> {
    let mut on_node: Vec<Vec<usize>> = vec![Vec::new(); nodes];
    for (t, job) in jobs.iter().enumerate() {
        if let Some(list) = job.node.and_then(|n| on_node.get_mut(n)) {
            list.push(t);
        }
    }
    on_node
}

/// Which tracks to tighten after a failing check: per node over the
/// bound, the tracks on its chain that move it at least half as much as
/// the one that moves it most.
fn to_tighten(
    reach: &Reach,
    world: &World<'_>,
    jobs: &[Job<'_>],
    tracks: &[(CompressedTrack, f64)],
    on_node: &[Vec<usize>],
    node_errors: &[f64],
) -> Vec<bool> {
    let mut tighten = vec![false; jobs.len()];
    for (j, e) in node_errors.iter().enumerate() {
        if *e <= world.bound {
            continue;
        }
        let moves: Vec<(usize, f64)> = reach.chains[j]
            .iter()
            .enumerate()
            .flat_map(|(i, &a)| on_node[a].iter().map(move |&t| (i, t)))
            .map(|(i, t)| {
                let c = reach.contribution(jobs[t].track.property, j, i, tracks[t].1);
                (t, c)
            })
            .collect();
        let most = moves.iter().map(|m| m.1).fold(0.0, f64::max);
        for (t, c) in moves {
            if c > 0.0 && c >= 0.5 * most {
                tighten[t] = true;
            }
        }
    }
    tighten
}

/// Per node, the nodes of its chain from the root: itself, then its
/// ancestors.
fn chains(rig: &Rig) -> Vec<Vec<usize>> {
    let nodes = rig.nodes();
    (0..nodes.len())
        .map(|n| {
            let mut chain = vec![n];
            let mut p = nodes[n].parent;
            while let Some(a) = p {
                chain.push(a as usize);
                p = nodes[a as usize].parent;
            }
            chain
        })
        .collect()
}

/// The tracks and their reports.
fn finish(
    jobs: &[Job<'_>],
    tracks: Vec<(CompressedTrack, f64)>,
    max_error: f64,
    levels: &[u32],
) -> ClipResult {
    let reports = jobs
        .iter()
        .zip(&tracks)
        .zip(levels)
        .map(|((j, (ct, err)), &level)| TrackCompression {
            bytes: cost(j.track, ct),
            raw_bytes: j.track.values.len() as u64 * 4,
            verbatim: ct.is_verbatim(j.track.interpolation),
            metric: j.metric,
            tolerance: j.tolerance * TIGHTEN.powi(level as i32),
            tightenings: level,
            error: *err,
            encoding: ct.values.encoding,
            bits: ct.values.bits,
            tangent_bits: ct.tangents.as_ref().map(|t| t.bits),
            keys: ct.key_count(),
            source_keys: j.track.key_count(),
            uniform: matches!(ct.times, KeyTimes::Uniform { .. }),
        })
        .collect();
    ClipResult {
        tracks: tracks.into_iter().map(|(ct, _)| ct).collect(),
        reports,
        max_error,
        tightenings: levels.iter().copied().max().unwrap_or(0),
    }
}

/// The value tolerance of a track the world check does not cover: a
/// rotation `relative` radians; anything else `relative` times its largest
/// value element in magnitude (for morph weights in [0, 1], `relative`).
fn value_tolerance(track: &Track, values: &[f32], relative: f64) -> (Metric, f64) {
    if track.value_kind() == ValueKind::Rotation {
        return (Metric::Angle, relative);
    }
    let w = track.width.max(1) as usize;
    let cubic = track.interpolation == Interpolation::CubicSpline;
    let largest = values
        .chunks_exact(w)
        .enumerate()
        .filter(|(e, _)| !cubic || e % 3 == 1)
        .flat_map(|(_, v)| v.iter())
        .map(|v| f64::from(v.abs()))
        .fold(0.0, f64::max);
    (Metric::Component, relative * largest)
}

/// Per node, what one unit of error of its tracks moves in the world:
/// the distance from its origin to the farthest virtual point of it and
/// its descendants (its `reach`, for rotations), its parent's largest
/// scale (translations), and the reach over its own smallest scale
/// (scales); each the largest over the check times.
struct Reach {
    reach: Vec<f64>,
    parent_scale: Vec<f64>,
    scale_reach: Vec<f64>,
    /// Per node, its chain from the root: itself, then its ancestors.
    chains: Vec<Vec<usize>>,
    /// Per node `j` and the `i`-th node `a` of its chain, the largest
    /// distance from `a`'s origin to a virtual point of `j`: how far a
    /// turn of `a` moves `j`'s points per radian.
    levers: Vec<Vec<f64>>,
}

/// The largest and smallest column lengths of a matrix's upper 3x3.
fn column_scales(m: &Mat4) -> (f64, f64) {
    let lengths = [m.x_axis, m.y_axis, m.z_axis].map(|c| c.truncate().as_dvec3().length());
    let max = lengths.iter().copied().fold(0.0, f64::max);
    let min = lengths.iter().copied().fold(f64::INFINITY, f64::min);
    (max, min)
}

impl Reach {
    fn of(world: &World<'_>, samples: usize) -> Reach {
        let nodes = world.rig.nodes();
        let n = nodes.len();
        // Descendants of each node, itself included.
        let mut below: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        for i in 0..n {
            let mut p = nodes[i].parent;
            while let Some(a) = p {
                below[a as usize].push(i);
                p = nodes[a as usize].parent;
            }
        }
        let chains = chains(world.rig);
        let mut levers: Vec<Vec<f64>> = chains.iter().map(|c| vec![0.0; c.len()]).collect();
        let mut reach = vec![0.0f64; n];
        let mut parent_scale = vec![1.0f64; n];
        let mut scale_reach = vec![0.0f64; n];
        for s in 0..samples {
            let g = &world.globals[s * n..(s + 1) * n];
            let origin = |i: usize| g[i].w_axis.truncate().as_dvec3();
            for (j, chain) in chains.iter().enumerate() {
                let point = world.distance * column_scales(&g[j]).0;
                for (lever, &a) in levers[j].iter_mut().zip(chain) {
                    *lever = lever.max((origin(j) - origin(a)).length() + point);
                }
            }
            for a in 0..n {
                let o = origin(a);
                let r = below[a]
                    .iter()
                    .map(|&j| (origin(j) - o).length() + world.distance * column_scales(&g[j]).0)
                    .fold(0.0, f64::max);
                reach[a] = reach[a].max(r);
                if let Some(p) = nodes[a].parent {
                    parent_scale[a] = parent_scale[a].max(column_scales(&g[p as usize]).0);
                }
                let (_, min) = column_scales(&g[a]);
                let parent = nodes[a]
                    .parent
                    .map_or(1.0, |p| column_scales(&g[p as usize]).0);
                if min > 0.0 {
                    scale_reach[a] = scale_reach[a].max(r * parent / min);
                } else {
                    scale_reach[a] = f64::INFINITY;
                }
            }
        }
        Reach {
            reach,
            parent_scale,
            scale_reach,
            chains,
            levers,
        }
    }

    /// How far an error `error` of node `a`'s `property` track (the
    /// `i`-th node of node `j`'s chain) moves `j`'s virtual points, about.
    fn contribution(&self, property: Property, j: usize, i: usize, error: f64) -> f64 {
        let a = self.chains[j][i];
        let lever = self.levers[j][i];
        match property {
            Property::Rotation => error * lever,
            Property::Translation => error * self.parent_scale[a],
            _ if self.reach[a] > 0.0 => error * lever * self.scale_reach[a] / self.reach[a],
            _ => error * lever,
        }
    }

    /// The metric and the tolerance at scale 1 of node `n`'s `property`
    /// track: what moves no virtual point by more than `bound` alone.
    fn tolerance(&self, property: Property, n: usize, bound: f64) -> (Metric, f64) {
        let over = |x: f64| if x > 0.0 { bound / x } else { bound };
        match property {
            Property::Rotation => (Metric::Angle, over(self.reach[n])),
            Property::Translation => (Metric::Distance, over(self.parent_scale[n])),
            _ => (Metric::Component, over(self.scale_reach[n])),
        }
    }
}

/// What [`check`] found.
struct Checked {
    /// Whether every track and node holds.
    ok: bool,
    /// The largest error, in the bound's units.
    max_error: f64,
    /// Per rig node, the largest displacement of its virtual points.
    node_errors: Vec<f64>,
}

/// Samples the clip with `tracks` compressed, through the CPU twin: each
/// value-checked track within its tolerance, and with a rig every virtual
/// point within the bound.
fn check(
    clip: &Clip,
    jobs: &[Job<'_>],
    tracks: &[(CompressedTrack, f64)],
    instances: &[GpuInstance],
    world: Option<&World<'_>>,
    bound: f64,
) -> Result<Checked> {
    let compressed: Vec<CompressedTrack> = tracks.iter().map(|(t, _)| t.clone()).collect();
    let library = AnimationLibrary::from_compressed(vec![clip.clone()], vec![compressed])?;
    let stride = library.output_stride() as usize;
    let mut samples = vec![0.0; instances.len() * stride];
    sample_resolved(&LibraryTables::of(&library)?, instances, &mut samples);
    let mut ok = true;
    let mut worst = 0.0f64;
    for (t, job) in jobs.iter().enumerate().filter(|(_, j)| !j.world()) {
        let (offset, width) = library.track_output(0, t as u32).unwrap_or((0, 0));
        let lossy: Vec<f32> = samples
            .chunks_exact(stride.max(1))
            .flat_map(|s| s[offset as usize..][..width as usize].iter().copied())
            .collect();
        let e = error(job.metric, width as usize, &job.raw, &lossy);
        ok &= e <= job.tolerance;
        if job.tolerance > 0.0 {
            worst = worst.max(e / job.tolerance * bound);
        } else if e > 0.0 {
            worst = f64::INFINITY;
        }
    }
    let mut node_errors = Vec::new();
    if let Some(world) = world {
        let bound_lossy = library.bind(world.rig)?;
        let tables = SkinTables::of(&bound_lossy)?;
        let clips = vec![0u32; instances.len()];
        let globals = pose_resolved(&tables, &samples, &clips).globals;
        node_errors = world_errors(
            &world.globals,
            &globals,
            world.rig.nodes().len(),
            world.distance,
        );
        let e = node_errors.iter().copied().fold(0.0, f64::max);
        ok &= e <= world.bound;
        worst = worst.max(e);
    }
    Ok(Checked {
        ok,
        max_error: worst,
        node_errors,
    })
}

/// Per node, the largest displacement over every check time of the node's
/// origin and of the virtual points at `distance` along its three axes,
/// between the globals `raw` and `lossy` (`nodes` per check time).
pub(super) fn world_errors(raw: &[Mat4], lossy: &[Mat4], nodes: usize, distance: f64) -> Vec<f64> {
    let mut out = vec![0.0f64; nodes];
    for (i, (a, b)) in raw.iter().zip(lossy).enumerate() {
        let origin = (a.w_axis - b.w_axis).truncate().as_dvec3();
        let e = [
            a.x_axis - b.x_axis,
            a.y_axis - b.y_axis,
            a.z_axis - b.z_axis,
        ]
        .iter()
        .map(|axis| (origin + axis.truncate().as_dvec3() * distance).length())
        .fold(origin.length(), f64::max);
        let n = i % nodes.max(1);
        out[n] = out[n].max(e);
    }
    out
}

/// What `ct` costs a library in bytes for `track` ([`TrackCompression::bytes`]):
/// its packed words (its block, or its `f32`s where it is verbatim), and
/// its key times where they are a list other than the track's own (the
/// track's own list is stored once for every track that has it, in the
/// uncompressed library as in the compressed one).
pub(super) fn cost(track: &Track, ct: &CompressedTrack) -> u64 {
    let own = match &ct.times {
        KeyTimes::List(t) => {
            t.len() == track.times.len()
                && t.iter()
                    .zip(track.times.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits())
        }
        KeyTimes::Uniform { .. } => false,
    };
    ct.data_bytes(track.width, track.interpolation) + if own { 0 } else { ct.times_bytes() }
}

/// The smallest candidate for `job` within `tolerance` alone (sampled
/// through the twin at `times`), with its error: one key where the track
/// is constant within it; else its values (and tangents) on the coarsest
/// power-of-two grid that meets it, key times as a rate where that is
/// exact; with fewer keys where interpolation reproduces the others and
/// that pays; losslessly (verbatim) where nothing meets it or nothing is
/// smaller ([`cost`]), so that no track costs more than its raw values.
fn compress_track(job: &Job<'_>, times: &[f32], tolerance: f64) -> (CompressedTrack, f64) {
    let track = job.track;
    let w = track.width as usize;
    let err =
        |ct: &CompressedTrack| error(job.metric, w, &job.raw, &sample_candidate(track, ct, times));
    // The fewest bytes; of two alike, uniform times (no key search).
    let rank = |ct: &CompressedTrack| {
        let listed = matches!(ct.times, KeyTimes::List(_));
        (cost(track, ct), listed)
    };
    let lossless = CompressedTrack::lossless(track);
    let mut best = (lossless, 0.0);
    let mut consider = |ct: CompressedTrack, e: f64| {
        if e <= tolerance && rank(&ct) < rank(&best.0) {
            best = (ct, e);
        }
    };
    let one = constant(track, &job.values);
    let e = err(&one);
    if e <= tolerance {
        return (one, e);
    }
    let key_times =
        KeyTimes::uniform_of(&track.times).unwrap_or_else(|| KeyTimes::List(track.times.clone()));
    // Raw values with times as a rate: lossless values, no key search.
    if matches!(key_times, KeyTimes::Uniform { .. }) {
        let raw_rate = CompressedTrack {
            times: key_times.clone(),
            ..CompressedTrack::lossless(track)
        };
        let e = err(&raw_rate);
        consider(raw_rate, e);
    }
    if track.value_kind() != ValueKind::Discrete && tolerance > 0.0 {
        if let Some((ct, e)) = quantized(job, key_times, &job.values, tolerance, &err) {
            consider(ct, e);
        }
        if let Some((ct, e)) = with_fewer_keys(job, tolerance, &err) {
            consider(ct, e);
        }
    }
    best
}

/// `values` (the track's, or those of the keys kept) with `key_times` on
/// the coarsest grid within `tolerance`: the value grid first (with raw
/// tangents, within half of it for CUBICSPLINE), then the tangents'.
fn quantized(
    job: &Job<'_>,
    key_times: KeyTimes,
    values: &[f32],
    tolerance: f64,
    err: &dyn Fn(&CompressedTrack) -> f64,
) -> Option<(CompressedTrack, f64)> {
    let track = job.track;
    let w = track.width as usize;
    let cubic = track.interpolation == Interpolation::CubicSpline;
    let (vals, tans) = if cubic {
        split_cubic(values, w)
    } else {
        (values.to_vec(), Vec::new())
    };
    let rotation = track.value_kind() == ValueKind::Rotation;
    let raw_tangents = cubic.then(|| Quantized::raw(&tans, track.width));
    let target = if cubic { tolerance * 0.5 } else { tolerance };
    let first = target.log2().ceil() as i32 + 1;
    // The coarsest grid on which `encode` meets the target.
    let coarsest = |encode: &dyn Fn(f32) -> Option<Quantized>| {
        for e in (first - EXPONENTS..=first).rev() {
            let Some(step) = grid_step(e) else { continue };
            let q = encode(step)?;
            let ct = CompressedTrack {
                times: key_times.clone(),
                values: q,
                tangents: raw_tangents.clone(),
            };
            let e = err(&ct);
            if e <= target {
                return Some((ct, e));
            }
        }
        None
    };
    // Rotations in a frame of their own, or as smallest-three (at most 48
    // bits a key) or, where that needs more than 15 bits a component, as
    // four: whichever is smaller.
    let found = if rotation {
        let framed = coarsest(&|step| quantize_framed(&vals, step));
        let plain = coarsest(&|step| {
            quantize_rotations(&vals, step).or_else(|| quantize_vectors(&vals, 4, step))
        });
        match (framed, plain) {
            (Some(f), Some(p)) => Some(if f.0.values.words.len() < p.0.values.words.len() {
                f
            } else {
                p
            }),
            (f, p) => f.or(p),
        }
    } else {
        coarsest(&|step| quantize_vectors(&vals, track.width, step))
    };
    let (mut ct, mut e) = found?;
    if cubic {
        let span = match &key_times {
            KeyTimes::Uniform { rate, .. } => 1.0 / f64::from(*rate),
            KeyTimes::List(t) => f64::from(t[t.len() - 1] - t[0]) / (t.len().max(2) - 1) as f64,
        };
        let first = (tolerance / span.max(f64::MIN_POSITIVE)).log2().ceil() as i32 + 2;
        for x in (first - EXPONENTS..=first).rev() {
            let Some(step) = grid_step(x) else { continue };
            let Some(q) = quantize_vectors(&tans, track.width, step) else {
                break;
            };
            let candidate = CompressedTrack {
                tangents: Some(q),
                ..ct.clone()
            };
            let ce = err(&candidate);
            if ce <= tolerance {
                (ct, e) = (candidate, ce);
                break;
            }
        }
    }
    Some((ct, e))
}

/// 2^e as an `f32` grid step, `None` outside the format's range.
fn grid_step(e: i32) -> Option<f32> {
    if !(-126..=100).contains(&e) {
        return None;
    }
    Some(2f32.powi(e))
}

/// The track with the keys that interpolation does not reproduce within
/// half the tolerance (LINEAR and STEP tracks of 3 keys or more), its
/// times a list, quantized within the tolerance; `None` when no key goes.
fn with_fewer_keys(
    job: &Job<'_>,
    tolerance: f64,
    err: &dyn Fn(&CompressedTrack) -> f64,
) -> Option<(CompressedTrack, f64)> {
    let track = job.track;
    let n = track.key_count();
    if track.interpolation == Interpolation::CubicSpline || n < 3 {
        return None;
    }
    let kept = kept_keys(job, tolerance * 0.5);
    if kept.len() == n {
        return None;
    }
    let w = track.width as usize;
    let times: Arc<[f32]> = kept.iter().map(|&k| track.times[k]).collect();
    let values: Vec<f32> = kept
        .iter()
        .flat_map(|&k| job.values[k * w..(k + 1) * w].iter().copied())
        .collect();
    quantized(job, KeyTimes::List(times), &values, tolerance, err)
}

/// The keys kept: the first and the last, and each key that the line (or
/// slerp) between the keys kept around it does not reproduce, with the
/// midpoints, within `tolerance` (by `f64` interpolation; the candidate is
/// then checked through the twin). STEP tracks keep a key whose value
/// differs from the last kept one by more than it.
fn kept_keys(job: &Job<'_>, tolerance: f64) -> Vec<usize> {
    let track = job.track;
    let w = track.width as usize;
    let n = track.key_count();
    let value = |k: usize| &job.values[k * w..(k + 1) * w];
    let differ = |a: &[f32], b: &[f32]| error(job.metric, w, a, b);
    if track.interpolation == Interpolation::Step {
        let mut kept = vec![0];
        for k in 1..n {
            let last = kept[kept.len() - 1];
            if differ(value(k), value(last)) > tolerance {
                kept.push(k);
            }
        }
        return kept;
    }
    let rotation = track.value_kind() == ValueKind::Rotation;
    let at = |a: usize, b: usize, time: f64| -> Vec<f32> {
        let (ta, tb) = (f64::from(track.times[a]), f64::from(track.times[b]));
        let t = (time - ta) / (tb - ta);
        interpolate(value(a), value(b), t, rotation)
    };
    let fits = |i: usize, j: usize| {
        (i + 1..j).all(|m| {
            let tm = f64::from(track.times[m]);
            let mid = 0.5 * (tm + f64::from(track.times[m + 1]));
            let own = interpolate(value(m), value(m + 1), 0.5, rotation);
            differ(value(m), &at(i, j, tm)) <= tolerance
                && differ(&own, &at(i, j, mid)) <= tolerance
        })
    };
    let mut kept = vec![0];
    let mut i = 0;
    let mut j = 1;
    while j + 1 < n {
        if fits(i, j + 1) {
            j += 1;
        } else {
            kept.push(j);
            i = j;
            j = i + 1;
        }
    }
    kept.push(n - 1);
    kept
}

/// `(1 - t) a + t b` per component, or for rotations the shortest-path
/// slerp, in `f64`.
fn interpolate(a: &[f32], b: &[f32], t: f64, rotation: bool) -> Vec<f32> {
    if !rotation {
        return a
            .iter()
            .zip(b)
            .map(|(x, y)| ((1.0 - t) * f64::from(*x) + t * f64::from(*y)) as f32)
            .collect();
    }
    let qa = glam::DQuat::from_xyzw(a[0].into(), a[1].into(), a[2].into(), a[3].into());
    let qb = glam::DQuat::from_xyzw(b[0].into(), b[1].into(), b[2].into(), b[3].into());
    let q = qa.slerp(qb, t);
    vec![q.x as f32, q.y as f32, q.z as f32, q.w as f32]
}
