//! `--retarget MAP.json`, as the `sample` and `viewer` examples read it:
//! the bone map from its file, and a `--clips` file's clips retargeted
//! onto a model's rig through it (`AnimationLibrary::retarget`), every
//! error one line naming the map and the clips file. Included by path
//! (`#[path]`): Cargo has no library target for examples.

use std::path::Path;

use keyframe_gpu::gltf::Document;
use keyframe_gpu::{AnimationLibrary, BoneMap, Rig};

/// The bone map in `path` (`--retarget PATH`).
///
/// # Errors
/// `--retarget PATH: cannot read: ...` or `--retarget PATH: ` and why the
/// text is not a bone map.
pub fn read_map(path: &Path) -> Result<BoneMap, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--retarget {shown}: cannot read: {e}"))?;
    text.parse::<BoneMap>()
        .map_err(|e| format!("--retarget {shown}: {e}"))
}

/// The clips `library` of the `--clips` file `clips` (whose parsed file
/// is `document`) retargeted from that file's rig onto `target` through
/// `map` (read from `map_path`): clips that bind to `target` by node
/// index.
///
/// # Errors
/// `--retarget MAP: --clips FILE: ` and the library's error (a bone the
/// rigs lack, a map that breaks the hierarchy, a root that cannot carry
/// the motion).
pub fn retargeted(
    (library, document, clips): (&AnimationLibrary, &Document, &Path),
    target: &Rig,
    (map, map_path): (&BoneMap, &Path),
) -> Result<AnimationLibrary, String> {
    let retarget = || -> Result<AnimationLibrary, keyframe_gpu::Error> {
        let source = Rig::from_document(document)?;
        Ok(library.retarget(&source, target, map)?.library().clone())
    };
    retarget().map_err(|e| {
        format!(
            "--retarget {}: --clips {}: {e}",
            map_path.display(),
            clips.display()
        )
    })
}
