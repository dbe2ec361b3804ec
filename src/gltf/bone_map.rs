//! A [`BoneMap`]'s JSON form, read with the glTF importer's JSON parser:
//! `{"root": TARGET_NAME, "bones": {TARGET_NAME: SOURCE_NAME, ...}}`.

use std::str::FromStr;

use ::gltf::json::Value;

use crate::error::{BindError, Error};
use crate::model::retarget::BoneMap;

/// Parses a bone map's JSON form: an object with `"root"` (a target bone's
/// name) and `"bones"` (an object whose keys are target bone names and
/// whose values are source bone names), and nothing else. The bones come
/// in the order of their names. As in any JSON object, a key written
/// twice in `"bones"` keeps its last value.
///
/// # Errors
/// [`BindError::MapJson`] for text that is not such an object, naming
/// what is wrong (with the line and column for malformed JSON); then
/// those of [`BoneMap::new`].
impl FromStr for BoneMap {
    type Err = Error;

    fn from_str(text: &str) -> Result<BoneMap, Error> {
        let bad = |what: String| Error::from(BindError::MapJson { what });
        let value: Value =
            ::gltf::json::deserialize::from_str(text).map_err(|e| bad(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(bad("not an object".into()));
        };
        if let Some(key) = object.keys().find(|k| *k != "root" && *k != "bones") {
            return Err(bad(format!(
                "unknown field {key:?} (a bone map has \"root\" and \"bones\")"
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
        BoneMap::new(root, pairs)
    }
}
