//! Building a [`Rig`] from a glTF document.

use super::{decompose, Rig, RigError, RigMesh, RigNode, RigSkin};

fn read_f32(bytes: &[u8], at: usize) -> Option<f32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// The bytes of a buffer view, checked against the loaded buffer.
fn view_bytes<'b, B: AsRef<[u8]>>(
    view: &gltf::buffer::View<'_>,
    buffers: &'b [B],
) -> Result<&'b [u8], String> {
    let b = view.buffer().index();
    let data = buffers
        .get(b)
        .ok_or_else(|| format!("buffer {b} is not loaded"))?
        .as_ref();
    let start = view.offset();
    let end = start
        .checked_add(view.length())
        .ok_or("buffer view range overflows")?;
    data.get(start..end).ok_or_else(|| {
        format!(
            "buffer view {} (bytes {start}..{end}) runs past the end of buffer {b} ({} bytes)",
            view.index(),
            data.len()
        )
    })
}

/// Reads a MAT4 FLOAT accessor (dense part, then sparse substitution),
/// with every range checked.
pub(super) fn read_mat4<B: AsRef<[u8]>>(
    accessor: &gltf::Accessor<'_>,
    buffers: &[B],
) -> Result<Vec<[f32; 16]>, String> {
    use gltf::accessor::{DataType, Dimensions};
    if accessor.dimensions() != Dimensions::Mat4 || accessor.data_type() != DataType::F32 {
        return Err(format!(
            "expected MAT4 of FLOAT, found {:?} of {:?}",
            accessor.dimensions(),
            accessor.data_type()
        ));
    }
    if accessor.normalized() {
        return Err("a FLOAT accessor cannot be normalized".into());
    }
    let count = accessor.count();
    let mut out = vec![[0.0f32; 16]; count];
    if let Some(view) = accessor.view() {
        let bytes = view_bytes(&view, buffers)?;
        let stride = view.stride().unwrap_or(64);
        if stride < 64 {
            return Err(format!("byte stride {stride} is smaller than a MAT4 (64)"));
        }
        for (e, m) in out.iter_mut().enumerate() {
            let base = e
                .checked_mul(stride)
                .and_then(|x| x.checked_add(accessor.offset()))
                .ok_or("element offset overflows")?;
            for (c, v) in m.iter_mut().enumerate() {
                *v = read_f32(bytes, base + 4 * c).ok_or_else(|| {
                    format!(
                        "element {e} runs past the end of buffer view {}",
                        view.index()
                    )
                })?;
            }
        }
    }
    if let Some(sparse) = accessor.sparse() {
        let n = sparse.count();
        let idx = sparse.indices();
        let idx_bytes = view_bytes(&idx.view(), buffers)?;
        let size = match idx.index_type() {
            gltf::accessor::sparse::IndexType::U8 => 1,
            gltf::accessor::sparse::IndexType::U16 => 2,
            gltf::accessor::sparse::IndexType::U32 => 4,
        };
        let vals = sparse.values();
        let val_bytes = view_bytes(&vals.view(), buffers)?;
        for s in 0..n {
            let at = idx.offset() + s * size;
            let b = idx_bytes
                .get(at..at + size)
                .ok_or_else(|| format!("sparse index {s} runs past its buffer view"))?;
            let index = match size {
                1 => usize::from(b[0]),
                2 => usize::from(u16::from_le_bytes([b[0], b[1]])),
                _ => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
            };
            let m = out.get_mut(index).ok_or_else(|| {
                format!("sparse index {s} = {index} is out of range ({count} elements)")
            })?;
            for (c, v) in m.iter_mut().enumerate() {
                *v = read_f32(val_bytes, vals.offset() + s * 64 + 4 * c)
                    .ok_or_else(|| format!("sparse value {s} runs past its buffer view"))?;
            }
        }
    }
    Ok(out)
}

impl Rig {
    /// Builds the rig of a glTF document: every node (hierarchy from
    /// `children`, rest TRS, matrices decomposed), every skin (inverse
    /// bind matrices read from their accessor with bounds checks,
    /// identity when absent), every mesh's morph-target count and
    /// default weights. `buffers[i]` holds the bytes of buffer `i`.
    ///
    /// `document` must come from the `gltf` crate's validating
    /// constructors (`Gltf::from_slice`, `Document::from_json`): the
    /// crate's own accessors assume valid indices. Byte ranges are
    /// checked here against the buffers actually given. For a file
    /// loaded with [`crate::gltf`], use [`Rig::from_document`].
    ///
    /// # Errors
    /// [`RigError`] naming the node, skin, mesh or accessor at fault.
    pub fn from_gltf<B: AsRef<[u8]>>(
        document: &gltf::Document,
        buffers: &[B],
    ) -> Result<Rig, RigError> {
        let mut parents: Vec<Option<u32>> = vec![None; document.nodes().len()];
        for node in document.nodes() {
            for child in node.children() {
                let c = child.index();
                if let Some(first) = parents[c] {
                    return Err(RigError::MultipleParents {
                        node: c as u32,
                        first,
                        second: node.index() as u32,
                    });
                }
                parents[c] = Some(node.index() as u32);
            }
        }
        let mut nodes = Vec::with_capacity(parents.len());
        for node in document.nodes() {
            let i = node.index() as u32;
            let (translation, rotation, scale) = match node.transform() {
                gltf::scene::Transform::Matrix { matrix } => {
                    let mut m = [0.0f32; 16];
                    for (c, col) in matrix.iter().enumerate() {
                        m[4 * c..4 * c + 4].copy_from_slice(col);
                    }
                    decompose(i, &m)?
                }
                gltf::scene::Transform::Decomposed {
                    translation,
                    rotation,
                    scale,
                } => (translation, rotation, scale),
            };
            nodes.push(RigNode {
                name: node.name().map(str::to_owned),
                parent: parents[i as usize],
                translation,
                rotation,
                scale,
                mesh: node.mesh().map(|m| m.index() as u32),
                skin: node.skin().map(|s| s.index() as u32),
            });
        }
        let mut meshes = Vec::new();
        for mesh in document.meshes() {
            let m = mesh.index() as u32;
            let mut target_count = None;
            for (p, prim) in mesh.primitives().enumerate() {
                let t = prim.morph_targets().len() as u32;
                match target_count {
                    None => target_count = Some(t),
                    Some(e) if e != t => {
                        return Err(RigError::TargetCountMismatch {
                            mesh: m,
                            primitive: p,
                            expected: e,
                            found: t,
                        })
                    }
                    Some(_) => {}
                }
            }
            meshes.push(RigMesh {
                target_count: target_count.unwrap_or(0),
                default_weights: mesh.weights().map(<[f32]>::to_vec).unwrap_or_default(),
            });
        }
        let mut skins = Vec::new();
        for skin in document.skins() {
            let s = skin.index() as u32;
            let joints: Vec<u32> = skin.joints().map(|j| j.index() as u32).collect();
            let inverse_bind_matrices = match skin.inverse_bind_matrices() {
                Some(acc) => read_mat4(&acc, buffers).map_err(|reason| RigError::Accessor {
                    skin: s,
                    accessor: acc.index(),
                    reason,
                })?,
                None => vec![glam::Mat4::IDENTITY.to_cols_array(); joints.len()],
            };
            skins.push(RigSkin {
                name: skin.name().map(str::to_owned),
                joints,
                inverse_bind_matrices,
                mesh_node: None,
            });
        }
        Rig::from_parts(nodes, skins, meshes)
    }

    /// Builds the rig of a file loaded by [`crate::gltf`]: validates its
    /// JSON with the `gltf` crate (so that no index is out of range),
    /// then [`Rig::from_gltf`] with its buffers. Faults that concern only
    /// vertex data the rig never reads (a primitive without POSITION, or
    /// a POSITION accessor without `min`/`max`, which that validation
    /// requires) do not stop it; a POSITION index out of range does.
    ///
    /// # Errors
    /// [`RigError::InvalidDocument`], or those of [`Rig::from_gltf`].
    pub fn from_document(document: &crate::gltf::Document) -> Result<Rig, RigError> {
        let root = document.root.clone();
        // The gltf crate's validation indexes `accessors` with each
        // primitive's POSITION index before checking it (a panic when
        // out of range): check those indices first.
        let accessor_count = root.accessors.len();
        let key = gltf::json::validation::Checked::Valid(gltf::json::mesh::Semantic::Positions);
        for (m, mesh) in root.meshes.iter().enumerate() {
            for (p, prim) in mesh.primitives.iter().enumerate() {
                if let Some(a) = prim.attributes.get(&key).map(|i| i.value()) {
                    if a >= accessor_count {
                        return Err(RigError::InvalidDocument {
                            reason: format!(
                                "meshes[{m}].primitives[{p}].attributes.POSITION: accessor {a} is out of range ({accessor_count} accessors)"
                            ),
                        });
                    }
                }
            }
        }
        // It also requires a POSITION attribute with `min` and `max`
        // (vertex data, which the rig never reads): a document whose only
        // faults are those is used as is; any other fault is an error.
        let position_only = |path: &str| {
            path.starts_with("meshes[")
                && ["\"POSITION\"]", "\"POSITION\"].min", "\"POSITION\"].max"]
                    .iter()
                    .any(|end| path.ends_with(&format!(".attributes[{end}")))
        };
        let doc = match gltf::Document::from_json(root.clone()) {
            Ok(doc) => doc,
            Err(gltf::Error::Validation(errors))
                if errors
                    .iter()
                    .all(|(path, _)| position_only(&path.to_string())) =>
            {
                gltf::Document::from_json_without_validation(root)
            }
            Err(e) => {
                return Err(RigError::InvalidDocument {
                    reason: e.to_string(),
                })
            }
        };
        Rig::from_gltf(&doc, &document.buffers)
    }
}
