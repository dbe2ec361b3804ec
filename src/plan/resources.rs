//! What a plan's dispatches read and write, declared: every buffer and
//! texture ([`Resource`]: its name, its size as a function of the
//! capacity, its usages, and where its contents come from: uploaded once
//! from a table the plan names, written by the host each frame from a
//! source it names, or written by the passes), and each dispatch's
//! bindings by name ([`Bind`]: a binding number paired with a resource).
//! The GPU executor (`src/gpu/exec.rs`) makes exactly these and binds them
//! as listed; the CPU executor (`src/cpu/exec.rs`) holds the same
//! resources in memory; the capacity check (`capacity.rs`) sizes the
//! same list, so the three cannot disagree.

use crate::error::{Error, Result};
use crate::layout::{BindingKind, WORKGROUP_SIZE};
use crate::tables::blocks::{max_blocks, Part as BlockPart};

/// A resource's index in [`Resources`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ResourceId(pub(crate) usize);

/// The tables a plan uploads once, each derived from its library's or
/// its rig's tables (`Plan::table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Table {
    /// The key search texels, then the clip-blocks plan's run keys.
    KeyWindows,
    /// Two search texels per track row.
    TrackSearch,
    /// Each clip's track groups.
    ClipGroups,
    /// The key values (a compressed library's packed words), whole
    /// vec4s and one of zeros after them.
    Values,
    /// The clip table.
    Clips,
    /// The clip-blocks plan's row table, at least its uniform head.
    SampleRows,
    /// The uniform copies of a compressed library's block heads.
    DecodeHeads,
    /// The rig's node table.
    Nodes,
    /// The pose channel table.
    Channels,
    /// The mesh table.
    Meshes,
    /// The meshes' default morph weights.
    DefaultWeights,
    /// The morph channel table.
    MorphChannels,
    /// The joint table.
    Joints,
    /// The inverse bind matrices.
    InverseBinds,
    /// A uniform copy of the first `UNIFORM_HEAD` entries of a table.
    Head(HeadOf),
    /// The mixer's masks, mask after mask.
    Masks,
    /// The mixer's pointer channels.
    PointerChannels,
    /// The mixer's pointer targets.
    PointerTargets,
    /// The mixer's pointer rest values.
    PointerRest,
    /// One identity matrix: the global matrices' last rows.
    Identity,
    /// Per joint slot, the identity with its inverse bind's last row.
    JointLastRows,
}

/// The tables with a uniform copy of their head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadOf {
    /// [`Table::Nodes`].
    Nodes,
    /// [`Table::Channels`].
    Channels,
    /// [`Table::Joints`].
    Joints,
    /// [`Table::InverseBinds`].
    InverseBinds,
}

impl Table {
    /// Whether the table is the library's (under the sampler plan), which
    /// executors of the same library and sampler plan share; the rig's and
    /// the mixer's are each executor's own.
    #[must_use]
    pub(crate) fn is_library(self) -> bool {
        matches!(
            self,
            Table::KeyWindows
                | Table::TrackSearch
                | Table::ClipGroups
                | Table::Values
                | Table::Clips
                | Table::SampleRows
                | Table::DecodeHeads
        )
    }
}

/// What the host writes each frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameSource {
    /// The resolved instance table (a row per instance or action slot).
    Instances,
    /// Each sampler dispatch's parameters, a slot each.
    SampleParams,
    /// The clip-blocks plan's instances sorted by clip.
    SortedInstances,
    /// The clip-blocks plan's block table.
    Blocks,
    /// Each clip-blocks dispatch's parameters, a slot each.
    BlockParams,
    /// The rig passes' parameters.
    SkinParams,
    /// The mixer's action records.
    MixActions,
    /// The mixer's character ranges.
    MixCharacters,
}

/// Where a resource's contents come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// Uploaded once, from the table named.
    Table(Table),
    /// Written by the host each frame, from the source named.
    Frame(FrameSource),
    /// Written by the passes. `init`: a table repeated over the whole
    /// resource when it is made (zeros without); `host_writes`: the host
    /// (or a pass of the caller's) may write it too.
    Pass {
        /// The table it starts as, repeated.
        init: Option<Table>,
        /// Whether it takes writes from the host.
        host_writes: bool,
    },
}

/// What a size counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// A fixed number.
    Fixed(u64),
    /// The sampler's rows (instances, or two per action slot).
    Rows,
    /// The instances, or a mixer's characters.
    Characters,
    /// The clip-blocks plan's block entries (every group's most blocks).
    BlockEntries,
}

/// A buffer's size: `count * per` bytes, at least `min`, rounded up to a
/// multiple of `align`, plus `tail`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Size {
    /// What it counts.
    pub(crate) count: Count,
    /// Bytes per element.
    pub(crate) per: u64,
    /// The fewest bytes (a binding is never empty).
    pub(crate) min: u64,
    /// The multiple it is rounded up to.
    pub(crate) align: u64,
    /// Bytes after that.
    pub(crate) tail: u64,
}

impl Size {
    /// `count` elements of `per` bytes, at least `min`.
    #[must_use]
    pub(crate) const fn of(count: Count, per: u64, min: u64) -> Size {
        Size {
            count,
            per,
            min,
            align: 4,
            tail: 0,
        }
    }

    /// `bytes` bytes (at least 4).
    #[must_use]
    pub(crate) const fn bytes(bytes: u64) -> Size {
        Size::of(Count::Fixed(bytes), 1, 4)
    }

    /// The bytes for `counts`.
    #[must_use]
    pub(crate) fn at(&self, counts: &Counts) -> u64 {
        let n = match self.count {
            Count::Fixed(n) => n,
            Count::Rows => u64::from(counts.rows),
            Count::Characters => u64::from(counts.characters),
            Count::BlockEntries => counts.block_entries,
        };
        let bytes = n.saturating_mul(self.per).max(self.min);
        bytes
            .div_ceil(self.align.max(1))
            .saturating_mul(self.align.max(1))
            + self.tail
    }
}

/// The counts a plan's sizes and grids follow, at a capacity (or in a
/// frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Counts {
    /// Sampler rows.
    pub(crate) rows: u32,
    /// Instances or characters.
    pub(crate) characters: u32,
    /// The clip-blocks plan's block entries.
    pub(crate) block_entries: u64,
}

/// What a resource is on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A buffer of this size.
    Buffer(Size),
    /// A 2D texture of `texels` texels of `words` 32-bit words each
    /// (`Rgba32Uint` or `Rg32Uint`), `2^row_shift` texels a row.
    Texture {
        /// Words per texel: 4 or 2.
        words: u32,
        /// Texels of data (the last row padded with zeros).
        texels: u64,
        /// log2 of the row width.
        row_shift: u32,
    },
}

/// How a resource is bound and copied: a buffer's usages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Usage {
    /// Bound as a storage buffer.
    pub(crate) storage: bool,
    /// Bound as a uniform buffer (whole, or a window).
    pub(crate) uniform: bool,
    /// Copied from (read back).
    pub(crate) copy_src: bool,
    /// Written by the host.
    pub(crate) copy_dst: bool,
}

/// One buffer or texture of a plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Resource {
    /// Its name: what the plan prints, the executors label it, and a
    /// limit error names.
    pub(crate) name: &'static str,
    /// Where its contents come from.
    pub(crate) source: Source,
    /// A buffer and its size, or a texture.
    pub(crate) shape: Shape,
    /// How it is bound and copied (from the bindings that name it).
    pub(crate) usage: Usage,
}

impl Resource {
    /// A buffer named `name` of `size` with contents from `source`.
    #[must_use]
    pub(crate) const fn buffer(name: &'static str, source: Source, size: Size) -> Resource {
        Resource {
            name,
            source,
            shape: Shape::Buffer(size),
            usage: Usage {
                storage: false,
                uniform: false,
                // The tables the GPU playback pass writes in the host's
                // place are read back too (by its tests).
                copy_src: matches!(
                    source,
                    Source::Pass { .. }
                        | Source::Frame(
                            FrameSource::Instances
                                | FrameSource::MixActions
                                | FrameSource::MixCharacters
                        )
                ),
                copy_dst: matches!(
                    source,
                    Source::Frame(_)
                        | Source::Pass {
                            host_writes: true,
                            ..
                        }
                ),
            },
        }
    }

    /// The buffer's size, or `None` for a texture.
    #[must_use]
    pub(crate) fn size(&self) -> Option<Size> {
        match self.shape {
            Shape::Buffer(s) => Some(s),
            Shape::Texture { .. } => None,
        }
    }
}

/// A byte window of a buffer a binding takes (the whole buffer without).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window {
    /// Its first byte.
    pub(crate) offset: u64,
    /// Its bytes.
    pub(crate) size: u64,
}

/// One binding of a dispatch: its number, by name a resource of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bind {
    /// The binding number (`@binding(n)`).
    pub(crate) binding: u32,
    /// The WGSL name of the binding.
    pub(crate) name: &'static str,
    /// The resource it binds.
    pub(crate) resource: ResourceId,
    /// The window it binds, or the whole resource.
    pub(crate) window: Option<Window>,
}

/// How many workgroups a dispatch part runs in a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Grid {
    /// `per` invocations per sampler row or per character
    /// (`count`), in workgroups of `workgroup`: a row of up to
    /// `max_compute_workgroups_per_dimension` workgroups, then more rows.
    Invocations {
        /// Rows or characters.
        count: Count,
        /// Invocations per row or character.
        per: u32,
        /// Invocations per workgroup.
        workgroup: u32,
        /// What a limit error calls the dispatch.
        what: &'static str,
    },
    /// The clip-blocks plan: `runs` workgroups per block of `part` in the
    /// frame's clip sort.
    Blocks {
        /// The group and clips whose blocks it runs.
        part: BlockPart,
        /// Workgroups per block (runs of its group's rows).
        runs: u32,
    },
}

impl Grid {
    /// The most workgroups (`Blocks`) or invocations (`Invocations`) at
    /// `counts`, what a limit error calls the dispatch, and the most the
    /// device's workgroup limit `max_dim` allows.
    #[must_use]
    pub(crate) fn needed(
        &self,
        counts: &Counts,
        clip_count: usize,
        max_dim: u32,
    ) -> (u64, &'static str, u64) {
        let dims = u64::from(max_dim) * u64::from(max_dim);
        match *self {
            Grid::Invocations {
                count,
                per,
                workgroup,
                what,
            } => {
                let n = match count {
                    Count::Rows => counts.rows,
                    _ => counts.characters,
                };
                (
                    u64::from(n) * u64::from(per),
                    what,
                    dims * u64::from(workgroup),
                )
            }
            Grid::Blocks { runs, .. } => (
                u64::from(max_blocks(counts.rows, clip_count)) * u64::from(runs),
                "clip-blocks dispatch (blocks x row runs per block)",
                dims,
            ),
        }
    }
}

/// The invocations per workgroup of the sampler's per-row dispatches.
pub(crate) const SAMPLE_WORKGROUP: u32 = WORKGROUP_SIZE;

/// A plan's resources, in the order they were first bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Resources {
    list: Vec<Resource>,
}

impl Resources {
    /// The resource named like `r`, added where it is not yet, with the
    /// usage binding kind `kind` needs.
    pub(crate) fn bind(&mut self, r: Resource, kind: BindingKind) -> Result<ResourceId> {
        let at = match self.list.iter().position(|x| x.name == r.name) {
            Some(at) if self.list[at].source != r.source || self.list[at].shape != r.shape => {
                return Err(Error::Gpu {
                    during: "Plan",
                    message: format!("resource {} declared twice, differently", r.name),
                });
            }
            Some(at) => at,
            None => {
                self.list.push(r);
                self.list.len() - 1
            }
        };
        let usage = &mut self.list[at].usage;
        match kind {
            BindingKind::StorageRead | BindingKind::StorageReadWrite => usage.storage = true,
            BindingKind::Uniform => usage.uniform = true,
            BindingKind::TextureFloat | BindingKind::TextureUint => {}
        }
        Ok(ResourceId(at))
    }

    /// Every resource, by id.
    #[must_use]
    pub(crate) fn all(&self) -> &[Resource] {
        &self.list
    }

    /// The resource named `name`.
    #[must_use]
    pub(crate) fn find(&self, name: &str) -> Option<ResourceId> {
        self.list
            .iter()
            .position(|r| r.name == name)
            .map(ResourceId)
    }
}
