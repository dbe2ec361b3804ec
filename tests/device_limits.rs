//! What the crate needs of a device: `required_limits` raises wgpu's
//! downlevel defaults only where the passes need it and takes the sizes
//! from the adapter; a device made with those limits runs the sampler; a
//! device below them is refused with an error naming the limit.

mod common;

use keyframe_gpu::{
    AnimationLibrary, Animator, Clip, Error, Instance, Interpolation, Property, Track,
};

/// A device of `h`'s adapter with `limits`.
fn device_with(adapter: &wgpu::Adapter, limits: wgpu::Limits) -> (wgpu::Device, wgpu::Queue) {
    pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("device_limits test"),
        required_features: keyframe_gpu::required_features(),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("the adapter offers at least the requested limits")
}

fn library() -> AnimationLibrary {
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 2.0],
        vec![0.0, 0.0, 0.0, 4.0, 8.0, -2.0],
    );
    AnimationLibrary::new(vec![Clip::new("move", vec![track])]).expect("valid library")
}

#[test]
fn required_limits_raise_the_downlevel_defaults_only_where_needed() {
    let down = wgpu::Limits::downlevel_defaults();
    let adapter = wgpu::Limits {
        max_storage_buffer_binding_size: 12_345_678,
        max_buffer_size: 87_654_321,
        max_compute_workgroups_per_dimension: 4_321,
        max_texture_dimension_2d: 1_234,
        ..wgpu::Limits::default()
    };
    let l = keyframe_gpu::required_limits(&adapter);
    // The skin pass binds eight storage buffers (nodes, pose channels,
    // sampler output, instance table, globals, joints, inverse binds, joint
    // matrices); the downlevel defaults allow four.
    assert_eq!(l.max_storage_buffers_per_shader_stage, 8);
    // The clip-blocks plan's uniform heads: block and row tables of 32 KiB
    // each, a compressed library's block heads and frames of 64 KiB each
    // (the sampler binds them in every plan): above the downlevel
    // defaults' 16 KiB, WebGPU's default 64 KiB.
    assert_eq!(l.max_uniform_buffer_binding_size, 64 * 1024);
    assert!(
        l.max_uniform_buffer_binding_size
            <= wgpu::Limits::default().max_uniform_buffer_binding_size
    );
    // Sizes come from the adapter, so that large inputs fit.
    assert_eq!(l.max_storage_buffer_binding_size, 12_345_678);
    assert_eq!(l.max_buffer_size, 87_654_321);
    assert_eq!(l.max_compute_workgroups_per_dimension, 4_321);
    assert_eq!(l.max_texture_dimension_2d, 1_234);
    // Everything else the passes need is within the downlevel defaults.
    let rest = wgpu::Limits {
        max_storage_buffers_per_shader_stage: down.max_storage_buffers_per_shader_stage,
        max_uniform_buffer_binding_size: down.max_uniform_buffer_binding_size,
        max_storage_buffer_binding_size: down.max_storage_buffer_binding_size,
        max_buffer_size: down.max_buffer_size,
        max_compute_workgroups_per_dimension: down.max_compute_workgroups_per_dimension,
        max_texture_dimension_2d: down.max_texture_dimension_2d,
        ..l
    };
    assert_eq!(rest, down);
    assert_eq!(keyframe_gpu::required_features(), wgpu::Features::empty());
}

#[test]
fn a_device_with_the_downlevel_defaults_is_refused_naming_the_limit() {
    let Some(h) = common::gpu("a_device_with_the_downlevel_defaults_is_refused_naming_the_limit")
    else {
        return;
    };
    let (device, queue) = device_with(&h.adapter, wgpu::Limits::downlevel_defaults());
    match Animator::sampler_only(&device, &queue, &library(), 4) {
        Err(Error::DeviceLimit {
            limit_name,
            needed,
            limit,
        }) => {
            assert_eq!(limit_name, "max_storage_buffers_per_shader_stage");
            assert_eq!((needed, limit), (8, 4));
            let message = Error::DeviceLimit {
                limit_name,
                needed,
                limit,
            }
            .to_string();
            assert!(message.contains("required_limits"), "{message}");
        }
        other => panic!("expected Error::DeviceLimit, got {other:?}"),
    }
}

#[test]
fn a_device_with_the_required_limits_samples() {
    let Some(h) = common::gpu("a_device_with_the_required_limits_samples") else {
        return;
    };
    let limits = keyframe_gpu::required_limits(&h.adapter.limits());
    let (device, queue) = device_with(&h.adapter, limits);
    let library = library();
    let mut sampler = Animator::sampler_only(&device, &queue, &library, 4).expect("sampler");
    let out = sampler
        .sample(&device, &queue, &[Instance::new(0, 0.5)])
        .expect("sampled");
    // A quarter of the way from (0, 0, 0) to (4, 8, -2).
    assert_eq!(out, [1.0, 2.0, -0.5]);
}
