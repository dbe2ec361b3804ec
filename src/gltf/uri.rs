//! External URIs: where a glTF file's buffers (and, for a renderer, its
//! images) may be read from.
//!
//! Every external URI resolves inside one root folder: by default the
//! folder of the file being loaded, wider only when the caller names one
//! ([`LoadOptions::asset_root`]). The default is strict because a glTF file
//! is data that anyone can write: a service that samples uploaded files
//! (a converter, a thumbnailer, a validator in CI) must not hand out its
//! own files because a buffer's URI says `../../etc/passwd`. Bevy's asset
//! server refuses paths outside its folder by default for the same reason.
//!
//! A URI is refused ([`UriEscape`]) when it is an absolute path, a `file:`
//! URI, uses backslashes, holds a control character, leaves the root
//! through `..` segments (after percent-decoding: `%2e%2e` is `..`), or
//! names a file that a symlink places outside the root (the canonical
//! paths are compared). Dot segments resolve as RFC 3986 says, textually:
//! `sub/../buffer.bin` is `buffer.bin`.

use std::path::{Path, PathBuf};

use crate::error::UriEscape;

/// How a file is loaded: options of [`load_with`](super::load_with) and
/// [`Document::load_with`](super::Document::load_with).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The folder every external URI must resolve inside. `None` (the
    /// default): the folder of the file being loaded. A wider root is an
    /// explicit choice (`--asset-root` on the examples); the file's own
    /// folder must be inside it.
    pub asset_root: Option<PathBuf>,
}

impl LoadOptions {
    /// Options that allow external files anywhere inside `root`.
    #[must_use]
    pub fn with_asset_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.asset_root = Some(root.into());
        self
    }
}

/// Resolves an external URI of a file in `base_dir` (a buffer's, or an
/// image's for a renderer that loads textures) to the path to read, with
/// the same checks as the importer's buffers: percent-decoded, and inside
/// `options.asset_root` (default: `base_dir`). `data:` URIs are not paths:
/// decode those yourself.
///
/// # Errors
/// [`ImportErrorKind::UnsafeUri`](super::ImportErrorKind::UnsafeUri)
/// (with buffer index 0: the URI is not a buffer's) for a URI that leaves
/// the root; [`ImportErrorKind::BadUri`](super::ImportErrorKind::BadUri)
/// for another scheme or a bad percent escape;
/// [`ImportErrorKind::Io`](super::ImportErrorKind::Io) for a file that
/// does not exist.
pub fn resolve_uri(uri: &str, base_dir: &Path, options: &LoadOptions) -> crate::Result<PathBuf> {
    super::container::resolve_external(uri, 0, base_dir, options)
}

/// What went wrong resolving a URI: refused, or the file system could not
/// answer (a missing file, a root that does not exist).
#[derive(Debug)]
pub(crate) enum Resolve {
    Refused(UriEscape),
    Io { path: PathBuf, message: String },
}

/// Resolves a relative URI, already percent-decoded, from `base` (the
/// file's folder) inside `root`, and returns the canonical path to read.
pub(crate) fn resolve(decoded: &str, base: &Path, root: &Path) -> Result<PathBuf, Resolve> {
    check_text(decoded).map_err(Resolve::Refused)?;
    // An empty folder (the parent of a bare file name) is the working one.
    let here = |p: &Path| {
        if p.as_os_str().is_empty() {
            Path::new(".").to_path_buf()
        } else {
            p.to_path_buf()
        }
    };
    let (base, root) = (here(base), here(root));
    let (base, root) = (base.as_path(), root.as_path());
    let io = |path: &Path, e: std::io::Error| Resolve::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let root = root.canonicalize().map_err(|e| io(root, e))?;
    let base = base.canonicalize().map_err(|e| io(base, e))?;
    let below = base
        .strip_prefix(&root)
        .map_err(|_| Resolve::Refused(UriEscape::BaseOutsideRoot))?;
    // The path below the root, segment by segment; `..` may pop only what
    // is below the root.
    let mut inside: Vec<&std::ffi::OsStr> = below.iter().collect();
    for segment in decoded.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                inside
                    .pop()
                    .ok_or(Resolve::Refused(UriEscape::ParentSegments))?;
            }
            name => inside.push(std::ffi::OsStr::new(name)),
        }
    }
    let mut lexical = root.clone();
    lexical.extend(inside);
    let canonical = lexical.canonicalize().map_err(|e| io(&lexical, e))?;
    if !canonical.starts_with(&root) {
        return Err(Resolve::Refused(UriEscape::Symlink));
    }
    Ok(canonical)
}

/// The checks that need no file system: control characters, backslashes,
/// absolute paths and drive letters.
pub(crate) fn check_text(decoded: &str) -> Result<(), UriEscape> {
    let refuse = Err;
    if decoded.chars().any(char::is_control) {
        return refuse(UriEscape::ControlCharacter);
    }
    if decoded.contains('\\') {
        return refuse(UriEscape::Backslash);
    }
    if decoded.starts_with('/') || has_drive_letter(decoded) {
        return refuse(UriEscape::Absolute);
    }
    Ok(())
}

/// `C:` or `c:/...`: a Windows drive, which would make the path absolute.
fn has_drive_letter(path: &str) -> bool {
    let b = path.as_bytes();
    b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
}

/// Checks the URI as written, before percent-decoding: a `file:` scheme,
/// a drive letter and control characters are refused here; any other
/// scheme is left to the caller.
pub(crate) fn check_raw(uri: &str) -> Result<(), UriEscape> {
    if uri.chars().any(char::is_control) {
        return Err(UriEscape::ControlCharacter);
    }
    if uri.len() >= 5 && uri[..5].eq_ignore_ascii_case("file:") {
        return Err(UriEscape::FileScheme);
    }
    if has_drive_letter(uri) {
        return Err(UriEscape::Absolute);
    }
    Ok(())
}
