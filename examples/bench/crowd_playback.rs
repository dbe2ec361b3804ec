//! `crowd_playback`: 100,000 characters (10,000 with `--quick`) of
//! `big_crowd`'s 84-node rig playing its 8 clips with root motion and two
//! markers a clip, 1% of them given a command each frame (a crossfade, or
//! a speed), 1% subscribed (their CPU twins give root motion and events in
//! the frame), played two ways:
//!
//! - on the GPU (`playback::GpuPlayers`): per frame the host gives the
//!   frame's commands, advances the subscribed twins, writes the commands
//!   (one buffer write), records and submits;
//! - on the CPU: a `playback::Player` per character takes the same
//!   commands, every player advances, `Crowd::set_players` packs and
//!   writes the whole table (a model mixed from the host, whose sampler
//!   sorts its rows by clip).
//!
//! Reported (medians over the measured frames):
//! - `main_thread_ms`: the GPU path's host time per frame (commands,
//!   `GpuPlayers::advance`, recording, submitting), no wait; `advance_ms`
//!   (table only) the part of it in `GpuPlayers::advance` (the subscribed
//!   twins' steps, the commands' one write);
//! - `cpu_player_ms`: the CPU path's host time for the same frame
//!   (commands, every `Player::advance`, `Crowd::set_players`,
//!   recording), no GPU work of its own;
//! - `playback_pass_ms`, `sampling_pass_ms`: the GPU time of the GPU
//!   path's playback passes and of its sampling dispatches, each in a
//!   compute pass of its own with timestamp queries (null where the
//!   adapter has none);
//!   `posing_ms` (table only) the mix and skin passes after them.

use std::sync::Arc;
use std::time::Instant;

use keyframe_gpu::internals::record_stage;
use keyframe_gpu::playback::{ClipHandle, Clips, Command as GpuCommand, GpuPlayers, Player};
use keyframe_gpu::{CharacterId, Crowd, MixerDesc};

use crate::big_crowd::robot_library;
use crate::gpu::{fail, Gpu};
use crate::measure::median;
use crate::mocap::Rng;

/// What `crowd_playback` measured.
pub struct CrowdPlayback {
    pub characters: u32,
    pub commands: usize,
    pub subscribed: usize,
    pub chunks: usize,
    pub main_thread_ms: f64,
    /// Of `main_thread_ms`, `GpuPlayers::advance` (the subscribed twins'
    /// steps and the commands' write).
    pub advance_ms: f64,
    pub cpu_player_ms: f64,
    pub playback_pass_ms: f64,
    pub sampling_pass_ms: f64,
    pub posing_ms: f64,
    pub timing: &'static str,
}

/// Six timestamps (three passes' begin and end), resolved and read back.
struct Stamps {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    read: wgpu::Buffer,
    period_ns: f64,
}

impl Stamps {
    fn new(gpu: &Gpu) -> Option<Stamps> {
        let h = &gpu.h;
        if !h.has(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let buffer = |label, usage| {
            h.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 48,
                usage,
                mapped_at_creation: false,
            })
        };
        use wgpu::BufferUsages as U;
        Some(Stamps {
            queries: h.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench.crowd_playback.timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 6,
            }),
            resolve: buffer(
                "bench.crowd_playback.resolve",
                U::QUERY_RESOLVE | U::COPY_SRC,
            ),
            read: buffer("bench.crowd_playback.read", U::MAP_READ | U::COPY_DST),
            period_ns: f64::from(h.queue.get_timestamp_period()),
        })
    }

    /// The three passes' times of the last frame, in ms.
    fn read(&self, gpu: &Gpu) -> [f64; 3] {
        let bytes = gpu.h.read_buffer(&self.read).unwrap_or_else(|e| {
            eprintln!("bench: timestamps: {e}");
            std::process::exit(2);
        });
        let t: [u64; 6] = bytemuck::pod_read_unaligned(&bytes);
        let ms = |a: u64, b: u64| b.saturating_sub(a) as f64 * self.period_ns / 1e6;
        [ms(t[0], t[1]), ms(t[2], t[3]), ms(t[4], t[5])]
    }
}

/// The GPU path: the crowd, its players and characters.
struct OnGpu {
    crowd: Crowd,
    players: GpuPlayers,
    characters: Vec<CharacterId>,
}

/// The CPU path: a crowd mixed from the host, a player per character.
struct OnCpu {
    crowd: Crowd,
    players: Vec<Player>,
    characters: Vec<CharacterId>,
}

/// A command of the frame: character, clip to crossfade to (or a speed).
#[derive(Clone, Copy)]
enum Command {
    Crossfade(usize, u32),
    Speed(usize, f64),
}

/// The frame's commands: 1% of the characters.
fn commands(rng: &mut Rng, characters: usize, out: &mut Vec<Command>) {
    out.clear();
    for _ in 0..characters / 100 {
        let who = (rng.next() * characters as f32) as usize % characters;
        let clip = (rng.next() * 8.0) as u32 % 8;
        out.push(if rng.next() < 0.8 {
            Command::Crossfade(who, clip)
        } else {
            Command::Speed(who, 0.5 + f64::from(rng.next()))
        });
    }
}

fn clip(clips: &Clips, k: u32) -> ClipHandle {
    fail("clip", clips.clip_at(k))
}

fn setup(gpu: &Gpu, characters: u32) -> (OnGpu, OnCpu, Arc<Clips>) {
    let (device, queue) = (&gpu.h.device, &gpu.h.queue);
    let (rig, library) = robot_library(&mut Rng::new(84));
    let bound = fail("bind", library.bind(&rig));
    let desc = MixerDesc::new(characters, 2);
    let mut clips = fail("clips", Clips::with_root(&bound, 0));
    for c in 0..8u32 {
        let d = f64::from(library.clips()[c as usize].duration());
        fail("marker", clips.add_marker(c, d * 0.25, "left"));
        fail("marker", clips.add_marker(c, d * 0.75, "right"));
    }
    let clips = Arc::new(clips);
    let mut crowd = Crowd::new();
    let model = fail(
        "model",
        crowd.add_mixed_model(device, queue, "robot", &bound, &desc),
    );
    let mut players = fail(
        "players",
        GpuPlayers::new(device, queue, &mut crowd, model, &clips),
    );
    let ids: Vec<CharacterId> = (0..characters)
        .map(|_| fail("character", crowd.add_character(model)))
        .collect();
    let mut cpu_crowd = Crowd::new();
    let cpu_model = fail(
        "model",
        cpu_crowd.add_mixed_model(device, queue, "robot", &bound, &desc),
    );
    let cpu_ids: Vec<CharacterId> = (0..characters)
        .map(|_| fail("character", cpu_crowd.add_character(cpu_model)))
        .collect();
    let mut cpu_players: Vec<Player> = Vec::with_capacity(characters as usize);
    // Every character plays a clip from its own time; 1% subscribed.
    let mut rng = Rng::new(58);
    for (i, &c) in ids.iter().enumerate() {
        let (k, t) = (i as u32 % 8, f64::from(rng.next()));
        fail(
            "play",
            players.command(c, GpuCommand::Play(clip(&clips, k))),
        );
        fail("seek", players.command(c, GpuCommand::Seek(t)));
        let mut p = fail("player", cpu_crowd.player(cpu_model, &clips));
        fail("play", p.command(GpuCommand::Play(clip(&clips, k))));
        fail("seek", p.command(GpuCommand::Seek(t)));
        cpu_players.push(p);
        if i % 100 == 0 {
            fail("subscribe", players.subscribe(device, queue, &crowd, c));
        }
    }
    let on_cpu = OnCpu {
        crowd: cpu_crowd,
        players: cpu_players,
        characters: cpu_ids,
    };
    let on_gpu = OnGpu {
        crowd,
        players,
        characters: ids,
    };
    (on_gpu, on_cpu, clips)
}

/// One frame's figures, in ms.
#[derive(Default)]
struct Frame {
    main: f64,
    advance: f64,
    cpu: f64,
    playback: f64,
    sampling: f64,
    posing: f64,
}

/// One GPU-path frame: its host time (and that of `advance` in it), and
/// its passes' GPU times.
fn gpu_frame(
    gpu: &Gpu,
    g: &mut OnGpu,
    clips: &Clips,
    todo: &[Command],
    stamps: &Option<Stamps>,
) -> Frame {
    let (device, queue) = (&gpu.h.device, &gpu.h.queue);
    let start = Instant::now();
    for &cmd in todo {
        let r = match cmd {
            Command::Crossfade(i, k) => g
                .players
                .command(g.characters[i], GpuCommand::Crossfade(clip(clips, k), 0.3)),
            Command::Speed(i, s) => g.players.command(g.characters[i], GpuCommand::SetSpeed(s)),
        };
        fail("command", r);
    }
    let before = start.elapsed();
    fail(
        "advance",
        g.players.advance(device, queue, &mut g.crowd, 1.0 / 60.0),
    );
    let advance = (start.elapsed() - before).as_secs_f64() * 1e3;
    let mut encoder = device.create_command_encoder(&Default::default());
    // The playback, sampling and posing stages, each in a timed pass.
    for k in 0..3 {
        let writes = stamps.as_ref().map(|s| wgpu::ComputePassTimestampWrites {
            query_set: &s.queries,
            beginning_of_pass_write_index: Some(2 * k as u32),
            end_of_pass_write_index: Some(2 * k as u32 + 1),
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("bench.crowd_playback"),
            timestamp_writes: writes,
        });
        record_stage(&g.crowd, k, &mut pass);
    }
    if let Some(s) = stamps {
        encoder.resolve_query_set(&s.queries, 0..6, &s.resolve, 0);
        encoder.copy_buffer_to_buffer(&s.resolve, 0, &s.read, 0, 48);
    }
    queue.submit([encoder.finish()]);
    let main = start.elapsed().as_secs_f64() * 1e3;
    let times = match stamps {
        Some(s) => {
            gpu.wait();
            s.read(gpu)
        }
        None => {
            gpu.wait();
            [f64::NAN; 3]
        }
    };
    let [playback, sampling, posing] = times;
    Frame {
        main,
        advance,
        playback,
        sampling,
        posing,
        ..Frame::default()
    }
}

/// One CPU-path frame's host time.
fn cpu_frame(gpu: &Gpu, c: &mut OnCpu, clips: &Clips, todo: &[Command]) -> f64 {
    let (device, queue) = (&gpu.h.device, &gpu.h.queue);
    let start = Instant::now();
    for &cmd in todo {
        let r = match cmd {
            Command::Crossfade(i, k) => {
                c.players[i].command(GpuCommand::Crossfade(clip(clips, k), 0.3))
            }
            Command::Speed(i, s) => c.players[i].command(GpuCommand::SetSpeed(s)),
        };
        fail("command", r);
    }
    for p in &mut c.players {
        fail("advance", p.advance(1.0 / 60.0).map(|_| ()));
    }
    let cast = c.characters.iter().copied().zip(&c.players);
    fail("set_players", c.crowd.set_players(queue, cast).map(|_| ()));
    let mut encoder = device.create_command_encoder(&Default::default());
    c.crowd.record(&mut encoder);
    drop(encoder);
    start.elapsed().as_secs_f64() * 1e3
}

pub fn run(gpu: &Gpu, quick: bool) -> CrowdPlayback {
    let characters: u32 = if quick { 10_000 } else { 100_000 };
    let (mut g, mut c, clips) = setup(gpu, characters);
    let stamps = Stamps::new(gpu);
    let mut rng = Rng::new(59);
    let todo: Vec<Vec<Command>> = (0..8)
        .map(|_| {
            let mut todo = Vec::new();
            commands(&mut rng, characters as usize, &mut todo);
            todo
        })
        .collect();
    // One warm-up frame (after the setup's 2 commands a character, the
    // pipelines' first use), then a few: a frame of the GPU path is a
    // second or more on a CPU adapter. The paths run apart, the GPU
    // path's frames first, so that neither's work lands in the other's
    // frames (the CPU path's writes go with the last submission).
    let mut frames: Vec<Frame> = todo
        .iter()
        .map(|t| gpu_frame(gpu, &mut g, &clips, t, &stamps))
        .collect();
    for (f, t) in frames.iter_mut().zip(&todo) {
        f.cpu = cpu_frame(gpu, &mut c, &clips, t);
    }
    gpu.h.queue.submit([]);
    gpu.wait();
    frames.remove(0);
    let chunks = g
        .crowd
        .models()
        .model_ids()
        .next()
        .and_then(|m| g.crowd.model(m))
        .map(|a| a.chunks().len())
        .unwrap_or(0);
    let pick = |f: fn(&Frame) -> f64| median(frames.iter().map(f).collect());
    CrowdPlayback {
        characters,
        commands: todo[1].len(),
        subscribed: (characters as usize).div_ceil(100),
        chunks,
        main_thread_ms: pick(|f| f.main),
        advance_ms: pick(|f| f.advance),
        cpu_player_ms: pick(|f| f.cpu),
        playback_pass_ms: pick(|f| f.playback),
        sampling_pass_ms: pick(|f| f.sampling),
        posing_ms: pick(|f| f.posing),
        timing: if stamps.is_some() {
            "timestamp queries"
        } else {
            "no timestamp queries: pass times unknown"
        },
    }
}

/// A JSON number, 4 significant digits after the point (null when not
/// finite).
fn num(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.4}")
    } else {
        "null".into()
    }
}

impl CrowdPlayback {
    /// The JSON row: exactly these fields.
    pub fn json(&self) -> String {
        format!(
            "{{\"workload\": \"crowd_playback\", \"characters\": {}, \"main_thread_ms\": {}, \
             \"cpu_player_ms\": {}, \"playback_pass_ms\": {}, \"sampling_pass_ms\": {}}}",
            self.characters,
            num(self.main_thread_ms),
            num(self.cpu_player_ms),
            num(self.playback_pass_ms),
            num(self.sampling_pass_ms),
        )
    }

    pub fn print(&self, out: &mut dyn std::io::Write) {
        let _ = writeln!(
            out,
            "\ncrowd_playback: {} characters of 84 nodes in {} chunks, {} commands and {} subscribed \
             a frame; pass times from {}\n\
             {:>15} {:>11} {:>14} {:>9} {:>17} {:>17} {:>11} {:>14}\n\
             {:>15.3} {:>11.3} {:>14.3} {:>9.1} {:>17.3} {:>17.3} {:>11.3} {:>14.4}",
            self.characters,
            self.chunks,
            self.commands,
            self.subscribed,
            self.timing,
            "main_thread_ms",
            "advance_ms",
            "cpu_player_ms",
            "cpu/main",
            "playback_pass_ms",
            "sampling_pass_ms",
            "posing_ms",
            "playback/samp",
            self.main_thread_ms,
            self.advance_ms,
            self.cpu_player_ms,
            self.cpu_player_ms / self.main_thread_ms,
            self.playback_pass_ms,
            self.sampling_pass_ms,
            self.posing_ms,
            self.playback_pass_ms / self.sampling_pass_ms,
        );
    }
}
