//! External buffer URIs stay inside the asset root: every kind of escape
//! (parent segments, percent-encoded or not, backslashes, absolute paths,
//! `file:` URIs, control characters, symlinks that point outside) is
//! refused with [`ImportErrorKind::UnsafeUri`] naming the buffer and the
//! URI, on the library and on the `sample` command line (exit 2, one line,
//! nothing of the outside file printed); what stays inside keeps loading.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::{Path, PathBuf};

use gltf_builder::*;
use keyframe_gpu::gltf::ImportErrorKind;
use keyframe_gpu::gltf::{self, LoadOptions, UriEscape};
use keyframe_gpu::Error;

/// One node with a LINEAR translation over two keys: (0, 0, 0) at 0 s,
/// (2, 4, 6) at 1 s.
fn asset() -> Builder {
    let mut b = Builder::new();
    let n = b.node(None);
    let k = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let v = b.accessor_f32(&[0.0, 0.0, 0.0, 2.0, 4.0, 6.0], "VEC3");
    b.animation("move", &[(k, v, "LINEAR")], &[(0, n, "translation")]);
    b
}

/// A folder `top` holding:
/// - `outside/secret.bin`: a valid buffer for the asset, outside the model's
///   folder, so that any escape that reads it would load;
/// - `model/`: the asset's folder, with `buffer.bin`, `sub/buffer.bin`,
///   `a b.bin`, `link.bin` (a symlink to the secret), `linkdir` (a symlink
///   to `outside`) and `inner.bin` (a symlink to `buffer.bin`).
struct Tree {
    top: PathBuf,
    model: PathBuf,
    secret: PathBuf,
    builder: Builder,
}

impl Tree {
    fn new(test: &str) -> Tree {
        let top = temp_dir(test);
        let builder = asset();
        let bin = builder.bin.clone();
        let outside = top.join("outside");
        let model = top.join("model");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(model.join("sub")).unwrap();
        let secret = outside.join("secret.bin");
        std::fs::write(&secret, &bin).unwrap();
        for name in ["buffer.bin", "sub/buffer.bin", "a b.bin"] {
            std::fs::write(model.join(name), &bin).unwrap();
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&secret, model.join("link.bin")).unwrap();
            std::os::unix::fs::symlink(&outside, model.join("linkdir")).unwrap();
            std::os::unix::fs::symlink("buffer.bin", model.join("inner.bin")).unwrap();
        }
        Tree {
            top,
            model,
            secret,
            builder,
        }
    }

    /// Writes `model/<name>.gltf` whose buffer 0 has `uri`.
    fn gltf(&self, name: &str, uri: &str) -> PathBuf {
        let path = self.model.join(format!("{name}.gltf"));
        let json = self.builder.json(Some(uri.to_string()));
        std::fs::write(&path, serde_json::to_vec(&json).unwrap()).unwrap();
        path
    }

    /// Writes `model/<name>.glb` (no BIN chunk) whose buffer 0 has `uri`.
    fn glb(&self, name: &str, uri: &str) -> PathBuf {
        let path = self.model.join(format!("{name}.glb"));
        let json = self.builder.json(Some(uri.to_string()));
        std::fs::write(&path, glb(&serde_json::to_vec(&json).unwrap(), None)).unwrap();
        path
    }
}

/// The escapes, each with the reason it must be refused for. `{secret}`
/// is replaced by the secret's absolute path.
fn escapes() -> Vec<(&'static str, UriEscape)> {
    let mut v = vec![
        ("../outside/secret.bin", UriEscape::ParentSegments),
        ("%2e%2e/outside/secret.bin", UriEscape::ParentSegments),
        ("%2E%2E%2Foutside%2Fsecret.bin", UriEscape::ParentSegments),
        ("sub/../../outside/secret.bin", UriEscape::ParentSegments),
        ("./../outside/secret.bin", UriEscape::ParentSegments),
        ("..\\outside\\secret.bin", UriEscape::Backslash),
        ("..%5Coutside%5Csecret.bin", UriEscape::Backslash),
        ("{secret}", UriEscape::Absolute),
        ("file://{secret}", UriEscape::FileScheme),
        ("buffer.bin%00.png", UriEscape::ControlCharacter),
        ("buffer\n.bin", UriEscape::ControlCharacter),
    ];
    if cfg!(unix) {
        v.push(("link.bin", UriEscape::Symlink));
        v.push(("linkdir/secret.bin", UriEscape::Symlink));
    }
    v
}

fn unsafe_uri(result: keyframe_gpu::Result<gltf::Imported>) -> (usize, String, UriEscape) {
    match result {
        Err(Error::Import {
            kind: ImportErrorKind::UnsafeUri {
                buffer, uri, why, ..
            },
            ..
        }) => (buffer, uri, why),
        Err(e) => panic!("expected UnsafeUri, got {e}"),
        Ok(_) => panic!("expected UnsafeUri, the file loaded"),
    }
}

fn translation_at_one(imported: &gltf::Imported) -> Vec<f32> {
    let inst = [keyframe_gpu::Instance::new(0, 1.0)];
    keyframe_gpu::cpu::sample(&imported.library, &inst).unwrap()
}

#[test]
fn escapes_are_refused_by_the_library() {
    let tree = Tree::new("escapes-lib");
    let secret = tree.secret.display().to_string();
    for (i, (uri, why)) in escapes().into_iter().enumerate() {
        let uri = uri.replace("{secret}", &secret);
        for path in [
            tree.gltf(&format!("e{i}"), &uri),
            tree.glb(&format!("e{i}"), &uri),
        ] {
            let (buffer, named, got) = unsafe_uri(gltf::load(&path));
            assert_eq!((buffer, got), (0, why), "{uri:?} in {}", path.display());
            assert_eq!(named, uri);
            // The message names the buffer and the URI.
            let message = gltf::load(&path).err().unwrap().to_string();
            assert!(message.contains("buffer 0"), "{message}");
            assert!(message.contains(&format!("{uri:?}")), "{message}");
        }
        // In memory, with the model's folder as the base.
        let json = serde_json::to_vec(&tree.builder.json(Some(uri.clone()))).unwrap();
        let (_, _, got) = unsafe_uri(gltf::from_slice(&json, Some(&tree.model)));
        assert_eq!(got, why, "{uri:?} from memory");
    }
}

#[test]
fn what_stays_inside_loads() {
    let tree = Tree::new("inside-lib");
    let mut uris = vec![
        "buffer.bin",
        "./buffer.bin",
        "sub/buffer.bin",
        "sub/../buffer.bin",
        "sub/./../sub/buffer.bin",
        "a%20b.bin",
        "sub%2Fbuffer.bin",
    ];
    if cfg!(unix) {
        uris.push("inner.bin");
    }
    for (i, uri) in uris.into_iter().enumerate() {
        for path in [
            tree.gltf(&format!("ok{i}"), uri),
            tree.glb(&format!("ok{i}"), uri),
        ] {
            let imported =
                gltf::load(&path).unwrap_or_else(|e| panic!("{uri:?} in {}: {e}", path.display()));
            assert_eq!(translation_at_one(&imported), [2.0, 4.0, 6.0], "{uri:?}");
        }
    }
    // A data: URI and a GLB's own chunk need no folder at all.
    let embedded = gltf::from_slice(&tree.builder.to_gltf_embedded(), None).unwrap();
    assert_eq!(translation_at_one(&embedded), [2.0, 4.0, 6.0]);
    let glb = gltf::from_slice(&tree.builder.to_glb(), None).unwrap();
    assert_eq!(translation_at_one(&glb), [2.0, 4.0, 6.0]);
    // A file named by a relative path with no folder part resolves from the
    // working folder's idea of "." (its folder is the empty path).
    let (_, _, why) = unsafe_uri(gltf::from_slice(
        &serde_json::to_vec(&tree.builder.json(Some("../x.bin".into()))).unwrap(),
        Some(Path::new("")),
    ));
    assert_eq!(why, UriEscape::ParentSegments);
}

#[test]
fn a_wider_root_is_explicit() {
    let tree = Tree::new("wider-lib");
    let path = tree.gltf("wide", "../outside/secret.bin");
    // Refused by default ...
    let (_, _, why) = unsafe_uri(gltf::load(&path));
    assert_eq!(why, UriEscape::ParentSegments);
    // ... loaded with the common folder as the root ...
    let options = LoadOptions::default().with_asset_root(&tree.top);
    let imported = gltf::load_with(&path, &options).unwrap();
    assert_eq!(translation_at_one(&imported), [2.0, 4.0, 6.0]);
    // ... where a symlink into that root is fine too, and leaving it is not.
    if cfg!(unix) {
        gltf::load_with(tree.gltf("wide-link", "link.bin"), &options).unwrap();
    }
    let (_, _, why) = unsafe_uri(gltf::load_with(
        tree.gltf("wider", "../../outside/secret.bin"),
        &options,
    ));
    assert_eq!(why, UriEscape::ParentSegments);
    // A root that does not hold the file is refused, even for a URI that
    // would stay inside the file's folder.
    let elsewhere = tree.top.join("outside");
    let (_, _, why) = unsafe_uri(gltf::load_with(
        tree.gltf("elsewhere", "buffer.bin"),
        &LoadOptions::default().with_asset_root(&elsewhere),
    ));
    assert_eq!(why, UriEscape::BaseOutsideRoot);
}

#[test]
fn escapes_are_refused_on_the_command_line() {
    let tree = Tree::new("escapes-cli");
    let secret = tree.secret.display().to_string();
    for (i, (uri, _)) in escapes().into_iter().enumerate() {
        let uri = uri.replace("{secret}", &secret);
        let path = tree.gltf(&format!("cli{i}"), &uri);
        let out = sample_cli::run(&[path.to_str().unwrap(), "--json", "--backend", "cpu"]);
        assert_eq!(out.status.code(), Some(2), "{uri:?}");
        assert!(out.stdout.is_empty(), "{uri:?}: printed {:?}", out.stdout);
        let err = sample_cli::stderr(&out);
        assert_eq!(err.trim_end().lines().count(), 1, "{uri:?}: {err}");
        assert!(err.contains("buffer 0"), "{err}");
        assert!(err.contains("refused"), "{err}");
    }
}

#[test]
fn the_command_line_takes_an_asset_root() {
    let tree = Tree::new("root-cli");
    let path = tree.gltf("wide", "../outside/secret.bin");
    let file = path.to_str().unwrap();
    let refused = sample_cli::run(&[file, "--json", "--backend", "cpu"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(refused.stdout.is_empty());
    let top = tree.top.to_str().unwrap();
    let out = sample_cli::run(&[
        file,
        "--json",
        "--backend",
        "cpu",
        "--times",
        "1",
        "--asset-root",
        top,
    ]);
    assert!(out.status.success(), "{}", sample_cli::stderr(&out));
    let line = sample_cli::stdout(&out);
    let v: serde_json::Value = serde_json::from_str(line.trim()).unwrap();
    let value: Vec<f64> = v["samples"][0]["channels"][0]["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(value, [2.0, 4.0, 6.0], "{line}");
}

#[test]
fn image_uris_resolve_with_the_same_checks() {
    let tree = Tree::new("resolve-uri");
    std::fs::write(tree.model.join("sub/skin.png"), b"png").unwrap();
    let ok = gltf::resolve_uri("sub/skin.png", &tree.model, &LoadOptions::default()).unwrap();
    assert_eq!(std::fs::read(ok).unwrap(), b"png");
    for (uri, why) in escapes() {
        let uri = uri.replace("{secret}", &tree.secret.display().to_string());
        match gltf::resolve_uri(&uri, &tree.model, &LoadOptions::default()) {
            Err(Error::Import {
                kind: ImportErrorKind::UnsafeUri { why: got, .. },
                ..
            }) => assert_eq!(got, why, "{uri:?}"),
            other => panic!("{uri:?}: expected UnsafeUri, got {other:?}"),
        }
    }
    let wide = LoadOptions::default().with_asset_root(&tree.top);
    assert!(gltf::resolve_uri("../outside/secret.bin", &tree.model, &wide).is_ok());
}
