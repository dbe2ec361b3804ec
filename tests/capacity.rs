//! `plan::chunk_capacity` against what an animator really creates: on
//! devices with lowered limits (a storage binding, a buffer, the
//! workgroups per dimension), for a model sampled alone, a skinned one and
//! one with a mixer, the capacity it returns builds in one chunk (wgpu
//! validates every buffer and binding it makes inside the animator's
//! error scope) and runs a full frame with no validation error, equal to
//! the CPU twin; one more character is refused naming a lowered limit.
//! An `Animator` past that capacity is chunked: its frames equal the
//! twin, and its refusals name the animator's instance or character,
//! with nothing written.

mod common;

use common::headless::Headless;
use glam::{Mat4, Quat, Vec3};
use keyframe_gpu::plan::{chunk_capacity, ChunkModel};
use keyframe_gpu::{
    cpu, Action, AnimationLibrary, Animator, BoundLibrary, Clip, DeviceProfile, Error, Instance,
    Interpolation, Mask, MixError, MixerDesc, NodeTransform, Plan, Property, Rig, SamplerPlan,
    Track, WrapMode,
};

/// A chain j0 -> j1 -> j2 skinned on a mesh node with one morph target;
/// clips "lift" (j0 up over 2 s, the target's weight 0 -> 1) and "bend"
/// (j1 a quarter turn about z over 1 s).
fn model() -> (Rig, AnimationLibrary) {
    let mut b = Rig::builder();
    let j0 = b.node(None, NodeTransform::IDENTITY);
    let j1 = b.node(Some(j0), NodeTransform::translation([0.0, 1.0, 0.0]));
    let j2 = b.node(Some(j1), NodeTransform::translation([0.0, 1.0, 0.0]));
    let mesh_node = b.node(None, NodeTransform::IDENTITY);
    let mesh = b.mesh(1, vec![0.0]);
    let ibm = |k: f32| Mat4::from_translation(Vec3::new(0.0, -k, 0.0)).to_cols_array();
    let skin = b.skin(vec![j0, j1, j2], vec![ibm(0.0), ibm(1.0), ibm(2.0)]);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    let lift = Clip::new(
        "lift",
        vec![
            Track::new(
                j0,
                Property::Translation,
                Interpolation::Linear,
                vec![0.0, 2.0],
                vec![0.0, 0.0, 0.0, 0.0, 3.0, 0.0],
            ),
            Track::new(
                mesh_node,
                Property::Weights,
                Interpolation::Linear,
                vec![0.0, 2.0],
                vec![0.0, 1.0],
            ),
        ],
    );
    let quarter = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let bend = Clip::new(
        "bend",
        vec![Track::new(
            j1,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            [Quat::IDENTITY.to_array(), quarter.to_array()].concat(),
        )],
    );
    (rig, AnimationLibrary::new(vec![lift, bend]).unwrap())
}

/// The adapter's device with `lower` applied to the crate's limits.
fn lowered(h: &Headless, label: &'static str, lower: Lower) -> Headless {
    let mut limits = keyframe_gpu::required_limits(&h.adapter.limits());
    lower(&mut limits);
    let (device, queue) = pollster::block_on(h.adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some(label),
        required_limits: limits,
        ..Default::default()
    }))
    .expect("the adapter offers lower limits");
    Headless {
        adapter: h.adapter.clone(),
        device,
        queue,
    }
}

/// Lowers one of a device's limits.
type Lower = fn(&mut wgpu::Limits);

/// The limits each case lowers, by name.
const LOWERED: [(&str, Lower); 3] = [
    ("max_storage_buffer_binding_size", |l| {
        l.max_storage_buffer_binding_size = 16 * 1024;
    }),
    ("max_buffer_size", |l| l.max_buffer_size = 192 * 1024),
    ("max_compute_workgroups_per_dimension", |l| {
        l.max_compute_workgroups_per_dimension = 3;
    }),
];

/// What a model of the test is: its chunk model, its one-chunk plan at
/// a capacity, and its frame of `n` characters against the twin.
enum Kind<'a> {
    Sampled(&'a AnimationLibrary),
    Bound(&'a BoundLibrary),
    Mixed(&'a BoundLibrary, &'a MixerDesc),
}

impl Kind<'_> {
    fn chunk_model(&self) -> ChunkModel<'_> {
        match *self {
            Kind::Sampled(l) => ChunkModel::Sampled(l),
            Kind::Bound(b) => ChunkModel::Bound(b),
            Kind::Mixed(b, d) => ChunkModel::Mixed(b, d),
        }
    }

    fn plan(&self, n: u32, profile: &DeviceProfile) -> Plan {
        match *self {
            Kind::Sampled(l) => Plan::sampling(l, n, profile, SamplerPlan::Auto),
            Kind::Bound(b) => Plan::new(b, n, profile),
            Kind::Mixed(b, d) => {
                let desc = MixerDesc {
                    characters: n,
                    ..d.clone()
                };
                Plan::for_mixer(b, &desc, profile, SamplerPlan::Auto)
            }
        }
        .unwrap()
    }

    /// Sets a frame of `n` characters (every slot), runs it and compares
    /// it with the twin: the largest difference.
    fn run(&self, h: &Headless, animator: &mut Animator, n: u32) -> f32 {
        let instances: Vec<Instance> = (0..n)
            .map(|i| Instance::new(i % 2, 0.013 * f64::from(i)).with_wrap(WrapMode::Repeat))
            .collect();
        let (actions, counts) = mixed_frame(n);
        match *self {
            Kind::Mixed(..) => animator.set_actions(&h.queue, &actions, &counts).unwrap(),
            _ => animator.set_instances(&h.queue, &instances).unwrap(),
        }
        let mut encoder = h.device.create_command_encoder(&Default::default());
        animator.record(&mut encoder);
        h.queue.submit([encoder.finish()]);
        let gpu = animator.read_back(&h.device, &h.queue).unwrap();
        let twin = match *self {
            Kind::Sampled(l) => {
                let samples = cpu::sample(l, &instances).unwrap();
                let got: Vec<f32> = (0..n)
                    .flat_map(|i| gpu.samples(i).unwrap().to_vec())
                    .collect();
                return samples
                    .iter()
                    .zip(&got)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f32::max);
            }
            Kind::Bound(b) => cpu::poses(b, &instances).unwrap(),
            Kind::Mixed(b, d) => cpu::mixed_poses(b, &d.masks, &actions, &counts).unwrap(),
        };
        let c = gpu.compare(&twin).unwrap();
        assert!(c.within(), "worst {:?}", c.worst);
        c.max_abs.into_iter().fold(0.0, f32::max)
    }
}

/// A crossfade from lift to bend under a masked bend, by character.
fn mixed_frame(n: u32) -> (Vec<Action>, Vec<u32>) {
    let mut actions = Vec::new();
    for c in 0..n {
        let t = 0.01 * f64::from(c);
        let f = (c % 5) as f32 / 4.0;
        actions.push(Action::new(0, t).with_weight(1.0 - f));
        actions.push(Action::new(1, t).with_weight(f));
        actions.push(Action::new(1, t + 0.5).with_mask(keyframe_gpu::MaskId::new(0)));
    }
    (actions, vec![3; n as usize])
}

/// For each lowered limit and each kind of model: the capacity builds and
/// runs a full frame equal to the twin with no validation error; one more
/// is refused naming the lowered limit.
#[test]
fn the_capacity_fits_the_device_and_one_more_does_not() {
    let name = "the_capacity_fits_the_device_and_one_more_does_not";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let (rig, library) = model();
    let bound = library.bind(&rig).unwrap();
    let mut desc = MixerDesc::new(1, 3);
    desc.add_mask(Mask::subtree(&rig, 1).unwrap());
    let kinds = [
        ("sampled", Kind::Sampled(&library)),
        ("skinned", Kind::Bound(&bound)),
        ("mixed", Kind::Mixed(&bound, &desc)),
    ];
    for (limit, lower) in LOWERED {
        let d = lowered(&h, name, lower);
        let profile = DeviceProfile::of(&d.device);
        for (label, kind) in &kinds {
            let fit = chunk_capacity(kind.chunk_model(), &profile).unwrap();
            assert!(fit > 1, "{limit}, {label}: {fit}");
            let scope = d.device.push_error_scope(wgpu::ErrorFilter::Validation);
            let mut animator = Animator::from_plan(&d.device, &d.queue, &kind.plan(fit, &profile))
                .unwrap_or_else(|e| panic!("{limit}, {label}: {fit} refused: {e}"));
            let diff = kind.run(&d, &mut animator, fit);
            assert!(
                pollster::block_on(scope.pop()).is_none(),
                "{limit}, {label}: a validation error at {fit}"
            );
            assert!(diff <= 2e-4, "{limit}, {label}: {diff}");
            match Animator::from_plan(&d.device, &d.queue, &kind.plan(fit + 1, &profile)) {
                Err(Error::LimitExceeded {
                    limit_name,
                    needed,
                    limit: value,
                    ..
                }) => {
                    assert_eq!(limit_name, limit, "{label} at {}", fit + 1);
                    assert!(needed > value, "{label}: {needed} <= {value}");
                }
                Err(e) => panic!("{limit}, {label}: {} refused with {e}", fit + 1),
                Ok(_) => panic!("{limit}, {label}: {} one more was taken", fit + 1),
            }
        }
    }
}

/// The capacity by hand, on wgpu's default limits for a GPU profile
/// (a 128 MiB storage binding): sampled alone, each character takes a
/// 16-byte row of the instance table and 16 bytes of sampled values (an
/// output stride of 4 floats): 8,388,608 characters. Skinned, its 4
/// world matrices (256 bytes) are its largest buffer (3 joint matrices
/// take 192): 524,288. With a mixer of 3 actions, its 6 sampler rows
/// take 96 bytes, its 4 local poses 4 x 48, its actions 3 x 20: the
/// world matrices decide again.
#[test]
fn the_capacity_by_hand_on_default_limits() {
    let (rig, library) = model();
    let bound = library.bind(&rig).unwrap();
    let gpu = DeviceProfile::gpu();
    assert_eq!(
        chunk_capacity(ChunkModel::Sampled(&library), &gpu).unwrap(),
        (128 << 20) / 16
    );
    assert_eq!(
        chunk_capacity(ChunkModel::Bound(&bound), &gpu).unwrap(),
        (128 << 20) / (4 * 64)
    );
    let desc = MixerDesc::new(1, 3);
    assert_eq!(
        chunk_capacity(ChunkModel::Mixed(&bound, &desc), &gpu).unwrap(),
        (128 << 20) / (4 * 64)
    );
    // A binding of 1 KiB: 4 skinned characters; a 64-byte one holds no
    // character's world matrices at all, refused naming the buffer.
    let mut small = gpu;
    small.limits.max_storage_buffer_binding_size = 1024;
    assert_eq!(
        chunk_capacity(ChunkModel::Bound(&bound), &small).unwrap(),
        4
    );
    small.limits.max_storage_buffer_binding_size = 200;
    match chunk_capacity(ChunkModel::Bound(&bound), &small) {
        Err(Error::LimitExceeded {
            what: "global matrices",
            needed: 256,
            limit: 200,
            ..
        }) => {}
        other => panic!("one character on 200-byte bindings: {other:?}"),
    }
}

/// An animator past one chunk: 3 chunks of the device's capacity (plus
/// one character), each frame equal to the twin; a bad instance or
/// action in the last chunk is refused naming the animator's index, and
/// the frame in effect stays.
#[test]
fn a_chunked_animator_equals_the_twin_and_names_its_own_indices() {
    let name = "a_chunked_animator_equals_the_twin_and_names_its_own_indices";
    let Some(h) = common::gpu(name) else {
        return;
    };
    let d = lowered(&h, name, |l| l.max_storage_buffer_binding_size = 4 * 1024);
    let (rig, library) = model();
    let bound = library.bind(&rig).unwrap();
    let profile = DeviceProfile::of(&d.device);
    let fit = chunk_capacity(ChunkModel::Bound(&bound), &profile).unwrap();
    let n = 2 * fit + 1;
    let mut animator = Animator::new(&d.device, &d.queue, &bound, n).unwrap();
    assert_eq!(
        (animator.chunks().len(), animator.chunk_capacity()),
        (3, fit)
    );
    let kind = Kind::Bound(&bound);
    assert!(kind.run(&d, &mut animator, n) <= 2e-4);
    assert_eq!(animator.chunks()[2].instance_count(), 1);
    let before = animator.read_back(&d.device, &d.queue).unwrap();
    let mut bad: Vec<Instance> = (0..n).map(|i| Instance::new(0, f64::from(i))).collect();
    bad[n as usize - 1] = Instance::new(7, 0.0);
    match animator.set_instances(&d.queue, &bad) {
        Err(Error::ClipOutOfRange {
            instance, clip: 7, ..
        }) => {
            assert_eq!(instance, n as usize - 1);
        }
        other => panic!("a bad clip in the last chunk: {:?}", other.err()),
    }
    match animator.set_instances(&d.queue, &vec![Instance::new(0, 0.0); n as usize + 1]) {
        Err(Error::TooManyInstances {
            requested,
            capacity,
        }) => assert_eq!((requested, capacity), (n as usize + 1, n)),
        other => panic!("one past the capacity: {:?}", other.err()),
    }
    let mut encoder = d.device.create_command_encoder(&Default::default());
    animator.record(&mut encoder);
    d.queue.submit([encoder.finish()]);
    let after = animator.read_back(&d.device, &d.queue).unwrap();
    assert_eq!(after.compare(&before).unwrap().max_abs, [0.0; 4]);

    let mut desc = MixerDesc::new(n, 3);
    desc.add_mask(Mask::subtree(&rig, 1).unwrap());
    let mut mixed = Animator::with_mixer(&d.device, &d.queue, &bound, &desc).unwrap();
    assert!(mixed.chunks().len() > 1, "{}", mixed.chunk_capacity());
    let kind = Kind::Mixed(&bound, &desc);
    assert!(kind.run(&d, &mut mixed, n) <= 2e-4);
    let (mut actions, counts) = mixed_frame(n);
    let last = actions.len() - 1;
    actions[last] = actions[last].with_weight(-1.0);
    match mixed.set_actions(&d.queue, &actions, &counts) {
        Err(Error::Mix(MixError::BadWeight {
            character,
            action: 2,
            ..
        })) => assert_eq!(character, n as usize - 1),
        other => panic!("a negative weight of the last character: {:?}", other.err()),
    }
}
