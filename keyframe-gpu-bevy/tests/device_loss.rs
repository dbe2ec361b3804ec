//! A device lost while the plugin animates: the app does not panic, and
//! once Bevy has a new device the plugin animates on it again.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use bevy::camera::RenderTarget;
use bevy::light::cluster::GlobalClusterSettings;
use bevy::prelude::*;
use bevy::render::error_handler::{ErrorType, RenderErrorHandler, RenderErrorPolicy};
use bevy::render::renderer::RenderDevice;
use bevy::render::settings::RenderCreation;
use bevy::render::{Render, RenderApp, RenderSystems};
use common::gltf::{column, temp_dir, Column};
use common::{
    differing, render, render_with, save, shoot, Animate, Command, Picture, Placed, HEIGHT, WIDTH,
};
use keyframe_gpu_bevy::GpuAnimationPlayer;

/// Device losses Bevy's error handler was told of.
static LOSSES: AtomicU32 = AtomicU32::new(0);

/// The render frame at which the device is destroyed: after the scene is
/// set up and drawn.
const LOSE_AT: u32 = 30;

fn destroy_device_once(device: Res<RenderDevice>, mut frames: Local<u32>) {
    *frames += 1;
    if *frames == LOSE_AT {
        device.wgpu_device().destroy();
        // wgpu reports the loss when the device is next maintained: here,
        // at the end of the frame, so that Bevy's error handler sees it
        // before the next frame's systems run.
        let _ = device
            .wgpu_device()
            .poll(wgpu::PollType::wait_indefinitely());
    }
}

/// Frames drawn with the scene set up before the last shot: long after
/// the loss, when Bevy has made a new device.
const SHOT_AT: u32 = LOSE_AT + 40;

/// Sets `app` up to lose its device at render frame [`LOSE_AT`] and to
/// recover on a new one.
fn lose_the_device(app: &mut App) {
    // Bevy's GPU light clustering maps a staging buffer with an
    // unwrap that panics on a destroyed device (Bevy's, not the
    // plugin's): clustering runs on the CPU here.
    if let Some(mut clusters) = app.world_mut().get_resource_mut::<GlobalClusterSettings>() {
        clusters.gpu_clustering = None;
    }
    app.insert_resource(RenderErrorHandler(|error, _, _| {
        if error.ty == ErrorType::DeviceLost {
            LOSSES.fetch_add(1, Ordering::SeqCst);
        }
        RenderErrorPolicy::Recover(RenderCreation::default())
    }));
    if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
        render_app.add_systems(Render, destroy_device_once.in_set(RenderSystems::Cleanup));
    }
}

/// Renders `scenes` through a device loss: the picture [`SHOT_AT`]
/// frames after the scene is set up, and the losses Bevy's error
/// handler saw; `configure` adds to the app.
fn render_through_a_loss(
    scenes: Vec<Placed>,
    (eye, at): (Vec3, Vec3),
    configure: impl FnOnce(&mut App),
) -> (Picture, u32) {
    // Apps run one at a time (the harness holds a lock while one runs,
    // and configures it then): the losses counted from here are this
    // app's.
    let before = std::cell::Cell::new(0);
    let picture = render_with(scenes, eye, at, SHOT_AT, 1.0 / 60.0, |app| {
        before.set(LOSSES.load(Ordering::SeqCst));
        lose_the_device(app);
        configure(app);
    })
    .expect("the app renders again after the loss");
    (picture, LOSSES.load(Ordering::SeqCst) - before.get())
}

#[test]
fn after_a_lost_device_the_plugin_animates_on_the_new_one() {
    let dir = temp_dir("device_loss");
    let file = column(&dir, "red", &Column::red());
    let scenes = || {
        vec![Placed {
            file: file.clone(),
            at: Vec3::ZERO,
            animate: Animate::Gpu(vec![
                Command::Play("bend".into()),
                Command::Seek(0.5),
                Command::Paused(true),
            ]),
        }]
    };
    let (eye, at) = (Vec3::new(0.0, 2.0, 7.0), Vec3::new(0.0, 1.6, 0.0));
    let Some(before) = render(scenes(), eye, at, 5, 1.0 / 60.0) else {
        common::skip();
        return;
    };
    let (after, losses) = render_through_a_loss(scenes(), (eye, at), |_| {});
    assert_eq!(losses, 1, "Bevy's error handler saw the loss once");
    save(&before, &dir.join("before.png"));
    save(&after, &dir.join("after.png"));
    let d = differing(&before, &after, 12);
    eprintln!(
        "before and after the loss: {d} of {} pixels differ",
        WIDTH * HEIGHT
    );
    assert!(
        (d as f64) / f64::from(WIDTH * HEIGHT) < 0.004,
        "the pose after the loss differs: {d} pixels ({})",
        dir.display()
    );
}

/// Shoots the frame `at` frames after the plugin's player is set up into
/// `slot`.
fn shoot_at(
    at: u32,
    slot: Arc<Mutex<Option<Picture>>>,
) -> impl FnMut(Commands, Query<&GpuAnimationPlayer>, Query<&RenderTarget>, Local<u32>) {
    move |mut commands, players, targets, mut frames| {
        if !players.iter().any(GpuAnimationPlayer::is_ready) {
            return;
        }
        *frames += 1;
        if *frames != at {
            return;
        }
        let slot = slot.clone();
        shoot(&mut commands, &targets, move |picture| {
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(picture);
        });
    }
}

#[test]
fn after_a_lost_device_the_plugin_keeps_playing() {
    let dir = temp_dir("device_loss_playing");
    let file = column(&dir, "red", &Column::red());
    // The column bends on and on: its pose differs from frame to frame.
    let scenes = vec![Placed {
        file,
        at: Vec3::ZERO,
        animate: Animate::Gpu(vec![Command::Play("bend".into())]),
    }];
    let (eye, at) = (Vec3::new(0.0, 2.0, 7.0), Vec3::new(0.0, 1.6, 0.0));
    let earlier = Arc::new(Mutex::new(None));
    let system = shoot_at(SHOT_AT - 10, earlier.clone());
    let (last, losses) = render_through_a_loss(scenes, (eye, at), |app| {
        app.add_systems(Last, system);
    });
    assert_eq!(losses, 1, "Bevy's error handler saw the loss once");
    let earlier = earlier
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .expect("the frame ten before the last was shot");
    save(&earlier, &dir.join("earlier.png"));
    save(&last, &dir.join("last.png"));
    // Both frames are long after the loss, ten frames apart: the pose
    // moved between them.
    let moved = differing(&earlier, &last, 12);
    eprintln!("two frames after the loss, ten apart: {moved} pixels differ");
    assert!(
        moved > 300,
        "the column stands still on the new device: {moved} pixels differ ({})",
        dir.display()
    );
}
