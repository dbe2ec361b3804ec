//! [`ImportErrorKind`]: what is wrong with a glTF file, and the helpers that
//! wrap it in [`Error::Import`] with its location.

use crate::error::{Error, ImportErrorKind};

/// An [`Error::Import`] with no location.
pub(super) fn import_err(kind: ImportErrorKind) -> Error {
    Error::Import {
        animation: None,
        channel: None,
        skin: None,
        accessor: None,
        kind,
    }
}

/// [`ImportErrorKind::IndexOutOfRange`] for `what` `index` of `count`.
pub(super) fn out_of_range(what: &'static str, index: usize, count: usize) -> ImportErrorKind {
    ImportErrorKind::IndexOutOfRange {
        what,
        index: index as u64,
        count,
    }
}
