//! Run keys: the first guess of the clip-blocks plan's key search, taken
//! once per run of track rows instead of once per row.
//!
//! A workgroup of the clip-blocks plan ([`SamplerPlan::ClipBlocks`])
//! samples a run of up to 32 consecutive track rows of one clip for up to
//! 64 instances, each lane its instance's rows one after the other, at one
//! time per lane. Without run keys, each row's key search starts from the
//! row's own bucket table: per row the bucket arithmetic and a bucket
//! texel (a copy of a key's search texel, two per key interval). With run
//! keys:
//!
//! - Each run has one bucket table of its own, `B` buckets over the span of
//!   all its rows' keys, `[min t_0, max t_last]`, with `B = 2 (n - 1)` for
//!   `n` keys in its longest row; bucket `b` holds, for every row `r` of the
//!   run, `A_(r,b)`: the last key of row `r` whose bucket is before `b` (0
//!   when none), as in a track's own table
//!   ([`key_lookup`](crate::tables::key_lookup)), in 8 or 16 bits.
//! - A lane computes its time's bucket once per run and reads the bucket's
//!   entries (one or two texels for 32 rows); each row's search then
//!   starts from the row's own search texel of key `A_(r,b)`
//!   (`[p, t_p, t_(p+1), t_(p+2)]`), which decides between `p` and `p + 1`
//!   when at most one key of the row lies in the bucket, and goes on
//!   searching otherwise. The search compares with the key times
//!   themselves, so the result is the row's own search's, bit for bit,
//!   whatever the guess.
//! - So a row reads one texel of its key texels (16 bytes a key) where it
//!   read one of its bucket texels (32 bytes a key), and the run's table
//!   (32 bytes a bucket for 32 rows) stays in the cache for the whole
//!   workgroup.
//!
//! - When no row of any run has two keys in one bucket, the search is one
//!   step: the named key's texel decides between it and the next key, the
//!   only candidates, and the search loop is left out ([`RunKeys::Exact`],
//!   [`exact_run_table`]). Where `2 (n - 1)` buckets leave two keys of a
//!   row in one bucket (irregular keys closer than about half their
//!   average interval), a run's buckets are doubled, up to three times,
//!   until none does; a group with a run that no doubling separates (or
//!   whose doubled tables pass the budget below) keeps the plain tables
//!   and the loop. The loop's first pass costs even when every lane's
//!   first step succeeds (a SIMD adapter runs the body with its lanes
//!   masked), so leaving the loop out pays where every row's keys are
//!   apart.
//!
//! When every row of every run of a group has its run's first row's key
//! times (the library stores equal key times once: keys baked at a fixed
//! rate), there is no table: the first row's one search is every row's
//! ([`RunKeys::Shared`]).
//!
//! Texture memory: per run of 32 rows, `B` buckets of 32 bytes (64 with
//! 16-bit entries, for rows of more than 256 keys), about 1/16 (1/8) of
//! what the rows' own bucket texels take when the rows have similar key
//! counts, up to 8 times that for exact tables whose buckets were
//! doubled. A group whose run tables would take more texels than its rows'
//! own bucket tables (rows of very different lengths, or rows indexed
//! directly, which have none) searches per row.
//!
//! Where a group's runs are regular but for their rows' key texels, which
//! step unevenly when some rows are indexed directly (no bucket texels
//! before their key texels), the sampler appends copies of the rows' key
//! texels in row order after the run tables ([`key_copies`]: 16 bytes per
//! key of each row, within the bucket texels of the group's rows), so that
//! the shader computes every row's search offset too (`REGULAR_SEARCH`).
//!
//! [`SamplerPlan::ClipBlocks`]: crate::kinds::SamplerPlan::ClipBlocks

use crate::layout::{GpuSampleRow, GpuTrack};
use crate::tables::key_lookup::{bucket_firsts, lookup_bucket};
use crate::tables::library::LibraryTables;

/// How a clip-blocks group's rows find their keys: the shader's override
/// `RUN_KEYS` (the discriminant).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RunKeys {
    /// Each row's search starts from its own bucket table or direct guess.
    PerRow = 0,
    /// Every row of each run has its run's first row's key times: that
    /// row's search is every row's.
    Shared = 1,
    /// Each row's search starts from the key that its run's bucket table
    /// names.
    Table = 2,
    /// As `Table`, with at most one key of any row in any bucket: the key
    /// the table names or the next one is the answer, one step without a
    /// search loop.
    Exact = 3,
}

/// A group's run keys, as the shader's overrides take them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupRunKeys {
    /// How the group's rows find their keys (`RUN_KEYS`).
    pub(crate) mode: RunKeys,
    /// Bits per table entry, 8 or 16 (`TABLE_BITS`; 0 without a table).
    pub(crate) bits: u32,
    /// Texels per bucket of a run's table, `ceil(run * bits / 128)`
    /// (`TABLE_TEXELS`; 0 without a table).
    pub(crate) table_texels: u32,
}

impl GroupRunKeys {
    /// Each row searches from its own table.
    pub(crate) const PER_ROW: GroupRunKeys = GroupRunKeys {
        mode: RunKeys::PerRow,
        bits: 0,
        table_texels: 0,
    };
}

/// The run keys of a clip-blocks sampler: per dispatch group its mode, and
/// the texels that follow the library's search texels in the key search
/// texture, from texel `base`:
///
/// - one header texel per track row, at `base + row`, for the first row of
///   each run of a [`RunKeys::Table`] group: `[table offset, buckets,
///   lookup scale, lookup origin]` (the floats as their bits), the bucket
///   of time `T` being [`lookup_bucket`]`(T, origin, scale, buckets)`;
/// - then each run's table: `table_texels` texels per bucket, entry `i`
///   (the run's row `i`) in bits `[bits j, bits (j + 1))` of word
///   `(i / e) % 4` of the bucket's texel `i / (4 e)`, with `e = 32 / bits`
///   entries per word and `j = i % e`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunKeyTexels {
    /// Per dispatch group, in the order given.
    pub(crate) groups: Vec<GroupRunKeys>,
    /// The texels from `base` on (empty when no group has a table).
    pub(crate) texels: Vec<[u32; 4]>,
}

/// The runs of `run` consecutive track rows of group `g`, clip by clip, as
/// the clip-blocks plan's workgroups take them: each run's first row (its
/// track index) and its rows (the last run of a clip may be shorter).
pub(crate) fn runs_of(library: &LibraryTables, g: u32, run: u32) -> Vec<(usize, &[GpuTrack])> {
    let tracks = library.tracks();
    let run = run.max(1) as usize;
    library
        .clip_table()
        .iter()
        .flat_map(|clip| {
            let first = clip.group_first[g as usize] as usize;
            let count = clip.group_count[g as usize] as usize;
            tracks
                .get(first..first + count)
                .unwrap_or(&[])
                .chunks(run)
                .enumerate()
                .map(move |(i, rows)| (first + i * run, rows))
        })
        .collect()
}

/// Copies of the key texels of group `g`'s rows (runs of `run` rows, each
/// row of a run table's group naming its first key texel:
/// `GpuSampleRow::of_key_texels`), laid out run by run and row by row
/// from texel `base` on, with `rows` pointed at them: the texels the
/// sampler appends after its run tables, or `None` (nothing changed)
/// where they would pass `max_texels` or the budget.
///
/// The library stores each distinct key times' bucket texels before its
/// key texels, and tracks indexed directly have none, so among tracks of
/// equal key counts the key texels of consecutive rows step unevenly when
/// some are indexed directly (irregular keys that stay within 0.75 of an
/// interval of even spacing). The rows' other fields can still step
/// evenly, and the shader then reads each row's search offset where it
/// could compute it (`REGULAR_SEARCH`). In the copies, a run's rows of
/// equal key counts step by their key count.
///
/// The budget: no more texels than the bucket texels of the group's rows
/// (each distinct key times once), which a group with run tables never
/// reads. `windows` is the library's [`LibraryTables::key_windows`](crate::tables::library::LibraryTables::key_windows).
pub(crate) fn key_copies(
    library: &LibraryTables,
    windows: &[[u32; 4]],
    rows: &mut [GpuSampleRow],
    g: u32,
    run: u32,
    base: u64,
    max_texels: u64,
) -> Option<Vec<[u32; 4]>> {
    let runs = runs_of(library, g, run);
    let budget = bucket_texels(&runs);
    let copied: u64 = runs
        .iter()
        .flat_map(|(_, tracks)| tracks.iter())
        .map(|t| u64::from(t.key_count))
        .sum();
    if copied > budget || base + copied > max_texels {
        return None;
    }
    let mut texels = Vec::with_capacity(copied as usize);
    let mut offsets = Vec::with_capacity(rows.len());
    for (first, tracks) in &runs {
        for (r, t) in (*first..).zip(tracks.iter()) {
            if r >= rows.len() {
                return None;
            }
            let start = t.key_texels() as usize;
            let keys = windows.get(start..start + t.key_count as usize)?;
            offsets.push((r, u32::try_from(base + texels.len() as u64).ok()?));
            texels.extend_from_slice(keys);
        }
    }
    for (r, offset) in offsets {
        rows[r].search_offset = offset;
    }
    Some(texels)
}

/// The bucket texels of the rows of `runs` (each distinct key times
/// once; rows indexed directly have none): what a group with run tables
/// no longer reads, the budget of its run tables and of its key texel
/// copies.
fn bucket_texels(runs: &[(usize, &[GpuTrack])]) -> u64 {
    let mut seen = std::collections::HashSet::new();
    runs.iter()
        .flat_map(|(_, rows)| rows.iter())
        .filter(|t| t.lookup_scale > 0.0 && seen.insert(t.search_offset))
        .map(|t| 2 * u64::from(t.key_count - 1))
        .sum()
}

/// The key times of `track`.
pub(crate) fn times_of<'a>(library: &'a LibraryTables, track: &GpuTrack) -> &'a [f32] {
    &library.times()[track.times_offset as usize..][..track.key_count as usize]
}

/// A run's bucket table: `(scale, origin, buckets, entries)`, `entries[b *
/// rows + i]` being row `i`'s first key to try in bucket `b`: the last key
/// whose bucket is before `b`, 0 when none.
///
/// `2 (n - 1)` buckets over `[min t_0, max t_last]` of the rows (`n` keys in
/// the longest), computed in `f32` as the shader does; one bucket (scale 0,
/// every time in it) when that span gives no finite scale.
pub(crate) fn run_table(rows: &[&[f32]]) -> (f32, f32, u32, Vec<u32>) {
    let n = rows.iter().map(|t| t.len()).max().unwrap_or(1);
    run_table_of(rows, (2 * n.saturating_sub(1)).max(1) as u32)
}

/// The most times [`exact_run_table`] doubles a run's buckets: up to 8
/// times [`run_table`]'s, `16 (n - 1)`, whose 32-byte buckets for 32 rows
/// are still half the rows' own bucket texels (32 bytes a key each).
const MAX_DOUBLINGS: u32 = 3;

/// [`run_table`] with at most one key of any row in any bucket, when
/// [`run_table`]'s buckets doubled at most [`MAX_DOUBLINGS`] times give
/// that (the fewest such); `None` otherwise (keys of a row closer than
/// about a sixteenth of the run's average key interval).
///
/// With one key at most per bucket, the table's entry for a time's bucket
/// `b`, key `p` (the last of the row whose bucket is before `b`), and the
/// next key are the only candidates: key `p + 2` has a bucket after `b`, so
/// it is after the time (the bucket is monotonic in the time, and the host
/// and the shader compute it alike, `lookup_bucket`), and key `p`, when `p`
/// is not the 0 of a row without keys before `b`, has a bucket before `b`,
/// so it is before the time. One search step on key `p`'s search texel
/// decides (`first_segment`).
///
/// Every row needs two keys at least, and each entry is at most the row's
/// last key but one: past the row's last key, key `last - 1` names the
/// same answer (the time is after key `last`, so the step takes the next
/// key), and the step then needs no key count to stay within the row
/// (the shader's `first_segment` reads none).
pub(crate) fn exact_run_table(rows: &[&[f32]]) -> Option<(f32, f32, u32, Vec<u32>)> {
    if rows.iter().any(|t| t.len() < 2) {
        return None;
    }
    let n = rows.iter().map(|t| t.len()).max().unwrap_or(2);
    let first = 2 * (n as u32 - 1);
    (0..=MAX_DOUBLINGS).find_map(|d| {
        let (scale, origin, buckets, mut entries) = run_table_of(rows, first << d);
        let apart = rows.iter().all(|times| {
            times.windows(2).all(|w| {
                lookup_bucket(w[0], origin, scale, buckets)
                    < lookup_bucket(w[1], origin, scale, buckets)
            })
        });
        for bucket in entries.chunks_mut(rows.len()) {
            for (k, times) in bucket.iter_mut().zip(rows) {
                *k = (*k).min(times.len() as u32 - 2);
            }
        }
        apart.then_some((scale, origin, buckets, entries))
    })
}

/// A run's bucket table of `buckets` buckets over its rows' span
/// ([`run_table`]).
pub(crate) fn run_table_of(rows: &[&[f32]], buckets: u32) -> (f32, f32, u32, Vec<u32>) {
    let origin = rows.iter().map(|t| t[0]).fold(f32::INFINITY, f32::min);
    let end = rows
        .iter()
        .map(|t| t[t.len() - 1])
        .fold(f32::NEG_INFINITY, f32::max);
    let mut buckets = buckets;
    let mut scale = (f64::from(buckets) / (f64::from(end) - f64::from(origin))) as f32;
    if !(scale.is_finite() && scale > 0.0) {
        buckets = 1;
        scale = 0.0;
    }
    let mut entries = vec![0u32; buckets as usize * rows.len()];
    for (i, times) in rows.iter().enumerate() {
        for (b, first) in bucket_firsts(times, origin, scale, buckets).enumerate() {
            entries[b * rows.len() + i] = first;
        }
    }
    (scale, origin, buckets, entries)
}

/// The run keys of the clip-blocks groups `groups` (`(group, run)`: the
/// track group and its rows per run, the shader's `ROW_RUN`) of `library`,
/// their texels from texel `base` of the key search texture and within
/// `max_texels` texels in all (the texture's capacity; a group whose tables
/// would not fit searches per row).
pub(crate) fn build(
    library: &LibraryTables,
    groups: &[(u32, u32)],
    base: u64,
    max_texels: u64,
) -> RunKeyTexels {
    let tracks = library.tracks();
    let mut tables = RunTables {
        library,
        base,
        row_count: tracks.len() as u64,
        max_texels,
        headers: vec![[0u32; 4]; tracks.len()],
        texels: Vec::new(),
    };
    let groups = groups
        .iter()
        .map(|&(g, run)| tables.group(g, run))
        .collect();
    let mut out = RunKeyTexels {
        groups,
        texels: Vec::new(),
    };
    if !tables.texels.is_empty() {
        out.texels = tables.headers;
        out.texels.extend_from_slice(&tables.texels);
    }
    out
}

/// The run tables of a sampler's groups, as [`build`] lays them out after
/// the header texels.
struct RunTables<'a> {
    library: &'a LibraryTables,
    /// The texel of the first header.
    base: u64,
    /// Track rows: header texels, before the tables.
    row_count: u64,
    /// The key search texture's capacity, in texels.
    max_texels: u64,
    /// The header texels, one per row; filled for the tables' runs.
    headers: Vec<[u32; 4]>,
    /// The tables so far.
    texels: Vec<[u32; 4]>,
}

/// A run table's layout: bits per entry, texels per bucket, and the most
/// texels a group's tables may take.
#[derive(Clone, Copy)]
struct TableShape {
    bits: u32,
    table_texels: u32,
    budget: u64,
}

impl RunTables<'_> {
    /// The run keys of group `g` in runs of `run` rows: shared keys, else
    /// exact or plain run tables (appended, with their runs' headers) where
    /// they fit, else per row.
    fn group(&mut self, g: u32, run: u32) -> GroupRunKeys {
        if run < 2 {
            return GroupRunKeys::PER_ROW;
        }
        let runs = runs_of(self.library, g, run);
        let shared = runs.iter().all(|(_, rows)| {
            rows.iter()
                .all(|t| t.search_offset == rows[0].search_offset)
        });
        if shared {
            return GroupRunKeys {
                mode: RunKeys::Shared,
                ..GroupRunKeys::PER_ROW
            };
        }
        let most_keys = runs
            .iter()
            .flat_map(|(_, rows)| rows.iter().map(|t| t.key_count))
            .max()
            .unwrap_or(0);
        let bits = match most_keys {
            0..=0x100 => 8,
            0x101..=0x1_0000 => 16,
            _ => return GroupRunKeys::PER_ROW,
        };
        let shape = TableShape {
            bits,
            table_texels: (run * bits).div_ceil(128),
            // The budget: no more texels than the bucket tables of the
            // group's rows take, which the run tables stand in for.
            budget: bucket_texels(&runs),
        };
        // Exact tables when every run has one, else the plain ones.
        let chosen = [RunKeys::Exact, RunKeys::Table]
            .into_iter()
            .find_map(|mode| Some((mode, self.add_tables(&runs, mode, shape)?)));
        let Some((mode, group_headers)) = chosen else {
            return GroupRunKeys::PER_ROW;
        };
        for (&(row, _), header) in runs.iter().zip(group_headers) {
            self.headers[row] = header;
        }
        GroupRunKeys {
            mode,
            bits,
            table_texels: shape.table_texels,
        }
    }

    /// Appends a table of `mode` for each of `runs` and returns their
    /// header texels; `None`, with nothing appended, when a run has no
    /// such table or the tables do not fit the texture or the budget.
    fn add_tables(
        &mut self,
        runs: &[(usize, &[GpuTrack])],
        mode: RunKeys,
        shape: TableShape,
    ) -> Option<Vec<[u32; 4]>> {
        let start = self.texels.len();
        let headers: Option<Vec<[u32; 4]>> = runs
            .iter()
            .map(|(_, rows)| self.add_table(rows, mode, shape, start))
            .collect();
        if headers.is_none() {
            self.texels.truncate(start);
        }
        headers
    }

    /// Appends the table of `mode` of the run `rows` and returns its
    /// header texel; `None` when there is no such table or it would pass
    /// the texture or the budget (the group's tables start at `start`).
    fn add_table(
        &mut self,
        rows: &[GpuTrack],
        mode: RunKeys,
        shape: TableShape,
        start: usize,
    ) -> Option<[u32; 4]> {
        let times: Vec<&[f32]> = rows.iter().map(|t| times_of(self.library, t)).collect();
        let (scale, origin, buckets, entries) = match mode {
            RunKeys::Exact => exact_run_table(&times),
            _ => Some(run_table(&times)),
        }?;
        let offset = self.base + self.row_count + self.texels.len() as u64;
        let size = u64::from(buckets) * u64::from(shape.table_texels);
        let offset = u32::try_from(offset).ok()?;
        if offset as u64 + size > self.max_texels
            || (self.texels.len() - start) as u64 + size > shape.budget
        {
            return None;
        }
        for bucket in entries.chunks(rows.len()) {
            self.texels.extend(pack_bucket(bucket, shape));
        }
        Some([offset, buckets, scale.to_bits(), origin.to_bits()])
    }
}

/// One bucket of a run table, its entries packed `shape.bits` bits each
/// into `shape.table_texels` texels.
fn pack_bucket(bucket: &[u32], shape: TableShape) -> Vec<[u32; 4]> {
    let per_word = (32 / shape.bits) as usize;
    let mut texels = vec![[0u32; 4]; shape.table_texels as usize];
    for (i, &k) in bucket.iter().enumerate() {
        let word = i / per_word;
        texels[word / 4][word % 4] |= k << (shape.bits as usize * (i % per_word));
    }
    texels
}
