//! Each frame's action table, generated from the frame number alone (a
//! seeded splitmix64, no dependency): how many characters there are, and
//! for each one where it is in a four-second story that runs through
//! every kind of mix: one clip; a crossfade from walk to run; run under a
//! waving upper body (two masks); a crossfade back; walk with breathing
//! added on top. Characters start the story at different times, so every
//! frame holds a bit of everything, and crossfades start and end all the
//! time. A few frames instead bring a hostile table, which the mixer must
//! refuse with the expected error, the previous frame staying in effect.

use keyframe_gpu::{Action, MaskId, MixError, WrapMode};

/// Which clips play each part of the story, and the masks of the upper
/// body and the rest (`model::story`).
#[derive(Debug, Clone, Copy)]
pub struct Story {
    /// Clips in the library.
    pub clips: u32,
    pub walk: u32,
    pub run: u32,
    pub wave: u32,
    pub breathe: u32,
    pub idle: u32,
    pub upper: MaskId,
    pub lower: MaskId,
}

/// Frames per second of the soak's clock.
const FPS: f64 = 60.0;

/// splitmix64: a small, well-mixed generator, seeded per frame.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n`.
    fn below(&mut self, n: u32) -> u32 {
        (self.next() % u64::from(n.max(1))) as u32
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// One frame's actions: `counts[c]` consecutive actions are character
/// `c`'s.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub actions: Vec<Action>,
    pub counts: Vec<u32>,
}

/// The table of frame `frame`, for between `min` and `max` characters.
pub fn table(story: &Story, frame: u64, min: u32, max: u32) -> Table {
    let mut rng = Rng::new(frame.wrapping_mul(0xD134_2543_DE82_EF95) ^ 0x5EED);
    let n = min + rng.below(max - min + 1);
    let now = frame as f64 / FPS;
    let mut t = Table::default();
    let (upper, lower) = (story.upper, story.lower);
    let Story {
        walk,
        run,
        wave,
        breathe,
        idle,
        ..
    } = *story;
    for c in 0..n {
        // Each character's clock: its own offset and speed.
        let local = now * (0.8 + 0.05 * f64::from(c % 9)) + f64::from(c) * 0.37;
        let phase = local.rem_euclid(4.0);
        let play = |clip| Action::new(clip, local).with_wrap(WrapMode::Repeat);
        let before = t.actions.len();
        match phase {
            p if p < 1.0 => {
                t.actions.push(play(if c % 3 == 0 { idle } else { walk }));
            }
            p if p < 1.5 => {
                let fade = ((p - 1.0) / 0.5) as f32;
                t.actions.push(play(walk).with_weight(1.0 - fade));
                t.actions.push(play(run).with_weight(fade));
            }
            p if p < 2.5 => {
                t.actions.push(play(run).with_mask(lower));
                t.actions
                    .push(play(wave).with_wrap(WrapMode::PingPong).with_mask(upper));
            }
            p if p < 3.0 => {
                let fade = ((p - 2.5) / 0.5) as f32;
                t.actions.push(play(run).with_weight(1.0 - fade));
                t.actions.push(play(walk).with_weight(fade));
            }
            _ => {
                t.actions.push(play(walk));
                t.actions.push(play(breathe).additive(0.0).with_weight(0.7));
            }
        }
        // Now and then a breathing layer on top of whatever plays, at a
        // weight that drifts.
        if rng.below(4) == 0 {
            t.actions
                .push(play(breathe).additive(0.5).with_weight(rng.unit()));
        }
        t.counts.push((t.actions.len() - before) as u32);
    }
    t
}

/// The kinds of hostile table, in turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hostile {
    NegativeWeight,
    NanTime,
    UnknownClip,
    TooManyActions,
    UnknownMask,
}

impl Hostile {
    /// Whether `e` is the refusal this kind must get.
    pub fn refused_with(self, e: &MixError) -> bool {
        matches!(
            (self, e),
            (Hostile::NegativeWeight, MixError::BadWeight { .. })
                | (Hostile::NanTime, MixError::TimeNotFinite { .. })
                | (Hostile::UnknownClip, MixError::UnknownClip { .. })
                | (Hostile::TooManyActions, MixError::TooManyActions { .. })
                | (Hostile::UnknownMask, MixError::UnknownMask { .. })
        )
    }
}

/// Frame `frame`'s table with one hostile entry (kinds in turn), among
/// valid ones: one character's action, chosen by the frame's generator.
pub fn hostile(
    story: &Story,
    frame: u64,
    min: u32,
    max: u32,
    per_character: u32,
) -> (Table, Hostile) {
    let mut t = table(story, frame, min, max);
    let mut rng = Rng::new(frame ^ 0xBAD);
    let kinds = [
        Hostile::NegativeWeight,
        Hostile::NanTime,
        Hostile::UnknownClip,
        Hostile::TooManyActions,
        Hostile::UnknownMask,
    ];
    let kind = kinds[(frame / 250 % kinds.len() as u64) as usize];
    let c = rng.below(t.counts.len() as u32) as usize;
    let first: usize = t.counts[..c].iter().map(|&n| n as usize).sum();
    let a = &mut t.actions[first];
    match kind {
        Hostile::NegativeWeight => *a = a.with_weight(-0.5),
        Hostile::NanTime => a.time = f64::NAN,
        Hostile::UnknownClip => a.clip = story.clips + 7,
        Hostile::UnknownMask => *a = a.with_mask(MaskId::new(9)),
        Hostile::TooManyActions => {
            let extra = per_character + 1 - t.counts[c];
            let copy = *a;
            for _ in 0..extra {
                t.actions.insert(first, copy);
            }
            t.counts[c] = per_character + 1;
        }
    }
    (t, kind)
}
