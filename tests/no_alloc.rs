//! Steady-state allocation checks for the per-frame path.
//!
//! A counting global allocator counts the heap allocations made by the
//! calling thread (a thread-local counter, so that other tests and wgpu's
//! own threads do not disturb it).
//!
//! What this proves, exactly:
//! - `resolve_instances_into` (the host half of `set_instances`) allocates
//!   nothing once its vector has the capacity: 0 allocations over many frames
//!   of changing times and wrap modes.
//! - `Animator::set_instances` (an animator that only samples) allocates
//!   no more than the wgpu calls it
//!   makes: the device-loss check's (one `device.poll(PollType::Poll)`,
//!   then a view, an unmap and a new map request of a 4-byte probe
//!   buffer: src/gpu/loss.rs) and
//!   its `queue.write_buffer` calls (two; four in the clip-blocks plan,
//!   whose counting sort by clip and block table reuse vectors sized at
//!   creation), measured on the same device and queue with buffers of the
//!   same sizes: none of its own. Every plan is checked. The median frames
//!   are compared, since wgpu's own `write_buffer` varies by one
//!   allocation now and then.
//! - `Animator::record_pass` allocates no more than the same three pass
//!   commands (`set_pipeline`, `set_bind_group`, `dispatch_workgroups`) per
//!   group dispatch, recorded with pipelines and bind groups of the test's
//!   own.
//!
//! That no buffer or bind group is created per frame is read from the
//! code: `set_instances` and `record`/`record_pass` get a `&wgpu::Queue`
//! and an encoder or pass, never a `&wgpu::Device`, and the device the
//! sampler holds is only polled and probed. wgpu itself allocates inside
//! `write_buffer` (staging memory), `poll`, the probe's map request and
//! `submit`;
//! that is not ours to remove and is not claimed.

mod common;

#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::count;

use keyframe_gpu::internals::resolve_instances_into;
use keyframe_gpu::{
    AnimationLibrary, Animator, Clip, Instance, Interpolation, Property, SamplerPlan, Track,
    WrapMode,
};

fn library() -> AnimationLibrary {
    let t = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0, 2.0],
        vec![0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    );
    let r = Track::new(
        1,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 2.0],
        vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0],
    );
    match AnimationLibrary::new(vec![
        Clip::new("a", vec![t.clone(), r]),
        Clip::new("b", vec![t]),
    ]) {
        Ok(l) => l,
        Err(e) => panic!("library: {e}"),
    }
}

/// A probe like the device-loss probe of every GPU object: 4 bytes,
/// `MAP_READ | COPY_DST`, never used by a submission, kept asking to be
/// mapped (src/gpu/loss.rs).
struct LossProbe {
    buffer: wgpu::Buffer,
    mapped: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl LossProbe {
    fn new(device: &wgpu::Device) -> LossProbe {
        let probe = LossProbe {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("no_alloc.baseline.probe"),
                size: 4,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            mapped: Default::default(),
        };
        probe.ask();
        probe
    }

    fn ask(&self) {
        let mapped = std::sync::Arc::clone(&self.mapped);
        self.buffer.map_async(wgpu::MapMode::Read, .., move |r| {
            mapped.store(r.is_ok(), std::sync::atomic::Ordering::Release);
        });
    }

    /// The wgpu calls of the crate's device-loss check: a poll that does
    /// not block; where the last request was granted, a view of the probe,
    /// an unmap and a new request.
    fn check(&self, device: &wgpu::Device) {
        let _ = device.poll(wgpu::PollType::Poll);
        if self.mapped.swap(false, std::sync::atomic::Ordering::AcqRel) {
            assert!(self.buffer.slice(..).get_mapped_range().is_ok());
            self.buffer.unmap();
            self.ask();
        }
    }
}

fn instances(frame: u32, n: u32) -> Vec<Instance> {
    let wraps = [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong];
    (0..n)
        .map(|i| {
            Instance::new(i % 2, f64::from(frame) / 60.0 + f64::from(i) * 0.01)
                .with_wrap(wraps[(i % 3) as usize])
        })
        .collect()
}

#[test]
fn resolve_into_allocates_nothing_in_steady_state() {
    let lib = library();
    let frames: Vec<Vec<Instance>> = (0..100).map(|f| instances(f, 500)).collect();
    // The counter works: resolving into an empty vector must allocate.
    let mut empty = Vec::new();
    let (first, r) = count(|| resolve_instances_into(&lib, &frames[0], &mut empty));
    assert!(r.is_ok());
    assert!(
        first > 0,
        "the counter saw no allocation when growing a Vec"
    );
    let mut out = Vec::with_capacity(500);
    let mut total = 0;
    for f in &frames {
        let (n, r) = count(|| resolve_instances_into(&lib, f, &mut out));
        assert!(r.is_ok());
        total += n;
    }
    assert_eq!(total, 0, "resolve_instances_into allocated in steady state");
    assert_eq!(out.len(), 500);
}

#[test]
fn set_instances_and_record_allocate_no_more_than_the_wgpu_calls_they_make() {
    counting_alloc::no_lib_backtraces();
    let Some(h) =
        common::gpu("set_instances_and_record_allocate_no_more_than_the_wgpu_calls_they_make")
    else {
        return;
    };
    for plan in [
        SamplerPlan::Reference,
        SamplerPlan::Grouped,
        SamplerPlan::ClipBlocks,
    ] {
        sampler_allocations(&h, plan);
    }
}

/// The check above for one plan. The clip-blocks plan also sorts the
/// instances by clip on the host and writes two more tables (the sorted
/// instances, 8 bytes each, and the blocks): its baseline writes them too.
fn sampler_allocations(h: &common::headless::Headless, plan: SamplerPlan) {
    let (device, queue) = (&h.device, &h.queue);
    let lib = library();
    let n = 300u32;
    let mut sampler = match common::sampler_with_plan(device, queue, &lib, n, plan) {
        Ok(s) => s,
        Err(e) => panic!("sampler: {e}"),
    };
    eprintln!("{plan:?}");
    let blocks = plan == SamplerPlan::ClipBlocks;
    // Instances alternate between the two clips: 150 of each, 3 blocks per
    // clip and group, clip "a" in two groups and "b" in one.
    let sorted_bytes = vec![0u8; n as usize * 8];
    let block_bytes = vec![0u8; 9 * 16];
    let frames: Vec<Vec<Instance>> = (0..40).map(|f| instances(f, n)).collect();
    // Baseline buffers of the same sizes as the sampler's instance table and
    // params, written the same way.
    let inst_bytes = vec![0u8; n as usize * 16];
    // The sampler writes one params slot per track group, at the uniform
    // offset alignment, in one write.
    let params_len = 3 * device.limits().min_uniform_buffer_offset_alignment.max(16) as usize;
    let params_bytes = vec![0u8; params_len];
    let buffer = |size: u64, usage| {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("no_alloc.baseline"),
            size,
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    };
    let inst_buf = buffer(inst_bytes.len() as u64, wgpu::BufferUsages::STORAGE);
    let params_buf = buffer(params_len as u64, wgpu::BufferUsages::UNIFORM);
    let sorted_buf = buffer(sorted_bytes.len() as u64, wgpu::BufferUsages::STORAGE);
    let block_buf = buffer(block_bytes.len() as u64, wgpu::BufferUsages::STORAGE);
    let probe = LossProbe::new(device);

    // A pipeline and bind group of the test's own, for the baseline of
    // record_pass: the same three commands with other objects.
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("no_alloc.baseline"),
        source: wgpu::ShaderSource::Wgsl(
            "@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n\
             @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) \
             { if (g.x < arrayLength(&o)) { o[g.x] = 1.0; } }"
                .into(),
        ),
    });
    // One pipeline and bind group per group dispatch, as the sampler has.
    let baseline_objects: Vec<_> = (0..3)
        .map(|_| {
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some("no_alloc.baseline"),
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
            let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("no_alloc.baseline"),
                layout: &pipeline.get_bind_group_layout(0),
                entries: &[wgpu::BindGroupEntry {
                    binding: 0,
                    resource: inst_buf.as_entire_binding(),
                }],
            });
            (pipeline, bind_group)
        })
        .collect();

    // Each measurement is the first thing after a submit, in frames of its
    // own, so that both see wgpu in the same state (the first write after a
    // submit costs wgpu one more allocation than the next).
    let mut ours = Vec::new();
    let mut baseline = Vec::new();
    let mut ours_rec = Vec::new();
    let mut baseline_rec = Vec::new();
    for (f, insts) in frames.iter().enumerate() {
        let mine = f % 2 == 0;
        let (a, r) = if mine {
            count(|| sampler.set_instances(queue, insts))
        } else {
            let (b, ()) = count(|| {
                probe.check(device);
                if blocks {
                    queue.write_buffer(&sorted_buf, 0, &sorted_bytes);
                    queue.write_buffer(&block_buf, 0, &block_bytes);
                    queue.write_buffer(&params_buf, 0, &params_bytes);
                    queue.write_buffer(&inst_buf, 0, &inst_bytes);
                } else {
                    queue.write_buffer(&inst_buf, 0, &inst_bytes);
                    queue.write_buffer(&params_buf, 0, &params_bytes);
                }
            });
            (b, sampler.set_instances(queue, insts))
        };
        assert!(r.is_ok());
        let mut encoder = device.create_command_encoder(&Default::default());
        let rec = {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            if mine {
                count(|| sampler.record_pass(&mut pass)).0
            } else {
                // The same three commands per dispatch of the plan.
                let grids: Vec<_> = sampler
                    .plan()
                    .dispatches
                    .iter()
                    .map(|d| d.workgroups)
                    .collect();
                assert!(grids.len() <= baseline_objects.len(), "{plan:?}");
                let (n, ()) = count(|| {
                    for (&(x, y, z), (pipeline, bind_group)) in grids.iter().zip(&baseline_objects)
                    {
                        pass.set_pipeline(pipeline);
                        pass.set_bind_group(0, bind_group, &[]);
                        pass.dispatch_workgroups(x, y, z);
                    }
                });
                sampler.record_pass(&mut pass);
                n
            }
        };
        queue.submit([encoder.finish()]);
        if let Err(e) = device.poll(wgpu::PollType::wait_indefinitely()) {
            panic!("poll: {e}");
        }
        if f >= 10 {
            if mine {
                ours.push(a);
                ours_rec.push(rec);
            } else {
                baseline.push(a);
                baseline_rec.push(rec);
            }
        }
    }
    eprintln!(
        "set_instances allocations per frame: {ours:?}; two bare write_buffer calls: {baseline:?}"
    );
    eprintln!("record_pass allocations: {ours_rec:?}; the same three commands: {baseline_rec:?}");
    // wgpu's own write_buffer varies by one allocation now and then (its
    // staging belt grows), in either column; the median frame is the
    // steady state. Any allocation of the crate's own, every frame, would
    // lift the whole column above the baseline's.
    let median = |v: &[u64]| {
        let mut v = v.to_vec();
        v.sort_unstable();
        v[v.len() / 2]
    };
    assert!(
        median(&ours) <= median(&baseline),
        "{plan:?}: set_instances allocated {} (median frame), its write_buffer calls alone {}",
        median(&ours),
        median(&baseline)
    );
    assert!(
        median(&ours_rec) <= median(&baseline_rec),
        "{plan:?}: record_pass allocated {} (median frame), the same commands alone {}",
        median(&ours_rec),
        median(&baseline_rec)
    );
}

/// An animator with a rig: its `set_instances` (the sampler's, then the
/// skin stage's per-frame step) allocates no more than the same sampler
/// alone (checked above against the wgpu calls it makes) and the one
/// `queue.write_buffer` of the skin stage's dispatch parameters, measured
/// on the same queue with a buffer of the same size; in the clip-blocks
/// plan, whose sampler alone reads the sorted instances and has no
/// instance table, also the write of the instance table the rig passes
/// read. Like the sampler, the skin stage gets a queue and never a device.
#[test]
fn skin_stage_allocates_no_more_than_its_params_write() {
    counting_alloc::no_lib_backtraces();
    use keyframe_gpu::plan::PlanChoices;
    use keyframe_gpu::{DeviceProfile, NodeTransform, Plan, Rig};
    let Some(h) = common::gpu("skin_stage_allocates_no_more_than_its_params_write") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let lib = library();
    let mut b = Rig::builder();
    let root = b.node(None, NodeTransform::IDENTITY);
    let child = b.node(Some(root), NodeTransform::translation([0.0, 1.0, 0.0]));
    let mesh = b.mesh(0, vec![]);
    let identity = glam::Mat4::IDENTITY.to_cols_array();
    let skin = b.skin(vec![root, child], vec![identity, identity]);
    b.attach(root, mesh, Some(skin));
    let rig = b.build().unwrap_or_else(|e| panic!("rig: {e}"));
    let bound = lib.bind(&rig).unwrap_or_else(|e| panic!("bind: {e}"));
    let n = 300u32;
    let profile = DeviceProfile::of(device);
    let plan = Plan::with_choices(&bound, n, &profile, PlanChoices::default())
        .unwrap_or_else(|e| panic!("plan: {e}"));
    let mut posing =
        Animator::from_plan(device, queue, &plan).unwrap_or_else(|e| panic!("animator: {e}"));
    let mut sampling = common::sampler_with_plan(device, queue, &lib, n, plan.sampler)
        .unwrap_or_else(|e| panic!("sampler: {e}"));
    let params_bytes = vec![0u8; std::mem::size_of::<keyframe_gpu::internals::GpuSkinParams>()];
    let baseline = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("baseline params"),
        size: params_bytes.len() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let blocks = plan.sampler == keyframe_gpu::SamplerPlan::ClipBlocks;
    let table_bytes = vec![0u8; n as usize * 16];
    let table = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("baseline instance table"),
        size: table_bytes.len() as u64,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    for f in 0..40 {
        let frame = instances(f, n - f % 7);
        let (a, r) = count(|| posing.set_instances(queue, &frame));
        assert!(r.is_ok(), "{r:?}");
        let (b, r) = count(|| {
            let r = sampling.set_instances(queue, &frame);
            if blocks {
                queue.write_buffer(&table, 0, &table_bytes[..frame.len() * 16]);
            }
            queue.write_buffer(&baseline, 0, &params_bytes);
            r
        });
        assert!(r.is_ok(), "{r:?}");
        if f >= 5 {
            ours.push(a);
            theirs.push(b);
        }
        assert_eq!(posing.instance_count(), n - f % 7);
    }
    ours.sort_unstable();
    theirs.sort_unstable();
    let (mo, mt) = (ours[ours.len() / 2], theirs[theirs.len() / 2]);
    assert!(
        mo <= mt,
        "set_instances with a rig allocated {mo} (median frame), the sampler's and the params write alone {mt}"
    );
}

/// The host half of `Animator::set_actions` (the mixer's packer: sampler
/// rows, action records, character ranges, shared reference rows)
/// allocates nothing once created for its capacity: 0 allocations over
/// many frames of changing actions, counts, weights and reference times.
#[test]
fn mixer_packing_allocates_nothing() {
    use keyframe_gpu::internals::Packer;
    use keyframe_gpu::Action;
    let lib = library();
    let (characters, per) = (50u32, 4u32);
    let mut packer = Packer::new(characters, per);
    for frame in 0..40u32 {
        let mut actions = Vec::new();
        let mut counts = Vec::new();
        for c in 0..characters - frame % 5 {
            let n = (c + frame) % (per + 1);
            for k in 0..n {
                let t = f64::from(frame) * 0.016 + f64::from(c + k) * 0.1;
                let mut a = Action::new((c + k) % 2, t)
                    .with_weight(0.25 * (k + 1) as f32)
                    .with_wrap(WrapMode::Repeat);
                if k == 2 {
                    // Reference times that differ per character: many rows.
                    a = a.additive(f64::from(c % 7) * 0.3);
                }
                actions.push(a);
            }
            counts.push(n);
        }
        let (allocs, r) = count(|| packer.pack(&lib, 0, &actions, &counts));
        assert!(r.is_ok(), "frame {frame}: {r:?}");
        assert_eq!(allocs, 0, "frame {frame}: {allocs} allocations");
        assert_eq!(packer.characters.len(), counts.len());
        assert!(packer.rows.len() >= actions.len());
    }
}
