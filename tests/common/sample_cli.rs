//! Runs the `sample` example (or another, [`example_binary`]) as a separate
//! process, as a user would: built once per test binary with the test's own
//! profile (cargo's own output is discarded), so that tests see only the
//! tool's stdout and stderr.
#![allow(dead_code, reason = "each test binary uses a subset")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Builds the `sample` example and returns the binary's path.
pub fn sample_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| example_binary("sample"))
}

/// Builds example `name` with the test's own profile and returns the
/// binary's path.
pub fn example_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test>-<hash>
    let profile_dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--quiet", "--example", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "building the {name} example failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(bin.exists(), "{} not found", bin.display());
    bin
}

/// Runs `sample ARGS` to completion.
pub fn run(args: &[&str]) -> Output {
    Command::new(sample_binary()).args(args).output().unwrap()
}

/// The run's stdout (must be UTF-8).
pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The run's stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// True if a GPU run may be checked: it succeeded (or `--compare` exited
/// 1), or it failed for lack of an adapter and KEYFRAME_GPU_REQUIRE_ADAPTER
/// is not 1 (then a SKIP line).
pub fn gpu_ran(test: &str, o: &Output) -> bool {
    if o.status.success() || o.status.code() == Some(1) {
        return true;
    }
    let err = stderr(o);
    if err.contains("no GPU adapter")
        && std::env::var("KEYFRAME_GPU_REQUIRE_ADAPTER").as_deref() != Ok("1")
    {
        println!("SKIP {test}: {}", err.trim());
        return false;
    }
    panic!("{test}: sample failed ({:?}): {err}", o.status.code());
}

/// A path as the `&str` a command line takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The first line of a successful run's stdout, parsed as JSON.
pub fn json_line(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    let text = stdout(out);
    let line = text.lines().next().expect("a JSON line");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

/// A JSON array of numbers.
pub fn floats(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Writes `v` as JSON to `dir/name` (a PLAY script, a bone map) and
/// returns its path.
pub fn write_json(dir: &Path, name: &str, v: &serde_json::Value) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, serde_json::to_vec(v).unwrap()).unwrap();
    p
}
