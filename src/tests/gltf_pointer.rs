//! Unit tests of `src/gltf/pointer.rs`.

use crate::error::PointerProblem;
use crate::gltf::pointer::*;

#[test]
fn rfc6901_tokens() {
    assert_eq!(tokens("").unwrap(), Vec::<String>::new());
    assert_eq!(tokens("/a/b").unwrap(), vec!["a", "b"]);
    assert_eq!(tokens("/a~1b/c~0d/~01").unwrap(), vec!["a/b", "c~d", "~1"]);
    assert_eq!(tokens("/").unwrap(), vec![""]);
    assert!(matches!(tokens("a/b"), Err(PointerProblem::Malformed(_))));
    assert!(matches!(tokens("/a~2"), Err(PointerProblem::Malformed(_))));
    assert!(matches!(tokens("/a~"), Err(PointerProblem::Malformed(_))));
    assert_eq!(canonical(&tokens("/a~1b/c~0d").unwrap()), "/a~1b/c~0d");
}

#[test]
fn indices() {
    assert_eq!(index("0").unwrap(), Some(0));
    assert_eq!(index("12").unwrap(), Some(12));
    assert_eq!(index("x").unwrap(), None);
    assert_eq!(index("-").unwrap(), None);
    assert!(index("01").is_err());
}
