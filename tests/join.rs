//! Libraries from several files: `AnimationLibrary::join` keeps each
//! clip's file and name, so a name that repeats across files (every
//! Mixamo clip is `Armature|mixamo.com|Layer0`) is found by file and name,
//! and the joined library binds to one rig by node name.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;

use gltf_builder::*;
use keyframe_gpu::{cpu, gltf, AnimationLibrary, Instance, Rig};
use serde_json::json;

/// A file with one node "Hips" and one animation named "Layer0" moving
/// it from the origin to `to` over 1 s.
fn file(dir: &std::path::Path, name: &str, to: [f32; 3]) -> std::path::PathBuf {
    let mut b = Builder::new();
    let n = b.node(None);
    b.nodes[n]["name"] = json!("Hips");
    // Files of the same JSON are the same file to the importer.
    b.nodes[n]["extras"] = json!({"file": name});
    let times = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let t = b.accessor_f32(&[0.0, 0.0, 0.0, to[0], to[1], to[2]], "VEC3");
    b.animation("Layer0", &[(times, t, "LINEAR")], &[(0, n, "translation")]);
    let path = dir.join(name);
    std::fs::write(&path, b.to_glb()).unwrap();
    path
}

#[test]
fn clips_of_several_files_keep_their_file_and_name() {
    let dir = temp_dir("join");
    let a = gltf::load(file(&dir, "a.glb", [1.0, 0.0, 0.0])).unwrap();
    let b = gltf::load(file(&dir, "b.glb", [0.0, 2.0, 0.0])).unwrap();
    assert_ne!(a.document.source, b.document.source);
    let joined = AnimationLibrary::join([&a.library, &b.library]).unwrap();
    assert_eq!(joined.clips().len(), 2);
    // The name alone finds the first; file and name find each.
    assert_eq!(joined.clip_by_name("Layer0"), Some(0));
    assert_eq!(joined.clip_in(a.document.source, "Layer0"), Some(0));
    assert_eq!(joined.clip_in(b.document.source, "Layer0"), Some(1));
    let second = &joined.clips()[1];
    assert_eq!(
        (second.source, second.name.as_str()),
        (Some(b.document.source), "Layer0")
    );
    // Bound to a's rig by name, each clip plays its own file's motion.
    let rig = Rig::from_document(&a.document).unwrap();
    let bound = joined.bind(&rig).unwrap();
    let poses = cpu::poses(&bound, &[Instance::new(0, 0.5), Instance::new(1, 0.5)]).unwrap();
    assert_eq!(
        poses.local(0, 0).unwrap().translation.to_array(),
        [0.5, 0.0, 0.0]
    );
    assert_eq!(
        poses.local(1, 0).unwrap().translation.to_array(),
        [0.0, 1.0, 0.0]
    );
    assert!(AnimationLibrary::join(std::iter::empty()).is_err());
}
