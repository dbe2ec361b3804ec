//! The pose, hierarchy, joint-matrix and morph-weight passes: the CPU chain
//! against transforms built by hand with glam (an independent code path),
//! and the GPU against the CPU twin within 1e-4 per element.
//!
//! Strategies: every GPU check runs each `SkinStrategy` the rig can take
//! (`strategies`: Staged, PerInstance, and PerNode up to
//! MAX_PARALLEL_NODES nodes) against the CPU twin of the staged chain, the
//! reference; the staged GPU run's local poses are compared too. The CPU
//! twin of PerInstance (`cpu_skin::skin_main`) is compared with the staged
//! one in every `gpu_vs_cpu` call, without an adapter. (The shaders'
//! naga checks, passes and bindings are in src/tests/layout.rs.)
//!
//! Tolerance (GPU vs CPU): 1e-4 absolute per matrix element, the bound the
//! issue sets. Both sides run the same f32 operations in the same order;
//! the differences come from the driver contracting multiply-adds (FMA) and
//! from the 2.5-ULP division WGSL allows, each ~1e-7 relative per
//! operation, amplified by the depth of the chain (up to 64 products here)
//! and by the size of the translations (up to a few units here, about a
//! hundred in Fox.glb).
//!
//! Hand checks (CPU vs glam): 1e-5, as the glam composition rounds
//! differently but uses exact rotations.
//!
//! Real assets (../shared/assets, skipped when absent): GPU vs CPU for every
//! clip, and both against an independent chain built only from the `gltf`
//! crate's readers and glam (its own decomposition, slerp, recursion
//! through `children`, general inverse), within 1e-4 absolute per element,
//! at key times and between keys (measured: at most 2.3e-5 on Fox.glb,
//! whose joint matrices have elements up to 88).

use super::common;
use crate::tests::twins::TestSkinTables;
use crate::tests::Derived;

use std::sync::Arc;

use super::facades::GpuSampler;
use super::facades::GpuSkinner;
use super::layout::MAX_UNROLLED_SLOTS;
use super::skin_entries as cpu_skin;
use crate::tests::common::headless::Headless;
use glam::{Mat4, Quat, Vec3, Vec4};
use keyframe_gpu::cpu::skin::SkinOutput;
use keyframe_gpu::error::RigError;
use keyframe_gpu::layout::{GpuLocalPose, MAX_FUSED_SKINS};
use keyframe_gpu::layout::{MAX_PARALLEL_NODES, UNIFORM_HEAD};
use keyframe_gpu::model::rig::{NodeTransform, Rig, RigMesh, RigNode, RigSkin};
use keyframe_gpu::plan::PlanChoices;
use keyframe_gpu::tables::rig::SkinTables;
use keyframe_gpu::FitError;
#[cfg(feature = "gltf")]
use keyframe_gpu::ImportErrorKind;
use keyframe_gpu::{
    AnimationLibrary, BindError, Clip, Error, Instance, Interpolation, Property, Track, WrapMode,
};
use keyframe_gpu::{DeviceProfile, Plan, SkinStrategy};

const GPU_TOL: f32 = 1e-4;
const HAND_TOL: f32 = 1e-5;

// ---------------------------------------------------------------- helpers

fn trs(t: [f32; 3], r: Quat, s: [f32; 3]) -> NodeTransform {
    NodeTransform::Trs {
        translation: t,
        rotation: r.to_array(),
        scale: s,
    }
}

fn glam_trs(t: [f32; 3], r: Quat, s: [f32; 3]) -> Mat4 {
    Mat4::from_scale_rotation_translation(Vec3::from(s), r, Vec3::from(t))
}

fn quat_values(qs: &[Quat]) -> Vec<f32> {
    qs.iter().flat_map(|q| q.to_array()).collect()
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "lengths differ");
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

fn flat(ms: &[Mat4]) -> Vec<f32> {
    ms.iter().flat_map(|m| m.to_cols_array()).collect()
}

fn assert_mat_close(label: &str, got: Mat4, want: Mat4, tol: f32) {
    let d = max_diff(&got.to_cols_array(), &want.to_cols_array());
    assert!(
        d <= tol,
        "{label}: max |diff| {d} > {tol}\n got  {got:?}\n want {want:?}"
    );
}

/// What the GPU stores (the local poses only with `SkinStrategy::Staged`;
/// the fused strategies keep them in registers, so they are checked
/// through the globals built from them).
struct GpuOut {
    locals: Vec<GpuLocalPose>,
    globals: Vec<f32>,
    joints: Vec<f32>,
    morph: Vec<f32>,
}

/// The local matrix of every local pose (the CPU twin's `local_matrix`).
fn local_mats(cpu: &SkinOutput) -> Vec<Mat4> {
    cpu.locals
        .iter()
        .map(|&p| cpu_skin::local_matrix(p))
        .collect()
}

fn flat_poses(poses: &[GpuLocalPose]) -> Vec<f32> {
    poses
        .iter()
        .flat_map(|p| [p.translation, p.rotation, p.scale])
        .flatten()
        .collect()
}

/// Samples and skins `instances` on the GPU in one encoder (no readback in
/// between) with the skin pass's `strategy`, then reads every output back.
fn run_gpu(
    h: &Headless,
    tables: &SkinTables,
    lib: &AnimationLibrary,
    inst: &[Instance],
    strategy: SkinStrategy,
) -> GpuOut {
    let mut sampler = super::sampler(&h.device, &h.queue, lib, inst.len() as u32).unwrap();
    let (mut skinner, plan) = skinner_with(&h.device, &sampler, tables, strategy).unwrap();
    assert_eq!(plan.skin, Some(strategy));
    // Wide accesses exactly on CPU adapters of devices with 64-bit
    // integers.
    assert_eq!(
        wide(&h.device, &plan),
        h.device.features().contains(wgpu::Features::SHADER_INT64)
            && h.adapter.get_info().device_type == wgpu::DeviceType::Cpu
    );
    sampler.set_instances(&h.queue, inst).unwrap();
    skinner.prepare(&h.queue, &sampler).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    sampler.record(&mut encoder);
    skinner.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    assert_eq!(
        skinner.locals_buffer().is_some(),
        strategy == SkinStrategy::Staged
    );
    GpuOut {
        locals: skinner.read_back_locals(&h.device, &h.queue).unwrap(),
        globals: skinner.read_back_globals(&h.device, &h.queue).unwrap(),
        joints: skinner.read_back_joints(&h.device, &h.queue).unwrap(),
        morph: skinner
            .read_back_morph_weights(&h.device, &h.queue)
            .unwrap(),
    }
}

/// The skin stage an animator builds on `sampler` for `tables` with
/// `strategy`: the plan for the sampler's library, capacity and sampler
/// plan (`Plan::with_tables`), then `GpuSkinner::from_plan`; with the
/// plan, whose `skin` and `wide_accesses` say what it chose.
fn skinner_with(
    device: &wgpu::Device,
    sampler: &GpuSampler,
    tables: &SkinTables,
    strategy: SkinStrategy,
) -> keyframe_gpu::Result<(GpuSkinner, Plan)> {
    let profile = DeviceProfile::of(device);
    let choices = PlanChoices {
        sampler: sampler.plan(),
        skin: strategy,
    };
    let plan = Plan::with_tables(
        sampler.library(),
        tables.clone(),
        sampler.capacity(),
        &profile,
        choices,
    )?;
    let skinner = GpuSkinner::from_plan(device, sampler, &plan, None)?;
    Ok((skinner, plan))
}

/// Whether a skin stage of `plan` on `device` accesses memory 64 bits a
/// component: the plan's choice where the device compiles it.
fn wide(device: &wgpu::Device, plan: &Plan) -> bool {
    plan.wide_accesses && device.features().contains(wgpu::Features::SHADER_INT64)
}

/// The skin strategies a rig can take: all three, or `Staged` and
/// `PerInstance` for rigs of more than `MAX_PARALLEL_NODES` nodes.
fn strategies(tables: &SkinTables) -> Vec<SkinStrategy> {
    let mut all = vec![SkinStrategy::Staged, SkinStrategy::PerInstance];
    if tables.node_count() <= MAX_PARALLEL_NODES {
        all.push(SkinStrategy::PerNode);
    }
    all
}

/// The CPU twin of `skin_main` (`PerInstance`) against the staged
/// reference on the same samples: globals equal bit for bit (the same
/// operations, locals from the same function), joint matrices within 1e-5
/// (a nested mesh node's inverse comes from another association of the
/// same products), morph weights equal.
fn check_per_instance_twin(
    name: &str,
    tables: &SkinTables,
    lib: &AnimationLibrary,
    inst: &[Instance],
    staged: &SkinOutput,
) {
    let resolved = crate::tables::instance::resolve_instances(lib, inst).unwrap();
    let mut samples = vec![0.0; resolved.len() * lib.output_stride() as usize];
    keyframe_gpu::cpu::sample::sample_resolved(lib.tables(), &resolved, &mut samples);
    let clips: Vec<u32> = resolved.iter().map(|r| r.clip).collect();
    let fused = cpu_skin::per_instance_resolved(tables, &samples, &clips);
    assert!(fused.locals.is_empty());
    assert_eq!(
        fused.globals, staged.globals,
        "{name}: per-instance globals"
    );
    assert_eq!(fused.morph_weights, staged.morph_weights, "{name}: morph");
    let d = max_diff(&flat(&fused.joints), &flat(&staged.joints));
    assert!(d <= 1e-5, "{name}: per-instance joints differ by {d}");
}

/// GPU vs the staged CPU reference for every output, with every strategy
/// the rig can take ([`strategies`]): the local poses too with `Staged`.
/// Also the CPU twin of `PerInstance` against the staged one: the same
/// globals bit for bit, joint matrices within 1e-5. Returns the staged
/// CPU output for further checks.
fn gpu_vs_cpu(
    name: &str,
    rig: &Rig,
    lib: &AnimationLibrary,
    inst: &[Instance],
) -> Option<SkinOutput> {
    let tables = SkinTables::new(rig, lib).unwrap();
    let cpu = cpu_skin::skin(&tables, lib, inst).unwrap();
    check_per_instance_twin(name, &tables, lib, inst, &cpu);
    let h = common::gpu(name)?;
    // The same passes on a device without the optional features (no wide
    // accesses): the same bits in every output.
    let plain = common::gpu_plain(name)?;
    for strategy in strategies(&tables) {
        let gpu = run_gpu(&h, &tables, lib, inst, strategy);
        let narrow = run_gpu(&plain, &tables, lib, inst, strategy);
        for (what, a, b) in [
            (
                "local poses",
                flat_poses(&gpu.locals),
                flat_poses(&narrow.locals),
            ),
            ("globals", gpu.globals.clone(), narrow.globals.clone()),
            ("joint matrices", gpu.joints.clone(), narrow.joints.clone()),
            ("morph weights", gpu.morph.clone(), narrow.morph.clone()),
        ] {
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
            assert!(
                bits(&a) == bits(&b),
                "{name} ({strategy:?}): {what}: wide and plain stores differ"
            );
        }
        if strategy == SkinStrategy::Staged {
            assert_eq!(gpu.locals.len(), cpu.locals.len(), "{name}: locals");
        } else {
            assert!(gpu.locals.is_empty());
        }
        for (what, g, c) in [
            (
                "local poses",
                &flat_poses(&gpu.locals),
                flat_poses(&cpu.locals),
            ),
            ("globals", &gpu.globals, flat(&cpu.globals)),
            ("joint matrices", &gpu.joints, flat(&cpu.joints)),
            ("morph weights", &gpu.morph, cpu.morph_weights.clone()),
        ] {
            if what == "local poses" && strategy != SkinStrategy::Staged {
                continue;
            }
            let d = max_diff(g, &c);
            eprintln!(
                "{name} ({strategy:?}): {what}: {} floats, max |gpu - cpu| = {d:e}",
                c.len()
            );
            assert!(
                d <= GPU_TOL,
                "{name} ({strategy:?}): {what}: max |gpu - cpu| = {d} > {GPU_TOL}"
            );
            assert!(
                g.iter().all(|x| x.is_finite()),
                "{name} ({strategy:?}): {what}: non-finite"
            );
        }
    }
    Some(cpu)
}

// ------------------------------------------------- CPU chain against glam

/// A 3-bone chain along +Y (joints at y = 0, 1, 2), skinned by a mesh node
/// that is a separate root at (2, 0, 0). Joint 1 turns from 0 to 90 degrees
/// about +Z between t = 0 and t = 1.
fn three_bone_chain() -> (Rig, AnimationLibrary) {
    let mut b = Rig::builder();
    let j0 = b.node(None, NodeTransform::IDENTITY);
    let j1 = b.node(Some(j0), NodeTransform::translation([0.0, 1.0, 0.0]));
    let j2 = b.node(Some(j1), NodeTransform::translation([0.0, 1.0, 0.0]));
    let mesh_node = b.node(None, NodeTransform::translation([2.0, 0.0, 0.0]));
    let mesh = b.mesh(0, vec![]);
    // Inverse bind matrices, by hand: the bind globals are translations by
    // (0, k, 0), so their inverses translate by (0, -k, 0).
    let ibm = |k: f32| Mat4::from_translation(Vec3::new(0.0, -k, 0.0)).to_cols_array();
    let skin = b.skin(vec![j0, j1, j2], vec![ibm(0.0), ibm(1.0), ibm(2.0)]);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    let rot = Track::new(
        j1,
        Property::Rotation,
        Interpolation::Linear,
        vec![0.0, 1.0],
        quat_values(&[
            Quat::IDENTITY,
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        ]),
    );
    let lib = AnimationLibrary::new(vec![Clip::new("bend", vec![rot])]).unwrap();
    (rig, lib)
}

#[test]
fn cpu_chain_matches_hand_built_joint_matrices() {
    let (rig, lib) = three_bone_chain();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    for (time, angle) in [(0.0f64, 0.0f32), (0.5, 45.0), (1.0, 90.0)] {
        let a = angle.to_radians();
        // By hand: G0 = I, G1 = T(0,1,0) R(a), G2 = G1 T(0,1,0); M = T(2,0,0).
        let g1 = Mat4::from_translation(Vec3::Y) * Mat4::from_rotation_z(a);
        let g2 = g1 * Mat4::from_translation(Vec3::Y);
        let m_inv = Mat4::from_translation(Vec3::new(-2.0, 0.0, 0.0));
        let want = [
            m_inv,
            m_inv * g1 * Mat4::from_translation(-Vec3::Y),
            m_inv * g2 * Mat4::from_translation(-2.0 * Vec3::Y),
        ];
        let skins = cpu_skin::joint_matrices_with(&tables, &lib, 0, time).unwrap();
        assert_eq!(skins.len(), 1);
        assert_eq!(skins[0].node, Some(3));
        assert_eq!(skins[0].joints.len(), 3);
        for (k, w) in want.iter().enumerate() {
            let got = Mat4::from_cols_array(&skins[0].joints[k]);
            assert_mat_close(&format!("t={time} joint {k}"), got, *w, HAND_TOL);
        }
        // And as numbers: joint 2's bind position (0, 2, 0) goes to the
        // bent tip (0, 1, 0) + R(a) (0, 1, 0), seen from the mesh node at x = 2.
        let tip = Mat4::from_cols_array(&skins[0].joints[2]) * Vec4::new(0.0, 2.0, 0.0, 1.0);
        let want_tip = Vec4::new(-a.sin() - 2.0, 1.0 + a.cos(), 0.0, 1.0);
        assert!(
            (tip - want_tip).abs().max_element() < HAND_TOL,
            "t={time}: tip {tip} != {want_tip}"
        );
    }
    // The bind pose (time 0) gives identity joint matrices once the mesh
    // node's own transform is taken out: M * J = G * IBM = I.
    let skins = cpu_skin::joint_matrices_with(&tables, &lib, 0, 0.0).unwrap();
    for j in &skins[0].joints {
        let m = Mat4::from_translation(Vec3::new(2.0, 0.0, 0.0)) * Mat4::from_cols_array(j);
        assert_mat_close("bind pose", m, Mat4::IDENTITY, HAND_TOL);
    }
}

#[test]
fn cpu_pose_stage_matches_hand_values() {
    // The pose stage alone (cpu::pose, the twin of pose.wgsl): node 1 of
    // the three-bone chain at t = 0.5 is its rest translation (0, 1, 0)
    // and scale 1, rotated 45 degrees about +Z (the slerp halfway); the
    // other nodes keep their rest pose. The staged output reports these
    // locals, and the per-instance twin (which keeps them in registers)
    // none.
    let (rig, lib) = three_bone_chain();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let out = cpu_skin::skin(&tables, &lib, &[Instance::new(0, 0.5)]).unwrap();
    assert_eq!(out.locals.len(), 4);
    let q = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    let want = GpuLocalPose {
        translation: [0.0, 1.0, 0.0, 0.0],
        rotation: q.to_array(),
        scale: [1.0, 1.0, 1.0, 0.0],
    };
    let got = out.locals[1];
    let d = max_diff(&flat_poses(&[got]), &flat_poses(&[want]));
    assert!(d <= HAND_TOL, "{got:?} != {want:?}");
    let rest = GpuLocalPose {
        translation: [2.0, 0.0, 0.0, 0.0],
        rotation: [0.0, 0.0, 0.0, 1.0],
        scale: [1.0, 1.0, 1.0, 0.0],
    };
    assert_eq!(out.locals[3], rest, "mesh node: rest pose, bit for bit");
    // local_pose itself, for the same node and time, from the samples.
    let resolved =
        crate::tables::instance::resolve_instances(&lib, &[Instance::new(0, 0.5)]).unwrap();
    let mut samples = vec![0.0; lib.output_stride() as usize];
    keyframe_gpu::cpu::sample::sample_resolved(lib.tables(), &resolved, &mut samples);
    assert_eq!(
        keyframe_gpu::cpu::pose::local_pose(&tables, &samples, 0, 0, 1),
        got
    );
}

/// The wide accesses (`skin_io_wide.wgsl`) are taken on a CPU
/// adapter whose device has `SHADER_INT64` (lavapipe on Vulkan has it, so
/// that `gpu_vs_cpu`'s comparison of wide and plain stores there compares
/// two paths), never on a device without it (llvmpipe on GL, or a device
/// created without the crate's optional features).
#[test]
fn wide_accesses_where_the_device_has_int64() {
    let (rig, lib) = three_bone_chain();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let name = "wide accesses";
    let (Some(h), Some(plain)) = (common::gpu(name), common::gpu_plain(name)) else {
        return;
    };
    let info = h.adapter.get_info();
    let has = h.device.features().contains(wgpu::Features::SHADER_INT64);
    assert_eq!(
        has,
        h.adapter.features().contains(wgpu::Features::SHADER_INT64),
        "the headless device asks for the crate's optional features"
    );
    if info.backend == wgpu::Backend::Vulkan && info.device_type == wgpu::DeviceType::Cpu {
        assert!(
            has,
            "lavapipe offers shaderInt64: the wide accesses must run here"
        );
    }
    for strategy in strategies(&tables) {
        let sampler = super::sampler(&h.device, &h.queue, &lib, 4).unwrap();
        let (_, plan) = skinner_with(&h.device, &sampler, &tables, strategy).unwrap();
        assert_eq!(
            wide(&h.device, &plan),
            has && info.device_type == wgpu::DeviceType::Cpu,
            "{strategy:?}"
        );
        let sampler = super::sampler(&plain.device, &plain.queue, &lib, 4).unwrap();
        let (_, plan) = skinner_with(&plain.device, &sampler, &tables, strategy).unwrap();
        assert!(!wide(&plain.device, &plan), "{strategy:?}: plain device");
    }
    eprintln!(
        "{name}: {} on {:?} ({})",
        if has { "wide" } else { "plain" },
        info.backend,
        info.name
    );
}

#[test]
fn gpu_skin_joints_match_the_cpu_api() {
    let (rig, lib) = three_bone_chain();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let Some(h) = common::gpu("skin joints api") else {
        return;
    };
    let times = [0.0, 0.5, 1.0, 2.0];
    let inst: Vec<Instance> = times.iter().map(|&t| Instance::new(0, t)).collect();
    let mut sampler = super::sampler(&h.device, &h.queue, &lib, 4).unwrap();
    let (mut skinner, _) = skinner_with(&h.device, &sampler, &tables, SkinStrategy::Auto).unwrap();
    sampler.set_instances(&h.queue, &inst).unwrap();
    skinner.prepare(&h.queue, &sampler).unwrap();
    let mut encoder = h.device.create_command_encoder(&Default::default());
    sampler.record(&mut encoder);
    skinner.record(&mut encoder);
    h.queue.submit([encoder.finish()]);
    let gpu = skinner.read_back_skin_joints(&h.device, &h.queue).unwrap();
    assert_eq!(gpu.len(), times.len());
    for (i, &t) in times.iter().enumerate() {
        let cpu = cpu_skin::joint_matrices(&rig, &lib, 0, t).unwrap();
        assert_eq!(gpu[i].len(), 1);
        assert_eq!((gpu[i][0].skin, gpu[i][0].node), (cpu[0].skin, cpu[0].node));
        let g: Vec<f32> = gpu[i][0].joints.iter().flatten().copied().collect();
        let c: Vec<f32> = cpu[0].joints.iter().flatten().copied().collect();
        assert_eq!(g.len(), 3 * 16);
        assert!(max_diff(&g, &c) <= GPU_TOL, "t={t}");
    }
}

#[test]
fn cpu_pieces_match_glam() {
    // compose_trs against glam, with non-uniform and negative scale.
    let q = Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 1.1);
    let t = Vec3::new(0.5, -2.0, 3.0);
    let s = Vec3::new(2.0, 0.5, -1.5);
    assert_mat_close(
        "compose_trs",
        cpu_skin::compose_trs(t, Vec4::from(q), s),
        Mat4::from_scale_rotation_translation(s, q, t),
        HAND_TOL,
    );
    // affine_inverse against glam's general inverse, with shear from a
    // rotated child under a non-uniformly scaled parent.
    let sheared = glam_trs([1.0, 2.0, 3.0], Quat::IDENTITY, [2.0, 0.5, 1.0])
        * glam_trs([0.0, 1.0, 0.0], Quat::from_rotation_z(0.7), [1.0, 1.0, 3.0]);
    assert_mat_close(
        "affine_inverse",
        cpu_skin::affine_inverse(sheared),
        sheared.inverse(),
        HAND_TOL,
    );
    assert_eq!(
        cpu_skin::affine_inverse(Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0))),
        Mat4::IDENTITY,
        "singular: identity"
    );
    // mat_mul is WGSL's product: column c of a * b is a * b[c].
    let a = sheared;
    let b = glam_trs(
        [3.0, 0.0, -1.0],
        Quat::from_rotation_x(0.3),
        [1.0, 2.0, 1.0],
    );
    assert_mat_close("mat_mul", cpu_skin::mat_mul(a, b), a * b, HAND_TOL);
    // affine_mul (the shader's products) is mat_mul for an affine left
    // factor, to the last bit, whatever the right factor; for a
    // projective left factor it is not the product.
    // Last row (0.5, 0, -1, 0): a perspective-like divide.
    let projective = Mat4::from_cols_array(&[
        1.0, 0.0, 0.0, 0.5, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, -1.0, -1.0, 0.0, 0.0, -0.2, 0.0,
    ]);
    for (name, l, r) in [
        ("sheared * trs", a, b),
        ("trs * sheared", b, a),
        ("trs * projective", b, projective),
    ] {
        let (got, want) = (cpu_skin::affine_mul(l, r), cpu_skin::mat_mul(l, r));
        assert_eq!(
            got.to_cols_array().map(f32::to_bits),
            want.to_cols_array().map(f32::to_bits),
            "affine_mul {name}"
        );
    }
    assert_ne!(
        cpu_skin::affine_mul(projective, b),
        cpu_skin::mat_mul(projective, b)
    );
    // affine_mul_affine (the products whose right factor is affine too)
    // is the same product when both factors are affine, equal as numbers
    // (a zero's sign may differ); for a projective right factor it is not.
    for (name, l, r) in [("sheared * trs", a, b), ("trs * sheared", b, a)] {
        assert_eq!(
            cpu_skin::affine_mul_affine(l, r).to_cols_array(),
            cpu_skin::mat_mul(l, r).to_cols_array(),
            "affine_mul_affine {name}"
        );
    }
    assert_ne!(
        cpu_skin::affine_mul_affine(b, projective),
        cpu_skin::mat_mul(b, projective)
    );
}

// ------------------------------------------------------------ GPU vs CPU

/// root (T, R about Y, S) -> a -> b; c is another root; mesh node m under
/// root, skinned by [root, a, b].
fn small_hierarchy() -> (Rig, AnimationLibrary) {
    let mut bld = Rig::builder();
    let root = bld.node(
        None,
        trs([1.0, 2.0, 3.0], Quat::from_rotation_y(0.5), [1.0, 1.0, 1.0]),
    );
    let a = bld.node(Some(root), NodeTransform::translation([0.0, 1.0, 0.0]));
    let b = bld.node(
        Some(a),
        trs(
            [0.0, 1.0, 0.0],
            Quat::from_rotation_x(0.35),
            [1.0, 1.0, 1.0],
        ),
    );
    let c = bld.node(None, NodeTransform::translation([-1.0, 0.0, 0.0]));
    let m = bld.node(Some(root), NodeTransform::translation([0.0, 0.0, 0.5]));
    let mesh = bld.mesh(0, vec![]);
    // Inverse bind matrices: inverses of the bind globals, by glam.
    let g_root = glam_trs([1.0, 2.0, 3.0], Quat::from_rotation_y(0.5), [1.0; 3]);
    let g_a = g_root * Mat4::from_translation(Vec3::Y);
    let g_b = g_a * glam_trs([0.0, 1.0, 0.0], Quat::from_rotation_x(0.35), [1.0; 3]);
    let skin = bld.skin(
        vec![root, a, b],
        [g_root, g_a, g_b]
            .map(|g| g.inverse().to_cols_array())
            .to_vec(),
    );
    bld.attach(m, mesh, Some(skin));
    let rig = bld.build().unwrap();
    let times: Arc<[f32]> = vec![0.0, 0.5, 1.0].into();
    let clip0 = Clip::new(
        "walk",
        vec![
            Track::new(
                a,
                Property::Rotation,
                Interpolation::Linear,
                times.clone(),
                quat_values(&[
                    Quat::IDENTITY,
                    Quat::from_rotation_z(0.8),
                    Quat::from_rotation_x(-0.6),
                ]),
            ),
            Track::new(
                b,
                Property::Translation,
                Interpolation::Step,
                times.clone(),
                vec![0.0, 1.0, 0.0, 0.5, 1.5, 0.0, 0.0, 2.0, 0.3],
            ),
            Track::new(
                root,
                Property::Scale,
                Interpolation::CubicSpline,
                vec![0.0, 1.0],
                vec![
                    0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.0, 0.0, //
                    0.0, 0.0, 0.0, 1.5, 0.8, 1.2, 0.0, 0.0, 0.0,
                ],
            ),
        ],
    );
    let clip1 = Clip::new(
        "wave",
        vec![Track::new(
            c,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 2.0],
            quat_values(&[Quat::IDENTITY, Quat::from_rotation_y(2.5)]),
        )],
    );
    (rig, AnimationLibrary::new(vec![clip0, clip1]).unwrap())
}

#[test]
fn hierarchy_rest_pose_and_instances_at_different_times() {
    let (rig, lib) = small_hierarchy();
    // The node table's chains, which skin_main walks (root, a, b; then c, a
    // root; then m, whose parent is the root, not the node before it): by
    // hand from the hierarchy above.
    let tables = SkinTables::new(&rig, &lib).unwrap();
    assert!(tables.parents_first());
    let chains: Vec<u32> = tables.nodes().iter().map(|n| n.chain).collect();
    assert_eq!(chains, [3, 2, 1, 1, 1]);
    let inst = [
        Instance::new(0, -0.5),
        Instance::new(0, 0.0),
        Instance::new(0, 0.25),
        Instance::new(0, 0.5),
        Instance::new(0, 0.9),
        Instance::new(0, 3.0),
        Instance::new(1, 0.7),
        Instance::new(1, 5.3).with_wrap(WrapMode::Repeat),
        Instance::new(0, 1.7).with_wrap(WrapMode::PingPong),
    ];
    let Some(cpu) = gpu_vs_cpu("hierarchy", &rig, &lib, &inst) else {
        return;
    };
    // Rest pose: clip 1 animates only c, so every other node of instance 6
    // has its rest local matrix, and the instance's joint matrices are the
    // bind pose: M * J = G(joint) * IBM = I.
    let n = rig.nodes().len();
    for node in [0u32, 1, 2, 4] {
        assert_mat_close(
            &format!("rest local {node}"),
            cpu_skin::local_matrix(cpu.locals[6 * n + node as usize]),
            rig.rest_local(node).unwrap(),
            HAND_TOL,
        );
    }
    let g_m = cpu.globals[6 * n + 4];
    for j in 0..3 {
        assert_mat_close(
            "bind pose",
            g_m * cpu.joints[6 * 3 + j],
            Mat4::IDENTITY,
            1e-5,
        );
    }
    // Hierarchy: global(b) = L(root) L(a) L(b) for an animated instance.
    let l = &local_mats(&cpu)[2 * n..3 * n];
    assert_mat_close(
        "global b",
        cpu.globals[2 * n + 2],
        l[0] * l[1] * l[2],
        HAND_TOL,
    );
}

/// Two instances of the small hierarchy, one per clip.
fn two_instances() -> [Instance; 2] {
    [Instance::new(0, 0.25), Instance::new(1, 0.7)]
}

/// A device, the small hierarchy's rig, library and tables, and a sampler
/// of two instances (`None`: no adapter, with a skip line naming `test`).
fn small_hierarchy_on(
    test: &str,
) -> Option<(Headless, Rig, AnimationLibrary, SkinTables, GpuSampler)> {
    let (rig, lib) = small_hierarchy();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let h = common::gpu(test)?;
    let sampler = super::sampler(&h.device, &h.queue, &lib, 2).unwrap();
    Some((h, rig, lib, tables, sampler))
}

#[test]
fn skinner_reads_the_samplers_instance_table() {
    // The skinner has no instance table of its own: after the sampler's
    // table changes (clips swapped), prepare() alone makes the skinner pose
    // each instance with its new clip. A skinner given another sampler is
    // refused.
    let Some((h, rig, lib, tables, mut sampler)) =
        small_hierarchy_on("skinner_reads_the_samplers_instance_table")
    else {
        return;
    };
    let first = two_instances();
    let swapped = [first[1], first[0]];
    for strategy in strategies(&tables) {
        let (mut skinner, _) = skinner_with(&h.device, &sampler, &tables, strategy).unwrap();
        let mut globals = Vec::new();
        for inst in [&first, &swapped] {
            sampler.set_instances(&h.queue, inst).unwrap();
            skinner.prepare(&h.queue, &sampler).unwrap();
            assert_eq!(skinner.instance_count(), 2);
            let mut encoder = h.device.create_command_encoder(&Default::default());
            sampler.record(&mut encoder);
            skinner.record(&mut encoder);
            h.queue.submit([encoder.finish()]);
            let gpu = skinner.read_back_globals(&h.device, &h.queue).unwrap();
            let cpu = cpu_skin::skin(&tables, &lib, inst).unwrap();
            let d = max_diff(&gpu, &flat(&cpu.globals));
            assert!(d <= GPU_TOL, "{strategy:?}: {d}");
            globals.push(gpu);
        }
        // The two instances' poses differ, and swapped places.
        let per = 16 * rig.nodes().len();
        assert!(max_diff(&globals[0][..per], &globals[0][per..]) > 0.1);
        assert!(max_diff(&globals[0][..per], &globals[1][per..]) <= GPU_TOL);
        let other = super::sampler(&h.device, &h.queue, &lib, 2).unwrap();
        assert!(matches!(
            skinner.prepare(&h.queue, &other),
            Err(Error::Fit(FitError::OtherSampler))
        ));
    }
}

#[test]
fn a_mixer_can_rewrite_the_local_poses_between_the_stages() {
    // Staged: the pose pass's output is the locals buffer, and the
    // hierarchy pass reads it. Record the pose stage, rewrite node a's
    // local rotation in the buffer (as a mixer would), then record the
    // hierarchy: the globals are the CPU twin's hierarchy_main of the
    // rewritten locals, and differ from those of the sampled pose.
    let Some((h, rig, lib, tables, mut sampler)) =
        small_hierarchy_on("a_mixer_can_rewrite_the_local_poses_between_the_stages")
    else {
        return;
    };
    let inst = two_instances();
    let (mut skinner, _) =
        skinner_with(&h.device, &sampler, &tables, SkinStrategy::Staged).unwrap();
    sampler.set_instances(&h.queue, &inst).unwrap();
    skinner.prepare(&h.queue, &sampler).unwrap();
    let run = |record: &dyn Fn(&mut wgpu::ComputePass<'_>)| {
        let mut encoder = h.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            record(&mut pass);
        }
        h.queue.submit([encoder.finish()]);
    };
    run(&|pass| {
        sampler.record_pass(pass);
        skinner.record_pose_pass(pass);
    });
    let cpu = cpu_skin::skin(&tables, &lib, &inst).unwrap();
    let locals = skinner.read_back_locals(&h.device, &h.queue).unwrap();
    assert!(max_diff(&flat_poses(&locals), &flat_poses(&cpu.locals)) <= GPU_TOL);
    // The mixer: node 1 (a) of both instances turned 1 radian about +X.
    let n = rig.nodes().len();
    let mut mixed = locals.clone();
    for i in 0..inst.len() {
        mixed[i * n + 1].rotation = Quat::from_rotation_x(1.0).to_array();
    }
    h.queue.write_buffer(
        skinner.locals_buffer().unwrap(),
        0,
        bytemuck::cast_slice(&mixed),
    );
    run(&|pass| skinner.record_hierarchy_pass(pass));
    let gpu = skinner.read_back_globals(&h.device, &h.queue).unwrap();
    let mut globals = vec![Mat4::IDENTITY; inst.len() * n];
    let mut joints = vec![Mat4::IDENTITY; inst.len() * tables.joint_count() as usize];
    for i in 0..inst.len() as u32 {
        cpu_skin::hierarchy_main(&tables, &mixed, i, &mut globals, &mut joints);
    }
    let d = max_diff(&gpu, &flat(&globals));
    assert!(d <= GPU_TOL, "globals of the rewritten locals: {d}");
    let joint_gpu = skinner.read_back_joints(&h.device, &h.queue).unwrap();
    assert!(max_diff(&joint_gpu, &flat(&joints)) <= GPU_TOL);
    assert!(
        max_diff(&gpu, &flat(&cpu.globals)) > 0.1,
        "the rewrite changed the pose"
    );
}

#[test]
fn matrix_only_nodes() {
    let m0 = glam_trs(
        [0.5, 0.0, -1.0],
        Quat::from_rotation_y(0.4),
        [1.0, 2.0, 1.0],
    );
    let m1 = glam_trs(
        [0.0, 1.0, 0.0],
        Quat::from_rotation_z(-0.9),
        [0.5, 0.5, 0.5],
    );
    // A negative determinant (mirror) decomposes too.
    let m2 = glam_trs(
        [0.0, 1.0, 0.2],
        Quat::from_rotation_x(0.3),
        [-1.0, 1.0, 1.0],
    );
    let mut b = Rig::builder();
    let n0 = b.node(None, NodeTransform::Matrix(m0.to_cols_array()));
    let n1 = b.node(Some(n0), NodeTransform::Matrix(m1.to_cols_array()));
    let n2 = b.node(Some(n1), NodeTransform::Matrix(m2.to_cols_array()));
    let n3 = b.node(Some(n2), NodeTransform::translation([0.0, 1.0, 0.0]));
    let mesh_node = b.node(None, NodeTransform::Matrix(m1.to_cols_array()));
    let mesh = b.mesh(0, vec![]);
    let ibms = [
        m0,
        m0 * m1,
        m0 * m1 * m2,
        m0 * m1 * m2 * Mat4::from_translation(Vec3::Y),
    ]
    .map(|g| g.inverse().to_cols_array())
    .to_vec();
    let skin = b.skin(vec![n0, n1, n2, n3], ibms);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    for (node, m) in [(n0, m0), (n1, m1), (n2, m2)] {
        assert_mat_close(
            &format!("decomposed node {node}"),
            rig.rest_local(node).unwrap(),
            m,
            HAND_TOL,
        );
    }
    let lib = AnimationLibrary::new(vec![Clip::new(
        "tip",
        vec![Track::new(
            n3,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            quat_values(&[Quat::IDENTITY, Quat::from_rotation_x(1.0)]),
        )],
    )])
    .unwrap();
    let inst = [Instance::new(0, 0.0), Instance::new(0, 0.6)];
    let Some(cpu) = gpu_vs_cpu("matrix nodes", &rig, &lib, &inst) else {
        return;
    };
    assert_mat_close("global n2", cpu.globals[2], m0 * m1 * m2, 1e-5);
}

#[test]
fn non_uniform_scale() {
    let mut b = Rig::builder();
    let p = b.node(None, trs([0.0, 0.0, 0.0], Quat::IDENTITY, [2.0, 0.5, 1.0]));
    let c = b.node(
        Some(p),
        trs(
            [0.0, 1.0, 0.0],
            Quat::from_rotation_z(0.785),
            [1.0, 3.0, 1.0],
        ),
    );
    let g = b.node(Some(c), NodeTransform::translation([0.0, 1.0, 0.0]));
    // The mesh node sits under the sheared child: its inverse is not a
    // rotation-and-scale.
    let m = b.node(
        Some(c),
        trs([0.3, 0.0, 0.0], Quat::from_rotation_y(0.2), [1.0, 1.0, 0.7]),
    );
    let mesh = b.mesh(0, vec![]);
    let skin = b.skin(vec![p, c, g], vec![Mat4::IDENTITY.to_cols_array(); 3]);
    b.attach(m, mesh, Some(skin));
    let rig = b.build().unwrap();
    let lib = AnimationLibrary::new(vec![Clip::new(
        "squash",
        vec![Track::new(
            p,
            Property::Scale,
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![2.0, 0.5, 1.0, 0.5, 3.0, 1.5],
        )],
    )])
    .unwrap();
    let inst = [
        Instance::new(0, 0.0),
        Instance::new(0, 0.3),
        Instance::new(0, 1.0),
    ];
    let Some(cpu) = gpu_vs_cpu("non-uniform scale", &rig, &lib, &inst) else {
        return;
    };
    // Joint matrix of c (identity IBM) = inverse(G(m)) G(c), checked with
    // glam's general inverse at t = 0.
    let (gm, gc) = (cpu.globals[3], cpu.globals[1]);
    assert_mat_close("sheared joint", cpu.joints[1], gm.inverse() * gc, 1e-4);
}

#[test]
fn deep_chain_of_64() {
    const DEPTH: usize = 64;
    let step = Quat::from_axis_angle(Vec3::new(0.3, 0.2, 1.0).normalize(), 0.09);
    let mut b = Rig::builder();
    let mut parent = None;
    let mut joints = Vec::new();
    let mut bind = Mat4::IDENTITY;
    let mut ibms = Vec::new();
    for k in 0..DEPTH {
        let t = if k == 0 { [0.0; 3] } else { [0.0, 0.1, 0.0] };
        let n = b.node(parent, trs(t, step, [1.0; 3]));
        bind *= glam_trs(t, step, [1.0; 3]);
        ibms.push(bind.inverse().to_cols_array());
        joints.push(n);
        parent = Some(n);
    }
    let mesh_node = b.node(None, NodeTransform::translation([0.0, -1.0, 0.0]));
    let mesh = b.mesh(0, vec![]);
    let skin = b.skin(joints.clone(), ibms);
    b.attach(mesh_node, mesh, Some(skin));
    let rig = b.build().unwrap();
    // The last joint is 63 parents below the root.
    let mut depth = 0;
    let mut node = joints[DEPTH - 1];
    while let Some(parent) = rig.nodes()[node as usize].parent {
        (node, depth) = (parent, depth + 1);
    }
    assert_eq!(depth, 63);
    let bend = |node: u32| {
        Track::new(
            node,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            quat_values(&[step, Quat::from_rotation_x(0.5) * step]),
        )
    };
    let lib =
        AnimationLibrary::new(vec![Clip::new("coil", vec![bend(0), bend(31), bend(63)])]).unwrap();
    // Rotations only, each 4 floats from the start of the output block:
    // the pose reads them as vec4s (ROTATIONS_ALIGNED4), and the GPU
    // against the CPU below covers that path; small_hierarchy's rotations,
    // in a block of 10 floats, take the float reads.
    // It animates neither translations nor scales, so those reads are left
    // out (ANIMATED_TRANSLATIONS, ANIMATED_SCALES); small_hierarchy animates
    // both.
    let tables = SkinTables::new(&rig, &lib).unwrap();
    assert!(tables.rotations_aligned4());
    assert!(!tables.animates_translations() && !tables.animates_scales());
    let (small_rig, small_lib) = small_hierarchy();
    let small = SkinTables::new(&small_rig, &small_lib).unwrap();
    assert!(!small.rotations_aligned4());
    assert!(small.animates_translations() && small.animates_scales());
    let inst: Vec<Instance> = (0..5)
        .map(|i| Instance::new(0, f64::from(i) * 0.25))
        .collect();
    let Some(cpu) = gpu_vs_cpu("deep chain", &rig, &lib, &inst) else {
        return;
    };
    // The deepest global equals the product of the 64 locals, taken in
    // order from the root with glam.
    let n = rig.nodes().len();
    for i in [0usize, 3] {
        let product = local_mats(&cpu)[i * n..i * n + DEPTH]
            .iter()
            .fold(Mat4::IDENTITY, |acc, l| acc * *l);
        assert_mat_close(
            "deepest global",
            cpu.globals[i * n + DEPTH - 1],
            product,
            1e-4,
        );
    }
    // At time 0 the chain is in its bind pose: M * J = I for every joint.
    let m = Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0));
    for j in 0..DEPTH {
        assert_mat_close("deep bind pose", m * cpu.joints[j], Mat4::IDENTITY, 1e-4);
    }
}

#[test]
fn several_skins_sharing_joints_and_out_of_order_nodes() {
    let rig = out_of_order_rig();
    assert_eq!(rig.order(), &[1, 5, 7, 2, 0, 6, 3, 4]);
    assert_eq!(rig.skins()[0].mesh_node, Some(5), "lowest-index user");
    assert_eq!(rig.skins()[1].mesh_node, Some(6));
    let lib = shared_joint_clip();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    // Children listed before their parents: the walk through
    // global_matrix, not chain by chain.
    assert!(!tables.parents_first());
    assert_eq!(tables.skin_offsets(), &[0, 3]);
    assert_eq!(tables.skin_nodes(), &[Some(5), Some(6)]);
    // Node -> slot links: node 2 is slot 1 (skin 0) and slot 3 (skin 1),
    // node 0 slots 2 and 4; nodes without joints link nothing.
    let first: Vec<i32> = tables.nodes().iter().map(|n| n.first_joint).collect();
    assert_eq!(first, [2, 0, 1, 5, 6, -1, -1, -1]);
    let next: Vec<i32> = tables.joints().iter().map(|j| j.next_joint).collect();
    assert_eq!(next, [-1, 3, 4, -1, -1, -1, -1]);
    let params = tables.params(2);
    assert_eq!((params.skin_count, params.mesh_nodes), (2, [5, 6, -1, -1]));
    let inst = [Instance::new(0, 0.2), Instance::new(0, 0.8)];
    let Some(cpu) = gpu_vs_cpu("shared joints", &rig, &lib, &inst) else {
        return;
    };
    assert_globals_chain(&rig, &cpu, inst.len());
    // Node 2 is a joint of both skins: same global, different mesh nodes.
    let n = rig.nodes().len();
    let g2 = cpu.globals[n + 2];
    assert_mat_close(
        "skin 0 joint 1",
        cpu.joints[7 + 1],
        cpu.globals[n + 5].inverse()
            * g2
            * Mat4::from_cols_array(&translation_ibm([0.0, 1.0, 0.0])),
        1e-4,
    );
    assert_mat_close(
        "skin 1 joint 0",
        cpu.joints[7 + 3],
        cpu.globals[n + 6].inverse()
            * g2
            * Mat4::from_cols_array(&translation_ibm([0.0, 1.0, 0.0])),
        1e-4,
    );
}

/// The inverse bind matrix of a joint bound at translation `t`.
fn translation_ibm(t: [f32; 3]) -> [f32; 16] {
    Mat4::from_translation(-Vec3::from(t)).to_cols_array()
}

/// Two skins sharing joints 2 and 0, over nodes listed before their
/// parents.
fn out_of_order_rig() -> Rig {
    // Node 0's parent is node 2, node 2's parent is node 1: children come
    // before their parents in the file.
    let node = |parent: Option<u32>, t: [f32; 3], r: Quat, mesh, skin| RigNode {
        name: None,
        parent,
        translation: t,
        rotation: r.to_array(),
        scale: [1.0; 3],
        mesh,
        skin,
    };
    let nodes = vec![
        node(
            Some(2),
            [0.0, 1.0, 0.0],
            Quat::from_rotation_z(0.2),
            None,
            None,
        ), // 0
        node(None, [0.0, 0.0, 0.0], Quat::IDENTITY, None, None), // 1
        node(
            Some(1),
            [0.0, 1.0, 0.0],
            Quat::from_rotation_x(0.1),
            None,
            None,
        ), // 2
        node(Some(0), [0.0, 1.0, 0.0], Quat::IDENTITY, None, None), // 3
        node(Some(3), [0.5, 0.0, 0.0], Quat::IDENTITY, None, None), // 4
        node(None, [3.0, 0.0, 0.0], Quat::IDENTITY, Some(0), Some(0)), // 5
        node(
            Some(2),
            [0.0, 0.0, 1.0],
            Quat::from_rotation_y(1.0),
            Some(0),
            Some(1),
        ), // 6
        node(None, [9.0, 9.0, 9.0], Quat::IDENTITY, Some(0), Some(0)), // 7
    ];
    let skins = vec![
        RigSkin {
            name: None,
            joints: vec![1, 2, 0],
            inverse_bind_matrices: vec![
                translation_ibm([0.0; 3]),
                translation_ibm([0.0, 1.0, 0.0]),
                translation_ibm([0.0, 2.0, 0.0]),
            ],
            mesh_node: None,
        },
        RigSkin {
            name: None,
            joints: vec![2, 0, 3, 4],
            inverse_bind_matrices: vec![
                translation_ibm([0.0, 1.0, 0.0]),
                translation_ibm([0.0, 2.0, 0.0]),
                translation_ibm([0.0, 3.0, 0.0]),
                translation_ibm([0.5, 3.0, 0.0]),
            ],
            mesh_node: None,
        },
    ];
    Rig::from_parts(nodes, skins, vec![RigMesh::default()]).unwrap()
}

/// A clip moving node 2 (a joint of both skins of [`out_of_order_rig`])
/// and node 0.
fn shared_joint_clip() -> AnimationLibrary {
    AnimationLibrary::new(vec![Clip::new(
        "shared",
        vec![
            Track::new(
                2,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                quat_values(&[Quat::from_rotation_x(0.1), Quat::from_rotation_x(-0.7)]),
            ),
            Track::new(
                0,
                Property::Translation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0, 1.0, 0.0, 0.4, 1.2, 0.0],
            ),
        ],
    )])
    .unwrap()
}

/// Every global of `instances` instances of `rig` in `cpu` is its
/// parent's global times its local (glam products of the separately
/// computed locals).
fn assert_globals_chain(rig: &Rig, cpu: &SkinOutput, instances: usize) {
    let n = rig.nodes().len();
    // Every global is its parent's global times its local (glam products
    // of the separately computed locals), also for nodes listed before
    // their parents, whose ancestors' locals the walk recomputes.
    let locals = local_mats(cpu);
    for i in 0..instances {
        for node in 0..n {
            let want = match rig.nodes()[node].parent {
                Some(p) => cpu.globals[i * n + p as usize] * locals[i * n + node],
                None => locals[i * n + node],
            };
            assert_mat_close(
                &format!("instance {i} node {node}"),
                cpu.globals[i * n + node],
                want,
                HAND_TOL,
            );
        }
    }
}

#[test]
fn morph_weights_animated_or_default() {
    let mut b = Rig::builder();
    let n0 = b.node(None, NodeTransform::IDENTITY);
    let n1 = b.node(None, NodeTransform::IDENTITY);
    let n2 = b.node(None, NodeTransform::IDENTITY);
    let m0 = b.mesh(3, vec![0.1, 0.2, 0.3]);
    let m1 = b.mesh(2, vec![]);
    b.attach(n0, m0, None);
    b.attach(n1, m0, None);
    b.attach(n2, m1, None);
    let rig = b.build().unwrap();
    let weights = Track::weights(
        n1,
        3,
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![0.0, 0.5, 1.0, 1.0, 0.25, 0.0],
    );
    let move_n2 = Track::new(
        n2,
        Property::Translation,
        Interpolation::Step,
        vec![0.0],
        vec![1.0, 2.0, 3.0],
    );
    let lib = AnimationLibrary::new(vec![
        Clip::new("morph", vec![move_n2.clone(), weights]),
        Clip::new("still", vec![move_n2]),
    ])
    .unwrap();
    let inst = [
        Instance::new(0, 1.0),
        Instance::new(0, 0.5),
        Instance::new(1, 0.5),
    ];
    let Some(cpu) = gpu_vs_cpu("morph weights", &rig, &lib, &inst) else {
        return;
    };
    // Per instance: mesh 0 (3 weights) then mesh 1 (2 weights).
    let want = [
        1.0, 0.25, 0.0, 0.0, 0.0, // key 1 as is; mesh 1 defaults to zeros
        0.5, 0.375, 0.5, 0.0, 0.0, // halfway
        0.1, 0.2, 0.3, 0.0, 0.0, // clip without weights: defaults
    ];
    let d = max_diff(&cpu.morph_weights, &want);
    assert!(
        d < 1e-7,
        "morph weights {:?} != {want:?}",
        cpu.morph_weights
    );
}

#[test]
fn two_dimensional_dispatch_and_its_limit() {
    // With at most 2 workgroups per dimension (256 invocations of 64 per
    // grid): 200 instances of one track each need a 2 x 2 grid for the
    // sampler, the skin pass (one invocation per instance) and the morph
    // pass (one per instance and mesh, one mesh here).
    use crate::tests::common::headless::{request_device_with, AdapterChoice, DeviceOptions};
    let h = match request_device_with(&DeviceOptions::new(AdapterChoice::Fallback), |l| {
        wgpu::Limits {
            max_compute_workgroups_per_dimension: 2,
            ..l
        }
    }) {
        Ok(h) => h,
        Err(e) => {
            if std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() == Ok("1") {
                panic!("no adapter: {e}");
            }
            eprintln!("SKIP two_dimensional_dispatch: {e}");
            return;
        }
    };
    let (rig, _) = small_hierarchy();
    let bend = |node: u32| {
        Track::new(
            node,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            quat_values(&[Quat::IDENTITY, Quat::from_rotation_z(0.8)]),
        )
    };
    let lib = AnimationLibrary::new(vec![Clip::new("bend", vec![bend(1)])]).unwrap();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let inst: Vec<Instance> = (0..200)
        .map(|i| Instance::new(0, f64::from(i) * 0.005))
        .collect();
    // PerInstance: 200 instances on a 2 x 2 grid of 64 invocations.
    // PerNode: one workgroup per instance, so 4 instances fill the grid.
    let few: Vec<Instance> = (0..4)
        .map(|i| Instance::new(0, f64::from(i) * 0.3))
        .collect();
    // Staged: the pose pass runs one invocation per instance and node (5
    // nodes), so 50 instances take 250 invocations on the 2 x 2 grid.
    let fifty = &inst[..50];
    for (strategy, inst) in [
        (SkinStrategy::PerInstance, &inst[..]),
        (SkinStrategy::PerNode, &few[..]),
        (SkinStrategy::Staged, fifty),
    ] {
        let cpu = cpu_skin::skin(&tables, &lib, inst).unwrap();
        let gpu = run_gpu(&h, &tables, &lib, inst, strategy);
        assert!(max_diff(&gpu.globals, &flat(&cpu.globals)) <= GPU_TOL);
        assert!(max_diff(&gpu.joints, &flat(&cpu.joints)) <= GPU_TOL);
        // The last instance is not the first one's pose (the grid's second
        // row ran).
        let n = rig.nodes().len();
        let last = (inst.len() - 1) * 16 * n;
        assert!(
            max_diff(&gpu.globals[..16 * n], &gpu.globals[last..]) > 0.1,
            "{strategy:?}"
        );
    }
    // Two meshes: 150 instances fit the sampler and the skin pass (150
    // invocations) but not the morph pass (300 > 2 * 2 * 64), refused
    // before anything is created.
    let mut b = Rig::builder();
    let n0 = b.node(None, NodeTransform::IDENTITY);
    let n1 = b.node(Some(n0), NodeTransform::translation([0.0, 1.0, 0.0]));
    // (One morph target each: the morph pass runs only for meshes with
    // targets.)
    let m0 = b.mesh(1, vec![0.5]);
    let m1 = b.mesh(1, vec![0.5]);
    b.attach(n0, m0, None);
    b.attach(n1, m1, None);
    let rig2 = b.build().unwrap();
    let tables2 = SkinTables::new(&rig2, &lib).unwrap();
    let sampler = super::sampler(&h.device, &h.queue, &lib, 150).unwrap();
    assert!(matches!(
        skinner_with(&h.device, &sampler, &tables2, SkinStrategy::Auto),
        Err(Error::LimitExceeded {
            needed: 300,
            limit: 2,
            ..
        })
    ));
    // PerNode: one workgroup of 64 per instance, 150 * 64 invocations.
    let one_mesh = SkinTables::new(&rig, &lib).unwrap();
    assert!(matches!(
        skinner_with(&h.device, &sampler, &one_mesh, SkinStrategy::PerNode),
        Err(Error::LimitExceeded {
            needed: 9600,
            limit: 2,
            ..
        })
    ));
}

// ----------------------------------------------------------------- errors

#[test]
fn skin_strategy_auto_and_the_per_node_limit() {
    let Some(h) = common::gpu("skin_strategy_auto_and_the_per_node_limit") else {
        return;
    };
    let (rig, lib) = three_bone_chain();
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let sampler = super::sampler(&h.device, &h.queue, &lib, 4).unwrap();
    let (_, auto) = skinner_with(&h.device, &sampler, &tables, SkinStrategy::Auto).unwrap();
    let want = if h.device.adapter_info().device_type == wgpu::DeviceType::Cpu {
        SkinStrategy::PerInstance
    } else {
        SkinStrategy::PerNode
    };
    assert_eq!(auto.skin, Some(want));
    // A chain one node longer than a workgroup holds: Auto walks it per
    // instance, PerNode is refused with the numbers.
    let mut b = Rig::builder();
    let mut parent = None;
    for _ in 0..=MAX_PARALLEL_NODES {
        parent = Some(b.node(parent, NodeTransform::translation([0.0, 1.0, 0.0])));
    }
    let long = b.build().unwrap();
    let long_tables = SkinTables::new(&long, &lib).unwrap();
    let (_, auto) = skinner_with(&h.device, &sampler, &long_tables, SkinStrategy::Auto).unwrap();
    assert_eq!(auto.skin, Some(SkinStrategy::PerInstance));
    // Staged takes rigs of any size.
    let (staged, plan) =
        skinner_with(&h.device, &sampler, &long_tables, SkinStrategy::Staged).unwrap();
    assert_eq!(plan.skin, Some(SkinStrategy::Staged));
    assert!(staged.locals_buffer().is_some());
    let err = skinner_with(&h.device, &sampler, &long_tables, SkinStrategy::PerNode).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LimitExceeded {
                needed: 129,
                limit: 128,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn invalid_rigs_are_refused() {
    let node = |parent| RigNode {
        name: None,
        parent,
        translation: [0.0; 3],
        rotation: [0.0, 0.0, 0.0, 1.0],
        scale: [1.0; 3],
        mesh: None,
        skin: None,
    };
    assert_eq!(
        Rig::from_parts(vec![], vec![], vec![]),
        Err(RigError::NoNodes)
    );
    assert_eq!(
        Rig::from_parts(vec![node(Some(1)), node(Some(0))], vec![], vec![]),
        Err(RigError::Cycle { node: 0 })
    );
    assert!(matches!(
        Rig::from_parts(vec![node(Some(5))], vec![], vec![]),
        Err(RigError::ParentOutOfRange {
            node: 0,
            parent: 5,
            ..
        })
    ));
    let skin = RigSkin {
        name: None,
        joints: vec![0],
        inverse_bind_matrices: vec![],
        mesh_node: None,
    };
    assert!(matches!(
        Rig::from_parts(vec![node(None)], vec![skin], vec![]),
        Err(RigError::InverseBindCount {
            skin: 0,
            expected: 1,
            found: 0
        })
    ));
    let mut zero = node(None);
    zero.rotation = [0.0; 4];
    assert!(matches!(
        Rig::from_parts(vec![zero], vec![], vec![]),
        Err(RigError::BadRestTransform {
            node: 0,
            what: "rotation"
        })
    ));
    let mut b = Rig::builder();
    b.node(
        None,
        NodeTransform::Matrix(Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0)).to_cols_array()),
    );
    assert_eq!(b.build(), Err(RigError::MatrixNotDecomposable { node: 0 }));
}

/// A rig of two root nodes, the second with a mesh of 2 morph targets.
fn two_nodes_one_mesh() -> Rig {
    let mut b = Rig::builder();
    let _ = b.node(None, NodeTransform::IDENTITY);
    let n1 = b.node(None, NodeTransform::IDENTITY);
    let mesh = b.mesh(2, vec![]);
    b.attach(n1, mesh, None);
    b.build().unwrap()
}

/// The skin tables of `rig` and a one-clip library of `tracks`.
fn tables_of(rig: &Rig, tracks: Vec<Track>) -> keyframe_gpu::Result<SkinTables> {
    SkinTables::new(
        rig,
        &AnimationLibrary::new(vec![Clip::new("c", tracks)]).unwrap(),
    )
}

/// A one-key STEP translation of `node`.
fn step_translation(node: u32) -> Track {
    Track::new(
        node,
        Property::Translation,
        Interpolation::Step,
        vec![0.0],
        vec![0.0; 3],
    )
}

/// A one-key STEP weights track of `node`, `width` targets wide.
fn step_weights(node: u32, width: u32) -> Track {
    Track::weights(
        node,
        width,
        Interpolation::Step,
        vec![0.0],
        vec![0.0; width as usize],
    )
}

#[test]
fn libraries_that_do_not_fit_the_rig_are_refused() {
    let rig = two_nodes_one_mesh();
    let (n0, n1) = (0, 1);
    let tables = |tracks| tables_of(&rig, tracks);
    let (tr, w) = (step_translation, step_weights);
    assert!(matches!(
        tables(vec![tr(7)]),
        Err(Error::Bind(BindError::NodeOutOfRange {
            clip: 0,
            track: 0,
            node: 7,
            ..
        }))
    ));
    assert!(matches!(
        tables(vec![tr(0), tr(1), tr(0)]),
        Err(Error::Bind(BindError::DuplicateChannel {
            track: 2,
            first: 0,
            node: 0,
            ..
        }))
    ));
    assert!(matches!(
        tables(vec![w(n0, 2)]),
        Err(Error::Bind(BindError::WeightsWithoutMesh {
            track: 0,
            node: 0,
            ..
        }))
    ));
    assert!(matches!(
        tables(vec![w(n1, 3)]),
        Err(Error::Bind(BindError::WeightsWidthMismatch {
            expected: 2,
            found: 3,
            ..
        }))
    ));
    assert!(tables(vec![w(n1, 2), tr(0)]).is_ok());
}

#[test]
fn tables_and_sampler_of_different_libraries_are_refused() {
    let rig = two_nodes_one_mesh();
    let tr = step_translation;
    // Tables of one library, sampler of another.
    let Some(h) = common::gpu("library mismatch") else {
        return;
    };
    let t = tables_of(&rig, vec![tr(0)]).unwrap();
    let other = AnimationLibrary::new(vec![Clip::new("o", vec![tr(0), tr(1)])]).unwrap();
    let sampler = super::sampler(&h.device, &h.queue, &other, 1).unwrap();
    assert!(matches!(
        skinner_with(&h.device, &sampler, &t, SkinStrategy::Auto),
        Err(Error::Fit(FitError::LibraryMismatch {
            tables_stride: 3,
            sampler_stride: 6,
            ..
        }))
    ));
}

// ------------------------------------------------------------ real assets

/// The glTF files of `../shared/assets`, sorted; `None`, with a skip line
/// naming `label`, where the folder is absent.
#[cfg(feature = "gltf")]
fn asset_files(label: &str) -> Option<Vec<std::path::PathBuf>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("SKIP {label}: {} is absent", dir.display());
        return None;
    };
    let mut files: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("gltf" | "glb")))
        .collect();
    files.sort();
    Some(files)
}

#[cfg(feature = "gltf")]
#[test]
fn assets_with_skins_gpu_matches_cpu() {
    let Some(files) = asset_files("assets") else {
        return;
    };
    let Some(h) = common::gpu("assets") else {
        return;
    };
    let mut skinned = 0;
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let imported = keyframe_gpu::gltf::load(&path).unwrap();
        let rig = Rig::from_document(&imported.document).unwrap();
        if rig.skins().is_empty() {
            eprintln!("assets: {name}: no skin, skipped");
            continue;
        }
        skinned += 1;
        let lib = &imported.library;
        let tables = SkinTables::new(&rig, lib).unwrap();
        // Every clip at 9 times across its duration (and one past its end).
        let mut inst = Vec::new();
        for (c, clip) in lib.clips().iter().enumerate() {
            let d = f64::from(clip.duration());
            for k in 0..=9 {
                inst.push(Instance::new(c as u32, d * f64::from(k) / 8.0));
            }
        }
        let cpu = cpu_skin::skin(&tables, lib, &inst).unwrap();
        for strategy in strategies(&tables) {
            let gpu = run_gpu(&h, &tables, lib, &inst, strategy);
            let d = max_diff(&gpu.joints, &flat(&cpu.joints));
            let scale = cpu
                .joints
                .iter()
                .flat_map(|m| m.to_cols_array())
                .fold(0.0f32, |a, x| a.max(x.abs()));
            eprintln!(
            "assets: {name} ({strategy:?}): {} skins, {} joint slots, {} instances: max |gpu - cpu| = {d:e} (largest element {scale})",
            rig.skins().len(),
            tables.joint_count(),
            inst.len()
        );
            assert!(
                d <= GPU_TOL,
                "{name} ({strategy:?}): joint matrices: max |gpu - cpu| = {d}"
            );
        }
    }
    assert!(skinned > 0, "no skinned asset in ../shared/assets");
}

// ------------------------------------------------- rig_from_gltf, hostile

/// A glTF with node 0 (matrix: translation (1, 2, 3), scale 2) as the child
/// of node 1 (listed after it), node 2 (mesh 0, skin 0) and a skin over
/// nodes [1, 0]. `ibm` is the skin's inverseBindMatrices accessor JSON;
/// buffer 0 holds the matrices at `view_offset` with `stride`.
#[cfg(feature = "gltf")]
fn gltf_json(ibm: &str, view: &str, extra_children: &str) -> String {
    format!(
        r#"{{
  "asset": {{"version": "2.0"}},
  "nodes": [
    {{"matrix": [2,0,0,0, 0,2,0,0, 0,0,2,0, 1,2,3,1]}},
    {{"children": [0{extra_children}], "rotation": [0, 0, 0.6, 0.8]}},
    {{"mesh": 0, "skin": 0, "translation": [0, 0, 5]}}
  ],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}},
      "targets": [{{"POSITION": 0}}, {{"POSITION": 0}}]}}], "weights": [0.25, 0.5]}}],
  "skins": [{{"joints": [1, 0], "inverseBindMatrices": 1}}],
  "accessors": [
    {{"bufferView": 0, "componentType": 5126, "count": 1, "type": "VEC3",
      "min": [0,0,0], "max": [0,0,0]}},
    {ibm}
  ],
  "bufferViews": [
    {{"buffer": 0, "byteOffset": 0, "byteLength": 12}},
    {view}
  ],
  "buffers": [{{"byteLength": 400}}]
}}"#
    )
}

#[cfg(feature = "gltf")]
fn gltf_rig(json: &str, buffer: &[u8]) -> Result<Rig, Error> {
    let gltf = gltf::Gltf::from_slice(json.as_bytes()).expect("test JSON is valid glTF");
    rig_from_gltf(&gltf.document, &[buffer.to_vec()])
}

/// Buffer 0: 12 bytes of position, then matrix k at 16 + 80 k (stride 80),
/// matrix k being the translation (k + 1, 0, 0).
#[cfg(feature = "gltf")]
fn ibm_buffer() -> Vec<u8> {
    let mut b = vec![0u8; 400];
    for k in 0..2 {
        let m = Mat4::from_translation(Vec3::new(k as f32 + 1.0, 0.0, 0.0)).to_cols_array();
        for (c, v) in m.iter().enumerate() {
            let at = 16 + 80 * k + 4 * c;
            b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
    }
    b
}

#[cfg(feature = "gltf")]
const GOOD_IBM: &str = r#"{"bufferView": 1, "componentType": 5126, "count": 2, "type": "MAT4"}"#;
#[cfg(feature = "gltf")]
const GOOD_VIEW: &str = r#"{"buffer": 0, "byteOffset": 16, "byteLength": 144, "byteStride": 80}"#;

#[cfg(feature = "gltf")]
#[test]
fn rig_from_gltf_reads_hierarchy_matrices_skins_and_morph_defaults() {
    let rig = gltf_rig(&gltf_json(GOOD_IBM, GOOD_VIEW, ""), &ibm_buffer()).unwrap();
    let nodes = rig.nodes();
    assert_eq!(nodes[0].parent, Some(1), "child listed before its parent");
    assert_eq!(rig.order(), &[1, 2, 0]);
    assert!(max_diff(&nodes[0].translation, &[1.0, 2.0, 3.0]) < 1e-6);
    assert!(max_diff(&nodes[0].scale, &[2.0, 2.0, 2.0]) < 1e-6);
    assert!(max_diff(&nodes[0].rotation, &[0.0, 0.0, 0.0, 1.0]) < 1e-6);
    let skin = &rig.skins()[0];
    assert_eq!(skin.joints, vec![1, 0]);
    assert_eq!(skin.mesh_node, Some(2));
    for k in 0..2 {
        let want = Mat4::from_translation(Vec3::new(k as f32 + 1.0, 0.0, 0.0)).to_cols_array();
        assert_eq!(skin.inverse_bind_matrices[k], want, "IBM {k} (stride 80)");
    }
    assert_eq!(rig.meshes()[0].target_count, 2);
    assert_eq!(rig.meshes()[0].default_weights, vec![0.25, 0.5]);
}

#[cfg(feature = "gltf")]
#[test]
fn rig_from_gltf_refuses_broken_skins_and_hierarchies() {
    let buf = ibm_buffer();
    // Every accessor fault is the importer's, located at skin 0, accessor 1.
    let accessor_error = |ibm: &str, view: &str, buffer: &[u8]| {
        let r = gltf_rig(&gltf_json(ibm, view, ""), buffer);
        if let Err(e) = &r {
            let msg = e.to_string();
            assert!(
                msg.starts_with("glTF import (skin 0, accessor 1): "),
                "{msg}"
            );
        }
        match r {
            Err(Error::Import {
                animation: None,
                channel: None,
                skin: Some(0),
                accessor: Some(1),
                kind,
            }) => kind,
            other => panic!("expected an import error at skin 0, accessor 1, got {other:?}"),
        }
    };
    // The view runs past the bytes actually loaded.
    assert_eq!(
        accessor_error(GOOD_IBM, GOOD_VIEW, &buf[..100]),
        ImportErrorKind::ViewOutOfRange {
            view: 1,
            buffer: 0,
            end: 160,
            length: 100
        }
    );
    // The accessor runs past its view (count 3 with stride 80 needs 224 bytes).
    assert_eq!(
        accessor_error(
            r#"{"bufferView": 1, "componentType": 5126, "count": 3, "type": "MAT4"}"#,
            GOOD_VIEW,
            &buf,
        ),
        ImportErrorKind::AccessorOutOfRange {
            part: "accessor",
            view: 1,
            end: 224,
            length: 144
        }
    );
    // Not MAT4.
    assert_eq!(
        accessor_error(
            r#"{"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC4"}"#,
            GOOD_VIEW,
            &buf,
        ),
        ImportErrorKind::BadAccessorType {
            expected: "MAT4",
            found: "VEC4".into()
        }
    );
    // Not FLOAT.
    assert_eq!(
        accessor_error(
            r#"{"bufferView": 1, "componentType": 5123, "count": 2, "type": "MAT4"}"#,
            GOOD_VIEW,
            &buf,
        ),
        ImportErrorKind::BadComponentType {
            usage: "inverse bind matrices",
            found: "UNSIGNED_SHORT".into(),
            normalized: false
        }
    );
    // A stride smaller than a matrix.
    assert_eq!(
        accessor_error(
            GOOD_IBM,
            r#"{"buffer": 0, "byteOffset": 16, "byteLength": 144, "byteStride": 32}"#,
            &buf,
        ),
        ImportErrorKind::BadStride {
            view: 1,
            stride: 32,
            element_size: 64
        }
    );
    // Sparse: index 7 of a 2-element accessor (indices: one u8 at byte 300,
    // values: one matrix at byte 304).
    let mut sparse_buf = buf.clone();
    sparse_buf[300] = 7;
    let sparse = r#"{"bufferView": 1, "componentType": 5126, "count": 2, "type": "MAT4",
        "sparse": {"count": 1, "indices": {"bufferView": 2, "componentType": 5121},
                   "values": {"bufferView": 3}}}"#;
    let views = r#"{"buffer": 0, "byteOffset": 16, "byteLength": 144, "byteStride": 80},
        {"buffer": 0, "byteOffset": 300, "byteLength": 1},
        {"buffer": 0, "byteOffset": 304, "byteLength": 64}"#;
    let kind = accessor_error(sparse, views, &sparse_buf);
    assert!(
        matches!(&kind, ImportErrorKind::Sparse(m) if m.contains("index 7 (entry 0)")),
        "{kind:?}"
    );
    // The same sparse accessor with index 1 replaces matrix 1.
    sparse_buf[300] = 1;
    for (c, v) in Mat4::from_scale(Vec3::splat(3.0))
        .to_cols_array()
        .iter()
        .enumerate()
    {
        sparse_buf[304 + 4 * c..308 + 4 * c].copy_from_slice(&v.to_le_bytes());
    }
    let rig = gltf_rig(&gltf_json(sparse, views, ""), &sparse_buf).unwrap();
    assert_eq!(
        rig.skins()[0].inverse_bind_matrices[1],
        Mat4::from_scale(Vec3::splat(3.0)).to_cols_array()
    );
    // One matrix for two joints: the rig model's check.
    let r = gltf_rig(
        &gltf_json(
            r#"{"bufferView": 1, "componentType": 5126, "count": 1, "type": "MAT4"}"#,
            GOOD_VIEW,
            "",
        ),
        &buf,
    );
    assert!(
        matches!(
            r,
            Err(Error::Rig(RigError::InverseBindCount {
                skin: 0,
                expected: 2,
                found: 1
            }))
        ),
        "{r:?}"
    );
    // Node 0 listed twice among node 1's children: two parent links (the
    // gltf crate's validation lets this through).
    let r = gltf_rig(&gltf_json(GOOD_IBM, GOOD_VIEW, ", 0"), &buf);
    assert_rig_import_error(
        &r,
        None,
        None,
        ImportErrorKind::MultipleParents {
            node: 0,
            first: 1,
            second: 1,
        },
    );
}

/// `Rig::from_document` runs the `gltf` crate's validation first (but lets
/// vertex-data faults through); `rig_from_gltf` on an unvalidated document
/// shows the import's own checks: every index the rig reads is checked by
/// the import or by `Rig::from_parts`.
#[cfg(feature = "gltf")]
#[test]
fn rig_import_checks_the_indices_it_reads() {
    let buf = ibm_buffer();
    let from_document = |json: &str| rig_from_document(json, &buf);
    let unvalidated = |json: &str| rig_unvalidated(json, &buf);
    let invalid = assert_invalid_document;
    let good = gltf_json(GOOD_IBM, GOOD_VIEW, "");
    let rig = gltf_rig(&good, &buf).unwrap();
    assert_eq!(from_document(&good).unwrap(), rig, "both entries agree");
    assert_eq!(
        unvalidated(&good).unwrap(),
        rig,
        "validation changes nothing"
    );

    // Vertex data is not the rig's: POSITION without min/max passes, a
    // POSITION index out of range is refused by the validation only.
    let no_bounds = good.replace(
        r#",
      "min": [0,0,0], "max": [0,0,0]"#,
        "",
    );
    assert_ne!(no_bounds, good);
    assert_eq!(from_document(&no_bounds).unwrap(), rig);
    let bad_position = good.replace(
        r#""attributes": {"POSITION": 0}"#,
        r#""attributes": {"POSITION": 9}"#,
    );
    invalid(from_document(&bad_position), &["POSITION", "accessor 9"]);
    assert_eq!(unvalidated(&bad_position).unwrap(), rig);

    // A child index out of range.
    let bad_child = gltf_json(GOOD_IBM, GOOD_VIEW, ", 7");
    invalid(from_document(&bad_child), &["children"]);
    let r = unvalidated(&bad_child);
    assert_rig_import_error(
        &r,
        None,
        None,
        ImportErrorKind::IndexOutOfRange {
            what: "child node",
            index: 7,
            count: 3,
        },
    );
    // An inverse bind matrices accessor out of range.
    let bad_ibm = good.replace(r#""inverseBindMatrices": 1"#, r#""inverseBindMatrices": 5"#);
    invalid(from_document(&bad_ibm), &["inverseBindMatrices"]);
    let r = unvalidated(&bad_ibm);
    assert_rig_import_error(
        &r,
        Some(0),
        Some(5),
        ImportErrorKind::IndexOutOfRange {
            what: "accessor",
            index: 5,
            count: 2,
        },
    );
    // A joint out of range: the rig model's check.
    let bad_joint = good.replace(r#""joints": [1, 0]"#, r#""joints": [1, 4]"#);
    invalid(from_document(&bad_joint), &["joints"]);
    let r = unvalidated(&bad_joint);
    assert!(
        matches!(
            r,
            Err(Error::Rig(RigError::JointOutOfRange {
                skin: 0,
                joint: 1,
                node: 4,
                node_count: 3
            }))
        ),
        "{r:?}"
    );
}

/// A mesh whose primitives have different morph-target counts is refused.
#[cfg(feature = "gltf")]
#[test]
fn rig_import_refuses_primitives_with_different_target_counts() {
    let buf = ibm_buffer();
    let good = gltf_json(GOOD_IBM, GOOD_VIEW, "");
    // Primitives of one mesh with different morph-target counts (valid for
    // the validation).
    let json = good.replace(
        r#""weights": [0.25, 0.5]}]"#,
        r#""weights": [0.25, 0.5]}, {"primitives": [{"attributes": {"POSITION": 0}, "targets": [{"POSITION": 0}]}, {"attributes": {"POSITION": 0}}]}]"#,
    );
    let r = rig_from_document(&json, &buf);
    assert!(
        matches!(
            &r,
            Err(Error::Import {
                animation: None,
                channel: None,
                skin: None,
                accessor: None,
                kind: ImportErrorKind::MorphTargets { mesh: 1, reason },
            }) if reason.contains("primitive 1 has 0 morph targets")
        ),
        "{r:?}"
    );
}

/// `json` parsed as a glTF document.
#[cfg(feature = "gltf")]
fn gltf_root(json: &str) -> gltf::json::Root {
    gltf::json::Root::from_slice(json.as_bytes()).expect("test JSON parses")
}

/// The rig of `json` (its buffer `buf`) through the validating entry.
#[cfg(feature = "gltf")]
fn rig_from_document(json: &str, buf: &[u8]) -> Result<Rig, Error> {
    Rig::from_document(&keyframe_gpu::gltf::Document {
        root: gltf_root(json),
        buffers: vec![buf.to_vec()],
        source: keyframe_gpu::SourceId::new(),
        pointers: Default::default(),
    })
}

/// The rig of `json` (its buffer `buf`) from a document that skipped
/// validation.
#[cfg(feature = "gltf")]
fn rig_unvalidated(json: &str, buf: &[u8]) -> Result<Rig, Error> {
    rig_from_gltf(
        &gltf::Document::from_json_without_validation(gltf_root(json)),
        &[buf],
    )
}

/// The rig of a `gltf` crate document (validated or not), `buffers[i]`
/// holding buffer `i`: the importer's rig reading on the document's JSON,
/// without `Rig::from_document`'s validation.
#[cfg(feature = "gltf")]
fn rig_from_gltf<B: AsRef<[u8]>>(document: &gltf::Document, buffers: &[B]) -> Result<Rig, Error> {
    crate::gltf::rig::rig_from(&crate::gltf::accessor::Source {
        root: document.as_json(),
        buffers,
    })
}

/// `r` is an import error of a rig (no animation or channel) at `skin`
/// and `accessor`, of kind `kind`.
#[cfg(feature = "gltf")]
fn assert_rig_import_error(
    r: &Result<Rig, Error>,
    skin: Option<usize>,
    accessor: Option<usize>,
    kind: ImportErrorKind,
) {
    match r {
        Err(Error::Import {
            animation: None,
            channel: None,
            skin: s,
            accessor: a,
            kind: k,
        }) => assert_eq!((*s, *a, k), (skin, accessor, &kind), "{r:?}"),
        other => panic!("expected an import error {kind:?}, got {other:?}"),
    }
}

/// `r` is an invalid-document error whose reason names every one of
/// `words`.
#[cfg(feature = "gltf")]
fn assert_invalid_document(r: Result<Rig, Error>, words: &[&str]) {
    match r {
        Err(Error::Import {
            animation: None,
            channel: None,
            skin: None,
            accessor: None,
            kind: ImportErrorKind::InvalidDocument { reason },
        }) => assert!(words.iter().all(|w| reason.contains(w)), "{reason}"),
        other => panic!("expected InvalidDocument naming {words:?}, got {other:?}"),
    }
}

// ------------------------------- assets against an independent glam chain

/// The value of one glTF channel at `t`, read and interpolated with the
/// `gltf` crate's reader and glam only (no code of this crate): clamped
/// ends, exact keys as stored, STEP, LINEAR (lerp, glam's slerp),
/// CUBICSPLINE (Hermite with dt-scaled tangents). Rotations normalized.
#[cfg(feature = "gltf")]
fn independent_channel(
    times: &[f32],
    values: &[Vec4],
    cubic: bool,
    step: bool,
    rot: bool,
    t: f32,
) -> Vec4 {
    let val = |k: usize| if cubic { values[3 * k + 1] } else { values[k] };
    let last = times.len() - 1;
    let v = if t <= times[0] {
        val(0)
    } else if t >= times[last] {
        val(last)
    } else {
        let k = times.iter().rposition(|&x| x <= t).unwrap();
        let (t0, t1) = (times[k], times[k + 1]);
        let s = (t - t0) / (t1 - t0);
        if t == t0 || step {
            val(k)
        } else if cubic {
            let dt = t1 - t0;
            let (s2, s3) = (s * s, s * s * s);
            (2.0 * s3 - 3.0 * s2 + 1.0) * values[3 * k + 1]
                + dt * (s3 - 2.0 * s2 + s) * values[3 * k + 2]
                + (-2.0 * s3 + 3.0 * s2) * values[3 * k + 4]
                + dt * (s3 - s2) * values[3 * k + 3]
        } else if rot {
            Vec4::from(
                Quat::from_vec4(val(k))
                    .normalize()
                    .slerp(Quat::from_vec4(val(k + 1)).normalize(), s),
            )
        } else {
            val(k).lerp(val(k + 1), s)
        }
    };
    if rot {
        v.normalize()
    } else {
        v
    }
}

/// Joint matrices per skin of animation `anim` at `t`, computed from the
/// file with the `gltf` crate and glam: globals by recursion from the scene
/// roots through `children`, joint = inverse(global(mesh node)) *
/// global(joint) * inverseBindMatrix.
#[cfg(feature = "gltf")]
fn independent_joints(
    doc: &gltf::Document,
    buffers: &[Vec<u8>],
    anim: usize,
    t: f32,
) -> Vec<Vec<Mat4>> {
    let get = |b: gltf::Buffer<'_>| buffers.get(b.index()).map(Vec::as_slice);
    let mut trs: Vec<(Vec3, Quat, Vec3)> = doc
        .nodes()
        .map(|n| {
            let (t, r, s) = n.transform().decomposed();
            (
                Vec3::from(t),
                Quat::from_array(r).normalize(),
                Vec3::from(s),
            )
        })
        .collect();
    let animation = doc.animations().nth(anim).unwrap();
    for ch in animation.channels() {
        let reader = ch.reader(get);
        let times: Vec<f32> = reader.read_inputs().unwrap().collect();
        let interp = ch.sampler().interpolation();
        let cubic = interp == gltf::animation::Interpolation::CubicSpline;
        let step = interp == gltf::animation::Interpolation::Step;
        let node = ch.target().node().index();
        use gltf::animation::util::ReadOutputs;
        match reader.read_outputs().unwrap() {
            ReadOutputs::Translations(v) => {
                let v: Vec<Vec4> = v.map(|x| Vec3::from(x).extend(0.0)).collect();
                trs[node].0 = independent_channel(&times, &v, cubic, step, false, t).truncate();
            }
            ReadOutputs::Rotations(v) => {
                let v: Vec<Vec4> = v.into_f32().map(Vec4::from).collect();
                trs[node].1 =
                    Quat::from_vec4(independent_channel(&times, &v, cubic, step, true, t));
            }
            ReadOutputs::Scales(v) => {
                let v: Vec<Vec4> = v.map(|x| Vec3::from(x).extend(0.0)).collect();
                trs[node].2 = independent_channel(&times, &v, cubic, step, false, t).truncate();
            }
            ReadOutputs::MorphTargetWeights(_) => {}
        }
    }
    let mut global = vec![None; trs.len()];
    fn visit(
        n: gltf::Node<'_>,
        parent: Mat4,
        trs: &[(Vec3, Quat, Vec3)],
        out: &mut [Option<Mat4>],
    ) {
        let (t, r, s) = trs[n.index()];
        let g = parent * Mat4::from_scale_rotation_translation(s, r, t);
        out[n.index()] = Some(g);
        for c in n.children() {
            visit(c, g, trs, out);
        }
    }
    let is_child: std::collections::HashSet<usize> = doc
        .nodes()
        .flat_map(|n| n.children().map(|c| c.index()))
        .collect();
    for n in doc.nodes().filter(|n| !is_child.contains(&n.index())) {
        visit(n, Mat4::IDENTITY, &trs, &mut global);
    }
    doc.skins()
        .map(|skin| {
            let mesh_node = doc
                .nodes()
                .find(|n| n.skin().map(|s| s.index()) == Some(skin.index()));
            let inv_mesh =
                mesh_node.map_or(Mat4::IDENTITY, |n| global[n.index()].unwrap().inverse());
            let ibms: Vec<Mat4> = match skin.reader(get).read_inverse_bind_matrices() {
                Some(m) => m.map(|c| Mat4::from_cols_array_2d(&c)).collect(),
                None => vec![Mat4::IDENTITY; skin.joints().count()],
            };
            skin.joints()
                .zip(ibms)
                .map(|(j, ibm)| inv_mesh * global[j.index()].unwrap() * ibm)
                .collect()
        })
        .collect()
}

#[cfg(feature = "gltf")]
#[test]
fn assets_joint_matrices_match_an_independent_glam_chain() {
    let Some(files) = asset_files("assets (independent)") else {
        return;
    };
    for path in files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let imported = keyframe_gpu::gltf::load(&path).unwrap();
        let rig = Rig::from_document(&imported.document).unwrap();
        if rig.skins().is_empty() {
            continue;
        }
        let doc = gltf::Document::from_json(imported.document.root.clone()).unwrap();
        let lib = &imported.library;
        let tables = SkinTables::new(&rig, lib).unwrap();
        // (instance, skin slot block) pairs for the GPU run at the end.
        let mut gpu_inst = Vec::new();
        let mut gpu_want: Vec<Vec<Vec<Mat4>>> = Vec::new();
        for (anim, clip) in lib.clips().iter().enumerate() {
            let keys = &clip.tracks[0].times;
            let mut on_keys: Vec<f32> = keys
                .iter()
                .copied()
                .step_by(keys.len().div_ceil(6).max(1))
                .collect();
            on_keys.push(*keys.last().unwrap());
            let between: Vec<f32> = keys
                .windows(2)
                .take(3)
                .map(|w| 0.5 * (w[0] + w[1]))
                .collect();
            for (kind, times) in [("keys", on_keys), ("between", between)] {
                let mut worst = 0.0f32;
                let mut worst_rel = 0.0f32;
                for &t in &times {
                    let ours =
                        cpu_skin::joint_matrices_with(&tables, lib, anim as u32, f64::from(t))
                            .unwrap();
                    let theirs = independent_joints(&doc, &imported.document.buffers, anim, t);
                    gpu_inst.push(Instance::new(anim as u32, f64::from(t)));
                    gpu_want.push(theirs.clone());
                    for (s, skin) in ours.iter().enumerate() {
                        for (j, m) in skin.joints.iter().enumerate() {
                            let want = theirs[s][j].to_cols_array();
                            let d = max_diff(m, &want);
                            let scale = want.iter().fold(1.0f32, |a, x| a.max(x.abs()));
                            worst = worst.max(d);
                            worst_rel = worst_rel.max(d / scale);
                        }
                    }
                }
                eprintln!("independent: {name} anim {anim} {kind}: max abs {worst:e}, max rel {worst_rel:e}");
                assert!(
                    worst <= GPU_TOL,
                    "{name} anim {anim} {kind}: CPU vs independent {worst}"
                );
            }
        }
        // The GPU against the independent chain directly.
        if let Some(h) = common::gpu("assets (independent)") {
            for strategy in strategies(&tables) {
                let gpu = run_gpu(&h, &tables, lib, &gpu_inst, strategy);
                let per = tables.joint_count() as usize;
                let mut worst = 0.0f32;
                for (i, want) in gpu_want.iter().enumerate() {
                    for (s, skin) in want.iter().enumerate() {
                        let off = tables.skin_offsets()[s] as usize;
                        for (j, m) in skin.iter().enumerate() {
                            let at = (i * per + off + j) * 16;
                            worst =
                                worst.max(max_diff(&gpu.joints[at..at + 16], &m.to_cols_array()));
                        }
                    }
                }
                eprintln!(
                    "independent: {name} ({strategy:?}): GPU, {} instances: max abs {worst:e}",
                    gpu_inst.len()
                );
                assert!(
                    worst <= GPU_TOL,
                    "{name} ({strategy:?}): GPU vs independent {worst}"
                );
            }
        }
    }
}

/// A chain of `len` nodes (each a small rotation and a step along y from
/// its parent), node 0 animated in rotation and node `len / 2` in
/// translation, and one skin per `(joints, mesh node parent)`: the skin's
/// joints are the chain nodes `joints`, its mesh node a new node under the
/// given chain node (`Some(None)`: a root; `None`: no mesh node at all).
/// A skin of [`chain_with_skins`]: its joint nodes (in slot order, a node
/// listed more than once takes a slot each time) and where its mesh node
/// hangs (`None`: no mesh node; `Some(None)`: a root; `Some(Some(p))`:
/// under node p).
type ChainSkin = (Vec<u32>, Option<Option<u32>>);

/// A [`ChainSkin`] over the chain nodes `joints`.
fn chain_skin(joints: std::ops::Range<u32>, mesh_parent: Option<Option<u32>>) -> ChainSkin {
    (joints.collect(), mesh_parent)
}

fn chain_with_skins(len: u32, skins: &[ChainSkin]) -> (Rig, AnimationLibrary) {
    let mut b = Rig::builder();
    let mut parent = None;
    for k in 0..len {
        let axis = [Vec3::X, Vec3::Y, Vec3::Z][k as usize % 3];
        let n = b.node(
            parent,
            trs(
                [0.0, 0.05, 0.0],
                Quat::from_axis_angle(axis, 0.02),
                [1.0; 3],
            ),
        );
        parent = Some(n);
    }
    let mesh = b.mesh(0, vec![]);
    for (s, (joints, mesh_parent)) in skins.iter().enumerate() {
        let ibms = joints
            .iter()
            .map(|&k| {
                Mat4::from_translation(Vec3::new(0.1 * s as f32, -0.05 * (k + 1) as f32, 0.0))
                    .to_cols_array()
            })
            .collect();
        let skin = b.skin(joints.clone(), ibms);
        if let Some(mesh_parent) = *mesh_parent {
            let m = b.node(
                mesh_parent,
                trs(
                    [0.5, 0.0, -0.25],
                    Quat::from_rotation_y(0.3),
                    [1.0, 2.0, 1.0],
                ),
            );
            b.attach(m, mesh, Some(skin));
        }
    }
    let rig = b.build().unwrap();
    let lib = AnimationLibrary::new(vec![Clip::new(
        "bend",
        vec![
            Track::new(
                0,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                quat_values(&[Quat::IDENTITY, Quat::from_rotation_z(0.8)]),
            ),
            Track::new(
                len / 2,
                Property::Translation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0, 0.05, 0.0, 0.3, 0.1, -0.2],
            ),
        ],
    )])
    .unwrap();
    (rig, lib)
}

/// GPU vs CPU twin, then every joint matrix of the CPU twin against glam:
/// `inverse(global(mesh node)) * global(joint) * inverse bind`, with each
/// global checked as its parent's global times its local.
fn check_chain_with_skins(name: &str, len: u32, skins: &[ChainSkin]) -> Option<SkinTables> {
    let (rig, lib) = chain_with_skins(len, skins);
    let tables = SkinTables::new(&rig, &lib).unwrap();
    let inst = [
        Instance::new(0, 0.0),
        Instance::new(0, 0.6),
        Instance::new(0, 1.0),
    ];
    let cpu = gpu_vs_cpu(name, &rig, &lib, &inst)?;
    let n = rig.nodes().len();
    let jc = tables.joint_count() as usize;
    let locals = local_mats(&cpu);
    for i in 0..inst.len() {
        for node in 0..n {
            let want = match rig.nodes()[node].parent {
                Some(p) => cpu.globals[i * n + p as usize] * locals[i * n + node],
                None => locals[i * n + node],
            };
            assert_mat_close(
                &format!("{name}: instance {i} global {node}"),
                cpu.globals[i * n + node],
                want,
                1e-4,
            );
        }
        let mut slot = 0;
        for (s, skin) in rig.skins().iter().enumerate() {
            let mesh_inverse = skin.mesh_node.map_or(Mat4::IDENTITY, |m| {
                cpu.globals[i * n + m as usize].inverse()
            });
            for (k, &joint) in skin.joints.iter().enumerate() {
                let want = mesh_inverse
                    * cpu.globals[i * n + joint as usize]
                    * Mat4::from_cols_array(&skin.inverse_bind_matrices[k]);
                assert_mat_close(
                    &format!("{name}: instance {i} skin {s} joint {k}"),
                    cpu.joints[i * jc + slot],
                    want,
                    2e-4,
                );
                slot += 1;
            }
        }
        assert_eq!(slot, jc);
    }
    Some(tables)
}

#[test]
fn joint_matrices_in_the_walk_and_after_it() {
    // At most MAX_FUSED_SKINS skins: joint matrices inside the walk. Four
    // overlapping skins (shared joint nodes), mesh nodes a root, under a
    // chain node, and none.
    assert_eq!(MAX_FUSED_SKINS, 4);
    let four = [
        chain_skin(0..10, Some(None)),
        chain_skin(5..20, Some(Some(3))),
        chain_skin(10..30, None),
        chain_skin(0..40, Some(Some(39))),
    ];
    if let Some(t) = check_chain_with_skins("four skins (fused)", 40, &four) {
        assert_eq!(t.params(1).skin_count, 4);
        assert_eq!(t.params(1).mesh_nodes, [40, 41, -1, 42]);
        // Nodes 5..10 are joints of skins 0, 1 and 3.
        assert_eq!(t.max_slots_per_node(), 3);
    }
    // One more skin: the joint loop after the walk.
    let mut five = four.to_vec();
    five.push(chain_skin(20..25, Some(None)));
    if let Some(t) = check_chain_with_skins("five skins (after the walk)", 40, &five) {
        assert_eq!(t.params(1).skin_count, 5);
    }
}

/// The walk's joint matrices of a node with several slots: skin.wgsl's
/// `skin_main` handles up to `MAX_UNROLLED_SLOTS` slots per node in
/// straight code sized by `SkinTables::max_slots_per_node`, more in a
/// loop. A skin that lists a node several times gives it a slot each
/// time; every slot's matrix is checked against the CPU twin (GPU) and
/// glam (CPU).
#[test]
fn nodes_with_many_joint_slots() {
    assert_eq!(MAX_UNROLLED_SLOTS, 4);
    for slots in [3, MAX_UNROLLED_SLOTS, MAX_UNROLLED_SLOTS + 1, 7] {
        // Node 2 listed `slots` times, spread over two skins.
        let mut a: Vec<u32> = vec![0, 1, 2];
        let mut b: Vec<u32> = vec![3, 2];
        for k in 0..slots - 2 {
            if k % 2 == 0 {
                a.push(2);
            } else {
                b.push(2);
            }
        }
        a.push(4);
        let name = format!("node 2 with {slots} slots");
        let skins = [(a, Some(None)), (b, Some(Some(1)))];
        if let Some(t) = check_chain_with_skins(&name, 6, &skins) {
            assert_eq!(t.max_slots_per_node(), slots, "{name}");
        }
    }
    // One slot per node, and a rig without skins.
    let (rig, lib) = chain_with_skins(3, &[chain_skin(0..3, None)]);
    assert_eq!(SkinTables::new(&rig, &lib).unwrap().max_slots_per_node(), 1);
    let (rig, lib) = chain_with_skins(3, &[]);
    assert_eq!(SkinTables::new(&rig, &lib).unwrap().max_slots_per_node(), 0);
}

#[test]
fn tables_beyond_the_uniform_head() {
    // More than UNIFORM_HEAD nodes and joint slots: those beyond are read
    // from the storage buffers, in the walk (one skin) and after it (five).
    assert_eq!(UNIFORM_HEAD, 256);
    check_chain_with_skins("300 joints (fused)", 300, &[chain_skin(0..300, Some(None))]);
    check_chain_with_skins(
        "5 skins, 400 slots (after the walk)",
        300,
        &[
            chain_skin(0..100, Some(None)),
            chain_skin(50..150, Some(Some(10))),
            chain_skin(100..200, None),
            chain_skin(250..300, Some(Some(299))),
            chain_skin(200..250, Some(None)),
        ],
    );
}

/// `SkinTables::mesh_inverses_are_identity`, which lets the joint
/// matrices leave out the product with the mesh node's inverse: true only
/// when every skin's mesh node, with its ancestors, rests at the identity
/// and no clip animates it. Each case changes one thing from the first.
/// `SkinTables::inverse_binds_are_affine` answers whether every inverse
/// bind's last row is 0, 0, 0, 1; a rig with one that is not takes the
/// full product for its joint matrices on the GPU and in the twin, whose
/// last row is then the inverse bind's (the affine product would write 0,
/// 0, 0, 1 there).
#[test]
fn non_affine_inverse_binds() {
    let projective = Mat4::from_cols_array(&[
        1.0, 0.0, 0.0, 0.25, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, -0.5, 0.0, -1.0, 0.0, 1.0,
    ]);
    let shifted = Mat4::from_translation(Vec3::new(0.0, -1.0, 0.0));
    for (name, ibm, affine) in [("affine", shifted, true), ("projective", projective, false)] {
        let mut b = Rig::builder();
        let root = b.node(None, NodeTransform::translation([0.0, 1.0, 0.0]));
        let tip = b.node(Some(root), NodeTransform::translation([0.0, 1.0, 0.0]));
        let mesh = b.mesh(0, vec![]);
        let skin = b.skin(
            vec![root, tip],
            vec![shifted.to_cols_array(), ibm.to_cols_array()],
        );
        b.attach(root, mesh, Some(skin));
        let rig = b.build().unwrap();
        let rotations = [Quat::IDENTITY, Quat::from_rotation_z(0.8)];
        let lib = AnimationLibrary::new(vec![Clip::new(
            "bend",
            vec![Track::new(
                tip,
                Property::Rotation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                quat_values(&rotations),
            )],
        )])
        .unwrap();
        let tables = SkinTables::new(&rig, &lib).unwrap();
        assert_eq!(tables.inverse_binds_are_affine(), affine, "{name}");
        let inst = [Instance::new(0, 0.0), Instance::new(0, 0.5)];
        let cpu = cpu_skin::skin(&tables, &lib, &inst).unwrap();
        for (i, inst) in inst.iter().enumerate() {
            // glam: mesh node (the root) inverse * tip global * inverse bind.
            let r = Quat::from_rotation_z((0.8 * inst.time) as f32);
            let root_global = Mat4::from_translation(Vec3::Y);
            let tip_global = root_global * glam_trs([0.0, 1.0, 0.0], r, [1.0; 3]);
            let want = root_global.inverse() * tip_global * ibm;
            assert_mat_close(&format!("{name} {i}"), cpu.joints[2 * i + 1], want, 1e-5);
            assert_eq!(
                cpu.joints[2 * i + 1].row(3),
                ibm.row(3),
                "{name} {i}: last row"
            );
        }
        gpu_vs_cpu(name, &rig, &lib, &inst);
    }
}

#[test]
fn mesh_inverses_are_identity_only_for_still_identity_mesh_nodes() {
    // (mesh node's parent transform, mesh node transform, does a clip
    // animate the mesh node's translation, is the mesh attached)
    let cases = [
        (
            "identity, still",
            None,
            NodeTransform::IDENTITY,
            false,
            true,
            true,
        ),
        (
            "no mesh node",
            None,
            NodeTransform::IDENTITY,
            false,
            false,
            true,
        ),
        (
            "translated",
            None,
            NodeTransform::translation([0.0, 0.0, 1.0]),
            false,
            true,
            false,
        ),
        (
            "scaled",
            None,
            trs([0.0; 3], Quat::IDENTITY, [2.0, 1.0, 1.0]),
            false,
            true,
            false,
        ),
        ("animated", None, NodeTransform::IDENTITY, true, true, false),
        (
            "rotated parent",
            Some(trs([0.0; 3], Quat::from_rotation_z(0.5), [1.0; 3])),
            NodeTransform::IDENTITY,
            false,
            true,
            false,
        ),
        (
            "identity parent",
            Some(NodeTransform::IDENTITY),
            NodeTransform::IDENTITY,
            false,
            true,
            true,
        ),
    ];
    for (name, parent, transform, animated, attached, want) in cases {
        let mut b = Rig::builder();
        let joint = b.node(None, NodeTransform::translation([0.0, 1.0, 0.0]));
        let up = parent.map(|p| b.node(None, p));
        let mesh_node = b.node(up, transform);
        let mesh = b.mesh(0, vec![]);
        let skin = b.skin(vec![joint], vec![Mat4::IDENTITY.to_cols_array()]);
        if attached {
            b.attach(mesh_node, mesh, Some(skin));
        }
        let rig = b.build().unwrap();
        let mut tracks = vec![Track::new(
            joint,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0],
        )];
        if animated {
            tracks.push(Track::new(
                mesh_node,
                Property::Translation,
                Interpolation::Linear,
                vec![0.0, 1.0],
                vec![0.0; 6],
            ));
        }
        let lib = AnimationLibrary::new(vec![Clip::new("c", tracks)]).unwrap();
        let tables = SkinTables::new(&rig, &lib).unwrap();
        assert_eq!(tables.mesh_inverses_are_identity(), want, "{name}");
    }
}
