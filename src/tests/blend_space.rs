//! Blend spaces: the weight functions against values worked out by hand
//! and against the formulas written again here in `f64`, the checks of a
//! space and its parameters, smoothing, and a [`Player`] playing spaces
//! (phase and marker sync, crossfades) against times worked out by hand.

use std::sync::Arc;

use glam::Vec2;

use crate::error::{Error, PlaybackError};
use crate::model::library::AnimationLibrary;
use crate::model::track::{Clip, Track};
use crate::playback::blend::{smooth, weights_1d, weights_cartesian, weights_directional};
use crate::playback::{BlendMode, BlendSpace, BlendSpaceId, BlendSync, Clips, Command, Player};
use crate::{Interpolation, Property};

fn close(got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want) {
        assert!((f64::from(*g) - w).abs() < tol, "{got:?} vs {want:?}");
    }
}

fn v(x: f32, y: f32) -> Vec2 {
    Vec2::new(x, y)
}

#[test]
fn one_d_weighs_the_two_neighbours_linearly_and_clamps_at_the_ends() {
    // Points 4, 0, 1.5 (not in order).
    let points = [v(4.0, 0.0), v(0.0, 0.0), v(1.5, 0.0)];
    let mut w = [0.0f32; 3];
    let cases: [(f32, [f64; 3]); 6] = [
        (0.75, [0.0, 0.5, 0.5]),
        (2.75, [0.5, 0.0, 0.5]),
        // (3.5 - 1.5) / (4 - 1.5) = 0.8 of the way to 4.
        (3.5, [0.8, 0.0, 0.2]),
        (1.5, [0.0, 0.0, 1.0]),
        (-1.0, [0.0, 1.0, 0.0]),
        (9.0, [1.0, 0.0, 0.0]),
    ];
    for (x, want) in cases {
        weights_1d(&points, x, &mut w);
        close(&w, &want, 1e-6);
    }
}

/// Gradient bands in `f64`, written from the formula:
/// `h_i = min_j clamp(1 - v_ip . v_ij / |v_ij|^2, 0, 1)`, normalised.
fn bands(n: usize, vectors: impl Fn(usize, usize) -> ([f64; 2], [f64; 2])) -> Vec<f64> {
    let mut h = vec![1.0f64; n];
    for (i, hi) in h.iter_mut().enumerate() {
        for j in 0..n {
            if j != i {
                let (ij, ip) = vectors(i, j);
                let t = (ip[0] * ij[0] + ip[1] * ij[1]) / (ij[0] * ij[0] + ij[1] * ij[1]);
                *hi = hi.min((1.0 - t).clamp(0.0, 1.0));
            }
        }
    }
    let sum: f64 = h.iter().sum();
    h.iter().map(|x| x / sum).collect()
}

fn f64s(p: Vec2) -> [f64; 2] {
    [f64::from(p.x), f64::from(p.y)]
}

#[test]
fn cartesian_gradient_bands_match_the_formula() {
    // By hand, idle (0,0), forward (0,1), right (1,0) at p = (0.25, 0.5):
    // h_idle = min(1 - 0.5, 1 - 0.25) = 0.5; h_fwd = min(1 - 0.5,
    // 1 - 0.75 / 2) = 0.5; h_right = min(1 - 0.75, 1 - 1.25 / 2) = 0.25;
    // normalised by 1.25.
    let three = [v(0.0, 0.0), v(0.0, 1.0), v(1.0, 0.0)];
    let mut w = [0.0f32; 3];
    weights_cartesian(&three, v(0.25, 0.5), &mut w);
    close(&w, &[0.4, 0.4, 0.2], 1e-6);
    // Held-out points of a plus-shaped space with a centre, against the
    // formula in f64.
    let points = [
        v(0.0, 0.0),
        v(0.0, 1.5),
        v(0.0, -1.0),
        v(1.0, 0.0),
        v(-1.0, 0.0),
        v(0.0, 4.0),
    ];
    let mut w = [0.0f32; 6];
    for p in [
        v(0.3, 0.7),
        v(-0.6, -0.2),
        v(0.9, 2.5),
        v(-2.0, 3.0),
        v(0.1, -3.0),
    ] {
        weights_cartesian(&points, p, &mut w);
        let want = bands(6, |i, j| {
            let (pi, pj, pp) = (f64s(points[i]), f64s(points[j]), f64s(p));
            (
                [pj[0] - pi[0], pj[1] - pi[1]],
                [pp[0] - pi[0], pp[1] - pi[1]],
            )
        });
        close(&w, &want, 1e-5);
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
}

/// Polar gradient band vectors in `f64` (Johansen 2009, eq. 6.14-6.15,
/// alpha 2; the angle to or from the origin 0).
fn polar(pi: [f64; 2], pj: [f64; 2], p: [f64; 2]) -> ([f64; 2], [f64; 2]) {
    let len = |a: [f64; 2]| a[0].hypot(a[1]);
    let angle = |a: [f64; 2], b: [f64; 2]| {
        if len(a) == 0.0 || len(b) == 0.0 {
            0.0
        } else {
            (a[0] * b[1] - a[1] * b[0]).atan2(a[0] * b[0] + a[1] * b[1])
        }
    };
    let m = (len(pi) + len(pj)) / 2.0;
    (
        [(len(pj) - len(pi)) / m, 2.0 * angle(pi, pj)],
        [(len(p) - len(pi)) / m, 2.0 * angle(pi, p)],
    )
}

#[test]
fn directional_gradient_bands_match_the_polar_formula() {
    // Idle at the origin, forward, right, left, back at 1. By hand at
    // p = (0.5, 0.5) (|p| = 0.7071, 45 degrees off forward and right):
    // h_idle = 1 - 1.4142 * 2 / 4 = 0.2929; h_forward = h_right = 0.5
    // (against each other: 1 - (pi^2 / 2) / pi^2); left and back 0.
    let points = [
        v(0.0, 0.0),
        v(0.0, 1.0),
        v(1.0, 0.0),
        v(-1.0, 0.0),
        v(0.0, -1.0),
    ];
    let mut w = [0.0f32; 5];
    weights_directional(&points, v(0.5, 0.5), &mut w);
    let h = 1.0 - 2f64.sqrt() / 2.0;
    let sum = h + 1.0;
    close(&w, &[h / sum, 0.5 / sum, 0.5 / sum, 0.0, 0.0], 1e-5);
    // Straight ahead at half speed: idle and forward halves.
    weights_directional(&points, v(0.0, 0.5), &mut w);
    close(&w, &[0.5, 0.5, 0.0, 0.0, 0.0], 1e-6);
    // Held-out points of a space with two speeds, against the formula.
    let points = [
        v(0.0, 0.0),
        v(0.0, 1.0),
        v(0.9, 0.3),
        v(-1.0, 0.0),
        v(0.0, -0.8),
        v(0.0, 3.0),
        v(2.5, 1.0),
    ];
    let mut w = [0.0f32; 7];
    for p in [
        v(0.3, 0.7),
        v(-0.6, -0.2),
        v(0.9, 2.5),
        v(1.5, 0.4),
        v(0.1, -3.0),
        v(0.0, 0.0),
    ] {
        weights_directional(&points, p, &mut w);
        let want = bands(7, |i, j| polar(f64s(points[i]), f64s(points[j]), f64s(p)));
        close(&w, &want, 1e-5);
    }
}

#[test]
fn smoothing_moves_each_weight_by_at_most_its_step() {
    // The farthest (1 away) moves by the step, 0.1; the others by a
    // tenth of their way: 0.25 + 0.05 / 10. (Weights and targets that
    // sum alike keep that sum.)
    let mut w = [1.0f32, 0.0, 0.25];
    smooth(&mut w, &[0.0, 1.0, 0.3], Some(0.1));
    close(&w, &[0.9, 0.1, 0.255], 1e-6);
    // Within a step of every target: there.
    smooth(&mut w, &[0.85, 0.15, 0.25], Some(0.1));
    close(&w, &[0.85, 0.15, 0.25], 1e-7);
    smooth(&mut w, &[0.0, 1.0, 0.3], None);
    close(&w, &[0.0, 1.0, 0.3], 1e-7);
}

/// Clips "walk" (1 s) and "run" (0.6 s), each moving node 0 along x by
/// 1 and 3 a cycle, "idle" (2 s) still; markers as given.
fn walk_run(markers: bool) -> Clips {
    let step = |d: f32, x: f32| {
        Track::new(
            0,
            Property::Translation,
            Interpolation::Linear,
            vec![0.0, d],
            vec![0.0, 0.0, 0.0, x, 0.0, 0.0],
        )
    };
    let library = AnimationLibrary::new(vec![
        Clip::new("walk", vec![step(1.0, 1.0)]),
        Clip::new("run", vec![step(0.6, 3.0)]),
        Clip::new("idle", vec![step(2.0, 0.0)]),
    ])
    .unwrap();
    let mut clips = Clips::new(&library);
    if markers {
        clips.add_marker(0, 0.25, "left").unwrap();
        clips.add_marker(0, 0.75, "right").unwrap();
        clips.add_marker(1, 0.1, "left").unwrap();
        clips.add_marker(1, 0.4, "right").unwrap();
    }
    clips
}

fn locomotion(clips: &Clips, sync: BlendSync, smoothing: Option<f32>) -> BlendSpace {
    BlendSpace {
        name: "locomotion".into(),
        kind: BlendMode::OneD,
        clips: vec![
            (clips.clip("walk").unwrap(), v(1.0, 0.0)),
            (clips.clip("run").unwrap(), v(3.0, 0.0)),
        ],
        smoothing,
        sync,
    }
}

fn bad_space(err: Error) -> (String, Option<u32>, String) {
    match err {
        Error::Playback(PlaybackError::BadBlendSpace {
            space,
            clip,
            reason,
        }) => (space, clip, reason),
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_spaces_are_refused_naming_the_space_and_the_clip() {
    let mut clips = walk_run(false);
    let other = walk_run(false);
    let good = locomotion(&clips, BlendSync::Off, None);
    let mut cases: Vec<(BlendSpace, Option<u32>, &str)> = Vec::new();
    cases.push((
        BlendSpace {
            clips: vec![],
            ..good.clone()
        },
        None,
        "no clip",
    ));
    let mut s = good.clone();
    s.clips[1].1 = v(1.0, 0.0);
    cases.push((s, Some(1), "as clip 0"));
    let mut s = good.clone();
    s.clips[1].1 = v(f32::NAN, 0.0);
    cases.push((s, Some(1), "not finite"));
    let mut s = good.clone();
    s.clips[0].1 = v(1.0, 2.0);
    cases.push((s, Some(0), "one coordinate"));
    let mut s = good.clone();
    s.clips[1].0 = other.clip("run").unwrap();
    cases.push((s, Some(1), "belongs to clips"));
    let mut s = good.clone();
    s.clips[1].0 = s.clips[0].0;
    cases.push((s, Some(0), "twice"));
    cases.push((
        BlendSpace {
            smoothing: Some(-1.0),
            ..good.clone()
        },
        None,
        "smoothing",
    ));
    let mut s = good.clone();
    s.kind = BlendMode::Directional;
    s.clips[1].1 = v(1.0, 0.0);
    cases.push((s, Some(1), "as clip 0"));
    for (k, (space, clip, why)) in cases.into_iter().enumerate() {
        let (name, c, reason) = bad_space(clips.add_blend_space(space).unwrap_err());
        assert_eq!(
            (name.as_str(), c),
            ("locomotion", clip),
            "case {k}: {reason}"
        );
        assert!(reason.contains(why), "case {k}: {reason}");
    }
    clips.add_blend_space(good.clone()).unwrap();
    let (_, _, reason) = bad_space(clips.add_blend_space(good).unwrap_err());
    assert!(reason.contains("name"), "{reason}");
}

fn player(clips: Clips, space: impl FnOnce(&Clips) -> BlendSpace) -> (Player, BlendSpaceId) {
    let mut clips = clips;
    let s = space(&clips);
    let id = clips.add_blend_space(s).unwrap();
    (Player::new(&Arc::new(clips)), id)
}

/// `(clip, time, weight)` of every action.
fn table(p: &Player) -> Vec<(u32, f64, f32)> {
    p.actions()
        .map(|a| (a.clip.index(), a.time, a.weight))
        .collect()
}

/// Times within 1e-6 s: clip durations are `f32` (run's 0.6 is
/// 0.60000002).
fn rows_close(got: &[(u32, f64, f32)], want: &[(u32, f64, f32)]) {
    assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
    for (g, w) in got.iter().zip(want) {
        let ok = g.0 == w.0 && (g.1 - w.1).abs() < 1e-6 && (g.2 - w.2).abs() < 1e-6;
        assert!(ok, "{got:?} vs {want:?}");
    }
}

#[test]
fn bad_parameters_and_other_players_spaces_are_refused() {
    let (mut p, id) = player(walk_run(false), |c| locomotion(c, BlendSync::Off, None));
    for bad in [v(f32::NAN, 0.0), v(f32::INFINITY, 0.0), v(1.0, 1.0)] {
        match p.command(Command::SetBlendParams(id, bad)) {
            Err(Error::Playback(PlaybackError::BadBlendParams { space, .. })) => {
                assert_eq!(space, "locomotion");
            }
            other => panic!("{bad}: {other:?}"),
        }
    }
    let (_, theirs) = player(walk_run(false), |c| locomotion(c, BlendSync::Off, None));
    let refused = p.command(Command::PlayBlendSpace(theirs, 0.0));
    assert!(matches!(
        refused,
        Err(Error::Playback(PlaybackError::UnknownBlendSpace { .. }))
    ));
    let refused = p.command(Command::PlayBlendSpace(id, -1.0));
    assert!(matches!(
        refused,
        Err(Error::Playback(PlaybackError::BadDuration { .. }))
    ));
    assert_eq!(p.actions().count(), 0);
}

#[test]
fn phase_sync_advances_one_phase_at_the_blended_cycle() {
    let (mut p, id) = player(walk_run(false), |c| locomotion(c, BlendSync::Phase, None));
    // Speed 2: halfway between walk (1) and run (3).
    p.command(Command::SetBlendParams(id, v(2.0, 0.0))).unwrap();
    p.command(Command::PlayBlendSpace(id, 0.0)).unwrap();
    // D = (0.5 * 1 + 0.5 * 0.6) / 1 = 0.8 s: 0.2 s is a quarter cycle,
    // walk at 0.25, run at 0.15; the root moves 0.5 * 0.25 + 0.5 * 0.75.
    p.advance(0.2).unwrap();
    rows_close(&table(&p), &[(0, 0.25, 0.5), (1, 0.15, 0.5)]);
    // Speed 2.5: walk 0.25, run 0.75: D = 0.25 + 0.45 = 0.7 s; 0.35 s
    // more is half a cycle: phase 0.75.
    p.command(Command::SetBlendParams(id, v(2.5, 0.0))).unwrap();
    p.advance(0.35).unwrap();
    rows_close(&table(&p), &[(0, 0.75, 0.25), (1, 0.45, 0.75)]);
    // Past the cycle's end: phase 0.75 + 0.35 / 0.7 = 1.25: both loop.
    p.advance(0.35).unwrap();
    rows_close(&table(&p), &[(0, 0.25, 0.25), (1, 0.15, 0.75)]);
    let loops: Vec<u64> = p.actions().map(|a| a.loops).collect();
    assert_eq!(loops, [1, 1]);
}

#[test]
fn a_crossfade_into_a_synced_space_keeps_the_phase_and_fades() {
    let (mut p, id) = player(walk_run(false), |c| locomotion(c, BlendSync::Phase, None));
    let idle = p.clip("idle").unwrap();
    let walk = p.clip("walk").unwrap();
    p.command(Command::Play(walk)).unwrap();
    p.advance(0.4).unwrap();
    // Walk at 0.4 of its cycle; the space at speed 1.5 (walk 0.75, run
    // 0.25) takes that phase, over 0.2 s: walk is the space's clip and
    // fades out of its own weight while the space fades in.
    p.command(Command::SetBlendParams(id, v(1.5, 0.0))).unwrap();
    p.command(Command::PlayBlendSpace(id, 0.18)).unwrap();
    rows_close(&table(&p), &[(0, 0.4, 1.0), (1, 0.24, 0.0)]);
    // D = 0.75 + 0.15 = 0.9 s; 0.09 s is 0.1 cycle: phase 0.5. Walk: its
    // own 1 -> 0 halfway (0.5) plus the space's 0.5 * 0.75; run 0.5 * 0.25.
    p.advance(0.09).unwrap();
    rows_close(&table(&p), &[(0, 0.5, 0.5 + 0.375), (1, 0.3, 0.125)]);
    p.advance(0.18).unwrap();
    rows_close(&table(&p), &[(0, 0.7, 0.75), (1, 0.42, 0.25)]);
    // Out of the space to idle by a plain crossfade: the space's actions
    // fade out from their weights, playing on at their own speeds.
    p.command(Command::Crossfade(idle, 0.1)).unwrap();
    p.advance(0.05).unwrap();
    rows_close(
        &table(&p),
        &[(0, 0.75, 0.375), (1, 0.47, 0.125), (2, 0.05, 0.5)],
    );
}

#[test]
fn marker_sync_keeps_the_fraction_between_the_same_markers() {
    let (mut p, id) = player(walk_run(true), |c| locomotion(c, BlendSync::Markers, None));
    // Walk leads at 0.75 of the weight (speed 1.5); D = 0.75 + 0.15.
    p.command(Command::SetBlendParams(id, v(1.5, 0.0))).unwrap();
    p.command(Command::PlayBlendSpace(id, 0.0)).unwrap();
    // 0.45 s is half a cycle: walk at 0.5, halfway from left (0.25) to
    // right (0.75); run halfway from its left (0.1) to its right (0.4):
    // 0.25 (phase sync would put it at 0.3). Both crossed "left".
    let frame = p.advance(0.45).unwrap();
    let crossed: Vec<(u32, &str)> = frame
        .events
        .iter()
        .map(|e| (e.clip.index(), &*e.name))
        .collect();
    assert_eq!(crossed, [(0, "left"), (1, "left")]);
    rows_close(&table(&p), &[(0, 0.5, 0.75), (1, 0.25, 0.25)]);
    // 0.36 s more (0.4 cycle): walk 0.9, 0.15 / 0.5 = 0.3 from right
    // (0.75) to left (0.25 + 1); run 0.3 from right (0.4) to left (0.1 +
    // 0.6): 0.4 + 0.3 * 0.3 = 0.49. Both crossed "right".
    let frame = p.advance(0.36).unwrap();
    let crossed: Vec<(u32, &str)> = frame
        .events
        .iter()
        .map(|e| (e.clip.index(), &*e.name))
        .collect();
    assert_eq!(crossed, [(0, "right"), (1, "right")]);
    rows_close(&table(&p), &[(0, 0.9, 0.75), (1, 0.49, 0.25)]);
}

#[test]
fn smoothed_weights_move_at_most_their_rate_per_second() {
    let (mut p, id) = player(walk_run(false), |c| {
        locomotion(c, BlendSync::Off, Some(2.0))
    });
    p.command(Command::SetBlendParams(id, v(1.0, 0.0))).unwrap();
    p.command(Command::PlayBlendSpace(id, 0.0)).unwrap();
    // The parameter jumps from walk to run: 2 per second, 0.1 s steps.
    p.command(Command::SetBlendParams(id, v(3.0, 0.0))).unwrap();
    for k in 1..=7 {
        p.advance(0.1).unwrap();
        let moved = (0.2 * k as f32).min(1.0);
        let got: Vec<f32> = table(&p).iter().map(|a| a.2).collect();
        close(&got, &[f64::from(1.0 - moved), f64::from(moved)], 1e-6);
    }
}

#[test]
fn a_seek_keeps_the_synced_clips_in_phase() {
    let (mut p, id) = player(walk_run(false), |c| locomotion(c, BlendSync::Phase, None));
    p.command(Command::SetBlendParams(id, v(1.5, 0.0))).unwrap();
    p.command(Command::PlayBlendSpace(id, 0.0)).unwrap();
    // Every playhead to 0.5 s; walk leads (0.75): phase 0.5, run at 0.3.
    p.command(Command::Seek(0.5)).unwrap();
    rows_close(&table(&p), &[(0, 0.5, 0.75), (1, 0.3, 0.25)]);
    // D = 0.9 s: 0.09 s is 0.1 cycle on, no jump.
    p.advance(0.09).unwrap();
    rows_close(&table(&p), &[(0, 0.6, 0.75), (1, 0.36, 0.25)]);
}

#[test]
fn a_refused_command_leaves_the_space_playing_and_play_ends_it() {
    let (mut p, id) = player(walk_run(false), |c| locomotion(c, BlendSync::Phase, None));
    let foreign = walk_run(false).clip("idle").unwrap();
    p.command(Command::SetBlendParams(id, v(2.0, 0.0))).unwrap();
    p.command(Command::PlayBlendSpace(id, 0.0)).unwrap();
    assert!(p.command(Command::Crossfade(foreign, 0.5)).is_err());
    // Still synced: D = 0.8 s, 0.2 s a quarter cycle.
    p.advance(0.2).unwrap();
    rows_close(&table(&p), &[(0, 0.25, 0.5), (1, 0.15, 0.5)]);
    // A play ends the space: idle alone, and the space's weights stay
    // out of it.
    let idle = p.clip("idle").unwrap();
    p.command(Command::Play(idle)).unwrap();
    p.advance(0.1).unwrap();
    rows_close(&table(&p), &[(2, 0.1, 1.0)]);
}

#[test]
fn a_space_that_does_not_fit_is_refused_and_nothing_changes() {
    let (p, id) = player(walk_run(false), |c| locomotion(c, BlendSync::Off, None));
    let mut p = p.with_max_actions(1);
    let idle = p.clip("idle").unwrap();
    p.command(Command::Play(idle)).unwrap();
    assert!(matches!(
        p.command(Command::PlayBlendSpace(id, 0.25)),
        Err(Error::Playback(PlaybackError::TooManyActions { .. }))
    ));
    p.advance(0.1).unwrap();
    rows_close(&table(&p), &[(2, 0.1, 1.0)]);
}

#[test]
fn crossfading_to_another_space_ends_the_first_with_its_fade() {
    let mut clips = walk_run(false);
    let loco = clips
        .add_blend_space(locomotion(&clips, BlendSync::Phase, None))
        .unwrap();
    let rest = BlendSpace {
        name: "rest".into(),
        kind: BlendMode::Cartesian,
        clips: vec![(clips.clip("idle").unwrap(), v(0.0, 0.0))],
        smoothing: None,
        sync: BlendSync::Off,
    };
    let rest = clips.add_blend_space(rest).unwrap();
    let mut p = Player::new(&Arc::new(clips));
    p.command(Command::SetBlendParams(loco, v(1.0, 0.0)))
        .unwrap();
    p.command(Command::PlayBlendSpace(loco, 0.0)).unwrap();
    p.command(Command::PlayBlendSpace(rest, 0.2)).unwrap();
    // Halfway: loco's walk (1) at 0.5, idle at 0.5; run at 0 (its weight
    // in loco).
    p.advance(0.1).unwrap();
    rows_close(&table(&p), &[(0, 0.1, 0.5), (1, 0.06, 0.0), (2, 0.1, 0.5)]);
    // At the end, loco and its clips are gone.
    p.advance(0.1).unwrap();
    rows_close(&table(&p), &[(2, 0.2, 1.0)]);
}

#[test]
fn a_crossfade_between_synced_spaces_keeps_one_phase() {
    let mut clips = walk_run(false);
    let loco = clips
        .add_blend_space(locomotion(&clips, BlendSync::Phase, None))
        .unwrap();
    let (run, idle) = (clips.clip("run").unwrap(), clips.clip("idle").unwrap());
    let tired = BlendSpace {
        name: "tired".into(),
        kind: BlendMode::OneD,
        clips: vec![(run, v(0.0, 0.0)), (idle, v(1.0, 0.0))],
        smoothing: None,
        sync: BlendSync::Phase,
    };
    let tired = clips.add_blend_space(tired).unwrap();
    let mut p = Player::new(&Arc::new(clips));
    // Loco at run alone: a cycle of 0.625 s (run's f32 0.6 s); half of it.
    p.command(Command::SetBlendParams(loco, v(3.0, 0.0)))
        .unwrap();
    p.command(Command::PlayBlendSpace(loco, 0.0)).unwrap();
    let run_d = f64::from(0.6f32);
    p.advance(run_d / 2.0).unwrap();
    rows_close(&table(&p), &[(0, 0.5, 0.0), (1, run_d / 2.0, 1.0)]);
    // Into "tired" (run 0.5, idle 0.5) over 0.2 s: idle joins at the
    // phase, 0.5 of its 2 s.
    p.command(Command::SetBlendParams(tired, v(0.5, 0.0)))
        .unwrap();
    p.command(Command::PlayBlendSpace(tired, 0.2)).unwrap();
    rows_close(
        &table(&p),
        &[(0, 0.5, 0.0), (1, run_d / 2.0, 1.0), (2, 1.0, 0.0)],
    );
    // Halfway: run 0.5 * 1 + 0.5 * 0.5, idle 0.5 * 0.5; one phase at
    // D = (0.75 L_run + 0.25 * 2) / 1.
    p.advance(0.1).unwrap();
    let phase = 0.5 + 0.1 / (0.75 * run_d + 0.25 * 2.0);
    rows_close(
        &table(&p),
        &[
            (0, phase, 0.0),
            (1, phase * run_d, 0.75),
            (2, phase * 2.0, 0.25),
        ],
    );
}
