//! The models of the main world: one per glTF file (with its extra clip
//! files and root-motion node), its clips bound to its rig, its parts,
//! and the characters that play it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bevy::prelude::*;
use keyframe_gpu::playback::{self, Clips, Command};
use keyframe_gpu::{AnimationLibrary, BoundLibrary, OutputLayout, Part, Rig};

use crate::error::GpuAnimationError;
use crate::material::{GpuSkin, GpuSkinnedMaterial, PartUniform};

/// What makes two players share a model: the same file, the same extra
/// clip files, the same root-motion node.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ModelKey {
    pub(crate) source: PathBuf,
    pub(crate) clip_files: Vec<PathBuf>,
    pub(crate) root_motion: Option<String>,
}

/// One model: its clips bound to its rig, what the GPU poses (the root
/// kept in place when root motion is reported) and its characters.
pub(crate) struct Model {
    /// What the players' clips come from (durations, markers, root
    /// tracks).
    pub(crate) clips: Arc<Clips>,
    /// What the crowd poses.
    pub(crate) posed: BoundLibrary,
    pub(crate) parts: Vec<Part>,
    pub(crate) layout: OutputLayout,
    /// Per rig node, the inverse of its rest world matrix in the scene.
    pub(crate) inverse_rest: Vec<Mat4>,
    /// Per rig node, whether a clip animates it or one of its ancestors.
    moved: Vec<bool>,
    /// Characters the model's buffers hold.
    pub(crate) capacity: u32,
    /// Bumped whenever the crowd's buffers are made again (a model grew
    /// or came: [`GpuModels::new_generation`]); the materials bind the
    /// buffers of their generation.
    pub(crate) generation: u32,
    /// Per slot, the player's entity.
    pub(crate) slots: Vec<Option<Entity>>,
    /// Per slot, the character's mesh entities: (entity, part, base
    /// material).
    pub(crate) meshes: Vec<Vec<(Entity, usize, AssetId<StandardMaterial>)>>,
    /// Characters per chunk of the model's buffers, as the meshes' tags
    /// and materials were given: what the main world expects when the
    /// buffers grow ([`expected_chunk`](Self::expected_chunk)), then
    /// what the render world made ([`ChunkSizes`]).
    pub(crate) chunk: u32,
    /// Characters that one chunk of the device holds, when the render
    /// world made chunks smaller than the capacity and the plugin's limit
    /// asked for; `u32::MAX` while none was.
    fit: u32,
    free: Vec<u32>,
    /// Whether players of the model report root motion.
    pub(crate) has_root_motion: bool,
    /// The frame's commands, by slot, in the order given: all that the
    /// render world gets of the model's characters in a frame.
    pub(crate) commands: Vec<(u32, Command)>,
    /// Slots taken by a new character this frame: their playback state
    /// starts again at rest on the GPU before the frame's commands.
    pub(crate) resets: Vec<u32>,
    /// The materials made for the model's parts, by (part, base
    /// material, chunk).
    pub(crate) materials:
        HashMap<(usize, AssetId<StandardMaterial>, u32), Handle<GpuSkinnedMaterial>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model")
            .field("capacity", &self.capacity)
            .field("generation", &self.generation)
            .field("characters", &self.slots.iter().flatten().count())
            .finish_non_exhaustive()
    }
}

/// Smallest capacity a model's buffers are made with.
const MIN_CAPACITY: u32 = 64;

impl Model {
    /// Loads `key`'s files and binds their clips to the scene file's rig.
    pub(crate) fn load(key: &ModelKey) -> Result<Model, GpuAnimationError> {
        let import_err = |path: &Path, e: keyframe_gpu::Error| GpuAnimationError::Import {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let own = keyframe_gpu::gltf::load(&key.source).map_err(|e| import_err(&key.source, e))?;
        let rig = Rig::from_document(&own.document).map_err(|e| import_err(&key.source, e))?;
        let mut libraries = vec![own.library];
        for path in &key.clip_files {
            let other = keyframe_gpu::gltf::load(path).map_err(|e| import_err(path, e))?;
            libraries.push(other.library);
        }
        let library =
            AnimationLibrary::join(libraries.iter()).map_err(|e| import_err(&key.source, e))?;
        let bound = library.bind(&rig).map_err(|e| import_err(&key.source, e))?;
        let (clips, posed) = match &key.root_motion {
            None => (Clips::new(bound.library()), bound),
            Some(name) => {
                let node = rig.node_by_name(name).ok_or_else(|| {
                    GpuAnimationError::SceneMismatch(format!("no node named {name:?}"))
                })?;
                let clips =
                    Clips::with_root(&bound, node).map_err(|e| import_err(&key.source, e))?;
                // The pose keeps the root in place on the ground plane (the
                // model's X and Z, found through the root's parents); the
                // game moves the entity by the reported motion.
                let posed =
                    playback::in_place(&bound, node).map_err(|e| import_err(&key.source, e))?;
                (clips, posed)
            }
        };
        let rig = posed.rig();
        let layout = rig.output_layout();
        let parts = rig.parts();
        let inverse_rest = rest_world(rig).iter().map(|m| m.inverse()).collect();
        let moved = moved_nodes(&posed);
        Ok(Model {
            clips: Arc::new(clips),
            posed: posed.clone(),
            parts,
            layout,
            inverse_rest,
            moved,
            capacity: 0,
            generation: 0,
            slots: Vec::new(),
            meshes: Vec::new(),
            chunk: u32::MAX,
            fit: u32::MAX,
            free: Vec::new(),
            has_root_motion: key.root_motion.is_some(),
            commands: Vec::new(),
            resets: Vec::new(),
            materials: HashMap::new(),
        })
    }

    /// A slot for a new character, whose GPU playback state starts at
    /// rest this frame; `true` when the buffers must grow (the caller
    /// starts a new generation).
    pub(crate) fn allocate(&mut self, entity: Entity) -> (u32, bool) {
        if let Some(slot) = self.free.pop() {
            self.slots[slot as usize] = Some(entity);
            self.resets.push(slot);
            return (slot, false);
        }
        let slot = self.slots.len() as u32;
        self.slots.push(Some(entity));
        self.meshes.push(Vec::new());
        self.resets.push(slot);
        let grows = slot >= self.capacity;
        if grows {
            self.capacity = (self.capacity * 2).max(MIN_CAPACITY);
        }
        (slot, grows)
    }

    /// Frees a character's slot (its entity is gone).
    pub(crate) fn release(&mut self, slot: u32) {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            *s = None;
            if let Some(meshes) = self.meshes.get_mut(slot as usize) {
                meshes.clear();
            }
            self.free.push(slot);
        }
    }

    /// Where character `slot` is in the buffers: (chunk, index in the
    /// chunk, the mesh's `MeshTag`).
    pub(crate) fn place(&self, slot: u32) -> (u32, u32) {
        (slot / self.chunk, slot % self.chunk)
    }

    /// Characters per chunk the render world will make buffers of this
    /// capacity with, as far as the main world can tell: the capacity,
    /// the plugin's `limit` or what one chunk of the device was found to
    /// hold, whichever is least. Known before the render world makes
    /// them, so that characters of grown buffers are drawn from their
    /// first frame; the render world's report corrects it when the
    /// device holds less (a model's first chunk past the device's fit).
    pub(crate) fn expected_chunk(&self, limit: Option<u32>) -> u32 {
        self.capacity
            .min(limit.unwrap_or(u32::MAX))
            .min(self.fit)
            .max(1)
    }

    /// Sets the characters per chunk to `chunk` and gives the characters
    /// whose place changes with it the material and tag of their new
    /// place (this is model `index`).
    pub(crate) fn retag(
        &mut self,
        index: usize,
        chunk: u32,
        commands: &mut Commands,
        standard: &Assets<StandardMaterial>,
        skinned: &mut Assets<GpuSkinnedMaterial>,
    ) {
        if chunk == self.chunk || chunk == 0 {
            return;
        }
        let before: Vec<(u32, u32)> = (0..self.slots.len() as u32)
            .map(|s| self.place(s))
            .collect();
        self.chunk = chunk;
        for slot in 0..self.meshes.len() {
            let (chunk, tag) = self.place(slot as u32);
            if before.get(slot) == Some(&(chunk, tag)) {
                continue;
            }
            for i in 0..self.meshes[slot].len() {
                let (entity, part, base) = self.meshes[slot][i];
                let Some(h) = self.material(index, part, base, chunk, standard, skinned) else {
                    continue;
                };
                commands
                    .entity(entity)
                    .try_insert((MeshMaterial3d(h), bevy::mesh::MeshTag::new(tag)));
            }
        }
    }

    /// The material of part `part` over base material `base` for chunk
    /// `chunk` of this model (model `index`), made on first use. `None`
    /// when the base material or the part is not there.
    pub(crate) fn material(
        &mut self,
        index: usize,
        part: usize,
        base: AssetId<StandardMaterial>,
        chunk: u32,
        standard: &Assets<StandardMaterial>,
        skinned: &mut Assets<GpuSkinnedMaterial>,
    ) -> Option<Handle<GpuSkinnedMaterial>> {
        if let Some(h) = self.materials.get(&(part, base, chunk)) {
            return Some(h.clone());
        }
        let h = skinned.add(GpuSkinnedMaterial {
            base: standard.get(base)?.clone(),
            extension: GpuSkin {
                model: index as u32,
                generation: self.generation,
                chunk,
                part: self.part_uniform(part)?,
            },
        });
        self.materials.insert((part, base, chunk), h.clone());
        Some(h)
    }

    /// The constants of part `index` for its material.
    pub(crate) fn part_uniform(&self, index: usize) -> Option<PartUniform> {
        let part = self.parts.get(index)?;
        let node = part.skin_node.unwrap_or(part.node);
        let inverse_rest = *self.inverse_rest.get(part.node as usize)?;
        // A placing node that no clip moves (nor any ancestor) keeps its
        // rest world matrix: folded in here, the vertex stage skips it.
        let is_static = !self.moved.get(node as usize).copied().unwrap_or(true);
        let fixed = if is_static {
            inverse_rest * self.inverse_rest.get(node as usize)?.inverse()
        } else {
            inverse_rest
        };
        Some(PartUniform {
            inverse_rest: fixed.to_cols_array(),
            placed_node_is_static: match (is_static, node == part.node) {
                (true, true) => 2,
                (true, false) => 1,
                (false, _) => 0,
            },
            pad: [0; 3],
            node,
            joint_offset: part.joints.as_ref().map_or(0, |j| j.start),
            joints_per_character: self.layout.joints(),
            nodes_per_character: self.layout.nodes(),
            skinned: u32::from(part.skin.is_some()),
            morph_offset: part.morph_weights.start,
            morph_per_character: self.layout.morph_weights(),
            morph_count: part.morph_weights.end - part.morph_weights.start,
        })
    }
}

/// Per rig node, whether a track of a clip animates it or an ancestor.
fn moved_nodes(bound: &BoundLibrary) -> Vec<bool> {
    let rig = bound.rig();
    let mut moved = vec![false; rig.nodes().len()];
    for (c, clip) in bound.library().clips().iter().enumerate() {
        for t in 0..clip.tracks.len() {
            if let Some(n) = bound.node(c as u32, t as u32) {
                if let Some(m) = moved.get_mut(n as usize) {
                    *m = true;
                }
            }
        }
    }
    // Parents come first in the rig's order: a moved parent moves its
    // children.
    for &n in rig.order() {
        if let Some(p) = rig.nodes()[n as usize].parent {
            if moved[p as usize] {
                moved[n as usize] = true;
            }
        }
    }
    moved
}

/// Every node's rest world matrix in the scene (its parents' rest
/// transforms and its own).
fn rest_world(rig: &Rig) -> Vec<Mat4> {
    let nodes = rig.nodes();
    let mut world = vec![Mat4::IDENTITY; nodes.len()];
    for &n in rig.order() {
        let node = &nodes[n as usize];
        let local = Mat4::from_scale_rotation_translation(
            Vec3::from_array(node.scale),
            Quat::from_array(node.rotation),
            Vec3::from_array(node.translation),
        );
        world[n as usize] = match node.parent {
            Some(p) => world[p as usize] * local,
            None => local,
        };
    }
    world
}

/// Every model of the main world, and where files are read from.
#[derive(Resource, Debug)]
pub(crate) struct GpuModels {
    pub(crate) asset_root: PathBuf,
    pub(crate) models: Vec<Model>,
    by_key: HashMap<ModelKey, usize>,
    /// Files that failed to load, kept so that every player of one gets
    /// the error without reading the file again.
    failed: HashMap<ModelKey, GpuAnimationError>,
    /// The frame's step (seconds), for the render world's `GpuPlayers`.
    pub(crate) dt: f64,
    /// The playback clock: the sum of the steps before this frame's.
    pub(crate) clock: f64,
    /// The crowds made anew on a new device that the main world has
    /// started its characters again on ([`ChunkSizes::fresh_crowds`]).
    pub(crate) seen_fresh: u32,
}

impl GpuModels {
    pub(crate) fn new(asset_root: PathBuf) -> Self {
        GpuModels {
            asset_root,
            models: Vec::new(),
            by_key: HashMap::new(),
            failed: HashMap::new(),
            dt: 0.0,
            clock: 0.0,
            seen_fresh: 0,
        }
    }

    /// The model of `key`, loaded on first use.
    pub(crate) fn get_or_load(&mut self, key: ModelKey) -> Result<usize, GpuAnimationError> {
        if let Some(&i) = self.by_key.get(&key) {
            return Ok(i);
        }
        if let Some(e) = self.failed.get(&key) {
            return Err(e.clone());
        }
        match Model::load(&key) {
            Ok(model) => {
                self.models.push(model);
                let i = self.models.len() - 1;
                self.by_key.insert(key, i);
                Ok(i)
            }
            Err(e) => {
                self.failed.insert(key, e.clone());
                Err(e)
            }
        }
    }

    /// The render world will make the crowd again (a model grew or came),
    /// and with it every model's buffers: every model takes a new
    /// generation, and its materials bind the new buffers.
    pub(crate) fn new_generation(&mut self, skinned: &mut Assets<GpuSkinnedMaterial>) {
        for model in &mut self.models {
            model.generation += 1;
            for handle in model.materials.values() {
                if let Some(mut m) = skinned.get_mut(handle) {
                    m.extension.generation = model.generation;
                }
            }
        }
    }

    /// `path` resolved against the asset root (an absolute path stays).
    pub(crate) fn resolve(&self, path: &Path) -> PathBuf {
        self.asset_root.join(path)
    }
}

/// What the render world tells the main world: per model, the characters
/// that each chunk of its buffers holds, which keyframe-gpu's `Crowd`
/// decides from the device's limits when it makes them, for the
/// generation it made them for. One resource in both worlds, sharing the
/// table.
#[derive(Resource, Clone, Debug, Default)]
pub(crate) struct ChunkSizes {
    /// The plugin's own bound on characters per chunk
    /// ([`KeyframeGpuPlugin::chunk_limit`](crate::KeyframeGpuPlugin::chunk_limit)).
    pub(crate) limit: Option<u32>,
    made: Arc<Mutex<Vec<Option<Made>>>>,
    /// Crowds made anew after a device loss (every character at rest).
    fresh: Arc<AtomicU32>,
}

/// A model's buffers as the render world made them: (generation,
/// characters per chunk).
type Made = (u32, u32);

impl ChunkSizes {
    pub(crate) fn new(limit: Option<u32>) -> Self {
        ChunkSizes {
            limit,
            made: Arc::default(),
            fresh: Arc::default(),
        }
    }

    /// The render world made model `model`'s buffers of `generation`
    /// with `size` characters per chunk.
    pub(crate) fn report(&self, model: usize, generation: u32, size: u32) {
        let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        if made.len() <= model {
            made.resize(model + 1, None);
        }
        made[model] = Some((generation, size));
    }

    /// The render world made its crowd anew on a new device: the
    /// playback state of every character is at rest there.
    pub(crate) fn crowd_made_anew(&self) {
        self.fresh.fetch_add(1, Ordering::SeqCst);
    }

    /// How many crowds were made anew on a new device so far.
    pub(crate) fn fresh_crowds(&self) -> u32 {
        self.fresh.load(Ordering::SeqCst)
    }

    /// What the render world last made for model `model`: (generation,
    /// characters per chunk).
    pub(crate) fn made(&self, model: usize) -> Option<(u32, u32)> {
        let made = self.made.lock().unwrap_or_else(|e| e.into_inner());
        made.get(model).copied().flatten()
    }
}

/// Gives the characters of a model the material and tag of their chunk
/// once the render world has made the model's buffers with chunks of
/// another size than the tags assume: the device holds fewer characters
/// in one chunk than expected (or, after a device loss, more).
pub(crate) fn apply_chunk_sizes(
    mut commands: Commands,
    mut models: ResMut<GpuModels>,
    sizes: Res<ChunkSizes>,
    standard: Res<Assets<StandardMaterial>>,
    mut skinned: ResMut<Assets<GpuSkinnedMaterial>>,
) {
    for (index, model) in models.models.iter_mut().enumerate() {
        let Some((generation, size)) = sizes.made(index) else {
            continue;
        };
        if generation != model.generation || size == 0 {
            continue;
        }
        let asked = model.capacity.min(sizes.limit.unwrap_or(u32::MAX));
        model.fit = if size < asked { size } else { u32::MAX };
        model.retag(index, size, &mut commands, &standard, &mut skinned);
    }
}
