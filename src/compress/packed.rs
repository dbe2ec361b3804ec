//! A compressed library's packed words as one value ([`Packed`]): every
//! track's block, then the verbatim tracks' words, with the readers of a
//! block's header, offsets and frame that the tables and the plan use
//! (the decoder reads the same words in `shaders/decode.wgsl` and its
//! twin, `src/cpu/decode.rs`).

use crate::error::{index_u32, Error, Result};
use crate::kinds::Interpolation;

use super::format::{
    offset_words, packed_block, CompressedTrack, COMPRESS_HEADER_WORDS, ENC_FRAMED, VERBATIM_META,
};

/// A compressed library's packed words: a block per track at its row's
/// values offset, every block first, then the verbatim tracks' words
/// (from [`verbatim_start`](Self::verbatim_start)), which have no block.
/// The decoder reads up to 3 words past the last one: the device's buffer
/// has zeros there, and the CPU twin reads zeros.
#[derive(Debug, Clone, Default)]
pub(crate) struct Packed {
    words: Vec<u32>,
    verbatim_start: u32,
}

impl Packed {
    /// The packed words of `tracks` (each with its width and its
    /// interpolation), and each track's values offset in them, in the
    /// order given: blocks in order from word 0, then the verbatim tracks'
    /// words in order.
    ///
    /// # Errors
    /// [`Error::LimitExceeded`] when the words cannot be indexed with `u32`.
    pub(crate) fn new<'a>(
        tracks: impl Iterator<Item = (&'a CompressedTrack, u32, Interpolation)> + Clone,
    ) -> Result<(Packed, Vec<u32>)> {
        let mut block_words = 0u64;
        for (ct, width, interpolation) in tracks.clone() {
            if !ct.is_verbatim(interpolation) {
                block_words += ct.data_bytes(width, interpolation) / 4;
            }
        }
        let verbatim_start = u32::try_from(block_words).map_err(|_| Error::LimitExceeded {
            what: "packed words",
            needed: block_words * 4,
            limit_name: "u32 indexing",
            limit: u64::from(u32::MAX),
        })?;
        let mut words = Vec::new();
        let mut verbatim = Vec::new();
        let mut offsets = Vec::new();
        for (ct, width, interpolation) in tracks {
            offsets.push(if ct.is_verbatim(interpolation) {
                let at = u64::from(verbatim_start) + verbatim.len() as u64;
                verbatim.extend(ct.verbatim_words());
                index_u32(at as usize, "packed words")?
            } else {
                let at = index_u32(words.len(), "packed words")?;
                words.extend(packed_block(ct, width));
                at
            });
        }
        words.extend_from_slice(&verbatim);
        index_u32(words.len(), "packed words")?;
        let packed = Packed {
            words,
            verbatim_start,
        };
        Ok((packed, offsets))
    }

    /// The words.
    #[must_use]
    pub(crate) fn words(&self) -> &[u32] {
        &self.words
    }

    /// The first word of the verbatim tracks: a row whose values offset is
    /// at least this is verbatim, its values (then its tangents) `f32`s
    /// from there without a block (WGSL override `VERBATIM_START`). The
    /// length of the words where no track is verbatim.
    #[must_use]
    pub(crate) fn verbatim_start(&self) -> u32 {
        self.verbatim_start
    }

    /// The header `[meta, value step, tangent step, dt]` of the block at
    /// `values_offset` ([`packed_block`]); for a verbatim track the header
    /// the decoder takes for it, `[VERBATIM_META, 1.0, 1.0, 0.0]` (raw
    /// values and tangents, no key interval). `None` past the words' end.
    #[must_use]
    pub(crate) fn header(&self, values_offset: u32) -> Option<[u32; 4]> {
        let v = values_offset as usize;
        if values_offset >= self.verbatim_start {
            let one = 1f32.to_bits();
            return (v < self.words.len()).then_some([VERBATIM_META, one, one, 0]);
        }
        self.words
            .get(v..v + COMPRESS_HEADER_WORDS as usize)?
            .try_into()
            .ok()
    }

    /// The encodings of the value stream and of the tangent stream (0
    /// where there is none) of the block at `values_offset`, from its
    /// header's meta word (value encoding in bits 0..8, tangent encoding in
    /// bits 16..24); `None` past the words' end.
    #[must_use]
    pub(crate) fn encodings(&self, values_offset: u32) -> Option<[u32; 2]> {
        let [meta, ..] = self.header(values_offset)?;
        Some([meta & 0xff, (meta >> 16) & 0xff])
    }

    /// The key interval `1 / rate` of the block at `values_offset`, as its
    /// header holds it (`f32` bits; 0 for key times given as a list and for
    /// a verbatim track); `None` past the words' end.
    #[must_use]
    pub(crate) fn interval_bits(&self, values_offset: u32) -> Option<u32> {
        self.header(values_offset).map(|h| h[3])
    }

    /// The value stream's first four offsets in the block at
    /// `values_offset` (of a track of `width` components), and its frame
    /// (`left`, `right`) where the stream is framed ([`packed_block`]);
    /// zeros past the words' end and for a verbatim track.
    #[must_use]
    pub(crate) fn offsets_and_frame(
        &self,
        values_offset: u32,
        width: u32,
    ) -> ([u32; 4], Option<[[u32; 4]; 2]>) {
        if values_offset >= self.verbatim_start {
            return ([0; 4], None);
        }
        let word = |i: usize| self.words.get(i).copied().unwrap_or(0);
        let vec4 = |i: usize| [word(i), word(i + 1), word(i + 2), word(i + 3)];
        let offsets = values_offset as usize + COMPRESS_HEADER_WORDS as usize;
        let framed = self
            .encodings(values_offset)
            .is_some_and(|[values, _]| values == ENC_FRAMED);
        let frame = offset_words(width) as usize + offsets;
        (
            vec4(offsets),
            framed.then(|| [vec4(frame), vec4(frame + 4)]),
        )
    }
}
