//! What a track names as its target, and where clips and rigs come from:
//! [`NodeName`] (a node's name and its name path from the scene root) and
//! [`SourceId`] (the file a clip or rig was read from).

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

/// The file a clip or a rig was read from. Every document loaded by
/// `gltf` gets a new one; its clips and its rig carry it, so that
/// binding knows when a clip plays on the rig of its own file (then it
/// binds by node index, exactly as the file says). Clips and rigs built in
/// code have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceId(u64);

impl SourceId {
    /// A new identity, different from every other one of this process.
    #[must_use]
    #[allow(clippy::new_without_default, reason = "each call is a new identity")]
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SourceId(NEXT.fetch_add(1, Ordering::Relaxed))
    }

    /// The identity of a file's contents: two loads of the same JSON give
    /// the same identity (its top bit set, so it never equals one of
    /// [`SourceId::new`]'s).
    #[must_use]
    #[cfg(feature = "gltf")]
    pub(crate) fn of_contents(bytes: &[u8]) -> Self {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        bytes.hash(&mut h);
        SourceId(h.finish() | 1 << 63)
    }
}

/// A node named the way binding finds it in another file: its name, and
/// its name path from the scene root (the names of its ancestors, root
/// first, then its own). Nodes without a name are `None` in a path.
///
/// three.js binds an animation track to the node of that name; Bevy to the
/// node whose name path hashes to the same id. Binding
/// ([`AnimationLibrary::bind`](crate::AnimationLibrary::bind)) uses the
/// name where the rig has it once, and the path where it repeats.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeName {
    path: Vec<Option<String>>,
}

impl NodeName {
    /// A node of this name at the scene root (its path is the name alone).
    #[must_use]
    pub fn new(name: impl Into<String>) -> Self {
        NodeName {
            path: vec![Some(name.into())],
        }
    }

    /// A node by its name path, root first; `None` when the path is empty
    /// or its last entry (the node itself) has no name.
    #[must_use]
    pub fn from_path(path: Vec<Option<String>>) -> Option<Self> {
        match path.last() {
            Some(Some(_)) => Some(NodeName { path }),
            _ => None,
        }
    }

    /// The node's own name.
    #[must_use]
    pub fn name(&self) -> &str {
        self.path.last().and_then(Option::as_deref).unwrap_or("")
    }

    /// The names from the scene root to the node, its own last.
    #[must_use]
    pub fn path(&self) -> &[Option<String>] {
        &self.path
    }
}

/// `Hips/Spine/Head`; an unnamed ancestor shows as `?`.
impl fmt::Display for NodeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_path(f, self.path.iter().map(Option::as_deref))
    }
}

/// Writes a name path as `a/b/c`, `?` for a node without a name.
pub(crate) fn write_path<'a>(
    f: &mut impl fmt::Write,
    names: impl Iterator<Item = Option<&'a str>>,
) -> fmt::Result {
    for (i, name) in names.enumerate() {
        if i > 0 {
            f.write_char('/')?;
        }
        f.write_str(name.unwrap_or("?"))?;
    }
    Ok(())
}
