//! A Bevy plugin that animates glTF scenes with
//! [keyframe-gpu](https://docs.rs/keyframe-gpu) on Bevy's own device and
//! queue: clips are sampled, blended and posed on the GPU, and Bevy's PBR
//! pipeline draws the skinned meshes with the crate's joint matrices. No
//! joint matrix is computed on the CPU or read back.
//!
//! ```no_run
//! use bevy::prelude::*;
//! use bevy::gltf::GltfAssetLabel;
//! use bevy::world_serialization::WorldAssetRoot;
//! use keyframe_gpu_bevy::{GpuAnimationPlayer, KeyframeGpuPlugin};
//!
//! fn main() {
//!     App::new()
//!         .add_plugins((DefaultPlugins, KeyframeGpuPlugin::default()))
//!         .add_systems(Startup, spawn)
//!         .run();
//! }
//!
//! fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
//!     let mut player = GpuAnimationPlayer::new();
//!     player.play("Run");
//!     commands.spawn((
//!         WorldAssetRoot(assets.load(GltfAssetLabel::Scene(0).from_asset("Fox.glb"))),
//!         player,
//!     ));
//! }
//! ```
//!
//! What runs where, each frame:
//! - main world, `PostUpdate` ([`KeyframeGpuSystems::Playback`], before
//!   transform propagation): the commands of each [`GpuAnimationPlayer`]
//!   changed since the last frame are queued for the render world
//!   (Bevy's change detection: a player given no command costs
//!   nothing); the characters with a CPU twin
//!   ([`GpuAnimationPlayer::with_cpu_twin`]) step it (keyframe-gpu's
//!   playback layer: playheads, fades, root motion, markers), send
//!   [`GpuRootMotion`] and [`GpuAnimationEvent`] messages and place
//!   their [`GpuAttachment`]s.
//! - extraction ([`KeyframeGpuSystems::Extract`]): the frame's commands,
//!   its step, and each character's placement in the world (one matrix)
//!   are copied to the render world.
//! - render world: each model's characters are played on the GPU by
//!   keyframe-gpu's `GpuPlayers` on one `Crowd` of every model (the
//!   commands and the step in one buffer write per model); the crowd's
//!   compute passes (playback, sampling, blending, posing) are submitted
//!   at the start of the render graph, before any camera draws; a pass of
//!   the plugin's own follows them and makes the joint matrices
//!   world-space.
//! - drawing: each mesh of an animated scene has a
//!   [`GpuSkinnedMaterial`] (its `StandardMaterial` extended with a vertex
//!   stage) and a `MeshTag` naming its character in its chunk; a skinned
//!   vertex blends four world-space joint matrices (as Bevy's own
//!   skinning does), a rigid one reads its node's matrix.

#![deny(missing_docs)]

mod error;
mod material;
mod model;
mod playback;
mod player;
mod render;
mod scene;
mod world_joints;

use std::path::PathBuf;

use bevy::extract::ExtractSchedule;
use bevy::prelude::*;
use bevy::render::renderer::{RenderGraph, RenderGraphSystems};
use bevy::render::{Render, RenderApp, RenderSystems};
use bevy::transform::TransformSystems;

pub use error::GpuAnimationError;
pub use material::{GpuSkin, GpuSkinKey, GpuSkinnedMaterial};
pub use player::{GpuAnimationEvent, GpuAnimationPlayer, GpuAttachment, GpuRootMotion};
pub use render::RenderAnimationBuffers;

/// Actions a character blends at once: a crossfade's two clips (a
/// crossfade during a crossfade drops the lighter one). Each slot holds
/// a character's sampled values of one action, so this number bounds how
/// many characters fit one chunk of buffers; the GPU work follows the
/// actions used (on a CPU adapter, 5,000 foxes playing one clip each took
/// the same time per frame with 4 slots as with 2).
pub const ACTIONS_PER_CHARACTER: u32 = 2;

/// Animates the glTF scenes spawned with a [`GpuAnimationPlayer`] on the
/// GPU. See the [crate] documentation.
#[derive(Debug, Clone, Default)]
pub struct KeyframeGpuPlugin {
    /// Where the scenes' glTF files are read from (keyframe-gpu reads the
    /// file a scene was loaded from). `None`: Bevy's own rule, the
    /// `assets` folder under `BEVY_ASSET_ROOT`, else under the crate's
    /// manifest folder (`CARGO_MANIFEST_DIR`), else beside the
    /// executable. Give it when `AssetPlugin::file_path` is changed.
    pub asset_root: Option<PathBuf>,
    /// At most this many characters of a model in one set of buffers (a
    /// chunk of keyframe-gpu's `Crowd`; each chunk's meshes get a
    /// material of their own). `None`: as many as one storage binding of
    /// the device holds, which is what a chunk is at most in any case.
    pub chunk_limit: Option<u32>,
}

/// The plugin's systems, for ordering a game's own around them.
#[derive(SystemSet, Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyframeGpuSystems {
    /// `PostUpdate`: players' commands are queued, CPU twins advance,
    /// messages are sent, attachments are placed. Before transform
    /// propagation.
    Playback,
    /// `ExtractSchedule`: the frame's commands and step go to the render
    /// world.
    Extract,
}

impl Plugin for KeyframeGpuPlugin {
    fn build(&self, app: &mut App) {
        let root = self.asset_root.clone().unwrap_or_else(default_asset_root);
        material::add_shaders(app);
        let chunk_sizes = model::ChunkSizes::new(self.chunk_limit);
        app.add_plugins(MaterialPlugin::<GpuSkinnedMaterial>::default())
            .insert_resource(model::GpuModels::new(root))
            .insert_resource(chunk_sizes.clone())
            .init_resource::<scene::Owners>()
            .add_message::<GpuRootMotion>()
            .add_message::<GpuAnimationEvent>()
            .add_observer(scene::on_scene_ready)
            .add_systems(First, playback::start_frame)
            .configure_sets(
                PostUpdate,
                KeyframeGpuSystems::Playback.before(TransformSystems::Propagate),
            )
            .add_systems(
                PostUpdate,
                (
                    scene::release_removed,
                    playback::advance_players,
                    playback::place_attachments,
                    model::apply_chunk_sizes,
                    scene::refresh_morphed_meshes,
                )
                    .chain()
                    .in_set(KeyframeGpuSystems::Playback),
            );
        let Some(render_app) = app.get_sub_app_mut(RenderApp) else {
            return;
        };
        render_app
            .init_resource::<render::RenderAnimation>()
            .init_resource::<RenderAnimationBuffers>()
            .insert_resource(chunk_sizes)
            .add_systems(
                ExtractSchedule,
                render::extract_frame.in_set(KeyframeGpuSystems::Extract),
            )
            .add_systems(
                Render,
                // The crowd is made before `PrepareAssets`, where Bevy
                // prepares the materials that bind its buffers: a material
                // whose buffers were made again (a model grew) binds the
                // new ones in the same frame instead of its meshes missing
                // one.
                (
                    (render::forget_lost_device, render::make_crowd)
                        .chain()
                        .in_set(RenderSystems::ExtractCommands),
                    render::write_frame.in_set(RenderSystems::PrepareResources),
                ),
            )
            .add_systems(
                RenderGraph,
                render::submit_passes.in_set(RenderGraphSystems::Begin),
            );
    }
}

/// Bevy's default asset folder.
fn default_asset_root() -> PathBuf {
    let base = std::env::var_os("BEVY_ASSET_ROOT")
        .or_else(|| std::env::var_os("CARGO_MANIFEST_DIR"))
        .map(PathBuf::from)
        .or_else(|| {
            std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|p| p.to_path_buf()))
        })
        .unwrap_or_default();
    base.join("assets")
}
