//! What is sampled: a file's (or the demo's) animations, which of them,
//! and at which times.

use std::path::Path;

use keyframe_gpu::gltf::AnimationInfo;
use keyframe_gpu::{AnimationLibrary, Clip};

use crate::args::Cli;
use crate::Failure;

/// A library and, for a file, the parsed document.
pub struct Source {
    /// Shown as `"file"` in JSON.
    pub name: String,
    pub library: AnimationLibrary,
    /// The parsed file (None for the demo), for `--joints`.
    pub document: Option<keyframe_gpu::gltf::Document>,
    /// Where each channel points (None for the demo): a
    /// `KHR_animation_pointer` channel is reported by its pointer.
    pub animations: Option<Vec<AnimationInfo>>,
}

impl Source {
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

    /// `node 3 rotation`, or a pointer channel's pointer.
    pub fn label(&self, a: usize, j: usize) -> String {
        match self.pointer(a, j) {
            Some(p) => p.to_string(),
            None => {
                let t = &self.library.clips()[a].tracks[j];
                format!("node {} {}", t.node, t.property.as_gltf_str())
            }
        }
    }
}

/// Reads a .gltf or .glb file.
pub fn load(path: &Path, asset_root: Option<&Path>) -> Result<Source, Failure> {
    let mut options = keyframe_gpu::gltf::LoadOptions::default();
    if let Some(root) = asset_root {
        options = options.with_asset_root(root);
    }
    let imported = keyframe_gpu::gltf::load_with(path, &options)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    Ok(Source {
        name,
        library: imported.library,
        document: Some(imported.document),
        animations: Some(imported.animations),
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
