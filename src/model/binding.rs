//! Binding: which node of a rig each track of a library animates.
//!
//! A library is bound to a rig as a step of its own
//! ([`AnimationLibrary::bind`]), which gives a [`BoundLibrary`] and a
//! [`BindReport`] saying what it did. Everything that poses (the pose,
//! mixer and skin stages, on the GPU and in the CPU twin) takes a
//! `BoundLibrary`, which carries its rig: a library cannot pose a rig it
//! was not bound to.
//!
//! Each node track resolves by these rules (`docs/ARCHITECTURE.md`,
//! "Binding"):
//! 1. a clip read from the same file as the rig ([`Clip::source`] equal to
//!    [`Rig::source`]), or built in code and naming no node, binds by node
//!    index, exactly as written;
//! 2. otherwise, a track naming its node ([`Track::target`]) binds to the
//!    rig's only node of that name (three.js's `PropertyBinding`), or,
//!    where the name repeats in the rig, to the one whose name path from
//!    the root is the track's (Bevy's `AnimationTargetId`); a name that
//!    repeats without such a path is refused ([`BindError::Ambiguous`]);
//! 3. a track whose name the rig lacks, an unnamed track of another file,
//!    and a morph-weights track whose node here has another count of
//!    morph targets stay unbound: listed in the report and skipped, or
//!    refused with [`BindOptions::strict`].
//!
//! Values are copied as they are: a clip made on a skeleton with other
//! proportions or rest orientations plays as three.js plays it. Nodes a
//! clip does not animate keep the rig's rest pose. Retargeting with
//! rest-pose correction is [`AnimationLibrary::retarget`]
//! (`crate::model::retarget`), which gives a library bound to its target
//! rig.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::library::AnimationLibrary;
use super::rig::Rig;
use super::track::{Clip, Track};
use crate::error::{BindError, Result, Unbound};
use crate::kinds::Property;

/// No node: a pointer track, or a track left unbound.
pub(crate) const UNBOUND: u32 = u32::MAX;

/// How [`AnimationLibrary::bind_with`] treats tracks it cannot bind.
///
/// By default an unbound track is skipped (and listed in the
/// [`BindReport`]), but a clip of which no node track binds at all is
/// refused ([`BindError::TooFewBound`]): its characters would silently
/// stay in the rest pose, which is what a clip made for another skeleton
/// does.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct BindOptions {
    /// Refuse the first unbound track ([`BindError::Unbound`]) instead of
    /// skipping it.
    pub strict: bool,
    /// The least share of a clip's node tracks that must bind, in
    /// `[0, 1]`: a clip below it is refused ([`BindError::TooFewBound`]).
    /// `None` (the default): at least one, when the clip has node tracks.
    /// `Some(0.0)` takes any clip.
    pub min_bound_share: Option<f32>,
}

impl BindOptions {
    /// The same options, refusing a clip of which less than `share` of
    /// the node tracks bind (`0.0` takes every clip, even one that binds
    /// nothing; a share outside `[0, 1]` is clamped into it, NaN is taken
    /// as `0.0`). `k` bound tracks of `n` meet a share of `k / n`.
    #[must_use]
    pub fn with_min_bound_share(self, share: f32) -> Self {
        let share = if share.is_nan() {
            0.0
        } else {
            share.clamp(0.0, 1.0)
        };
        BindOptions {
            min_bound_share: Some(share),
            ..self
        }
    }
}

/// A library bound to a rig: every node track's node in that rig, or none.
/// Cheap to clone (the library, the rig and the table are shared).
///
/// One library bound to several rigs is uploaded once: a
/// `Crowd` shares the clip buffers of models whose bound
/// libraries are the same library.
#[derive(Debug, Clone)]
pub struct BoundLibrary {
    library: AnimationLibrary,
    rig: Arc<Rig>,
    /// Per clip, per track: the rig node, or [`UNBOUND`].
    nodes: Arc<[Box<[u32]>]>,
    report: Arc<BindReport>,
}

/// How a track found its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BoundBy {
    /// By node index (a clip of the rig's own file, or built in code).
    Index,
    /// By its node's name, unique in the rig.
    Name,
    /// By its node's name path, where the name repeats in the rig.
    Path,
}

/// A track left unbound, in a [`ClipReport`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnboundTrack {
    /// The track's index in its clip.
    pub track: u32,
    /// Its target as the clip names it: the name path, or `node N`.
    pub target: String,
    /// Why.
    pub why: Unbound,
}

/// What binding did with one clip.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClipReport {
    /// The clip's name.
    pub name: String,
    /// Node tracks bound by index.
    pub by_index: u32,
    /// Node tracks bound by a unique name.
    pub by_name: u32,
    /// Node tracks bound by their name path.
    pub by_path: u32,
    /// Pointer tracks (`KHR_animation_pointer`): not bound to nodes.
    pub pointers: u32,
    /// Node tracks left unbound.
    pub unbound: Vec<UnboundTrack>,
}

impl ClipReport {
    /// Node tracks bound, by any rule.
    #[must_use]
    pub fn bound(&self) -> u32 {
        self.by_index + self.by_name + self.by_path
    }
}

/// What [`AnimationLibrary::bind`] did, clip by clip. Its `Display` is a
/// line per clip.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BindReport {
    clips: Vec<ClipReport>,
}

impl BindReport {
    /// One entry per clip of the library.
    #[must_use]
    pub fn clips(&self) -> &[ClipReport] {
        &self.clips
    }

    /// Node tracks bound, over every clip.
    #[must_use]
    pub fn bound(&self) -> u32 {
        self.clips.iter().map(ClipReport::bound).sum()
    }
}

impl fmt::Display for BindReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (c, r) in self.clips.iter().enumerate() {
            write!(
                f,
                "clip {c} {:?}: {} by index, {} by name, {} by path, {} unbound",
                r.name,
                r.by_index,
                r.by_name,
                r.by_path,
                r.unbound.len()
            )?;
            for u in r.unbound.iter().take(3) {
                write!(f, "; track {} {}: {}", u.track, u.target, u.why)?;
            }
            if r.unbound.len() > 3 {
                write!(f, "; ...")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl AnimationLibrary {
    /// Binds every node track of the library to a node of `rig`, skipping
    /// the tracks it cannot bind (see [`BindReport`]); the rules are the
    /// module's (`crate::model::binding`).
    ///
    /// # Errors
    /// [`Error::Bind`](crate::Error::Bind): an ambiguous name, a node index out of range, two
    /// tracks of one clip on the same node property, a weights track bound
    /// by index to a node whose mesh does not fit it.
    pub fn bind(&self, rig: &Rig) -> Result<BoundLibrary> {
        self.bind_with(rig, &BindOptions::default())
    }

    /// [`bind`](Self::bind) with options.
    ///
    /// # Errors
    /// As [`bind`](Self::bind); with [`BindOptions::strict`] also the first
    /// unbound track ([`BindError::Unbound`]).
    pub fn bind_with(&self, rig: &Rig, options: &BindOptions) -> Result<BoundLibrary> {
        let names = RigNames::new(rig);
        let mut nodes = Vec::with_capacity(self.clips().len());
        let mut report = BindReport::default();
        for (c, clip) in self.clips().iter().enumerate() {
            let (clip_nodes, clip_report) = bind_clip(c, clip, rig, &names, options)?;
            check_share(c, &clip_report, rig, options)?;
            nodes.push(clip_nodes);
            report.clips.push(clip_report);
        }
        Ok(BoundLibrary {
            library: self.clone(),
            rig: Arc::new(rig.clone()),
            nodes: nodes.into(),
            report: Arc::new(report),
        })
    }
}

/// [`BindError::TooFewBound`] when less of the clip's node tracks bound
/// than `options` ask for.
fn check_share(c: usize, report: &ClipReport, rig: &Rig, options: &BindOptions) -> Result<()> {
    let bound = report.bound();
    let node_tracks = bound + report.unbound.len() as u32;
    if node_tracks == 0 {
        return Ok(());
    }
    let enough = match options.min_bound_share {
        None => bound > 0,
        // The share as a quotient, rounded as the share was: k of n
        // bound meets a share of k/n (k >= share * n can round the other
        // way).
        Some(share) => bound as f32 / node_tracks as f32 >= share,
    };
    if enough {
        return Ok(());
    }
    Err(BindError::TooFewBound {
        clip: c,
        clip_name: report.name.clone(),
        rig: describe_rig(rig),
        bound,
        node_tracks,
        unbound: report
            .unbound
            .iter()
            .take(5)
            .map(|u| u.target.clone())
            .collect(),
    }
    .into())
}

/// "the rig of root "Armature" (65 nodes)" (or "of roots "Armature" and 2
/// more"), for errors.
fn describe_rig(rig: &Rig) -> String {
    let nodes = rig.nodes();
    let roots = nodes.iter().filter(|n| n.parent.is_none()).count();
    let root = nodes
        .iter()
        .find(|n| n.parent.is_none() && n.name.is_some())
        .and_then(|n| n.name.as_deref());
    match (root, roots) {
        (Some(name), 1) => format!("the rig of root {name:?} ({} nodes)", nodes.len()),
        (Some(name), _) => format!(
            "the rig of roots {name:?} and {} more ({} nodes)",
            roots - 1,
            nodes.len()
        ),
        (None, _) => format!("the rig ({} nodes)", nodes.len()),
    }
}

/// The rig's nodes by name.
struct RigNames<'a> {
    by_name: HashMap<&'a str, Vec<u32>>,
}

impl<'a> RigNames<'a> {
    fn new(rig: &'a Rig) -> Self {
        let mut by_name: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, node) in rig.nodes().iter().enumerate() {
            if let Some(name) = node.name.as_deref() {
                by_name.entry(name).or_default().push(i as u32);
            }
        }
        RigNames { by_name }
    }
}

/// `a/b/c` for a rig node's name path.
fn rig_path(rig: &Rig, node: u32) -> String {
    let mut s = String::new();
    let _ = super::target::write_path(&mut s, rig.name_path(node).into_iter());
    s
}

/// Binds one clip: per track the rig node or [`UNBOUND`], and the clip's
/// report.
fn bind_clip(
    c: usize,
    clip: &Clip,
    rig: &Rig,
    names: &RigNames<'_>,
    options: &BindOptions,
) -> Result<(Box<[u32]>, ClipReport)> {
    let own = clip.source.is_some() && clip.source == rig.source();
    let mut report = ClipReport {
        name: clip.name.clone(),
        ..ClipReport::default()
    };
    let mut nodes = vec![UNBOUND; clip.tracks.len()];
    let mut first: HashMap<(u32, Property), usize> = HashMap::new();
    for (t, track) in clip.tracks.iter().enumerate() {
        if track.property == Property::Pointer {
            report.pointers += 1;
            continue;
        }
        let by_index = own || (clip.source.is_none() && track.target.is_none());
        let found = if by_index {
            index_binding(c, t, track, rig)?
        } else {
            name_binding(c, t, track, rig, names)?
        };
        let node = match found {
            Ok((node, by)) => {
                match by {
                    BoundBy::Index => report.by_index += 1,
                    BoundBy::Name => report.by_name += 1,
                    BoundBy::Path => report.by_path += 1,
                }
                node
            }
            Err(why) => {
                let target = match &track.target {
                    Some(name) => name.to_string(),
                    None => format!("node {}", track.node),
                };
                if options.strict {
                    return Err(BindError::Unbound {
                        clip: c,
                        track: t,
                        target,
                        why,
                    }
                    .into());
                }
                report.unbound.push(UnboundTrack {
                    track: t as u32,
                    target,
                    why,
                });
                continue;
            }
        };
        if let Some(&earlier) = first.get(&(node, track.property)) {
            return Err(BindError::DuplicateChannel {
                clip: c,
                track: t,
                first: earlier,
                node,
                property: track.property,
            }
            .into());
        }
        first.insert((node, track.property), t);
        nodes[t] = node;
    }
    Ok((nodes.into(), report))
}

type Found = std::result::Result<(u32, BoundBy), Unbound>;

/// Rule 1: the node the track names by index, which must exist and fit.
fn index_binding(c: usize, t: usize, track: &Track, rig: &Rig) -> Result<Found> {
    let node = track.node;
    let node_count = rig.nodes().len();
    let Some(rn) = rig.nodes().get(node as usize) else {
        return Err(BindError::NodeOutOfRange {
            clip: c,
            track: t,
            node,
            node_count,
        }
        .into());
    };
    if track.property == Property::Weights {
        let Some(mesh) = rn.mesh else {
            return Err(BindError::WeightsWithoutMesh {
                clip: c,
                track: t,
                node,
            }
            .into());
        };
        let expected = rig.meshes()[mesh as usize].target_count;
        if track.width != expected {
            return Err(BindError::WeightsWidthMismatch {
                clip: c,
                track: t,
                node,
                mesh,
                expected,
                found: track.width,
            }
            .into());
        }
    }
    Ok(Ok((node, BoundBy::Index)))
}

/// Rules 2 and 3: the node of the track's name, or of its name path where
/// the name repeats; a weights track must fit that node's mesh.
fn name_binding(
    c: usize,
    t: usize,
    track: &Track,
    rig: &Rig,
    names: &RigNames<'_>,
) -> Result<Found> {
    let Some(target) = &track.target else {
        return Ok(Err(Unbound::Unnamed));
    };
    let candidates = names
        .by_name
        .get(target.name())
        .map_or(&[][..], Vec::as_slice);
    let (node, by) = match candidates {
        [] => return Ok(Err(Unbound::MissingName)),
        [one] => (*one, BoundBy::Name),
        many => {
            let path: Vec<Option<&str>> = target.path().iter().map(Option::as_deref).collect();
            let matching: Vec<u32> = many
                .iter()
                .copied()
                .filter(|&n| rig.name_path(n) == path)
                .collect();
            match matching[..] {
                [one] => (one, BoundBy::Path),
                _ => {
                    return Err(BindError::Ambiguous {
                        clip: c,
                        track: t,
                        name: target.name().to_string(),
                        path: target.to_string(),
                        candidates: many.iter().map(|&n| rig_path(rig, n)).collect(),
                    }
                    .into())
                }
            }
        }
    };
    if track.property == Property::Weights {
        let mesh = rig.nodes()[node as usize].mesh;
        let targets = mesh.map(|m| rig.meshes()[m as usize].target_count);
        if targets != Some(track.width) {
            return Ok(Err(Unbound::MorphTargets {
                rig: targets,
                track: track.width,
            }));
        }
    }
    Ok(Ok((node, by)))
}

impl BoundLibrary {
    /// The library.
    #[must_use]
    pub fn library(&self) -> &AnimationLibrary {
        &self.library
    }

    /// The same binding over `library`, whose clips hold the same tracks
    /// in the same order as this one's (values changed, say): every track
    /// animates the node it animated here.
    pub(crate) fn with_same_tracks(&self, library: AnimationLibrary) -> BoundLibrary {
        BoundLibrary {
            library,
            rig: Arc::clone(&self.rig),
            nodes: Arc::clone(&self.nodes),
            report: Arc::clone(&self.report),
        }
    }

    /// The rig it is bound to.
    #[must_use]
    pub fn rig(&self) -> &Rig {
        &self.rig
    }

    /// What binding did.
    #[must_use]
    pub fn report(&self) -> &BindReport {
        &self.report
    }

    /// The rig node that track `track` of clip `clip` animates; `None` for
    /// a pointer track, an unbound track or indices out of range.
    #[must_use]
    pub fn node(&self, clip: u32, track: u32) -> Option<u32> {
        let node = *self.nodes.get(clip as usize)?.get(track as usize)?;
        (node != UNBOUND).then_some(node)
    }

    /// `library`, which holds this library's clips (compressed), bound to
    /// the same rig with the same nodes and report.
    pub(crate) fn with_library(&self, library: AnimationLibrary) -> BoundLibrary {
        BoundLibrary {
            library,
            rig: Arc::clone(&self.rig),
            nodes: Arc::clone(&self.nodes),
            report: Arc::clone(&self.report),
        }
    }
}
