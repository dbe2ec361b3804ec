//! Benchmark of the GPU sampler against the least work of the same shape
//! (the `floor` kernel: the device's practical limit) and against the CPU
//! reference.
//!
//! `cargo run --release --example bench -- [--json] [--quick] [--plot FILE.png]`
//!
//! Workloads (seeded random data built in code, see `bench/data.rs`):
//! `crowd_rot`, `crowd_mixed`, `crowd_coherent`, `long_keys`,
//! `long_keys_irregular`, `morph`, `skin_chain` (sampling followed by the
//! morph and skin passes of `gpu::skin`), `tiny`, `blend_chain` (the
//! mixer's chain, measured against itself with one action per character:
//! `bench/blend.rs`) and `compressed` (a 65-joint motion-capture-like
//! library compressed, against itself uncompressed; `compressed_large`,
//! the same of 130 joints: `bench/compressed.rs`) and `big_crowd` (100,000 characters of an
//! 84-node, 4-skin rig in one crowd, past one storage binding:
//! `bench/big_crowd.rs`) and `crowd_playback` (those characters played on
//! the GPU, 1% given a command and 1% subscribed each frame, against a
//! `Player` per character on the CPU: `bench/crowd_playback.rs`). For each, on the same
//! device in the same run, medians over frames after a warm-up:
//! - `gpu_ms`: `set_instances` + record + submit + wait (`device.poll`),
//!   no readback. With `Features::TIMESTAMP_QUERY` the time between the
//!   pass's begin and end timestamps; otherwise wall time of the whole frame.
//!   The wall time is printed in the table in both cases.
//! - `gpu_readback_ms`: wall time of one steady-state frame that also reads
//!   results back, pipelined through a two-slot `gpu::ReadbackRing`: set +
//!   record + copy into a staging slot + submit frame N + `map_async`, then
//!   wait for frame N-1 (its own submission only) and copy it into a reused
//!   `Vec` (`skin_chain`: the joint matrices). Frame N runs while frame
//!   N-1 is read; the blocking `read_back` would wait for frame N itself.
//! - `floor_ms`: the kernel in `bench/floor.rs`, measured like `gpu_ms`:
//!   the same dispatch and output as the sampler's, reading per output the
//!   instance's time and two key values from a dense array (key index from
//!   the time arithmetically) and writing their sum; no clip, track or
//!   search table.
//! - `tables_ms`: the kernel in `bench/tables.rs`, measured like `gpu_ms`:
//!   the sampler's table reads (instance, clip, track row, search texel)
//!   and two value loads per output, without the search and the
//!   interpolation.
//! - `cpu_ms`: the CPU twin on one thread: `resolve_instances_into` +
//!   `internals::sample_resolved` into a reused buffer (`skin_chain`: the
//!   twin's whole chain, `cpu::poses`).
//! - `gpu_over_floor`: the median over frames of `gpu_ms / floor_ms`, each
//!   sampler frame paired with the floor frame right after it (the same
//!   machine load), which is steadier on a shared machine than the ratio of
//!   the two medians; `gpu_over_tables` likewise.
//! - `skin_chain` also reports `sample_ms`, the sampling pass alone, timed
//!   in the same frames; "whole chain / sampling" is the median of the
//!   per-frame ratios; its floor and tables are those of the sampling shape.
//!
//! With `--json`, stdout holds one JSON object per workload per line and
//! nothing else; the table goes to stderr.

//!
//! Modules: `gpu` (the device from examples/common/headless.rs, timestamps, one timed
//! frame), `measure` (frame budgets, medians), `workloads` and `data` (what
//! is measured), `run` (one workload: sampler, floor, tables, readback,
//! CPU), `blend` (`blend_chain`), `floor` and `tables` (the kernels), `report` (table, JSON), `sweep` and `plot`
//! (`--plot`), `alloc` (the counting allocator).

mod alloc;
mod big_crowd;
mod blend;
mod compressed;
mod crowd_playback;
// The one module shared with another example (sample's plot): Cargo has no
// library target for examples, so it is included by path, not copied.
#[path = "../common/canvas.rs"]
mod canvas;
mod data;
mod floor;
mod gpu;
#[path = "../common/headless.rs"]
mod headless;
mod measure;
// The motion-capture-like model, shared with tests/compressed.rs.
#[path = "../common/mocap.rs"]
mod mocap;
mod plot;
mod report;
mod run;
mod sweep;
mod tables;
#[path = "../common/track_diff.rs"]
mod track_diff;
mod workloads;

/// Parses and validates a bench kernel's WGSL (the prelude and the kernel)
/// with naga, panicking with naga's report: the check the floor and tables
/// kernels' tests share.
#[cfg(test)]
fn validated_wgsl(source: &str) -> naga::Module {
    let module = naga::front::wgsl::parse_str(source)
        .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .unwrap_or_else(|e| panic!("{}", e.emit_to_string(source)));
    module
}

use std::time::Duration;

use clap::Parser;
use keyframe_gpu::SkinStrategy;

use gpu::Gpu;
use measure::Frames;

#[derive(Parser, Debug)]
#[command(about = "Benchmark of the keyframe-gpu sampler")]
struct Args {
    /// One JSON object per workload per line on stdout (table on stderr).
    #[arg(long)]
    json: bool,
    /// Reduced sizes and frame counts (under a minute on 2 CPU cores).
    #[arg(long)]
    quick: bool,
    /// Also sweep key count and instance count and write a PNG chart.
    #[arg(long, value_name = "FILE.png")]
    plot: Option<std::path::PathBuf>,
    /// Run only the workloads whose names contain one of these (comma list).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// The skin pass's strategy for `skin_chain` (`gpu::skin::SkinStrategy`):
    /// auto picks per-instance on CPU adapters, per-node on GPUs.
    #[arg(long, value_enum, default_value = "auto")]
    skin_strategy: StrategyArg,
    /// The sampler's plan (`SamplerPlan`): auto picks by adapter.
    #[arg(long, value_enum, default_value = "auto")]
    plan: PlanArg,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum PlanArg {
    Auto,
    Reference,
    #[value(alias = "cpu-adapter")]
    Grouped,
    ClipBlocks,
}

impl From<PlanArg> for keyframe_gpu::SamplerPlan {
    fn from(p: PlanArg) -> Self {
        use keyframe_gpu::SamplerPlan;
        match p {
            PlanArg::Auto => SamplerPlan::Auto,
            PlanArg::Reference => SamplerPlan::Reference,
            PlanArg::Grouped => SamplerPlan::Grouped,
            PlanArg::ClipBlocks => SamplerPlan::ClipBlocks,
        }
    }
}

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum StrategyArg {
    Auto,
    Staged,
    PerInstance,
    PerNode,
}

impl From<StrategyArg> for SkinStrategy {
    fn from(s: StrategyArg) -> Self {
        match s {
            StrategyArg::Auto => SkinStrategy::Auto,
            StrategyArg::Staged => SkinStrategy::Staged,
            StrategyArg::PerInstance => SkinStrategy::PerInstance,
            StrategyArg::PerNode => SkinStrategy::PerNode,
        }
    }
}

impl Args {
    /// Whether `--only` lets workload `name` run.
    fn wants(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|o| name.contains(o.as_str()))
    }
}

/// The frames each workload measures: fewer with `--quick`.
fn measured_frames(quick: bool) -> Frames {
    if quick {
        Frames {
            warmup: 2,
            min: 5,
            max: 40,
            min_time: Duration::from_millis(150),
        }
    } else {
        Frames {
            warmup: 3,
            min: 21,
            max: 200,
            min_time: Duration::from_millis(1500),
        }
    }
}

fn main() {
    let args = Args::parse();
    let mut gpu = Gpu::new().unwrap_or_else(|e| {
        eprintln!("bench: no GPU adapter: {e}");
        std::process::exit(2);
    });
    gpu.skin_strategy = args.skin_strategy.into();
    gpu.plan = args.plan.into();
    let frames = measured_frames(args.quick);
    eprintln!(
        "bench: adapter {} ({}), timing: {}{}",
        gpu.adapter,
        gpu.backend,
        gpu.timing(),
        if args.quick { ", quick sizes" } else { "" }
    );
    let mut results = Vec::new();
    for (name, build) in workloads::workloads(args.quick) {
        if !args.wants(name) {
            continue;
        }
        let w = build();
        eprintln!("bench: {name}: {} instances; {}", w.instances.len(), w.note);
        let r = run::run_workload(&gpu, w, frames);
        if args.json {
            println!("{}", r.json(&gpu));
        }
        results.push(r);
    }
    let blend_name = "blend_chain";
    let blended = args.wants(blend_name).then(|| {
            eprintln!(
                "bench: {blend_name}: the mixer's chain (sampling every action, mixing, hierarchy, joints)"
            );
            let b = blend::run(&gpu, args.quick, frames);
            if args.json {
                println!("{}", b.json(&gpu));
            }
            b
        });
    let mut packed = Vec::new();
    for shape in &compressed::SHAPES {
        let name = shape.name;
        if !args.wants(name) {
            continue;
        }
        eprintln!(
            "bench: {name}: a {}-joint motion-capture-like library, compressed and not",
            shape.joints
        );
        let c = compressed::run(&gpu, shape, args.quick, frames);
        if args.json {
            println!("{}", c.json(&gpu));
        }
        packed.push(c);
    }
    let big_name = "big_crowd";
    let big = args.wants(big_name).then(|| {
            eprintln!(
                "bench: {big_name}: a crowd past one storage binding (chunks), sampling, pose and joints"
            );
            let b = big_crowd::run(&gpu, args.quick);
            if args.json {
                println!("{}", b.json(&gpu));
            }
            b
        });
    let playback_name = "crowd_playback";
    let played = args.wants(playback_name).then(|| {
        eprintln!(
            "bench: {playback_name}: characters played on the GPU against Players on the CPU"
        );
        let p = crowd_playback::run(&gpu, args.quick);
        if args.json {
            println!("{}", p.json());
        }
        p
    });
    // With --json the tables go to stderr, the JSON lines alone to stdout.
    let mut out: Box<dyn std::io::Write> = match args.json {
        true => Box::new(std::io::stderr()),
        false => Box::new(std::io::stdout()),
    };
    if !results.is_empty() {
        report::print_table(&mut out, &gpu, &results);
    }
    blended.iter().for_each(|b| b.print(&mut out));
    packed.iter().for_each(|c| c.print(&mut out));
    big.iter().for_each(|b| b.print(&mut out));
    played.iter().for_each(|p| p.print(&mut out));
    drop(out);
    if let Some(path) = &args.plot {
        plot_sweep(&gpu, args.quick, path);
    }
}

/// `--plot`: sweeps key and instance counts and writes the chart to `path`
/// (exit 2 when it cannot be written).
fn plot_sweep(gpu: &Gpu, quick: bool, path: &std::path::Path) {
    let sweep_frames = Frames {
        warmup: 2,
        min: 5,
        max: 30,
        min_time: Duration::from_millis(if quick { 100 } else { 300 }),
    };
    let panels = sweep::sweep(gpu, quick, sweep_frames);
    match plot::write_png(path, &panels) {
        Ok(()) => eprintln!("bench: wrote {}", path.display()),
        Err(e) => {
            eprintln!("bench: plot: {e}");
            std::process::exit(2);
        }
    }
}
