//! Root motion: the displacement of one node's sampled translation and
//! rotation over a step of an action's playhead, sampled on the CPU from
//! that node's tracks alone with the twin's interpolation, and turned into
//! the model's space by the rest transform of the node's parent.

use std::sync::Arc;

use glam::{Mat3, Quat, Vec3, Vec4};

use crate::cpu::playback::clock::{seconds, Step, WRAP_REPEAT};
use crate::cpu::playback::PlaybackTables;
use crate::cpu::sample::sample_track;
use crate::error::{PlaybackError, Result};
use crate::kinds::{Interpolation, Property};
use crate::layout::{GpuRootTrack, NO_TRACK};
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Mask, MaskId};
use crate::model::track::{Clip, Track, WrapMode};
use crate::model::BoundLibrary;
use crate::tables::library::LibraryTables;

/// One frame's root motion of a character: how far the root node moved
/// and how it turned, in the model's space (the space of the rig's
/// roots: the node's local motion turned and scaled by its parent's rest
/// world transform, [`Rig::rest_world`](crate::Rig::rest_world)), blended
/// over the frame's actions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RootMotion {
    /// The displacement: `L * (T(after) - T(before))`, `L` the linear part
    /// of the parent's rest world matrix and `T` the node's translation.
    pub translation: Vec3,
    /// The turn: `P * R(after) * conj(R(before)) * conj(P)`, `P` the
    /// parent's rest world rotation and `R` the node's rotation (x, y, z,
    /// w; the identity for none): a rotation about axes of the model's
    /// space, such as its up axis for a character turning.
    pub rotation: Quat,
}

impl Default for RootMotion {
    fn default() -> Self {
        RootMotion {
            translation: Vec3::ZERO,
            rotation: Quat::IDENTITY,
        }
    }
}

/// The root node's tracks of every clip, as a library of their own (one
/// clip per clip of the bound library, holding the root's translation and
/// rotation tracks, or none), so that the twin samples them alone.
#[derive(Debug, Clone)]
pub(crate) struct RootTracks {
    library: AnimationLibrary,
    /// Its tables, which the twin samples.
    tables: Arc<LibraryTables>,
    /// Per clip: the offsets of the translation and the rotation in the
    /// root library's output, where the clip has them.
    offsets: Vec<(Option<u32>, Option<u32>)>,
    /// Per clip: the indices of those tracks in the root library's tables.
    tracks: Vec<[Option<u32>; 2]>,
    /// The rest translation and rotation of the node (what a clip without
    /// a track for it holds).
    rest: (Vec3, Quat),
    /// The node.
    node: u32,
    /// The node's factor in each mask of the mixer, by [`MaskId`] (none
    /// given: a masked action moves no root).
    mask_factors: Vec<f32>,
    /// The linear part of the parent's rest world matrix, and its
    /// rotation: from the node's parent's space to the model's.
    to_model: (Mat3, Quat),
    /// Per clip: the duration it was sampled for, and the root at the
    /// clip's start and end then (what every loop of a step reads).
    ends: Vec<(f64, [(Vec3, Quat); 2])>,
}

impl RootTracks {
    /// The tracks of `bound`'s clips that animate rig node `node`.
    pub(crate) fn of(bound: &BoundLibrary, node: u32) -> Result<RootTracks> {
        let rig = bound.rig();
        let Some(rest) = rig.nodes().get(node as usize) else {
            return Err(PlaybackError::UnknownRoot {
                node,
                node_count: rig.nodes().len(),
            }
            .into());
        };
        let rest = (
            Vec3::from_array(rest.translation),
            Quat::from_array(rest.rotation),
        );
        let parent = rig.nodes()[node as usize]
            .parent
            .and_then(|p| rig.rest_world(p))
            .unwrap_or(glam::Mat4::IDENTITY);
        let (_, turn, _) = parent.to_scale_rotation_translation();
        let to_model = (Mat3::from_mat4(parent), turn.normalize());
        let library = bound.library();
        let mut clips = Vec::with_capacity(library.clips().len());
        let mut moves = Vec::with_capacity(library.clips().len());
        for (c, clip) in library.clips().iter().enumerate() {
            let of = |property: Property| -> Option<Track> {
                clip.tracks
                    .iter()
                    .enumerate()
                    .find(|(t, tr)| {
                        tr.property == property && bound.node(c as u32, *t as u32) == Some(node)
                    })
                    .map(|(_, tr)| tr.clone())
            };
            let mut tracks: Vec<Track> = [of(Property::Translation), of(Property::Rotation)]
                .into_iter()
                .flatten()
                .collect();
            moves.push(!tracks.is_empty());
            if tracks.is_empty() {
                // A clip that does not animate the root moves it by
                // nothing: a one-key track of its rest place stands in
                // (a library refuses an empty clip), and is never read.
                let at = rest.0.to_array().to_vec();
                tracks.push(Track::new(
                    node,
                    Property::Translation,
                    Interpolation::Step,
                    vec![0.0],
                    at,
                ));
            }
            clips.push(Clip::new(clip.name.clone(), tracks));
        }
        let root = AnimationLibrary::new(clips)?;
        let offsets: Vec<(Option<u32>, Option<u32>)> = root
            .clips()
            .iter()
            .zip(&moves)
            .enumerate()
            .map(|(c, (clip, &moves))| {
                let at = |p: Property| {
                    let t = clip.tracks.iter().position(|t| t.property == p)?;
                    root.track_output(c as u32, t as u32).map(|(o, _)| o)
                };
                if moves {
                    (at(Property::Translation), at(Property::Rotation))
                } else {
                    (None, None)
                }
            })
            .collect();
        let tables = LibraryTables::of(&root)?;
        let tracks = offsets
            .iter()
            .enumerate()
            .map(|(c, &(t, r))| [t, r].map(|o| track_at(&tables, c, o?)))
            .collect();
        Ok(RootTracks {
            tables: Arc::new(tables),
            library: root,
            offsets,
            tracks,
            rest,
            node,
            mask_factors: Vec::new(),
            to_model,
            ends: Vec::new(),
        })
    }

    /// Samples the root at every clip's start and end once, for clips of
    /// `durations` seconds ([`motion`](Self::motion) samples a clip whose
    /// duration differs itself).
    pub(crate) fn set_durations(&mut self, durations: &[f64]) {
        self.ends = durations
            .iter()
            .enumerate()
            .map(|(c, &d)| (d, self.sample(c as u32, [0.0, d])))
            .collect();
    }

    /// Takes the root's factor in each of `masks` (masks of the rig).
    pub(crate) fn set_masks(&mut self, masks: &[Mask]) {
        self.mask_factors = masks
            .iter()
            .map(|m| m.factor(self.node).unwrap_or(0.0))
            .collect();
    }

    /// The root's factor in the mask `mask` names: 1 with no mask, 0 for
    /// a mask not given to [`set_masks`](Self::set_masks).
    pub(crate) fn mask_factor(&self, mask: Option<MaskId>) -> f32 {
        mask.map_or(1.0, |m| {
            self.mask_factors
                .get(m.index() as usize)
                .copied()
                .unwrap_or(0.0)
        })
    }

    /// Whether clip `clip` animates the root's translation and its
    /// rotation: the mixer blends a property over the actions whose clips
    /// have a track for it, and so does root motion.
    pub(crate) fn animates(&self, clip: u32) -> (bool, bool) {
        let (t, r) = self.offsets.get(clip as usize).copied().unwrap_or_default();
        (t.is_some(), r.is_some())
    }

    /// Fills the root's part of the playback pass's tables: per clip of
    /// `tables.clips` (of `durations` seconds) the root's value at its
    /// start and end, sampled here as [`motion`](Self::motion) samples
    /// them, and its tracks' keys; the parent's rest transform; the
    /// root's factor in each mask.
    pub(crate) fn fill(&self, durations: &[f64], tables: &mut PlaybackTables) {
        let (mut times, mut values) = (Vec::new(), Vec::new());
        for (c, clip) in tables.clips.iter_mut().enumerate() {
            let d = durations.get(c).copied().unwrap_or(0.0);
            let [(ts, rs), (te, re)] = self.sample(c as u32, [0.0, d]);
            clip.root_start_translation = ts.extend(0.0).to_array();
            clip.root_end_translation = te.extend(0.0).to_array();
            clip.root_start_rotation = rs.to_array();
            clip.root_end_rotation = re.to_array();
            let (t, r) = self.animates(c as u32);
            let tracks = self
                .library
                .clips()
                .get(c)
                .map_or(&[][..], |k| &k.tracks[..]);
            for (on, property, slot) in [
                (t, Property::Translation, &mut clip.root_translation),
                (r, Property::Rotation, &mut clip.root_rotation),
            ] {
                *slot = NO_TRACK;
                let Some(track) = tracks.iter().find(|k| on && k.property == property) else {
                    continue;
                };
                *slot = tables.root_tracks.len() as u32;
                tables.root_tracks.push(GpuRootTrack {
                    interpolation: track.interpolation as u32,
                    key_count: track.times.len() as u32,
                    times_offset: times.len() as u32,
                    values_offset: values.len() as u32,
                    rate: even_rate(&track.times),
                    ..bytemuck::Zeroable::zeroed()
                });
                times.extend_from_slice(&track.times);
                values.extend_from_slice(&track.values);
            }
        }
        // Values after the times, then the masks' factors.
        let values_at = times.len() as u32;
        for t in &mut tables.root_tracks {
            t.values_offset += values_at;
        }
        tables.root_keys = times;
        tables.root_keys.extend_from_slice(&values);
        tables.mask_offset = tables.root_keys.len() as u32;
        tables.mask_count = self.mask_factors.len() as u32;
        tables.root_keys.extend_from_slice(&self.mask_factors);
        let (linear, turn) = self.to_model;
        let column = |v: Vec3| v.extend(0.0).to_array();
        let linear = [
            column(linear.x_axis),
            column(linear.y_axis),
            column(linear.z_axis),
        ];
        tables.root = Some((linear, turn.to_array()));
    }

    /// The root's translation and rotation in clip `clip` at clip times
    /// `times`: each of the clip's root tracks sampled as the twin's
    /// sampler samples it (the same segment search and interpolation, at
    /// the time an instance of the clip at `times` clamped takes), read
    /// straight from the root library's tables.
    fn sample<const N: usize>(&self, clip: u32, times: [f64; N]) -> [(Vec3, Quat); N] {
        let Some(&(t_at, r_at)) = self.offsets.get(clip as usize) else {
            return [self.rest; N];
        };
        let [t_track, r_track] = self.tracks.get(clip as usize).copied().unwrap_or_default();
        let tables = &*self.tables;
        let at = |track: Option<u32>, time: f32| -> Option<[f32; 4]> {
            let track = tables.tracks().get(track? as usize)?;
            let mut out = [0.0; 4];
            let width = (track.width as usize).min(4);
            sample_track(
                tables.times(),
                tables.search_keys(),
                tables.values(),
                track,
                time,
                &mut out[..width],
            );
            Some(out)
        };
        std::array::from_fn(|i| {
            let time = WrapMode::Clamp.clip_time(times[i], 0.0);
            let t = t_at
                .and(at(t_track, time))
                .map_or(self.rest.0, |v| Vec3::new(v[0], v[1], v[2]));
            let r = r_at
                .and(at(r_track, time))
                .map_or(self.rest.1, Quat::from_array);
            (t, r)
        })
    }

    /// The root's motion over `step` of clip `clip` (of `duration`
    /// seconds, played with wrap bits `wrap`), in the model's space: the sampled
    /// difference between the clip times after and before, plus on repeat
    /// the clip's whole-loop displacement once per loop end crossed (minus
    /// going backwards). Rotations compose in the parent's space, later
    /// turns on the left: `R(after) * conj(R(before))` within a loop.
    /// Allocates nothing.
    pub(crate) fn motion(&self, clip: u32, duration: f64, wrap: u32, step: &Step) -> RootMotion {
        if step.start == step.end {
            return RootMotion::default();
        }
        let times = [seconds(step.before), seconds(step.after)];
        let ends = self
            .ends
            .get(clip as usize)
            .filter(|(d, _)| *d == duration)
            .map(|&(_, ends)| ends);
        let [(ts, rs), (te, re)] = ends.unwrap_or_else(|| self.sample(clip, [0.0, duration]));
        let [(t0, r0), (t1, r1)] = self.sample(clip, times);
        // Repeat's whole loops (a ping-pong step plays back the way it
        // came at each turn: the difference alone).
        let k = if wrap == WRAP_REPEAT { step.wraps } else { 0 };
        let translation = t1 - t0 + (te - ts) * k as f32;
        // From `from` to the loop's end, whole loops, then from the loop's
        // start to `to` (and the reverse), each turn after the ones before.
        let rotation = if k == 0 {
            r1 * r0.conjugate()
        } else if k > 0 {
            let whole = re * rs.conjugate();
            (r1 * rs.conjugate()) * power(whole, k.unsigned_abs() - 1) * (re * r0.conjugate())
        } else {
            let whole = rs * re.conjugate();
            (r1 * re.conjugate()) * power(whole, k.unsigned_abs() - 1) * (rs * r0.conjugate())
        };
        let (linear, turn) = self.to_model;
        RootMotion {
            translation: linear * translation,
            rotation: (turn * rotation.normalize() * turn.conjugate()).normalize(),
        }
    }
}

/// The index in `tables` of clip `clip`'s track written at output offset
/// `offset`.
fn track_at(tables: &LibraryTables, clip: usize, offset: u32) -> Option<u32> {
    let c = tables.clip_table().get(clip)?;
    (c.track_offset..c.track_offset + c.track_count).find(|&k| {
        tables
            .tracks()
            .get(k as usize)
            .is_some_and(|t| t.output_offset == offset)
    })
}

/// Keys per second of evenly spaced key times (each within a hundredth
/// of a step of its place), 0 for others: where the GPU's search of a
/// root track starts (any guess gives the same key: it steps to it).
fn even_rate(times: &[f32]) -> f32 {
    let (Some(&first), Some(&last)) = (times.first(), times.last()) else {
        return 0.0;
    };
    let steps = times.len().saturating_sub(1) as f32;
    if steps == 0.0 || last <= first {
        return 0.0;
    }
    let step = (last - first) / steps;
    let even = times
        .iter()
        .enumerate()
        .all(|(k, &t)| (t - (first + step * k as f32)).abs() <= step * 0.01);
    if even {
        steps / (last - first)
    } else {
        0.0
    }
}

/// `q` to the power `n`, by squaring.
fn power(q: Quat, n: u64) -> Quat {
    let (mut acc, mut base, mut n) = (Quat::IDENTITY, q, n);
    while n > 0 {
        if n & 1 == 1 {
            acc = (acc * base).normalize();
        }
        base = (base * base).normalize();
        n >>= 1;
    }
    acc
}

/// The blend of per-action root motions by the mixer's rules
/// (`docs/USAGE.md`, "Blending"), each property on its own over the
/// actions whose clips animate it: a weighted average of the normal
/// actions of weight > 0 (rotations by the mixer's quaternion mix), mixed
/// with no motion by `1 - W` where their weights sum to `W < 1`
/// ([`settle`](Self::settle)), then each override action's motion over
/// that ([`overridden`](Self::overridden)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Blend {
    translation: Vec4,
    translation_weight: f32,
    rotation: Vec4,
    rotation_weight: f32,
    settled: bool,
}

/// One property's running blend (the mixer's rule 1): the first value
/// sets it, each next one mixes in by `w / W`.
fn blend_in(acc: &mut Vec4, total: &mut f32, v: Vec4, w: f32, rotation: bool) {
    if *total == 0.0 {
        *acc = v;
        *total = w;
        return;
    }
    *total += w;
    let f = w / *total;
    *acc = mix(*acc, v, f, rotation);
}

/// The mixer's `mix` (`quat_mix` for rotations, `vec_mix` otherwise).
fn mix(a: Vec4, b: Vec4, t: f32, rotation: bool) -> Vec4 {
    if rotation {
        crate::cpu::mix::quat_mix(a, b, t)
    } else {
        crate::cpu::mix::vec_mix(a, b, t)
    }
}

impl Blend {
    pub(crate) fn new() -> Blend {
        Blend {
            translation: Vec4::ZERO,
            translation_weight: 0.0,
            rotation: IDENTITY,
            rotation_weight: 0.0,
            settled: false,
        }
    }

    /// Adds one normal action's motion at weight `w`; `animates` says
    /// whether its clip has the root's translation and rotation tracks (a
    /// property it has no track for takes no part in that property's
    /// blend, as in the mixer).
    pub(crate) fn add(&mut self, m: RootMotion, w: f32, animates: (bool, bool)) {
        if w.is_nan() || w <= 0.0 {
            return;
        }
        if animates.0 {
            let t = m.translation.extend(0.0);
            blend_in(
                &mut self.translation,
                &mut self.translation_weight,
                t,
                w,
                false,
            );
        }
        if animates.1 {
            let r = Vec4::from_array(m.rotation.to_array());
            blend_in(&mut self.rotation, &mut self.rotation_weight, r, w, true);
        }
    }

    /// The mixer's rule 2, once the normal actions are in: where their
    /// weights sum to `W < 1`, the rest of the weight is no motion.
    pub(crate) fn settle(&mut self) {
        if self.settled {
            return;
        }
        self.settled = true;
        if self.translation_weight < 1.0 {
            let rest = 1.0 - self.translation_weight;
            self.translation = mix(self.translation, Vec4::ZERO, rest, false);
        }
        if self.rotation_weight < 1.0 {
            let rest = 1.0 - self.rotation_weight;
            self.rotation = mix(self.rotation, IDENTITY, rest, true);
        }
    }

    /// The mixer's rule 3 after [`settle`](Self::settle): an override
    /// action's motion at weight `w` replaces the blend (`w >= 1`) or is
    /// mixed in by `w`, on the properties its clip animates.
    pub(crate) fn overridden(&mut self, m: RootMotion, w: f32, animates: (bool, bool)) {
        self.settle();
        if w.is_nan() || w <= 0.0 {
            return;
        }
        let over = |acc: Vec4, v: Vec4, rotation: bool| {
            if w >= 1.0 {
                v
            } else {
                mix(acc, v, w, rotation)
            }
        };
        if animates.0 {
            self.translation = over(self.translation, m.translation.extend(0.0), false);
        }
        if animates.1 {
            let r = Vec4::from_array(m.rotation.to_array());
            self.rotation = over(self.rotation, r, true);
        }
    }

    /// The blended motion.
    pub(crate) fn finish(mut self) -> RootMotion {
        self.settle();
        RootMotion {
            translation: self.translation.truncate(),
            rotation: Quat::from_array(self.rotation.to_array()).normalize(),
        }
    }
}

/// The identity rotation, as the mixer holds it (x, y, z, w).
const IDENTITY: Vec4 = Vec4::new(0.0, 0.0, 0.0, 1.0);
