//! Renders scenes with the plugin or with bevy_animation into an image,
//! without a window, one app at a time.

#![allow(dead_code)]

pub mod gltf;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use bevy::animation::AnimationPlayer;
use bevy::app::AnimationSystems;
use bevy::asset::AssetPlugin;
use bevy::camera::RenderTarget;
use bevy::gltf::{Gltf, GltfAssetLabel};
use bevy::image::Image;
use bevy::prelude::*;
use bevy::render::pipelined_rendering::PipelinedRenderingPlugin;
use bevy::render::render_resource::TextureFormat;
use bevy::render::view::screenshot::{Screenshot, ScreenshotCaptured};
use bevy::render::view::Tonemapping;
use bevy::render::RenderPlugin;
use bevy::window::ExitCondition;
use bevy::winit::WinitPlugin;
use bevy::world_serialization::WorldAssetRoot;
use keyframe_gpu_bevy::{GpuAnimationPlayer, KeyframeGpuPlugin};

/// Apps are heavy on a CPU adapter: one at a time.
pub static ONE_APP: Mutex<()> = Mutex::new(());

pub const WIDTH: u32 = 256;
pub const HEIGHT: u32 = 256;

/// How one scene of the picture is animated.
pub enum Animate {
    /// By the plugin: commands given to the player when it is spawned.
    Gpu(Vec<Command>),
    /// By bevy_animation: the clip named so, held at the time.
    Bevy { clip: String, time: f32 },
}

/// A command for a [`GpuAnimationPlayer`].
#[derive(Clone, Debug)]
pub enum Command {
    Play(String),
    Crossfade(String, f64),
    Seek(f64),
    Paused(bool),
    Speed(f64),
    /// `with_root_motion(node)`.
    RootMotion(String),
    /// `with_clips_from(path)`.
    ClipsFrom(PathBuf),
    /// `with_cpu_twin()`.
    CpuTwin,
}

/// One scene of a picture: its file, where it stands, how it moves.
pub struct Placed {
    pub file: PathBuf,
    pub at: Vec3,
    pub animate: Animate,
}

/// The picture: RGBA8 rows, `WIDTH` x `HEIGHT`.
#[derive(Clone)]
pub struct Picture {
    pub pixels: Vec<u8>,
}

#[derive(Resource, Clone)]
struct Setup {
    scenes: Arc<Vec<(PathBuf, Vec3, AnimateSpec)>>,
    target: Handle<Image>,
    frames_before_shot: u32,
    /// Frames stepped with every scene ready (the plugin's players set
    /// up, bevy_animation's playing).
    ready_frames: u32,
    /// Playback frame time of the plugin (each `update` advances the
    /// clock by it).
    step: f64,
}

#[derive(Clone)]
enum AnimateSpec {
    Gpu(Vec<Command>),
    Bevy { clip: String, time: f32 },
}

#[derive(Component)]
struct BevyAnimated {
    clip: String,
    time: f32,
    gltf: Handle<Gltf>,
}

#[derive(Resource, Default, Clone)]
struct Captured(Arc<Mutex<Option<Image>>>);

/// Renders `scenes` seen from `eye` towards `target`, after
/// `frames_before_shot` frames with every scene ready; each frame
/// advances the plugin's players by `step` seconds. `None` when no
/// adapter renders (the caller skips).
pub fn render(
    scenes: Vec<Placed>,
    eye: Vec3,
    look_at: Vec3,
    frames_before_shot: u32,
    step: f64,
) -> Option<Picture> {
    render_with(scenes, eye, look_at, frames_before_shot, step, |_| {})
}

/// [`render`], with `configure` given the app (its plugins finished)
/// before it runs.
pub fn render_with(
    scenes: Vec<Placed>,
    eye: Vec3,
    look_at: Vec3,
    frames_before_shot: u32,
    step: f64,
    configure: impl FnOnce(&mut App),
) -> Option<Picture> {
    let plugin = KeyframeGpuPlugin::default();
    let shot = (frames_before_shot, step);
    render_app(scenes, (eye, look_at), shot, plugin, configure)
}

/// [`render`] after 5 frames of 1/60 s, with the plugin's characters per
/// chunk bounded by `chunk_limit`.
pub fn render_chunked(
    scenes: Vec<Placed>,
    eye: Vec3,
    look_at: Vec3,
    chunk_limit: u32,
) -> Option<Picture> {
    let plugin = KeyframeGpuPlugin {
        chunk_limit: Some(chunk_limit),
        ..default()
    };
    render_app(scenes, (eye, look_at), (5, 1.0 / 60.0), plugin, |_| {})
}

/// One scene at the origin, seen from `eye` towards `look_at`, after
/// `frames` frames of `step` seconds.
pub fn render_one(
    file: &Path,
    animate: Animate,
    (eye, look_at): (Vec3, Vec3),
    frames: u32,
    step: f64,
) -> Option<Picture> {
    let scene = Placed {
        file: file.to_path_buf(),
        at: Vec3::ZERO,
        animate,
    };
    render(vec![scene], eye, look_at, frames, step)
}

/// The plugin's player holding `clip` at `time`.
pub fn held(clip: &str, time: f64) -> Animate {
    Animate::Gpu(vec![
        Command::Play(clip.into()),
        Command::Seek(time),
        Command::Paused(true),
    ])
}

/// [`render_with`] with `plugin` (its asset root set here); `shot` is
/// (frames before the shot, playback step).
fn render_app(
    scenes: Vec<Placed>,
    (eye, look_at): (Vec3, Vec3),
    (frames_before_shot, step): (u32, f64),
    plugin: KeyframeGpuPlugin,
    configure: impl FnOnce(&mut App),
) -> Option<Picture> {
    let _one = ONE_APP.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scenes
        .first()
        .and_then(|s| s.file.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: None,
                exit_condition: ExitCondition::DontExit,
                close_when_requested: false,
                ..default()
            })
            .set(AssetPlugin {
                file_path: dir.to_string_lossy().into_owned(),
                ..default()
            })
            .set(RenderPlugin {
                // Every pipeline compiled in the frame that first needs it:
                // the shot shows every mesh.
                synchronous_pipeline_compilation: true,
                ..default()
            })
            .disable::<WinitPlugin>()
            .disable::<PipelinedRenderingPlugin>()
            .disable::<bevy::log::LogPlugin>(),
    );
    if std::env::var_os("KEYFRAME_GPU_BEVY_TEST_LOG").is_some() {
        app.add_plugins(bevy::log::LogPlugin::default());
    }
    app.add_plugins(KeyframeGpuPlugin {
        asset_root: Some(dir.clone()),
        ..plugin
    })
    .insert_resource(bevy::time::TimeUpdateStrategy::ManualDuration(
        std::time::Duration::from_secs_f64(step),
    ));
    let captured = Captured::default();
    app.insert_resource(captured.clone());
    let mut image = Image::new_target_texture(WIDTH, HEIGHT, TextureFormat::Rgba8UnormSrgb, None);
    image.asset_usage = bevy::asset::RenderAssetUsages::default();
    let target = app.world_mut().resource_mut::<Assets<Image>>().add(image);
    let specs = scenes
        .into_iter()
        .map(|s| {
            let spec = match s.animate {
                Animate::Gpu(c) => AnimateSpec::Gpu(c),
                Animate::Bevy { clip, time } => AnimateSpec::Bevy { clip, time },
            };
            (s.file, s.at, spec)
        })
        .collect();
    app.insert_resource(Setup {
        scenes: Arc::new(specs),
        target: target.clone(),
        frames_before_shot,
        ready_frames: 0,
        step,
    })
    .insert_resource(GlobalAmbientLight {
        color: Color::WHITE,
        brightness: 300.0,
        ..default()
    })
    .add_systems(
        Startup,
        move |mut commands: Commands, assets: Res<AssetServer>, setup: Res<Setup>| {
            spawn(&mut commands, &assets, &setup, eye, look_at);
        },
    )
    .add_systems(Update, (start_bevy_players, count_and_shoot))
    .add_systems(PostUpdate, hold_bevy_players.before(AnimationSystems));
    app.finish();
    app.cleanup();
    configure(&mut app);
    for _ in 0..600 {
        app.update();
        if let Some(image) = captured.0.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let pixels = image.data?;
            return Some(Picture { pixels });
        }
    }
    None
}

fn spawn(commands: &mut Commands, assets: &AssetServer, setup: &Setup, eye: Vec3, look_at: Vec3) {
    for (file, at, spec) in setup.scenes.iter() {
        let name = file
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default();
        let scene = assets.load(GltfAssetLabel::Scene(0).from_asset(name.clone()));
        let mut e = commands.spawn((WorldAssetRoot(scene), Transform::from_translation(*at)));
        match spec {
            AnimateSpec::Gpu(cmds) => {
                let mut p = GpuAnimationPlayer::new();
                for c in cmds {
                    match c {
                        Command::Play(n) => p.play(n.clone()),
                        Command::Crossfade(n, d) => p.crossfade(n.clone(), *d),
                        Command::Seek(t) => p.seek(*t),
                        Command::Paused(b) => p.set_paused(*b),
                        Command::Speed(s) => p.set_speed(*s),
                        Command::RootMotion(node) => {
                            p = std::mem::take(&mut p).with_root_motion(node.clone());
                            &mut p
                        }
                        Command::ClipsFrom(path) => {
                            p = std::mem::take(&mut p).with_clips_from(path);
                            &mut p
                        }
                        Command::CpuTwin => {
                            p = std::mem::take(&mut p).with_cpu_twin();
                            &mut p
                        }
                    };
                }
                e.insert(p);
            }
            AnimateSpec::Bevy { clip, time } => {
                e.insert(BevyAnimated {
                    clip: clip.clone(),
                    time: *time,
                    gltf: assets.load(name),
                });
            }
        }
    }
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Msaa::Off,
        RenderTarget::Image(setup.target.clone().into()),
        Transform::from_translation(eye).looking_at(look_at, Vec3::Y),
    ));
    commands.spawn((
        Transform::from_rotation(Quat::from_euler(EulerRot::ZYX, 0.0, 0.8, -0.9)),
        DirectionalLight {
            illuminance: 3000.0,
            shadow_maps_enabled: true,
            ..default()
        },
    ));
    commands.spawn((
        Mesh3d(assets.add(Plane3d::default().mesh().size(20.0, 20.0).build())),
        MeshMaterial3d(assets.add(StandardMaterial::from(Color::srgb(0.5, 0.5, 0.55)))),
    ));
}

/// bevy_animation's side: once a scene's `AnimationPlayer` exists, it
/// plays the clip, held at the time.
fn start_bevy_players(
    mut commands: Commands,
    roots: Query<(Entity, &BevyAnimated)>,
    children: Query<&Children>,
    mut players: Query<&mut AnimationPlayer, Without<AnimationGraphHandle>>,
    gltfs: Res<Assets<Gltf>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
) {
    for (root, animated) in &roots {
        let Some(gltf) = gltfs.get(&animated.gltf) else {
            continue;
        };
        // keyframe-gpu names an unnamed animation "animation N"; Bevy
        // lists it by index only.
        let unnamed = animated
            .clip
            .strip_prefix("animation ")
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| gltf.animations.get(n));
        let Some(clip) = gltf
            .named_animations
            .get(animated.clip.as_str())
            .or(unnamed)
        else {
            panic!("the test file has no clip {}", animated.clip);
        };
        for e in children.iter_descendants(root) {
            if let Ok(mut player) = players.get_mut(e) {
                let (graph, node) = AnimationGraph::from_clip(clip.clone());
                player.play(node).seek_to(animated.time).pause();
                commands
                    .entity(e)
                    .insert(AnimationGraphHandle(graphs.add(graph)));
            }
        }
    }
}

/// Keeps bevy_animation's players at their time (a seek is consumed by
/// the frame that applies it).
fn hold_bevy_players(
    roots: Query<(Entity, &BevyAnimated)>,
    children: Query<&Children>,
    mut players: Query<&mut AnimationPlayer>,
) {
    for (root, animated) in &roots {
        for e in children.iter_descendants(root) {
            if let Ok(mut player) = players.get_mut(e) {
                for (_, active) in player.playing_animations_mut() {
                    active.seek_to(animated.time).pause();
                }
            }
        }
    }
}

fn count_and_shoot(
    mut commands: Commands,
    mut setup: ResMut<Setup>,
    gpu: Query<&GpuAnimationPlayer>,
    bevy_players: Query<(), With<AnimationGraphHandle>>,
    bevy_roots: Query<(), With<BevyAnimated>>,
    captured: Res<Captured>,
) {
    let gpu_ready = gpu.iter().all(GpuAnimationPlayer::is_ready);
    let bevy_ready = bevy_players.iter().count() >= bevy_roots.iter().count();
    if let Some(e) = gpu.iter().find_map(|p| p.error()) {
        panic!("the plugin refused the scene: {e}");
    }
    if !(gpu_ready && bevy_ready) {
        return;
    }
    setup.ready_frames += 1;
    if setup.ready_frames == setup.frames_before_shot {
        let slot = captured.0.clone();
        commands
            .spawn(Screenshot::image(setup.target.clone()))
            .observe(move |shot: On<ScreenshotCaptured>| {
                *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(shot.image.clone());
            });
    }
}

/// Shoots the frame the app draws now, from its camera's image; `keep`
/// gets the picture once it is read back (a frame or two later). For a
/// test that wants more pictures than the last.
pub fn shoot(
    commands: &mut Commands,
    targets: &Query<&RenderTarget>,
    keep: impl Fn(Picture) + Send + Sync + 'static,
) {
    let Some(target) = targets.iter().find_map(|t| match t {
        RenderTarget::Image(image) => Some(image.handle.clone()),
        _ => None,
    }) else {
        return;
    };
    commands
        .spawn(Screenshot::image(target))
        .observe(move |captured: On<ScreenshotCaptured>| {
            if let Some(pixels) = captured.image.data.clone() {
                keep(Picture { pixels });
            }
        });
}

/// Says that a test did not run for want of an adapter; with
/// `KEYFRAME_GPU_REQUIRE_ADAPTER=1` (CI) that is a failure, as in the
/// keyframe-gpu crate's tests.
pub fn skip() {
    assert!(
        std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() != Ok("1"),
        "no adapter rendered, and KEYFRAME_GPU_REQUIRE_ADAPTER=1"
    );
    eprintln!("no adapter rendered: skipped");
}

/// Pixels whose largest channel difference passes `tolerance` (0-255).
pub fn differing(a: &Picture, b: &Picture, tolerance: u8) -> usize {
    a.pixels
        .chunks(4)
        .zip(b.pixels.chunks(4))
        .filter(|(p, q)| {
            p.iter()
                .zip(q.iter())
                .take(3)
                .any(|(x, y)| x.abs_diff(*y) > tolerance)
        })
        .count()
}

/// Pixels of `colour`-ish hue: the column's paint, told from the grey
/// floor and the black background.
pub fn painted(p: &Picture, is_paint: impl Fn([u8; 3]) -> bool) -> usize {
    p.pixels
        .chunks(4)
        .filter(|c| is_paint([c[0], c[1], c[2]]))
        .count()
}

/// Writes the picture as a PNG next to the test's files, for a look.
pub fn save(p: &Picture, path: &Path) {
    let file = std::fs::File::create(path).expect("png file");
    let mut enc = png::Encoder::new(std::io::BufWriter::new(file), WIDTH, HEIGHT);
    enc.set_color(png::ColorType::Rgba);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().expect("png header");
    w.write_image_data(&p.pixels).expect("png data");
}
