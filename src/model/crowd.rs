//! The device-free side of a crowd: its models ([`CrowdModels`]: each a
//! library bound to a rig, or a library alone, with an optional mixer,
//! and the characters that hold its slots), the handles that name them
//! ([`ModelId`], [`ClipRef`], [`CharacterId`]), one frame's entries
//! ([`CrowdInstance`], [`CrowdCharacter`]) and results ([`CrowdPoses`]).
//! The GPU `Crowd` holds a [`CrowdModels`] beside its
//! animators, and the CPU twin
//! (`cpu::crowd_poses`,
//! `cpu::crowd_mixed_poses`) takes the
//! same value, so both place a frame's entries in the models' slots by
//! the same checks ([`Placement`], [`ModelFrame`]).

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::MixError;
use crate::error::{Error, Result};
use crate::model::instance::Instance;
use crate::model::library::AnimationLibrary;
use crate::model::mix::{Action, MaskId, MixerDesc};
use crate::model::poses::{Comparison, Poses};
use crate::model::track::WrapMode;
use crate::model::BoundLibrary;

/// Tells crowds apart, so that an id of one crowd is never taken for a
/// model of another.
static NEXT_CROWD: AtomicU64 = AtomicU64::new(0);

/// A model of a `Crowd`, as returned by
/// `Crowd::add_model`. Only valid in the crowd
/// that made it, while the model is in it: another crowd, or the crowd
/// after `Crowd::remove_model`, refuses it as
/// unknown. Adding, growing or removing other models never changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ModelId {
    crowd: u64,
    index: u32,
}

impl ModelId {
    /// The model's index in its crowd, in the order the models were added
    /// (a removed model's index is never given to another).
    pub(crate) fn index(self) -> usize {
        self.index as usize
    }
}

/// A clip of one model of a `Crowd`: made by
/// [`CrowdModels::clip`] or [`CrowdModels::clip_at`], so it always says which
/// model it belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClipRef {
    model: ModelId,
    clip: u32,
}

impl ClipRef {
    /// The model the clip belongs to.
    #[must_use]
    pub fn model(self) -> ModelId {
        self.model
    }

    /// The clip's index in its model's [`AnimationLibrary`] (what an
    /// [`Action`] of that model names).
    #[must_use]
    pub fn clip(self) -> u32 {
        self.clip
    }
}

/// A character of a `Crowd`'s model (`Crowd::add_character`): it holds
/// one slot of its model's buffers until it is removed, whatever other
/// characters and models come, grow or go, so a renderer's per-character
/// data stays where it is. A frame names it with
/// [`CrowdInstance::of`] or [`CrowdCharacter::of`]. A removed character's
/// handle is refused, even when its slot holds another character since.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CharacterId {
    model: ModelId,
    slot: u32,
    serial: u32,
}

impl CharacterId {
    /// The character's model.
    #[must_use]
    pub fn model(self) -> ModelId {
        self.model
    }

    /// The character's slot in its model's buffers: chunk
    /// `slot / chunk_capacity`, index `slot % chunk_capacity`
    /// (the model animator's `Animator::chunk_capacity`).
    #[must_use]
    pub fn slot(self) -> u32 {
        self.slot
    }
}

/// A character's slot and serial, as a frame entry carries it.
type Held = (u32, u32);

/// One character of a crowd for one frame: which model it is, which of
/// that model's clips it plays, at what time, and how the time wraps.
/// Made by [`new`](Self::new) (the entry takes the model's next free slot
/// in frame order) or [`of`](Self::of) (the slot of a character added
/// with `Crowd::add_character`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrowdInstance {
    /// The instance's model.
    pub model: ModelId,
    /// The clip it plays: must be a clip of `model`.
    pub clip: ClipRef,
    /// Playback time in seconds (see [`Instance::time`]).
    pub time: f64,
    /// How `time` maps to clip time.
    pub wrap: WrapMode,
    character: Option<Held>,
}

impl CrowdInstance {
    /// An instance of `model` playing `clip` at `time` with
    /// [`WrapMode::Clamp`], in the model's next free slot.
    #[must_use]
    pub fn new(model: ModelId, clip: ClipRef, time: f64) -> Self {
        CrowdInstance {
            model,
            clip,
            time,
            wrap: WrapMode::Clamp,
            character: None,
        }
    }

    /// Character `character` playing `clip` at `time` with
    /// [`WrapMode::Clamp`], in the character's slot.
    #[must_use]
    pub fn of(character: CharacterId, clip: ClipRef, time: f64) -> Self {
        CrowdInstance {
            character: Some((character.slot, character.serial)),
            ..CrowdInstance::new(character.model, clip, time)
        }
    }

    /// The same instance with another wrap mode.
    #[must_use]
    pub fn with_wrap(self, wrap: WrapMode) -> Self {
        CrowdInstance { wrap, ..self }
    }
}

/// One character of a crowd's mixed frame
/// (`Crowd::set_actions`): its model (one
/// added with a mixer) and how many of the frame's actions, consecutive
/// and in list order, are its own. Its actions name clips of its model
/// ([`ClipRef::clip`]) and masks of its model's [`MixerDesc`]. Made by
/// [`new`](Self::new) (the model's next free slot in frame order) or
/// [`of`](Self::of) (a character's slot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrowdCharacter {
    /// The character's model.
    pub model: ModelId,
    /// How many actions of the frame's list are the character's.
    pub action_count: u32,
    character: Option<Held>,
}

impl CrowdCharacter {
    /// A character of `model` whose actions are the next `action_count`
    /// of the frame's list, in the model's next free slot.
    #[must_use]
    pub fn new(model: ModelId, action_count: u32) -> Self {
        CrowdCharacter {
            model,
            action_count,
            character: None,
        }
    }

    /// Character `character`, whose actions are the next `action_count`
    /// of the frame's list, in the character's slot.
    #[must_use]
    pub fn of(character: CharacterId, action_count: u32) -> Self {
        CrowdCharacter {
            character: Some((character.slot, character.serial)),
            ..CrowdCharacter::new(character.model, action_count)
        }
    }
}

/// What a model animates: a rig (posed, skinned) or, without one, the
/// sampled values alone.
#[derive(Debug, Clone)]
pub(crate) enum ModelSource {
    /// A library bound to the model's rig.
    Bound(BoundLibrary),
    /// A library sampled without a rig.
    Sampled(AnimationLibrary),
}

/// The characters that hold a model's slots: per slot whether one holds
/// it and the serial of the last one that did, and the slots freed below
/// the highest ever held (a min-heap, so that a new character takes the
/// lowest free slot without scanning every slot: adding `n` characters
/// costs `O(n log n)`, not `O(n^2)`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Slots {
    held: Vec<bool>,
    serials: Vec<u32>,
    freed: std::collections::BinaryHeap<std::cmp::Reverse<u32>>,
    live: u32,
}

impl Slots {
    fn holds(&self, (slot, serial): Held) -> bool {
        self.held.get(slot as usize).copied().unwrap_or(false)
            && self.serials.get(slot as usize) == Some(&serial)
    }

    /// The slot the next character takes: the lowest free one.
    fn next_free(&self) -> usize {
        self.freed.peek().map_or(self.held.len(), |f| f.0 as usize)
    }

    /// Holds `next_free()`, returning it.
    fn take(&mut self) -> usize {
        let slot = self.next_free();
        if slot == self.held.len() {
            self.held.push(true);
            self.serials.push(0);
        } else {
            self.freed.pop();
            self.held[slot] = true;
        }
        self.live += 1;
        slot
    }

    /// Frees a held slot; its serial moves on, so old handles are refused.
    fn free(&mut self, slot: u32) {
        let i = slot as usize;
        self.held[i] = false;
        self.freed.push(std::cmp::Reverse(slot));
        self.serials[i] = self.serials[i].wrapping_add(1);
        self.live -= 1;
    }
}

/// One model of a crowd: its name, what it animates, its mixer, its
/// capacity (instances, or with a mixer characters, per frame) and its
/// characters.
#[derive(Debug, Clone)]
pub(crate) struct CrowdModel {
    pub(crate) name: String,
    pub(crate) source: ModelSource,
    pub(crate) mixer: Option<MixerDesc>,
    pub(crate) capacity: u32,
    pub(crate) slots: Slots,
}

impl CrowdModel {
    /// A model without characters yet.
    pub(crate) fn new(
        name: &str,
        source: ModelSource,
        mixer: Option<MixerDesc>,
        capacity: u32,
    ) -> Self {
        CrowdModel {
            name: name.to_owned(),
            source,
            mixer,
            capacity,
            slots: Slots::default(),
        }
    }

    pub(crate) fn library(&self) -> &AnimationLibrary {
        match &self.source {
            ModelSource::Bound(b) => b.library(),
            ModelSource::Sampled(l) => l,
        }
    }
}

/// The models of a crowd, without a device: names, libraries (bound or
/// sampled alone), mixers, capacities and characters.
/// `Crowd::models` gives a crowd's; the CPU twin
/// takes it.
#[derive(Debug, Clone)]
pub struct CrowdModels {
    id: u64,
    /// By index; `None` for a removed model.
    pub(crate) models: Vec<Option<CrowdModel>>,
}

impl Default for CrowdModels {
    fn default() -> Self {
        Self::new()
    }
}

/// "instance" or "character": what a frame's entries are, as errors name
/// them.
pub(crate) const INSTANCE: &str = "instance";
/// See [`INSTANCE`].
pub(crate) const CHARACTER: &str = "character";

impl CrowdModels {
    /// No model yet, with an identity of its own (ids of other crowds are
    /// refused).
    #[must_use]
    pub(crate) fn new() -> Self {
        CrowdModels {
            id: NEXT_CROWD.fetch_add(1, Ordering::Relaxed),
            models: Vec::new(),
        }
    }

    /// [`Error::DuplicateModel`] when a model is named `name` already.
    pub(crate) fn check_name(&self, name: &str) -> Result<()> {
        if self.live().any(|(_, m)| m.name == name) {
            return Err(Error::DuplicateModel {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    /// The id the next model added gets.
    pub(crate) fn next_id(&self) -> Result<ModelId> {
        let index = u32::try_from(self.models.len()).map_err(|_| Error::LimitExceeded {
            what: "models in a crowd",
            needed: self.models.len() as u64 + 1,
            limit_name: "u32::MAX",
            limit: u64::from(u32::MAX),
        })?;
        Ok(ModelId {
            crowd: self.id,
            index,
        })
    }

    /// Adds `model` (checked by the caller: its name is new).
    pub(crate) fn push(&mut self, model: CrowdModel) -> Result<ModelId> {
        let id = self.next_id()?;
        self.models.push(Some(model));
        Ok(id)
    }

    /// The models in the crowd, with their indices.
    pub(crate) fn live(&self) -> impl Iterator<Item = (usize, &CrowdModel)> + '_ {
        self.models
            .iter()
            .enumerate()
            .filter_map(|(i, m)| Some((i, m.as_ref()?)))
    }

    /// The model's index, when `id` is a model of this crowd.
    pub(crate) fn index(&self, id: ModelId) -> Option<usize> {
        let i = id.index as usize;
        (id.crowd == self.id && self.models.get(i)?.is_some()).then_some(i)
    }

    /// The model of `id`, when it is one of this crowd.
    pub(crate) fn get(&self, id: ModelId) -> Option<&CrowdModel> {
        self.models.get(self.index(id)?)?.as_ref()
    }

    fn get_mut(&mut self, id: ModelId) -> Option<&mut CrowdModel> {
        let i = self.index(id)?;
        self.models.get_mut(i)?.as_mut()
    }

    /// The id of the model at `index`.
    pub(crate) fn id_at(&self, index: usize) -> ModelId {
        ModelId {
            crowd: self.id,
            index: index as u32,
        }
    }

    /// The models' ids, in the order they were added.
    pub fn model_ids(&self) -> impl Iterator<Item = ModelId> + '_ {
        self.live().map(|(i, _)| self.id_at(i))
    }

    /// The model named `name`.
    #[must_use]
    pub fn model_by_name(&self, name: &str) -> Option<ModelId> {
        let (index, _) = self.live().find(|(_, m)| m.name == name)?;
        Some(self.id_at(index))
    }

    /// The model's name; `None` when `id` is not a model of this crowd.
    #[must_use]
    pub fn name(&self, id: ModelId) -> Option<&str> {
        Some(self.get(id)?.name.as_str())
    }

    /// The model's library (bound or sampled alone).
    #[must_use]
    pub fn library(&self, id: ModelId) -> Option<&AnimationLibrary> {
        Some(self.get(id)?.library())
    }

    /// The model's bound library; `None` for a model sampled without a
    /// rig, or an id of another crowd.
    #[must_use]
    pub fn bound(&self, id: ModelId) -> Option<&BoundLibrary> {
        match &self.get(id)?.source {
            ModelSource::Bound(b) => Some(b),
            ModelSource::Sampled(_) => None,
        }
    }

    /// The clip named `name` of model `model`; `None` when the model has no
    /// such clip (or is not a model of this crowd).
    #[must_use]
    pub fn clip(&self, model: ModelId, name: &str) -> Option<ClipRef> {
        let clip = self.get(model)?.library().clip_by_name(name)?;
        Some(ClipRef { model, clip })
    }

    /// Clip `index` of model `model`'s library; `None` out of range.
    #[must_use]
    pub fn clip_at(&self, model: ModelId, index: u32) -> Option<ClipRef> {
        let m = self.get(model)?;
        ((index as usize) < m.library().clips().len()).then_some(ClipRef { model, clip: index })
    }

    /// Removes the model (its characters go with it).
    pub(crate) fn remove(&mut self, id: ModelId) -> Option<CrowdModel> {
        let i = self.index(id)?;
        self.models.get_mut(i)?.take()
    }

    /// Sets the model's capacity (and its mixer's characters) to
    /// `capacity`; its characters keep their slots.
    pub(crate) fn grow(&mut self, id: ModelId, capacity: u32) {
        if let Some(m) = self.get_mut(id) {
            m.capacity = capacity;
            if let Some(desc) = &mut m.mixer {
                desc.characters = capacity;
            }
        }
    }

    /// A new character of model `model` in its lowest free slot.
    pub(crate) fn add_character(&mut self, model: ModelId) -> Result<CharacterId> {
        let index = self.index(model).ok_or(Error::UnknownModel {
            what: CHARACTER,
            entry: None,
            model: model.index(),
        })?;
        let Some(m) = self.models[index].as_mut() else {
            return Err(Error::UnknownModel {
                what: CHARACTER,
                entry: None,
                model: index,
            });
        };
        let s = &mut m.slots;
        let slot = s.next_free();
        if slot >= m.capacity as usize {
            return Err(Error::ModelFull {
                model: index,
                name: m.name.clone(),
                what: CHARACTER,
                requested: slot + 1,
                capacity: m.capacity,
            });
        }
        let slot = s.take();
        Ok(CharacterId {
            model,
            slot: slot as u32,
            serial: s.serials[slot],
        })
    }

    /// Whether the crowd holds character `id` (not removed, of this crowd).
    pub(crate) fn holds(&self, id: CharacterId) -> bool {
        self.get(id.model)
            .is_some_and(|m| m.slots.holds((id.slot, id.serial)))
    }

    /// Frees the character's slot; its handle is refused from now on.
    pub(crate) fn remove_character(&mut self, id: CharacterId) -> Result<()> {
        let unknown = Error::UnknownCharacter {
            what: CHARACTER,
            entry: None,
            model: id.model.index(),
            slot: id.slot,
        };
        let Some(m) = self.get_mut(id.model) else {
            return Err(unknown);
        };
        let s = &mut m.slots;
        if !s.holds((id.slot, id.serial)) {
            return Err(unknown);
        }
        s.free(id.slot);
        Ok(())
    }
}

/// No entry at this slot of a frame.
pub(crate) const VACANT: u32 = u32::MAX;

/// A frame's entries placed in their models' slots: the frame's checks
/// (every entry's model, character, clip and time; the models'
/// capacities) and where each entry goes. Reused frame after frame.
#[derive(Debug, Clone, Default)]
pub(crate) struct Placement {
    /// Per model index: the entry at each slot of this frame, [`VACANT`]
    /// where none (a character not named this frame); as long as the
    /// highest slot used.
    pub(crate) by_slot: Vec<Vec<u32>>,
    /// Per entry: its model's index and its slot.
    pub(crate) slots: Vec<(u32, u32)>,
    /// Per model index: entries without a character.
    free: Vec<u32>,
}

/// What each entry of a frame names, for [`Placement::place`].
struct Entry {
    model: ModelId,
    character: Option<Held>,
}

impl Placement {
    /// An empty placement with room for `models`' slots, so that placing
    /// a frame allocates nothing.
    pub(crate) fn reserve(&mut self, models: &CrowdModels, entries: usize) {
        self.by_slot.resize_with(models.models.len(), Vec::new);
        self.free.resize(models.models.len(), 0);
        for (i, m) in models.live() {
            let want = m.capacity as usize;
            let have = &mut self.by_slot[i];
            have.reserve(want.saturating_sub(have.len()));
        }
        self.slots.reserve(entries.saturating_sub(self.slots.len()));
    }

    /// Checks a frame's entries (`what` names them in errors) and places
    /// them: an entry of a character at its slot, an entry of a model
    /// alone at the model's lowest slot that no character holds and no
    /// earlier entry took. `check(i, model)` checks entry `i`'s own
    /// fields. Nothing is placed on error (the previous placement is
    /// lost: the caller keeps the one in effect).
    fn place(
        &mut self,
        models: &CrowdModels,
        what: &'static str,
        entries: impl Iterator<Item = Entry> + Clone,
        mut check: impl FnMut(usize, &CrowdModel) -> Result<()>,
    ) -> Result<()> {
        self.by_slot.resize_with(models.models.len(), Vec::new);
        self.free.clear();
        self.free.resize(models.models.len(), 0);
        for (i, table) in self.by_slot.iter_mut().enumerate() {
            table.clear();
            if let Some(Some(m)) = models.models.get(i) {
                table.resize(m.slots.held.len(), VACANT);
            }
        }
        for (e, entry) in entries.clone().enumerate() {
            let unknown = Error::UnknownModel {
                what,
                entry: Some(e),
                model: entry.model.index(),
            };
            let index = models.index(entry.model).ok_or(unknown)?;
            let Some(m) = models.models[index].as_ref() else {
                continue;
            };
            check(e, m)?;
            let Some(held) = entry.character else {
                self.free[index] += 1;
                continue;
            };
            if !m.slots.holds(held) {
                return Err(Error::UnknownCharacter {
                    what,
                    entry: Some(e),
                    model: index,
                    slot: held.0,
                });
            }
            let at = &mut self.by_slot[index][held.0 as usize];
            if *at != VACANT {
                return Err(Error::CharacterTwice {
                    what,
                    entry: e,
                    first: *at as usize,
                    model: index,
                    slot: held.0,
                });
            }
            *at = e as u32;
        }
        self.check_room(models, what)?;
        self.assign(models, entries);
        Ok(())
    }

    /// [`Error::ModelFull`] for the first model whose characters and
    /// entries without one pass its capacity.
    fn check_room(&self, models: &CrowdModels, what: &'static str) -> Result<()> {
        for (i, m) in models.live() {
            let requested = m.slots.live as usize + self.free[i] as usize;
            if requested > m.capacity as usize {
                return Err(Error::ModelFull {
                    model: i,
                    name: m.name.clone(),
                    what,
                    requested,
                    capacity: m.capacity,
                });
            }
        }
        Ok(())
    }

    /// Gives every checked entry its slot, and trims each model's table
    /// to its highest slot used.
    fn assign(&mut self, models: &CrowdModels, entries: impl Iterator<Item = Entry>) {
        self.slots.clear();
        // The next slot an entry without a character may take, per model.
        self.free.iter_mut().for_each(|f| *f = 0);
        for (e, entry) in entries.enumerate() {
            let index = entry.model.index();
            let (Some(Some(m)), Some(table)) =
                (models.models.get(index), self.by_slot.get_mut(index))
            else {
                continue;
            };
            let slot = match entry.character {
                Some((slot, _)) => slot,
                None => {
                    let mut s = self.free[index];
                    while m.slots.held.get(s as usize).copied().unwrap_or(false) {
                        s += 1;
                    }
                    self.free[index] = s + 1;
                    if table.len() <= s as usize {
                        table.resize(s as usize + 1, VACANT);
                    }
                    table[s as usize] = e as u32;
                    s
                }
            };
            self.slots.push((index as u32, slot));
        }
        for table in &mut self.by_slot {
            let used = table
                .iter()
                .rposition(|&e| e != VACANT)
                .map_or(0, |k| k + 1);
            table.truncate(used);
        }
    }

    /// Checks and places a frame of instances: every error names the
    /// instance's index in `instances`.
    pub(crate) fn place_instances(
        &mut self,
        models: &CrowdModels,
        instances: &[CrowdInstance],
    ) -> Result<()> {
        let entries = instances.iter().map(|i| Entry {
            model: i.model,
            character: i.character,
        });
        self.place(models, INSTANCE, entries, |i, m| {
            check_instance(models, i, m, &instances[i])
        })
    }

    /// Checks and places a mixed frame's characters (their actions are
    /// each model's mixer's to check): every error names the character's
    /// index in `characters`.
    pub(crate) fn place_characters(
        &mut self,
        models: &CrowdModels,
        characters: &[CrowdCharacter],
        actions: usize,
    ) -> Result<()> {
        let counted: u64 = characters.iter().map(|c| u64::from(c.action_count)).sum();
        if counted != actions as u64 {
            return Err(MixError::CountMismatch { counted, actions }.into());
        }
        let entries = characters.iter().map(|c| Entry {
            model: c.model,
            character: c.character,
        });
        self.place(models, CHARACTER, entries, |c, m| {
            if m.mixer.is_none() {
                return Err(Error::ModelWithoutMixer {
                    character: c,
                    model: m.name.clone(),
                });
            }
            Ok(())
        })
    }
}

/// The checks of one crowd instance `i` of model `m`.
fn check_instance(
    models: &CrowdModels,
    i: usize,
    m: &CrowdModel,
    inst: &CrowdInstance,
) -> Result<()> {
    if inst.clip.model != inst.model {
        let name = |id: ModelId| {
            models
                .get(id)
                .map_or_else(|| "a model of another crowd".to_owned(), |k| k.name.clone())
        };
        return Err(Error::ClipOfOtherModel {
            instance: i,
            instance_model: inst.model.index(),
            instance_model_name: m.name.clone(),
            clip_model: inst.clip.model.index(),
            clip_model_name: name(inst.clip.model),
        });
    }
    let clip_count = m.library().clips().len();
    if inst.clip.clip as usize >= clip_count {
        return Err(Error::ClipOutOfRange {
            instance: i,
            clip: inst.clip.clip,
            clip_count,
        });
    }
    if !inst.time.is_finite() {
        return Err(Error::InstanceTimeNotFinite {
            instance: i,
            time: inst.time,
        });
    }
    Ok(())
}

/// What a slot of a frame holds where no entry names it: clip 0 at time
/// 0 (a mixer's vacant character has no action: the rest pose).
pub(crate) const VACANT_INSTANCE: Instance = Instance {
    clip: 0,
    time: 0.0,
    wrap: WrapMode::Clamp,
};

/// One model's part of a placed frame, in slot order: the instance table,
/// or with a mixer the actions and per-character counts, each
/// character's crowd entry and the actions dropped to fit the mixer.
/// Reused frame after frame.
#[derive(Debug, Clone, Default)]
pub(crate) struct ModelFrame {
    pub(crate) instances: Vec<Instance>,
    pub(crate) actions: Vec<Action>,
    pub(crate) counts: Vec<u32>,
    /// Per character of the model's frame: its crowd entry ([`VACANT`]
    /// where none).
    pub(crate) entries: Vec<u32>,
    /// (character, the dropped action's index in the character's own
    /// list), in order.
    dropped: Vec<(u32, u32)>,
}

impl ModelFrame {
    /// Room for `capacity` characters of `per_character` actions, so that
    /// filling a frame allocates nothing.
    pub(crate) fn reserve(&mut self, capacity: u32, per_character: u32) {
        let n = capacity as usize;
        let grow = |len: usize| n.saturating_sub(len);
        self.instances.reserve(grow(self.instances.len()));
        self.counts.reserve(grow(self.counts.len()));
        self.entries.reserve(grow(self.entries.len()));
        let actions = n * per_character as usize;
        self.actions
            .reserve(actions.saturating_sub(self.actions.len()));
    }

    /// Model `index`'s instance table of a placed frame of instances.
    pub(crate) fn fill_instances(
        &mut self,
        placement: &Placement,
        index: usize,
        instances: &[CrowdInstance],
    ) {
        self.instances.clear();
        let Some(table) = placement.by_slot.get(index) else {
            return;
        };
        for &e in table {
            self.instances.push(
                instances
                    .get(e as usize)
                    .map_or(VACANT_INSTANCE, |i| Instance {
                        clip: i.clip.clip,
                        time: i.time,
                        wrap: i.wrap,
                    }),
            );
        }
    }

    /// Model `index`'s characters of a placed mixed frame, each with at
    /// most `desc.actions_per_character` actions: a character with more
    /// drops its lightest base actions (normal, unmasked; the first in
    /// its list of equal weights) until it fits, then, if it must, its
    /// lightest other actions, as a playback `Player`
    /// makes room. A dropped action is checked as the mixer checks
    /// actions.
    ///
    /// # Errors
    /// The action errors of [`MixError`] for a dropped action, naming
    /// the crowd's character and the action in its own list.
    pub(crate) fn fill_actions(
        &mut self,
        placement: &Placement,
        index: usize,
        frame: &MixedFrame<'_>,
        desc: &MixerDesc,
        clip_count: usize,
    ) -> Result<()> {
        self.actions.clear();
        self.counts.clear();
        self.entries.clear();
        self.dropped.clear();
        let Some(table) = placement.by_slot.get(index) else {
            return Ok(());
        };
        for (k, &e) in table.iter().enumerate() {
            self.entries.push(e);
            let Some(own) = frame.own(e as usize) else {
                self.counts.push(0);
                continue;
            };
            let start = self.actions.len();
            self.actions.extend_from_slice(own);
            let limit = desc.actions_per_character as usize;
            while self.actions.len() - start > limit {
                let Some(at) = lightest(&self.actions[start..]) else {
                    break;
                };
                let original = self.original(k as u32, at as u32);
                let action = self.actions.remove(start + at);
                check_dropped(&action, e as usize, original, desc, clip_count)?;
                self.dropped.push((k as u32, original));
                self.dropped.sort_unstable();
            }
            self.counts.push((self.actions.len() - start) as u32);
        }
        Ok(())
    }

    /// The index in character `k`'s own list of its kept action `at`.
    fn original(&self, k: u32, at: u32) -> u32 {
        let mut original = at;
        for &(_, d) in self.dropped.iter().filter(|&&(c, _)| c == k) {
            if d <= original {
                original += 1;
            }
        }
        original
    }

    /// `e` (an error of the model's mixer, naming the model's character
    /// and its kept action) naming the crowd's character and the action
    /// in its own list.
    pub(crate) fn rename(&self, e: Error) -> Error {
        renumber_actions(e, |k, a| {
            let entry = self.entries.get(k).map_or(k, |&e| e as usize);
            (entry, self.original(k as u32, a as u32) as usize)
        })
    }
}

/// The lightest base action of `actions` (normal, unmasked, of a weight
/// the mixer takes), the first of equals; else the lightest other action
/// of such a weight; `None` when no weight is one the mixer takes.
fn lightest(actions: &[Action]) -> Option<usize> {
    let valid = |a: &Action| a.weight.is_finite() && a.weight >= 0.0;
    let base = |a: &Action| a.mask.is_none() && a.reference_time.is_none();
    let pick = |keep: &dyn Fn(&Action) -> bool| {
        actions
            .iter()
            .enumerate()
            .filter(|(_, a)| valid(a) && keep(a))
            .min_by(|x, y| x.1.weight.total_cmp(&y.1.weight))
            .map(|(i, _)| i)
    };
    pick(&base).or_else(|| pick(&|_| true))
}

/// The mixer's checks of a dropped action (its weight is one the mixer
/// takes: only those are dropped), naming crowd character `character`
/// and its action `action`.
fn check_dropped(
    a: &Action,
    character: usize,
    action: u32,
    desc: &MixerDesc,
    clip_count: usize,
) -> Result<()> {
    let action = action as usize;
    if a.clip as usize >= clip_count {
        return Err(MixError::UnknownClip {
            character,
            action,
            clip: a.clip,
            clip_count,
        }
        .into());
    }
    if let Some(mask) = a.mask.map(MaskId::index) {
        if mask as usize >= desc.masks.len() {
            return Err(MixError::UnknownMask {
                character,
                action,
                mask,
                mask_count: desc.masks.len(),
            }
            .into());
        }
    }
    for (field, time) in [("time", Some(a.time)), ("reference time", a.reference_time)] {
        if let Some(time) = time.filter(|t| !t.is_finite()) {
            return Err(MixError::TimeNotFinite {
                character,
                action,
                field,
                time,
            }
            .into());
        }
    }
    Ok(())
}

/// A mixed frame as given: its characters, its actions, and each
/// character's first action (`firsts`, filled by [`MixedFrame::index`]).
pub(crate) struct MixedFrame<'a> {
    pub(crate) characters: &'a [CrowdCharacter],
    pub(crate) actions: &'a [Action],
    pub(crate) firsts: &'a [usize],
}

impl MixedFrame<'_> {
    /// Each character's first action in a frame's list, into `out`.
    pub(crate) fn index(characters: &[CrowdCharacter], out: &mut Vec<usize>) {
        out.clear();
        let mut at = 0usize;
        for c in characters {
            out.push(at);
            at += c.action_count as usize;
        }
    }

    /// Character `c`'s own actions (checked: the counts add up).
    fn own(&self, c: usize) -> Option<&[Action]> {
        let (ch, &first) = (self.characters.get(c)?, self.firsts.get(c)?);
        self.actions.get(first..first + ch.action_count as usize)
    }
}

/// `e` with its character renamed by `at` (a chunk's character to its
/// model's).
pub(crate) fn renumber(e: Error, at: impl Fn(usize) -> usize) -> Error {
    renumber_actions(e, |c, a| (at(c), a))
}

/// `e` with its character and action renamed by `at` (a model's
/// character and kept action to the crowd's character and the action in
/// its own list).
pub(crate) fn renumber_actions(e: Error, at: impl Fn(usize, usize) -> (usize, usize)) -> Error {
    let Error::Mix(m) = e else {
        return e;
    };
    Error::Mix(match m {
        MixError::UnknownClip {
            character,
            action,
            clip,
            clip_count,
        } => {
            let (character, action) = at(character, action);
            MixError::UnknownClip {
                character,
                action,
                clip,
                clip_count,
            }
        }
        MixError::UnknownMask {
            character,
            action,
            mask,
            mask_count,
        } => {
            let (character, action) = at(character, action);
            MixError::UnknownMask {
                character,
                action,
                mask,
                mask_count,
            }
        }
        MixError::BadWeight {
            character,
            action,
            weight,
        } => {
            let (character, action) = at(character, action);
            MixError::BadWeight {
                character,
                action,
                weight,
            }
        }
        MixError::TimeNotFinite {
            character,
            action,
            field,
            time,
        } => {
            let (character, action) = at(character, action);
            MixError::TimeNotFinite {
                character,
                action,
                field,
                time,
            }
        }
        MixError::TooManyActions {
            character,
            count,
            capacity,
        } => MixError::TooManyActions {
            character: at(character, 0).0,
            count,
            capacity,
        },
        other => other,
    })
}

/// One frame of a crowd, read back by `Crowd::read_back`
/// or computed by the twin: each model's [`Poses`] (indexed by slot), and
/// accessors by the frame's entries and by character.
#[derive(Debug, Clone)]
pub struct CrowdPoses {
    /// By model index; `None` for a removed model.
    pub(crate) models: Vec<Option<Poses>>,
    /// Per entry of the frame: its model's index and its slot.
    pub(crate) slots: Vec<(u32, u32)>,
}

impl CrowdPoses {
    /// Crowd instances (or characters) in the frame.
    #[must_use]
    pub fn instance_count(&self) -> usize {
        self.slots.len()
    }

    /// Model `model`'s poses, indexed by slot (a slot no entry of the
    /// frame named holds a vacant character: clip 0 at time 0, or with a
    /// mixer the rest pose); `None` for a model not in the frame's crowd.
    #[must_use]
    pub fn model(&self, model: ModelId) -> Option<&Poses> {
        self.by_index(model.index())
    }

    /// The poses of the model at `index`.
    fn by_index(&self, index: usize) -> Option<&Poses> {
        self.models.get(index)?.as_ref()
    }

    /// Crowd instance `instance`'s model's poses and its slot in them:
    /// `poses.world(slot, node)`, `poses.joints(slot, skin)` and the rest
    /// of [`Poses`] give that instance's results. `None` past the last
    /// instance.
    #[must_use]
    pub fn instance(&self, instance: usize) -> Option<(&Poses, u32)> {
        let &(model, slot) = self.slots.get(instance)?;
        Some((self.by_index(model as usize)?, slot))
    }

    /// Character `character`'s model's poses and its slot in them;
    /// `None` when its model is not in the frame.
    #[must_use]
    pub fn character(&self, character: CharacterId) -> Option<(&Poses, u32)> {
        let poses = self.model(character.model)?;
        (character.slot < poses.instance_count()).then_some((poses, character.slot))
    }

    /// Compares this frame with `other` (the GPU's with the CPU twin's,
    /// say) model by model, as [`Poses::compare`] compares two frames
    /// (every node's local transform and world matrix, every joint
    /// matrix, every morph weight, each against its tolerance). A
    /// [`Difference`](crate::Difference)'s `instance` is the crowd's
    /// entry at that slot (the model's slot where no entry of this frame
    /// names it).
    ///
    /// ```
    /// # fn f(gpu: &keyframe_gpu::CrowdPoses, cpu: &keyframe_gpu::CrowdPoses) {
    /// let c = gpu.compare(cpu).expect("frames of the same crowd and entries");
    /// assert!(c.within(), "worst: {:?}", c.worst);
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::PosesDiffer`] when the frames place their entries
    /// differently, or a model's frames differ in shape.
    pub fn compare(&self, other: &CrowdPoses) -> Result<Comparison> {
        if self.slots != other.slots || self.models.len() != other.models.len() {
            return Err(Error::PosesDiffer {
                left: format!(
                    "{} entries of {} models",
                    self.slots.len(),
                    self.models.len()
                ),
                right: format!(
                    "{} entries of {} models (or other slots)",
                    other.slots.len(),
                    other.models.len()
                ),
            });
        }
        let mut out = Comparison::default();
        for (m, (left, right)) in self.models.iter().zip(&other.models).enumerate() {
            let (Some(left), Some(right)) = (left, right) else {
                continue;
            };
            let c = left.compare(right)?;
            for (most, q) in out.max_abs.iter_mut().zip(c.max_abs) {
                *most = most.max(q);
            }
            if let Some(mut worst) = c.worst {
                let at = (m as u32, worst.instance);
                if let Some(e) = self.slots.iter().position(|&s| s == at) {
                    worst.instance = e as u32;
                }
                if out.worst.is_none_or(|w| worst.excess > w.excess) {
                    out.worst = Some(worst);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;

    /// Slots taken and freed in a seeded random order go where a scan for
    /// the lowest free slot puts them, and serials move on per free.
    #[test]
    fn characters_take_the_lowest_free_slot() {
        let mut slots = Slots::default();
        let mut scan: Vec<bool> = Vec::new();
        let mut serial = Vec::new();
        let mut x: u32 = 0x9e37_79b9;
        let mut reused = 0;
        for _ in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let held: Vec<u32> = (0..scan.len() as u32)
                .filter(|&s| scan[s as usize])
                .collect();
            if x.is_multiple_of(3) && !held.is_empty() {
                let slot = held[(x as usize / 3) % held.len()];
                slots.free(slot);
                scan[slot as usize] = false;
                serial[slot as usize] += 1;
            } else {
                let want = scan.iter().position(|h| !h).unwrap_or(scan.len());
                assert_eq!(slots.take(), want);
                if want == scan.len() {
                    scan.push(true);
                    serial.push(0);
                } else {
                    scan[want] = true;
                    reused += 1;
                }
            }
            assert_eq!(slots.held, scan);
            assert_eq!(slots.serials, serial);
            assert_eq!(slots.live as usize, scan.iter().filter(|&&h| h).count());
        }
        assert!(
            reused > 500 && scan.len() > 100,
            "the run reused {reused} freed slots and grew to {}",
            scan.len()
        );
    }
}
