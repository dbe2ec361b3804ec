//! Accessors: [`Document::read_accessor`] decodes any accessor to `f32`
//! (dense, strided, sparse, without a buffer view; normalized integers with
//! the glTF formulas), every index, range and stride checked. The reader
//! itself (`Source::read`) is the only one in the crate: the animation
//! import and the rig import (inverse bind matrices) call it too.

use ::gltf::json;
use json::accessor::{ComponentType, GenericComponentType, IndexComponentType, Type};
use json::validation::Checked;

use super::error::{out_of_range, ImportErrorKind};
use super::Document;
use crate::error::{Error, Result};

/// The most elements (components, all counted) that an accessor without a
/// buffer view may declare. Such an accessor is all zeros plus its sparse
/// substitutions, so its size is not bounded by the file's size; this limit
/// keeps a header from making the importer allocate gigabytes.
pub const MAX_UNBACKED_COMPONENTS: u64 = 1 << 24;

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
fn read_component(bytes: &[u8], at: usize, ct: ComponentType, normalized: bool) -> f32 {
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
pub(super) struct Source<'a, B> {
    /// The JSON; indices in it are unchecked.
    pub(super) root: &'a json::Root,
    /// The bytes of buffer `i`.
    pub(super) buffers: &'a [B],
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
        let element_size = cols * column_bytes;
        let components = cols * rows;
        let count = acc.count.0;
        let total = count
            .checked_mul(components)
            .ok_or(ImportErrorKind::TooLarge {
                what: "accessor",
                count,
                limit: u64::MAX / components,
            })?;
        let offsets: Vec<usize> = (0..cols)
            .flat_map(|c| (0..rows).map(move |r| (c * column_bytes + r * cs) as usize))
            .collect();
        let mut values: Vec<f32>;
        match acc.buffer_view {
            Some(view) => {
                let view = view.value();
                let (bytes, stride) = self.view_bytes(view)?;
                let stride = match stride {
                    // glTF: 4 to 252, a multiple of 4.
                    Some(s) if s < element_size || !(4..=252).contains(&s) || s % 4 != 0 => {
                        return Err(ImportErrorKind::BadStride {
                            view,
                            stride: s,
                            element_size,
                        })
                    }
                    Some(s) => s,
                    None => element_size,
                };
                let start = acc.byte_offset.map_or(0, |o| o.0);
                let end = if count == 0 {
                    Some(start)
                } else {
                    (count - 1)
                        .checked_mul(stride)
                        .and_then(|n| n.checked_add(start))
                        .and_then(|n| n.checked_add(element_size))
                };
                match end {
                    Some(end) if end <= bytes.len() as u64 => {}
                    _ => {
                        return Err(ImportErrorKind::AccessorOutOfRange {
                            part: "accessor",
                            view,
                            end: end.unwrap_or(u64::MAX),
                            length: bytes.len() as u64,
                        })
                    }
                }
                // Bounded by the view's length: count * components <= bytes.
                values = Vec::with_capacity(total as usize);
                for e in 0..count {
                    let base = (start + e * stride) as usize;
                    for &o in &offsets {
                        values.push(read_component(bytes, base + o, ct, acc.normalized));
                    }
                }
            }
            None => {
                if total > MAX_UNBACKED_COMPONENTS {
                    return Err(ImportErrorKind::TooLarge {
                        what: "accessor without bufferView",
                        count: total,
                        limit: MAX_UNBACKED_COMPONENTS,
                    });
                }
                values = vec![0.0; total as usize];
            }
        }
        if let Some(sparse) = &acc.sparse {
            let n = sparse.count.0;
            if n > count {
                return Err(ImportErrorKind::Sparse(format!(
                    "{n} sparse entries for an accessor of {count} elements"
                )));
            }
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
            let iview = sparse.indices.buffer_view.value();
            let (ibytes, _) = self.view_bytes(iview)?;
            let istart = sparse.indices.byte_offset.0;
            let isize = component_size(ict);
            let iend = n.checked_mul(isize).and_then(|x| x.checked_add(istart));
            if !matches!(iend, Some(e) if e <= ibytes.len() as u64) {
                return Err(ImportErrorKind::AccessorOutOfRange {
                    part: "sparse indices",
                    view: iview,
                    end: iend.unwrap_or(u64::MAX),
                    length: ibytes.len() as u64,
                });
            }
            let vview = sparse.values.buffer_view.value();
            let (vbytes, _) = self.view_bytes(vview)?;
            let vstart = sparse.values.byte_offset.0;
            let vend = n
                .checked_mul(element_size)
                .and_then(|x| x.checked_add(vstart));
            if !matches!(vend, Some(e) if e <= vbytes.len() as u64) {
                return Err(ImportErrorKind::AccessorOutOfRange {
                    part: "sparse values",
                    view: vview,
                    end: vend.unwrap_or(u64::MAX),
                    length: vbytes.len() as u64,
                });
            }
            let mut previous: Option<u64> = None;
            for s in 0..n {
                let target = read_index(ibytes, (istart + s * isize) as usize, ict);
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
                previous = Some(target);
                let base = (vstart + s * element_size) as usize;
                let dst = (target * components) as usize;
                for (k, &o) in offsets.iter().enumerate() {
                    if let Some(slot) = values.get_mut(dst + k) {
                        *slot = read_component(vbytes, base + o, ct, acc.normalized);
                    }
                }
            }
        }
        Ok(AccessorData {
            components: components as usize,
            count: count as usize,
            values,
            component_type: ct,
            normalized: acc.normalized,
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_formulas() {
        let one = |ct, bytes: &[u8]| read_component(bytes, 0, ct, true);
        assert_eq!(one(ComponentType::I8, &[0x80]), -1.0);
        assert_eq!(one(ComponentType::I8, &[0x81]), -1.0);
        assert_eq!(one(ComponentType::I8, &[127]), 1.0);
        assert_eq!(one(ComponentType::U8, &[255]), 1.0);
        assert_eq!(one(ComponentType::I16, &[0x00, 0x80]), -1.0);
        assert_eq!(one(ComponentType::U16, &[0xff, 0xff]), 1.0);
        assert_eq!(one(ComponentType::U16, &[0x00, 0x80]), 32768.0 / 65535.0);
    }
}
