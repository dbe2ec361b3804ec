//! What the crate needs of a device: [`required_limits`] and
//! [`required_features`] to pass to `wgpu::Adapter::request_device`, and
//! the check every constructor makes before building a pipeline, so that a
//! device that falls short is refused with [`Error::LimitExceeded`] naming
//! the limit, not with a wgpu validation message.

use crate::error::{Error, Result};
use crate::layout::{
    Binding, BindingKind, MAX_PARALLEL_NODES, SKIN_WORKGROUP_SIZE, WORKGROUP_SIZE,
};
use crate::plan::passes::STAGE_TABLE;

/// Bindings of `table` numbered in `uses` and of the kinds `kinds`.
fn count(table: &[Binding], uses: &[u32], kinds: &[BindingKind]) -> u32 {
    table
        .iter()
        .filter(|b| uses.contains(&b.binding) && kinds.contains(&b.kind))
        .count() as u32
}

const STORAGE: [BindingKind; 2] = [BindingKind::StorageRead, BindingKind::StorageReadWrite];
const UNIFORM: [BindingKind; 1] = [BindingKind::Uniform];
const TEXTURES: [BindingKind; 2] = [BindingKind::TextureFloat, BindingKind::TextureUint];

/// Workgroup memory of the per-node skin kernel: a matrix and a parent
/// index per node.
const PER_NODE_WORKGROUP_BYTES: u32 = MAX_PARALLEL_NODES * (64 + 4);

/// One limit the crate's passes need: its name in `wgpu::Limits`, the
/// least value, and how to read and raise it.
struct Need {
    name: &'static str,
    needed: u32,
    get: fn(&wgpu::Limits) -> u64,
    raise: fn(&mut wgpu::Limits, u32),
}

/// The [`Need`] of the `wgpu::Limits` field `$field`: `$needed` of it.
macro_rules! need {
    ($field:ident, $needed:expr) => {
        Need {
            name: stringify!($field),
            needed: $needed,
            get: |l| l.$field.into(),
            raise: |l, v| l.$field = l.$field.max(v.into()),
        }
    };
}

/// Every limit the passes need more of than nothing, derived from the
/// binding tables (the most bindings of a kind in any one pipeline), the
/// kernels' workgroup size and the skin pass's uniform heads and
/// workgroup memory.
fn needs() -> [Need; 7] {
    // Every pipeline's bindings (the stage table's passes).
    let passes: Vec<(&[Binding], &[u32])> = STAGE_TABLE
        .iter()
        .map(|p| (p.module.bindings(), p.bindings))
        .collect();
    let most = |kinds: &[BindingKind]| {
        passes
            .iter()
            .map(|(table, uses)| count(table, uses, kinds))
            .max()
            .unwrap_or(0)
    };
    let workgroup = WORKGROUP_SIZE.max(SKIN_WORKGROUP_SIZE);
    // The largest uniform binding of any pass (the uniform heads).
    let uniform_size = passes
        .iter()
        .flat_map(|(table, uses)| {
            table
                .iter()
                .filter(|b| uses.contains(&b.binding) && b.kind == BindingKind::Uniform)
        })
        .map(|b| b.min_size as u32)
        .max()
        .unwrap_or(0);
    [
        need!(max_storage_buffers_per_shader_stage, most(&STORAGE)),
        need!(max_uniform_buffers_per_shader_stage, most(&UNIFORM)),
        need!(max_sampled_textures_per_shader_stage, most(&TEXTURES)),
        need!(max_uniform_buffer_binding_size, uniform_size),
        need!(max_compute_workgroup_size_x, workgroup),
        need!(max_compute_invocations_per_workgroup, workgroup),
        need!(max_compute_workgroup_storage_size, PER_NODE_WORKGROUP_BYTES),
    ]
}

/// The limits to request a device with for this crate, given the
/// adapter's (`adapter.limits()`): wgpu's downlevel defaults (which every
/// adapter wgpu supports meets, WebGL2 aside), raised to what the crate's
/// passes need (eight storage buffers in one stage, five uniform buffers,
/// 64-lane workgroups, the per-node skin kernel's workgroup memory), with
/// the size limits taken from the adapter so that large libraries and
/// crowds fit (buffer and binding sizes, workgroups per dimension, 2D
/// texture size).
///
/// ```no_run
/// # async fn f(adapter: wgpu::Adapter) -> Result<(), wgpu::RequestDeviceError> {
/// let (device, queue) = adapter
///     .request_device(&wgpu::DeviceDescriptor {
///         required_features: keyframe_gpu::required_features(),
///         required_limits: keyframe_gpu::required_limits(&adapter.limits()),
///         ..Default::default()
///     })
///     .await?;
/// # Ok(()) }
/// ```
///
/// A device whose limits are lower is refused by the constructors with
/// [`Error::DeviceLimit`] naming the limit.
#[must_use]
pub fn required_limits(adapter: &wgpu::Limits) -> wgpu::Limits {
    let mut l = wgpu::Limits::downlevel_defaults();
    for need in needs() {
        (need.raise)(&mut l, need.needed);
    }
    l.max_storage_buffer_binding_size = adapter.max_storage_buffer_binding_size;
    l.max_buffer_size = adapter.max_buffer_size;
    l.max_compute_workgroups_per_dimension = adapter.max_compute_workgroups_per_dimension;
    l.max_texture_dimension_2d = adapter.max_texture_dimension_2d;
    l
}

/// The device features the crate needs: none. (Timestamp queries are used
/// by the bench where the adapter has them, never by the library.)
#[must_use]
pub fn required_features() -> wgpu::Features {
    wgpu::Features::empty()
}

/// Device features the crate uses when the device has them, and does
/// without otherwise: request `adapter.features() & optional_features()`
/// along with [`required_features`] (the repository's examples and tests
/// do, in `examples/common/headless.rs`).
///
/// - `SHADER_INT64`: on CPU adapters, the skin stage
///   writes its matrices two columns per 64-bit store and reads its
///   node and inverse-bind tables 64 bits a component
///   (`GpuSkinner::wide_accesses`):
///   the same bytes, fewer store instructions and gathers, which is what
///   memory costs on those adapters.
#[must_use]
pub fn optional_features() -> wgpu::Features {
    wgpu::Features::SHADER_INT64
}

/// Refuses a device whose limits fall short of what the passes need
/// ([`required_limits`]).
///
/// # Errors
/// [`Error::DeviceLimit`] naming the first limit that is too low.
pub(crate) fn check_device(device: &wgpu::Device) -> Result<()> {
    let limits = device.limits();
    for need in needs() {
        let limit = (need.get)(&limits);
        if limit < u64::from(need.needed) {
            return Err(Error::DeviceLimit {
                limit_name: need.name,
                needed: u64::from(need.needed),
                limit,
            });
        }
    }
    Ok(())
}

impl crate::plan::DeviceProfile {
    /// The profile of `device`: a CPU fallback adapter or a GPU (its
    /// adapter's device type), `SHADER_INT64` and `TIMESTAMP_QUERY` where
    /// they are on, and its limits.
    #[must_use]
    pub fn of(device: &wgpu::Device) -> Self {
        let limits = device.limits();
        let features = device.features();
        crate::plan::DeviceProfile {
            cpu_adapter: device.adapter_info().device_type == wgpu::DeviceType::Cpu,
            shader_int64: features.contains(wgpu::Features::SHADER_INT64),
            timestamps: features.contains(wgpu::Features::TIMESTAMP_QUERY),
            limits: crate::plan::DeviceLimits {
                max_texture_dimension_2d: limits.max_texture_dimension_2d,
                max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
                max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
                max_uniform_buffer_binding_size: limits.max_uniform_buffer_binding_size,
                max_buffer_size: limits.max_buffer_size,
                min_uniform_buffer_offset_alignment: limits.min_uniform_buffer_offset_alignment,
            },
        }
    }
}
