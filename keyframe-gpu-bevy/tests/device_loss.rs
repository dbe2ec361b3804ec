//! A device lost while the plugin animates: the app does not panic, and
//! once Bevy has a new device the plugin animates on it again.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};

use bevy::light::cluster::GlobalClusterSettings;
use bevy::prelude::*;
use bevy::render::error_handler::{ErrorType, RenderErrorHandler, RenderErrorPolicy};
use bevy::render::renderer::RenderDevice;
use bevy::render::settings::RenderCreation;
use bevy::render::{Render, RenderApp, RenderSystems};
use common::gltf::{column, temp_dir, Column};
use common::{differing, render, render_with, save, Animate, Command, Placed, HEIGHT, WIDTH};

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
    // Bevy makes a new device after the loss; the shot is taken long
    // after it.
    let after = render_with(scenes(), eye, at, LOSE_AT + 40, 1.0 / 60.0, |app| {
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
    })
    .expect("the app renders again after the loss");
    assert_eq!(
        LOSSES.load(Ordering::SeqCst),
        1,
        "Bevy's error handler saw the loss once"
    );
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
