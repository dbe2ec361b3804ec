//! Setting up a spawned scene for the GPU: its meshes get the plugin's
//! material and their character's `MeshTag`, Bevy's own skinning and
//! animation are taken off them.

use std::collections::HashMap;

use bevy::animation::{AnimatedBy, AnimationPlayer};
use bevy::camera::primitives::Aabb;
use bevy::camera::visibility::{DynamicSkinnedMeshBounds, NoFrustumCulling};
use bevy::mesh::morph::MeshMorphWeights;
use bevy::mesh::skinning::SkinnedMesh;
use bevy::mesh::MeshTag;
use bevy::prelude::*;
use bevy::world_serialization::{WorldAssetRoot, WorldInstanceReady};
use keyframe_gpu::Rig;

use crate::error::GpuAnimationError;
use crate::material::GpuSkinnedMaterial;
use crate::model::{ChunkSizes, GpuModels, Model, ModelKey};
use crate::playback::{new_twin, CpuTwin, Resume};
use crate::player::{GpuAnimationPlayer, GpuAttachment, PlayerState};

/// How much wider than the mesh's rest bounds an animated mesh is
/// assumed to reach, for frustum culling (the main world does not know
/// the GPU's pose).
pub(crate) const BOUNDS_MARGIN: f32 = 1.5;

/// Where each player's character is, for when its entity goes.
#[derive(Resource, Debug, Default)]
pub(crate) struct Owners(pub(crate) HashMap<Entity, (usize, u32)>);

/// An entity of a scene matched to a rig node: (entity, node).
type Match = (Entity, u32);
/// Entities of a scene matched to the rig's nodes.
type Matched = [Match];

/// Entities of a scene that are neither nodes nor meshes: what pruning
/// keeps with their ancestors.
type NotANode = Or<(
    With<Camera>,
    With<DirectionalLight>,
    With<PointLight>,
    With<SpotLight>,
)>;

/// The entities of a spawned scene, read while matching it to its rig.
#[derive(bevy::ecs::system::SystemParam)]
pub(crate) struct SceneEntities<'w, 's> {
    children: Query<'w, 's, &'static Children>,
    names: Query<'w, 's, &'static Name>,
    meshes: Query<'w, 's, Option<&'static MeshMaterial3d<StandardMaterial>>, With<Mesh3d>>,
    bounds: Query<'w, 's, &'static Aabb>,
    parents: Query<'w, 's, &'static ChildOf>,
    transforms: Query<'w, 's, &'static Transform>,
    morphed: Query<'w, 's, (), With<MeshMorphWeights>>,
    attachments: Query<'w, 's, (), With<GpuAttachment>>,
    /// What a scene may hold besides nodes and meshes.
    others: Query<'w, 's, (), NotANode>,
}

/// A spawned scene with a [`GpuAnimationPlayer`] is ready: set it up.
#[allow(clippy::too_many_arguments)]
pub(crate) fn on_scene_ready(
    ready: On<WorldInstanceReady>,
    mut commands: Commands,
    mut players: Query<(&mut GpuAnimationPlayer, Option<&WorldAssetRoot>)>,
    scene: SceneEntities,
    standard: Res<Assets<StandardMaterial>>,
    mut skinned: ResMut<Assets<GpuSkinnedMaterial>>,
    mut models: ResMut<GpuModels>,
    mut owners: ResMut<Owners>,
    sizes: Res<ChunkSizes>,
    asset_server: Res<AssetServer>,
) {
    let root = ready.entity;
    let Ok((mut player, world_root)) = players.get_mut(root) else {
        return;
    };
    if player.state.is_some() {
        return;
    }
    let Some(index) = load_model(&mut player, world_root, &mut models, &asset_server, root) else {
        return;
    };
    let model = &mut models.models[index];

    let (found, mesh_entities) = match_scene(&scene, model.posed.rig(), root);
    if mesh_entities.is_empty() {
        let e = GpuAnimationError::SceneMismatch(format!(
            "no mesh of the file's nodes found under {root}"
        ));
        fail(&mut player, root, e);
        return;
    }

    let (slot, grows) = model.allocate(root);
    if grows {
        // The crowd is made again, with new buffers for every model: every
        // material binds them again ...
        models.new_generation(&mut skinned);
    }
    let model = &mut models.models[index];
    if grows {
        // ... and this model's characters take their places in the new
        // buffers' chunks: a model the render world has made grows in
        // place, by chunks of the size it made; a new one is made for its
        // capacity.
        let chunk = match sizes.made(index) {
            Some((_, size)) if size > 0 => size,
            _ => model.expected_chunk(sizes.limit),
        };
        model.retag(index, chunk, &mut commands, &standard, &mut skinned);
    }
    take_meshes(
        &mut commands,
        &scene,
        model,
        (index, slot),
        &mesh_entities,
        &standard,
        &mut skinned,
    );
    prune_scene(
        &mut commands,
        &scene,
        root,
        &model.inverse_rest,
        &mesh_entities,
        &found,
        player.keep_nodes,
    );
    commands.entity(root).try_remove::<AnimationPlayer>();

    owners.0.insert(root, (index, slot));
    let attached = scene
        .children
        .get(root)
        .is_ok_and(|c| c.iter().any(|e| scene.attachments.contains(e)));
    let twin = (player.cpu_twin || model.has_root_motion || attached).then(|| {
        commands.entity(root).insert(CpuTwin);
        new_twin(model, slot)
    });
    player.state = Some(PlayerState {
        model: index,
        slot,
        twin,
        resume: Resume::default(),
    });
}

/// The index of the model `player` animates (its scene's file, found
/// from the player or the scene's asset path, and its clip files),
/// loading it the first time; `None` when it cannot be, the player's
/// error set.
fn load_model(
    player: &mut GpuAnimationPlayer,
    world_root: Option<&WorldAssetRoot>,
    models: &mut GpuModels,
    asset_server: &AssetServer,
    root: Entity,
) -> Option<usize> {
    let source = match (&player.source, world_root) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(w)) => asset_server
            .get_path(w.0.id())
            .map(|p| p.path().to_path_buf()),
        (None, None) => None,
    };
    let Some(source) = source else {
        fail(player, root, GpuAnimationError::UnknownSource);
        return None;
    };
    let key = ModelKey {
        source: models.resolve(&source),
        clip_files: player
            .clip_files
            .iter()
            .map(|p| models.resolve(p))
            .collect(),
        root_motion: player.root_motion_node.clone(),
    };
    match models.get_or_load(key) {
        Ok(i) => Some(i),
        Err(e) => {
            fail(player, root, e);
            None
        }
    }
}

/// Gives the scene's meshes (character `slot` of model `index`) the
/// plugin's material and their character's tag, and takes Bevy's own
/// skinning off them.
fn take_meshes(
    commands: &mut Commands,
    scene: &SceneEntities,
    model: &mut Model,
    (index, slot): (usize, u32),
    meshes: &Matched,
    standard: &Assets<StandardMaterial>,
    skinned: &mut Assets<GpuSkinnedMaterial>,
) {
    let (chunk, tag) = model.place(slot);
    for &(entity, node) in meshes {
        let Some(part_index) = model.parts.iter().position(|p| p.node == node) else {
            continue;
        };
        let Ok(Some(base)) = scene.meshes.get(entity) else {
            continue;
        };
        let base_id = base.0.id();
        let Some(handle) = model.material(index, part_index, base_id, chunk, standard, skinned)
        else {
            continue;
        };
        if let Some(meshes) = model.meshes.get_mut(slot as usize) {
            meshes.push((entity, part_index, base_id));
        }
        let mut e = commands.entity(entity);
        e.remove::<(
            MeshMaterial3d<StandardMaterial>,
            SkinnedMesh,
            DynamicSkinnedMeshBounds,
        )>()
        .insert((MeshMaterial3d(handle), MeshTag::new(tag)));
        // The pose is the GPU's: culling keeps the file's bounds of the
        // mesh, widened, where it has them.
        match scene.bounds.get(entity) {
            Ok(aabb) => {
                e.insert(Aabb {
                    center: aabb.center,
                    half_extents: aabb.half_extents * BOUNDS_MARGIN,
                });
            }
            Err(_) => {
                e.insert(NoFrustumCulling);
            }
        }
    }
}

/// The entities of the scene under `root` matched to `rig`'s nodes by
/// name from the scene's top-level nodes down: (every node, the meshes).
fn match_scene(scene: &SceneEntities, rig: &Rig, root: Entity) -> (Vec<Match>, Vec<Match>) {
    let mut found = Vec::new();
    let mut mesh_entities = Vec::new();
    let children_of = rig_children(rig);
    let roots: Vec<u32> = (0..rig.nodes().len() as u32)
        .filter(|&n| rig.nodes()[n as usize].parent.is_none())
        .collect();
    if let Ok(top) = scene.children.get(root) {
        for &world in top {
            match_nodes(
                scene,
                rig,
                &children_of,
                world,
                None,
                &roots,
                &mut found,
                &mut mesh_entities,
            );
        }
    }
    (found, mesh_entities)
}

/// Takes the set-up scene's nodes out of the way. Bevy's animation
/// leaves the scene alone from here; `mesh_list` are the mesh entities
/// with their rig nodes, `found` every matched node entity.
fn prune_scene(
    commands: &mut Commands,
    scene: &SceneEntities,
    root: Entity,
    inverse_rest: &[Mat4],
    mesh_list: &Matched,
    found: &Matched,
    keep_nodes: bool,
) {
    // Bevy's animation leaves the scene alone: its nodes keep their rest
    // transforms, which the placement in the vertex stage relies on.
    // Nodes that lead to no mesh (the skeleton, usually) are not needed
    // to draw: unless the player keeps them, they are despawned, so that
    // transform propagation no longer walks them every frame (a game
    // reads a joint through `GpuAttachment`).
    let flat = !keep_nodes
        && !mesh_list.iter().any(|(e, _)| scene.morphed.contains(*e))
        && !has_others(scene, root);
    if flat {
        // Nothing but nodes and meshes (no light, camera or morph target,
        // whose weights Bevy reads from the node entity): the meshes hang
        // straight under the player's entity at their rest place in the
        // scene, and every node entity goes. Per character, propagation
        // then walks the player's entity and its meshes only.
        let top: Vec<Entity> = scene
            .children
            .get(root)
            .map(|c| c.iter().collect())
            .unwrap_or_default();
        let scene_root = top
            .first()
            .and_then(|&e| scene.transforms.get(e).ok())
            .map_or(Mat4::IDENTITY, Transform::to_matrix);
        for (entity, node) in mesh_list {
            let rest = inverse_rest
                .get(*node as usize)
                .map_or(Mat4::IDENTITY, Mat4::inverse);
            let own = scene
                .transforms
                .get(*entity)
                .map_or(Mat4::IDENTITY, Transform::to_matrix);
            commands.entity(*entity).insert((
                ChildOf(root),
                Transform::from_matrix(scene_root * rest * own),
            ));
        }
        for e in top {
            commands.entity(e).try_despawn();
        }
    } else {
        let keep: std::collections::HashSet<Entity> = if keep_nodes {
            found.iter().map(|(e, _)| *e).collect()
        } else {
            needed_nodes(scene, root)
        };
        for (entity, _) in found {
            if keep.contains(entity) {
                commands
                    .entity(*entity)
                    .try_remove::<(AnimationPlayer, AnimatedBy)>();
            } else if parent_kept(scene, &keep, *entity) {
                commands.entity(*entity).try_despawn();
            }
        }
    }
}

fn fail(player: &mut GpuAnimationPlayer, entity: Entity, e: GpuAnimationError) {
    error!("keyframe-gpu-bevy: {entity}: {e}");
    player.error = Some(e);
}

/// Per rig node, its children in index order.
fn rig_children(rig: &Rig) -> Vec<Vec<u32>> {
    let mut children = vec![Vec::new(); rig.nodes().len()];
    for (i, node) in rig.nodes().iter().enumerate() {
        if let Some(p) = node.parent {
            if let Some(c) = children.get_mut(p as usize) {
                c.push(i as u32);
            }
        }
    }
    children
}

/// The name Bevy gives the entity of rig node `n`.
fn node_name(rig: &Rig, n: u32) -> String {
    rig.nodes()
        .get(n as usize)
        .and_then(|node| node.name.clone())
        .unwrap_or_else(|| format!("GltfNode{n}"))
}

/// Matches `entity` (rig node `node`, or a scene root for `None`) and its
/// descendants: a child with a mesh is a primitive of `node`; a child
/// named as one of `candidates` (the node's children in the rig) is that
/// node, the first unmatched one where names repeat.
#[allow(clippy::too_many_arguments)]
fn match_nodes(
    scene: &SceneEntities,
    rig: &Rig,
    children_of: &[Vec<u32>],
    entity: Entity,
    node: Option<u32>,
    candidates: &[u32],
    found: &mut Vec<Match>,
    meshes: &mut Vec<Match>,
) {
    let Ok(children) = scene.children.get(entity) else {
        return;
    };
    let mut used = vec![false; candidates.len()];
    for &child in children {
        if scene.meshes.contains(child) {
            if let Some(n) = node {
                meshes.push((child, n));
            }
            continue;
        }
        let Ok(name) = scene.names.get(child) else {
            continue;
        };
        let matched = candidates
            .iter()
            .enumerate()
            .find(|(k, &c)| !used[*k] && node_name(rig, c) == name.as_str());
        if let Some((k, &c)) = matched {
            used[k] = true;
            found.push((child, c));
            let next = children_of.get(c as usize).map_or(&[][..], |v| &v[..]);
            match_nodes(scene, rig, children_of, child, Some(c), next, found, meshes);
        } else if node.is_none() {
            // The scene's own root entity (named after the scene) holds
            // the top-level nodes.
            match_nodes(
                scene,
                rig,
                children_of,
                child,
                None,
                candidates,
                found,
                meshes,
            );
        }
    }
}

/// The entities under `root` that have a mesh below them (or are
/// meshes), and anything that is neither a mesh nor a plain node (a
/// light, a camera, a game's own entity) with its ancestors.
fn needed_nodes(scene: &SceneEntities, root: Entity) -> std::collections::HashSet<Entity> {
    fn walk(
        scene: &SceneEntities,
        e: Entity,
        keep: &mut std::collections::HashSet<Entity>,
    ) -> bool {
        let mut needed = scene.meshes.contains(e) || scene.others.contains(e);
        if let Ok(children) = scene.children.get(e) {
            for &c in children {
                needed |= walk(scene, c, keep);
            }
        }
        if needed {
            keep.insert(e);
        }
        needed
    }
    let mut keep = std::collections::HashSet::new();
    walk(scene, root, &mut keep);
    keep
}

/// Whether the scene under `root` holds a light or a camera.
fn has_others(scene: &SceneEntities, root: Entity) -> bool {
    scene.others.contains(root)
        || scene
            .children
            .get(root)
            .is_ok_and(|c| c.iter().any(|e| has_others(scene, e)))
}

/// Whether the parent of `entity` is kept: only the topmost node of a
/// pruned subtree is despawned (its descendants go with it).
fn parent_kept(
    scene: &SceneEntities,
    keep: &std::collections::HashSet<Entity>,
    entity: Entity,
) -> bool {
    scene
        .parents
        .get(entity)
        .is_ok_and(|p| keep.contains(&p.parent()))
}

/// Frees the characters of players that are gone.
pub(crate) fn release_removed(
    mut removed: RemovedComponents<GpuAnimationPlayer>,
    mut owners: ResMut<Owners>,
    mut models: ResMut<GpuModels>,
) {
    for entity in removed.read() {
        if let Some((model, slot)) = owners.0.remove(&entity) {
            if let Some(m) = models.models.get_mut(model) {
                m.release(slot);
            }
        }
    }
}

/// Marks the plugin's meshes with morph targets changed, every frame, so
/// that Bevy extracts them again. Bevy gives a mesh instance the index of
/// its morph descriptor (where its morph targets are) when it extracts
/// it, and makes that descriptor only for an instance it already knows:
/// an instance extracted once has none, and the vertex stage would see
/// no morph target. Bevy's own skinned meshes are extracted every frame
/// (their bounds change); the plugin's would be only when they change.
pub(crate) fn refresh_morphed_meshes(
    mut meshes: Query<
        &mut MeshTag,
        (
            With<MeshMorphWeights>,
            With<MeshMaterial3d<GpuSkinnedMaterial>>,
        ),
    >,
) {
    for mut tag in &mut meshes {
        tag.set_changed();
    }
}
