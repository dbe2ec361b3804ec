//! Interleaved key values: the clip-blocks plan's layout of the LINEAR
//! rotations of a run whose rows share their key times.
//!
//! A workgroup of the clip-blocks plan ([`SamplerPlan::ClipBlocks`])
//! samples a run of up to 32 consecutive track rows of one clip, each lane
//! its instance's rows one after the other. When every row of the run has
//! the same key times (keys baked at a fixed rate, which the library
//! stores once; [`run_keys`](crate::tables::run_keys) then searches once per run),
//! a lane reads keys `k` and `k + 1` of every row at the same `k`. The
//! library stores each row's keys one after the other, so those reads are
//! one or two cache lines per row, far apart; with the run's values stored
//! key by key instead, row `i`'s key `k` at `base + 4 (k m + i)` for the
//! `m` rows of the run, they are `m` neighbouring values, `2 m` of them
//! together (16 bytes each: 512 bytes for a run of 32 rows, 8 cache lines
//! where the rows' own layout touches 32 to 64). That matters most when
//! the values come from memory rather than the cache (long tracks: the
//! bench's long_keys reads 100 MB of values).
//!
//! The sampler does this where every run of its LINEAR rotation group
//! shares its key times (run keys [`RunKeys::Shared`]: key `k + 1` is then
//! clamped to the last key, never read past a run's region). Its values
//! buffer holds the library's values with each such run's region rewritten
//! in place (a run qualifies when its rows' values
//! are contiguous, as the library stores a clip's rows of one group), the
//! same bytes in another order. Each row of the plan's row table then
//! names its first value (`base + 4 i`) and, in its width, the distance
//! from one key to the next (`4 m` floats; 4 for every other LINEAR
//! rotation, whose width it is): the shader's override `INTERLEAVED` has
//! `quat_at` step by the width. Only the LINEAR rotation group
//! ([`GROUP_SLERP`]) takes it; its rows are 4 floats wide whatever their
//! node, and its kernel reads no width otherwise. The CPU twin and the
//! other plans read the library's own layout.
//!
//! [`SamplerPlan::ClipBlocks`]: crate::kinds::SamplerPlan::ClipBlocks
//! [`RunKeys::Shared`]: crate::tables::run_keys::RunKeys::Shared

use crate::layout::{GpuSampleRow, GROUP_SLERP};
use crate::tables::library::LibraryTables;
use crate::tables::run_keys::runs_of;

/// A run of LINEAR rotation rows whose values the clip-blocks plan stores
/// key by key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct InterleavedRun {
    /// The run's first row (its track index in the library).
    pub(crate) first: usize,
    /// Its rows, at least 2.
    pub(crate) rows: u32,
    /// The first row's values offset (floats): where the run's region
    /// starts.
    pub(crate) base: u32,
    /// Keys per row (every row has the same key times).
    pub(crate) keys: u32,
}

impl InterleavedRun {
    /// Bytes in the run's region: `rows * keys * 16`.
    fn bytes(&self) -> usize {
        self.rows as usize * self.keys as usize * 16
    }

    /// The run's region of `values` (the library's values as bytes, each
    /// row's keys one after the other) key by key, as `put(at, bytes)`
    /// calls, `at` a byte offset into the same buffer: row `i`'s key `k`
    /// at float `base + 4 (k rows + i)`, one call per key (the `rows` rows'
    /// 16 bytes each). Puts nothing if the region is not inside `values`.
    pub(crate) fn write(&self, values: &[u8], mut put: impl FnMut(usize, &[u8])) {
        let base = self.base as usize * 4;
        let (m, n) = (self.rows as usize, self.keys as usize);
        let Some(src) = values.get(base..base + self.bytes()) else {
            return;
        };
        let mut key = vec![0u8; 16 * m];
        for k in 0..n {
            for (i, slot) in key.chunks_exact_mut(16).enumerate() {
                let from = 16 * (i * n + k);
                slot.copy_from_slice(&src[from..from + 16]);
            }
            put(base + 16 * k * m, &key);
        }
    }

    /// Points the run's rows of the plan's row table (indexed like the
    /// library's tracks) at the interleaved values: row `i`'s values
    /// offset `base + 4 i`, its width `4 rows` (the key stride).
    pub(crate) fn point_rows(&self, rows: &mut [GpuSampleRow]) {
        for i in 0..self.rows {
            if let Some(row) = rows.get_mut(self.first + i as usize) {
                row.values_offset = self.base + 4 * i;
                row.width = 4 * self.rows;
            }
        }
    }
}

/// The runs of `run` rows (the clip-blocks dispatch's `ROW_RUN`) of each
/// clip's LINEAR rotations that the plan stores key by key: runs of at
/// least two rows, every row with the run's first row's key times
/// (the same search texels), 4 floats wide, their values contiguous and in
/// row order.
pub(crate) fn interleaved_runs(library: &LibraryTables, run: u32) -> Vec<InterleavedRun> {
    if run < 2 {
        return Vec::new();
    }
    runs_of(library, GROUP_SLERP, run)
        .into_iter()
        .filter_map(|(first, rows)| {
            let head = rows.first()?;
            let keys = head.key_count;
            let contiguous = rows.iter().enumerate().all(|(i, t)| {
                t.search_offset == head.search_offset
                    && t.key_count == keys
                    && t.width == 4
                    && u64::from(t.values_offset)
                        == u64::from(head.values_offset) + 4 * i as u64 * u64::from(keys)
            });
            (rows.len() >= 2 && keys > 0 && contiguous).then_some(InterleavedRun {
                first,
                rows: rows.len() as u32,
                base: head.values_offset,
                keys,
            })
        })
        .collect()
}
