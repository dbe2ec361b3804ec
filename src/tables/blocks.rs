//! The host side of [`SamplerPlan::ClipBlocks`](crate::SamplerPlan::ClipBlocks):
//! each frame, a counting sort of the resolved instances by clip and the
//! block table its dispatches read.
//!
//! A block is up to [`WORKGROUP_SIZE`] instances of one clip, consecutive
//! in the sorted table, with the rows of one track group of that clip:
//! one workgroup samples a run of up to
//! [`MAX_BLOCK_ROW_RUN`](crate::plan::MAX_BLOCK_ROW_RUN) rows for every
//! instance of a block (each lane its instance's rows one after the
//! other), so the block and each row are read at workgroup-uniform
//! indices. Everything is
//! sized at creation; a frame allocates nothing.

use crate::layout::{GpuClip, GpuInstance, GpuSampleBlock, WORKGROUP_SIZE};
pub(crate) use crate::plan::max_blocks;

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

impl Part {
    /// Group `group` over every clip, without a window.
    #[cfg(test)]
    pub(crate) fn whole(group: u32) -> Part {
        Part {
            group,
            clip_begin: 0,
            clip_end: u32::MAX,
            head_first: 0,
        }
    }
}

/// The sort's and the block table's vectors, sized for a capacity.
#[derive(Debug)]
pub(crate) struct ClipSort {
    /// `starts[c]`: clip c's first entry in the sorted table (prefix sums
    /// of the counts), then, while placing, the next free entry.
    starts: Vec<u32>,
    /// Per instance, in clip order: `[index in the instance table, time bits]`.
    sorted: Vec<[u32; 2]>,
    /// Every group's blocks, group after group.
    blocks: Vec<GpuSampleBlock>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::SAMPLE_GROUPS;

    fn clip(first: [u32; SAMPLE_GROUPS], count: [u32; SAMPLE_GROUPS]) -> GpuClip {
        GpuClip {
            track_offset: first[0],
            track_count: count.iter().sum(),
            output_width: 0,
            duration: 1.0,
            group_first: first,
            group_count: count,
        }
    }

    fn inst(clip: u32, time: f32) -> GpuInstance {
        GpuInstance {
            clip,
            time,
            _pad0: 0,
            _pad1: 0,
        }
    }

    #[test]
    fn sorts_stably_by_clip_and_cuts_blocks_per_group() {
        // Clip 0: 2 slerp rows; clip 1: 1 slerp row, 3 blend rows; clip 2:
        // 4 blend rows, no instance.
        let clips = [
            clip([0, 2, 2, 2, 2], [2, 0, 0, 0, 0]),
            clip([2, 3, 3, 6, 6], [1, 0, 3, 0, 0]),
            clip([6, 6, 6, 10, 10], [0, 0, 4, 0, 0]),
        ];
        // 70 instances of clip 1 and 3 of clip 0, interleaved.
        let mut resolved = Vec::new();
        for i in 0..73u32 {
            let c = u32::from(i % 20 != 0);
            resolved.push(inst(c, i as f32));
        }
        let mut sort = ClipSort::new(100, clips.len(), 2, 2);
        let cap = (sort.sorted.capacity(), sort.blocks.capacity());
        let parts = [Part::whole(0), Part::whole(2)];
        sort.sort(&resolved, &clips, &parts);
        assert_eq!((sort.sorted.capacity(), sort.blocks.capacity()), cap);
        let sorted = sort.sorted();
        assert_eq!(sorted.len(), 73);
        // Clip 0 first (instances 0, 20, 40, 60), then clip 1 in order.
        let order: Vec<u32> = sorted.iter().map(|e| e[0]).collect();
        let mut want: Vec<u32> = (0..73).filter(|i| i % 20 == 0).collect();
        want.extend((0..73).filter(|i| i % 20 != 0));
        assert_eq!(order, want);
        for e in sorted {
            assert_eq!(f32::from_bits(e[1]), e[0] as f32);
        }
        let b = |first, count, row_first, row_count| GpuSampleBlock {
            first,
            count,
            row_first,
            row_count,
        };
        // Group 0 (slerp): clip 0's 4, clip 1's 64 + 5; group 2 (blend):
        // clip 1's only (clip 0 has no blend rows, clip 2 no instances).
        assert_eq!(
            sort.blocks(),
            [
                b(0, 4, 0, 2),
                b(4, 64, 2, 1),
                b(68, 5, 2, 1),
                b(4, 64, 3, 3),
                b(68, 5, 3, 3),
            ]
        );
        assert_eq!((sort.range(0), sort.range(1)), ((0, 3), (3, 2)));
        // A second frame reuses the vectors.
        sort.sort(&resolved[..1], &clips, &parts);
        assert_eq!(sort.blocks(), [b(0, 1, 0, 2)]);
        assert_eq!((sort.range(0), sort.range(1)), ((0, 1), (1, 0)));
    }

    #[test]
    fn parts_cut_a_group_by_clip() {
        // Three clips of 2 slerp rows each, 70 instances of clip 1 and one
        // of each other; group 0 in two parts: clip 0, then clips 1 and 2.
        let clips = [
            clip([0, 2, 2, 2, 2], [2, 0, 0, 0, 0]),
            clip([2, 4, 4, 4, 4], [2, 0, 0, 0, 0]),
            clip([4, 6, 6, 6, 6], [2, 0, 0, 0, 0]),
        ];
        let mut resolved = vec![inst(2, 0.0), inst(0, 0.0)];
        resolved.extend((0..70).map(|i| inst(1, i as f32)));
        let part = |clip_begin, clip_end| Part {
            group: 0,
            clip_begin,
            clip_end,
            head_first: 0,
        };
        let parts = [part(0, 1), part(1, 3)];
        let mut sort = ClipSort::new(100, clips.len(), 1, 2);
        sort.sort(&resolved, &clips, &parts);
        let b = |first, count, row_first| GpuSampleBlock {
            first,
            count,
            row_first,
            row_count: 2,
        };
        assert_eq!(
            sort.blocks(),
            [b(0, 1, 0), b(1, 64, 2), b(65, 6, 2), b(71, 1, 4)]
        );
        assert_eq!((sort.range(0), sort.range(1)), ((0, 1), (1, 3)));
        // Parts past the clips are empty.
        sort.sort(&resolved, &clips, &[part(3, 5)]);
        assert_eq!((sort.blocks(), sort.range(0)), (&[][..], (0, 0)));
    }

    #[test]
    fn max_blocks_bounds_every_split() {
        assert_eq!(max_blocks(0, 5), 0);
        assert_eq!(max_blocks(1, 5), 1);
        assert_eq!(max_blocks(200, 1), 4);
        // The worst splits of n instances over c clips fit the bound.
        for n in 0..300u32 {
            for c in 1..6usize {
                let bound = max_blocks(n, c);
                let mut worst = 0;
                // k clips of one instance each (or 65 where that fits),
                // the rest on the last clip.
                for ones in [1u32, 65] {
                    let k = (c as u32 - 1).min(n / ones);
                    let rest = n - k * ones;
                    let blocks = k * ones.div_ceil(WORKGROUP_SIZE) + rest.div_ceil(WORKGROUP_SIZE);
                    worst = worst.max(blocks);
                }
                assert!(worst <= bound, "n {n} c {c}: {worst} > {bound}");
            }
        }
    }
}
