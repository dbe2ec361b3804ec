//! The model layer needs no device: no file of `src/model/` (clips,
//! tracks, libraries, rigs, binding, actions and masks, results), of the
//! CPU twin (`src/cpu/`) nor of the playback layer (`src/playback/`)
//! names `wgpu`, so that the model is built,
//! bound and kept, and survives a lost device, without an adapter. The
//! test reads the sources, so a `use wgpu::...` added anywhere under them
//! fails it. The one file exempt is `src/playback/gpu.rs`: `GpuPlayers`
//! commands the GPU playback pass (it sits above the GPU layer, so it
//! takes the device); the `Player` and everything it uses stay
//! device-free.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_model_and_the_cpu_twin_name_no_wgpu_type() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src/model", "src/cpu", "src/playback"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() >= 10, "found only {files:?}");
    let exempt = root.join("src/playback/gpu.rs");
    assert!(files.contains(&exempt), "the exempt file is where it was");
    for file in files.into_iter().filter(|f| *f != exempt) {
        let text = std::fs::read_to_string(&file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("wgpu"),
                "{}:{}: the model layer names wgpu: {line}",
                file.display(),
                n + 1
            );
        }
    }
}

/// The model is what a library and a rig are, not how the passes read
/// them: no file of `src/model/` names the GPU layout (`crate::layout`) or
/// one of its `Gpu*` structs. The tables built from the model live in
/// `src/tables/`.
#[test]
fn no_model_file_names_the_gpu_layout() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/model"), &mut files);
    assert!(files.len() > 5, "src/model/ has its files");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("crate::layout") && !code.contains("Gpu"),
                "{}:{} names the GPU layout: its tables belong in src/tables/: {line}",
                file.display(),
                n + 1
            );
        }
    }
}

#[test]
fn a_model_binds_and_poses_without_a_device() {
    use keyframe_gpu::{cpu, AnimationLibrary, Clip, Instance, Interpolation, NodeTransform};
    use keyframe_gpu::{Property, Rig, Track};
    let mut b = Rig::builder();
    let root = b.node(None, NodeTransform::IDENTITY);
    let arm = b.node(Some(root), NodeTransform::translation([0.0, 1.0, 0.0]));
    b.name(arm, "arm");
    let rig = b.build().unwrap();
    let lift = Track {
        target: Some(std::sync::Arc::new(keyframe_gpu::NodeName::new("arm"))),
        ..Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![0.0, 4.0, 0.0, 0.0, 2.0, 0.0],
        )
    };
    let library = AnimationLibrary::new(vec![Clip::new("lift", vec![lift])]).unwrap();
    let bound = library.bind(&rig).unwrap();
    let poses = cpu::poses(&bound, &[Instance::new(0, 0.5)]).unwrap();
    // By name the track moves the arm (node 1, rest (0, 1, 0)) halfway to
    // (0, 2, 0) from (0, 4, 0), and leaves node 0 at rest.
    assert_eq!(
        poses.local(0, arm).unwrap().translation.to_array(),
        [0.0, 3.0, 0.0]
    );
    assert_eq!(poses.world(0, root).unwrap(), glam::Mat4::IDENTITY);
}

/// The error types name only plain enums that import nothing of the
/// crate (`src/kinds.rs`), so no import cycle runs
/// through `src/error/`: outside doc comments, a file there names no other
/// `crate::` path.
#[test]
fn the_errors_name_only_the_plain_enums() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/error"), &mut files);
    assert!(files.len() >= 5, "src/error/ has its files");
    let allowed = ["crate::kinds", "crate::error"];
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(at) = rest.find("crate::") {
                let path = &rest[at..];
                assert!(
                    allowed.iter().any(|a| path.starts_with(a)),
                    "{}:{} names {path}",
                    file.display(),
                    n + 1
                );
                rest = &path["crate::".len()..];
            }
        }
    }
    let leaf = "src/kinds.rs";
    let text = std::fs::read_to_string(root.join(leaf)).unwrap();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        assert!(!code.contains("crate::"), "{leaf} imports {code}");
    }
}
