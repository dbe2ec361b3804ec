//! The command line: what to sample, where, and how to print it.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// Where values are sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Gpu,
    Cpu,
}

impl Backend {
    /// The name shown in output and JSON (`"gpu"`, `"cpu"`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Gpu => "gpu",
            Backend::Cpu => "cpu",
        }
    }
}

/// Samples glTF animations on the GPU (or the CPU reference) and prints
/// the values, as a table or as JSON.
#[derive(Debug, Parser)]
#[command(name = "sample", version)]
pub struct Cli {
    /// A .gltf or .glb file; without it, a built-in demo.
    pub file: Option<PathBuf>,
    /// The folder external buffer URIs may resolve inside (default: the
    /// file's own folder). A glTF file is data anyone can write: its URIs
    /// may not leave this folder, through `..` or a symlink.
    #[arg(long, value_name = "DIR")]
    pub asset_root: Option<PathBuf>,
    /// Also play the clips of this file (repeatable; an animation-only
    /// file such as an animation pack), bound to FILE's nodes by name.
    /// `--animation` and `--mix` index FILE's own clips first, then each
    /// `--clips` file's in the order given; `node` in the output is FILE's
    /// node index.
    #[arg(long, value_name = "FILE")]
    pub clips: Vec<PathBuf>,
    /// Retarget the `--clips` files' clips onto FILE's rig through the
    /// bone map MAP.json (`{"root": NAME, "bones": {FILE_NODE:
    /// CLIPS_NODE, ...}}`, optionally `"up": [x, y, z]`) instead of
    /// binding them by name; prints every
    /// node's local pose at each time (with --joints: the joint
    /// matrices).
    #[arg(long, value_name = "MAP.json")]
    pub retarget: Option<PathBuf>,
    /// Index of the animation to sample.
    #[arg(long, default_value_t = 0)]
    pub animation: usize,
    /// Sample every animation (with --json: one object per line).
    #[arg(long)]
    pub all_animations: bool,
    /// Times in seconds, comma separated (default: every key time of the
    /// clip plus the midpoints between them).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub times: Option<Vec<f64>>,
    /// Where to sample.
    #[arg(long, value_enum, default_value_t = Backend::Gpu)]
    pub backend: Backend,
    /// Print JSON (one object per animation and line) and nothing else.
    #[arg(long)]
    pub json: bool,
    /// Sample on the GPU and the CPU and print the largest error per
    /// channel; exit 1 if any exceeds --tol.
    #[arg(long)]
    pub compare: bool,
    /// Tolerance for --compare (absolute; rotations up to sign; default
    /// 2e-5, or 1e-4 per matrix element with --joints).
    #[arg(long)]
    pub tol: Option<f32>,
    /// Print each skin's joint matrices instead of the channels.
    #[arg(long)]
    pub joints: bool,
    /// Blend actions instead of sampling one animation: MIX.json lists
    /// masks and, per sample, its actions (animation, time, weight,
    /// optional mask, additive, reference_time, wrap); prints every node's
    /// blended local pose (with --joints: the joint matrices).
    #[arg(long, value_name = "MIX.json")]
    pub mix: Option<PathBuf>,
    /// Drive the playback layer with a script: PLAY.json gives the
    /// characters, a root node, markers, blend spaces and per frame a
    /// time step and commands (play, crossfade, crossfade_at, fade_in,
    /// fade_out, wrap, repetitions, speed, pause, seek, layer, remove,
    /// blend_space with params and duration); prints one JSON
    /// object per frame (actions, layers, root motion, events; with
    /// --joints the joint matrices, with --nodes the nodes' poses).
    #[arg(long, value_name = "PLAY.json")]
    pub play: Option<PathBuf>,
    /// With --play: each frame's blended local pose of every node per
    /// character, as --mix --json prints a sample's nodes.
    #[arg(long)]
    pub nodes: bool,
    /// With --play: play the characters on the GPU (the playback pass of
    /// a crowd model, `playback::GpuPlayers`) and print the state read
    /// back from it each frame, in the same schema.
    #[arg(long)]
    pub gpu_playback: bool,
    /// Print the plan the GPU runs for this file on this adapter (every
    /// dispatch: entry point, overrides, workgroups; the tables) for
    /// --instances instances, and exit.
    #[arg(long)]
    pub plan: bool,
    /// Instances (with --mix: characters) the printed --plan is for.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub instances: u32,
    /// Write a chart of every channel over the clip to this PNG file
    /// (with --all-animations: FILE-<i>.png per animation).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Compress the clips (keyframe_gpu::compress) within BOUND, relative
    /// to the rest pose's bounding-box diagonal (default 5.6e-5: 0.01 cm
    /// on a 180 cm human), and sample the compressed library; prints
    /// `compressed: R:1, max error E (bound B)` on stderr.
    #[arg(long, value_name = "BOUND", num_args = 0..=1, default_missing_value = "5.6e-5")]
    pub compress: Option<f32>,
}

impl Cli {
    /// The backend line's value: `"gpu and cpu"` with `--compare`.
    pub fn backend_label(&self) -> &'static str {
        if self.compare {
            "gpu and cpu"
        } else {
            self.backend.name()
        }
    }

    /// Whether the run uses the GPU, and so prints the adapter line.
    pub fn uses_gpu(&self) -> bool {
        self.compare || self.backend == Backend::Gpu
    }
}
