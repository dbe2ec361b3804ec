//! Unit tests of `src/gltf/container.rs`.

use crate::gltf::container::*;
use crate::ImportErrorKind;

#[test]
fn base64_known_values() {
    assert_eq!(base64_decode("").unwrap(), b"");
    assert_eq!(base64_decode("TQ==").unwrap(), b"M");
    assert_eq!(base64_decode("TWE=").unwrap(), b"Ma");
    assert_eq!(base64_decode("TWFu").unwrap(), b"Man");
    assert_eq!(base64_decode("TWE").unwrap(), b"Ma");
    assert!(base64_decode("T").is_err());
    assert!(base64_decode("TW!u").is_err());
    assert!(base64_decode("T===").is_err());
}

#[test]
fn percent_decoding() {
    assert_eq!(percent_decode("a%20b.bin").unwrap(), "a b.bin");
    assert!(percent_decode("a%2").is_err());
}

#[test]
fn glb_header_checks() {
    assert!(parse_glb(b"glTF").is_err());
    let mut b = b"glTF".to_vec();
    b.extend_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(&100u32.to_le_bytes());
    assert!(matches!(parse_glb(&b), Err(ImportErrorKind::Glb(_))));
}
