//! Bytes -> glTF import (`keyframe_gpu::gltf::from_slice`, which validates
//! every channel and builds the `AnimationLibrary`) -> CPU sampling of every
//! clip. Any input may be refused with an error; none may panic, hang or
//! allocate without bound (libFuzzer's -rss_limit_mb and -timeout catch
//! those).
//!
//! External buffer URIs resolve inside a folder of the fuzzer's own that
//! holds `buffer.bin` (zeros) and `sub/`, so the asset-root checks run on
//! every URI the fuzzer makes up; `fuzz/import.dict` gives it `../`,
//! `%2e%2e`, backslashes and the names that exist there.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use keyframe_gpu::{cpu, Instance, WrapMode};
use libfuzzer_sys::fuzz_target;

/// The asset root: a fresh folder under the temporary folder.
fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("keyframe-gpu-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("root/sub")).expect("temp folder");
        std::fs::write(dir.join("root/buffer.bin"), vec![0u8; 1 << 16]).expect("temp file");
        // A file next to the root, which no URI may reach.
        std::fs::write(dir.join("outside.bin"), vec![0xAAu8; 1 << 16]).expect("temp file");
        dir.join("root")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(imported) = keyframe_gpu::gltf::from_slice(data, Some(root())) else {
        return;
    };
    // Nothing outside the root was read: that file is all 0xAA, the root's
    // all zeros (data: URIs and GLB chunks hold what the input says).
    let doc = &imported.document;
    for (buffer, json) in doc.buffers.iter().zip(&doc.root.buffers) {
        let external = json.uri.as_deref().is_some_and(|u| !u.starts_with("data:"));
        assert!(
            !external || buffer.iter().all(|&b| b == 0),
            "buffer read from outside the asset root: {:?}",
            json.uri
        );
    }
    let library = &imported.library;
    assert_eq!(library.clips().len(), imported.animations.len());
    // A validated library samples without panicking, at times before, inside
    // and after every clip, in every wrap mode.
    let mut instances = Vec::new();
    for (c, clip) in library.clips().iter().enumerate().take(64) {
        let d = f64::from(clip.duration());
        for (time, wrap) in [
            (-1.0, WrapMode::Clamp),
            (d * 0.37, WrapMode::Clamp),
            (d + 1.0, WrapMode::Clamp),
            (d * 7.3 + 0.1, WrapMode::Repeat),
            (-d * 2.9 - 0.1, WrapMode::PingPong),
        ] {
            instances.push(Instance {
                clip: c as u32,
                time,
                wrap,
            });
        }
    }
    // Bounded output: skip sampling a library whose blocks would be huge.
    if instances.len() as u64 * u64::from(library.output_stride()) > 1 << 24 {
        return;
    }
    let out = cpu::sample(library, &instances).expect("valid instances are accepted");
    assert_eq!(
        out.len(),
        instances.len() * library.output_stride() as usize
    );
});
