//! The choices made for the CPU fallback adapters (lavapipe, llvmpipe),
//! and only for them: each is faster there (the bench's targets hold with
//! them), and none has been measured on a GPU, so a GPU's profile takes
//! none of them. On these adapters a divergent branch
//! costs both of its sides, and a storage access a loop over the SIMD
//! lanes, even at an index every lane shares; a uniform access at such an
//! index is one load.
//!
//! - [`sampler_plan`]: the grouped or the clip-blocks plan;
//! - [`skin_strategy`]: one invocation per instance walking its nodes (a
//!   barrier is expensive where the lanes are few);
//! - [`uniform_heads`]: the small tables (block and row tables, nodes,
//!   pose channels, joints) read from uniform copies;
//! - [`wide_accesses`]: with `SHADER_INT64`, the skin module's matrices
//!   and uniform tables accessed 64 bits a component (a store and a
//!   uniform read cost per instruction, and a 64-bit component moves two
//!   floats).
//!
//! These costs (a storage access a loop over the lanes, a uniform read
//! one gather per component unless its index is built from constants, a
//! texel fetch one load per lane) are why each choice is made; the
//! shaders say what the code does and point here.
//!
//! They also shaped the shaders on every device, where a GPU loses
//! nothing by it: overrides compile out what a dispatch does not need
//! (`HAS_TABLE`, `HAS_DIRECT`, `ENCODINGS`, `UNIFORM_TIMES`,
//! `NODES_IN_HEAD`, `PARENTS_FIRST`: a branch no lane takes still costs
//! its body here, a loop its body once); divisors are override constants
//! (a division by a uniform is one scalar division per lane, x86 having
//! no vector integer division); one block of loads serves every kind of
//! row, and values move as `vec4`s where aligned (`ALIGNED4`); private
//! arrays are indexed by selects, not at run time (read lane by lane);
//! two key searches run in one loop so that their texel misses overlap;
//! a row's block head and values offset come from workgroup-uniform
//! reads. `docs/PERFORMANCE.md` has the figures for these costs and for
//! each choice below against its alternative.

use super::{full_blocks, vec4_library, DeviceProfile, SamplerPlan, SkinStrategy};
use crate::tables::library::LibraryTables;

/// The sampler plan for `library` at `max_instances` instances:
/// [`SamplerPlan::ClipBlocks`] when every track of the library is read
/// and written as vec4s ([`vec4_library`]) or when the sampler's blocks
/// are full ([`full_blocks`]: at least 64 instances per clip), else
/// [`SamplerPlan::Grouped`] (with fewer instances per clip the blocks'
/// idle lanes make the clip-blocks plan slower there).
#[must_use]
pub(crate) fn sampler_plan(
    _profile: &DeviceProfile,
    library: &LibraryTables,
    max_instances: u32,
) -> SamplerPlan {
    if vec4_library(library) || full_blocks(library, max_instances) {
        SamplerPlan::ClipBlocks
    } else {
        SamplerPlan::Grouped
    }
}

/// The skin strategy: [`SkinStrategy::PerInstance`].
#[must_use]
pub(crate) fn skin_strategy(_profile: &DeviceProfile) -> SkinStrategy {
    SkinStrategy::PerInstance
}

/// Whether the small tables are read from their uniform copies (on CPU
/// adapters only; on a GPU a uniform array read at per-lane indices can
/// serialize).
#[must_use]
pub(crate) fn uniform_heads(profile: &DeviceProfile) -> bool {
    profile.cpu_adapter
}

/// Whether the skin module accesses memory 64 bits a component: on CPU
/// adapters with `SHADER_INT64`.
#[must_use]
pub(crate) fn wide_accesses(profile: &DeviceProfile) -> bool {
    profile.cpu_adapter && profile.shader_int64
}
