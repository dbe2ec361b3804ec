//! Unit tests of `src/tables/run_values.rs`.

use crate::layout::GpuSampleRow;
use crate::tables::run_values::*;
use crate::tests::Derived;
use crate::{AnimationLibrary, Clip, Interpolation, Property, Track};

/// Row r's key k: a unit quaternion of its own, about x.
fn q(r: usize, k: usize) -> [f32; 4] {
    let a = 0.001 * (100 * r + k) as f32;
    [a.sin(), 0.0, 0.0, a.cos()]
}

/// A clip of `rows` LINEAR rotations of `times`, row r's key k
/// `q(r, k)`.
fn rotations(rows: u32, times: &[f32]) -> Clip {
    let tracks = (0..rows)
        .map(|r| {
            let values = (0..times.len()).flat_map(|k| q(r as usize, k)).collect();
            Track::new(
                r,
                Property::Rotation,
                Interpolation::Linear,
                times.to_vec(),
                values,
            )
        })
        .collect();
    Clip::new("r", tracks)
}

#[test]
fn runs_of_shared_times_are_written_key_by_key() {
    let times = [0.0, 0.5, 1.0];
    let library = AnimationLibrary::new(vec![rotations(5, &times)]).unwrap();
    // Runs of 2: rows (0, 1), (2, 3); row 4 alone stays as it is.
    let runs = interleaved_runs(library.tables(), 2);
    assert_eq!(runs.len(), 2);
    assert_eq!((runs[0].rows, runs[0].keys), (2, 3));
    assert_eq!((runs[1].rows, runs[1].keys), (2, 3));
    let values: &[u8] = bytemuck::cast_slice(library.values());
    let mut bytes = values.to_vec();
    for run in &runs {
        run.write(values, |at, b| bytes[at..at + b.len()].copy_from_slice(b));
    }
    let dst: &[f32] = bytemuck::cast_slice(&bytes);
    // The second run (rows 2 and 3) key by key: row 2's key 0, row
    // 3's key 0, row 2's key 1, ..., row 3's key 2 at base + 4 (2 * 2
    // + 1).
    let base = runs[1].base as usize;
    assert_eq!(dst[base..base + 4], q(2, 0));
    assert_eq!(dst[base + 4..base + 8], q(3, 0));
    assert_eq!(dst[base + 8..base + 12], q(2, 1));
    assert_eq!(dst[base + 20..base + 24], q(3, 2));
    // Every row's key k is found at its row's new offset plus k times
    // its new width, and the row left alone is where it was.
    let mut rows: Vec<GpuSampleRow> = library
        .tables()
        .tracks()
        .iter()
        .map(GpuSampleRow::of)
        .collect();
    for run in &runs {
        run.point_rows(&mut rows);
    }
    for (r, row) in rows.iter().enumerate() {
        for k in 0..times.len() {
            let at = row.values_offset as usize + k * row.width as usize;
            assert_eq!(dst[at..at + 4], q(r, k), "row {r} key {k}");
        }
    }
    assert_eq!(rows[4].width, 4);
    assert_eq!(
        rows[4].values_offset,
        library.tables().tracks()[4].values_offset
    );
}

#[test]
fn rows_with_their_own_times_are_left_alone() {
    let mut clip = rotations(2, &[0.0, 0.5, 1.0]);
    clip.tracks.push(Track::new(
        2,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 0.25, 1.0],
        [q(2, 0), q(2, 1), q(2, 2)].concat(),
    ));
    let library = AnimationLibrary::new(vec![clip]).unwrap();
    // One run of three rows, the third with other key times: none.
    assert!(interleaved_runs(library.tables(), 3).is_empty());
    // Runs of two: the first two rows share theirs.
    let runs = interleaved_runs(library.tables(), 2);
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].rows, 2);
    // A run of one row is never interleaved.
    assert!(interleaved_runs(library.tables(), 1).is_empty());
}
