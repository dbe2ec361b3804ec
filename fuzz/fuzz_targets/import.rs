//! Bytes -> glTF import (`keyframe_gpu::gltf::from_slice`, which validates
//! every channel and builds the `AnimationLibrary`) -> CPU sampling of every
//! clip. Any input may be refused with an error; none may panic, hang or
//! allocate without bound (libFuzzer's -rss_limit_mb and -timeout catch
//! those).
#![no_main]

use keyframe_gpu::{cpu, Instance, WrapMode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // No base folder: external buffer URIs are refused, never read.
    let Ok(imported) = keyframe_gpu::gltf::from_slice(data, None) else {
        return;
    };
    let library = &imported.library;
    assert_eq!(library.clips().len(), imported.animations.len());
    // A validated library samples without panicking, at times before, inside
    // and after every clip, in every wrap mode.
    let mut instances = Vec::new();
    for (c, clip) in library.clip_table().iter().enumerate().take(64) {
        let d = f64::from(clip.duration);
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
