//! Accessors: [`Document::read_accessor`] decodes any accessor to `f32`
//! (dense, strided, sparse, without a buffer view; normalized integers with
//! the glTF formulas), every index, range and stride checked. The reader
//! itself (`Source::read`) is the only one in the crate: the animation
//! import and the rig import (inverse bind matrices) call it too.

use ::gltf::json;
use json::accessor::{ComponentType, GenericComponentType, IndexComponentType, Type};
use json::validation::Checked;

use super::error::out_of_range;
use super::Document;
use crate::error::ImportErrorKind;
use crate::error::{Error, Result};

/// The most elements (components, all counted) that an accessor without a
/// buffer view may declare. Such an accessor is all zeros plus its sparse
/// substitutions, so its size is not bounded by the file's size; this limit
/// keeps a header from making the importer allocate gigabytes.
pub(crate) const MAX_UNBACKED_COMPONENTS: u64 = 1 << 24;

/// One accessor decoded to `f32`.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessorData {
    /// Components per element (1 for SCALAR, 3 for VEC3, 16 for MAT4, ...).
    pub components: usize,
    /// Number of elements.
    pub count: usize,
    /// `count * components` values, element after element. Normalized
    /// integers are decoded with the glTF formulas; other integers are
    /// converted as they are.
    pub values: Vec<f32>,
    /// The stored component type.
    pub component_type: ComponentType,
    /// The accessor's `normalized` flag.
    pub normalized: bool,
}

fn component_size(ct: ComponentType) -> u64 {
    match ct {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

fn component_name(ct: ComponentType) -> &'static str {
    match ct {
        ComponentType::I8 => "BYTE",
        ComponentType::U8 => "UNSIGNED_BYTE",
        ComponentType::I16 => "SHORT",
        ComponentType::U16 => "UNSIGNED_SHORT",
        ComponentType::U32 => "UNSIGNED_INT",
        ComponentType::F32 => "FLOAT",
    }
}

fn type_name(t: Type) -> &'static str {
    match t {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

/// (columns, rows) of an accessor type.
fn type_shape(t: Type) -> (u64, u64) {
    match t {
        Type::Scalar => (1, 1),
        Type::Vec2 => (1, 2),
        Type::Vec3 => (1, 3),
        Type::Vec4 => (1, 4),
        Type::Mat2 => (2, 2),
        Type::Mat3 => (3, 3),
        Type::Mat4 => (4, 4),
    }
}

/// Decodes one component at `bytes[at..]`; the caller has checked the range.
pub(crate) fn read_component(bytes: &[u8], at: usize, ct: ComponentType, normalized: bool) -> f32 {
    let b = |i: usize| bytes.get(at + i).copied().unwrap_or(0);
    match ct {
        ComponentType::F32 => f32::from_le_bytes([b(0), b(1), b(2), b(3)]),
        ComponentType::U32 => u32::from_le_bytes([b(0), b(1), b(2), b(3)]) as f32,
        ComponentType::I8 => {
            let c = f32::from(b(0) as i8);
            if normalized {
                (c / 127.0).max(-1.0)
            } else {
                c
            }
        }
        ComponentType::U8 => {
            let c = f32::from(b(0));
            if normalized {
                c / 255.0
            } else {
                c
            }
        }
        ComponentType::I16 => {
            let c = f32::from(i16::from_le_bytes([b(0), b(1)]));
            if normalized {
                (c / 32767.0).max(-1.0)
            } else {
                c
            }
        }
        ComponentType::U16 => {
            let c = f32::from(u16::from_le_bytes([b(0), b(1)]));
            if normalized {
                c / 65535.0
            } else {
                c
            }
        }
    }
}

fn read_index(bytes: &[u8], at: usize, ct: ComponentType) -> u64 {
    let b = |i: usize| bytes.get(at + i).copied().unwrap_or(0);
    match ct {
        ComponentType::U8 => u64::from(b(0)),
        ComponentType::U16 => u64::from(u16::from_le_bytes([b(0), b(1)])),
        _ => u64::from(u32::from_le_bytes([b(0), b(1), b(2), b(3)])),
    }
}

impl Document {
    /// Decodes accessor `index` to `f32`, with every range checked: the
    /// accessor inside its buffer view, the view inside its buffer, the
    /// stride, and the sparse indices and values.
    ///
    /// # Errors
    /// [`Error::Import`] with `accessor` set.
    pub fn read_accessor(&self, index: usize) -> Result<AccessorData> {
        self.source().read(index).map_err(|kind| Error::Import {
            animation: None,
            channel: None,
            skin: None,
            accessor: Some(index),
            kind,
        })
    }

    /// The reader over this document's JSON and buffers.
    pub(super) fn source(&self) -> Source<'_, Vec<u8>> {
        Source {
            root: &self.root,
            buffers: &self.buffers,
        }
    }
}

/// What accessors are read from: a glTF JSON and the bytes of each of its
/// buffers (a [`Document`]'s, or a `gltf` crate document's with the
/// caller's buffers). Every accessor the crate reads, animation inputs and
/// outputs as well as inverse bind matrices, goes through [`Source::read`].
pub(crate) struct Source<'a, B> {
    /// The JSON; indices in it are unchecked.
    pub(crate) root: &'a json::Root,
    /// The bytes of buffer `i`.
    pub(crate) buffers: &'a [B],
}

impl<'a, B: AsRef<[u8]>> Source<'a, B> {
    /// The accessor's JSON, or an out-of-range error.
    pub(super) fn accessor(
        &self,
        index: usize,
    ) -> std::result::Result<&'a json::Accessor, ImportErrorKind> {
        self.root
            .accessors
            .get(index)
            .ok_or_else(|| out_of_range("accessor", index, self.root.accessors.len()))
    }

    /// A buffer view's bytes, checked against its buffer, and its stride.
    fn view_bytes(
        &self,
        view: usize,
    ) -> std::result::Result<(&'a [u8], Option<u64>), ImportErrorKind> {
        let v = self
            .root
            .buffer_views
            .get(view)
            .ok_or_else(|| out_of_range("bufferView", view, self.root.buffer_views.len()))?;
        let b = v.buffer.value();
        let data = self
            .buffers
            .get(b)
            .ok_or_else(|| out_of_range("buffer", b, self.buffers.len()))?
            .as_ref();
        let offset = v.byte_offset.map_or(0, |o| o.0);
        let end = offset.checked_add(v.byte_length.0);
        let bytes = end
            .filter(|&end| end <= data.len() as u64)
            .and_then(|end| data.get(offset as usize..end as usize));
        match bytes {
            Some(bytes) => Ok((bytes, v.byte_stride.map(|s| s.0 as u64))),
            None => Err(ImportErrorKind::ViewOutOfRange {
                view,
                buffer: b,
                end: end.unwrap_or(u64::MAX),
                length: data.len() as u64,
            }),
        }
    }

    /// Decodes accessor `index` to `f32` (see [`Document::read_accessor`]).
    pub(super) fn read(&self, index: usize) -> std::result::Result<AccessorData, ImportErrorKind> {
        let acc = self.accessor(index)?;
        let layout = Layout::of(acc)?;
        let mut values = match acc.buffer_view {
            Some(view) => self.read_dense(acc, &layout, view.value())?,
            None => unbacked(&layout)?,
        };
        if let Some(sparse) = &acc.sparse {
            self.substitute_sparse(acc, sparse, &layout, &mut values)?;
        }
        Ok(AccessorData {
            components: layout.components as usize,
            count: layout.count as usize,
            values,
            component_type: layout.ct,
            normalized: acc.normalized,
        })
    }

    /// Reads the elements of `acc` from buffer view `view`, its stride and
    /// range checked.
    fn read_dense(
        &self,
        acc: &json::Accessor,
        layout: &Layout,
        view: usize,
    ) -> std::result::Result<Vec<f32>, ImportErrorKind> {
        let (bytes, stride) = self.view_bytes(view)?;
        let stride = checked_stride(view, stride, layout.element_size)?;
        let start = acc.byte_offset.map_or(0, |o| o.0);
        let end = if layout.count == 0 {
            Some(start)
        } else {
            (layout.count - 1)
                .checked_mul(stride)
                .and_then(|n| n.checked_add(start))
                .and_then(|n| n.checked_add(layout.element_size))
        };
        check_end("accessor", view, end, bytes)?;
        // Bounded by the view's length: count * components <= bytes.
        let mut values = Vec::with_capacity(layout.total as usize);
        for e in 0..layout.count {
            let base = (start + e * stride) as usize;
            for &o in &layout.offsets {
                values.push(read_component(bytes, base + o, layout.ct, acc.normalized));
            }
        }
        Ok(values)
    }

    /// Writes the sparse substitutions of `acc` into `values`, their
    /// count, index type, ranges and order checked.
    fn substitute_sparse(
        &self,
        acc: &json::Accessor,
        sparse: &json::accessor::sparse::Sparse,
        layout: &Layout,
        values: &mut [f32],
    ) -> std::result::Result<(), ImportErrorKind> {
        let (n, count) = (sparse.count.0, layout.count);
        if n > count {
            return Err(ImportErrorKind::Sparse(format!(
                "{n} sparse entries for an accessor of {count} elements"
            )));
        }
        let ict = sparse_index_type(sparse)?;
        let isize = component_size(ict);
        let istart = sparse.indices.byte_offset.0;
        let iview = sparse.indices.buffer_view.value();
        let ibytes = self.sparse_part("sparse indices", iview, istart, n, isize)?;
        let vstart = sparse.values.byte_offset.0;
        let vview = sparse.values.buffer_view.value();
        let vbytes = self.sparse_part("sparse values", vview, vstart, n, layout.element_size)?;
        let mut previous: Option<u64> = None;
        for s in 0..n {
            let target = read_index(ibytes, (istart + s * isize) as usize, ict);
            check_sparse_index(target, s, previous, count)?;
            previous = Some(target);
            let base = (vstart + s * layout.element_size) as usize;
            let dst = (target * layout.components) as usize;
            for (k, &o) in layout.offsets.iter().enumerate() {
                if let Some(slot) = values.get_mut(dst + k) {
                    *slot = read_component(vbytes, base + o, layout.ct, acc.normalized);
                }
            }
        }
        Ok(())
    }

    /// The bytes of buffer view `view`, checked to hold `n` items of
    /// `size` bytes from `start`: the `part` of a sparse accessor.
    fn sparse_part(
        &self,
        part: &'static str,
        view: usize,
        start: u64,
        n: u64,
        size: u64,
    ) -> std::result::Result<&'a [u8], ImportErrorKind> {
        let (bytes, _) = self.view_bytes(view)?;
        let end = n.checked_mul(size).and_then(|x| x.checked_add(start));
        check_end(part, view, end, bytes)?;
        Ok(bytes)
    }
}

/// Where an accessor's components lie in its elements, and how many there
/// are.
struct Layout {
    /// The stored component type.
    ct: ComponentType,
    /// Bytes per element (matrix column padding included).
    element_size: u64,
    /// Components per element.
    components: u64,
    /// Elements.
    count: u64,
    /// `count * components`.
    total: u64,
    /// The byte offset of each component within an element.
    offsets: Vec<usize>,
}

impl Layout {
    /// The layout of `acc`, from its component type, type and count.
    fn of(acc: &json::Accessor) -> std::result::Result<Self, ImportErrorKind> {
        let Checked::Valid(GenericComponentType(ct)) = acc.component_type else {
            return Err(ImportErrorKind::BadComponentType {
                usage: "any accessor",
                found: "unknown".into(),
                normalized: acc.normalized,
            });
        };
        let Checked::Valid(ty) = acc.type_ else {
            return Err(ImportErrorKind::BadAccessorType {
                expected: "a glTF accessor type",
                found: "unknown".into(),
            });
        };
        let (cols, rows) = type_shape(ty);
        let cs = component_size(ct);
        // Matrix columns of 1- and 2-byte components are padded to 4 bytes.
        let column_bytes = if cols > 1 {
            (rows * cs).div_ceil(4) * 4
        } else {
            rows * cs
        };
        let components = cols * rows;
        let count = acc.count.0;
        let total = count
            .checked_mul(components)
            .ok_or(ImportErrorKind::TooLarge {
                what: "accessor",
                count,
                limit: u64::MAX / components,
            })?;
        let offsets = (0..cols)
            .flat_map(|c| (0..rows).map(move |r| (c * column_bytes + r * cs) as usize))
            .collect();
        Ok(Layout {
            ct,
            element_size: cols * column_bytes,
            components,
            count,
            total,
            offsets,
        })
    }
}

/// The zeros of an accessor without a buffer view, within
/// [`MAX_UNBACKED_COMPONENTS`].
fn unbacked(layout: &Layout) -> std::result::Result<Vec<f32>, ImportErrorKind> {
    if layout.total > MAX_UNBACKED_COMPONENTS {
        return Err(ImportErrorKind::TooLarge {
            what: "accessor without bufferView",
            count: layout.total,
            limit: MAX_UNBACKED_COMPONENTS,
        });
    }
    Ok(vec![0.0; layout.total as usize])
}

/// The stride of buffer view `view` (its elements' size when it has none),
/// checked: glTF allows 4 to 252, a multiple of 4, at least the element.
fn checked_stride(
    view: usize,
    stride: Option<u64>,
    element_size: u64,
) -> std::result::Result<u64, ImportErrorKind> {
    match stride {
        Some(s) if s < element_size || !(4..=252).contains(&s) || s % 4 != 0 => {
            Err(ImportErrorKind::BadStride {
                view,
                stride: s,
                element_size,
            })
        }
        Some(s) => Ok(s),
        None => Ok(element_size),
    }
}

/// Fails unless `end` (`None`: past `u64::MAX`) lies within `bytes`, the
/// buffer view `view` that holds the `part` of an accessor.
fn check_end(
    part: &'static str,
    view: usize,
    end: Option<u64>,
    bytes: &[u8],
) -> std::result::Result<(), ImportErrorKind> {
    match end {
        Some(end) if end <= bytes.len() as u64 => Ok(()),
        _ => Err(ImportErrorKind::AccessorOutOfRange {
            part,
            view,
            end: end.unwrap_or(u64::MAX),
            length: bytes.len() as u64,
        }),
    }
}

/// The component type of a sparse accessor's indices: an unsigned integer.
fn sparse_index_type(
    sparse: &json::accessor::sparse::Sparse,
) -> std::result::Result<ComponentType, ImportErrorKind> {
    let Checked::Valid(IndexComponentType(ict)) = sparse.indices.component_type else {
        return Err(ImportErrorKind::BadComponentType {
            usage: "sparse indices",
            found: "unknown".into(),
            normalized: false,
        });
    };
    if !matches!(
        ict,
        ComponentType::U8 | ComponentType::U16 | ComponentType::U32
    ) {
        return Err(ImportErrorKind::BadComponentType {
            usage: "sparse indices",
            found: component_name(ict).into(),
            normalized: false,
        });
    }
    Ok(ict)
}

/// Fails unless sparse index `target` (entry `s`) is below `count` and
/// past the `previous` entry's.
fn check_sparse_index(
    target: u64,
    s: u64,
    previous: Option<u64>,
    count: u64,
) -> std::result::Result<(), ImportErrorKind> {
    if target >= count {
        return Err(ImportErrorKind::Sparse(format!(
            "index {target} (entry {s}) is past the accessor's {count} elements"
        )));
    }
    if previous.is_some_and(|p| target <= p) {
        return Err(ImportErrorKind::Sparse(format!(
            "indices are not strictly increasing at entry {s}"
        )));
    }
    Ok(())
}

pub(super) fn check_type(
    acc: &json::Accessor,
    expected: Type,
) -> std::result::Result<(), ImportErrorKind> {
    match acc.type_ {
        Checked::Valid(t) if t == expected => Ok(()),
        Checked::Valid(t) => Err(ImportErrorKind::BadAccessorType {
            expected: type_name(expected),
            found: type_name(t).into(),
        }),
        Checked::Invalid => Err(ImportErrorKind::BadAccessorType {
            expected: type_name(expected),
            found: "unknown".into(),
        }),
    }
}

pub(super) fn bad_component(acc: &json::Accessor, usage: &'static str) -> ImportErrorKind {
    ImportErrorKind::BadComponentType {
        usage,
        found: match acc.component_type {
            Checked::Valid(GenericComponentType(ct)) => component_name(ct).into(),
            Checked::Invalid => "unknown".into(),
        },
        normalized: acc.normalized,
    }
}
