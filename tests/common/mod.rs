//! Shared helpers for the integration tests.
#![allow(dead_code, reason = "each test binary uses a subset")]

use keyframe_gpu::gpu::headless::{request_device, AdapterChoice, Headless};

/// The fallback adapter's device (or the backend `WGPU_BACKEND` selects).
/// Without an adapter: prints a skip line and returns `None`, unless
/// `KEYFRAME_GPU_REQUIRE_ADAPTER=1`, where it panics (fails the test).
pub fn gpu(test: &str) -> Option<Headless> {
    match request_device(AdapterChoice::Fallback) {
        Ok(h) => {
            eprintln!("{test}: running on {}", h.describe());
            Some(h)
        }
        Err(e) => {
            if std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() == Ok("1") {
                panic!("{test}: KEYFRAME_GPU_REQUIRE_ADAPTER=1 but no adapter: {e}");
            }
            println!("SKIP {test}: no GPU adapter ({e})");
            None
        }
    }
}
