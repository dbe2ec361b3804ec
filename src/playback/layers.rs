//! A [`Player`]'s layers: clips over the base actions, each with its own
//! weight, mask, blend (mixed in, additive or override), wrap and speed.

use super::clips::ClipHandle;
use super::player::{Layer, LayerId, Player};
use crate::error::{PlaybackError, Result};
use crate::layout::{GpuPlaybackCommand, SLOT_LAYER};

impl Player {
    /// Checks a layer's numbers and blend for `command`.
    fn check_layer(&self, command: &'static str, layer: &Layer) -> Result<()> {
        layer.check(self.character, command)
    }

    /// Layer `layer`'s number, if it is a layer this player has.
    fn layer_of(&self, command: &'static str, layer: LayerId) -> Result<u32> {
        let has = self.slots[..self.state.count as usize]
            .iter()
            .any(|s| s.flags & SLOT_LAYER != 0 && s.layer == layer.index);
        if layer.player == self.id && has {
            return Ok(layer.index);
        }
        Err(PlaybackError::UnknownLayer {
            character: self.character,
            command,
            layer: layer.index,
        }
        .into())
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
        let index = self.next_layer;
        let cmd = GpuPlaybackCommand::layer(0, clip, index, true, &layer.settings());
        self.apply("add_layer", &cmd)?;
        self.next_layer += 1;
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
    pub(crate) fn set_layer(&mut self, layer: LayerId, with: Layer) -> Result<()> {
        let index = self.layer_of("set_layer", layer)?;
        self.check_layer("set_layer", &with)?;
        // The clip is the layer's own: the command leaves it.
        let cmd = GpuPlaybackCommand::layer(0, 0, index, false, &with.settings());
        self.apply("set_layer", &cmd)
    }

    /// Ramps layer `layer`'s weight to `weight` over `duration` seconds
    /// (to 0: the layer is removed when it gets there).
    ///
    /// # Errors
    /// [`PlaybackError::UnknownLayer`], [`PlaybackError::BadDuration`],
    /// [`PlaybackError::BadNumber`].
    pub(crate) fn fade_layer(&mut self, layer: LayerId, weight: f32, duration: f64) -> Result<()> {
        self.check_duration("fade_layer", duration)?;
        self.check_number("fade_layer", "weight", f64::from(weight), true)?;
        let index = self.layer_of("fade_layer", layer)?;
        let cmd = GpuPlaybackCommand::fade_layer(0, index, weight, duration);
        self.apply("fade_layer", &cmd)
    }

    /// Removes layer `layer` at once.
    ///
    /// # Errors
    /// [`PlaybackError::UnknownLayer`].
    pub(crate) fn remove_layer(&mut self, layer: LayerId) -> Result<()> {
        let index = self.layer_of("remove_layer", layer)?;
        self.apply("remove_layer", &GpuPlaybackCommand::remove_layer(0, index))
    }
}
