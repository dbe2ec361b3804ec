//! What is sampled: a file's (or the demo's) animations, which of them,
//! and at which times.

use std::path::{Path, PathBuf};

use keyframe_gpu::compress::{CompressOptions, CompressionReport};
use keyframe_gpu::gltf::{AnimationInfo, Document, LoadOptions};
use keyframe_gpu::Rig;
use keyframe_gpu::{AnimationLibrary, BoundLibrary, Clip};

use crate::args::Cli;
use crate::bone_map::{read_map, retargeted};
use crate::Failure;

/// A library and, for a file, the parsed document, its rig and the
/// library bound to it.
pub struct Source {
    /// Shown as `"file"` in JSON.
    pub name: String,
    /// The first file's clips, then each `--clips` file's, in order.
    pub library: AnimationLibrary,
    /// The parsed file (None for the demo), for `--joints`.
    pub document: Option<Document>,
    /// Where each channel points (None for the demo): a
    /// `KHR_animation_pointer` channel is reported by its pointer.
    pub animations: Option<Vec<AnimationInfo>>,
    /// The library bound to the first file's rig: with `--clips` always
    /// (their tracks bind by name), otherwise once `--joints` or `--mix`
    /// asks for it ([`Source::bound`]).
    bound: Option<BoundLibrary>,
}

impl Source {
    /// A source of `library` alone (the demo).
    pub fn demo(name: String, library: AnimationLibrary) -> Source {
        Source {
            name,
            library,
            document: None,
            animations: None,
            bound: None,
        }
    }

    /// The pointer of channel `j` of animation `a`, if it is a
    /// `KHR_animation_pointer` channel.
    pub fn pointer(&self, a: usize, j: usize) -> Option<&str> {
        self.animations
            .as_ref()?
            .get(a)?
            .channels
            .get(j)?
            .pointer
            .as_deref()
    }

    /// The first file's node that channel `j` of animation `a` animates:
    /// the bound node with `--clips` (`None` for a track that binds to
    /// nothing), the track's own node otherwise.
    pub fn node(&self, a: usize, j: usize) -> Option<u32> {
        match &self.bound {
            Some(bound) => bound.node(a as u32, j as u32),
            None => Some(self.library.clips()[a].tracks[j].node),
        }
    }

    /// `node 3 rotation`, or a pointer channel's pointer.
    pub fn label(&self, a: usize, j: usize) -> String {
        match self.pointer(a, j) {
            Some(p) => p.to_string(),
            None => {
                let t = &self.library.clips()[a].tracks[j];
                let node = self
                    .node(a, j)
                    .map_or_else(|| "-".to_string(), |n| n.to_string());
                format!("node {node} {}", t.property)
            }
        }
    }

    /// Replaces the library with its compression within `bound` (relative
    /// to the rig's size): bound to the first file's rig where there is
    /// one, else held to the value bound (the demo). Returns what the
    /// compressor did. The library refuses a bound that is not finite and
    /// positive (`main` checks it before loading anything).
    pub fn compress(&mut self, bound: f32) -> Result<CompressionReport, Failure> {
        let options = CompressOptions::with_bound(bound);
        if self.document.is_none() {
            let (library, report) = self.library.compress(&options)?;
            self.library = library;
            return Ok(report);
        }
        let (compressed, report) = self.bound("--compress")?.compress(&options)?;
        self.library = compressed.library().clone();
        if self.bound.is_some() {
            self.bound = Some(compressed);
        }
        Ok(report)
    }

    /// The library bound to the first file's rig (`what` names the option
    /// that needs it, for the error).
    pub fn bound(&self, what: &str) -> Result<BoundLibrary, Failure> {
        if let Some(bound) = &self.bound {
            return Ok(bound.clone());
        }
        let Some(document) = &self.document else {
            return Err(Failure::Message(format!(
                "{what} needs a FILE (a glTF file with nodes)"
            )));
        };
        let rig = Rig::from_document(document)?;
        Ok(self.library.bind(&rig)?)
    }
}

/// Reads a .gltf or .glb file and the clips of each `--clips` file, bound
/// to the first file's rig by node name. The first file may have no
/// animations when `--clips` brings some.
/// With `retarget` (a bone map's file), each `--clips` file's clips are
/// retargeted from that file's rig onto the first file's through the map
/// instead ([`AnimationLibrary::retarget`]).
pub fn load(
    path: &Path,
    asset_root: Option<&Path>,
    clips: &[PathBuf],
    retarget: Option<&Path>,
) -> Result<Source, Failure> {
    let mut options = LoadOptions::default();
    if let Some(root) = asset_root {
        options = options.with_asset_root(root);
    }
    let map = retarget.map(read_map).transpose()?;
    let document = Document::load_with(path, &options)?;
    // The first file's rig, for `--clips` (a file without them may have
    // no nodes at all).
    let target = if clips.is_empty() {
        None
    } else {
        Some(Rig::from_document(&document)?)
    };
    let (mut libraries, mut infos) = if document.root.animations.is_empty() && !clips.is_empty() {
        (Vec::new(), Vec::new())
    } else {
        let (library, infos) = document.animations()?;
        (vec![library], infos)
    };
    // Joined, each file's clips follow the previous file's.
    let mut at = libraries.first().map_or(0, |l| l.clips().len());
    let mut ranges = Vec::with_capacity(clips.len());
    for file in clips {
        let imported = keyframe_gpu::gltf::load_with(file, &options)
            .map_err(|e| Failure::Message(format!("--clips {}: {e}", file.display())))?;
        let count = imported.library.clips().len();
        ranges.push((file, at..at + count));
        at += count;
        let library = match (&map, retarget, &target) {
            (Some(map), Some(map_path), Some(target)) => retargeted(
                (&imported.library, &imported.document, file),
                target,
                (map, map_path),
            )?,
            _ => imported.library,
        };
        libraries.push(library);
        infos.extend(imported.animations);
    }
    let library = AnimationLibrary::join(&libraries)?;
    let bound = if let Some(target) = &target {
        let bound = library.bind(target).map_err(|e| match &e {
            // Name the file whose clip binds nothing.
            keyframe_gpu::Error::Bind(keyframe_gpu::BindError::TooFewBound { clip, .. }) => {
                match ranges.iter().find(|(_, r)| r.contains(clip)) {
                    Some((file, _)) => Failure::Message(format!(
                        "--clips {}: no track binds to a node of {} (tracks bind by node name): {e}",
                        file.display(),
                        path.display()
                    )),
                    None => Failure::from(e),
                }
            }
            _ => Failure::from(e),
        })?;
        for (file, range) in ranges {
            let report = &bound.report().clips()[range];
            if report.iter().all(|c| c.bound() == 0) {
                return Err(Failure::Message(format!(
                    "--clips {}: no track binds to a node of {} (tracks bind by node name)",
                    file.display(),
                    path.display()
                )));
            }
        }
        Some(bound)
    } else {
        None
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok(Source {
        name,
        library,
        document: Some(document),
        animations: Some(infos),
        bound,
    })
}

/// The animations that `--animation` / `--all-animations` select.
pub fn selected(cli: &Cli, clip_count: usize) -> Result<Vec<usize>, Failure> {
    if cli.all_animations {
        Ok((0..clip_count).collect())
    } else if cli.animation < clip_count {
        Ok(vec![cli.animation])
    } else {
        Err(Failure::Message(format!(
            "--animation {} is out of range: the file has {clip_count} animation(s)",
            cli.animation
        )))
    }
}

/// Animation `a` at each of `times`, clamped: the instances every
/// listing mode samples.
pub fn instances(a: usize, times: &[f64]) -> Vec<keyframe_gpu::Instance> {
    times
        .iter()
        .map(|&t| keyframe_gpu::Instance::new(a as u32, t).with_wrap(keyframe_gpu::WrapMode::Clamp))
        .collect()
}

/// `--times`, or every key time of the clip's tracks, sorted, plus the
/// midpoints.
pub fn times(cli: &Cli, clip: &Clip) -> Vec<f64> {
    match &cli.times {
        Some(t) => t.clone(),
        None => default_times(clip),
    }
}

/// Every key time of the clip's tracks, sorted, plus the midpoints.
fn default_times(clip: &Clip) -> Vec<f64> {
    let mut keys: Vec<f32> = clip
        .tracks
        .iter()
        .flat_map(|t| t.times.iter().copied())
        .collect();
    keys.sort_by(f32::total_cmp);
    keys.dedup();
    let mut times = Vec::with_capacity(keys.len() * 2);
    for (i, &k) in keys.iter().enumerate() {
        if i > 0 {
            times.push((f64::from(keys[i - 1]) + f64::from(k)) / 2.0);
        }
        times.push(f64::from(k));
    }
    times
}
