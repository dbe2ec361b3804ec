//! The component a game puts on a spawned glTF scene, its commands, and
//! the messages the playback layer sends back.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use bevy::ecs::message::Message;
use bevy::prelude::*;
use keyframe_gpu::playback::Player;

use crate::error::GpuAnimationError;

/// Animates the glTF scene spawned on the same entity (with
/// `WorldAssetRoot`) on the GPU: the scene's skinned meshes are drawn
/// with the joint matrices keyframe-gpu computes, its rigid meshes with
/// the node matrices, and nothing of the pose goes through the CPU.
///
/// Commands (`play`, `crossfade`, `set_speed`, `set_paused`, `seek`) are
/// queued and take effect in the next frame's playback step; clips are
/// named as in the file (the glTF animation's `name`), the scene's own
/// file first, then the files of [`with_clips_from`](Self::with_clips_from)
/// in order.
///
/// ```no_run
/// # use bevy::prelude::*;
/// # use keyframe_gpu_bevy::GpuAnimationPlayer;
/// # fn spawn(mut commands: Commands, assets: Res<AssetServer>) {
/// let mut player = GpuAnimationPlayer::new();
/// player.play("Run");
/// commands.spawn((
///     bevy::world_serialization::WorldAssetRoot(
///         assets.load(bevy::gltf::GltfAssetLabel::Scene(0).from_asset("Fox.glb")),
///     ),
///     player,
/// ));
/// # }
/// ```
#[derive(Component, Debug, Default)]
pub struct GpuAnimationPlayer {
    pub(crate) source: Option<PathBuf>,
    pub(crate) clip_files: Vec<PathBuf>,
    pub(crate) root_motion_node: Option<String>,
    pub(crate) keep_nodes: bool,
    pub(crate) cpu_twin: bool,
    pub(crate) commands: Vec<PlayerCommand>,
    pub(crate) state: Option<PlayerState>,
    pub(crate) error: Option<GpuAnimationError>,
}

/// A queued command.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PlayerCommand {
    Play(String),
    Crossfade(String, f64),
    Speed(f64),
    Paused(bool),
    Seek(f64),
}

/// What the plugin keeps for a player once its scene is set up.
#[derive(Debug)]
pub(crate) struct PlayerState {
    /// The model (index in the plugin's models).
    pub(crate) model: usize,
    /// The character's slot in its model's buffers (its `MeshTag`).
    pub(crate) slot: u32,
    /// The CPU twin of the character's GPU playback state, for a
    /// character that needs its values in the main world (root motion,
    /// markers, attachments).
    pub(crate) twin: Option<Player>,
    /// What the character plays, kept from its commands, to start it
    /// again on a new device.
    pub(crate) resume: crate::playback::Resume,
}

impl GpuAnimationPlayer {
    /// A player whose clips are those of the scene's own file, playing
    /// nothing yet (the rest pose).
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the scene's glTF file (a path on disk, absolute or relative
    /// to the plugin's asset root). Needed only when the scene was not
    /// loaded from a file through the asset server.
    #[must_use]
    pub fn with_source(mut self, path: impl AsRef<Path>) -> Self {
        self.source = Some(path.as_ref().to_path_buf());
        self
    }

    /// Adds the clips of another glTF file (for example animations kept
    /// apart from the model), bound to the scene's nodes by name.
    #[must_use]
    pub fn with_clips_from(mut self, path: impl AsRef<Path>) -> Self {
        self.clip_files.push(path.as_ref().to_path_buf());
        self
    }

    /// Reports the root motion of the node named `node` as
    /// [`GpuRootMotion`] messages, one per frame. The character keeps a
    /// CPU twin ([`with_cpu_twin`](Self::with_cpu_twin)).
    #[must_use]
    pub fn with_root_motion(mut self, node: impl Into<String>) -> Self {
        self.root_motion_node = Some(node.into());
        self
    }

    /// Keeps a CPU twin of the character in the main world: a
    /// keyframe-gpu `Player` given the same commands and steps as the
    /// GPU's playback pass, which is by construction the same state.
    /// Through it the character's marker events arrive as
    /// [`GpuAnimationEvent`] messages, its [`GpuAttachment`]s follow its
    /// pose, and [`current`](Self::current) and [`player`](Self::player)
    /// answer. It costs the main world one step per frame (and one CPU
    /// pose per attachment). A character made
    /// [`with_root_motion`](Self::with_root_motion), or with a
    /// [`GpuAttachment`] child when its scene is set up, keeps one
    /// anyway; every other character's playback state lives on the GPU
    /// alone and costs the main world nothing in a frame without a
    /// command.
    #[must_use]
    pub fn with_cpu_twin(mut self) -> Self {
        self.cpu_twin = true;
        self
    }

    /// Keeps every node entity of the scene. By default, once the scene
    /// is set up, its meshes become children of the player's entity (at
    /// their rest place) and its node entities are despawned (where the
    /// scene has a light, a camera or a morph target, only the nodes that
    /// lead to no mesh): the GPU poses them, and transform propagation
    /// would otherwise walk them every frame for nothing. Kept nodes stay
    /// at their rest transforms; [`GpuAttachment`] follows a joint's pose.
    #[must_use]
    pub fn keep_nodes(mut self) -> Self {
        self.keep_nodes = true;
        self
    }

    /// Plays the clip named `clip` from its start at weight 1, on repeat,
    /// replacing whatever played.
    pub fn play(&mut self, clip: impl Into<String>) -> &mut Self {
        self.commands.push(PlayerCommand::Play(clip.into()));
        self
    }

    /// Crossfades to the clip named `clip` over `seconds` of playback time:
    /// the playing clips fade out while it fades in.
    pub fn crossfade(&mut self, clip: impl Into<String>, seconds: f64) -> &mut Self {
        self.commands
            .push(PlayerCommand::Crossfade(clip.into(), seconds));
        self
    }

    /// Sets the playback speed (1 is the clips' own; negative plays
    /// backwards).
    pub fn set_speed(&mut self, speed: f64) -> &mut Self {
        self.commands.push(PlayerCommand::Speed(speed));
        self
    }

    /// Pauses or resumes every playhead and fade.
    pub fn set_paused(&mut self, paused: bool) -> &mut Self {
        self.commands.push(PlayerCommand::Paused(paused));
        self
    }

    /// Moves the playing clips' playheads to `seconds` (no events, no
    /// root motion).
    pub fn seek(&mut self, seconds: f64) -> &mut Self {
        self.commands.push(PlayerCommand::Seek(seconds));
        self
    }

    /// Whether the scene is set up and animated by the plugin.
    #[must_use]
    pub fn is_ready(&self) -> bool {
        self.state.is_some()
    }

    /// The last error: why the scene is not animated, or the last refused
    /// command.
    #[must_use]
    pub fn error(&self) -> Option<&GpuAnimationError> {
        self.error.as_ref()
    }

    /// The current clip (the one started last) and its playhead, once
    /// the scene is set up, for a character with a CPU twin
    /// ([`with_cpu_twin`](Self::with_cpu_twin)); `None` for one whose
    /// playback state lives on the GPU alone.
    #[must_use]
    pub fn current(&self) -> Option<(u32, f64)> {
        self.player()
            .and_then(Player::current)
            .map(|a| (a.clip.index(), a.time))
    }

    /// The CPU twin, once the scene is set up, for a character that keeps
    /// one ([`with_cpu_twin`](Self::with_cpu_twin)): its `frame()` is the
    /// last step's action table, root motion and events, the same as the
    /// GPU's.
    #[must_use]
    pub fn player(&self) -> Option<&Player> {
        self.state.as_ref().and_then(|s| s.twin.as_ref())
    }
}

/// The root motion of one character over one frame, sent in the frame's
/// `PostUpdate` (before transform propagation) for each player made
/// [`with_root_motion`](GpuAnimationPlayer::with_root_motion).
/// `translation` and `rotation` are in the model's space (the scene's:
/// the root node's motion turned and scaled by its parents' rest
/// transforms), `rotation` the turn since the step began.
#[derive(Message, Debug, Clone, Copy, PartialEq)]
pub struct GpuRootMotion {
    /// The entity of the [`GpuAnimationPlayer`].
    pub entity: Entity,
    /// How far the root moved during the frame.
    pub translation: Vec3,
    /// How far it turned.
    pub rotation: Quat,
}

/// A marker of a clip crossed during the frame (glTF animation `extras`
/// `{"markers": [{"name": .., "time": ..}]}`), sent in the frame's
/// `PostUpdate` for each character with a CPU twin
/// ([`with_cpu_twin`](GpuAnimationPlayer::with_cpu_twin)); a character
/// played on the GPU alone reports none.
#[derive(Message, Debug, Clone, PartialEq)]
pub struct GpuAnimationEvent {
    /// The entity of the [`GpuAnimationPlayer`].
    pub entity: Entity,
    /// The marker's name.
    pub name: Arc<str>,
    /// The clip's index in the model's clips.
    pub clip: u32,
    /// The marker's clip time.
    pub time: f64,
    /// The weight of the action that crossed it.
    pub weight: f32,
}

/// Places its entity at a node of a [`GpuAnimationPlayer`]'s scene each
/// frame, from keyframe-gpu's CPU twin of the same frame (no readback):
/// for a sword in a hand, a camera on a head. Put it on a child of the
/// player's entity; its `Transform` becomes the node's transform relative
/// to the scene's root. Costs one CPU pose of the character per frame.
/// The player needs a CPU twin: it has one when the attachment is its
/// child by the time its scene is set up, or when made
/// [`with_cpu_twin`](GpuAnimationPlayer::with_cpu_twin); an attachment
/// of a player without one stays where it is.
#[derive(Component, Debug, Clone, PartialEq, Eq)]
pub struct GpuAttachment {
    /// The node's name in the glTF file.
    pub node: String,
}

impl GpuAttachment {
    /// Follows the node named `node`.
    #[must_use]
    pub fn new(node: impl Into<String>) -> Self {
        GpuAttachment { node: node.into() }
    }
}
