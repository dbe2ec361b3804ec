//! The host side of [`SamplerPlan::ClipBlocks`](crate::kinds::SamplerPlan::ClipBlocks):
//! each frame, a counting sort of the resolved instances by clip and the
//! block table its dispatches read.
//!
//! A block is up to [`WORKGROUP_SIZE`] instances of one clip, consecutive
//! in the sorted table, with the rows of one track group of that clip:
//! one workgroup samples a run of up to
//! [`MAX_BLOCK_ROW_RUN`] rows for every
//! instance of a block (each lane its instance's rows one after the
//! other), so the block and each row are read at workgroup-uniform
//! indices. Everything is
//! sized at creation; a frame allocates nothing.

use crate::layout::{GpuClip, GpuInstance, GpuSampleBlock, WORKGROUP_SIZE};

/// One dispatch of the clip-blocks plan, as the sort sees it: the blocks
/// of track group `group` for the clips `clip_begin..clip_end` (every clip,
/// or those of a window of the block heads: `crate::tables::sample::HeadWindow`,
/// whose first row is `head_first`; 0 without).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part {
    /// The track group.
    pub group: u32,
    /// The first clip.
    pub clip_begin: u32,
    /// One past the last clip.
    pub clip_end: u32,
    /// The first row of the block heads' window it binds.
    pub head_first: u32,
}

/// The sort's and the block table's vectors, sized for a capacity.
#[derive(Debug)]
pub(crate) struct ClipSort {
    /// `starts[c]`: clip c's first entry in the sorted table (prefix sums
    /// of the counts), then, while placing, the next free entry.
    starts: Vec<u32>,
    /// Per instance, in clip order: `[index in the instance table, time bits]`.
    pub(crate) sorted: Vec<[u32; 2]>,
    /// Every group's blocks, group after group.
    pub(crate) blocks: Vec<GpuSampleBlock>,
    /// Per dispatch part: (first block, block count) in `blocks`.
    ranges: Vec<(u32, u32)>,
}

impl ClipSort {
    /// Vectors for up to `capacity` instances of `clip_count` clips,
    /// `groups` track groups and `parts` dispatch parts (the groups' parts
    /// partition their clips).
    pub(crate) fn new(capacity: u32, clip_count: usize, groups: usize, parts: usize) -> Self {
        ClipSort {
            starts: Vec::with_capacity(clip_count + 1),
            sorted: Vec::with_capacity(capacity as usize),
            blocks: Vec::with_capacity(groups * max_blocks(capacity, clip_count) as usize),
            ranges: Vec::with_capacity(parts),
        }
    }

    /// Sorts `resolved` (clips checked in range) by clip, stably, and
    /// writes the blocks of each part in `parts` (each dispatch part's
    /// track group and clips): for every clip of the part with instances
    /// and rows in the group, its instances in blocks of at most
    /// `WORKGROUP_SIZE`.
    pub(crate) fn sort(&mut self, resolved: &[GpuInstance], clips: &[GpuClip], parts: &[Part]) {
        self.starts.clear();
        self.starts.resize(clips.len() + 1, 0);
        for r in resolved {
            self.starts[r.clip as usize + 1] += 1;
        }
        for c in 1..self.starts.len() {
            self.starts[c] += self.starts[c - 1];
        }
        self.sorted.clear();
        self.sorted.resize(resolved.len(), [0, 0]);
        // Place, with starts[c] as clip c's cursor: afterwards starts[c]
        // is clip c's end, and clip c's range [end(c - 1), end(c)).
        for (i, r) in resolved.iter().enumerate() {
            let at = &mut self.starts[r.clip as usize];
            self.sorted[*at as usize] = [i as u32, r.time.to_bits()];
            *at += 1;
        }
        self.blocks.clear();
        self.ranges.clear();
        for part in parts {
            let base = self.blocks.len() as u32;
            let first_clip = part.clip_begin as usize;
            let last_clip = (part.clip_end as usize).min(clips.len());
            let ends = self.starts.get(first_clip..last_clip).unwrap_or(&[]);
            let mut begin = match first_clip.checked_sub(1) {
                Some(c) => self.starts.get(c).copied().unwrap_or(0),
                None => 0,
            };
            for (clip, &end) in clips[first_clip.min(last_clip)..last_clip].iter().zip(ends) {
                let (row_first, row_count) = clip.group_rows(part.group);
                if row_count > 0 {
                    let mut first = begin;
                    while first < end {
                        let count = (end - first).min(WORKGROUP_SIZE);
                        self.blocks.push(GpuSampleBlock {
                            first,
                            count,
                            row_first,
                            row_count,
                        });
                        first += count;
                    }
                }
                begin = end;
            }
            self.ranges.push((base, self.blocks.len() as u32 - base));
        }
    }

    /// The sorted instance table of the last [`sort`](Self::sort).
    pub(crate) fn sorted(&self) -> &[[u32; 2]] {
        &self.sorted
    }

    /// Every group's blocks.
    pub(crate) fn blocks(&self) -> &[GpuSampleBlock] {
        &self.blocks
    }

    /// Dispatch part `part`'s (first block, block count).
    pub(crate) fn range(&self, part: usize) -> (u32, u32) {
        self.ranges.get(part).copied().unwrap_or((0, 0))
    }
}

/// The most blocks the clip-blocks plan makes of `capacity` instances of
/// up to `clip_count` clips, per track group: every clip's instances in
/// blocks of at most [`WORKGROUP_SIZE`], the last block of each clip
/// partly filled.
#[must_use]
pub(crate) fn max_blocks(capacity: u32, clip_count: usize) -> u32 {
    let w = u64::from(WORKGROUP_SIZE);
    let clips = (clip_count as u64).min(u64::from(capacity));
    let blocks = (u64::from(capacity) + (w - 1) * clips) / w;
    u32::try_from(blocks).unwrap_or(u32::MAX)
}

/// The most track rows one workgroup of the clip-blocks plan samples
/// (see [`block_row_run`]).
pub(crate) const MAX_BLOCK_ROW_RUN: u32 = 32;

/// How many consecutive track rows of a group one workgroup of the
/// [`ClipBlocks`](crate::kinds::SamplerPlan::ClipBlocks) plan samples, each lane
/// sampling its instance's rows one after the other (the shader's override
/// `ROW_RUN`), for a group of `group_rows` rows in its largest clip: all of
/// them up to [`MAX_BLOCK_ROW_RUN`], so a dispatch has
/// `ceil(group_rows / run)` workgroups per block of instances.
///
/// A lane then reads its sorted entry once per run rather than once per
/// row, and a workgroup does 16 to 32 times the work, which pays for the
/// CPU adapters' per-workgroup cost. The cap keeps some workgroups per
/// block for devices with more cores.
#[must_use]
pub(crate) fn block_row_run(group_rows: u32) -> u32 {
    group_rows.clamp(1, MAX_BLOCK_ROW_RUN)
}
