//! A [`BoneMap`]'s JSON form, read with the glTF importer's JSON parser:
//! `{"root": TARGET_NAME, "bones": {TARGET_NAME: SOURCE_NAME, ...}}`,
//! with an optional `"up": [X, Y, Z]`.

use std::str::FromStr;

use ::gltf::json::Value;

use crate::error::{BindError, Error};
use crate::model::retarget::BoneMap;

/// Parses a bone map's JSON form: an object with `"root"` (a target bone's
/// name) and `"bones"` (an object whose keys are target bone names and
/// whose values are source bone names), optionally `"up"` (three numbers:
/// [`BoneMap::up`], `[0, 1, 0]` when absent), and nothing else. The bones come
/// in the order of their names. As in any JSON object, a key written
/// twice in `"bones"` keeps its last value.
///
/// # Errors
/// [`BindError::MapJson`] for text that is not such an object, naming
/// what is wrong (with the line and column for malformed JSON); then
/// those of [`BoneMap::new`]; [`BindError::MapUpAxis`] for an `"up"` that
/// is not a unit vector.
impl FromStr for BoneMap {
    type Err = Error;

    fn from_str(text: &str) -> Result<BoneMap, Error> {
        let bad = |what: String| Error::from(BindError::MapJson { what });
        let value: Value =
            ::gltf::json::deserialize::from_str(text).map_err(|e| bad(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(bad("not an object".into()));
        };
        if let Some(key) = object
            .keys()
            .find(|k| !matches!(k.as_str(), "root" | "bones" | "up"))
        {
            return Err(bad(format!(
                "unknown field {key:?} (a bone map has \"root\", \"bones\" and \"up\")"
            )));
        }
        let root = match object.get("root") {
            Some(Value::String(root)) => root.clone(),
            Some(_) => return Err(bad("\"root\" is not a string".into())),
            None => {
                return Err(bad(
                    "no \"root\" (the target bone whose translation carries the motion)".into(),
                ))
            }
        };
        let bones = match object.get("bones") {
            Some(Value::Object(bones)) => bones,
            Some(_) => return Err(bad("\"bones\" is not an object".into())),
            None => {
                return Err(bad(
                    "no \"bones\" (target bone name: source bone name)".into()
                ))
            }
        };
        let mut pairs = Vec::with_capacity(bones.len());
        for (target, source) in bones {
            let Value::String(source) = source else {
                return Err(bad(format!(
                    "\"bones\": the value of {target:?} is not a string (a source bone's name)"
                )));
            };
            pairs.push((target.clone(), source.clone()));
        }
        let mut map = BoneMap::new(root, pairs)?;
        if let Some(up) = object.get("up") {
            map.up = up_axis(up).ok_or_else(|| {
                bad("\"up\" is not an array of three numbers (the rigs' up axis)".into())
            })?;
            map.up_axis()?;
        }
        Ok(map)
    }
}

/// `[x, y, z]`, three JSON numbers.
fn up_axis(value: &Value) -> Option<[f32; 3]> {
    let Value::Array(items) = value else {
        return None;
    };
    let mut up = [0.0f32; 3];
    if items.len() != up.len() {
        return None;
    }
    for (out, item) in up.iter_mut().zip(items) {
        *out = item.as_f64()? as f32;
    }
    Some(up)
}
