//! Unit tests of `src/tables/blocks.rs`.

use crate::layout::GpuClip;
use crate::layout::GpuInstance;
use crate::layout::GpuSampleBlock;
use crate::layout::SAMPLE_GROUPS;
use crate::layout::WORKGROUP_SIZE;
use crate::tables::blocks::*;
use crate::tests::twins::whole_part;

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
    let parts = [whole_part(0), whole_part(2)];
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
