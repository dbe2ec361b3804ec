//! The tests that reach the implementation's pieces: the layout structs
//! against naga's view of the shaders, the CPU twin's per-stage functions,
//! the skin stage, the instance resolution and the compressed format built
//! by hand. They were integration tests; they run inside the crate, where
//! those pieces stay private, through the same `keyframe_gpu::` paths (the
//! crate names itself so under `cfg(test)`).

#[path = "../../tests/common/mod.rs"]
mod common;

mod compressed;
mod cpu_reference;
mod gpu_vs_cpu;
mod hostile_instances;
mod key_lookup;
mod layout;
mod loss;
mod mixer;
mod plans;
mod playback;
mod skinning;
