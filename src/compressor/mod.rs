//! The compressor: each track of a library encoded in the fewest bits
//! within the error bound of `crate::compress` ("The error bound", "What
//! the compressor does"), checked through the CPU twin, which decodes as
//! the GPU does. It writes the format of `crate::compress` (below the
//! model) and reads the twin (above the tables), so it sits beside the
//! layers, on the twin: `BoundLibrary::compress` and
//! `AnimationLibrary::compress` are here.

mod candidate;
mod search;

use glam::Mat4;

use crate::compress::{ClipCompression, CompressError, CompressOptions, CompressionReport};
use crate::error::{Error, Result};
use crate::model::library::AnimationLibrary;
use crate::model::rig::Rig;
use crate::model::BoundLibrary;

/// The diagonal of the bounding box of `rig`'s node origins in the rest
/// pose; 1 when it is zero or not finite (a rig of one node).
#[must_use]
pub(crate) fn rest_diagonal(rig: &Rig) -> f64 {
    let nodes = rig.nodes();
    let mut globals = vec![Mat4::IDENTITY; nodes.len()];
    let (mut lo, mut hi) = (
        glam::DVec3::splat(f64::INFINITY),
        glam::DVec3::splat(f64::NEG_INFINITY),
    );
    for &n in rig.order() {
        let local = rig.rest_local(n).unwrap_or(Mat4::IDENTITY);
        let g = match nodes[n as usize].parent {
            Some(p) => globals[p as usize] * local,
            None => local,
        };
        globals[n as usize] = g;
        let o = g.w_axis.truncate().as_dvec3();
        lo = lo.min(o);
        hi = hi.max(o);
    }
    let d = (hi - lo).length();
    if d.is_finite() && d > 0.0 {
        d
    } else {
        1.0
    }
}

fn refuse_compressed(library: &AnimationLibrary) -> Result<()> {
    if library.is_compressed() {
        return Err(Error::Compressed {
            clip: 0,
            track: None,
            kind: CompressError::AlreadyCompressed,
        });
    }
    Ok(())
}

/// Compresses every clip of `library` and builds the compressed library.
fn compress_all(
    library: &AnimationLibrary,
    rig: Option<&Rig>,
    nodes: &dyn Fn(usize, usize) -> Option<u32>,
    options: &CompressOptions,
    diagonal: f64,
) -> Result<(AnimationLibrary, CompressionReport)> {
    let bound = f64::from(options.bound) * diagonal;
    let distance = f64::from(options.distance) * diagonal;
    let mut tracks = Vec::with_capacity(library.clips().len());
    let mut report = CompressionReport {
        diagonal,
        bound,
        distance,
        max_error: 0.0,
        uncompressed_bytes: library.stored_bytes(),
        compressed_bytes: 0,
        clips: Vec::new(),
        tracks: Vec::new(),
    };
    for (c, clip) in library.clips().iter().enumerate() {
        let result = search::compress_clip(
            clip,
            rig,
            &|t| nodes(c, t),
            bound,
            distance,
            f64::from(options.bound),
        )?;
        report.max_error = report.max_error.max(result.max_error);
        report.clips.push(ClipCompression {
            name: clip.name.clone(),
            max_error: result.max_error,
            tightenings: result.tightenings,
        });
        report.tracks.push(result.reports);
        tracks.push(result.tracks);
    }
    let compressed = AnimationLibrary::from_compressed(library.clips().to_vec(), tracks)?;
    report.compressed_bytes = compressed.stored_bytes();
    Ok((compressed, report))
}

impl BoundLibrary {
    /// The library compressed within `options`' bound (see `crate::compress`),
    /// bound to the same rig as this one; and what was done.
    ///
    /// # Errors
    /// [`Error::Compressed`] for options that are not finite and positive
    /// or a library that is compressed already.
    pub fn compress(&self, options: &CompressOptions) -> Result<(BoundLibrary, CompressionReport)> {
        options.check()?;
        refuse_compressed(self.library())?;
        let diagonal = rest_diagonal(self.rig());
        let (library, report) = compress_all(
            self.library(),
            Some(self.rig()),
            &|c, t| self.node(c as u32, t as u32),
            options,
            diagonal,
        )?;
        Ok((self.with_library(library), report))
    }
}

impl AnimationLibrary {
    /// The library compressed without a rig: every track held to the value
    /// bound of `crate::compress` (`options.bound` radians for
    /// rotations, `options.bound` times a track's largest value
    /// otherwise).
    ///
    /// # Errors
    /// As [`BoundLibrary::compress`].
    pub fn compress(
        &self,
        options: &CompressOptions,
    ) -> Result<(AnimationLibrary, CompressionReport)> {
        options.check()?;
        refuse_compressed(self)?;
        compress_all(self, None, &|_, _| None, options, 1.0)
    }
}
