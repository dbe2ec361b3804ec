//! A counting global allocator for the allocation tests
//! (`tests/no_alloc.rs`, `tests/readback_ring.rs`), included by each with
//! `#[path]` so that the other test binaries keep the plain allocator.
//!
//! It counts the heap allocations made by the calling thread (a
//! thread-local counter, so that other tests and wgpu's own threads do not
//! disturb it).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNT: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    // try_with: the thread-local may be gone while a thread exits.
    let _ = COUNT.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: forwards to the system allocator; only adds a thread-local counter
// (const-initialized, so touching it never allocates).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by this thread while running `f`.
pub fn count<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = COUNT.with(Cell::get);
    let value = f();
    (COUNT.with(Cell::get) - before, value)
}

/// Turns off `std::backtrace::Backtrace::capture` for this process, once,
/// before any device is made: call it first in every test of the binary
/// that touches wgpu. With `RUST_BACKTRACE` set (as developers often
/// have it), wgpu-core built with debug assertions (the dev profile)
/// captures a backtrace for each lock it takes, to report lock-order
/// mistakes, and a backtrace's allocations grow with the depth of the
/// stack: the counts would then change with inlining, not with what the
/// code allocates. `RUST_LIB_BACKTRACE` governs those captures only;
/// panics still print backtraces by `RUST_BACKTRACE`. The `Once` makes the
/// other tests wait until it is set, so no thread reads the environment
/// while it changes.
pub fn no_lib_backtraces() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| std::env::set_var("RUST_LIB_BACKTRACE", "0"));
}
