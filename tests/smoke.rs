mod common;
use keyframe_gpu::*;

#[test]
fn smoke() {
    let Some(h) = common::gpu("smoke") else {
        return;
    };
    let track = Track::new(
        0,
        Property::Translation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 0.0, 0.0, 2.0, 4.0, 6.0],
    );
    let rot = Track::new(
        1,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0],
    );
    let lib = AnimationLibrary::new(vec![Clip::new("m", vec![track, rot])]).unwrap();
    let mut s = GpuSampler::new(&h.device, &lib, 4).unwrap();
    let inst = [Instance::new(0, 0.25), Instance::new(0, 0.5)];
    let g = s.sample(&h.device, &h.queue, &inst).unwrap();
    let c = cpu::sample(&lib, &inst).unwrap();
    println!("{g:?}\n{c:?}");
    assert_eq!(g.len(), c.len());
    for (a, b) in g.iter().zip(&c) {
        assert!((a - b).abs() < 1e-6);
    }
}
