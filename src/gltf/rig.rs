//! The rig of a glTF file: [`Rig::from_document`] (a file loaded here,
//! validated first) and [`rig_from`] (the JSON of a `gltf` crate document
//! and its buffers, unvalidated: the crate's own tests of hostile files)
//! read the nodes, skins and meshes from the JSON with every index
//! checked, and each skin's inverse bind matrices with the importer's one
//! accessor reader.

use ::gltf::json;
use json::accessor::{ComponentType, GenericComponentType, Type};
use json::validation::Checked;

use super::accessor::{bad_component, check_type, Source};
use super::animation::primitive_target_count;
use super::error::{import_err, out_of_range};
use super::Document;
use crate::error::ImportErrorKind;
use crate::error::{Error, Result};
use crate::model::rig::{decompose, Rig, RigMesh, RigNode, RigSkin};

impl Rig {
    /// Builds the rig of a file loaded by [`crate::gltf`]: every node
    /// (hierarchy from `children`, rest TRS, matrices decomposed), every
    /// skin (inverse bind matrices read with [`Document::read_accessor`]'s
    /// checks, identity when absent), every mesh's morph-target count and
    /// default weights.
    ///
    /// The JSON must first pass the `gltf` crate's validation (every index
    /// in range, required properties present). Faults that concern only
    /// vertex data the rig never reads (a primitive without POSITION, or a
    /// POSITION accessor without `min`/`max`, which that validation
    /// requires) do not stop it; a POSITION index out of range does.
    ///
    /// # Errors
    /// [`Error::Import`]: [`ImportErrorKind::InvalidDocument`] for a file
    /// that fails the validation; for what the file's structure gets
    /// wrong, with `skin` and `accessor` set for an inverse bind matrices
    /// accessor that cannot be read (out of range, not MAT4 of FLOAT, bad
    /// stride, sparse indices, ...): a child index out of range
    /// ([`ImportErrorKind::IndexOutOfRange`]), a node with two parents
    /// ([`ImportErrorKind::MultipleParents`]), primitives of one mesh with
    /// different morph-target counts ([`ImportErrorKind::MorphTargets`]).
    /// [`Error::Rig`] for a rig [`RigBuilder::build`](crate::RigBuilder::build)
    /// would refuse (mesh, skin or joint out of range, cycles, rest
    /// transforms, inverse bind matrix count, default weights).
    pub fn from_document(document: &Document) -> Result<Rig> {
        validate(&document.root).map_err(import_err)?;
        Ok(rig_from(&document.source())?.with_source(document.source))
    }
}

/// Runs the `gltf` crate's validation over `root`, letting through the
/// faults that concern only vertex data the rig never reads.
fn validate(root: &json::Root) -> std::result::Result<(), ImportErrorKind> {
    // The validation indexes `accessors` with each primitive's POSITION
    // index before checking it (a panic when out of range): check those
    // indices first.
    let accessor_count = root.accessors.len();
    let key = Checked::Valid(json::mesh::Semantic::Positions);
    for (m, mesh) in root.meshes.iter().enumerate() {
        for (p, prim) in mesh.primitives.iter().enumerate() {
            if let Some(a) = prim.attributes.get(&key).map(|i| i.value()) {
                if a >= accessor_count {
                    return Err(ImportErrorKind::InvalidDocument {
                        reason: format!(
                            "meshes[{m}].primitives[{p}].attributes.POSITION: accessor {a} is out of range ({accessor_count} accessors)"
                        ),
                    });
                }
            }
        }
    }
    // It also requires a POSITION attribute with `min` and `max`: a
    // document whose only faults are those is used as is.
    let position_only = |path: &str| {
        path.starts_with("meshes[")
            && ["\"POSITION\"]", "\"POSITION\"].min", "\"POSITION\"].max"]
                .iter()
                .any(|end| path.ends_with(&format!(".attributes[{end}")))
    };
    // And it refuses required extensions it does not know
    // (`KHR_animation_pointer`), which the importer has checked already.
    let supported_extension = |path: &str| {
        path.starts_with("extensionsRequired[")
            && super::SUPPORTED_EXTENSIONS
                .iter()
                .any(|e| path.ends_with(&format!("= \"{e}\"")))
    };
    match ::gltf::Document::from_json(root.clone()) {
        Ok(_) => Ok(()),
        Err(::gltf::Error::Validation(errors))
            if errors.iter().all(|(path, _)| {
                let path = path.to_string();
                position_only(&path) || supported_extension(&path)
            }) =>
        {
            Ok(())
        }
        Err(e) => Err(ImportErrorKind::InvalidDocument {
            reason: e.to_string(),
        }),
    }
}

/// Reads the rig's nodes, meshes and skins from `src`, in that order, and
/// builds it with [`Rig::from_parts`].
pub(crate) fn rig_from<B: AsRef<[u8]>>(src: &Source<'_, B>) -> Result<Rig> {
    let parents = node_parents(src.root)?;
    let nodes = rig_nodes(src.root, parents)?;
    let meshes = rig_meshes(src.root)?;
    let skins = rig_skins(src)?;
    Ok(Rig::from_parts(nodes, skins, meshes)?)
}

/// Each node's parent, from the nodes' `children`: a child out of range
/// or with two parents is refused.
fn node_parents(root: &json::Root) -> Result<Vec<Option<u32>>> {
    let node_count = root.nodes.len();
    let mut parents: Vec<Option<u32>> = vec![None; node_count];
    for (p, node) in root.nodes.iter().enumerate() {
        for child in node.children.iter().flatten() {
            let c = child.value();
            let parent = parents
                .get_mut(c)
                .ok_or_else(|| import_err(out_of_range("child node", c, node_count)))?;
            if let Some(first) = *parent {
                return Err(import_err(ImportErrorKind::MultipleParents {
                    node: c,
                    first: first as usize,
                    second: p,
                }));
            }
            *parent = Some(p as u32);
        }
    }
    Ok(parents)
}

/// The rig's nodes: names, `parents`, rest TRS (matrices decomposed),
/// meshes and skins.
fn rig_nodes(root: &json::Root, parents: Vec<Option<u32>>) -> Result<Vec<RigNode>> {
    let mut nodes = Vec::with_capacity(root.nodes.len());
    for (i, (node, parent)) in root.nodes.iter().zip(parents).enumerate() {
        let (translation, rotation, scale) = match &node.matrix {
            Some(m) => decompose(i as u32, m)?,
            None => (
                node.translation.unwrap_or([0.0; 3]),
                node.rotation.unwrap_or_default().0,
                node.scale.unwrap_or([1.0; 3]),
            ),
        };
        nodes.push(RigNode {
            name: node.name.clone(),
            parent,
            translation,
            rotation,
            scale,
            mesh: node.mesh.map(|m| m.value() as u32),
            skin: node.skin.map(|s| s.value() as u32),
        });
    }
    Ok(nodes)
}

/// The rig's meshes: each one's morph-target count and rest weights.
fn rig_meshes(root: &json::Root) -> Result<Vec<RigMesh>> {
    let mut meshes = Vec::with_capacity(root.meshes.len());
    for (m, mesh) in root.meshes.iter().enumerate() {
        let targets = primitive_target_count(m, mesh).map_err(import_err)?;
        let target_count = u32::try_from(targets).map_err(|_| {
            import_err(ImportErrorKind::MorphTargets {
                mesh: m,
                reason: format!("{targets} morph targets"),
            })
        })?;
        // The rest weights: those of the lowest-index node using the mesh
        // when it has its own (glTF: a node's `weights` override its
        // mesh's), else the mesh's, else zeros (filled in by the rig).
        let node_weights = root
            .nodes
            .iter()
            .find(|n| n.mesh.is_some_and(|x| x.value() == m))
            .and_then(|n| n.weights.clone());
        meshes.push(RigMesh {
            target_count,
            default_weights: node_weights
                .or_else(|| mesh.weights.clone())
                .unwrap_or_default(),
        });
    }
    Ok(meshes)
}

/// The rig's skins: joints and inverse bind matrices (identity when the
/// skin has none).
fn rig_skins<B: AsRef<[u8]>>(src: &Source<'_, B>) -> Result<Vec<RigSkin>> {
    let mut skins = Vec::with_capacity(src.root.skins.len());
    for (s, skin) in src.root.skins.iter().enumerate() {
        let joints: Vec<u32> = skin.joints.iter().map(|j| j.value() as u32).collect();
        let inverse_bind_matrices = match skin.inverse_bind_matrices {
            Some(accessor) => {
                let a = accessor.value();
                read_mat4(src, a).map_err(|kind| Error::Import {
                    animation: None,
                    channel: None,
                    skin: Some(s),
                    accessor: Some(a),
                    kind,
                })?
            }
            None => vec![glam::Mat4::IDENTITY.to_cols_array(); joints.len()],
        };
        skins.push(RigSkin {
            name: skin.name.clone(),
            joints,
            inverse_bind_matrices,
            mesh_node: None,
        });
    }
    Ok(skins)
}

/// Reads a MAT4 of FLOAT accessor (inverse bind matrices) with the
/// importer's accessor reader: bounds, stride and sparse substitution are
/// checked there.
fn read_mat4<B: AsRef<[u8]>>(
    src: &Source<'_, B>,
    index: usize,
) -> std::result::Result<Vec<[f32; 16]>, ImportErrorKind> {
    let acc = src.accessor(index)?;
    check_type(acc, Type::Mat4)?;
    let float = matches!(
        acc.component_type,
        Checked::Valid(GenericComponentType(ComponentType::F32))
    );
    if !float || acc.normalized {
        return Err(bad_component(acc, "inverse bind matrices"));
    }
    let data = src.read(index)?;
    Ok(data
        .values
        .chunks_exact(16)
        .map(|m| {
            let mut out = [0.0f32; 16];
            out.copy_from_slice(m);
            out
        })
        .collect())
}
