//! The main world's frame: every player's commands, then its step, then
//! the action table of every model in slot order, the root motion and
//! the markers as messages, and the attachments from the CPU twin.

use bevy::prelude::*;
use keyframe_gpu::playback::Command;
use keyframe_gpu::Action;

use crate::error::GpuAnimationError;
use crate::model::{GpuModels, Model};
use crate::player::{
    GpuAnimationEvent, GpuAnimationPlayer, GpuAttachment, GpuRootMotion, PlayerCommand,
};

/// Advances every player by the frame's time and stages its actions.
pub(crate) fn advance_players(
    time: Res<Time>,
    mut players: Query<(Entity, &mut GpuAnimationPlayer)>,
    mut models: ResMut<GpuModels>,
    mut motion: MessageWriter<GpuRootMotion>,
    mut events: MessageWriter<GpuAnimationEvent>,
) {
    let dt = time.delta_secs_f64();
    for (entity, mut player) in &mut players {
        let player = &mut *player;
        let Some(state) = player.state.as_mut() else {
            continue;
        };
        let Some(model) = models.models.get_mut(state.model) else {
            continue;
        };
        for command in player.commands.drain(..) {
            if let Err(e) = apply(model, &mut state.player, &command) {
                warn!("keyframe-gpu-bevy: {entity}: {command:?}: {e}");
                player.error = Some(e);
            }
        }
        match state.player.advance(dt) {
            Ok(frame) => {
                if let Some(staged) = model.staged.get_mut(state.slot as usize) {
                    staged.clear();
                    staged.extend_from_slice(&frame.actions);
                }
                if model.has_root_motion {
                    let t = frame.root_motion.translation;
                    let r = frame.root_motion.rotation;
                    motion.write(GpuRootMotion {
                        entity,
                        translation: Vec3::new(t.x, t.y, t.z),
                        rotation: Quat::from_xyzw(r.x, r.y, r.z, r.w),
                    });
                }
                for e in &frame.events {
                    events.write(GpuAnimationEvent {
                        entity,
                        name: e.name.clone(),
                        clip: e.clip.index(),
                        time: e.time,
                        weight: e.weight,
                    });
                }
            }
            Err(e) => {
                let e = GpuAnimationError::Playback(e.to_string());
                warn!("keyframe-gpu-bevy: {entity}: {e}");
                player.error = Some(e);
            }
        }
    }
    for model in &mut models.models {
        model.frame_counts.clear();
        model.frame_actions.clear();
        for staged in &model.staged {
            model.frame_counts.push(staged.len() as u32);
            model.frame_actions.extend_from_slice(staged);
        }
    }
}

fn apply(
    model: &Model,
    player: &mut keyframe_gpu::playback::Player,
    command: &PlayerCommand,
) -> Result<(), GpuAnimationError> {
    let clip = |name: &str| {
        model
            .clips
            .clip(name)
            .map_err(|_| GpuAnimationError::UnknownClip(name.to_owned()))
    };
    let playback = |e: keyframe_gpu::Error| GpuAnimationError::Playback(e.to_string());
    let command = match command {
        PlayerCommand::Play(name) => Command::Play(clip(name)?),
        PlayerCommand::Crossfade(name, seconds) => Command::Crossfade(clip(name)?, *seconds),
        PlayerCommand::Speed(s) => Command::SetSpeed(*s),
        PlayerCommand::Paused(p) => Command::SetPaused(*p),
        PlayerCommand::Seek(t) => Command::Seek(*t),
    };
    player.command(command).map_err(playback)
}

/// Places attachments at their node, from the CPU twin of the frame's
/// actions of their player.
pub(crate) fn place_attachments(
    mut attachments: Query<(&GpuAttachment, &ChildOf, &mut Transform)>,
    players: Query<&GpuAnimationPlayer>,
    models: Res<GpuModels>,
) {
    for (attachment, parent, mut transform) in &mut attachments {
        let Ok(player) = players.get(parent.parent()) else {
            continue;
        };
        let Some(state) = player.state.as_ref() else {
            continue;
        };
        let Some(model) = models.models.get(state.model) else {
            continue;
        };
        let Some(node) = model.posed.rig().node_by_name(&attachment.node) else {
            continue;
        };
        let actions: &[Action] = &state.player.frame().actions;
        let counts = [actions.len() as u32];
        let Ok(poses) = keyframe_gpu::cpu::mixed_poses(&model.posed, &[], actions, &counts) else {
            continue;
        };
        if let Some(world) = poses.world(0, node) {
            let m = Mat4::from_cols_array(&world.to_cols_array());
            *transform = Transform::from_matrix(m);
        }
    }
}
