//! Shared helpers for the integration tests.
#![allow(dead_code, reason = "each test binary uses a subset")]

use keyframe_gpu::gpu::headless::{request_device, AdapterChoice, Headless};

/// The fallback adapter's device (or the backend `WGPU_BACKEND` selects).
/// Without an adapter: prints a skip line and returns `None`, unless
/// `KEYFRAME_GPU_REQUIRE_ADAPTER=1`, where it panics (fails the test).
pub fn gpu(test: &str) -> Option<Headless> {
    match request_device(AdapterChoice::Fallback) {
        Ok(h) => {
            // Written past libtest's output capture so that CI logs show
            // which adapter and backend every GPU test really ran on.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "gpu test {test}: running on {}",
                h.describe()
            );
            if let Ok(want) = std::env::var("WGPU_BACKEND") {
                let got = format!("{:?}", h.adapter.get_info().backend).to_lowercase();
                assert!(
                    want.to_lowercase()
                        .split(',')
                        .any(|w| got.starts_with(w.trim())),
                    "{test}: WGPU_BACKEND={want} but the adapter runs on {got}"
                );
            }
            Some(h)
        }
        Err(e) => {
            if std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() == Ok("1") {
                panic!("{test}: KEYFRAME_GPU_REQUIRE_ADAPTER=1 but no adapter: {e}");
            }
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "SKIP {test}: no GPU adapter ({e})");
            None
        }
    }
}
