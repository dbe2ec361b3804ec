//! The skin stage's passes on the device: each [`Pass`] of a plan built
//! into a pipeline and a bind group (its layout from its module's binding
//! table in `src/layout/`, paired by number: `src/gpu/bind.rs`).

use crate::error::Result;
use crate::plan::passes::Pass;
use crate::plan::RigOverrides;

/// A pass ready to record: its pipeline and bind group.
#[derive(Debug)]
pub(super) struct BuiltPass {
    pub pass: Pass,
    pub pipeline: wgpu::ComputePipeline,
    pub bind_group: wgpu::BindGroup,
}

/// Builds `pass`'s bind group layout (from its module's binding table),
/// bind group (from `resources`, the module's `(binding, resource)` pairs,
/// of which it takes those it uses) and pipeline, with `overrides`.
pub(super) fn build(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    pass: Pass,
    resources: &[(u32, wgpu::BindingResource<'_>)],
    overrides: &RigOverrides,
) -> Result<BuiltPass> {
    let bind =
        super::super::bind::layout(device, pass.entry, pass.module.bindings(), pass.bindings)?;
    let resources: Vec<_> = resources
        .iter()
        .filter(|(n, _)| pass.bindings.contains(n))
        .cloned()
        .collect();
    let bind_group =
        super::super::bind::group(device, pass.entry, &bind, pass.bindings, &resources)?;
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(pass.entry),
        bind_group_layouts: &[Some(&bind)],
        immediate_size: 0,
    });
    let constants = overrides.constants_for(pass.module);
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(pass.entry),
        layout: Some(&pipeline_layout),
        module,
        entry_point: Some(pass.entry),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants: &constants,
            ..Default::default()
        },
        cache: None,
    });
    Ok(BuiltPass {
        pass,
        pipeline,
        bind_group,
    })
}
