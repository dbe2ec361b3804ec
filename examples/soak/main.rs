//! `soak`: a long run of the mixer that must lose nothing: no validation
//! error, no result that drifts from the CPU twin, no memory that grows,
//! and a lost device rebuilt from the model.
//!
//! ```text
//! cargo run --release --example soak -- --frames N [--lose-device-at F] [--no-wait] [--instances C] [--model FILE]
//! ```
//!
//! It runs `N` frames of C/3 to C characters (`--instances`, default 48)
//! of a small rig built in code (`model.rs`), or of the rig and clips of a
//! glTF file (`--model`), through `Animator::with_mixer`. Each frame gets a new
//! action table (`frames.rs`): crossfades start and end, the character
//! count changes, masked layers and additive clips come and go. Every
//! 250th frame brings a hostile table instead (a negative weight, a NaN
//! time, an unknown clip, too many actions, an unknown mask, in turn),
//! which must be refused with its typed error, the previous frame staying
//! in effect. The first and the last frame, and every 1,000th frame (one
//! of the hostile ones), are read back and checked against the CPU twin
//! (`check.rs`; at most 64 characters, evenly spread, of a larger frame,
//! read back chunk by chunk where the animator has several). Every
//! frame's calls run inside a validation error scope. At frame `F` it destroys the device
//! (`Device::destroy`, wgpu's way to lose one), expects the next call to
//! return `Error::DeviceLost`, requests a new device, rebuilds the
//! animator from the same bound library and mixer description, and checks
//! the rebuilt animator's first frame against the twin at once.
//!
//! By default each submit waits for the frame before it (two frames in
//! flight, as a renderer keeps them). With `--no-wait` frames go back to
//! back as a game loop sends them: submit, then a poll that does not
//! block, never a wait (only the twin checks read back). The loss must
//! then still be reported within two frames.
//!
//! It ends with exactly one line on stdout:
//!
//! ```text
//! soak: frames=N rss_first_kb=A rss_last_kb=B validation_errors=E twin_checks=K/M device_lost=0|1 rebuilt=0|1
//! ```
//!
//! With `--no-wait` the line ends with ` detected_after=D`: the frames
//! submitted between the loss and the first call that returned
//! `Error::DeviceLost` (0: the loss's own frame), `-` when there was no
//! loss.
//!
//! `A` and `B` are the resident memory (`VmRSS` of `/proc/self/status`,
//! in kB) averaged over the first and the last quarter of the frames
//! after a warm-up (the first tenth of the frames, at least 2 and at most
//! 100: the first frame's pipelines, twin check and staging buffers), `E`
//! the validation errors the scopes caught, `K` of `M` twin checks within
//! tolerance. Exit code 0 when `E = 0`, `K = M`, `B <= 1.05 A`, every
//! hostile table was refused as expected and, with `--lose-device-at`,
//! the device was lost and rebuilt (with `--no-wait`, reported within two
//! frames: `D <= 2`); 1 otherwise (the reasons on stderr),
//! 2 for a bad command line.

use std::process::ExitCode;

use crate::headless::{request_device, AdapterChoice, Headless};
use keyframe_gpu::{Animator, BoundLibrary, Difference, Error, MixerDesc};

use frames::Story;

mod check;
#[path = "../common/cli.rs"]
mod cli;
mod frames;
#[path = "../common/headless.rs"]
mod headless;
mod model;

use frames::Table;

/// Every how many frames a hostile table comes, and a twin check.
const HOSTILE_EVERY: u64 = 250;
const CHECK_EVERY: u64 = 1_000;

/// Whether frame `f` of `frames` is checked against the twin: the first,
/// the last and every 1,000th.
fn check_frame(f: u64, frames: u64) -> bool {
    f == 0 || f + 1 == frames || f % CHECK_EVERY == CHECK_EVERY - 1
}

/// Frames before memory is measured: a tenth of them, at least 2 and at
/// most 100.
fn warm_up(frames: usize) -> usize {
    (frames / 10).clamp(2, 100)
}

/// The command line.
#[derive(clap::Parser)]
#[command(
    about = "A long run of the mixer: memory flat, results equal to the CPU twin, a lost device rebuilt"
)]
struct Cli {
    /// Frames to run.
    #[arg(long, default_value_t = 20_000)]
    frames: u64,
    /// Destroy the device at this frame, then rebuild on a new one.
    #[arg(long)]
    lose_device_at: Option<u64>,
    /// Submit frames back to back with non-blocking polls, as a game loop
    /// does, instead of waiting for the frame before each submit.
    #[arg(long)]
    no_wait: bool,
    /// The most characters a frame has (the fewest: a third of it).
    #[arg(long, default_value_t = 48, value_parser = clap::value_parser!(u32).range(3..=1_000_000))]
    instances: u32,
    /// Play the rig and clips of this glTF file instead of the built-in
    /// model.
    #[arg(long, value_name = "FILE")]
    model: Option<std::path::PathBuf>,
}

/// The device-free model: what survives a lost device.
struct Model {
    bound: BoundLibrary,
    desc: MixerDesc,
    story: Story,
}

/// What lives on a device: rebuilt from the [`Model`] when it is lost.
struct Gpu {
    // Dropped first: the animator's buffers, then the device.
    animator: Animator,
    h: Headless,
}

impl Gpu {
    fn new(model: &Model) -> Result<Gpu, String> {
        let h = request_device(AdapterChoice::Fallback)?;
        let animator = Animator::with_mixer(&h.device, &h.queue, &model.bound, &model.desc)
            .map_err(|e| e.to_string())?;
        Ok(Gpu { animator, h })
    }
}

/// The run's counts and state.
#[derive(Default)]
struct Soak {
    frames: u64,
    rss_kb: Vec<u64>,
    validation_errors: u64,
    checks: u64,
    checks_equal: u64,
    device_lost: bool,
    rebuilt: bool,
    /// Frames between the loss and the first call that reported it.
    detected_after: Option<u64>,
    /// Submit back to back (`--no-wait`).
    no_wait: bool,
    /// What failed, besides the counts (stderr).
    failures: Vec<String>,
    /// The table in effect: the last one the mixer took.
    current: Table,
    /// The previous frame's submission, waited for before the next submit
    /// returns: at most two frames in flight.
    in_flight: Option<wgpu::SubmissionIndex>,
}

fn main() -> ExitCode {
    let cli: Cli = match cli::start() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let model = match build_model(&cli) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("soak: {}", cli::one_line(&e));
            return ExitCode::from(2);
        }
    };
    let mut soak = Soak {
        rss_kb: Vec::with_capacity(cli.frames as usize),
        no_wait: cli.no_wait,
        ..Soak::default()
    };
    if let Err(e) = run(&cli, &model, &mut soak) {
        soak.failures.push(cli::one_line(&e));
    }
    let pass = report(&cli, &soak);
    if pass {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The built-in model, or `--model`'s file, with the mixer for
/// `--instances` characters; why not, in one line.
fn build_model(cli: &Cli) -> Result<Model, String> {
    let text = |e: Error| e.to_string();
    let (rig, library, story, split) = match &cli.model {
        Some(path) => model::from_file(path)?,
        None => (
            model::rig().map_err(text)?,
            model::library().map_err(text)?,
            model::story(),
            model::SPINE,
        ),
    };
    let bound = library.bind(&rig).map_err(text)?;
    let desc = model::mixer(&bound, cli.instances, split).map_err(text)?;
    Ok(Model { bound, desc, story })
}

/// The soak's frames; why it stopped early, in one line.
fn run(cli: &Cli, model: &Model, soak: &mut Soak) -> Result<(), String> {
    let mut gpu = Gpu::new(model)?;
    let chunks = gpu.animator.chunks().len();
    eprintln!(
        "soak: {} frames of up to {} characters (in {chunks} {} of {}) on {}",
        cli.frames,
        cli.instances,
        if chunks == 1 { "chunk" } else { "chunks" },
        gpu.animator.chunk_capacity(),
        gpu.h.describe()
    );
    let mut destroyed = false;
    for f in 0..cli.frames {
        soak.rss_kb.push(rss_kb());
        if cli.lose_device_at == Some(f) {
            gpu.h.device.destroy();
            destroyed = true;
        }
        let scope = gpu.h.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let outcome = frame(model, &mut gpu, soak, f, cli);
        if let Some(e) = pollster::block_on(scope.pop()) {
            soak.validation_errors += 1;
            eprintln!(
                "frame {f}: validation error: {}",
                cli::one_line(&e.to_string())
            );
        }
        soak.frames = f + 1;
        match outcome {
            Ok(()) => {}
            Err(Error::DeviceLost { during }) if destroyed && !soak.device_lost => {
                eprintln!("frame {f}: {during} reports the device lost; rebuilding");
                soak.device_lost = true;
                soak.detected_after = cli.lose_device_at.map(|at| f - at);
                // Everything of the old device goes before the new one
                // comes (its scope popped above): with both alive at
                // once, the new device's memory could not reuse the old
                // one's, and the freed holes would stay resident.
                soak.in_flight = None;
                drop(gpu);
                gpu = Gpu::new(model)?;
                // The frame again on the new device, checked at once.
                let scope = gpu.h.device.push_error_scope(wgpu::ErrorFilter::Validation);
                let replayed = replay(model, &mut gpu, soak, f);
                if let Some(e) = pollster::block_on(scope.pop()) {
                    soak.validation_errors += 1;
                    eprintln!(
                        "frame {f} (rebuilt): validation error: {}",
                        cli::one_line(&e.to_string())
                    );
                }
                replayed.map_err(|e| e.to_string())?;
                soak.rebuilt = true;
                eprintln!("frame {f}: rebuilt on {}", gpu.h.describe());
            }
            Err(e) => return Err(e.to_string()),
        }
    }
    Ok(())
}

/// One frame: this frame's table (or a hostile one, which must be
/// refused), recorded and submitted; on a check frame, read back and
/// compared with the CPU twin.
fn frame(model: &Model, gpu: &mut Gpu, soak: &mut Soak, f: u64, cli: &Cli) -> Result<(), Error> {
    let most = cli.instances;
    let fewest = most / 3;
    let queue = &gpu.h.queue;
    if f % HOSTILE_EVERY == HOSTILE_EVERY - 1 {
        let (bad, kind) = frames::hostile(
            &model.story,
            f,
            fewest,
            most,
            model.desc.actions_per_character,
        );
        match gpu.animator.set_actions(queue, &bad.actions, &bad.counts) {
            Err(Error::Mix(e)) if kind.refused_with(&e) => {}
            Err(e @ Error::DeviceLost { .. }) => return Err(e),
            other => soak.failures.push(format!(
                "frame {f}: a table with {kind:?} was not refused as it must be: {other:?}"
            )),
        }
    } else {
        let table = frames::table(&model.story, f, fewest, most);
        gpu.animator
            .set_actions(queue, &table.actions, &table.counts)?;
        soak.current = table;
    }
    submit(gpu, soak)?;
    if check_frame(f, cli.frames) {
        twin_check(model, gpu, soak, f)?;
    }
    Ok(())
}

/// After a rebuild: the table in effect set on the new animator, run and
/// checked against the twin.
fn replay(model: &Model, gpu: &mut Gpu, soak: &mut Soak, f: u64) -> Result<(), Error> {
    let t = &soak.current;
    gpu.animator
        .set_actions(&gpu.h.queue, &t.actions, &t.counts)?;
    submit(gpu, soak)?;
    twin_check(model, gpu, soak, f)
}

/// Records and submits the animator's passes, then waits for the previous
/// frame's submission (two frames in flight at most, as a renderer
/// keeps them), or with `--no-wait` polls without blocking.
fn submit(gpu: &Gpu, soak: &mut Soak) -> Result<(), Error> {
    let (device, queue) = (&gpu.h.device, &gpu.h.queue);
    let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("soak.frame"),
    });
    gpu.animator.record(&mut encoder);
    let submission = queue.submit([encoder.finish()]);
    if soak.no_wait {
        // A poll never times out; a lost device is the animator's to say.
        let _ = device.poll(wgpu::PollType::Poll);
        return Ok(());
    }
    if let Some(previous) = soak.in_flight.replace(submission) {
        device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(previous),
                timeout: None,
            })
            .map_err(|e| Error::Readback(e.to_string()))?;
    }
    Ok(())
}

/// Reads the frame back and compares it with the CPU twin of the table in
/// effect: the sampled characters of each chunk, chunk by chunk (a chunk
/// without one is not read).
fn twin_check(model: &Model, gpu: &Gpu, soak: &mut Soak, f: u64) -> Result<(), Error> {
    let t = &soak.current;
    let (chosen, actions, counts) = check::sample(&t.actions, &t.counts);
    let size = gpu.animator.chunk_capacity();
    let mut worst: Result<(f32, Option<Difference>), Error> = Ok((0.0, None));
    let (mut first_action, mut first) = (0usize, 0usize);
    for (k, chunk) in gpu.animator.chunks().iter().enumerate() {
        let start = k as u32 * size;
        let end = chosen[first..].partition_point(|&c| c < start + size) + first;
        if end == first {
            continue;
        }
        let own = &counts[first..end];
        let last_action = first_action + own.iter().map(|&n| n as usize).sum::<usize>();
        let gpu_poses = chunk.read_back(&gpu.h.device, &gpu.h.queue)?;
        let cpu = keyframe_gpu::cpu::mixed_poses(
            &model.bound,
            &model.desc.masks,
            &actions[first_action..last_action],
            own,
        )?;
        let local: Vec<u32> = chosen[first..end].iter().map(|c| c - start).collect();
        worst = match (worst, check::max_diff(&gpu_poses, &local, &cpu)) {
            (Ok(w), Ok(d)) if d.0 > w.0 => Ok(d),
            (Ok(w), Ok(_)) => Ok(w),
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
        (first, first_action) = (end, last_action);
    }
    soak.in_flight = None;
    soak.checks += 1;
    match worst {
        Ok((d, _)) if d <= check::TOL => soak.checks_equal += 1,
        Ok((d, worst)) => eprintln!(
            "frame {f}: GPU and CPU twin differ by {d} (tolerance {}); worst element against the README's tolerances: {}",
            check::TOL,
            worst.map_or_else(|| "none".to_owned(), |w| w.to_string())
        ),
        Err(e) => eprintln!("frame {f}: twin check: {e}"),
    }
    Ok(())
}

/// The process's resident memory in kB (`VmRSS`), 0 where unknown.
fn rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Prints the one line (and the failures on stderr); whether the run
/// passed.
fn report(cli: &Cli, soak: &Soak) -> bool {
    let warm = warm_up(soak.rss_kb.len()).min(soak.rss_kb.len().saturating_sub(1));
    let measured = &soak.rss_kb[warm..];
    let quarter = (measured.len() / 4).max(1);
    let mean = |v: &[u64]| v.iter().sum::<u64>() / (v.len().max(1) as u64);
    let first = mean(&measured[..quarter.min(measured.len())]);
    let last = mean(&measured[measured.len().saturating_sub(quarter)..]);
    let mut failures = soak.failures.clone();
    if soak.frames < cli.frames {
        failures.push(format!(
            "stopped after {} of {} frames",
            soak.frames, cli.frames
        ));
    }
    if soak.validation_errors > 0 {
        failures.push(format!("{} validation errors", soak.validation_errors));
    }
    if soak.checks_equal < soak.checks {
        failures.push(format!(
            "{} twin checks differ",
            soak.checks - soak.checks_equal
        ));
    }
    if last * 100 > first * 105 {
        failures.push(format!("memory grew: {first} kB -> {last} kB"));
    }
    if cli.lose_device_at.is_some() && !(soak.device_lost && soak.rebuilt) {
        failures.push("the device was not lost and rebuilt as asked".into());
    }
    if let Some(late) = soak.detected_after.filter(|&d| cli.no_wait && d > 2) {
        failures.push(format!(
            "the loss was reported {late} frames after it (at most 2)"
        ));
    }
    for f in &failures {
        eprintln!("soak: FAIL: {f}");
    }
    let detected = if cli.no_wait {
        match soak.detected_after {
            Some(d) => format!(" detected_after={d}"),
            None => " detected_after=-".to_string(),
        }
    } else {
        String::new()
    };
    println!(
        "soak: frames={} rss_first_kb={first} rss_last_kb={last} validation_errors={} twin_checks={}/{} device_lost={} rebuilt={}{detected}",
        soak.frames,
        soak.validation_errors,
        soak.checks_equal,
        soak.checks,
        u8::from(soak.device_lost),
        u8::from(soak.rebuilt),
    );
    failures.is_empty()
}
