//! What runs where: the one place where the crate chooses how its work is
//! laid out on a device. Every choice here changes speed only, never a
//! result: each plan is tested against the same CPU twin.
//!
//! The sampler has two plans. [`SamplerPlan::Reference`] is the plain
//! one, and what a reader should read first: one dispatch samples every
//! track of every instance (`GROUP_ALL`), and the key search is a binary
//! search over the track's key times. [`SamplerPlan::CpuAdapter`] is tuned
//! for the CPU fallback adapters (lavapipe, llvmpipe), where a divergent
//! branch costs both sides and a storage read costs a loop over the SIMD
//! lanes: one dispatch per track group, each compiled without the other
//! groups' code, and a key search that starts from a lookup table or from
//! the direct index of uniformly spaced keys. The README's performance
//! section has the measurements behind it. A real GPU runs the reference
//! plan until a measurement on one says otherwise.
//!
//! The skin pass's strategy ([`SkinStrategy`](crate::gpu::skin::SkinStrategy))
//! is chosen the same way, by `SkinStrategy::Auto`.

/// How [`GpuSampler`](crate::GpuSampler) lays out its dispatches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SamplerPlan {
    /// [`CpuAdapter`](Self::CpuAdapter) on CPU adapters,
    /// [`Reference`](Self::Reference) on every other device.
    #[default]
    Auto,
    /// One dispatch over every track of every instance, with every
    /// interpolation compiled in, and a binary search over the key times.
    Reference,
    /// One dispatch per track group (LINEAR rotations, other LINEAR
    /// tracks, STEP, CUBICSPLINE rotations, other CUBICSPLINE), each
    /// compiled without the other groups' code; the key search starts from
    /// the library's key lookup tables and direct indices (falling back to
    /// the binary search when a guess does not hold).
    CpuAdapter,
    /// The track groups and key search of [`CpuAdapter`](Self::CpuAdapter),
    /// with the instances sorted by clip on the host each frame (a
    /// counting sort) and one workgroup per block of up to 64 instances of
    /// one clip and one track row: the block and the row are read at
    /// workgroup-uniform indices, from uniform buffers, and each lane
    /// reads only its instance's time, the key search's texels and its
    /// values. Outputs stay where the instance table puts them.
    ClipBlocks,
}

impl SamplerPlan {
    /// The plan [`Auto`](Self::Auto) picks on an adapter of this kind.
    #[must_use]
    pub fn for_adapter(info: &wgpu::AdapterInfo) -> SamplerPlan {
        if info.device_type == wgpu::DeviceType::Cpu {
            SamplerPlan::CpuAdapter
        } else {
            SamplerPlan::Reference
        }
    }

    /// This plan, with [`Auto`](Self::Auto) resolved for `info`.
    #[must_use]
    pub fn resolve(self, info: &wgpu::AdapterInfo) -> SamplerPlan {
        match self {
            SamplerPlan::Auto => SamplerPlan::for_adapter(info),
            chosen => chosen,
        }
    }
}
