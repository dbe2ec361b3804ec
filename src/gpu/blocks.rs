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
    /// Per dispatch slot: (first block, block count) in `blocks`.
    ranges: Vec<(u32, u32)>,
}

impl ClipSort {
    /// Vectors for up to `capacity` instances of `clip_count` clips and
    /// `groups` group dispatches.
    pub(crate) fn new(capacity: u32, clip_count: usize, groups: usize) -> Self {
        ClipSort {
            starts: Vec::with_capacity(clip_count + 1),
            sorted: Vec::with_capacity(capacity as usize),
            blocks: Vec::with_capacity(groups * max_blocks(capacity, clip_count) as usize),
            ranges: Vec::with_capacity(groups),
        }
    }

    /// Sorts `resolved` (clips checked in range) by clip, stably, and
    /// writes the blocks of each group in `groups` (the track group of
    /// each dispatch slot): for every clip with instances and rows in
    /// the group, its instances in blocks of at most `WORKGROUP_SIZE`.
    pub(crate) fn sort(&mut self, resolved: &[GpuInstance], clips: &[GpuClip], groups: &[u32]) {
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
        for &g in groups {
            let base = self.blocks.len() as u32;
            let mut begin = 0;
            for (clip, &end) in clips.iter().zip(&self.starts) {
                let (row_first, row_count) = clip.group_rows(g);
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

    /// Dispatch slot `slot`'s (first block, block count).
    pub(crate) fn range(&self, slot: usize) -> (u32, u32) {
        self.ranges.get(slot).copied().unwrap_or((0, 0))
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
        let mut sort = ClipSort::new(100, clips.len(), 2);
        let cap = (sort.sorted.capacity(), sort.blocks.capacity());
        sort.sort(&resolved, &clips, &[0, 2]);
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
        sort.sort(&resolved[..1], &clips, &[0, 2]);
        assert_eq!(sort.blocks(), [b(0, 1, 0, 2)]);
        assert_eq!((sort.range(0), sort.range(1)), ((0, 1), (1, 0)));
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
