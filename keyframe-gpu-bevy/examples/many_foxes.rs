//! Concentric rings of running foxes, animated either by this plugin
//! (`--animation gpu`) or by Bevy's own `AnimationPlayer`
//! (`--animation bevy`), for a side-by-side measurement. Shaped like
//! Bevy's `examples/stress_tests/many_foxes.rs`.
//!
//! ```text
//! many_foxes [COUNT] --model PATH --animation gpu|bevy --frames N [--clip NAME] [--screenshot PNG]
//! ```
//!
//! COUNT defaults to 1000. After N frames of animation (counted from the
//! frame every fox is playing) it prints one line and exits:
//!
//! ```text
//! many_foxes: animation=gpu foxes=1000 frame_ms_median=F main_world_animation_ms=A
//! ```
//!
//! `frame_ms_median` is the median wall time between two frames.
//! `main_world_animation_ms` is the median, per frame, of the main world's
//! time in three windows: the animation systems (Bevy's, or the plugin's
//! playback), transform propagation (`PostUpdate`), and the extraction of
//! skins and of this plugin's action table (`ExtractSchedule`): where
//! Bevy samples, blends and propagates every joint and computes every
//! joint matrix on the CPU, and where the plugin advances its players and
//! hands the action table to the render world.

use std::f32::consts::PI;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bevy::animation::AnimationPlayer;
use bevy::app::AnimationSystems;
use bevy::app::AppExit;
use bevy::asset::AssetPlugin;
use bevy::extract::{ExtractSchedule, MainWorld};
use bevy::gltf::GltfAssetLabel;
use bevy::pbr::extract_skins;
use bevy::prelude::*;
use bevy::render::view::screenshot::{save_to_disk, Screenshot};
use bevy::render::view::Tonemapping;
use bevy::render::{RenderApp, RenderPlugin};
use bevy::transform::TransformSystems;
use bevy::window::{PresentMode, WindowResolution};
use bevy::world_serialization::WorldAssetRoot;
use keyframe_gpu_bevy::{GpuAnimationPlayer, KeyframeGpuPlugin, KeyframeGpuSystems};

const RING_SPACING: f32 = 2.0;
const FOX_SPACING: f32 = 2.0;
/// Frames between "every fox plays" and the first measured frame: the
/// first frames compile pipelines and fill caches.
const WARM_UP_FRAMES: u32 = 5;
/// With `--screenshot`, the shot is taken this many frames before the
/// end (it is written a frame or two after it is asked for).
const SCREENSHOT_FRAMES: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Animation {
    Gpu,
    Bevy,
}

impl Animation {
    fn name(self) -> &'static str {
        match self {
            Animation::Gpu => "gpu",
            Animation::Bevy => "bevy",
        }
    }
}

#[derive(Debug, Clone, Resource)]
struct Options {
    count: usize,
    model: PathBuf,
    animation: Animation,
    frames: u32,
    clip: String,
    screenshot: Option<PathBuf>,
}

const USAGE: &str =
    "usage: many_foxes [COUNT] --model PATH --animation gpu|bevy --frames N [--clip NAME] [--screenshot PNG]";

fn parse_args(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut count = None;
    let mut model = None;
    let mut animation = None;
    let mut frames = None;
    let mut clip = String::from("Run");
    let mut screenshot = None;
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--model" => model = Some(PathBuf::from(value("--model")?)),
            "--animation" => {
                animation = Some(match value("--animation")?.as_str() {
                    "gpu" => Animation::Gpu,
                    "bevy" => Animation::Bevy,
                    other => return Err(format!("unknown --animation {other}\n{USAGE}")),
                })
            }
            "--frames" => {
                let v = value("--frames")?;
                frames = Some(
                    v.parse::<u32>()
                        .map_err(|_| format!("--frames {v}: not a count\n{USAGE}"))?,
                );
            }
            "--clip" => clip = value("--clip")?,
            "--screenshot" => screenshot = Some(PathBuf::from(value("--screenshot")?)),
            "-h" | "--help" => return Err(USAGE.to_owned()),
            positional if count.is_none() && !positional.starts_with('-') => {
                count = Some(
                    positional
                        .parse::<usize>()
                        .map_err(|_| format!("COUNT {positional}: not a count\n{USAGE}"))?,
                );
            }
            other => return Err(format!("unexpected argument {other}\n{USAGE}")),
        }
    }
    let model = model.ok_or_else(|| format!("--model is required\n{USAGE}"))?;
    let model =
        std::path::absolute(&model).map_err(|e| format!("--model {}: {e}", model.display()))?;
    if !model.is_file() {
        return Err(format!("--model {}: no such file", model.display()));
    }
    Ok(Options {
        count: count.unwrap_or(1000),
        model,
        animation: animation.ok_or_else(|| format!("--animation is required\n{USAGE}"))?,
        frames: frames.unwrap_or(300),
        clip,
        screenshot,
    })
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let mut app = App::new();
    app.add_plugins(
        DefaultPlugins
            .set(WindowPlugin {
                primary_window: Some(Window {
                    title: "many foxes".into(),
                    present_mode: PresentMode::AutoNoVsync,
                    resolution: WindowResolution::new(800, 600),
                    ..default()
                }),
                ..default()
            })
            .set(RenderPlugin {
                // Pipelines are compiled before the frame that needs them
                // ends: no measured frame misses a fox (nor skips one).
                synchronous_pipeline_compilation: true,
                ..default()
            })
            .set(AssetPlugin {
                // The model is given by path: its folder is the asset folder.
                file_path: options
                    .model
                    .parent()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                ..default()
            }),
    )
    .insert_resource(GlobalAmbientLight {
        color: Color::WHITE,
        brightness: 100.0,
        ..default()
    })
    .insert_resource(options.clone())
    .init_resource::<Measure>()
    .add_systems(Startup, setup)
    .add_systems(First, count_frames)
    .add_systems(Update, update_fox_rings)
    .add_systems(
        PostUpdate,
        (
            animation_started.before(AnimationSystems),
            animation_ended
                .after(AnimationSystems)
                .before(TransformSystems::Propagate),
            propagation_started
                .after(animation_ended)
                .before(TransformSystems::Propagate),
            propagation_ended.after(TransformSystems::Propagate),
        ),
    );
    match options.animation {
        Animation::Gpu => {
            app.add_plugins(KeyframeGpuPlugin {
                asset_root: options.model.parent().map(|p| p.to_path_buf()),
                ..default()
            });
            app.configure_sets(
                PostUpdate,
                KeyframeGpuSystems::Playback
                    .after(animation_started)
                    .before(animation_ended),
            );
        }
        Animation::Bevy => {
            app.add_systems(Update, start_bevy_animation);
        }
    }
    if let Some(render_app) = app.get_sub_app_mut(RenderApp) {
        render_app.init_resource::<ExtractionStart>().add_systems(
            ExtractSchedule,
            (
                extraction_started
                    .before(extract_skins)
                    .before(KeyframeGpuSystems::Extract),
                extraction_ended
                    .after(extract_skins)
                    .after(KeyframeGpuSystems::Extract),
            ),
        );
    }
    match app.run() {
        AppExit::Success => ExitCode::SUCCESS,
        AppExit::Error(_) => ExitCode::FAILURE,
    }
}

/// What is measured, frame by frame.
#[derive(Debug, Default, Resource)]
struct Measure {
    /// Frames since every fox plays.
    playing_frames: Option<u32>,
    last_frame: Option<Instant>,
    frame_times: Vec<Duration>,
    /// This frame's animation time in the main world so far.
    current: Duration,
    animation_times: Vec<Duration>,
    started: Option<Instant>,
    /// Set once every fox plays (by either path).
    all_playing: bool,
}

/// Extraction runs with the main world moved into the render world; its
/// share is added to the frame's total there.
#[derive(Debug, Default, Resource)]
struct ExtractionStart(Option<Instant>);

#[derive(Resource)]
struct FoxScene {
    gltf: Handle<bevy::gltf::Gltf>,
}

#[derive(Component, Clone, Copy)]
enum RotationDirection {
    CounterClockwise,
    Clockwise,
}

impl RotationDirection {
    fn sign(self) -> f32 {
        match self {
            RotationDirection::CounterClockwise => 1.0,
            RotationDirection::Clockwise => -1.0,
        }
    }
}

#[derive(Component)]
struct Ring {
    radius: f32,
}

#[derive(Component)]
struct Fox;

fn setup(
    mut commands: Commands,
    asset_server: Res<AssetServer>,
    mut meshes: ResMut<Assets<Mesh>>,
    mut materials: ResMut<Assets<StandardMaterial>>,
    options: Res<Options>,
) {
    let file = options
        .model
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let scene: Handle<WorldAsset> =
        asset_server.load(GltfAssetLabel::Scene(0).from_asset(file.clone()));
    commands.insert_resource(FoxScene {
        gltf: asset_server.load(file),
    });

    // Concentric rings of foxes running in opposite directions, 2 m apart,
    // the foxes of a ring at least 2 m apart along it.
    let ring_directions = [
        (
            Quat::from_rotation_y(PI),
            RotationDirection::CounterClockwise,
        ),
        (Quat::IDENTITY, RotationDirection::Clockwise),
    ];
    let mut ring_index = 0;
    let mut radius = RING_SPACING;
    let mut remaining = options.count;
    while remaining > 0 {
        let (base_rotation, direction) = ring_directions[ring_index % 2];
        let ring = commands
            .spawn((
                Transform::default(),
                Visibility::default(),
                direction,
                Ring { radius },
            ))
            .id();
        let circumference = PI * 2. * radius;
        let in_ring = ((circumference / FOX_SPACING) as usize).min(remaining);
        let spacing_angle = circumference / (in_ring as f32 * radius);
        for i in 0..in_ring {
            let angle = i as f32 * spacing_angle;
            let (s, c) = angle.sin_cos();
            let transform = Transform::from_xyz(radius * c, 0.0, radius * s)
                .with_scale(Vec3::splat(0.01))
                .with_rotation(base_rotation * Quat::from_rotation_y(-angle));
            let mut fox = commands.spawn((WorldAssetRoot(scene.clone()), transform, Fox));
            if options.animation == Animation::Gpu {
                // Every fox runs from its own phase, as Bevy's foxes do
                // once their players start on different frames.
                let mut player = GpuAnimationPlayer::new();
                player.play(options.clip.clone());
                fox.insert(player);
            }
            fox.insert(ChildOf(ring));
        }
        remaining -= in_ring;
        radius += RING_SPACING;
        ring_index += 1;
    }

    let zoom = 0.8;
    let translation = Vec3::new(
        radius * 1.25 * zoom,
        radius * 0.5 * zoom,
        radius * 1.5 * zoom,
    );
    commands.spawn((
        Camera3d::default(),
        Tonemapping::None,
        Transform::from_translation(translation)
            .looking_at(0.2 * Vec3::new(translation.x, 0.0, translation.z), Vec3::Y),
    ));
    commands.spawn((
        Mesh3d(meshes.add(Plane3d::default().mesh().size(5000.0, 5000.0))),
        MeshMaterial3d(materials.add(Color::srgb(0.3, 0.5, 0.3))),
    ));
    commands.spawn((
        Transform::from_rotation(Quat::from_euler(EulerRot::ZYX, 0.0, 1.0, -PI / 4.)),
        DirectionalLight {
            shadow_maps_enabled: true,
            ..default()
        },
    ));
}

/// The Bevy path: once the scenes have spawned their players, every
/// player runs the clip on repeat.
#[allow(
    clippy::too_many_arguments,
    reason = "a Bevy system: each argument is a resource or query it reads"
)]
fn start_bevy_animation(
    mut commands: Commands,
    options: Res<Options>,
    scene: Res<FoxScene>,
    gltfs: Res<Assets<bevy::gltf::Gltf>>,
    mut graphs: ResMut<Assets<AnimationGraph>>,
    mut players: Query<(Entity, &mut AnimationPlayer), Without<AnimationGraphHandle>>,
    mut measure: ResMut<Measure>,
    all: Query<(), With<AnimationGraphHandle>>,
    mut clip: Local<Option<(Handle<AnimationGraph>, AnimationNodeIndex)>>,
) {
    if clip.is_none() {
        let Some(gltf) = gltfs.get(&scene.gltf) else {
            return;
        };
        let Some(animation) = gltf.named_animations.get(options.clip.as_str()) else {
            eprintln!("many_foxes: the model has no clip named {}", options.clip);
            std::process::exit(1);
        };
        let (graph, nodes) = AnimationGraph::from_clip(animation.clone());
        *clip = Some((graphs.add(graph), nodes));
    }
    let Some((graph, node)) = clip.as_ref() else {
        return;
    };
    for (entity, mut player) in &mut players {
        player.play(*node).repeat();
        commands
            .entity(entity)
            .insert(AnimationGraphHandle(graph.clone()));
    }
    if all.iter().count() + players.iter().count() >= options.count {
        measure.all_playing = true;
    }
}

fn count_frames(
    mut commands: Commands,
    mut measure: ResMut<Measure>,
    options: Res<Options>,
    gpu_players: Query<&GpuAnimationPlayer>,
    mut exit: MessageWriter<AppExit>,
) {
    let now = Instant::now();
    if options.animation == Animation::Gpu
        && !measure.all_playing
        && gpu_players.iter().filter(|p| p.is_ready()).count() >= options.count
    {
        measure.all_playing = true;
    }
    let measuring = match measure.playing_frames {
        Some(n) => n >= WARM_UP_FRAMES,
        None => false,
    };
    if measuring {
        if let Some(last) = measure.last_frame {
            let dt = now - last;
            measure.frame_times.push(dt);
        }
        let current = measure.current;
        measure.animation_times.push(current);
    }
    measure.current = Duration::ZERO;
    measure.last_frame = Some(now);
    if measure.all_playing {
        let n = measure.playing_frames.map_or(0, |n| n + 1);
        measure.playing_frames = Some(n);
        let last = WARM_UP_FRAMES + options.frames;
        if n + SCREENSHOT_FRAMES == last {
            if let Some(path) = &options.screenshot {
                commands
                    .spawn(Screenshot::primary_window())
                    .observe(save_to_disk(path.clone()));
            }
        }
        if n >= last {
            println!(
                "many_foxes: animation={} foxes={} frame_ms_median={:.3} main_world_animation_ms={:.3}",
                options.animation.name(),
                options.count,
                median_ms(&mut measure.frame_times),
                median_ms(&mut measure.animation_times),
            );
            exit.write(AppExit::Success);
        }
    }
}

fn median_ms(times: &mut [Duration]) -> f64 {
    if times.is_empty() {
        return 0.0;
    }
    times.sort_unstable();
    times[times.len() / 2].as_secs_f64() * 1000.0
}

fn animation_started(mut measure: ResMut<Measure>) {
    measure.started = Some(Instant::now());
}

fn propagation_started(mut measure: ResMut<Measure>) {
    measure.started = Some(Instant::now());
}

fn propagation_ended(mut measure: ResMut<Measure>) {
    if let Some(start) = measure.started.take() {
        measure.current += start.elapsed();
    }
}

fn animation_ended(mut measure: ResMut<Measure>) {
    if let Some(start) = measure.started.take() {
        measure.current += start.elapsed();
    }
}

fn extraction_started(mut start: ResMut<ExtractionStart>) {
    start.0 = Some(Instant::now());
}

fn extraction_ended(mut start: ResMut<ExtractionStart>, mut main_world: ResMut<MainWorld>) {
    if let Some(start) = start.0.take() {
        if let Some(mut measure) = main_world.get_resource_mut::<Measure>() {
            measure.current += start.elapsed();
        }
    }
}

fn update_fox_rings(
    time: Res<Time>,
    mut rings: Query<(&Ring, &RotationDirection, &mut Transform)>,
) {
    let dt = time.delta_secs();
    for (ring, direction, mut transform) in &mut rings {
        let angular_velocity = 2.0 / ring.radius;
        transform.rotate_y(direction.sign() * angular_velocity * dt);
    }
}
