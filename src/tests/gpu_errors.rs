//! Unit tests of `src/gpu/mod.rs`.

use crate::gpu::*;
use crate::Error;

fn wgpu_error(oom: bool) -> wgpu::Error {
    let source = Box::new(std::io::Error::other("test"));
    if oom {
        wgpu::Error::OutOfMemory { source }
    } else {
        wgpu::Error::Validation {
            source,
            description: "test".into(),
        }
    }
}

#[test]
fn out_of_memory_is_its_own_error_and_wins_over_validation() {
    assert!(scope_error("x", None, None).is_none());
    assert!(matches!(
        scope_error("x", Some(wgpu_error(false)), None),
        Some(Error::Gpu { during: "x", .. })
    ));
    assert!(matches!(
        scope_error("x", None, Some(wgpu_error(true))),
        Some(Error::OutOfMemory { during: "x", .. })
    ));
    assert!(matches!(
        scope_error("x", Some(wgpu_error(false)), Some(wgpu_error(true))),
        Some(Error::OutOfMemory { during: "x", .. })
    ));
}
