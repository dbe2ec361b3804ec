//! Bind group layouts and bind groups built from a shader's binding table
//! ([`Binding`]: number, WGSL name, access, minimum size) and resources
//! given with their binding number: entries are paired by number, never by
//! position, so adding or reordering a binding cannot shift another's
//! resource. `src/tests/layout.rs` checks each table against the WGSL.

use std::num::NonZeroU64;

use crate::error::{Error, Result};
use crate::layout::{Binding, BindingKind};

/// The table entry with binding number `n`.
fn find(table: &[Binding], n: u32, during: &'static str) -> Result<Binding> {
    table
        .iter()
        .find(|b| b.binding == n)
        .copied()
        .ok_or_else(|| Error::Gpu {
            during,
            message: format!("binding {n} is not in the shader's binding table"),
        })
}

/// The layout entry of `b`, visible to compute shaders.
#[must_use]
pub(crate) fn layout_entry(b: &Binding) -> wgpu::BindGroupLayoutEntry {
    let buffer = |ty| wgpu::BindingType::Buffer {
        ty,
        has_dynamic_offset: false,
        min_binding_size: NonZeroU64::new(b.min_size),
    };
    let texture = |sample_type| wgpu::BindingType::Texture {
        sample_type,
        view_dimension: wgpu::TextureViewDimension::D2,
        multisampled: false,
    };
    let ty = match b.kind {
        BindingKind::Uniform => buffer(wgpu::BufferBindingType::Uniform),
        BindingKind::StorageRead => buffer(wgpu::BufferBindingType::Storage { read_only: true }),
        BindingKind::StorageReadWrite => {
            buffer(wgpu::BufferBindingType::Storage { read_only: false })
        }
        BindingKind::TextureFloat => texture(wgpu::TextureSampleType::Float { filterable: false }),
        BindingKind::TextureUint => texture(wgpu::TextureSampleType::Uint),
    };
    wgpu::BindGroupLayoutEntry {
        binding: b.binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty,
        count: None,
    }
}

/// The bind group layout holding the bindings numbered `uses` of `table`.
///
/// # Errors
/// [`Error::Gpu`] when a number is not in the table (a bug of the crate,
/// reported rather than panicking).
pub(crate) fn layout(
    device: &wgpu::Device,
    label: &'static str,
    table: &[Binding],
    uses: &[u32],
) -> Result<wgpu::BindGroupLayout> {
    let entries = uses
        .iter()
        .map(|&n| find(table, n, label).map(|b| layout_entry(&b)))
        .collect::<Result<Vec<_>>>()?;
    Ok(
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some(label),
            entries: &entries,
        }),
    )
}

/// A bind group for `layout` (made by [`layout`] from `table` and `uses`)
/// from `(binding number, resource)` pairs.
///
/// # Errors
/// [`Error::Gpu`] when a pair names a number outside `uses`, a number is
/// given twice, or one of `uses` has no resource.
pub(crate) fn group(
    device: &wgpu::Device,
    label: &'static str,
    layout: &wgpu::BindGroupLayout,
    uses: &[u32],
    resources: &[(u32, wgpu::BindingResource<'_>)],
) -> Result<wgpu::BindGroup> {
    let problem = |message: String| Error::Gpu {
        during: label,
        message,
    };
    for (i, (n, _)) in resources.iter().enumerate() {
        if !uses.contains(n) {
            return Err(problem(format!("binding {n} is not used by this pass")));
        }
        if resources[..i].iter().any(|(m, _)| m == n) {
            return Err(problem(format!("binding {n} is given twice")));
        }
    }
    if let Some(missing) = uses
        .iter()
        .find(|n| !resources.iter().any(|(m, _)| m == *n))
    {
        return Err(problem(format!("binding {missing} has no resource")));
    }
    let entries: Vec<_> = resources
        .iter()
        .map(|(n, r)| wgpu::BindGroupEntry {
            binding: *n,
            resource: r.clone(),
        })
        .collect();
    Ok(device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    }))
}
