//! A corpus of malformed glTF/GLB files, generated here:
//! each file breaks one rule of a valid base asset, and
//! - the importer refuses it with its specific [`ImportErrorKind`] (or
//!   [`TrackError`]) and the animation, channel and accessor where the
//!   problem is, named in the message too;
//! - the `sample` example, given the file with `--json`, exits with code 2,
//!   prints exactly one line on stderr (not a panic report) and nothing on
//!   stdout. A hang guard kills it after 60 s (no timing assertion).
//!
//! Declared sizes that are absurd (a buffer of 1e15 bytes, an accessor of
//! 4e9 elements) must be refused before anything of that size is allocated;
//! a process-wide counting allocator checks that no single allocation of
//! more than 256 MiB happens while the corpus is imported.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use gltf_builder::{base64, f32_bytes, glb, temp_dir, Builder, SHORT, UNSIGNED_BYTE};
use keyframe_gpu::gltf::{self, Document};
use keyframe_gpu::{Error, ImportErrorKind, TrackError};
use sample_cli::sample_binary;
use serde_json::{json, Value};

/// Records the largest single allocation request of the process.
struct Counting;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const MAX_ALLOCATION: usize = 256 << 20;

// ---------------------------------------------------------------------------
// The base asset: one animation, four channels sharing one input.
//
// accessor 0: mesh POSITION (never read by the importer)
// accessor 1: times [0, 0.5, 1.25]           (bufferView 1)
// accessor 2: translation VEC3 x 3, LINEAR   (bufferView 2) channel 0, node 0
// accessor 3: rotation VEC4 x 3, LINEAR      (bufferView 3) channel 1, node 0
// accessor 4: scale VEC3 x 3, STEP           (bufferView 4) channel 2, node 0
// accessor 5: weights 3 keys x 3 x 2, CUBIC  (bufferView 5) channel 3, node 1 (mesh 0, 2 targets)

const TIMES: usize = 1;
const TRANSLATION: usize = 2;
const ROTATION: usize = 3;
const WEIGHTS: usize = 5;

fn base() -> Builder {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(2);
    b.node(None);
    b.node(Some(mesh));
    let t = b.accessor_f32(&[0.0, 0.5, 1.25], "SCALAR");
    let tr = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, -1.0, 0.0, 4.0], "VEC3");
    let s = std::f32::consts::FRAC_1_SQRT_2;
    let rot = b.accessor_f32(
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, s, s, 0.0, 0.0, 1.0, 0.0],
        "VEC4",
    );
    let sc = b.accessor_f32(&[1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 0.5, 1.0, 3.0], "VEC3");
    let w = b.accessor_f32(&[0.0, 0.0, 0.2, 0.8, 1.0, 0.0].repeat(3), "SCALAR");
    assert_eq!(
        (t, tr, rot, sc, w),
        (TIMES, TRANSLATION, ROTATION, 4, WEIGHTS)
    );
    b.animation(
        "base",
        &[
            (t, tr, "LINEAR"),
            (t, rot, "LINEAR"),
            (t, sc, "STEP"),
            (t, w, "CUBICSPLINE"),
        ],
        &[
            (0, 0, "translation"),
            (1, 0, "rotation"),
            (2, 0, "scale"),
            (3, 1, "weights"),
        ],
    );
    b
}

fn data_uri(bin: &[u8]) -> String {
    format!("data:application/octet-stream;base64,{}", base64(bin))
}

fn to_vec(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

/// The base asset's JSON with `edit` applied, as a .glb with the base's
/// binary chunk.
fn glb_with(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let b = base();
    let mut v = b.json(None);
    edit(&mut v);
    glb(&to_vec(&v), Some(&b.bin))
}

/// As [`glb_with`], as a .gltf with the buffer in a base64 data URI.
fn gltf_with(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let b = base();
    let mut v = b.json(Some(data_uri(&b.bin)));
    edit(&mut v);
    to_vec(&v)
}

/// The base asset as a .glb whose accessor `accessor` holds `values`
/// instead of its own (same length).
fn glb_with_values(accessor: usize, values: &[f32]) -> Vec<u8> {
    let b = base();
    let v = b.json(None);
    let view = v["accessors"][accessor]["bufferView"].as_u64().unwrap() as usize;
    let offset = v["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize;
    let mut bin = b.bin.clone();
    let bytes = f32_bytes(values);
    bin[offset..offset + bytes.len()].copy_from_slice(&bytes);
    glb(&to_vec(&v), Some(&bin))
}

fn view_of(v: &Value, accessor: usize) -> usize {
    v["accessors"][accessor]["bufferView"].as_u64().unwrap() as usize
}

// ---------------------------------------------------------------------------
// The corpus.

/// Where the error must point: (animation, channel, accessor).
type Place = (Option<usize>, Option<usize>, Option<usize>);

const NOWHERE: Place = (None, None, None);

fn at(channel: usize, accessor: Option<usize>) -> Place {
    (Some(0), Some(channel), accessor)
}

struct Case {
    name: &'static str,
    /// File name inside the case's folder (the extension matters to nobody
    /// but the reader; the importer looks at the magic bytes).
    file: &'static str,
    bytes: Vec<u8>,
    place: Place,
    kind: fn(&ImportErrorKind) -> bool,
    /// Words the message must contain besides the place.
    words: &'static [&'static str],
}

fn track(k: &ImportErrorKind) -> Option<&TrackError> {
    match k {
        ImportErrorKind::InvalidTrack(t) => Some(t),
        _ => None,
    }
}

#[allow(clippy::too_many_lines, reason = "one entry per malformed file")]
fn corpus() -> Vec<Case> {
    use ImportErrorKind as K;
    let good_glb = base().to_glb();
    let good_json = to_vec(&base().json(None));
    let mut cases = Vec::new();
    let mut add = |name, file, bytes, place, kind: fn(&K) -> bool, words| {
        cases.push(Case {
            name,
            file,
            bytes,
            place,
            kind,
            words,
        });
    };

    // --- The GLB container.
    add(
        "glb truncated in its header",
        "a.glb",
        good_glb[..10].to_vec(),
        NOWHERE,
        |k| matches!(k, K::Glb(m) if m.contains("truncated")),
        &["GLB"],
    );
    add(
        "glb truncated in its body",
        "a.glb",
        good_glb[..good_glb.len() / 2].to_vec(),
        NOWHERE,
        |k| matches!(k, K::Glb(m) if m.contains("declares")),
        &["GLB"],
    );
    add(
        "glb header length 8",
        "a.glb",
        {
            let mut g = good_glb.clone();
            g[8..12].copy_from_slice(&8u32.to_le_bytes());
            g
        },
        NOWHERE,
        |k| matches!(k, K::Glb(_)),
        &["GLB"],
    );
    add(
        "glb version 1",
        "a.glb",
        {
            let mut g = good_glb.clone();
            g[4..8].copy_from_slice(&1u32.to_le_bytes());
            g
        },
        NOWHERE,
        |k| matches!(k, K::Glb(m) if m.contains("version 1")),
        &["GLB"],
    );
    add(
        "glb JSON chunk length past the end",
        "a.glb",
        {
            let mut g = good_glb.clone();
            g[12..16].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
            g
        },
        NOWHERE,
        |k| matches!(k, K::Glb(m) if m.contains("chunk 0")),
        &["GLB"],
    );
    add(
        "glb BIN chunk length past the end",
        "a.glb",
        {
            let mut g = good_glb.clone();
            let json_len = u32::from_le_bytes(g[12..16].try_into().unwrap()) as usize;
            let at = 20 + json_len;
            g[at..at + 4].copy_from_slice(&(1u32 << 30).to_le_bytes());
            g
        },
        NOWHERE,
        |k| matches!(k, K::Glb(m) if m.contains("chunk 1")),
        &["GLB"],
    );
    add(
        "glb first chunk is BIN",
        "a.glb",
        {
            let mut g = b"glTF".to_vec();
            g.extend_from_slice(&2u32.to_le_bytes());
            g.extend_from_slice(&24u32.to_le_bytes());
            g.extend_from_slice(&4u32.to_le_bytes());
            g.extend_from_slice(&0x004E_4942u32.to_le_bytes());
            g.extend_from_slice(&[0; 4]);
            g
        },
        NOWHERE,
        |k| matches!(k, K::Glb(m) if m.contains("first chunk")),
        &["GLB"],
    );
    add(
        "glb without BIN chunk for a uri-less buffer",
        "a.glb",
        glb(&good_json, None),
        NOWHERE,
        |k| matches!(k, K::MissingBuffer { buffer: 0 }),
        &["buffer 0"],
    );
    add(
        "glb JSON chunk that is not JSON",
        "a.glb",
        glb(b"\xff\xfe not json", None),
        NOWHERE,
        |k| matches!(k, K::Json(_)),
        &["JSON"],
    );

    // --- JSON that is not glTF.
    add(
        "empty file",
        "a.gltf",
        Vec::new(),
        NOWHERE,
        |k| matches!(k, K::Json(_)),
        &["JSON"],
    );
    add(
        "not JSON",
        "a.gltf",
        b"this is not json {".to_vec(),
        NOWHERE,
        |k| matches!(k, K::Json(_)),
        &["JSON"],
    );
    add(
        "JSON without asset",
        "a.gltf",
        br#"{"hello": "world"}"#.to_vec(),
        NOWHERE,
        |k| matches!(k, K::Json(_)),
        &["JSON"],
    );
    add(
        "JSON array",
        "a.gltf",
        b"[1, 2, 3]".to_vec(),
        NOWHERE,
        |k| matches!(k, K::Json(_)),
        &["JSON"],
    );
    add(
        "JSON nested 100000 deep",
        "a.gltf",
        {
            let mut s = br#"{"asset": {"version": "2.0"}, "accessors": "#.to_vec();
            s.extend(std::iter::repeat_n(b'[', 100_000));
            s.extend(std::iter::repeat_n(b']', 100_000));
            s.push(b'}');
            s
        },
        NOWHERE,
        |k| matches!(k, K::Json(_)),
        &["JSON"],
    );
    // Extras are the file's own data, kept unparsed (only an animation's
    // extras are read, for markers, with the parser's depth limit): nested
    // 100000 deep they cost no stack, and the file is refused for what it
    // lacks.
    add(
        "extras nested 100000 deep",
        "a.gltf",
        {
            let mut s = br#"{"asset": {"version": "2.0"}, "extras": "#.to_vec();
            s.extend(std::iter::repeat_n(b'[', 100_000));
            s.extend(std::iter::repeat_n(b']', 100_000));
            s.push(b'}');
            s
        },
        NOWHERE,
        |k| matches!(k, K::NoAnimations),
        &["no animations"],
    );
    add(
        "an animation's markers nested 100000 deep",
        "a.gltf",
        {
            let text = String::from_utf8(gltf_with(|v| {
                v["animations"][0]["extras"] = json!({"markers": "DEEP"});
            }))
            .unwrap();
            let deep = "[".repeat(100_000) + &"]".repeat(100_000);
            text.replace("\"DEEP\"", &deep).into_bytes()
        },
        (Some(0), None, None),
        |k| matches!(k, K::BadMarkers { .. }),
        &["markers"],
    );
    add(
        "accessors is a string",
        "a.gltf",
        gltf_with(|v| v["accessors"] = json!("many")),
        NOWHERE,
        |k| matches!(k, K::Json(_)),
        &["JSON"],
    );
    add(
        "asset version 3.0",
        "a.glb",
        glb_with(|v| v["asset"]["version"] = json!("3.0")),
        NOWHERE,
        |k| matches!(k, K::Json(m) if m.contains("3.0")),
        &["version"],
    );
    add(
        "no animations",
        "a.gltf",
        br#"{"asset": {"version": "2.0"}}"#.to_vec(),
        NOWHERE,
        |k| matches!(k, K::NoAnimations),
        &["no animations"],
    );

    // --- Ranges past their buffer; strides; overflowing and absurd counts.
    add(
        "bufferView past its buffer",
        "a.glb",
        glb_with(|v| v["bufferViews"][1]["byteLength"] = json!(10_000)),
        at(0, Some(TIMES)),
        |k| {
            matches!(
                k,
                K::ViewOutOfRange {
                    view: 1,
                    buffer: 0,
                    ..
                }
            )
        },
        &["bufferView 1", "buffer 0"],
    );
    add(
        "bufferView offset near 2^64",
        "a.glb",
        glb_with(|v| v["bufferViews"][1]["byteOffset"] = json!(u64::MAX - 7)),
        at(0, Some(TIMES)),
        |k| matches!(k, K::ViewOutOfRange { view: 1, .. }),
        &["bufferView 1"],
    );
    add(
        "accessor offset past its view",
        "a.glb",
        glb_with(|v| v["accessors"][TRANSLATION]["byteOffset"] = json!(64)),
        at(0, Some(TRANSLATION)),
        |k| {
            matches!(
                k,
                K::AccessorOutOfRange {
                    part: "accessor",
                    view: 2,
                    ..
                }
            )
        },
        &["bufferView 2"],
    );
    add(
        "input accessor count 4e9",
        "a.glb",
        glb_with(|v| v["accessors"][TIMES]["count"] = json!(4_000_000_000u64)),
        at(0, Some(TIMES)),
        |k| {
            matches!(
                k,
                K::AccessorOutOfRange {
                    part: "accessor",
                    view: 1,
                    ..
                }
            )
        },
        &["bufferView 1"],
    );
    add(
        "input count whose byte size overflows u64",
        "a.glb",
        glb_with(|v| v["accessors"][TIMES]["count"] = json!(1u64 << 62)),
        at(0, Some(TIMES)),
        |k| matches!(k, K::AccessorOutOfRange { end: u64::MAX, .. }),
        &["bufferView 1"],
    );
    add(
        "input without bufferView, count 4e9",
        "a.glb",
        glb_with(|v| {
            v["accessors"][TIMES]
                .as_object_mut()
                .unwrap()
                .remove("bufferView");
            v["accessors"][TIMES]["count"] = json!(4_000_000_000u64);
        }),
        at(0, Some(TIMES)),
        |k| {
            matches!(
                k,
                K::TooLarge {
                    count: 4_000_000_000,
                    ..
                }
            )
        },
        &["too large"],
    );
    add(
        "buffer byteLength 1e15 (GLB)",
        "a.glb",
        glb_with(|v| v["buffers"][0]["byteLength"] = json!(1_000_000_000_000_000u64)),
        NOWHERE,
        |k| {
            matches!(
                k,
                K::BufferTooShort {
                    buffer: 0,
                    declared: 1_000_000_000_000_000,
                    ..
                }
            )
        },
        &["buffer 0"],
    );
    add(
        "buffer byteLength 1e15 (data URI)",
        "a.gltf",
        gltf_with(|v| v["buffers"][0]["byteLength"] = json!(1_000_000_000_000_000u64)),
        NOWHERE,
        |k| {
            matches!(
                k,
                K::BufferTooShort {
                    buffer: 0,
                    declared: 1_000_000_000_000_000,
                    ..
                }
            )
        },
        &["buffer 0"],
    );
    add(
        "byteStride smaller than the element (elements overlap)",
        "a.glb",
        glb_with(|v| {
            let view = view_of(v, TRANSLATION);
            v["bufferViews"][view]["byteStride"] = json!(4);
        }),
        at(0, Some(TRANSLATION)),
        |k| {
            matches!(
                k,
                K::BadStride {
                    view: 2,
                    stride: 4,
                    element_size: 12
                }
            )
        },
        &["byteStride 4"],
    );
    add(
        "byteStride past 252",
        "a.glb",
        glb_with(|v| v["bufferViews"][1]["byteStride"] = json!(256)),
        at(0, Some(TIMES)),
        |k| {
            matches!(
                k,
                K::BadStride {
                    view: 1,
                    stride: 256,
                    ..
                }
            )
        },
        &["byteStride 256"],
    );
    add(
        "byteStride not a multiple of 4",
        "a.glb",
        glb_with(|v| {
            let view = view_of(v, TRANSLATION);
            v["bufferViews"][view]["byteStride"] = json!(13);
        }),
        at(0, Some(TRANSLATION)),
        |k| {
            matches!(
                k,
                K::BadStride {
                    view: 2,
                    stride: 13,
                    element_size: 12
                }
            )
        },
        &["byteStride 13"],
    );
    add(
        "sparse index past the accessor",
        "a.glb",
        {
            let mut b = base();
            let idx = b.view(&[7, 0, 0, 0], None);
            let vals = b.view(&f32_bytes(&[9.0, 9.0, 9.0]), None);
            let mut v = b.json(None);
            v["accessors"][TRANSLATION]["sparse"] = json!({"count": 1,
            "indices": {"bufferView": idx, "componentType": UNSIGNED_BYTE},
            "values": {"bufferView": vals}});
            glb(&to_vec(&v), Some(&b.bin))
        },
        at(0, Some(TRANSLATION)),
        |k| matches!(k, K::Sparse(m) if m.contains("index 7")),
        &["sparse"],
    );
    add(
        "sparse count past the accessor",
        "a.glb",
        {
            let mut b = base();
            let idx = b.view(&[0, 1, 2, 3], None);
            let vals = b.view(&f32_bytes(&[9.0; 12]), None);
            let mut v = b.json(None);
            v["accessors"][TRANSLATION]["sparse"] = json!({"count": 4,
            "indices": {"bufferView": idx, "componentType": UNSIGNED_BYTE},
            "values": {"bufferView": vals}});
            glb(&to_vec(&v), Some(&b.bin))
        },
        at(0, Some(TRANSLATION)),
        |k| matches!(k, K::Sparse(_)),
        &["sparse"],
    );

    // --- Indices out of range.
    add(
        "sampler input accessor 99",
        "a.glb",
        glb_with(|v| v["animations"][0]["samplers"][0]["input"] = json!(99)),
        at(0, Some(99)),
        |k| {
            matches!(
                k,
                K::IndexOutOfRange {
                    what: "accessor",
                    index: 99,
                    count: 6
                }
            )
        },
        &["accessor index 99"],
    );
    add(
        "channel target node 1000000",
        "a.glb",
        glb_with(|v| v["animations"][0]["channels"][2]["target"]["node"] = json!(1_000_000)),
        at(2, None),
        |k| {
            matches!(
                k,
                K::IndexOutOfRange {
                    what: "node",
                    index: 1_000_000,
                    count: 2
                }
            )
        },
        &["node index 1000000"],
    );
    add(
        "channel sampler 7",
        "a.glb",
        glb_with(|v| v["animations"][0]["channels"][1]["sampler"] = json!(7)),
        at(1, None),
        |k| {
            matches!(
                k,
                K::IndexOutOfRange {
                    what: "sampler",
                    index: 7,
                    count: 4
                }
            )
        },
        &["sampler index 7"],
    );
    add(
        "bufferView buffer 3",
        "a.glb",
        glb_with(|v| v["bufferViews"][1]["buffer"] = json!(3)),
        at(0, Some(TIMES)),
        |k| {
            matches!(
                k,
                K::IndexOutOfRange {
                    what: "buffer",
                    index: 3,
                    count: 1
                }
            )
        },
        &["buffer index 3"],
    );
    add(
        "accessor bufferView 42",
        "a.glb",
        glb_with(|v| v["accessors"][ROTATION]["bufferView"] = json!(42)),
        at(1, Some(ROTATION)),
        |k| {
            matches!(
                k,
                K::IndexOutOfRange {
                    what: "bufferView",
                    index: 42,
                    ..
                }
            )
        },
        &["bufferView index 42"],
    );
    add(
        "node mesh 9",
        "a.glb",
        glb_with(|v| v["nodes"][1]["mesh"] = json!(9)),
        at(3, None),
        |k| {
            matches!(
                k,
                K::IndexOutOfRange {
                    what: "mesh",
                    index: 9,
                    count: 1
                }
            )
        },
        &["mesh index 9"],
    );

    // --- Key times and values.
    add(
        "times not increasing",
        "a.glb",
        glb_with_values(TIMES, &[0.0, 0.5, 0.5]),
        at(0, Some(TIMES)),
        |k| {
            matches!(
                track(k),
                Some(TrackError::TimesNotIncreasing { key: 2, .. })
            )
        },
        &["key 2"],
    );
    add(
        "times decreasing",
        "a.glb",
        glb_with_values(TIMES, &[1.0, 0.5, 0.0]),
        at(0, Some(TIMES)),
        |k| {
            matches!(
                track(k),
                Some(TrackError::TimesNotIncreasing { key: 1, .. })
            )
        },
        &["key 1"],
    );
    add(
        "time NaN",
        "a.glb",
        glb_with_values(TIMES, &[0.0, f32::NAN, 1.0]),
        at(0, Some(TIMES)),
        |k| matches!(track(k), Some(TrackError::TimeNotFinite { key: 1, .. })),
        &["key 1"],
    );
    add(
        "time infinite",
        "a.glb",
        glb_with_values(TIMES, &[0.0, 0.5, f32::INFINITY]),
        at(0, Some(TIMES)),
        |k| matches!(track(k), Some(TrackError::TimeNotFinite { key: 2, .. })),
        &["key 2"],
    );
    add(
        "translation value NaN",
        "a.glb",
        glb_with_values(TRANSLATION, &[0.0, 0.0, 0.0, 1.0, f32::NAN, 3.0]),
        at(0, Some(TRANSLATION)),
        |k| {
            matches!(
                track(k),
                Some(TrackError::ValueNotFinite {
                    key: 1,
                    component: 1,
                    ..
                })
            )
        },
        &["key 1"],
    );
    add(
        "rotation value infinite",
        "a.glb",
        glb_with_values(
            ROTATION,
            &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, f32::NEG_INFINITY, 1.0],
        ),
        at(1, Some(ROTATION)),
        |k| {
            matches!(
                track(k),
                Some(TrackError::ValueNotFinite {
                    key: 1,
                    component: 2,
                    ..
                })
            )
        },
        &["key 1"],
    );
    add(
        "zero quaternion",
        "a.glb",
        glb_with_values(ROTATION, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]),
        at(1, Some(ROTATION)),
        |k| matches!(track(k), Some(TrackError::ZeroQuaternion { key: 1 })),
        &["key 1"],
    );

    add(
        "negative first key time",
        "a.glb",
        glb_with_values(TIMES, &[-0.5, 0.5, 1.25]),
        at(0, Some(TIMES)),
        |k| matches!(k, K::NegativeTime { key: 0, time } if *time == -0.5),
        &["key 0", "negative"],
    );
    add(
        "171 channels sharing one large output accessor",
        "a.glb",
        {
            // 65,536 keys x 3 floats per channel: channel c needs
            // (c + 1) x 196,608 decoded values, past 2^24 = 16,777,216 at
            // c = 85. The file is under 1 MiB.
            let keys = 65_536;
            let mut b = Builder::new();
            b.node(None);
            let times: Vec<f32> = (0..keys).map(|k| k as f32 / 64.0).collect();
            let t = b.accessor_f32(&times, "SCALAR");
            let o = b.accessor_f32(&vec![0.5; keys * 3], "VEC3");
            let channels = vec![(0, 0, "translation"); 171];
            b.animation("shared", &[(t, o, "LINEAR")], &channels);
            b.to_glb()
        },
        at(85, Some(1)),
        |k| matches!(k, K::TooLarge { what, limit: 16_777_216, .. } if what.contains("all channels")),
        &["too large"],
    );

    add(
        "rotation key of length 1.5",
        "a.glb",
        glb_with_values(ROTATION, &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.5]),
        at(1, Some(ROTATION)),
        |k| {
            matches!(track(k), Some(TrackError::QuaternionNotUnit { key: 1, length })
                if *length == 1.5)
        },
        &["key 1", "1.5"],
    );

    // --- Samplers and channels.
    add(
        "CUBICSPLINE with a count that is not 3x",
        "a.glb",
        glb_with(|v| v["animations"][0]["samplers"][0]["interpolation"] = json!("CUBICSPLINE")),
        at(0, Some(TRANSLATION)),
        |k| {
            matches!(
                k,
                K::CountMismatch {
                    input: 3,
                    output: 3,
                    expected: 9
                }
            )
        },
        &["expected 9"],
    );
    add(
        "CUBICSPLINE with one key",
        "a.glb",
        {
            let mut b = Builder::new();
            b.node(None);
            let t = b.accessor_f32(&[0.0], "SCALAR");
            let o = b.accessor_f32(&[0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 0.0, 0.0, 0.0], "VEC3");
            b.animation(
                "one key",
                &[(t, o, "CUBICSPLINE")],
                &[(0, 0, "translation")],
            );
            b.to_glb()
        },
        at(0, Some(0)),
        |k| {
            matches!(
                track(k),
                Some(TrackError::CubicSplineTooFewKeys { keys: 1 })
            )
        },
        &["CUBICSPLINE"],
    );
    add(
        "output count not matching the input",
        "a.glb",
        glb_with(|v| v["accessors"][TRANSLATION]["count"] = json!(2)),
        at(0, Some(TRANSLATION)),
        |k| {
            matches!(
                k,
                K::CountMismatch {
                    input: 3,
                    output: 2,
                    expected: 3
                }
            )
        },
        &["expected 3"],
    );
    add(
        "weights count not matching the mesh",
        "a.glb",
        {
            let mut b = base();
            b.meshes.clear();
            b.mesh_with_targets(3);
            b.to_glb()
        },
        at(3, Some(WEIGHTS)),
        |k| {
            matches!(
                k,
                K::CountMismatch {
                    input: 3,
                    output: 18,
                    expected: 27
                }
            )
        },
        &["expected 27"],
    );
    add(
        "mesh weights disagreeing with its targets",
        "a.glb",
        glb_with(|v| v["meshes"][0]["weights"] = json!([0.0, 0.0, 0.0])),
        at(3, None),
        |k| matches!(k, K::MorphTargets { mesh: 0, .. }),
        &["mesh 0"],
    );
    add(
        "weights channel on a node without mesh",
        "a.glb",
        glb_with(|v| v["animations"][0]["channels"][3]["target"]["node"] = json!(0)),
        at(3, None),
        |k| matches!(k, K::NodeWithoutMesh { node: 0 }),
        &["node 0"],
    );
    add(
        "unknown interpolation",
        "a.glb",
        glb_with(|v| v["animations"][0]["samplers"][2]["interpolation"] = json!("QUADRATIC")),
        at(2, None),
        |k| matches!(k, K::UnknownInterpolation),
        &["interpolation"],
    );
    add(
        "unknown target path",
        "a.glb",
        glb_with(|v| v["animations"][0]["channels"][1]["target"]["path"] = json!("color")),
        at(1, None),
        |k| matches!(k, K::UnknownPath),
        &["path"],
    );
    add(
        "input of UNSIGNED_BYTE",
        "a.glb",
        glb_with(|v| v["accessors"][TIMES]["componentType"] = json!(UNSIGNED_BYTE)),
        at(0, Some(TIMES)),
        |k| matches!(k, K::BadComponentType { found, .. } if found == "UNSIGNED_BYTE"),
        &["UNSIGNED_BYTE"],
    );
    add(
        "translation of normalized SHORT",
        "a.glb",
        glb_with(|v| {
            v["accessors"][TRANSLATION]["componentType"] = json!(SHORT);
            v["accessors"][TRANSLATION]["normalized"] = json!(true);
        }),
        at(0, Some(TRANSLATION)),
        |k| {
            matches!(
                k,
                K::BadComponentType {
                    usage: "translation output",
                    ..
                }
            )
        },
        &["SHORT"],
    );
    add(
        "translation of type VEC2",
        "a.glb",
        glb_with(|v| v["accessors"][TRANSLATION]["type"] = json!("VEC2")),
        at(0, Some(TRANSLATION)),
        |k| matches!(k, K::BadAccessorType { expected: "VEC3", found } if found == "VEC2"),
        &["VEC2"],
    );
    add(
        "unknown component type",
        "a.glb",
        glb_with(|v| v["accessors"][ROTATION]["componentType"] = json!(1234)),
        at(1, Some(ROTATION)),
        |k| matches!(k, K::BadComponentType { .. }),
        &["component type"],
    );

    // --- Extensions and URIs.
    add(
        "unsupported required extension",
        "a.glb",
        glb_with(|v| {
            v["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
            v["extensionsUsed"] = json!(["KHR_draco_mesh_compression"]);
        }),
        NOWHERE,
        |k| matches!(k, K::UnsupportedExtension(e) if e == "KHR_draco_mesh_compression"),
        &["KHR_draco_mesh_compression"],
    );
    add(
        "data URI with characters that are not base64",
        "a.gltf",
        gltf_with(|v| {
            v["buffers"][0]["uri"] = json!("data:application/octet-stream;base64,AAAA@@@@")
        }),
        NOWHERE,
        |k| matches!(k, K::BadUri { buffer: 0, .. }),
        &["buffer 0"],
    );
    add(
        "data URI that is not base64 encoded",
        "a.gltf",
        gltf_with(|v| v["buffers"][0]["uri"] = json!("data:text/plain,hello")),
        NOWHERE,
        |k| matches!(k, K::BadUri { buffer: 0, .. }),
        &["buffer 0"],
    );
    add(
        "missing external buffer file",
        "a.gltf",
        gltf_with(|v| v["buffers"][0]["uri"] = json!("missing.bin")),
        NOWHERE,
        |k| matches!(k, K::Io { path, .. } if path.ends_with("missing.bin")),
        &["missing.bin"],
    );
    add(
        "remote buffer URI",
        "a.gltf",
        gltf_with(|v| v["buffers"][0]["uri"] = json!("https://example.com/a.bin")),
        NOWHERE,
        |k| matches!(k, K::BadUri { buffer: 0, .. }),
        &["buffer 0"],
    );
    add(
        "absolute buffer path",
        "a.gltf",
        gltf_with(|v| v["buffers"][0]["uri"] = json!("/etc/hostname")),
        NOWHERE,
        |k| matches!(k, K::UnsafeUri { buffer: 0, .. }),
        &["buffer 0"],
    );
    add(
        "external buffer shorter than declared",
        "short.gltf",
        gltf_with(|v| {
            v["buffers"][0]["uri"] = json!("short.bin");
            v["buffers"][0]["byteLength"] = json!(1_000_000_000_000_000u64);
        }),
        NOWHERE,
        |k| {
            matches!(
                k,
                K::BufferTooShort {
                    buffer: 0,
                    declared: 1_000_000_000_000_000,
                    actual: 16
                }
            )
        },
        &["buffer 0"],
    );
    cases
}

/// Files a case needs beside its own (written into its folder).
fn side_files(case: &Case) -> Vec<(&'static str, Vec<u8>)> {
    match case.file {
        "short.gltf" => vec![("short.bin", vec![0; 16])],
        _ => Vec::new(),
    }
}

fn write_case(root: &Path, i: usize, case: &Case) -> PathBuf {
    let dir = root.join(format!("{i:02}"));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in side_files(case) {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    let path = dir.join(case.file);
    std::fs::write(&path, &case.bytes).unwrap();
    path
}

fn check_error(case: &Case, err: &Error) {
    let msg = err.to_string();
    let Error::Import {
        animation,
        channel,
        skin,
        accessor,
        kind,
    } = err
    else {
        panic!("{}: expected Error::Import, got {err:?}", case.name);
    };
    // Animation imports never point into a skin.
    assert_eq!(*skin, None, "{}: {msg}", case.name);
    assert!(
        (case.kind)(kind),
        "{}: unexpected kind {kind:?} ({msg})",
        case.name
    );
    assert_eq!(
        (*animation, *channel, *accessor),
        case.place,
        "{}: wrong place ({msg})",
        case.name
    );
    let (a, c, x) = case.place;
    let mut words: Vec<String> = case.words.iter().map(|w| w.to_string()).collect();
    words.extend(a.map(|a| format!("animation {a}")));
    words.extend(c.map(|c| format!("channel {c}")));
    words.extend(x.map(|x| format!("accessor {x}")));
    for w in &words {
        assert!(
            msg.contains(w.as_str()),
            "{}: message {msg:?} does not name {w:?}",
            case.name
        );
    }
    assert!(
        !msg.contains('\n'),
        "{}: message is not one line: {msg:?}",
        case.name
    );
}

#[test]
fn the_base_asset_is_valid_in_both_containers() {
    // Each malformed file differs from these by one rule, so each refusal
    // below is caused by that rule alone.
    let b = base();
    for bytes in [b.to_glb(), b.to_gltf_embedded()] {
        let imported = gltf::from_slice(&bytes, None).unwrap();
        assert_eq!(imported.library.clips().len(), 1);
        assert_eq!(imported.library.clips()[0].tracks.len(), 4);
        assert_eq!(imported.library.clips()[0].tracks[3].width, 2);
    }
    let dir = temp_dir("malformed-base");
    let path = b.write_external(&dir, "base");
    assert!(gltf::load(&path).is_ok());
}

#[test]
fn every_malformed_file_is_refused_with_its_own_error() {
    let root = temp_dir("malformed-import");
    let cases = corpus();
    let mut names = std::collections::HashSet::new();
    for (i, case) in cases.iter().enumerate() {
        assert!(names.insert(case.name), "duplicate case {}", case.name);
        let path = write_case(&root, i, case);
        let err = match gltf::load(&path) {
            Ok(_) => panic!("{}: imported without error", case.name),
            Err(e) => e,
        };
        check_error(case, &err);
        // In memory too (no base folder: an external URI cannot be read, so
        // those cases only run from a file).
        if side_files(case).is_empty()
            && !matches!(
                &err,
                Error::Import {
                    kind: ImportErrorKind::Io { .. },
                    ..
                }
            )
        {
            let err2 = gltf::from_slice(&case.bytes, None).unwrap_err();
            check_error(case, &err2);
        }
    }
    assert!(
        LARGEST.load(Ordering::Relaxed) <= MAX_ALLOCATION,
        "an allocation of {} bytes happened while importing the corpus",
        LARGEST.load(Ordering::Relaxed)
    );
}

/// `Document::read_accessor` on a MAT4 accessor whose element count times
/// 16 components overflows `u64`: refused as too large, nothing allocated.
#[test]
fn accessor_component_count_overflow_is_refused() {
    let b = base();
    let mut v = b.json(None);
    v["accessors"][TRANSLATION]["type"] = json!("MAT4");
    v["accessors"][TRANSLATION]["count"] = json!(u64::MAX / 8);
    let doc = Document::from_slice(&glb(&to_vec(&v), Some(&b.bin)), None).unwrap();
    match doc.read_accessor(TRANSLATION) {
        Err(Error::Import {
            accessor: Some(TRANSLATION),
            kind: ImportErrorKind::TooLarge { .. },
            ..
        }) => {}
        other => panic!("expected TooLarge, got {other:?}"),
    }
    assert!(LARGEST.load(Ordering::Relaxed) <= MAX_ALLOCATION);
}

/// Runs `sample FILE --json`, killing it after `guard`; returns (exit code,
/// stdout, stderr), or `None` if it had to be killed.
fn run_guarded(path: &Path, guard: Duration) -> Option<(Option<i32>, String, String)> {
    let mut child = Command::new(sample_binary())
        .arg(path)
        .arg("--json")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out_pipe.read_to_end(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err_pipe.read_to_end(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > guard {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = String::from_utf8_lossy(&out_reader.join().unwrap()).into_owned();
    let err = String::from_utf8_lossy(&err_reader.join().unwrap()).into_owned();
    status.map(|s| (s.code(), out, err))
}

#[test]
fn sample_exits_2_with_one_line_on_every_malformed_file() {
    let root = temp_dir("malformed-cli");
    sample_binary();
    let mut failures = Vec::new();
    for (i, case) in corpus().iter().enumerate() {
        let path = write_case(&root, i, case);
        let Some((code, out, err)) = run_guarded(&path, Duration::from_secs(60)) else {
            failures.push(format!("{}: still running after 60 s (killed)", case.name));
            continue;
        };
        let lines: Vec<&str> = err.lines().collect();
        if code != Some(2) {
            failures.push(format!("{}: exit code {code:?}, stderr {err:?}", case.name));
        } else if lines.len() != 1 || lines[0].trim().is_empty() {
            failures.push(format!(
                "{}: {} lines on stderr: {err:?}",
                case.name,
                lines.len()
            ));
        } else if lines[0].contains("internal error") || lines[0].contains("panicked") {
            failures.push(format!("{}: a panic: {err:?}", case.name));
        } else if !out.is_empty() {
            failures.push(format!("{}: stdout not empty: {out:?}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
