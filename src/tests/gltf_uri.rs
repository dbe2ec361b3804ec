//! Unit tests of `src/gltf/uri.rs`.

use crate::gltf::uri::*;
use crate::gltf::UriEscape;
use std::path::Path;
use std::path::PathBuf;

fn refused(r: Result<PathBuf, Resolve>) -> UriEscape {
    match r {
        Err(Resolve::Refused(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn text_checks_need_no_folder() {
    let nowhere = Path::new("/definitely/not/here");
    for (uri, why) in [
        ("a\0b", UriEscape::ControlCharacter),
        ("a\nb", UriEscape::ControlCharacter),
        ("..\\x", UriEscape::Backslash),
        ("/etc/passwd", UriEscape::Absolute),
        ("//host/share", UriEscape::Absolute),
        ("C:/x", UriEscape::Absolute),
    ] {
        assert_eq!(refused(resolve(uri, nowhere, nowhere)), why, "{uri:?}");
    }
    assert_eq!(check_raw("file:///etc/passwd"), Err(UriEscape::FileScheme));
    assert_eq!(check_raw("FILE:x"), Err(UriEscape::FileScheme));
    assert_eq!(check_raw("c:\\x"), Err(UriEscape::Absolute));
    assert_eq!(check_raw("a%20b.bin"), Ok(()));
}
