//! `KHR_animation_pointer`: the channels whose `target.path` is
//! `"pointer"`, taken out of the JSON before the `gltf` crate parses it
//! (its model requires `target.node`, which such channels must not set),
//! and the resolution of their JSON pointers (RFC 6901) against the
//! document by the glTF Object Model.
//!
//! Supported pointers (`{}` an index):
//! - `/nodes/{}/translation|rotation|scale|weights`: node tracks, exactly
//!   as core channels (the pose stage reads them);
//! - `/nodes/{}/extensions/KHR_node_visibility/visible` (bool);
//! - `/materials/{}/pbrMetallicRoughness/baseColorFactor|metallicFactor|roughnessFactor`,
//!   `/materials/{}/emissiveFactor|alphaCutoff`,
//!   `/materials/{}/normalTexture/scale`, `/materials/{}/occlusionTexture/strength`,
//!   `/materials/{}/extensions/KHR_materials_emissive_strength/emissiveStrength`;
//! - `.../extensions/KHR_texture_transform/offset|rotation|scale` on any
//!   textureInfo of a material (core or extension textures);
//! - `/extensions/KHR_lights_punctual/lights/{}/color|intensity|range|spot/innerConeAngle|spot/outerConeAngle`;
//! - `/cameras/{}/perspective/yfov|znear|zfar|aspectRatio`,
//!   `/cameras/{}/orthographic/xmag|ymag|znear|zfar`.
//!
//! A pointer resolves when its property is present in the document, or
//! has a default in the spec and its enclosing object is present
//! (`KHR_animation_pointer`: "defined").

use std::sync::Arc;

use ::gltf::json::Value;

use crate::error::PointerProblem;
use crate::kinds::{PointerType, Property};

/// The key of the pointer channels' extension object.
pub(super) const EXTENSION: &str = "KHR_animation_pointer";

/// The `KHR_animation_pointer` channels of a [`Document`](super::Document),
/// which the `gltf` crate's JSON model cannot hold: they are taken out of
/// `root.animations[a].channels` before it is parsed, so `root` holds the
/// core channels only and its indices are not the file's channel indices.
/// [`Document::animations`](super::Document::animations) puts every
/// channel back in the file's order. Empty (the default) for a file
/// without pointer channels, which is parsed exactly as before.
#[derive(Debug, Clone, Default)]
pub(crate) struct PointerChannels {
    /// The parts of the JSON a pointer can name (`nodes`, `materials`,
    /// `cameras`, `extensions`), as written.
    json: Option<Arc<Value>>,
    /// Per animation that has pointer channels: its channels in the
    /// file's order.
    animations: Vec<(usize, Vec<ChannelSlot>)>,
}

/// One channel of an animation, in the file's order.
#[derive(Debug, Clone)]
pub(super) enum ChannelSlot {
    /// Channel `i` of `root.animations[a].channels`.
    Core(usize),
    /// A pointer channel's JSON object, as written.
    Pointer(Value),
}

impl PointerChannels {
    /// Animation `a`'s channels in the file's order, or `None` when it has
    /// no pointer channel (then they are `root`'s, in order).
    pub(super) fn channels(&self, a: usize) -> Option<&[ChannelSlot]> {
        self.animations
            .iter()
            .find(|(i, _)| *i == a)
            .map(|(_, c)| c.as_slice())
    }

    /// The JSON that pointers resolve against.
    pub(super) fn json(&self) -> Option<&Value> {
        self.json.as_deref()
    }

    /// Takes every channel whose `target.path` is `"pointer"` out of
    /// `value`'s animations. Returns `None` when there is none (the caller
    /// then parses the bytes as before).
    pub(super) fn take(value: &mut Value) -> Option<PointerChannels> {
        let mut animations = Vec::new();
        let anims = value.get_mut("animations")?.as_array_mut()?;
        for (a, anim) in anims.iter_mut().enumerate() {
            let Some(channels) = anim.get_mut("channels").and_then(Value::as_array_mut) else {
                continue;
            };
            let is_pointer = |c: &Value| {
                c.get("target")
                    .and_then(|t| t.get("path"))
                    .and_then(Value::as_str)
                    == Some("pointer")
            };
            if !channels.iter().any(is_pointer) {
                continue;
            }
            let mut slots = Vec::with_capacity(channels.len());
            let mut core = Vec::with_capacity(channels.len());
            for c in channels.drain(..) {
                if is_pointer(&c) {
                    slots.push(ChannelSlot::Pointer(c));
                } else {
                    slots.push(ChannelSlot::Core(core.len()));
                    core.push(c);
                }
            }
            *channels = core;
            animations.push((a, slots));
        }
        if animations.is_empty() {
            return None;
        }
        let mut parts = ::gltf::json::Value::Object(Default::default());
        for key in ["nodes", "materials", "cameras", "extensions"] {
            if let (Some(v), Some(map)) = (value.get(key), parts.as_object_mut()) {
                map.insert(key.to_string(), v.clone());
            }
        }
        Some(PointerChannels {
            json: Some(Arc::new(parts)),
            animations,
        })
    }
}

/// What a pointer names.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Resolved {
    /// A node property: a node track, read by the pose stage.
    Node {
        /// The node.
        node: usize,
        /// Its property.
        property: Property,
    },
    /// Another property: a pointer track.
    Other {
        /// Its type.
        ty: PointerType,
        /// Its value in the document, or the spec default.
        rest: Vec<f32>,
    },
}

/// Splits a JSON pointer into its unescaped reference tokens (RFC 6901:
/// `""` is the whole document; otherwise every token follows a `/`, `~1`
/// stands for `/` and `~0` for `~`, and no other `~` is allowed).
pub(crate) fn tokens(pointer: &str) -> Result<Vec<String>, PointerProblem> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(PointerProblem::Malformed(
            "a JSON pointer starts with '/'".into(),
        ));
    };
    let mut out = Vec::new();
    for raw in rest.split('/') {
        let mut token = String::with_capacity(raw.len());
        let mut chars = raw.chars();
        while let Some(ch) = chars.next() {
            if ch == '~' {
                match chars.next() {
                    Some('0') => token.push('~'),
                    Some('1') => token.push('/'),
                    _ => {
                        return Err(PointerProblem::Malformed(format!(
                            "'~' in {raw:?} is not followed by 0 or 1"
                        )))
                    }
                }
            } else {
                token.push(ch);
            }
        }
        out.push(token);
    }
    Ok(out)
}

/// The pointer written back from tokens (canonical escapes): the key under
/// which duplicates are found and slots named.
pub(crate) fn canonical(tokens: &[String]) -> String {
    let mut s = String::new();
    for t in tokens {
        s.push('/');
        s.push_str(&t.replace('~', "~0").replace('/', "~1"));
    }
    s
}

/// An array index token (RFC 6901: `0`, or digits without a leading zero).
pub(crate) fn index(token: &str) -> Result<Option<usize>, PointerProblem> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(None);
    }
    if token.len() > 1 && token.starts_with('0') {
        return Err(PointerProblem::Malformed(format!(
            "array index {token:?} has a leading zero"
        )));
    }
    Ok(Some(token.parse().unwrap_or(usize::MAX)))
}

/// The element of `array` that an index token names.
fn element<'a>(
    what: &str,
    array: Option<&'a Value>,
    token: &str,
) -> Result<(usize, &'a Value), PointerProblem> {
    let i = index(token)?
        .ok_or_else(|| PointerProblem::Unresolved(format!("{token:?} is not a {what} index")))?;
    let items = array
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    items.get(i).map(|v| (i, v)).ok_or_else(|| {
        PointerProblem::Unresolved(format!(
            "{what} {i} does not exist (the file has {})",
            items.len()
        ))
    })
}

/// Numbers of a property value: a number or an array of numbers, as
/// `f32`.
fn numbers(v: &Value, ty: PointerType) -> Option<Vec<f32>> {
    let out: Vec<f32> = match (v, ty) {
        (Value::Bool(b), PointerType::Bool) => vec![if *b { 1.0 } else { 0.0 }],
        (Value::Number(n), PointerType::Int) => vec![n.as_i64()? as f32],
        (Value::Number(n), PointerType::Float) => vec![n.as_f64()? as f32],
        (Value::Array(items), PointerType::Float2 | PointerType::Float3 | PointerType::Float4) => {
            let v: Option<Vec<f32>> = items.iter().map(|x| x.as_f64().map(|f| f as f32)).collect();
            v?
        }
        _ => return None,
    };
    (out.len() == ty.width() as usize && out.iter().all(|x| x.is_finite())).then_some(out)
}

/// A property of `object` (the enclosing object, present): its value when
/// written, else `default`; without a default it must be written.
fn property(
    object: &Value,
    name: &str,
    ty: PointerType,
    default: Option<&[f32]>,
) -> Result<Resolved, PointerProblem> {
    let rest = match object.get(name) {
        Some(v) => numbers(v, ty).ok_or_else(|| {
            PointerProblem::Unresolved(format!("the value of {name:?} is not a {}", ty.as_str()))
        })?,
        None => match default {
            Some(d) => d.to_vec(),
            None => {
                return Err(PointerProblem::Unresolved(format!(
                    "{name:?} is not in the file and has no default"
                )))
            }
        },
    };
    Ok(Resolved::Other { ty, rest })
}

/// The object at `key` of `parent`, which must be present.
fn object<'a>(parent: &'a Value, key: &str) -> Result<&'a Value, PointerProblem> {
    parent.get(key).filter(|v| v.is_object()).ok_or_else(|| {
        PointerProblem::Unresolved(format!("the enclosing object {key:?} is absent"))
    })
}

/// Resolves the tokens of a pointer against `json` (see the module's
/// documentation for what is supported).
pub(super) fn resolve(json: &Value, t: &[String]) -> Result<Resolved, PointerProblem> {
    let s: Vec<&str> = t.iter().map(String::as_str).collect();
    match resolve_exact(json, &s) {
        Err(PointerProblem::Unsupported) if s.len() > 1 => {
            // One token past a vector property: a component of it.
            let (last, head) = s.split_last().unwrap_or((&"", &[]));
            if index(last)?.is_some() {
                match resolve_exact(json, head) {
                    Ok(Resolved::Other { ty, .. }) if ty.width() > 1 => {
                        return Err(PointerProblem::VectorComponent)
                    }
                    Ok(Resolved::Node {
                        property: Property::Translation | Property::Rotation | Property::Scale,
                        ..
                    }) => return Err(PointerProblem::VectorComponent),
                    _ => {}
                }
            }
            Err(PointerProblem::Unsupported)
        }
        other => other,
    }
}

const ONE: &[f32] = &[1.0];
const ZERO: &[f32] = &[0.0];

/// Resolves the tokens `s` to a supported target, or says why not.
fn resolve_exact(json: &Value, s: &[&str]) -> Result<Resolved, PointerProblem> {
    match s {
        [] => Err(PointerProblem::Unresolved(
            "the empty pointer names the whole document".into(),
        )),
        ["nodes", n, rest @ ..] if !rest.is_empty() => resolve_node(json, n, rest),
        ["materials", m, rest @ ..] if !rest.is_empty() => resolve_material(json, m, rest),
        ["extensions", "KHR_lights_punctual", "lights", l, rest @ ..] if !rest.is_empty() => {
            resolve_light(json, l, rest)
        }
        ["cameras", c, rest @ ..] if !rest.is_empty() => resolve_camera(json, c, rest),
        _ => Err(PointerProblem::Unsupported),
    }
}

/// `rest` of a pointer below node `n`: its transform, weights or
/// visibility.
fn resolve_node(json: &Value, n: &str, rest: &[&str]) -> Result<Resolved, PointerProblem> {
    let (node, obj) = element("node", json.get("nodes"), n)?;
    match rest {
        [p @ ("translation" | "rotation" | "scale")] => Ok(Resolved::Node {
            node,
            property: match *p {
                "translation" => Property::Translation,
                "rotation" => Property::Rotation,
                _ => Property::Scale,
            },
        }),
        ["weights"] => {
            if obj.get("mesh").is_none() {
                return Err(PointerProblem::Unresolved(format!(
                    "node {node} has no mesh, so no weights"
                )));
            }
            Ok(Resolved::Node {
                node,
                property: Property::Weights,
            })
        }
        ["extensions", "KHR_node_visibility", "visible"] => {
            let ext = object(obj, "extensions").and_then(|e| object(e, "KHR_node_visibility"))?;
            property(ext, "visible", PointerType::Bool, Some(ONE))
        }
        _ => Err(PointerProblem::Unsupported),
    }
}

/// `rest` of a pointer below material `m`: its factors, texture scales
/// and strengths, and texture transforms.
fn resolve_material(json: &Value, m: &str, rest: &[&str]) -> Result<Resolved, PointerProblem> {
    use PointerType::{Float, Float3, Float4};
    let (_, mat) = element("material", json.get("materials"), m)?;
    match rest {
        ["pbrMetallicRoughness", p @ ("baseColorFactor" | "metallicFactor" | "roughnessFactor")] => {
            let pbr = object(mat, "pbrMetallicRoughness")?;
            if *p == "baseColorFactor" {
                property(pbr, p, Float4, Some(&[1.0; 4]))
            } else {
                property(pbr, p, Float, Some(ONE))
            }
        }
        ["emissiveFactor"] => property(mat, "emissiveFactor", Float3, Some(&[0.0; 3])),
        ["alphaCutoff"] => property(mat, "alphaCutoff", Float, Some(&[0.5])),
        ["normalTexture", "scale"] => {
            property(object(mat, "normalTexture")?, "scale", Float, Some(ONE))
        }
        ["occlusionTexture", "strength"] => property(
            object(mat, "occlusionTexture")?,
            "strength",
            Float,
            Some(ONE),
        ),
        ["extensions", "KHR_materials_emissive_strength", "emissiveStrength"] => {
            let ext = object(mat, "extensions")
                .and_then(|e| object(e, "KHR_materials_emissive_strength"))?;
            property(ext, "emissiveStrength", Float, Some(ONE))
        }
        [path @ .., "extensions", "KHR_texture_transform", p @ ("offset" | "rotation" | "scale")]
            if path.last().is_some_and(|t| t.ends_with("Texture")) =>
        {
            resolve_texture_transform(mat, path, p)
        }
        _ => Err(PointerProblem::Unsupported),
    }
}

/// Property `p` of the `KHR_texture_transform` of the textureInfo at
/// `path` in material `mat` (core or extension textures): it and its
/// transform must be present.
fn resolve_texture_transform(
    mat: &Value,
    path: &[&str],
    p: &str,
) -> Result<Resolved, PointerProblem> {
    use PointerType::{Float, Float2};
    let mut info = mat;
    for key in path {
        info = object(info, key)?;
    }
    if info.get("index").is_none() {
        return Err(PointerProblem::Unresolved(format!(
            "{:?} is not a textureInfo (no index)",
            path.last().unwrap_or(&"")
        )));
    }
    let tt = object(info, "extensions").and_then(|e| object(e, "KHR_texture_transform"))?;
    match p {
        "offset" => property(tt, p, Float2, Some(&[0.0; 2])),
        "rotation" => property(tt, p, Float, Some(ZERO)),
        _ => property(tt, p, Float2, Some(&[1.0; 2])),
    }
}

/// `rest` of a pointer below `KHR_lights_punctual` light `l`.
fn resolve_light(json: &Value, l: &str, rest: &[&str]) -> Result<Resolved, PointerProblem> {
    use PointerType::{Float, Float3};
    let lights = json
        .get("extensions")
        .and_then(|e| e.get("KHR_lights_punctual"))
        .and_then(|e| e.get("lights"));
    let (_, light) = element("light", lights, l)?;
    match rest {
        ["color"] => property(light, "color", Float3, Some(&[1.0; 3])),
        ["intensity"] => property(light, "intensity", Float, Some(ONE)),
        ["range"] => property(light, "range", Float, None),
        ["spot", "innerConeAngle"] => {
            property(object(light, "spot")?, "innerConeAngle", Float, Some(ZERO))
        }
        ["spot", "outerConeAngle"] => property(
            object(light, "spot")?,
            "outerConeAngle",
            Float,
            Some(&[std::f32::consts::FRAC_PI_4]),
        ),
        _ => Err(PointerProblem::Unsupported),
    }
}

/// `rest` of a pointer below camera `c`: its projection's parameters.
fn resolve_camera(json: &Value, c: &str, rest: &[&str]) -> Result<Resolved, PointerProblem> {
    let (_, cam) = element("camera", json.get("cameras"), c)?;
    match rest {
        ["perspective", p @ ("yfov" | "znear" | "zfar" | "aspectRatio")] => {
            property(object(cam, "perspective")?, p, PointerType::Float, None)
        }
        ["orthographic", p @ ("xmag" | "ymag" | "znear" | "zfar")] => {
            property(object(cam, "orthographic")?, p, PointerType::Float, None)
        }
        _ => Err(PointerProblem::Unsupported),
    }
}
