//! The twin's cache of library tables (`LibraryTables::cached`): a library
//! (or a clone) gets the tables derived for it once, another library never
//! does, a dropped library's tables go, and the cache stays bounded. The
//! cache is the thread's own, so each test (a thread of its own) sees only
//! its libraries.

use std::sync::Arc;

use keyframe_gpu::tables::library::{LibraryTables, RECENT_LIBRARIES};
use keyframe_gpu::{AnimationLibrary, Clip, Interpolation, Property, Track};

/// A one-clip library whose translation goes from 0 to `to` on x.
fn library(to: f32) -> AnimationLibrary {
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 0.0, 0.0, to, 0.0, 0.0],
    );
    AnimationLibrary::new(vec![Clip::new("move", vec![track])]).unwrap()
}

#[test]
fn a_library_and_its_clones_share_tables_derived_once() {
    let a = library(1.0);
    let first = LibraryTables::cached(&a).unwrap();
    assert!(Arc::ptr_eq(&first, &LibraryTables::cached(&a).unwrap()));
    assert!(Arc::ptr_eq(
        &first,
        &LibraryTables::cached(&a.clone()).unwrap()
    ));
    // The same tables as derived afresh: the keys as given.
    assert_eq!(first.values(), LibraryTables::of(&a).unwrap().values());
    assert_eq!(first.values(), [0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
}

#[test]
fn another_library_of_the_same_clips_gets_its_own_tables() {
    let (a, b) = (library(2.0), library(2.0));
    let ta = LibraryTables::cached(&a).unwrap();
    let tb = LibraryTables::cached(&b).unwrap();
    assert!(!Arc::ptr_eq(&ta, &tb));
    let c = library(3.0);
    assert_eq!(
        LibraryTables::cached(&c).unwrap().values(),
        [0.0, 0.0, 0.0, 3.0, 0.0, 0.0]
    );
}

#[test]
fn a_dropped_librarys_tables_go_at_the_next_call() {
    let a = library(4.0);
    let tables = Arc::downgrade(&LibraryTables::cached(&a).unwrap());
    assert!(tables.upgrade().is_some(), "kept while the library lives");
    drop(a);
    let b = library(4.0);
    let tb = LibraryTables::cached(&b).unwrap();
    assert!(
        tables.upgrade().is_none(),
        "the dropped library's tables were kept"
    );
    assert_eq!(tb.values(), [0.0, 0.0, 0.0, 4.0, 0.0, 0.0]);
}

#[test]
fn the_cache_keeps_the_last_libraries_only() {
    let first = library(5.0);
    let kept = Arc::downgrade(&LibraryTables::cached(&first).unwrap());
    // As many others.
    let others: Vec<AnimationLibrary> = (0..RECENT_LIBRARIES)
        .map(|k| library(6.0 + k as f32))
        .collect();
    for l in &others {
        LibraryTables::cached(l).unwrap();
    }
    assert!(
        kept.upgrade().is_none(),
        "the oldest library's tables stayed"
    );
    // Still alive, it gets tables again, equal to the first ones.
    let again = LibraryTables::cached(&first).unwrap();
    assert_eq!(again.values(), [0.0, 0.0, 0.0, 5.0, 0.0, 0.0]);
}
