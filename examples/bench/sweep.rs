//! `--plot`: key-count and instance-count sweeps for the chart.

use keyframe_gpu::{Clip, Instance, WrapMode};

use crate::data::{self, Rng, Spacing};
use crate::gpu::Gpu;
use crate::measure::Frames;
use crate::plot;
use crate::run::{run_workload, Measured};
use crate::workloads::Workload;

pub fn sweep(gpu: &Gpu, quick: bool, frames: Frames) -> Vec<plot::Panel> {
    let series = |points: &[(f64, Measured)]| -> Vec<plot::Series> {
        let per = |f: fn(&Measured) -> f64| -> Vec<(f64, f64)> {
            points
                .iter()
                .map(|(x, r)| (*x, f(r) * 1e6 / r.samples as f64))
                .collect()
        };
        vec![
            plot::Series {
                name: "GPU",
                color: [200, 40, 40],
                points: per(|r| r.gpu_ms),
            },
            plot::Series {
                name: "FLOOR",
                color: [40, 110, 200],
                points: per(|r| r.floor_ms),
            },
            plot::Series {
                name: "CPU",
                color: [40, 150, 60],
                points: per(|r| r.cpu_ms),
            },
        ]
    };
    let key_counts: &[usize] = if quick {
        &[2, 10, 100, 1_000, 10_000, 100_000]
    } else {
        &[2, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
    };
    let sweep_instances = if quick { 1_024 } else { 4_096 };
    let mut by_keys = Vec::new();
    for &keys in key_counts {
        let mut rng = Rng::new(100 + keys as u64);
        let clips = data::rotation_clips(&mut rng, 1, 4, keys, Spacing::Irregular);
        let durations: Vec<f32> = clips.iter().map(Clip::duration).collect();
        let instances =
            data::random_instances(&mut rng, sweep_instances, &durations, WrapMode::Clamp);
        let label = format!("sweep keys={keys:>8}");
        let r = run_point(gpu, frames, "sweep_keys", clips, instances, &label);
        by_keys.push((keys as f64, r));
    }
    let instance_counts: &[usize] = if quick {
        &[1, 10, 100, 1_000, 4_000]
    } else {
        &[1, 10, 100, 1_000, 10_000, 30_000]
    };
    let mut by_instances = Vec::new();
    for &n in instance_counts {
        let mut rng = Rng::new(200);
        let clips = data::rotation_clips(&mut rng, 4, 64, 64, Spacing::Irregular);
        let durations: Vec<f32> = clips.iter().map(Clip::duration).collect();
        let instances = data::random_instances(&mut rng, n, &durations, WrapMode::Clamp);
        let label = format!("sweep instances={n:>6}");
        let r = run_point(gpu, frames, "sweep_instances", clips, instances, &label);
        by_instances.push((n as f64, r));
    }
    vec![
        plot::Panel {
            title: format!("NS PER SAMPLE VS KEYS ({sweep_instances} INST × 4 ROT TRACKS)"),
            x_label: "KEYS PER TRACK",
            y_label: "NS PER SAMPLE",
            series: series(&by_keys),
        },
        plot::Panel {
            title: "NS PER SAMPLE VS INSTANCES (64 ROT TRACKS × 64 KEYS)".into(),
            x_label: "INSTANCES",
            y_label: "NS PER SAMPLE",
            series: series(&by_instances),
        },
    ]
}

/// Measures one point of a sweep, the workload `name` of `clips` and
/// `instances`, and prints its times after `label`.
fn run_point(
    gpu: &Gpu,
    frames: Frames,
    name: &'static str,
    clips: Vec<Clip>,
    instances: Vec<Instance>,
    label: &str,
) -> Measured {
    let w = Workload {
        name,
        clips,
        instances,
        coherent: false,
        note: "",
        rig: None,
    };
    let r = run_workload(gpu, w, frames);
    eprintln!(
        "{label}: gpu {:.3} ms, floor {:.3} ms, cpu {:.3} ms",
        r.gpu_ms, r.floor_ms, r.cpu_ms
    );
    r
}
