//! The mixer's model: [`Action`]s (what a character plays, how strongly,
//! through which [`Mask`], normal or additive), masks, their errors
//! ([`MixError`]) and the mixer's description ([`MixerDesc`]). The
//! packing of one frame's actions into the tables the mix pass reads is
//! `tables::mix`, shared by the GPU path
//! (`Animator::with_mixer`) and the CPU twin (`cpu::mix`).
//!
//! The blending rules are those of three.js's `AnimationMixer`, with masks
//! added; `docs/USAGE.md` ("Blending") states them and
//! `shaders/mix.wgsl` implements them.

/// The hard maximum of actions per character (WGSL `MAX_ACTIONS`): the
/// mixer's loop bound, and the most
/// [`MixerDesc::actions_per_character`] may ask for.
pub const MAX_ACTIONS: u32 = 16;
use crate::error::MixError;
use crate::model::rig::{Rig, RigId};
use crate::model::track::WrapMode;

/// One action of a character for one frame: a clip played at a time,
/// blended with a weight, optionally through a mask, normal (weighed
/// among the others), additive or override.
///
/// ```
/// use keyframe_gpu::{Action, WrapMode};
/// // A walk fading out (weight 0.25) under a run fading in (0.75), and a
/// // breathing clip added on top, relative to its first frame.
/// let actions = [
///     Action::new(0, 1.30).with_weight(0.25).with_wrap(WrapMode::Repeat),
///     Action::new(1, 0.42).with_weight(0.75).with_wrap(WrapMode::Repeat),
///     Action::new(2, 3.0).additive(0.0).with_wrap(WrapMode::Repeat),
/// ];
/// assert_eq!(actions[2].reference_time, Some(0.0));
/// // A wave replacing whatever lies under it (through a mask, in a game).
/// let wave = Action::new(3, 0.5).overriding();
/// assert!(wave.overrides);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Action {
    /// The clip (index in the library).
    pub clip: u32,
    /// Playback time in seconds, mapped by `wrap` (as an [`Instance`](crate::Instance)'s).
    pub time: f64,
    /// How `time` (and the reference time) map into the clip.
    pub wrap: WrapMode,
    /// The weight: finite and `>= 0` (0 leaves the action out).
    pub weight: f32,
    /// The mask ([`MixerDesc::add_mask`] gave its handle), `None` for
    /// every node at factor 1.
    pub mask: Option<MaskId>,
    /// `Some(reference time)`: an additive action, which adds the
    /// difference between its clip at `time` and at the reference time
    /// (mapped by `wrap`) on top of the normal actions; `None`: a normal
    /// or override action.
    pub reference_time: Option<f64>,
    /// An override action: it replaces what the normal actions (and the
    /// rest pose) give, by its weight times its mask's factor (a factor of
    /// 1 or more replaces it outright), after them and before any
    /// additive action (`docs/USAGE.md`, "The rules", rule 3). An action
    /// is additive or override, not both
    /// ([`MixError::AdditiveOverride`]).
    pub overrides: bool,
}

impl Action {
    /// A normal action of `clip` at `time`, weight 1, no mask, clamped.
    #[must_use]
    pub fn new(clip: u32, time: f64) -> Self {
        Action {
            clip,
            time,
            wrap: WrapMode::Clamp,
            weight: 1.0,
            mask: None,
            reference_time: None,
            overrides: false,
        }
    }

    /// The same action with weight `weight`.
    #[must_use]
    pub fn with_weight(self, weight: f32) -> Self {
        Action { weight, ..self }
    }

    /// The same action with wrap mode `wrap`.
    #[must_use]
    pub fn with_wrap(self, wrap: WrapMode) -> Self {
        Action { wrap, ..self }
    }

    /// The same action through mask `mask`.
    #[must_use]
    pub fn with_mask(self, mask: MaskId) -> Self {
        Action {
            mask: Some(mask),
            ..self
        }
    }

    /// The same action, additive, relative to its clip at
    /// `reference_time` (three.js's `makeClipAdditive` reference; 0 is the
    /// usual choice).
    #[must_use]
    pub fn additive(self, reference_time: f64) -> Self {
        Action {
            reference_time: Some(reference_time),
            ..self
        }
    }

    /// The same action as an override action ([`Action::overrides`]):
    /// through a mask, an upper-body clip replacing the walk under it
    /// there (Unity's override layers, Unreal's layered blend per bone).
    #[must_use]
    pub fn overriding(self) -> Self {
        Action {
            overrides: true,
            ..self
        }
    }
}

/// A factor in `[0, 1]` per node of a rig: how much of an action reaches
/// each node (0: the action does not touch the node, exactly as if its
/// clip had no track for it). Built once for one rig, given to the mixer
/// at creation ([`MixerDesc::add_mask`]) and named by its [`MaskId`] from
/// [`Action::mask`]. A mask made for one rig is refused on any other
/// ([`MixError::MaskOfOtherRig`]), even one with as many nodes.
///
/// An override action ([`Action::overriding`]) through a mask replaces
/// the pose under it on the mask's nodes: an upper-body clip over a walk.
#[derive(Debug, Clone, PartialEq)]
pub struct Mask {
    factors: Vec<f32>,
    rig: RigId,
}

/// The handle of a mask of a mixer: what [`MixerDesc::add_mask`] returns,
/// for [`Action::with_mask`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MaskId(u32);

impl MaskId {
    /// The handle of the mask at `index` of [`MixerDesc::masks`] (the
    /// `index`-th mask added).
    #[must_use]
    pub fn new(index: u32) -> Self {
        MaskId(index)
    }

    /// Its index among the mixer's masks.
    #[must_use]
    pub fn index(self) -> u32 {
        self.0
    }
}

impl Mask {
    /// Factor 1 on `nodes`, 0 elsewhere.
    ///
    /// # Errors
    /// [`MixError::MaskNodeOutOfRange`].
    pub fn nodes(rig: &Rig, nodes: &[u32]) -> Result<Self, MixError> {
        let mut mask = Mask::filled(rig, 0.0)?;
        for &n in nodes {
            mask.set(n, 1.0)?;
        }
        Ok(mask)
    }

    /// Factor 1 on `root` and every node below it, 0 elsewhere.
    ///
    /// # Errors
    /// [`MixError::MaskNodeOutOfRange`].
    pub fn subtree(rig: &Rig, root: u32) -> Result<Self, MixError> {
        let count = rig.nodes().len();
        if root as usize >= count {
            return Err(MixError::MaskNodeOutOfRange {
                node: root,
                node_count: count,
            });
        }
        // A node is in the subtree when walking up its parents reaches
        // `root` (a rig's parents form a forest: the walk ends).
        let factors = (0..count)
            .map(|n| {
                let mut at = Some(n as u32);
                let mut steps = 0;
                while let Some(a) = at {
                    if a == root {
                        return 1.0;
                    }
                    steps += 1;
                    if steps > count {
                        break;
                    }
                    at = rig.nodes().get(a as usize).and_then(|node| node.parent);
                }
                0.0
            })
            .collect();
        Ok(Mask {
            factors,
            rig: rig.id(),
        })
    }

    /// Every node at `factor`; [`set`](Self::set) changes single nodes.
    ///
    /// # Errors
    /// [`MixError::MaskFactor`] (node `u32::MAX` in the error) when
    /// `factor` is not in `[0, 1]`.
    pub fn filled(rig: &Rig, factor: f32) -> Result<Self, MixError> {
        check_factor(u32::MAX, factor)?;
        Ok(Mask {
            factors: vec![factor; rig.nodes().len()],
            rig: rig.id(),
        })
    }

    /// One factor per node of `rig`, in node order.
    ///
    /// # Errors
    /// [`MixError::MaskLength`] or [`MixError::MaskFactor`].
    pub fn from_factors(rig: &Rig, factors: Vec<f32>) -> Result<Self, MixError> {
        if factors.len() != rig.nodes().len() {
            return Err(MixError::MaskLength {
                len: factors.len(),
                node_count: rig.nodes().len(),
            });
        }
        for (n, &f) in factors.iter().enumerate() {
            check_factor(n as u32, f)?;
        }
        Ok(Mask {
            factors,
            rig: rig.id(),
        })
    }

    /// Sets `node`'s factor.
    ///
    /// # Errors
    /// [`MixError::MaskNodeOutOfRange`] or [`MixError::MaskFactor`].
    pub fn set(&mut self, node: u32, factor: f32) -> Result<(), MixError> {
        let node_count = self.factors.len();
        let slot = self
            .factors
            .get_mut(node as usize)
            .ok_or(MixError::MaskNodeOutOfRange { node, node_count })?;
        check_factor(node, factor)?;
        *slot = factor;
        Ok(())
    }

    /// The factor of `node` (`None` out of range): `factors()[node]`.
    pub(crate) fn factor(&self, node: u32) -> Option<f32> {
        self.factors.get(node as usize).copied()
    }

    /// Every factor, in node order.
    #[must_use]
    pub fn factors(&self) -> &[f32] {
        &self.factors
    }

    /// The complement: factor `1 - f` for each node's `f`, for the same
    /// rig (the lower body of an upper-body mask).
    #[must_use]
    pub fn inverted(&self) -> Mask {
        Mask {
            factors: self.factors.iter().map(|f| 1.0 - f).collect(),
            rig: self.rig,
        }
    }
}

fn check_factor(node: u32, factor: f32) -> Result<(), MixError> {
    if (0.0..=1.0).contains(&factor) {
        Ok(())
    } else {
        Err(MixError::MaskFactor { node, factor })
    }
}

/// How a mixer is created (`Animator::with_mixer`): its capacity and
/// its masks (uploaded once, like clips).
#[derive(Debug, Clone, PartialEq)]
pub struct MixerDesc {
    /// The most characters per frame.
    pub characters: u32,
    /// The most actions per character (1 to [`MAX_ACTIONS`]).
    pub actions_per_character: u32,
    /// The masks that [`Action::mask`] names, in the order of their
    /// [`MaskId`]s.
    pub masks: Vec<Mask>,
}

impl MixerDesc {
    /// A mixer for up to `characters` characters of up to
    /// `actions_per_character` actions each, without masks.
    #[must_use]
    pub fn new(characters: u32, actions_per_character: u32) -> Self {
        MixerDesc {
            characters,
            actions_per_character,
            masks: Vec::new(),
        }
    }

    /// Adds a mask and returns its handle for [`Action::with_mask`].
    pub fn add_mask(&mut self, mask: Mask) -> MaskId {
        self.masks.push(mask);
        MaskId(self.masks.len() as u32 - 1)
    }
}

/// Checks a mixer's capacity and masks against the rig.
pub(crate) fn check_desc(rig: &Rig, desc: &MixerDesc) -> Result<(), MixError> {
    if desc.actions_per_character == 0 || desc.actions_per_character > MAX_ACTIONS {
        return Err(MixError::ActionCapacity {
            asked: desc.actions_per_character,
            max: MAX_ACTIONS,
        });
    }
    check_masks(rig, &desc.masks)
}

/// Every mask is one of `rig`'s, with a factor per node.
pub(crate) fn check_masks(rig: &Rig, masks: &[Mask]) -> Result<(), MixError> {
    for (m, mask) in masks.iter().enumerate() {
        if mask.rig != rig.id() {
            return Err(MixError::MaskOfOtherRig { mask: m });
        }
        if mask.factors.len() != rig.nodes().len() {
            return Err(MixError::MaskLength {
                len: mask.factors.len(),
                node_count: rig.nodes().len(),
            });
        }
    }
    Ok(())
}
