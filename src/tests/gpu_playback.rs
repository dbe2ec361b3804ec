//! The playback pass (`shaders/playback.wgsl`) against its twin
//! (`cpu::playback`, run by the `Player`s `GpuPlayers` keeps for its
//! subscribed characters): random commands of every kind on a crowd
//! model in several chunks, uneven steps, each character's records read
//! back and compared with its twin's, word for word (the f32 weights to
//! within rounding), the rows and mixer records the pass writes against
//! those the twin's state gives, and the blended poses against the CPU
//! twin's mixer on the twins' action tables.

use std::sync::Arc;

use keyframe_gpu::cpu::playback::clock::{clip_time, slot_time};
use keyframe_gpu::layout::{
    GpuActionSlot, GpuCharacter, GpuInstance, GpuMixAction, BLEND_ADDITIVE, BLEND_MIX,
    BLEND_OVERRIDE, NO_CLIP, NO_ROW, SLOT_ADDITIVE, SLOT_OVERRIDES,
};
use keyframe_gpu::playback::{Clips, Command, GpuPlayers, Layer, LayerId};
use keyframe_gpu::{
    cpu, AnimationLibrary, BoundLibrary, CharacterId, Clip, Crowd, Interpolation, Mask, MixerDesc,
    ModelId, NodeTransform, Property, Rig, Track, WrapMode,
};

use super::common::gpu;

/// A chain of four nodes; clips of different lengths moving and turning
/// them: "walk" 1 s, "run" 0.7 s, "wave" 2.3 s (node 2 and 3 only),
/// "jump" 0.4 s, "blip" a few milliseconds.
fn model() -> (BoundLibrary, Vec<Mask>) {
    let mut b = Rig::builder();
    let mut parent = None;
    for k in 0..4 {
        let n = b.node(
            parent,
            NodeTransform::translation([0.0, k as f32 * 0.5, 0.0]),
        );
        parent = Some(n);
    }
    let rig = b.build().unwrap();
    let tr = |node: u32, end: f32, to: [f32; 3]| {
        Track::new(
            node,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, end * 0.5, end],
            vec![
                0.0,
                0.0,
                0.0,
                to[0] * 0.3,
                to[1],
                to[2],
                to[0],
                to[1],
                to[2] * 0.5,
            ],
        )
    };
    let rot = |node: u32, end: f32, angle: f32| {
        let q = glam::Quat::from_rotation_z(angle);
        Track::new(
            node,
            Property::Rotation,
            Interpolation::Linear,
            vec![0.0, end],
            [glam::Quat::IDENTITY.to_array(), q.to_array()].concat(),
        )
    };
    let library = AnimationLibrary::new(vec![
        Clip::new("walk", vec![tr(0, 1.0, [2.0, 0.0, 0.4]), rot(1, 1.0, 0.6)]),
        Clip::new("run", vec![tr(0, 0.7, [0.0, 0.2, 3.0]), rot(2, 0.7, -0.9)]),
        Clip::new("wave", vec![rot(2, 2.3, 1.2), rot(3, 2.3, -0.5)]),
        Clip::new("jump", vec![tr(0, 0.4, [0.0, 1.5, 0.0]), rot(1, 0.4, 0.2)]),
        Clip::new("blip", vec![tr(3, 0.003, [0.1, 0.1, 0.1])]),
    ])
    .unwrap();
    let bound = library.bind(&rig).unwrap();
    let upper = Mask::subtree(&rig, 2).unwrap();
    (bound, vec![upper])
}

/// A small xorshift generator: the same commands on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len() as u64) as usize]
    }
}

/// One random command for `c`; `layers` are the layers it was given
/// (some gone since: the GPU and the twin skip those alike).
fn command(rng: &mut Rng, p: &mut GpuPlayers, c: CharacterId, layers: &mut Vec<LayerId>) {
    let clips = Arc::clone(p.clips());
    let clip = clips.clip_at(rng.below(clips.len() as u64) as u32).unwrap();
    let d = 0.02 + rng.unit() * 0.8;
    let t = rng.unit() * 6.0 - 2.0;
    let wrap = rng.pick(&[WrapMode::Clamp, WrapMode::Repeat, WrapMode::PingPong]);
    let reps = rng.pick(&[None, Some(0), Some(1), Some(2), Some(5)]);
    let layer = Layer {
        weight: rng.pick(&[0.0, 0.3, 0.5, 1.0, 1.4]),
        mask: rng.pick(&[None, Some(keyframe_gpu::MaskId::new(0))]),
        additive: if rng.below(4) == 0 {
            Some(rng.unit() * 0.5)
        } else {
            None
        },
        overrides: rng.below(3) == 0,
        wrap,
        speed: rng.pick(&[1.0, -1.0, 0.5, 1.7]),
        repetitions: reps,
    };
    let layer = Layer {
        overrides: layer.overrides && layer.additive.is_none(),
        ..layer
    };
    let id = layers
        .get(rng.below(layers.len().max(1) as u64) as usize)
        .copied();
    let r = match rng.below(17) {
        0 | 1 => p.command(c, Command::Play(clip)),
        2 | 3 => p.command(c, Command::Crossfade(clip, d)),
        4 => p.command(c, Command::CrossfadeAt(clip, d, t)),
        5 => p.command(c, Command::FadeIn(clip, d)),
        6 => p.command(c, Command::FadeOut(clip, d)),
        7 => p.command(
            c,
            Command::SetSpeed(rng.pick(&[1.0, -1.0, 0.0, 0.5, 2.0, -0.3, 1.7, 1e9])),
        ),
        8 => p.command(c, Command::SetPaused(rng.below(3) == 0)),
        9 => p.command(c, Command::Seek(t)),
        10 => p.command(c, Command::SetWrap(wrap)),
        11 => p.command(c, Command::SetClipWrap(clip, wrap)),
        12 => p.command(c, Command::SetRepetitions(reps)),
        13 => p.command(c, Command::SetClipRepetitions(clip, reps)),
        14 => p.add_layer(c, clip, layer).map(|id| layers.push(id)),
        15 => id.map_or(Ok(()), |id| p.command(c, Command::SetLayer(id, layer))),
        _ => match id {
            Some(id) if rng.below(2) == 0 => p.command(c, Command::FadeLayer(id, layer.weight, d)),
            Some(id) => p.command(c, Command::RemoveLayer(id)),
            None => Ok(()),
        },
    };
    r.unwrap();
}

/// The slot words that must be equal (every field but the f32 ones).
fn words(s: &GpuActionSlot) -> Vec<u32> {
    let all: &[u32] = bytemuck::cast_slice(std::slice::from_ref(s));
    // weight, fade_from, fade_to, fade_rate (14..18) and reference_time
    // (24) are f32s computed by the pass.
    all.iter()
        .enumerate()
        .filter(|(i, _)| !(14..18).contains(i) && *i != 24)
        .map(|(_, &w)| w)
        .collect()
}

fn floats(s: &GpuActionSlot) -> [f32; 5] {
    [
        s.weight,
        s.fade_from,
        s.fade_to,
        s.fade_rate,
        s.reference_time,
    ]
}

/// Every character's records on the GPU against its twin's.
fn compare_state(
    gpu: (&wgpu::Device, &wgpu::Queue),
    crowd: &Crowd,
    players: &GpuPlayers,
    characters: &[CharacterId],
    at: &str,
) {
    let (device, queue) = gpu;
    let pass = crowd.playback(players.model()).unwrap();
    let size = crowd
        .model(players.model())
        .map(|a| a.chunk_capacity())
        .unwrap() as usize;
    let actions = crowd
        .models()
        .get(players.model())
        .and_then(|m| m.mixer.as_ref())
        .unwrap()
        .actions_per_character as usize;
    let chunks = crowd
        .model(players.model())
        .map(|a| a.chunks().len())
        .unwrap();
    let mut state: Vec<(Vec<GpuCharacter>, Vec<GpuActionSlot>, Vec<u32>)> = Vec::new();
    for k in 0..chunks {
        state.push(pass.read_chunk(device, queue, k).unwrap());
    }
    for &c in characters {
        let (k, i) = (c.slot() as usize / size, c.slot() as usize % size);
        let (heads, slots, kept) = &state[k];
        let (want_head, want_slots, want_kept) = players.subscribed(c).unwrap().records();
        assert_eq!(&heads[i], want_head, "{at}: character {}", c.slot());
        let got = &slots[i * actions..i * actions + want_head.count as usize];
        for (s, (g, w)) in got.iter().zip(want_slots).enumerate() {
            assert_eq!(words(g), words(w), "{at}: character {} slot {s}", c.slot());
            for (x, y) in floats(g).iter().zip(floats(w)) {
                assert!(
                    (x - y).abs() <= 2e-6 * y.abs().max(1.0),
                    "{at}: {g:?}\n{w:?}"
                );
            }
        }
        let n = want_kept.len();
        assert_eq!(
            &kept[i * n..i * n + n],
            want_kept,
            "{at}: kept of {}",
            c.slot()
        );
    }
}

/// The rows and mixer records chunk 0's pass wrote, against those its
/// characters' twins give.
fn compare_rows(
    gpu: (&wgpu::Device, &wgpu::Queue),
    crowd: &Crowd,
    players: &GpuPlayers,
    characters: &[CharacterId],
) {
    let (device, queue) = gpu;
    let chunk = crowd
        .model(players.model())
        .map(|a| &a.chunks()[0])
        .unwrap();
    let [rows, mix, ranges] = chunk.playback_targets().unwrap();
    let read = |b: &wgpu::Buffer| {
        let health = chunk.health();
        let f = keyframe_gpu::gpu::read_buffer(health, device, queue, b, b.size()).unwrap();
        bytemuck::cast_slice::<f32, u32>(&f).to_vec()
    };
    let (rows, mix, ranges) = (read(rows), read(mix), read(ranges));
    let rows: &[GpuInstance] = bytemuck::cast_slice(&rows);
    let mix: &[GpuMixAction] = bytemuck::cast_slice(&mix);
    let a = crowd
        .models()
        .get(players.model())
        .and_then(|m| m.mixer.as_ref())
        .unwrap()
        .actions_per_character;
    let size = crowd
        .model(players.model())
        .map(|a| a.chunk_capacity())
        .unwrap();
    for &c in characters.iter().filter(|c| c.slot() < size) {
        let (_, slots, _) = players.subscribed(c).unwrap().records();
        let first = c.slot() * a;
        assert_eq!(
            ranges[2 * c.slot() as usize..][..2],
            [first, slots.len() as u32]
        );
        for (k, s) in slots.iter().enumerate() {
            let row = (first + k as u32) as usize;
            let additive = s.flags & SLOT_ADDITIVE != 0;
            assert_eq!(rows[row].clip, s.clip);
            let t = clip_time(slot_time(s));
            assert!(
                (rows[row].time - t).abs() <= t.abs() * 2e-7,
                "{:?} {t}",
                rows[row]
            );
            let reference = (size * a) as usize + row;
            let want_clip = if additive { s.clip } else { NO_CLIP };
            assert_eq!(rows[reference].clip, want_clip);
            let blend = match (s.flags & SLOT_OVERRIDES != 0, additive) {
                (true, _) => BLEND_OVERRIDE,
                (false, true) => BLEND_ADDITIVE,
                _ => BLEND_MIX,
            };
            let m = mix[row];
            let reference_row = if additive { reference as u32 } else { NO_ROW };
            assert_eq!(
                (m.row, m.reference_row, m.clip, m.mask, m.blend),
                (row as u32, reference_row, s.clip, s.mask, blend)
            );
            assert!((m.weight - s.weight).abs() <= 2e-6 * s.weight.max(1.0));
        }
        for k in slots.len() as u32..a {
            assert_eq!(
                rows[(first + k) as usize].clip,
                NO_CLIP,
                "a vacant row is skipped"
            );
        }
    }
}

/// The blended poses of the crowd against the CPU twin's mixer on the
/// twins' action tables.
fn compare_poses(
    gpu: (&wgpu::Device, &wgpu::Queue),
    crowd: &Crowd,
    players: &GpuPlayers,
    characters: &[CharacterId],
    (bound, masks): (&BoundLibrary, &[Mask]),
) -> f32 {
    let (device, queue) = gpu;
    let got = crowd.read_back(device, queue).unwrap();
    let got = got.model(players.model()).unwrap();
    let slots = got.instance_count() as usize;
    let mut counts = vec![0u32; slots];
    let mut by_slot = vec![Vec::new(); slots];
    for &c in characters {
        let actions = &players.subscribed(c).unwrap().frame().actions;
        counts[c.slot() as usize] = actions.len() as u32;
        by_slot[c.slot() as usize] = actions.clone();
    }
    let actions: Vec<_> = by_slot.into_iter().flatten().collect();
    let want = cpu::mixed_poses(bound, masks, &actions, &counts).unwrap();
    let c = got.compare(&want).unwrap();
    c.max_abs.iter().fold(0.0f32, |m, &d| m.max(d))
}

/// The root motion and events of every character's last frame as the GPU
/// reported them (read back) against its twin's.
fn compare_root_and_events(
    gpu: (&wgpu::Device, &wgpu::Queue),
    crowd: &Crowd,
    players: &mut GpuPlayers,
    characters: &[CharacterId],
    at: &str,
) -> (usize, f32) {
    let (device, queue) = gpu;
    let snaps = players.read_back(device, queue, crowd, characters).unwrap();
    let (mut events, mut moved) = (0, 0.0f32);
    for (c, got) in characters.iter().zip(&snaps) {
        let want = players.subscribed(*c).unwrap().frame();
        let (g, w) = (got.frame().root_motion, want.root_motion);
        // Within 1e-4 of the motion's size (loops at a speed of 1e9 move
        // thousands of units), or 1e-4 absolute: WGSL's division (2.5 ulp)
        // in the blend's w / W, whose 1 - w / W loses digits when one
        // action is almost all the weight, times motions that large.
        let d = (g.translation - w.translation).abs().max_element();
        let size = w.translation.abs().max_element().max(1.0);
        let twin = players.subscribed(*c).unwrap();
        let states: Vec<_> = twin.actions().collect();
        assert!(
            d < 1e-4 * size,
            "{at}: character {}: {g:?} vs {w:?}\n{states:#?}",
            c.slot()
        );
        let q = g.rotation.dot(w.rotation).abs();
        assert!(
            q > 1.0 - 1e-6,
            "{at}: character {}: {g:?} vs {w:?}",
            c.slot()
        );
        moved = moved.max(w.translation.length());
        // The GPU lists at most 16 a character and frame, in the same
        // order.
        let ge = &got.frame().events;
        let n = want.events.len().min(16);
        assert_eq!(ge.len(), n, "{at}: character {}: events", c.slot());
        for (a, b) in ge.iter().zip(&want.events) {
            assert_eq!((&a.name, a.clip, a.time), (&b.name, b.clip, b.time), "{at}");
            assert!((a.weight - b.weight).abs() <= 2e-6, "{at}: {a:?} vs {b:?}");
        }
        events += n;
    }
    (events, moved)
}

/// Every character's placement on the GPU against `want` (each moved on
/// the CPU by its twin's root motions, `cpu::playback::move_placement`).
fn compare_placements(
    gpu: (&wgpu::Device, &wgpu::Queue),
    crowd: &Crowd,
    players: &GpuPlayers,
    characters: &[CharacterId],
    want: &[[[f32; 4]; 2]],
) {
    let (device, queue) = gpu;
    let size = crowd
        .model(players.model())
        .map(|a| a.chunk_capacity())
        .unwrap();
    let health = crowd
        .model(players.model())
        .map(|a| &a.chunks()[0])
        .unwrap()
        .health();
    let mut chunks = Vec::new();
    for k in 0..crowd
        .model(players.model())
        .map(|a| a.chunks().len())
        .unwrap()
    {
        let b = players.buffers(crowd, k).unwrap().0;
        chunks.push(keyframe_gpu::gpu::read_buffer(health, device, queue, b, b.size()).unwrap());
    }
    for (c, w) in characters.iter().zip(want) {
        let (k, i) = ((c.slot() / size) as usize, (c.slot() % size) as usize);
        let got = &chunks[k][i * 8..i * 8 + 8];
        for (g, w) in got.iter().zip(w.iter().flatten()) {
            let size = w.abs().max(1.0);
            assert!(
                (g - w).abs() < 1e-4 * size,
                "character {}: {got:?} vs {w:?}",
                c.slot()
            );
        }
    }
}

fn run(test: &str, seed: u64, frames: u32) {
    let Some(h) = gpu(test) else { return };
    let (device, queue) = (&h.device, &h.queue);
    let (bound, masks) = model();
    let mut desc = MixerDesc::new(37, 3);
    desc.add_mask(masks[0].clone());
    let mut crowd = Crowd::new().with_chunk_limit(16);
    let model: ModelId = crowd
        .add_mixed_model(device, queue, "chain", &bound, &desc)
        .unwrap();
    // Root motion of node 0, markers on every clip (one at the end of
    // "wave", one in "blip"), and the mask's factor at the root.
    let mut clips = Clips::with_root(&bound, 0).unwrap();
    let marks = [
        (0, 0.25),
        (0, 0.75),
        (1, 0.5),
        (2, 1.0),
        (2, 2.3),
        (3, 0.1),
        (4, 0.001),
    ];
    for (clip, time) in marks {
        clips.add_marker(clip, time, &format!("m{clip}")).unwrap();
    }
    clips.set_masks(&bound, &masks).unwrap();
    let clips = Arc::new(clips);
    let mut players = GpuPlayers::new(device, queue, &mut crowd, model, &clips).unwrap();
    assert_eq!(crowd.model(model).map(|a| a.chunks().len()), Some(3));
    let characters: Vec<CharacterId> = (0..37)
        .map(|_| crowd.add_character(model).unwrap())
        .collect();
    let mut placed = vec![[[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]; characters.len()];
    for (i, &c) in characters.iter().enumerate() {
        players.subscribe(device, queue, &crowd, c).unwrap();
        let r = glam::Quat::from_rotation_y(i as f32 * 0.3);
        let t = glam::Vec3::new(i as f32, 0.0, -0.5 * i as f32);
        players.command(c, Command::SetPlacement(t, r)).unwrap();
        placed[i] = [t.extend(0.0).to_array(), r.to_array()];
    }
    players.move_placements(&mut crowd, true).unwrap();
    let (mut events, mut moved) = (0, 0.0f32);
    let mut rng = Rng(seed);
    let mut layers = vec![Vec::new(); characters.len()];
    let gpu = (device, queue);
    let mut worst = 0.0f32;
    for f in 0..frames {
        for (i, &c) in characters.iter().enumerate() {
            if rng.below(10) < 3 {
                for _ in 0..=rng.below(3) {
                    command(&mut rng, &mut players, c, &mut layers[i]);
                }
            }
        }
        let dt = match rng.below(20) {
            0 => 0.0,
            1 => 3.7,
            _ => rng.unit() * 0.09,
        };
        players.advance(device, queue, &mut crowd, dt).unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.record(&mut encoder);
        queue.submit([encoder.finish()]);
        for (c, p) in characters.iter().zip(&mut placed) {
            let m = players.subscribed(*c).unwrap().frame().root_motion;
            let motion = [m.translation.extend(0.0).to_array(), m.rotation.to_array()];
            *p = keyframe_gpu::cpu::playback::move_placement(*p, motion);
        }
        let at = format!("frame {f}");
        let (e, m) = compare_root_and_events(gpu, &crowd, &mut players, &characters, &at);
        (events, moved) = (events + e, moved.max(m));
        if f % 7 == 6 || f + 1 == frames {
            compare_state(gpu, &crowd, &players, &characters, &at);
            compare_rows(gpu, &crowd, &players, &characters);
            let poses = compare_poses(gpu, &crowd, &players, &characters, (&bound, &masks));
            worst = worst.max(poses);
        }
    }
    compare_placements(gpu, &crowd, &players, &characters, &placed);
    // The comparisons had something to compare.
    assert!(
        events > 100 && moved > 0.1,
        "{events} events, root moved {moved}"
    );
    // The clip times differ by at most an f32 rounding (the pass's
    // `ticks_to_f32` against the host's f64 seconds rounded to f32): the
    // pose by that much of a clip's speed.
    assert!(worst < 2e-4, "poses differ by {worst}");
}

#[test]
fn the_playback_pass_equals_its_twin_under_random_commands() {
    run("gpu_playback random commands", 0x5eed_1234_abcd_0001, 90);
}

#[test]
fn the_playback_pass_equals_its_twin_with_another_seed() {
    run(
        "gpu_playback random commands (2)",
        0x0bad_cafe_0000_7777,
        60,
    );
}

#[test]
fn a_character_looped_for_days_keeps_its_phase_on_the_gpu() {
    // 10^7 s of play in 2,000 uneven steps of whole 1/1024 s, forwards
    // and backwards, on "wave" (2.3 s as an f32: whole ticks): the GPU's
    // playhead equals its twin's and the sum of the steps modulo the clip,
    // computed here in integers.
    let Some(h) = gpu("gpu_playback 10^7 s") else {
        return;
    };
    let (device, queue) = (&h.device, &h.queue);
    let (bound, _) = model();
    let mut crowd = Crowd::new();
    let desc = MixerDesc::new(2, 1);
    let model = crowd
        .add_mixed_model(device, queue, "chain", &bound, &desc)
        .unwrap();
    let clips = Arc::new(Clips::new(bound.library()));
    let mut players = GpuPlayers::new(device, queue, &mut crowd, model, &clips).unwrap();
    let wave = clips.clip("wave").unwrap();
    let characters = [
        crowd.add_character(model).unwrap(),
        crowd.add_character(model).unwrap(),
    ];
    for (c, speed) in characters.iter().zip([1.0, -1.0]) {
        players.command(*c, Command::Play(wave)).unwrap();
        players.command(*c, Command::SetSpeed(speed)).unwrap();
        players.subscribe(device, queue, &crowd, *c).unwrap();
    }
    let ticks_per_second: u128 = 705_600_000 << 16;
    let clip = (u128::from(2.3f32.to_bits() & 0x7f_ffff | 0x80_0000) * ticks_per_second) >> 22;
    let mut total: u128 = 0;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    while total < 10_000_000 * 1024 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = 3000 * 1024 + x % (4000 * 1024); // 3,000 to 7,000 s
        players
            .advance(device, queue, &mut crowd, k as f64 / 1024.0)
            .unwrap();
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.record(&mut encoder);
        queue.submit([encoder.finish()]);
        total += u128::from(k);
    }
    let total = total * (ticks_per_second / 1024);
    let forward = (total % clip, total / clip);
    let back = ((clip - total % clip) % clip, total.div_ceil(clip) - 1);
    let (heads, slots, _) = crowd
        .playback(model)
        .unwrap()
        .read_chunk(device, queue, 0)
        .unwrap();
    for (i, (c, (time, loops))) in characters.iter().zip([forward, back]).enumerate() {
        assert_eq!(heads[i].count, 1);
        let s = &slots[i];
        assert_eq!(u128::from(slot_time(s)), time, "character {i}: phase");
        let got_loops = u128::from(s.loops_lo) | (u128::from(s.loops_hi) << 32);
        assert_eq!(got_loops, loops, "character {i}: loops");
        let (_, twin, _) = players.subscribed(*c).unwrap().records();
        assert_eq!(words(&twin[0]), words(s), "character {i}: the twin");
    }
}
