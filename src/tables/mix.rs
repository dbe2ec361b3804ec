//! One frame's actions packed into the tables the mix pass reads: the
//! sampler rows, the action records and each character's range
//! ([`Packer`]), and the masks' factor table.

use std::collections::HashMap;

use crate::error::MixError;
use crate::layout::{GpuMixAction, BLEND_ADDITIVE, BLEND_MIX, BLEND_OVERRIDE, NO_MASK, NO_ROW};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, Mask, MaskId};
use crate::model::track::WrapMode;

/// One frame's actions packed for the mix pass: the sampler rows (every
/// action's time, then each distinct reference time of the additive
/// actions, shared between actions of the same clip and reference), the
/// action records and each character's range. Allocated once for a
/// capacity; packing a frame allocates nothing.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct Packer {
    /// Sampler rows: row `a` is action `a` (flat index), the reference rows
    /// follow.
    pub rows: Vec<Instance>,
    /// The action records, in flat order.
    pub(crate) actions: Vec<GpuMixAction>,
    /// Per character: first action and count.
    pub characters: Vec<[u32; 2]>,
    references: HashMap<(u32, u32), u32>,
    reference_rows: Vec<Instance>,
    /// The most characters a frame may have.
    character_capacity: u32,
    /// The most actions per character.
    per_character: u32,
}

impl Packer {
    /// A packer for `characters * per_character` actions.
    #[must_use]
    pub fn new(characters: u32, per_character: u32) -> Self {
        let actions = characters as usize * per_character as usize;
        Packer {
            rows: Vec::with_capacity(2 * actions),
            actions: Vec::with_capacity(actions),
            characters: Vec::with_capacity(characters as usize),
            references: HashMap::with_capacity(actions),
            reference_rows: Vec::with_capacity(actions),
            character_capacity: characters,
            per_character,
        }
    }

    /// Checks every action, then packs them; on error nothing is changed.
    /// `counts[c]` actions of `actions` (consecutive, in list order) are
    /// character `c`'s; there may be as many characters and actions per
    /// character as the packer was made for, and `mask_count` masks.
    ///
    /// # Errors
    /// The action errors of [`MixError`], [`MixError::TooManyCharacters`]
    /// and [`MixError::CountMismatch`].
    pub fn pack(
        &mut self,
        library: &AnimationLibrary,
        mask_count: usize,
        actions: &[Action],
        counts: &[u32],
    ) -> Result<(), MixError> {
        let limits = (mask_count, self.character_capacity, self.per_character);
        check(library, limits, actions, counts)?;
        self.rows.clear();
        self.actions.clear();
        self.characters.clear();
        self.references.clear();
        self.reference_rows.clear();
        let durations = library.durations();
        let first_reference = actions.len() as u32;
        let mut first = 0u32;
        for &count in counts {
            self.characters.push([first, count]);
            for a in &actions[first as usize..(first + count) as usize] {
                let row = self.rows.len() as u32;
                self.rows.push(Instance {
                    clip: a.clip,
                    time: a.time,
                    wrap: a.wrap,
                });
                let reference_row = match a.reference_time {
                    None => NO_ROW,
                    Some(reference) => {
                        // Checked: the clip is in range.
                        let duration = durations.get(a.clip as usize).copied().unwrap_or(0.0);
                        let at = a.wrap.clip_time(reference, duration);
                        let next = first_reference + self.reference_rows.len() as u32;
                        *self
                            .references
                            .entry((a.clip, at.to_bits()))
                            .or_insert_with(|| {
                                self.reference_rows.push(Instance {
                                    clip: a.clip,
                                    time: f64::from(at),
                                    wrap: WrapMode::Clamp,
                                });
                                next
                            })
                    }
                };
                self.actions.push(GpuMixAction {
                    row,
                    reference_row,
                    clip: a.clip,
                    mask: a.mask.map_or(NO_MASK, MaskId::index),
                    weight: a.weight,
                    blend: match (a.overrides, a.reference_time) {
                        (true, _) => BLEND_OVERRIDE,
                        (false, Some(_)) => BLEND_ADDITIVE,
                        (false, None) => BLEND_MIX,
                    },
                });
            }
            first += count;
        }
        self.rows.extend_from_slice(&self.reference_rows);
        Ok(())
    }

    /// Packs one normal action of weight 1 per instance (an animator with
    /// a mixer given plain instances).
    pub(crate) fn pack_instances(&mut self, instances: &[Instance]) {
        self.rows.clear();
        self.actions.clear();
        self.characters.clear();
        for (i, inst) in instances.iter().enumerate() {
            self.rows.push(*inst);
            self.characters.push([i as u32, 1]);
            self.actions.push(GpuMixAction {
                row: i as u32,
                reference_row: NO_ROW,
                clip: inst.clip,
                mask: NO_MASK,
                weight: 1.0,
                blend: BLEND_MIX,
            });
        }
    }
}

/// Every check of [`Packer::pack`], before anything is written, with
/// `limits` the mask count, the most characters and the most actions per
/// character.
fn check(
    library: &AnimationLibrary,
    limits: (usize, u32, u32),
    actions: &[Action],
    counts: &[u32],
) -> Result<(), MixError> {
    let (mask_count, character_capacity, per_character) = limits;
    if counts.len() > character_capacity as usize {
        return Err(MixError::TooManyCharacters {
            count: counts.len(),
            capacity: character_capacity,
        });
    }
    let counted: u64 = counts.iter().map(|&c| u64::from(c)).sum();
    if counted != actions.len() as u64 {
        return Err(MixError::CountMismatch {
            counted,
            actions: actions.len(),
        });
    }
    let clip_count = library.clips().len();
    let mut first = 0usize;
    for (character, &count) in counts.iter().enumerate() {
        if count > per_character {
            return Err(MixError::TooManyActions {
                character,
                count,
                capacity: per_character,
            });
        }
        for (action, a) in actions[first..first + count as usize].iter().enumerate() {
            if a.clip as usize >= clip_count {
                return Err(MixError::UnknownClip {
                    character,
                    action,
                    clip: a.clip,
                    clip_count,
                });
            }
            if let Some(mask) = a.mask.map(MaskId::index) {
                if mask as usize >= mask_count {
                    return Err(MixError::UnknownMask {
                        character,
                        action,
                        mask,
                        mask_count,
                    });
                }
            }
            if !(a.weight.is_finite() && a.weight >= 0.0) {
                return Err(MixError::BadWeight {
                    character,
                    action,
                    weight: a.weight,
                });
            }
            if a.overrides && a.reference_time.is_some() {
                return Err(MixError::AdditiveOverride { character, action });
            }
            let times = [("time", Some(a.time)), ("reference time", a.reference_time)];
            for (field, time) in times {
                if let Some(time) = time.filter(|t| !t.is_finite()) {
                    return Err(MixError::TimeNotFinite {
                        character,
                        action,
                        field,
                        time,
                    });
                }
            }
        }
        first += count as usize;
    }
    Ok(())
}

/// The masks' factors, mask after mask (`mask * node_count + node`).
pub(crate) fn mask_table(masks: &[Mask]) -> Vec<f32> {
    masks
        .iter()
        .flat_map(|m| m.factors().iter().copied())
        .collect()
}
