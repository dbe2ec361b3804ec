//! Unit tests of `src/gltf/accessor.rs`.

use crate::gltf::accessor::*;
use ::gltf::json::accessor::ComponentType;

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
