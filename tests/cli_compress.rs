//! `sample FILE --compress [BOUND]`: the compressed library sampled with
//! the same output as the uncompressed one (the same channels, values
//! within the bound's reach), one `compressed:` line on stderr whose error
//! is within its bound, GPU against the CPU twin, and a bad bound refused
//! with one line and exit 2. Files built in code (`common/pack.rs`).
#![cfg(feature = "gltf")]

mod common;
#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/pack.rs"]
mod pack;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::Path;

use sample_cli::{gpu_ran, run, stderr, stdout};
use serde_json::Value;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every JSON line of a successful run.
fn lines(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", stderr(out));
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// Per sample, per channel: (node, path, values).
fn channels(v: &[Value]) -> Vec<(u64, String, Vec<f64>)> {
    v.iter()
        .flat_map(|line| line["samples"].as_array().unwrap().iter())
        .flat_map(|sample| sample["channels"].as_array().unwrap().iter())
        .map(|c| {
            (
                c["node"].as_u64().unwrap(),
                c["path"].as_str().unwrap().to_owned(),
                c["value"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect(),
            )
        })
        .collect()
}

/// The `compressed: R:1, max error E (bound B)` line: (R, E, B).
fn compressed_line(out: &std::process::Output) -> (f64, f64, f64) {
    let err = stderr(out);
    let found: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("compressed: "))
        .collect();
    assert_eq!(found.len(), 1, "one compressed line in:\n{err}");
    let words: Vec<&str> = found[0].split_whitespace().collect();
    // ["compressed:", "R:1,", "max", "error", "E", "(bound", "B)"]
    assert_eq!(words.len(), 7, "{}", found[0]);
    let ratio: f64 = words[1].trim_end_matches(":1,").parse().unwrap();
    let error: f64 = words[4].parse().unwrap();
    let bound: f64 = words[6].trim_end_matches(')').parse().unwrap();
    (ratio, error, bound)
}

#[test]
fn compressed_output_has_the_same_shape_and_values_within_reach() {
    let dir = gltf_builder::temp_dir("compress-cli");
    let (character, run_file, _) = pack::write(&dir);
    let args = [s(&character), "--clips", s(&run_file), "--json"];
    let plain = run(&[&args[..], &["--backend", "cpu"]].concat());
    let packed = run(&[&args[..], &["--backend", "cpu", "--compress"]].concat());
    let (ratio, error, bound) = compressed_line(&packed);
    assert!(ratio > 0.0 && ratio.is_finite(), "ratio {ratio}");
    assert!(error <= bound, "max error {error} above its bound {bound}");
    // The character is about 3 units tall: the default bound is 5.6e-5 of
    // its diagonal.
    assert!(bound > 1e-5 && bound < 1e-3, "bound {bound}");
    let (a, b) = (channels(&lines(&plain)), channels(&lines(&packed)));
    assert_eq!(a.len(), b.len());
    assert!(!a.is_empty());
    for ((na, pa, va), (nb, pb, vb)) in a.iter().zip(&b) {
        assert_eq!((na, pa, va.len()), (nb, pb, vb.len()));
        // A value moves a virtual point by at most the bound; no value of
        // this small rig may move by more than a few bounds.
        for (x, y) in va.iter().zip(vb) {
            assert!(
                (x - y).abs() <= 20.0 * bound,
                "node {na} {pa}: {va:?} against {vb:?}"
            );
        }
    }
    // The GPU decodes as the twin does.
    let gpu = run(&[&args[..], &["--compress"]].concat());
    if gpu_ran("compress-cli-gpu", &gpu) {
        for ((_, _, vg), (_, _, vc)) in channels(&lines(&gpu)).iter().zip(&b) {
            for (x, y) in vg.iter().zip(vc) {
                assert!((x - y).abs() <= 2e-5, "{vg:?} against {vc:?}");
            }
        }
    }
    let compare = run(&[
        s(&character),
        "--clips",
        s(&run_file),
        "--compress",
        "--compare",
    ]);
    if gpu_ran("compress-cli-compare", &compare) {
        assert!(compare.status.success(), "{}", stderr(&compare));
        assert!(stdout(&compare).contains("max_abs_err="));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bound_that_is_not_positive_is_refused_with_one_line() {
    let dir = gltf_builder::temp_dir("compress-cli-bad");
    let (character, _, _) = pack::write(&dir);
    for bad in ["0", "-1", "NaN", "inf"] {
        let flag = format!("--compress={bad}");
        let out = run(&[s(&character), "--backend", "cpu", &flag]);
        assert_eq!(out.status.code(), Some(2), "--compress {bad}");
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--compress"), "{err}");
        assert!(stdout(&out).is_empty());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
