//! Unit tests of `src/tables/run_keys.rs`.

use crate::cpu::sample::{find_segment, find_segment_from, first_segment, segment_of};
use crate::layout::GpuSampleRow;
use crate::model::track::{Clip, Track};
use crate::tables::key_lookup::lookup_bucket;
use crate::tables::run_keys::*;
use crate::tests::Derived;
use crate::AnimationLibrary;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Key times from `start`: `n` gaps, some of them tiny (two keys in
/// one bucket), some long.
fn times(rng: &mut Rng, start: f32, n: usize) -> Vec<f32> {
    let mut t = start;
    (0..n)
        .map(|_| {
            let at = t;
            let r = rng.next();
            t += if r < 0.15 {
                1e-3 * rng.next() + 1e-6
            } else {
                0.02 + 0.05 * r
            };
            at
        })
        .collect()
}

/// Key times from `start`: `n` gaps of 0.02 to 0.07 s (no two keys
/// closer than about half their average interval, as in irregular
/// exports).
fn spread(rng: &mut Rng, start: f32, n: usize) -> Vec<f32> {
    let mut t = start;
    (0..n)
        .map(|_| {
            let at = t;
            t += 0.02 + 0.05 * rng.next();
            at
        })
        .collect()
}

fn rotation(node: u32, times: Vec<f32>) -> Track {
    let values = times.iter().flat_map(|_| [0.0, 0.0, 0.0, 1.0]).collect();
    super::common::linear_rotation(node, times, values)
}

/// Every time worth probing for rows `rows`: every key time, the
/// floats next to it, times between keys, before the first and after
/// the last.
fn probes(rows: &[Vec<f32>]) -> Vec<f32> {
    let mut out = vec![-1.0, 0.0, 1e9];
    for times in rows {
        for w in times.windows(2) {
            out.push(0.5 * (w[0] + w[1]));
        }
        for &t in times {
            out.extend([t, t.next_up(), t.next_down()]);
        }
    }
    out
}

/// The key texel copies: each row's texels are its own key texels in
/// the library's texture, copied in row order from `base`, so that rows
/// of equal key counts step by their key count, with the rows pointed
/// at them; past the budget (the group's bucket texels) or the
/// texture's capacity, none, and the rows as they were.
#[test]
fn key_copies_are_each_rows_key_texels_in_step() {
    let mut rng = Rng(5);
    // Twelve rows of 20 keys, those where `direct` holds uniform
    // (indexed directly: no bucket texels), the others irregular; and
    // the rows of a group with run tables.
    let mut library_of = |direct: fn(u32) -> bool| {
        let tracks: Vec<Track> = (0..12u32)
            .map(|r| {
                let times = if direct(r) {
                    (0..20).map(|k| k as f32 / 30.0).collect()
                } else {
                    let mut t = spread(&mut rng, 0.0, 20);
                    t[1..].iter_mut().for_each(|t| *t += 0.6);
                    t
                };
                rotation(r, times)
            })
            .collect();
        let library = AnimationLibrary::new(vec![Clip::new("c", tracks)]).unwrap();
        let rows: Vec<GpuSampleRow> = library
            .tables()
            .tracks()
            .iter()
            .map(GpuSampleRow::of_key_texels)
            .collect();
        (library, rows)
    };
    // Every third row indexed directly: the key texels step unevenly.
    let (library, own) = library_of(|r| r % 3 == 0);
    assert!(!GpuSampleRow::is_regular_run(&own));
    let windows = library.tables().key_windows();
    let base = windows.len() as u64 + 100;
    let mut rows = own.clone();
    let copies = key_copies(library.tables(), &windows, &mut rows, 0, 8, base, u64::MAX).unwrap();
    assert_eq!(copies.len(), 12 * 20);
    for (r, row) in rows.iter().enumerate() {
        assert_eq!(u64::from(row.search_offset), base + 20 * r as u64);
        let at = own[r].search_offset as usize;
        let start = (u64::from(row.search_offset) - base) as usize;
        assert_eq!(copies[start..start + 20], windows[at..at + 20], "row {r}");
        assert_eq!(
            GpuSampleRow {
                search_offset: own[r].search_offset,
                ..*row
            },
            own[r]
        );
    }
    assert!(rows.chunks(8).all(GpuSampleRow::is_regular_run));
    // 240 texels of copies; the eight rows with tables have 38 bucket
    // texels each (304). Capacity one texel short: none.
    let mut rows = own.clone();
    let room = base + 240;
    assert!(key_copies(library.tables(), &windows, &mut rows, 0, 8, base, room - 1).is_none());
    assert_eq!(rows, own);
    assert!(key_copies(library.tables(), &windows, &mut rows, 0, 8, base, room).is_some());
    // Two of every three indexed directly: 4 rows with tables, 152
    // bucket texels, fewer than the 240 copies.
    let (library, own) = library_of(|r| r % 3 != 2);
    let mut rows = own.clone();
    let windows = library.tables().key_windows();
    assert!(key_copies(library.tables(), &windows, &mut rows, 0, 8, 0, u64::MAX).is_none());
    assert_eq!(rows, own);
}

/// The table's entries are the definition's: for every bucket and row,
/// the last key whose bucket is before it, by brute force.
#[test]
fn run_table_entries_are_the_last_key_of_an_earlier_bucket() {
    let mut rng = Rng(7);
    for case in 0..20 {
        let rows: Vec<Vec<f32>> = (0..1 + case % 7)
            .map(|r| times(&mut rng, 0.1 * (r % 3) as f32, 2 + (r * 5 + case) % 40))
            .collect();
        let slices: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let (scale, origin, buckets, entries) = run_table(&slices);
        assert!(scale > 0.0);
        let longest = rows.iter().map(Vec::len).max().unwrap();
        assert_eq!(buckets as usize, 2 * (longest - 1));
        for b in 0..buckets {
            for (i, times) in rows.iter().enumerate() {
                let want = times
                    .iter()
                    .rposition(|&t| lookup_bucket(t, origin, scale, buckets) < b)
                    .unwrap_or(0) as u32;
                assert_eq!(
                    entries[(b as usize) * rows.len() + i],
                    want,
                    "bucket {b} row {i}"
                );
            }
        }
    }
}

/// Started from the key its run's table names for the time's bucket,
/// each row's search (the CPU twin of the shader's steps) finds the
/// full search's segment at every probe time, and the named key is
/// never after the answer (the search never has to go back).
#[test]
fn searches_from_the_run_table_find_every_segment() {
    let mut rng = Rng(11);
    for case in 0..12 {
        let rows: Vec<Vec<f32>> = (0..2 + case % 9)
            .map(|r| times(&mut rng, 0.05 * (r % 4) as f32, 1 + (r * 7 + case) % 50))
            .collect();
        let clip = Clip::new(
            "c",
            rows.iter()
                .enumerate()
                .map(|(r, t)| rotation(r as u32, t.clone()))
                .collect(),
        );
        let library = AnimationLibrary::new(vec![clip]).unwrap();
        let slices: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let (scale, origin, buckets, entries) = run_table(&slices);
        for &time in &probes(&rows) {
            let b = lookup_bucket(time, origin, scale, buckets) as usize;
            for (i, track) in library.tables().tracks().iter().enumerate() {
                let own = times_of(library.tables(), track);
                let k = entries[b * rows.len() + i];
                let want = find_segment(library.times(), track.times_offset, track.key_count, time);
                assert!(k <= want.k, "row {i} at {time}: guess {k} after {}", want.k);
                let keys = track.key_texels();
                let got =
                    find_segment_from(own, library.tables().search_keys(), track, keys + k, time);
                assert_eq!(got, want, "row {i} at {time}");
            }
        }
    }
}

/// Exact tables: the fewest doublings of `run_table`'s buckets that
/// put every row's keys in distinct buckets (brute force), entries
/// before each row's last key, and from the entry of any time's bucket
/// the one-step decision (`first_segment`, the shader's mode 3) is the
/// full search's segment at every probe time. Keys closer than the
/// doublings can separate, and rows of one key, get none.
#[test]
fn exact_tables_decide_every_segment_in_one_step() {
    let mut rng = Rng(5);
    let mut doubled = 0;
    for case in 0..24 {
        let rows: Vec<Vec<f32>> = (0..1 + case % 9)
            .map(|r| spread(&mut rng, 0.03 * (r % 4) as f32, 2 + (r * 11 + case) % 70))
            .collect();
        let slices: Vec<&[f32]> = rows.iter().map(Vec::as_slice).collect();
        let (scale, origin, buckets, entries) =
            exact_run_table(&slices).expect("keys 0.02 s apart separate");
        let apart = |buckets: u32, scale: f32| {
            rows.iter().all(|t| {
                t.windows(2).all(|w| {
                    lookup_bucket(w[0], origin, scale, buckets)
                        != lookup_bucket(w[1], origin, scale, buckets)
                })
            })
        };
        assert!(apart(buckets, scale), "case {case}");
        let plain = run_table(&slices);
        assert_eq!(
            (plain.0 * (buckets / plain.2) as f32, plain.1),
            (scale, origin)
        );
        if buckets > plain.2 {
            doubled += 1;
            let half = run_table_of(&slices, buckets / 2);
            assert!(!apart(half.2, half.0), "case {case}: not the fewest");
        }
        for bucket in entries.chunks(rows.len()) {
            for (&p, times) in bucket.iter().zip(&rows) {
                assert!(
                    p as usize <= times.len() - 2,
                    "case {case}: {p} not before the last key"
                );
            }
        }
        for &time in &probes(&rows) {
            let b = lookup_bucket(time, origin, scale, buckets) as usize;
            for (i, times) in rows.iter().enumerate() {
                let p = entries[b * rows.len() + i];
                let want = find_segment(times, 0, times.len() as u32, time);
                assert_eq!(
                    first_segment(times, p, time),
                    want,
                    "case {case} row {i} at {time}"
                );
            }
        }
    }
    // Both kinds occur: runs separated by run_table's own buckets and
    // runs that needed more.
    assert!(doubled > 0 && doubled < 24, "{doubled}");
    // Two keys 1e-4 s apart among keys 0.02-0.07 s apart: 16 (n - 1)
    // buckets do not separate them.
    let mut close = spread(&mut rng, 0.0, 30);
    close.insert(10, close[9] + 1e-4);
    assert!(exact_run_table(&[&close, &spread(&mut rng, 0.0, 30)]).is_none());
    // A row of one key has no key before its last: no exact table.
    assert!(exact_run_table(&[&[0.5], &spread(&mut rng, 0.0, 30)]).is_none());
}

/// A run of one row with one key: one bucket, scale 0, the key.
#[test]
fn a_single_key_gets_one_bucket() {
    let (scale, origin, buckets, entries) = run_table(&[&[0.5]]);
    assert_eq!((scale, origin, buckets, entries), (0.0, 0.5, 1, vec![0]));
    let s = segment_of(0, 0, 0.5, 0.5, 0.7);
    assert!(s.exact);
}

fn library(clips: Vec<Vec<Vec<f32>>>) -> AnimationLibrary {
    AnimationLibrary::new(
        clips
            .into_iter()
            .enumerate()
            .map(|(c, rows)| {
                Clip::new(
                    format!("c{c}"),
                    rows.into_iter()
                        .enumerate()
                        .map(|(r, t)| rotation(r as u32, t))
                        .collect(),
                )
            })
            .collect(),
    )
    .unwrap()
}

/// Reads entry `i` of bucket `b` of the run whose header is `h`, as
/// the shader does.
fn entry(
    texels: &[[u32; 4]],
    base: u64,
    h: [u32; 4],
    bits: u32,
    per_bucket: u32,
    b: u32,
    i: u32,
) -> u32 {
    let t = texels[(u64::from(h[0] + b * per_bucket) - base) as usize..].as_ref();
    let e = 32 / bits;
    let word = i / e;
    let w = t[(word / 4) as usize][(word % 4) as usize];
    (w >> (bits * (i % e))) & ((1u64 << bits) - 1) as u32
}

/// The header of each run `(first row, its rows' key times)` of
/// `built` (8-bit entries, two texels a bucket; `tracks` header texels
/// from `base`) names `table`'s buckets, scale and origin, and its
/// table's texels decode to `table`'s entries.
fn assert_tables(
    built: &RunKeyTexels,
    base: u64,
    tracks: usize,
    runs: &[(usize, &[Vec<f32>])],
    table: impl Fn(&[&[f32]]) -> (f32, f32, u32, Vec<u32>),
) {
    for &(first, run_rows) in runs {
        let h = built.texels[first];
        let slices: Vec<&[f32]> = run_rows.iter().map(Vec::as_slice).collect();
        let (scale, origin, buckets, entries) = table(&slices);
        assert_eq!(h[1..], [buckets, scale.to_bits(), origin.to_bits()]);
        assert!(u64::from(h[0]) >= base + tracks as u64);
        for b in 0..buckets {
            for i in 0..run_rows.len() {
                let got = entry(&built.texels, base, h, 8, 2, b, i as u32);
                assert_eq!(got, entries[b as usize * run_rows.len() + i]);
            }
        }
    }
}

#[test]
fn build_picks_each_mode_and_packs_the_tables() {
    let mut rng = Rng(3);
    let (lib, base) = tables_pack_each_run(&mut rng);
    spread_keys_get_exact_tables(&mut rng);
    close_keys_keep_the_plain_table(&mut rng);
    long_rows_get_16_bit_entries(&mut rng);
    uneven_and_baked_rows_search_their_own(&mut rng);
    shared_oversize_and_single_row_runs(&mut rng, &lib, base);
}

/// Distinct key times: 8-bit tables, each run's `run_table`; returns
/// the library and its base.
fn tables_pack_each_run(rng: &mut Rng) -> (AnimationLibrary, u64) {
    // Distinct key times, up to 256 keys: 8-bit tables; a clip of 35
    // rows gives runs of 32 and 3.
    let rows: Vec<Vec<f32>> = (0..35).map(|r| times(rng, 0.0, 20 + r % 30)).collect();
    let few = vec![times(rng, 0.3, 256), times(rng, 0.0, 3)];
    let lib = library(vec![rows.clone(), few.clone()]);
    let base = lib.tables().search_keys().len() as u64;
    let built = build(lib.tables(), &[(0, 32)], base, u64::MAX);
    assert_eq!(
        built.groups,
        [GroupRunKeys {
            mode: RunKeys::Table,
            bits: 8,
            table_texels: 2
        }]
    );
    // Headers for rows 0, 32 (clip 0) and 35 (clip 1), and the tables
    // decode to run_table's entries.
    let tracks = lib.tables().tracks().len();
    let runs = [(0usize, &rows[..32]), (32, &rows[32..]), (35, &few[..])];
    assert_tables(&built, base, tracks, &runs, run_table);
    for (row, h) in built.texels[..tracks].iter().enumerate() {
        assert_eq!(h[1] > 0, [0, 32, 35].contains(&row), "header of row {row}");
    }
    (lib, base)
}

/// Keys far apart: exact tables.
fn spread_keys_get_exact_tables(rng: &mut Rng) {
    // Keys 0.02 s apart at least: exact tables, each run's
    // exact_run_table.
    let wide_rows: Vec<Vec<f32>> = (0..35).map(|r| spread(rng, 0.0, 20 + r % 30)).collect();
    let wide = library(vec![wide_rows.clone()]);
    let wide_base = wide.tables().search_keys().len() as u64;
    let built = build(wide.tables(), &[(0, 32)], wide_base, u64::MAX);
    assert_eq!(
        built.groups,
        [GroupRunKeys {
            mode: RunKeys::Exact,
            bits: 8,
            table_texels: 2
        }]
    );
    let runs = [(0usize, &wide_rows[..32]), (32, &wide_rows[32..])];
    assert_tables(&built, wide_base, 35, &runs, |s| {
        exact_run_table(s).unwrap()
    });
}

/// Two keys close together: the exact table is too big.
fn close_keys_keep_the_plain_table(rng: &mut Rng) {
    // Three rows of 18 irregular keys, two of them 0.008 s apart: the
    // exact table's buckets (at least twice run_table's 34, two texels
    // each) pass the rows' own 3 x 34 bucket texels; the plain table's
    // do not.
    let pairs: Vec<Vec<f32>> = (0..3)
        .map(|_| {
            let mut t = spread(rng, 0.0, 17);
            t.insert(9, t[8] + 0.008);
            t
        })
        .collect();
    let slices: Vec<&[f32]> = pairs.iter().map(Vec::as_slice).collect();
    assert!(exact_run_table(&slices).is_some_and(|t| t.2 > 34));
    let close = library(vec![pairs]);
    assert!(close.tables().tracks().iter().all(|t| t.lookup_scale > 0.0));
    let built = build(close.tables(), &[(0, 32)], 0, u64::MAX);
    assert_eq!(built.groups[0].mode, RunKeys::Table);
}

/// Rows past 256 keys: 16-bit entries.
fn long_rows_get_16_bit_entries(rng: &mut Rng) {
    // Rows of 257 keys and more: 16-bit entries, 32 rows in four
    // texels.
    let long = library(vec![(0..32).map(|r| times(rng, 0.0, 257 + r)).collect()]);
    let built = build(long.tables(), &[(0, 32)], 0, u64::MAX);
    assert_eq!(
        built.groups[0],
        GroupRunKeys {
            mode: RunKeys::Table,
            bits: 16,
            table_texels: 4
        }
    );
}

/// Uneven or directly indexed rows: no tables.
fn uneven_and_baked_rows_search_their_own(rng: &mut Rng) {
    // One long row among short ones: its buckets times 32 rows'
    // entries would pass the rows' own bucket texels. Rows indexed
    // directly (uniform keys) have no bucket texels to stand in for.
    let uneven = library(vec![vec![times(rng, 0.0, 300), times(rng, 0.0, 9)]]);
    let built = build(uneven.tables(), &[(0, 32)], 0, u64::MAX);
    assert_eq!(built.groups[0], GroupRunKeys::PER_ROW);
    let baked = library(vec![(1..5)
        .map(|r| (0..10 * r).map(|k| k as f32 / 30.0).collect())
        .collect()]);
    assert!(baked.tables().tracks().iter().all(|t| t.lookup_scale < 0.0));
    let built = build(baked.tables(), &[(0, 32)], 0, u64::MAX);
    assert_eq!(built.groups[0], GroupRunKeys::PER_ROW);
}

/// Shared key times, one row per run, huge rows, a small texture.
fn shared_oversize_and_single_row_runs(rng: &mut Rng, lib: &AnimationLibrary, base: u64) {
    let tracks = lib.tables().tracks().len();
    // Every row with the first row's key times: shared, no texels.
    let t = times(rng, 0.0, 30);
    let shared = library(vec![vec![t.clone(); 5], vec![t.clone(); 3]]);
    let built = build(shared.tables(), &[(0, 32)], 0, u64::MAX);
    assert_eq!(built.groups[0].mode, RunKeys::Shared);
    assert!(built.texels.is_empty());
    // One row per run (the shader's ROW_RUN 1), more than 65,536 keys,
    // or tables past the texture: each row searches its own.
    let built = build(lib.tables(), &[(0, 1)], base, u64::MAX);
    assert_eq!(built.groups[0], GroupRunKeys::PER_ROW);
    assert!(built.texels.is_empty());
    let huge = library(vec![vec![
        (0..65_537).map(|k| k as f32 * 0.01).collect(),
        vec![0.0, 0.5],
    ]]);
    assert_eq!(
        build(huge.tables(), &[(0, 32)], 0, u64::MAX).groups[0],
        GroupRunKeys::PER_ROW
    );
    let small = build(lib.tables(), &[(0, 32)], base, base + tracks as u64 + 10);
    assert_eq!(small.groups[0], GroupRunKeys::PER_ROW);
    assert!(small.texels.is_empty());
}
