//! Hostile instance tables: NaN, infinite, huge and
//! negative playback times, clip indices past the end, every wrap mode.
//!
//! Contract checked here: [`GpuSampler::set_instances`] either refuses the
//! table with the typed error naming the first bad instance (and the previous
//! table stays in effect), or every output component is finite and equals the
//! CPU twin. Times far from zero wrap exactly (the host wraps in `f64`).
//! Below the host checks, the shader itself never writes outside the block of
//! an instance, whatever raw rows its instance table holds.
//!
//! Tolerances: on a key, outside the keys and for STEP the shader copies the
//! stored value, so GPU, CPU and the hand-computed key value agree bit for
//! bit; interpolated rotations within 2e-5 per component (up to sign), other
//! interpolated values within 1e-5 relative, as in `src/tests/gpu_vs_cpu.rs`.

use super::{bits, common, key_value, REL_TOL};
use crate::tests::Derived;

use super::facades::GpuSampler;
use keyframe_gpu::layout::{GpuClip, GpuInstance, GpuParams, SAMPLE_WGSL};
use keyframe_gpu::{
    cpu, AnimationLibrary, Clip, Error, Instance, Interpolation, Property, Track, WrapMode,
};
use wgpu::util::DeviceExt;

const S45: f32 = std::f32::consts::FRAC_1_SQRT_2;

/// Four clips with every interpolation and property:
/// 0 "walk" (duration 1.0), 1 "single" (one key at 0.1), 2 "before zero"
/// (keys at -2 and -1, duration 0), 3 "long" (keys up to 1000.5).
fn library() -> AnimationLibrary {
    let walk = Clip::new(
        "walk",
        vec![
            Track::new(
                0,
                Property::Translation,
                Interpolation::Linear,
                vec![0.0, 0.5, 1.0],
                vec![0.0, 0.0, 0.0, 2.0, 4.0, -1.0, 4.0, 8.0, -2.0],
            ),
            Track::new(
                0,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, S45, S45],
            ),
            Track::new(
                1,
                Property::Scale,
                Interpolation::CubicSpline,
                vec![0.0, 0.25, 1.0],
                vec![
                    0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.0, -0.5, // key 0: a, v, b
                    1.0, 1.0, 1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, // key 1
                    -1.0, 0.0, 1.0, 5.0, 6.0, 7.0, 0.0, 0.0, 0.0, // key 2
                ],
            ),
            Track::weights(
                2,
                3,
                Interpolation::Step,
                vec![0.0, 0.5],
                vec![0.1, 0.2, 0.3, 0.9, 0.8, 0.7],
            ),
        ],
    );
    let single = Clip::new(
        "single",
        vec![Track::new(
            3,
            Property::Rotation,
            Interpolation::Step,
            vec![0.1],
            vec![0.0, 0.6, 0.0, 0.8],
        )],
    );
    let before_zero = Clip::new(
        "before zero",
        vec![Track::new(
            4,
            Property::Translation,
            Interpolation::Linear,
            vec![-2.0, -1.0],
            vec![1.0, 1.0, 1.0, 3.0, 3.0, 3.0],
        )],
    );
    let long = Clip::new(
        "long",
        vec![
            Track::new(
                5,
                Property::Rotation,
                Interpolation::CubicSpline,
                vec![0.0, 3.7, 1000.5],
                vec![
                    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.1, 0.0, 0.0, 0.0, // key 0
                    0.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.0, 0.8, 0.0, 0.0, 0.0, 0.0, // key 1
                    0.0, 0.0, 0.0, 0.0, 0.0, S45, 0.0, S45, 0.0, 0.0, 0.0, 0.0, // key 2
                ],
            ),
            Track::new(
                5,
                Property::Translation,
                Interpolation::Step,
                vec![0.0, 3.7, 1000.5],
                vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
            ),
        ],
    );
    AnimationLibrary::new(vec![walk, single, before_zero, long]).unwrap()
}

/// SplitMix64: a fixed-seed generator, so that a failure names a table that
/// can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn hostile_time(rng: &mut Rng) -> f64 {
    const SPECIAL: [f64; 20] = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        -1e300,
        1e20,
        -1e20,
        f64::MAX,
        f64::MIN,
        1e9 + 0.25,
        -1e9 - 0.25,
        -0.0,
        -5.0,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        1e-40,
        1000.5,
        3.7,
        0.5,
    ];
    match rng.below(4) {
        0 => SPECIAL[rng.below(SPECIAL.len() as u64) as usize],
        1 => rng.unit() * 20.0 - 10.0,
        2 => {
            // Signed, log-uniform over 1e-12 .. 1e30.
            let m = 10f64.powf(rng.unit() * 42.0 - 12.0);
            if rng.below(2) == 0 {
                m
            } else {
                -m
            }
        }
        _ => (rng.below(2001) as f64) * 0.5 - 500.0,
    }
}

fn hostile_clip(rng: &mut Rng, clips: u32) -> u32 {
    match rng.below(10) {
        0 => clips + rng.below(3) as u32,
        1 if rng.below(4) == 0 => u32::MAX,
        _ => rng.below(u64::from(clips)) as u32,
    }
}

/// The first refusal `resolve_instances` must report, computed from the
/// table alone: the clip index is checked before the time.
fn expected_refusal(instances: &[Instance], clips: usize) -> Option<(usize, bool)> {
    instances.iter().enumerate().find_map(|(i, inst)| {
        if inst.clip as usize >= clips {
            Some((i, true))
        } else if !inst.time.is_finite() {
            Some((i, false))
        } else {
            None
        }
    })
}

/// Every output of `gpu` is finite and matches `cpu` (see the tolerances in
/// the module docs); times far outside the clip give the first or last key
/// bit for bit.
fn check_outputs(
    lib: &AnimationLibrary,
    instances: &[Instance],
    gpu: &[f32],
    cpu: &[f32],
    ctx: &str,
) {
    assert_eq!(gpu.len(), cpu.len(), "{ctx}: output length");
    super::each_track_output(lib, instances, gpu, cpu, |i, row, j, track, g, c| {
        let inst = &instances[i];
        let here = format!(
            "{ctx}: instance {i} ({inst:?} -> clip time {}) track {j} ({:?} {:?}): gpu {g:?} cpu {c:?}",
            row.time, track.interpolation, track.property
        );
        assert!(g.iter().all(|x| x.is_finite()), "not finite: {here}");
        assert!(
            c.iter().all(|x| x.is_finite()),
            "CPU twin not finite: {here}"
        );
        let first = track.times[0];
        let last = *track.times.last().unwrap();
        let t = row.time;
        // Clamp saturates the time to the finite f32 range
        // (WrapMode::clip_time), so far before or after the keys gives the
        // first or last key, wherever the keys start.
        if inst.wrap == WrapMode::Clamp && inst.time <= f64::from(first) - 1e6 {
            assert_eq!(
                bits(g),
                bits(&key_value(track, 0)),
                "first key expected: {here}"
            );
        }
        if inst.wrap == WrapMode::Clamp && inst.time >= f64::from(last) + 1e6 {
            let k = track.times.len() - 1;
            assert_eq!(
                bits(g),
                bits(&key_value(track, k)),
                "last key expected: {here}"
            );
        }
        super::assert_track_matches(track, t, g, c, &here);
    });
}

fn redispatch(h: &crate::tests::common::headless::Headless, sampler: &GpuSampler) -> Vec<f32> {
    let mut encoder = h.device.create_command_encoder(&Default::default());
    sampler.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    sampler.read_back(&h.device, &h.queue).unwrap()
}

#[test]
fn random_hostile_tables_are_refused_or_finite_and_match_cpu() {
    let Some(h) = common::gpu("random_hostile_tables_are_refused_or_finite_and_match_cpu") else {
        return;
    };
    let lib = library();
    let clips = lib.clips().len();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, 16).unwrap();
    let mut rng = Rng(0x6b65_7966_7261_6d65);
    let mut last_good: Option<Vec<f32>> = None;
    let (mut refused, mut accepted) = (0, 0);
    for table in 0..300 {
        let n = 1 + rng.below(16) as usize;
        // Half of the tables keep every instance valid-looking, so that
        // plenty of them pass the host checks and reach the GPU.
        let tame = rng.below(2) == 0;
        let instances: Vec<Instance> = (0..n)
            .map(|_| {
                let wrap =
                    [WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong][rng.below(3) as usize];
                let mut time = hostile_time(&mut rng);
                let mut clip = hostile_clip(&mut rng, clips as u32);
                if tame {
                    if !time.is_finite() {
                        time = 1e15 + 0.25;
                    }
                    clip %= clips as u32;
                }
                Instance { clip, time, wrap }
            })
            .collect();
        let ctx = format!("table {table}");
        let result = sampler.set_instances(&h.queue, &instances);
        match (expected_refusal(&instances, clips), result) {
            (
                Some((i, true)),
                Err(Error::ClipOutOfRange {
                    instance,
                    clip,
                    clip_count,
                }),
            ) => {
                assert_eq!(
                    (instance, clip, clip_count),
                    (i, instances[i].clip, clips),
                    "{ctx}"
                );
            }
            (Some((i, false)), Err(Error::InstanceTimeNotFinite { instance, time })) => {
                assert_eq!(instance, i, "{ctx}");
                assert_eq!(time.to_bits(), instances[i].time.to_bits(), "{ctx}");
            }
            (None, Ok(())) => {}
            (want, got) => {
                panic!("{ctx}: expected refusal {want:?}, got {got:?} for {instances:?}")
            }
        }
        let out = redispatch(&h, &sampler);
        if expected_refusal(&instances, clips).is_some() {
            refused += 1;
            // The previous table stays in effect: same count, same output.
            match &last_good {
                Some(prev) => assert_eq!(bits(&out), bits(prev), "{ctx}: previous table lost"),
                None => assert!(out.is_empty(), "{ctx}: no table was set yet"),
            }
        } else {
            accepted += 1;
            assert_eq!(sampler.instance_count() as usize, n, "{ctx}");
            let cpu_out = cpu::sample(&lib, &instances).unwrap();
            check_outputs(&lib, &instances, &out, &cpu_out, &ctx);
            last_good = Some(out);
        }
    }
    // Both paths really ran (a generator bug would otherwise hide one).
    assert!(
        refused >= 50 && accepted >= 50,
        "refused {refused}, accepted {accepted}"
    );
}

/// The CPU twin refuses exactly what the GPU sampler refuses.
#[test]
fn cpu_twin_refuses_the_same_instances() {
    let lib = library();
    let cases = [
        (Instance::new(4, 0.0), Some((0, true))),
        (Instance::new(u32::MAX, f64::NAN), Some((0, true))),
        (Instance::new(0, f64::NAN), Some((0, false))),
        (Instance::new(0, f64::NEG_INFINITY), Some((0, false))),
        (
            Instance::new(3, f64::MAX).with_wrap(WrapMode::PingPong),
            None,
        ),
    ];
    for (inst, want) in cases {
        let got = cpu::sample(&lib, &[Instance::new(0, 0.5), inst]);
        match (want, got) {
            (Some((_, true)), Err(Error::ClipOutOfRange { instance: 1, .. })) => {}
            (Some((_, false)), Err(Error::InstanceTimeNotFinite { instance: 1, .. })) => {}
            (None, Ok(out)) => assert!(out.iter().all(|x| x.is_finite()), "{inst:?}: {out:?}"),
            (want, got) => panic!("{inst:?}: expected {want:?}, got {got:?}"),
        }
    }
}

/// Clip 0 "walk" of [`library`] (1.0 s) and clip 1 "three quarters", a
/// translation over 0.75 s.
fn walk_and_three_quarters() -> AnimationLibrary {
    let mut clips = library().clips()[..1].to_vec();
    clips.push(Clip::new(
        "three quarters",
        vec![Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, 0.75],
            vec![0.0, 0.0, 0.0, 3.0, -6.0, 12.0],
        )],
    ));
    AnimationLibrary::new(clips).unwrap()
}

/// Pairs of a far instance and a near one with the same clip-local time,
/// on the clips of [`walk_and_three_quarters`].
fn far_and_near() -> [(Instance, Instance); 11] {
    let rep = WrapMode::Repeat;
    let pp = WrapMode::PingPong;
    [
        (
            Instance::new(0, 1e9 + 0.25).with_wrap(rep),
            Instance::new(0, 0.25),
        ),
        (
            Instance::new(0, -1e9 + 0.25).with_wrap(rep),
            Instance::new(0, 0.25),
        ),
        (
            Instance::new(0, 1e15 + 0.25).with_wrap(rep),
            Instance::new(0, 0.25),
        ),
        (
            Instance::new(0, 1e9 + 0.75).with_wrap(rep),
            Instance::new(0, 0.75),
        ),
        // Period 2 s: 1e9 is a whole number of periods.
        (
            Instance::new(0, 1e9 + 0.25).with_wrap(pp),
            Instance::new(0, 0.25),
        ),
        (
            Instance::new(0, 1e9 + 1.25).with_wrap(pp),
            Instance::new(0, 0.75),
        ),
        (
            Instance::new(0, -1e9 - 0.25).with_wrap(pp),
            Instance::new(0, 0.25),
        ),
        // 7.5e8 = 1e9 x 0.75 exactly.
        (
            Instance::new(1, 7.5e8 + 0.25).with_wrap(rep),
            Instance::new(1, 0.25),
        ),
        (
            Instance::new(1, 7.5e8 + 1.0).with_wrap(pp),
            Instance::new(1, 0.5),
        ),
        // Clamp: far outside holds the last and first keys.
        (Instance::new(0, 1e9 + 0.25), Instance::new(0, 1.0)),
        (Instance::new(0, -1e9 - 0.25), Instance::new(0, 0.0)),
    ]
}

/// Wrap modes stay exact far from zero: the host wraps in `f64`, so
/// `Repeat` at `1e9 + 0.25` on a 1 s clip samples exactly like `0.25` (in
/// `f32`, `1e9 + 0.25` rounds to `1e9` and would sample like 0).
#[test]
fn wrap_modes_are_exact_far_from_zero() {
    let Some(h) = common::gpu("wrap_modes_are_exact_far_from_zero") else {
        return;
    };
    let lib = walk_and_three_quarters();
    assert_eq!(lib.tables().clip_table()[0].duration, 1.0);
    assert_eq!(lib.tables().clip_table()[1].duration, 0.75);
    let pairs = far_and_near();
    let instances: Vec<Instance> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, instances.len() as u32).unwrap();
    let gpu = sampler.sample(&h.device, &h.queue, &instances).unwrap();
    let cpu_out = cpu::sample(&lib, &instances).unwrap();
    let stride = lib.output_stride() as usize;
    for (p, (far, near)) in pairs.iter().enumerate() {
        let w = lib.tables().clip_table()[far.clip as usize].output_width as usize;
        let f = &gpu[2 * p * stride..2 * p * stride + w];
        let n = &gpu[(2 * p + 1) * stride..(2 * p + 1) * stride + w];
        let fc = &cpu_out[2 * p * stride..2 * p * stride + w];
        let nc = &cpu_out[(2 * p + 1) * stride..(2 * p + 1) * stride + w];
        let ctx =
            format!("{far:?} vs {near:?}: gpu far {f:?} near {n:?}, cpu far {fc:?} near {nc:?}");
        assert_eq!(bits(f), bits(n), "GPU far vs near: {ctx}");
        assert_eq!(bits(fc), bits(nc), "CPU far vs near: {ctx}");
    }
    assert_hand_values(&lib, &instances, &gpu, &cpu_out);
}

/// The samples of [`far_and_near`]'s instances (interleaved far, near)
/// against values computed by hand: at 0.25 s the tracks whose arithmetic
/// is exact in f32, at 0.5 s of clip 1 within tolerance, and clamped far
/// outside the keys, the stored keys.
fn assert_hand_values(
    lib: &AnimationLibrary,
    instances: &[Instance],
    gpu: &[f32],
    cpu_out: &[f32],
) {
    let stride = lib.output_stride() as usize;
    // Hand-computed values at 0.25 s for the tracks whose arithmetic is exact
    // in f32 (lerp with t = 0.5 or 0.25 of small integers), and the STEP
    // weights: GPU, CPU and hand agree bit for bit.
    let at =
        |buf: &[f32], inst: usize, off: usize, w: usize| buf[inst * stride + off..][..w].to_vec();
    // walk translation at 0.25: half way from key 0 (0,0,0) to key 1 (2,4,-1).
    let want_t = [1.0, 2.0, -0.5];
    // walk weights at 0.25: STEP holds key 0.
    let want_w = [0.1, 0.2, 0.3];
    let (t_off, _) = lib.track_output(0, 0).unwrap();
    let (w_off, _) = lib.track_output(0, 3).unwrap();
    for inst in [0, 1, 2, 3, 4, 5, 8, 9, 13] {
        let ctx = format!("instance {inst} ({:?})", instances[inst]);
        assert_eq!(
            bits(&at(gpu, inst, t_off as usize, 3)),
            bits(&want_t),
            "{ctx}"
        );
        assert_eq!(
            bits(&at(cpu_out, inst, t_off as usize, 3)),
            bits(&want_t),
            "{ctx}"
        );
        assert_eq!(
            bits(&at(gpu, inst, w_off as usize, 3)),
            bits(&want_w),
            "{ctx}"
        );
    }
    // Clip 1 at 0.25 of 0.75 s: a third of the way... not exact; at 0.5 s
    // (instances 16, 17): two thirds of (3, -6, 12) = (2, -4, 8) within 1e-5.
    for inst in [16, 17] {
        let got = at(gpu, inst, 0, 3);
        for (g, want) in got.iter().zip([2.0f32, -4.0, 8.0]) {
            assert!(
                (g - want).abs() <= REL_TOL * want.abs(),
                "instance {inst}: {got:?}"
            );
        }
    }
    // Clamp far past the end and before the start: the stored keys, bit for bit.
    let walk = &lib.clips()[0];
    for (inst, k) in [(18usize, usize::MAX), (20, 0)] {
        for (j, track) in walk.tracks.iter().enumerate() {
            let k = k.min(track.times.len() - 1);
            let (off, w) = lib.track_output(0, j as u32).unwrap();
            assert_eq!(
                bits(&at(gpu, inst, off as usize, w as usize)),
                bits(&key_value(track, k)),
                "instance {inst} track {j}"
            );
        }
    }
}

/// The value a track must hold at `time` where the shader copies a key
/// (a single key, STEP at NaN, at or past either end); `None` elsewhere.
fn exact_value(track: &Track, time: f32) -> Option<Vec<f32>> {
    let last = track.times.len() - 1;
    if time.is_nan() {
        // NaN compares false everywhere: no key is chosen as exact,
        // the factor is NaN; what matters is that it stays in its slot
        // (its caller checks that). A single-key track holds its key.
        if track.times.len() == 1 || track.interpolation == Interpolation::Step {
            Some(key_value(track, 0))
        } else {
            None
        }
    } else if time >= track.times[last] {
        Some(key_value(track, last))
    } else if time <= track.times[0] {
        Some(key_value(track, 0))
    } else {
        None
    }
}

/// The buffers a raw dispatch of the sampling shader binds.
struct RawBuffers {
    values: wgpu::Buffer,
    clips: wgpu::Buffer,
    instances: wgpu::Buffer,
    params: wgpu::Buffer,
    output: wgpu::Buffer,
    heads: wgpu::Buffer,
    /// The key search texels (`key_windows`).
    windows: wgpu::TextureView,
}

/// The sampling pipeline as [`GpuSampler`] builds it, for `per` tracks a
/// workgroup row.
fn raw_sample_pipeline(
    h: &crate::tests::common::headless::Headless,
    keys: &crate::gpu::key_textures::KeyTextures,
    per: u32,
) -> wgpu::ComputePipeline {
    let module = h.device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("sample"),
        source: wgpu::ShaderSource::Wgsl(SAMPLE_WGSL.into()),
    });
    h.device
        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("sample"),
            layout: None,
            module: &module,
            entry_point: Some("sample_main"),
            compilation_options: wgpu::PipelineCompilationOptions {
                constants: &[
                    ("ROW_SHIFT", f64::from(keys.row_shift())),
                    ("GROUP_ROWS", f64::from(per.max(1))),
                ],
                ..Default::default()
            },
            cache: None,
        })
}

/// The bind group entries of a raw dispatch, numbered as in
/// SAMPLE_BINDINGS.
fn raw_sample_entries<'a>(
    keys: &'a crate::gpu::key_textures::KeyTextures,
    b: &'a RawBuffers,
) -> Vec<wgpu::BindGroupEntry<'a>> {
    let all = [
        (0, wgpu::BindingResource::TextureView(&b.windows)),
        (1, b.values.as_entire_binding()),
        (3, b.clips.as_entire_binding()),
        (4, b.instances.as_entire_binding()),
        (5, b.params.as_entire_binding()),
        (6, b.output.as_entire_binding()),
        (7, wgpu::BindingResource::TextureView(keys.clip_groups())),
        (8, wgpu::BindingResource::TextureView(keys.track_search())),
    ];
    let mut entries: Vec<_> = all
        .into_iter()
        .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
        .collect();
    // The values and the output again, as vec4s (`values4`, `output4`;
    // read and written only where the override ALIGNED4 is set).
    entries.push(wgpu::BindGroupEntry {
        binding: 15,
        resource: b.values.as_entire_binding(),
    });
    entries.push(wgpu::BindGroupEntry {
        binding: 16,
        resource: b.output.as_entire_binding(),
    });
    // The values as packed words (`packed`; read only where the override
    // COMPRESSED is set).
    entries.push(wgpu::BindGroupEntry {
        binding: 17,
        resource: b.values.as_entire_binding(),
    });
    for binding in [18, 19] {
        entries.push(wgpu::BindGroupEntry {
            binding,
            resource: b.heads.as_entire_binding(),
        });
    }
    entries
}

/// Runs the sampling shader over raw instance `rows` of `lib`
/// (`counted` of them in its params, every one given invocations) on an
/// output filled with `fill`, and reads the output back.
fn dispatch_raw_rows(
    h: &crate::tests::common::headless::Headless,
    lib: &AnimationLibrary,
    rows: &[GpuInstance],
    counted: usize,
    fill: f32,
) -> Vec<f32> {
    let stride = lib.output_stride() as usize;
    let buf = |label: &str, contents: &[u8], usage: wgpu::BufferUsages| {
        h.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage,
            })
    };
    let storage = wgpu::BufferUsages::STORAGE;
    let keys =
        crate::gpu::key_textures::KeyTextures::new(&h.device, &h.queue, lib.tables()).unwrap();
    let values = buf("values", bytemuck::cast_slice(lib.values()), storage);
    let clips = buf(
        "clips",
        bytemuck::cast_slice::<GpuClip, u8>(lib.tables().clip_table()),
        storage,
    );
    let instances = buf("instances", bytemuck::cast_slice(rows), storage);
    let per = lib.tracks_per_instance();
    let params = GpuParams {
        instance_count: counted as u32,
        tracks_per_instance: per,
        output_stride: stride as u32,
        row_invocations: 64,
    };
    let params = buf(
        "params",
        bytemuck::bytes_of(&params),
        wgpu::BufferUsages::UNIFORM,
    );
    let init = vec![fill; rows.len() * stride];
    let output = buf(
        "output",
        bytemuck::cast_slice(&init),
        storage | wgpu::BufferUsages::COPY_SRC,
    );
    let staging = h.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("staging"),
        size: (init.len() * 4) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    // The block heads' uniform copies (`decode_heads`, `decode_frames`;
    // read only where the override HEADS_IN_UNIFORM is set).
    let heads = buf(
        "decode heads",
        &vec![0u8; keyframe_gpu::layout::DECODE_HEAD as usize * 32],
        wgpu::BufferUsages::UNIFORM,
    );
    let texels = lib.tables().key_windows();
    let windows = crate::gpu::key_textures::texture_with(
        &h.device,
        "key search table",
        4,
        texels.len() as u64,
        keys.row_shift(),
    );
    let windows =
        crate::gpu::key_textures::fill(&h.queue, &windows, bytemuck::cast_slice(&texels), 4);
    let b = RawBuffers {
        values,
        clips,
        instances,
        params,
        output,
        heads,
        windows,
    };
    let pipeline = raw_sample_pipeline(h, &keys, per);
    let entries = raw_sample_entries(&keys, &b);
    let bind_group = h.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("sample"),
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut encoder = h.device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        // Every row, counted or not, gets invocations.
        pass.dispatch_workgroups((rows.len() as u32 * per).div_ceil(64), 1, 1);
    }
    encoder.copy_buffer_to_buffer(&b.output, 0, &staging, 0, (init.len() * 4) as u64);
    h.queue.submit([encoder.finish()]);
    let slice = staging.slice(..);
    slice.map_async(wgpu::MapMode::Read, |r| r.unwrap());
    h.device.poll(wgpu::PollType::wait_indefinitely()).unwrap();
    let out: Vec<f32> = bytemuck::pod_collect_to_vec(&slice.get_mapped_range().unwrap());

    out
}

/// Below the host checks: raw instance rows that the host would never
/// upload (clip index past the end, NaN and infinite clip times, more rows
/// than `instance_count`) go straight to the sampling shader. It must not
/// write anything for a bad clip index, nothing past an instance's clip
/// output width, and nothing for rows past `instance_count`.
#[test]
fn shader_never_writes_outside_an_instance_block() {
    let Some(h) = common::gpu("shader_never_writes_outside_an_instance_block") else {
        return;
    };
    let lib = library();
    let stride = lib.output_stride() as usize;
    const SENTINEL: f32 = -12345.5;
    let row = |clip: u32, time: f32| GpuInstance {
        clip,
        time,
        _pad0: 0,
        _pad1: 0,
    };
    let rows = [
        row(0, 0.25),
        row(4, 0.25),
        row(u32::MAX, 0.5),
        row(0, f32::INFINITY),
        row(0, f32::NEG_INFINITY),
        row(3, f32::MAX),
        row(3, -f32::MAX),
        row(1, f32::NAN),
        row(0, f32::NAN),
        row(2, 0.0),
        // Past instance_count: never read.
        row(0, 0.5),
        row(7, 0.5),
    ];
    let counted = 10usize;
    let out = dispatch_raw_rows(&h, &lib, &rows, counted, SENTINEL);
    for (i, r) in rows.iter().enumerate() {
        let block = &out[i * stride..(i + 1) * stride];
        let ctx = format!("row {i} {r:?}: {block:?}");
        let written = match lib.tables().clip_table().get(r.clip as usize) {
            Some(c) if i < counted => c.output_width as usize,
            _ => 0,
        };
        assert!(
            block[written..]
                .iter()
                .all(|&x| x.to_bits() == SENTINEL.to_bits()),
            "written past the clip's output width: {ctx}"
        );
        if written == 0 {
            continue;
        }
        assert!(
            block[..written]
                .iter()
                .all(|&x| x.to_bits() != SENTINEL.to_bits()),
            "a track was not written: {ctx}"
        );
        let clip = &lib.clips()[r.clip as usize];
        for (j, track) in clip.tracks.iter().enumerate() {
            let (off, w) = lib.track_output(r.clip, j as u32).unwrap();
            let g = &block[off as usize..(off + w) as usize];
            let want = exact_value(track, r.time);
            if let Some(want) = want {
                assert_eq!(bits(g), bits(&want), "track {j}: {ctx}");
            }
        }
    }
}

/// Device loss surfaces as an error of the call that meets it, never as
/// a panic: after `device.destroy()`, sampling with an
/// existing sampler and creating a new sampler both return
/// `Error::DeviceLost` (tests/faults.rs checks every call).
/// (wgpu's own `create_buffer_init` panics when the mapping of a new
/// buffer fails; the sampler must not use it.)
#[test]
fn a_lost_device_is_an_error_not_a_panic() {
    let Some(h) = common::gpu("a_lost_device_is_an_error_not_a_panic") else {
        return;
    };
    let lib = library();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, 4).unwrap();
    let before = sampler.sample(&h.device, &h.queue, &[Instance::new(0, 0.5)]);
    assert!(before.is_ok(), "{before:?}");
    h.device.destroy();
    match sampler.sample(&h.device, &h.queue, &[Instance::new(0, 0.5)]) {
        Err(Error::DeviceLost { .. }) => {}
        other => panic!("sampling on a destroyed device: expected DeviceLost, got {other:?}"),
    }
    match super::sampler(&h.device, &h.queue, &lib, 4) {
        Err(Error::DeviceLost { .. }) => {}
        other => panic!("a sampler on a destroyed device: expected DeviceLost, got {other:?}"),
    }
}
