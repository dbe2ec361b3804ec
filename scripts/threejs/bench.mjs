// three.js on one thread, on the same work as keyframe-gpu's bench
// workloads `skin_chain` and `blend_chain` (examples/bench/data.rs,
// workloads.rs, blend.rs), for docs/PERFORMANCE.md's "Against three.js".
//
// Run: cd scripts/threejs && npm ci && node bench.mjs [--frames N] [--warmup N]
//
// Prints one JSON object per workload per line on stdout (nothing else):
// {"workload": "skin_chain", "threejs_ms": ..., "three_version": ...,
//  "mixer_ms": ..., "world_ms": ..., "skeleton_ms": ..., ...}
// `threejs_ms` is the median over the measured frames of one whole frame;
// `mixer_ms`, `world_ms` and `skeleton_ms` are the medians of its three
// phases, timed inside the same frames.
//
// The shapes, as in the crate's bench:
// - every character is its own root `Object3D` with a chain of 64 `Bone`s,
//   each 0.1 above its parent, and a `Skeleton` of them whose inverse bind
//   matrices translate joint k back by 0.1 (k + 1), as data.rs builds them
//   (no SkinnedMesh: nothing here draws);
// - 4 clips, each 64 LINEAR quaternion tracks (one per bone) of 60 keys at
//   irregular times (intervals of 0.5 to 1.5 frames at 30 fps, each track
//   its own times) and unit quaternions on a random walk; seeded random
//   data (the cost does not depend on the values);
// - skin_chain: 1,000 characters, one `AnimationMixer` per character with
//   one action of a random clip at a random time;
// - blend_chain: 1,000 characters, 3 actions each at the same random time:
//   clips 0 and 1 with weights 1 - f and f (f random per character; fixed
//   weights, as the crate's bench sets them, so no weight interpolant runs),
//   and clip 2 made additive by `AnimationUtils.makeClipAdditive` with
//   reference frame 0. The crate masks the additive action to nodes 0..32;
//   three.js has no masks, so the additive clip keeps only the tracks of
//   bones 0..31: a bone outside a mask is neither sampled nor blended by
//   the crate's mixer for that action, so this is the same work.
//
// One frame, for every character: `mixer.update(1 / 60)` (sample every
// action and blend into the bones' quaternions), then one
// `scene.updateMatrixWorld()` over all characters, then
// `skeleton.update()` (bone world matrix x inverse bind matrix into
// `boneMatrices`). Actions loop (LoopRepeat). The crate's bench keeps its
// instance times fixed between frames; here they advance by 1/60 s, as in a
// game loop: either way each track's search starts from the key found the
// frame before (three.js's interpolants cache it) and rarely moves.

import * as THREE from 'three';
import { readFileSync } from 'node:fs';

const threeVersion = JSON.parse(
  readFileSync(new URL('./node_modules/three/package.json', import.meta.url), 'utf8'),
).version;

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isInteger(v) || v < 1) {
    console.error(`bench.mjs: ${name} wants a positive integer`);
    process.exit(2);
  }
  return v;
}

const FRAMES = arg('--frames', 30);
const WARMUP = arg('--warmup', 20);
const CHARACTERS = 1000;
const JOINTS = 64;
const CLIPS = 4;
const KEYS = 60;
const DT = 1 / 60;

// mulberry32: small, seeded, reproducible.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const range = (r, lo, hi) => lo + (hi - lo) * r();

function unitQuat(r) {
  for (;;) {
    const q = [range(r, -1, 1), range(r, -1, 1), range(r, -1, 1), range(r, -1, 1)];
    const n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (n2 > 0.01 && n2 <= 1) {
      const n = Math.sqrt(n2);
      return q.map((c) => c / n);
    }
  }
}

// As data.rs: irregular key times, a random walk of unit quaternions.
function chainClip(r, name, joints) {
  const tracks = [];
  for (let j = 0; j < joints; j++) {
    const times = new Float32Array(KEYS);
    let t = 0;
    for (let k = 0; k < KEYS; k++) {
      times[k] = t;
      t += range(r, 0.5, 1.5) / 30;
    }
    const values = new Float32Array(KEYS * 4);
    let q = unitQuat(r);
    for (let k = 0; k < KEYS; k++) {
      values.set(q, k * 4);
      const p = q.map((c) => c + range(r, -0.1, 0.1));
      const n = Math.hypot(...p);
      q = p.map((c) => c / n);
    }
    tracks.push(
      new THREE.QuaternionKeyframeTrack(`b${j}.quaternion`, times, values, THREE.InterpolateLinear),
    );
  }
  return new THREE.AnimationClip(name, -1, tracks);
}

function character(scene) {
  const root = new THREE.Object3D();
  const bones = [];
  let parent = root;
  for (let j = 0; j < JOINTS; j++) {
    const b = new THREE.Bone();
    b.name = `b${j}`;
    b.position.set(0, 0.1, 0);
    parent.add(b);
    bones.push(b);
    parent = b;
  }
  const inverses = bones.map((_, k) => new THREE.Matrix4().makeTranslation(0, -0.1 * (k + 1), 0));
  const skeleton = new THREE.Skeleton(bones, inverses);
  scene.add(root);
  return { root, bones, skeleton, mixer: new THREE.AnimationMixer(root) };
}

function build(workload) {
  const r = rng(workload === 'skin_chain' ? 8 : 9);
  const clips = Array.from({ length: CLIPS }, (_, c) => chainClip(r, `chain${c}`, JOINTS));
  let additive = null;
  if (workload === 'blend_chain') {
    // Clip 2 on bones 0..31 only (the crate's mask on nodes 0..32), with
    // clip 2's duration, made additive against its own frame 0.
    const c2 = clips[2];
    additive = new THREE.AnimationClip(
      'chain2_additive_lower_half',
      c2.duration,
      c2.tracks.slice(0, JOINTS / 2).map((t) => t.clone()),
    );
    THREE.AnimationUtils.makeClipAdditive(additive, 0);
  }
  const scene = new THREE.Scene();
  const chars = [];
  for (let i = 0; i < CHARACTERS; i++) {
    const ch = character(scene);
    if (workload === 'skin_chain') {
      const clip = clips[Math.floor(r() * CLIPS)];
      const a = ch.mixer.clipAction(clip);
      a.time = range(r, 0, clip.duration);
      a.play();
    } else {
      const f = r();
      const t = range(r, 0, clips[0].duration);
      const a0 = ch.mixer.clipAction(clips[0]);
      const a1 = ch.mixer.clipAction(clips[1]);
      const a2 = ch.mixer.clipAction(additive);
      if (a2.blendMode !== THREE.AdditiveAnimationBlendMode) {
        console.error('bench.mjs: the additive clip did not give an additive action');
        process.exit(1);
      }
      a0.setEffectiveWeight(1 - f);
      a1.setEffectiveWeight(f);
      for (const a of [a0, a1, a2]) {
        a.time = t;
        a.play();
      }
    }
    chars.push(ch);
  }
  return { scene, chars };
}

function frame({ scene, chars }, phases) {
  const t0 = performance.now();
  for (let i = 0; i < chars.length; i++) chars[i].mixer.update(DT);
  const t1 = performance.now();
  scene.updateMatrixWorld();
  const t2 = performance.now();
  for (let i = 0; i < chars.length; i++) chars[i].skeleton.update();
  const t3 = performance.now();
  if (phases) {
    phases.mixer.push(t1 - t0);
    phases.world.push(t2 - t1);
    phases.skeleton.push(t3 - t2);
    phases.total.push(t3 - t0);
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

// Fails loudly if the frame did not do the work: every bone animated (not
// the identity it started at), unit quaternions, joint matrices written.
function check(workload, { chars }) {
  const ch = chars[0];
  for (const b of ch.bones) {
    const q = b.quaternion;
    const n = Math.hypot(q.x, q.y, q.z, q.w);
    if (Math.abs(n - 1) > 1e-3 || Math.abs(q.w) > 0.999999) {
      console.error(`bench.mjs: ${workload}: bone ${b.name} not animated: ${q.toArray()}`);
      process.exit(1);
    }
  }
  const m = ch.skeleton.boneMatrices;
  const last = new THREE.Matrix4()
    .copy(ch.bones[JOINTS - 1].matrixWorld)
    .multiply(ch.skeleton.boneInverses[JOINTS - 1]);
  for (let i = 0; i < 16; i++) {
    if (Math.abs(m[(JOINTS - 1) * 16 + i] - last.elements[i]) > 1e-6) {
      console.error(`bench.mjs: ${workload}: boneMatrices not written`);
      process.exit(1);
    }
  }
}

for (const workload of ['skin_chain', 'blend_chain']) {
  const w = build(workload);
  for (let i = 0; i < WARMUP; i++) frame(w);
  check(workload, w);
  const phases = { mixer: [], world: [], skeleton: [], total: [] };
  for (let i = 0; i < FRAMES; i++) frame(w, phases);
  const r3 = (x) => Math.round(x * 1000) / 1000;
  console.log(
    JSON.stringify({
      workload,
      threejs_ms: r3(median(phases.total)),
      three_version: threeVersion,
      node_version: process.versions.node,
      characters: CHARACTERS,
      joints: JOINTS,
      actions: workload === 'skin_chain' ? 1 : 3,
      frames: FRAMES,
      warmup: WARMUP,
      mixer_ms: r3(median(phases.mixer)),
      world_ms: r3(median(phases.world)),
      skeleton_ms: r3(median(phases.skeleton)),
      min_ms: r3(Math.min(...phases.total)),
      max_ms: r3(Math.max(...phases.total)),
    }),
  );
}
