//! [`DeviceProfile`]: what a device is good at, the only thing a plan asks
//! of it.

/// The device limits a plan sizes its work by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// `max_texture_dimension_2d`: the key textures' rows.
    pub max_texture_dimension_2d: u32,
    /// `max_compute_workgroups_per_dimension`: dispatch grids.
    pub max_compute_workgroups_per_dimension: u32,
    /// `max_storage_buffer_binding_size`.
    pub max_storage_buffer_binding_size: u64,
    /// `max_uniform_buffer_binding_size`.
    pub max_uniform_buffer_binding_size: u64,
    /// `max_buffer_size`.
    pub max_buffer_size: u64,
    /// `min_uniform_buffer_offset_alignment`: the parameter slots' stride.
    pub min_uniform_buffer_offset_alignment: u32,
}

impl Default for DeviceLimits {
    /// wgpu's default limits.
    fn default() -> Self {
        DeviceLimits {
            max_texture_dimension_2d: 8192,
            max_compute_workgroups_per_dimension: 65_535,
            max_storage_buffer_binding_size: 128 << 20,
            max_uniform_buffer_binding_size: 64 << 10,
            max_buffer_size: 256 << 20,
            min_uniform_buffer_offset_alignment: 256,
        }
    }
}

/// What a device is good at: a CPU fallback adapter or a GPU, the
/// optional features the crate uses, and the limits. A plan
/// ([`Plan`](super::Plan)) is built from the bound library, the capacity
/// and a profile, and asks nothing else of the device, so a plan can be
/// built, printed and tested without one ([`DeviceProfile::gpu`], with
/// `cpu_adapter`, `shader_int64` and `timestamps` set as a device has them),
/// and a GPU's plan run on a CPU adapter.
/// `DeviceProfile::of(&device)` (in `gpu`) reads a real one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceProfile {
    /// A CPU fallback adapter (lavapipe, llvmpipe: `DeviceType::Cpu`),
    /// where a divergent branch costs both sides and a storage access a
    /// loop over the SIMD lanes. The tricks for those adapters
    /// (`cpu_adapter`) apply only here.
    pub cpu_adapter: bool,
    /// `SHADER_INT64` is on.
    pub shader_int64: bool,
    /// `TIMESTAMP_QUERY` is on.
    pub timestamps: bool,
    /// The limits.
    pub limits: DeviceLimits,
}

impl DeviceProfile {
    /// A CPU fallback adapter with wgpu's default limits and
    /// `SHADER_INT64` (lavapipe's profile).
    #[cfg(test)]
    #[must_use]
    pub(crate) fn cpu_adapter() -> Self {
        DeviceProfile {
            cpu_adapter: true,
            shader_int64: true,
            timestamps: true,
            limits: DeviceLimits::default(),
        }
    }

    /// A GPU with wgpu's default limits and no optional feature.
    #[must_use]
    pub fn gpu() -> Self {
        DeviceProfile {
            cpu_adapter: false,
            shader_int64: false,
            timestamps: false,
            limits: DeviceLimits::default(),
        }
    }
}

impl std::fmt::Display for DeviceProfile {
    /// `"cpu adapter"` or `"gpu"`, with the features it has.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.cpu_adapter {
            "cpu adapter"
        } else {
            "gpu"
        })?;
        if self.shader_int64 {
            f.write_str(", SHADER_INT64")?;
        }
        if self.timestamps {
            f.write_str(", TIMESTAMP_QUERY")?;
        }
        Ok(())
    }
}
