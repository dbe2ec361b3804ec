//! The main world's frame: the commands of the players that changed go to
//! their model's list for the render world, whose `GpuPlayers` applies
//! them and steps every character on the GPU; the characters with a CPU
//! twin step it the same way and send root motion and markers as
//! messages, and their attachments are posed from it.

use bevy::prelude::*;
use keyframe_gpu::playback::{ClipHandle, Command, Player};
use keyframe_gpu::Action;

use crate::error::GpuAnimationError;
use crate::model::{ChunkSizes, GpuModels, Model};
use crate::player::{
    GpuAnimationEvent, GpuAnimationPlayer, GpuAttachment, GpuRootMotion, PlayerCommand,
};

/// Marks a player whose character keeps a CPU twin: the players the main
/// world steps every frame.
#[derive(Component, Debug, Default)]
pub(crate) struct CpuTwin;

/// What a character plays, kept from its commands alone (nothing per
/// frame), to start it again on a new device after a device loss: the
/// clip started last, its playhead at the playback clock `anchor`, the
/// speed and the pause.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Resume {
    clip: Option<ClipHandle>,
    playhead: f64,
    anchor: f64,
    speed: f64,
    paused: bool,
}

impl Default for Resume {
    fn default() -> Self {
        Resume {
            clip: None,
            playhead: 0.0,
            anchor: 0.0,
            speed: 1.0,
            paused: false,
        }
    }
}

impl Resume {
    /// The playhead at playback clock `clock`.
    fn playhead_at(&self, clock: f64) -> f64 {
        if self.paused {
            self.playhead
        } else {
            self.playhead + (clock - self.anchor) * self.speed
        }
    }

    /// Takes `command`, given at playback clock `clock`.
    fn apply(&mut self, command: &Command, clock: f64) {
        self.playhead = self.playhead_at(clock);
        self.anchor = clock;
        match *command {
            Command::Play(c) => {
                self.clip = Some(c);
                self.playhead = 0.0;
            }
            Command::Crossfade(c, _) if self.clip != Some(c) => {
                self.clip = Some(c);
                self.playhead = 0.0;
            }
            Command::SetSpeed(s) => self.speed = s,
            Command::SetPaused(p) => self.paused = p,
            Command::Seek(t) => self.playhead = t,
            _ => {}
        }
    }

    /// The commands that start a character at rest where this one is at
    /// playback clock `clock` (before the frame's step).
    fn commands(&self, clock: f64) -> impl Iterator<Item = Command> {
        let clip = self.clip;
        let time = self.playhead_at(clock);
        let (speed, paused) = (self.speed, self.paused);
        clip.into_iter().flat_map(move |c| {
            [
                Command::Play(c),
                Command::Seek(time),
                Command::SetSpeed(speed),
                Command::SetPaused(paused),
            ]
        })
    }
}

/// Starts the main world's frame: the lists the last extraction copied
/// are emptied (one clear per model).
pub(crate) fn start_frame(mut models: ResMut<GpuModels>) {
    for model in &mut models.models {
        model.commands.clear();
        model.resets.clear();
    }
}

/// The players changed since the last frame.
type ChangedPlayers<'w, 's> =
    Query<'w, 's, (Entity, &'static mut GpuAnimationPlayer), Changed<GpuAnimationPlayer>>;
/// The players with a CPU twin.
type Twins<'w, 's> = Query<'w, 's, (Entity, &'static mut GpuAnimationPlayer), With<CpuTwin>>;

/// Hands the commands of the players changed since the last frame to
/// their models, steps the CPU twins, and sends their messages. A frame
/// in which no player is given a command costs one change-tick test per
/// player without a twin.
pub(crate) fn advance_players(
    time: Res<Time>,
    mut players: ParamSet<(ChangedPlayers, Twins, Query<&GpuAnimationPlayer>)>,
    mut models: ResMut<GpuModels>,
    sizes: Res<ChunkSizes>,
    mut messages: (
        MessageWriter<GpuRootMotion>,
        MessageWriter<GpuAnimationEvent>,
    ),
) {
    let dt = time.delta_secs_f64();
    let models = &mut *models;
    let clock = models.clock;
    if sizes.fresh_crowds() != models.seen_fresh {
        // A crowd made anew on a new device: every character there is at
        // rest; each starts again where it was.
        models.seen_fresh = sizes.fresh_crowds();
        resume_all(&players.p2(), &mut models.models, clock);
    }
    for (entity, mut player) in &mut players.p0() {
        if player.commands.is_empty() {
            continue;
        }
        let player = &mut *player;
        let Some(state) = player.state.as_mut() else {
            continue;
        };
        let Some(model) = models.models.get_mut(state.model) else {
            continue;
        };
        for command in player.commands.drain(..) {
            match to_command(model, &command) {
                Ok(c) => {
                    if let Some(twin) = state.twin.as_mut() {
                        // The GPU skips what the twin refuses: nothing
                        // changes on either.
                        if let Err(e) = twin.command(c) {
                            let e = GpuAnimationError::Playback(e.to_string());
                            warn!("keyframe-gpu-bevy: {entity}: {command:?}: {e}");
                            player.error = Some(e);
                            continue;
                        }
                    }
                    state.resume.apply(&c, clock);
                    model.commands.push((state.slot, c));
                }
                Err(e) => {
                    warn!("keyframe-gpu-bevy: {entity}: {command:?}: {e}");
                    player.error = Some(e);
                }
            }
        }
    }
    models.dt = dt;
    models.clock += dt;
    for (entity, mut player) in &mut players.p1() {
        step_twin(entity, &mut player, &models.models, dt, &mut messages);
    }
}

/// Gives every set-up character the commands that start it again where
/// it was.
fn resume_all(players: &Query<&GpuAnimationPlayer>, models: &mut [Model], clock: f64) {
    for player in players.iter() {
        let Some(state) = player.state.as_ref() else {
            continue;
        };
        if let Some(model) = models.get_mut(state.model) {
            let commands = state.resume.commands(clock);
            model.commands.extend(commands.map(|c| (state.slot, c)));
        }
    }
}

/// Steps one CPU twin by `dt` and sends its root motion and markers.
fn step_twin(
    entity: Entity,
    player: &mut GpuAnimationPlayer,
    models: &[Model],
    dt: f64,
    (motion, events): &mut (
        MessageWriter<GpuRootMotion>,
        MessageWriter<GpuAnimationEvent>,
    ),
) {
    let Some(state) = player.state.as_mut() else {
        return;
    };
    let Some(twin) = state.twin.as_mut() else {
        return;
    };
    let has_root_motion = models.get(state.model).is_some_and(|m| m.has_root_motion);
    match twin.advance(dt) {
        Ok(frame) => {
            if has_root_motion {
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

/// The playback layer's command of `command`, checked as the GPU's
/// `GpuPlayers::command` checks it (clip names of the model, finite
/// numbers, durations not negative), so that what reaches the render
/// world is taken there.
fn to_command(model: &Model, command: &PlayerCommand) -> Result<Command, GpuAnimationError> {
    let clip = |name: &str| {
        model
            .clips
            .clip(name)
            .map_err(|_| GpuAnimationError::UnknownClip(name.to_owned()))
    };
    let number = |what: &str, v: f64, at_least_zero: bool| {
        if v.is_finite() && (!at_least_zero || v >= 0.0) {
            Ok(v)
        } else {
            Err(GpuAnimationError::Playback(format!(
                "{what} {v} is not a finite number{}",
                if at_least_zero { " >= 0" } else { "" }
            )))
        }
    };
    Ok(match command {
        PlayerCommand::Play(name) => Command::Play(clip(name)?),
        PlayerCommand::Crossfade(name, seconds) => {
            Command::Crossfade(clip(name)?, number("crossfade duration", *seconds, true)?)
        }
        PlayerCommand::Speed(s) => Command::SetSpeed(number("speed", *s, false)?),
        PlayerCommand::Paused(p) => Command::SetPaused(*p),
        PlayerCommand::Seek(t) => Command::Seek(number("seek time", *t, false)?),
    })
}

/// A new CPU twin of a character at rest (the GPU's state of a slot just
/// taken).
pub(crate) fn new_twin(model: &Model, slot: u32) -> Player {
    Player::new(&model.clips)
        .with_character(slot)
        .with_max_actions(crate::ACTIONS_PER_CHARACTER)
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
        let Some(twin) = state.twin.as_ref() else {
            continue;
        };
        let Some(model) = models.models.get(state.model) else {
            continue;
        };
        let Some(node) = model.posed.rig().node_by_name(&attachment.node) else {
            continue;
        };
        let actions: &[Action] = &twin.frame().actions;
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

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use bevy::ecs::message::Messages;

    use super::*;
    use crate::model::ModelKey;
    use crate::player::PlayerState;

    /// Idle players of the test world.
    const IDLE: u32 = 100;

    /// A main world with the committed column's model, [`IDLE`] set-up
    /// players without a twin (slots 0..), one with a twin (the last
    /// slot), and the plugin's main-world systems of a frame; each run
    /// steps 0.1 s.
    fn main_world() -> (World, Schedule, Vec<Entity>, Entity) {
        let mut world = World::new();
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
        let mut models = GpuModels::new(root.clone());
        let key = ModelKey {
            source: root.join("column.gltf"),
            clip_files: Vec::new(),
            root_motion: None,
        };
        let index = models.get_or_load(key).expect("the committed column");
        let spawn = |world: &mut World, models: &mut GpuModels, twin: bool| {
            let entity = world.spawn_empty().id();
            let model = &mut models.models[index];
            let (slot, _) = model.allocate(entity);
            let state = PlayerState {
                model: index,
                slot,
                twin: twin.then(|| new_twin(model, slot)),
                resume: Resume::default(),
            };
            let player = GpuAnimationPlayer {
                state: Some(state),
                ..GpuAnimationPlayer::new()
            };
            world.entity_mut(entity).insert(player);
            if twin {
                world.entity_mut(entity).insert(CpuTwin);
            }
            entity
        };
        let idle: Vec<Entity> = (0..IDLE)
            .map(|_| spawn(&mut world, &mut models, false))
            .collect();
        let twin = spawn(&mut world, &mut models, true);
        world.insert_resource(models);
        world.insert_resource(ChunkSizes::default());
        world.init_resource::<Time>();
        world.init_resource::<Messages<GpuRootMotion>>();
        world.init_resource::<Messages<GpuAnimationEvent>>();
        let mut schedule = Schedule::default();
        schedule.add_systems((start_frame, advance_players).chain());
        (world, schedule, idle, twin)
    }

    /// One frame of 0.1 s.
    fn frame(world: &mut World, schedule: &mut Schedule) {
        world
            .resource_mut::<Time>()
            .advance_by(Duration::from_millis(100));
        schedule.run(world);
    }

    /// The frame's commands of model 0, as the extraction copies them.
    /// (Players are visited in archetype order: sorted by slot here, each
    /// slot's in the order given.)
    fn queued(world: &World) -> Vec<(u32, Command)> {
        let mut commands = world.resource::<GpuModels>().models[0].commands.clone();
        commands.sort_by_key(|c| c.0);
        commands
    }

    fn player(world: &mut World, entity: Entity) -> Mut<'_, GpuAnimationPlayer> {
        world
            .get_mut::<GpuAnimationPlayer>(entity)
            .expect("a player")
    }

    fn clip(world: &World, name: &str) -> ClipHandle {
        let models = world.resource::<GpuModels>();
        models.models[0].clips.clip(name).expect("a clip")
    }

    #[test]
    fn only_commands_given_reach_the_render_world() {
        let (mut world, mut schedule, idle, twin) = main_world();
        // The first frame sees every player as new (changed), with no
        // command: nothing is queued.
        frame(&mut world, &mut schedule);
        assert!(queued(&world).is_empty(), "{:?}", queued(&world));
        player(&mut world, idle[7]).play("bend").seek(0.25);
        player(&mut world, twin).play("sway");
        frame(&mut world, &mut schedule);
        let (bend, sway) = (clip(&world, "bend"), clip(&world, "sway"));
        assert_eq!(
            queued(&world),
            vec![
                (7, Command::Play(bend)),
                (7, Command::Seek(0.25)),
                (IDLE, Command::Play(sway)),
            ]
        );
        // A frame with no command: nothing for the render world, and the
        // twin alone steps (0.1 s, from the 0.1 s of the frame before).
        frame(&mut world, &mut schedule);
        assert!(queued(&world).is_empty(), "{:?}", queued(&world));
        let current = world
            .get::<GpuAnimationPlayer>(twin)
            .and_then(GpuAnimationPlayer::current);
        let (clip_index, time) = current.expect("the twin plays");
        assert_eq!(clip_index, sway.index());
        assert!((time - 0.2).abs() < 1e-9, "the twin is at {time}");
        let idle_player = world.get::<GpuAnimationPlayer>(idle[7]);
        assert!(
            idle_player.is_some_and(|p| p.player().is_none()),
            "a character without a twin has no CPU player"
        );
        assert_eq!(world.resource::<GpuModels>().dt, 0.1);
    }

    #[test]
    fn a_refused_command_is_an_error_and_is_not_queued() {
        let (mut world, mut schedule, idle, _) = main_world();
        frame(&mut world, &mut schedule);
        player(&mut world, idle[0]).play("fly");
        player(&mut world, idle[1]).set_speed(f64::NAN);
        player(&mut world, idle[2]).crossfade("bend", -1.0);
        frame(&mut world, &mut schedule);
        assert!(queued(&world).is_empty(), "{:?}", queued(&world));
        for &e in &idle[..3] {
            let p = world.get::<GpuAnimationPlayer>(e).expect("a player");
            assert!(p.error().is_some(), "{e}: no error");
        }
        let p = world.get::<GpuAnimationPlayer>(idle[0]).expect("a player");
        assert!(
            matches!(p.error(), Some(GpuAnimationError::UnknownClip(n)) if n == "fly"),
            "{:?}",
            p.error()
        );
    }

    /// After a crowd is made anew on a new device, each character is
    /// started again where it was: its clip, at its playhead (the steps
    /// since its commands at its speed), its speed and pause.
    #[test]
    fn a_crowd_made_anew_gets_each_character_where_it_was() {
        let (mut world, mut schedule, idle, _) = main_world();
        player(&mut world, idle[3]).play("bend").set_speed(2.0);
        player(&mut world, idle[4])
            .play("sway")
            .seek(0.5)
            .set_paused(true);
        frame(&mut world, &mut schedule);
        frame(&mut world, &mut schedule);
        frame(&mut world, &mut schedule);
        world.resource::<ChunkSizes>().crowd_made_anew();
        frame(&mut world, &mut schedule);
        let (bend, sway) = (clip(&world, "bend"), clip(&world, "sway"));
        let got = queued(&world);
        // Three steps of 0.1 s at speed 2 before this frame's.
        let bend_at = 3.0 * 0.1 * 2.0;
        assert_eq!(got.len(), 8, "{got:?}");
        assert_eq!(got[0], (3, Command::Play(bend)));
        match got[1] {
            (3, Command::Seek(t)) => assert!((t - bend_at).abs() < 1e-9, "{t}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            got[2..4],
            [(3, Command::SetSpeed(2.0)), (3, Command::SetPaused(false))]
        );
        assert_eq!(
            got[4..],
            [
                (4, Command::Play(sway)),
                (4, Command::Seek(0.5)),
                (4, Command::SetSpeed(1.0)),
                (4, Command::SetPaused(true)),
            ]
        );
        frame(&mut world, &mut schedule);
        assert!(queued(&world).is_empty(), "once: {:?}", queued(&world));
    }
}
