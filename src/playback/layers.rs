//! A [`Player`]'s layers: clips over the base actions, each with its own
//! weight, mask, blend (mixed in, additive or override), wrap and speed.

use super::clips::ClipHandle;
use super::clock::Clock;
use super::player::{Fade, Layer, LayerId, Player, Playing};
use crate::error::{PlaybackError, Result};

impl Player {
    /// Checks a layer's numbers and blend for `command`.
    fn check_layer(&self, command: &'static str, layer: &Layer) -> Result<()> {
        self.check_number(command, "weight", f64::from(layer.weight), true)?;
        self.check_number(command, "speed", layer.speed, false)?;
        if let Some(r) = layer.additive {
            self.check_number(command, "reference time", r, false)?;
            if layer.overrides {
                return Err(PlaybackError::AdditiveOverride {
                    character: self.character,
                    command,
                }
                .into());
            }
        }
        Ok(())
    }

    /// The position of layer `layer` in the table.
    fn layer_at(&self, command: &'static str, layer: LayerId) -> Result<usize> {
        self.playing
            .iter()
            .position(|p| layer.player == self.id && p.layer == Some(layer.index))
            .ok_or_else(|| {
                PlaybackError::UnknownLayer {
                    character: self.character,
                    command,
                    layer: layer.index,
                }
                .into()
            })
    }

    /// Adds a layer playing `clip` from its start over the base; returns
    /// its handle. Layers blend in the order they were added, after the
    /// base (`docs/USAGE.md`, "The rules").
    ///
    /// # Errors
    /// [`PlaybackError::ClipOfOtherLibrary`]; [`PlaybackError::BadNumber`]
    /// for a weight or speed that is not finite, a negative weight or an
    /// additive reference time that is not finite;
    /// [`PlaybackError::AdditiveOverride`];
    /// [`PlaybackError::TooManyActions`] when the table is full
    /// ([`with_max_actions`](Self::with_max_actions)).
    pub fn add_layer(&mut self, clip: ClipHandle, layer: Layer) -> Result<LayerId> {
        let clip = self.own("add_layer", clip)?;
        self.check_layer("add_layer", &layer)?;
        if self.playing.len() >= self.max_actions as usize {
            return Err(self.too_many("add_layer").into());
        }
        let index = self.next_layer;
        self.next_layer += 1;
        self.playing.push(Playing {
            clip,
            clock: Clock::at(0.0, 0.0, layer.wrap),
            wrap: layer.wrap,
            weight: layer.weight,
            fade: None,
            layer: Some(index),
            mask: layer.mask,
            reference_time: layer.additive,
            overrides: layer.overrides,
            speed: layer.speed,
            repetitions: layer.repetitions,
            loops: 0,
            finished: false,
        });
        Ok(LayerId {
            player: self.id,
            index,
        })
    }

    /// Changes layer `layer` to `with`: its weight (at once, ending any
    /// fade), mask, blend, wrap, speed and repetitions. Its playhead goes
    /// on where it is.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownLayer`] and those of
    /// [`add_layer`](Self::add_layer) for the numbers and blend.
    pub fn set_layer(&mut self, layer: LayerId, with: Layer) -> Result<()> {
        let i = self.layer_at("set_layer", layer)?;
        self.check_layer("set_layer", &with)?;
        let p = &mut self.playing[i];
        if p.wrap != with.wrap {
            p.finished = false;
        }
        p.weight = with.weight;
        p.fade = None;
        p.mask = with.mask;
        p.reference_time = with.additive;
        p.overrides = with.overrides;
        p.wrap = with.wrap;
        p.speed = with.speed;
        p.repetitions = with.repetitions;
        Ok(())
    }

    /// Ramps layer `layer`'s weight to `weight` over `duration` seconds
    /// (to 0: the layer is removed when it gets there).
    ///
    /// # Errors
    /// [`PlaybackError::UnknownLayer`], [`PlaybackError::BadDuration`],
    /// [`PlaybackError::BadNumber`].
    pub fn fade_layer(&mut self, layer: LayerId, weight: f32, duration: f64) -> Result<()> {
        if !(duration.is_finite() && duration > 0.0) {
            return Err(PlaybackError::BadDuration {
                character: self.character,
                command: "fade_layer",
                duration,
            }
            .into());
        }
        self.check_number("fade_layer", "weight", f64::from(weight), true)?;
        let i = self.layer_at("fade_layer", layer)?;
        let p = &mut self.playing[i];
        p.fade = Some(Fade {
            from: p.weight,
            to: weight,
            elapsed: 0.0,
            duration,
        });
        Ok(())
    }

    /// Removes layer `layer` at once.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownLayer`].
    pub fn remove_layer(&mut self, layer: LayerId) -> Result<()> {
        let i = self.layer_at("remove_layer", layer)?;
        self.playing.remove(i);
        Ok(())
    }
}
