//! [`Clips`]: what the players of one library share (durations, names,
//! markers, the root's tracks), with the identity its [`ClipHandle`]s
//! carry so that a player refuses a clip of another library.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::root::RootTracks;
use crate::cpu::playback::clock::{duration_ticks, split};
use crate::cpu::playback::PlaybackTables;
use crate::error::{PlaybackError, Result};
use crate::layout::{GpuPlaybackClip, NO_TRACK};
use crate::model::library::AnimationLibrary;
use crate::model::mix::Mask;
use crate::model::track::Marker;
use crate::model::BoundLibrary;

/// Tells [`Clips`] apart: every one made gets the next number (its clones
/// keep it).
static NEXT_CLIPS: AtomicU64 = AtomicU64::new(1);

/// The identity of a [`Clips`] (shared by its clones): what its
/// [`ClipHandle`]s carry, so that a player refuses another's handles (a
/// crowd ties a player to its model with
/// [`Crowd::player`](crate::Crowd::player)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClipsId(u64);

impl ClipsId {
    /// The number behind it, as error messages print it (`clips #3`).
    #[must_use]
    pub fn get(self) -> u64 {
        self.0
    }
}

/// A clip of one [`Clips`]: what [`Player`](super::Player)'s commands take.
/// Made by [`Clips::clip`] (by name), [`Clips::clip_at`] (by index) or
/// [`Player::clip`](super::Player::clip); a player refuses a handle of
/// another `Clips` ([`PlaybackError::ClipOfOtherLibrary`]), so that a
/// clip of one model never plays the clip of the same index of another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClipHandle {
    clips: ClipsId,
    index: u32,
}

impl ClipHandle {
    /// The clip's index in its library (what an
    /// [`Action`](crate::Action) names).
    #[must_use]
    pub fn index(self) -> u32 {
        self.index
    }

    /// The [`Clips`] it belongs to.
    #[must_use]
    pub fn clips(self) -> ClipsId {
        self.clips
    }
}

/// What players of one library share: clip names, durations, markers, and
/// the root's tracks for root motion. Built once, shared through an `Arc`;
/// its [`id`](Self::id) is in every [`ClipHandle`] it gives.
#[derive(Debug, Clone)]
pub struct Clips {
    id: ClipsId,
    names: Vec<Arc<str>>,
    durations: Vec<f64>,
    markers: Vec<Vec<Marker>>,
    /// Per clip, its duration in ticks and in seconds, as the playback
    /// pass reads it.
    table: Vec<GpuPlaybackClip>,
    pub(super) root: Option<RootTracks>,
    /// Its blend spaces ([`Clips::add_blend_space`]), checked.
    pub(super) spaces: Vec<super::BlendSpace>,
}

impl Clips {
    /// The clips of `library`: their names, durations and markers
    /// ([`Clip::markers`](crate::Clip::markers)), no root motion.
    #[must_use]
    pub fn new(library: &AnimationLibrary) -> Clips {
        let durations: Vec<f64> = library
            .clips()
            .iter()
            .map(|c| f64::from(c.duration()))
            .collect();
        Clips {
            id: ClipsId(NEXT_CLIPS.fetch_add(1, Ordering::Relaxed)),
            names: library
                .clips()
                .iter()
                .map(|c| c.name.as_str().into())
                .collect(),
            markers: library
                .clips()
                .iter()
                .map(|c| {
                    let mut markers = c.markers.clone();
                    markers.sort_by(|a, b| a.time.total_cmp(&b.time));
                    markers
                })
                .collect(),
            table: library
                .clips()
                .iter()
                .map(|c| {
                    let (ticks_lo, ticks_hi) = split(duration_ticks(f64::from(c.duration())));
                    GpuPlaybackClip {
                        ticks_lo,
                        ticks_hi,
                        duration: c.duration(),
                        ..bytemuck::Zeroable::zeroed()
                    }
                })
                .collect(),
            durations,
            root: None,
            spaces: Vec::new(),
        }
    }

    /// The clips of `bound`'s library with root motion of rig node `root`
    /// (its translation and rotation tracks in each clip, reported in the
    /// model's space: [`RootMotion`](super::RootMotion)). A clip that
    /// animates neither moves the root by nothing.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownRoot`] for a node the rig does not have.
    pub fn with_root(bound: &BoundLibrary, root: u32) -> Result<Clips> {
        let mut clips = Clips::new(bound.library());
        let mut tracks = RootTracks::of(bound, root)?;
        tracks.set_durations(&clips.durations);
        clips.root = Some(tracks);
        Ok(clips)
    }

    /// Takes the mixer's masks ([`MixerDesc::masks`](crate::MixerDesc::masks),
    /// in the order of their [`MaskId`](crate::MaskId)s), so that a masked
    /// action's root motion weighs by its mask's factor at the root node,
    /// as the mixer weighs its pose. Without them (or without
    /// [`with_root`](Self::with_root)) a masked action moves no root.
    ///
    /// # Errors
    /// [`MixError::MaskOfOtherRig`](crate::MixError::MaskOfOtherRig) or
    /// [`MixError::MaskLength`](crate::MixError::MaskLength) for a mask of
    /// another rig than `bound`'s.
    pub fn set_masks(&mut self, bound: &BoundLibrary, masks: &[Mask]) -> Result<()> {
        crate::model::mix::check_masks(bound.rig(), masks)?;
        if let Some(root) = &mut self.root {
            root.set_masks(masks);
        }
        Ok(())
    }

    /// Adds a marker `name` at clip time `time` of clip `clip` (its index;
    /// a time in `[0, duration]`, a time past the clip is kept and never
    /// crossed).
    ///
    /// # Errors
    /// [`PlaybackError::BadMarker`] for an unknown clip or a time that is
    /// NaN, infinite or negative.
    pub fn add_marker(&mut self, clip: u32, time: f64, name: &str) -> Result<()> {
        let bad = |reason| PlaybackError::BadMarker {
            clip,
            time,
            name: name.to_owned(),
            reason,
        };
        let Some(list) = self.markers.get_mut(clip as usize) else {
            return Err(bad("the library has no such clip").into());
        };
        if !time.is_finite() || time < 0.0 {
            return Err(bad("the time is not a finite number >= 0").into());
        }
        list.push(Marker {
            time,
            name: name.into(),
        });
        list.sort_by(|a, b| a.time.total_cmp(&b.time));
        Ok(())
    }

    /// Its identity, carried by its handles (and kept by its clones).
    #[must_use]
    pub fn id(&self) -> ClipsId {
        self.id
    }

    /// The first clip named `name`.
    ///
    /// # Errors
    /// [`PlaybackError::NoClipNamed`].
    pub fn clip(&self, name: &str) -> Result<ClipHandle> {
        let index = self.names.iter().position(|n| &**n == name);
        match index.and_then(|i| u32::try_from(i).ok()) {
            Some(index) => Ok(self.handle(index)),
            None => Err(PlaybackError::NoClipNamed {
                name: name.to_owned(),
                clip_count: self.len(),
            }
            .into()),
        }
    }

    /// Clip `index` of the library.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownClip`] for an index out of range.
    pub fn clip_at(&self, index: u32) -> Result<ClipHandle> {
        if (index as usize) < self.len() {
            return Ok(self.handle(index));
        }
        Err(PlaybackError::UnknownClip {
            clip: index,
            clip_count: self.len(),
        }
        .into())
    }

    /// A handle of clip `index` (in range).
    pub(super) fn handle(&self, index: u32) -> ClipHandle {
        ClipHandle {
            clips: self.id,
            index,
        }
    }

    /// Why these are not the clips of `library` (their count, a name or
    /// a duration differs); `None` when they are: a library and its
    /// [`in_place`](super::in_place) copy have the same clips.
    pub(super) fn mismatch(&self, library: &AnimationLibrary) -> Option<String> {
        let theirs = library.clips();
        if theirs.len() != self.len() {
            return Some(format!(
                "{} here, {} in the model",
                crate::error::count(self.len() as u64, "clip"),
                theirs.len()
            ));
        }
        let ours = self.names.iter().zip(&self.durations);
        let (i, ((name, duration), c)) = ours
            .zip(theirs)
            .enumerate()
            .find(|(_, ((n, d), c))| ***n != *c.name || **d != f64::from(c.duration()))?;
        Some(format!(
            "clip {i} is {name:?} of {duration} s here, {:?} of {} s in the model",
            c.name,
            c.duration()
        ))
    }

    /// Clips in the library.
    pub(crate) fn len(&self) -> usize {
        self.durations.len()
    }

    /// The duration in seconds of clip `index`.
    #[must_use]
    pub fn duration(&self, index: u32) -> Option<f64> {
        self.durations.get(index as usize).copied()
    }

    /// What the playback pass reads of these clips: durations, markers
    /// (in ticks) and the root's motion (with
    /// [`with_root`](Self::with_root)).
    pub(crate) fn playback_tables(&self) -> PlaybackTables {
        let mut tables = PlaybackTables {
            clips: self.table.clone(),
            ..PlaybackTables::default()
        };
        for (clip, markers) in tables.clips.iter_mut().zip(&self.markers) {
            clip.marker_first = tables.markers.len() as u32;
            clip.marker_count = markers.len() as u32;
            clip.root_translation = NO_TRACK;
            clip.root_rotation = NO_TRACK;
            for m in markers {
                let (lo, hi) = split(duration_ticks(m.time));
                tables.markers.push([lo, hi]);
            }
        }
        if let Some(root) = &self.root {
            root.fill(&self.durations, &mut tables);
        }
        tables
    }

    /// Every clip's duration in ticks and seconds, as the playback pass
    /// reads them.
    pub(crate) fn table(&self) -> &[GpuPlaybackClip] {
        &self.table
    }

    /// The markers of clip `index`, by time.
    #[must_use]
    pub(crate) fn markers(&self, index: u32) -> &[Marker] {
        self.markers.get(index as usize).map_or(&[], Vec::as_slice)
    }

    /// Whether `library` has the clips these were made of: as many, with
    /// the same names and durations, in the same order (a library
    /// [`in_place`](super::in_place) or compressed from the one these
    /// came from has them; another model's has not). The check
    /// `GpuPlayers::new` makes before it ties a model to these clips.
    pub(crate) fn fits(&self, library: &AnimationLibrary) -> bool {
        let clips = library.clips();
        clips.len() == self.len()
            && clips
                .iter()
                .zip(&self.names)
                .zip(&self.durations)
                .all(|((c, name), &duration)| {
                    c.name == **name && f64::from(c.duration()) == duration
                })
    }
}
