//! The `sample` example as a command-line tool: `--json` schema and values
//! on generated assets, exit codes and one-line errors on broken input,
//! the demo's last line, `--compare` and `--plot`.
#![cfg(feature = "gltf")]

#[path = "common/gltf_builder.rs"]
mod gltf_builder;
#[path = "common/sample_cli.rs"]
mod sample_cli;

use std::path::PathBuf;

use gltf_builder::*;
use sample_cli::{gpu_ran, run, stderr, stdout};
use serde_json::Value;

/// Node 0: rotation STEP (keys 0, 0.5, 1); node 1: translation LINEAR
/// (keys 0, 1); node 2: weights LINEAR on a 2-target mesh (keys 0, 1).
/// Channel order: translation, rotation, weights. A second animation with
/// one scale channel starting at 2 s.
fn asset() -> Builder {
    let mut b = Builder::new();
    let mesh = b.mesh_with_targets(2);
    let n0 = b.node(None);
    let n1 = b.node(None);
    let n2 = b.node(Some(mesh));
    let k3 = b.accessor_f32(&[0.0, 0.5, 1.0], "SCALAR");
    let k2 = b.accessor_f32(&[0.0, 1.0], "SCALAR");
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let rot = b.accessor_f32(
        &[0.0, 0.0, 0.0, 1.0, 0.0, h, 0.0, h, 1.0, 0.0, 0.0, 0.0],
        "VEC4",
    );
    let tr = b.accessor_f32(&[0.0, 0.0, 0.0, 2.0, 4.0, 6.0], "VEC3");
    let w = b.accessor_f32(&[0.0, 1.0, 1.0, 0.0], "SCALAR");
    b.animation(
        "first",
        &[(k3, rot, "STEP"), (k2, tr, "LINEAR"), (k2, w, "LINEAR")],
        &[
            (1, n1, "translation"),
            (0, n0, "rotation"),
            (2, n2, "weights"),
        ],
    );
    let late = b.accessor_f32(&[2.0, 3.0], "SCALAR");
    let sc = b.accessor_f32(&[1.0, 1.0, 1.0, 3.0, 5.0, 7.0], "VEC3");
    b.animation("second", &[(late, sc, "LINEAR")], &[(0, n1, "scale")]);
    b
}

fn write_asset(test: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(test);
    let path = dir.join("cli asset.glb");
    std::fs::write(&path, asset().to_glb()).unwrap();
    (dir, path)
}

/// Checks one `--json` object against the schema and returns its samples
/// as (time, [(node, path, value)]).
fn parse_json(line: &str, file: &str, animation: u64, backend: &str) -> Vec<Sample> {
    let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    let obj = v.as_object().unwrap();
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["animation", "backend", "file", "samples"]);
    assert_eq!(v["file"], file);
    assert_eq!(v["animation"], animation);
    assert_eq!(v["backend"], backend);
    v["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let so = s.as_object().unwrap();
            assert_eq!(so.len(), 2, "{s}");
            let channels = s["channels"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    assert_eq!(c.as_object().unwrap().len(), 3, "{c}");
                    (
                        c["node"].as_u64().unwrap(),
                        c["path"].as_str().unwrap().to_string(),
                        c["value"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|x| x.as_f64().unwrap())
                            .collect(),
                    )
                })
                .collect();
            (s["time"].as_f64().unwrap(), channels)
        })
        .collect()
}

/// One sample: its time and (node, path, value) per channel.
type Sample = (f64, Vec<(u64, String, Vec<f64>)>);

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

fn check_first_animation(samples: &[Sample], tol: f64) {
    let h = std::f64::consts::FRAC_1_SQRT_2;
    // (time, translation, rotation, weights), computed by hand.
    type Row = (f64, [f64; 3], [f64; 4], [f64; 2]);
    let want: [Row; 4] = [
        (0.5, [1.0, 2.0, 3.0], [0.0, h, 0.0, h], [0.5, 0.5]),
        (-1.0, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 1.0]),
        (0.25, [0.5, 1.0, 1.5], [0.0, 0.0, 0.0, 1.0], [0.25, 0.75]),
        (7.0, [2.0, 4.0, 6.0], [1.0, 0.0, 0.0, 0.0], [1.0, 0.0]),
    ];
    assert_eq!(samples.len(), want.len());
    for ((time, channels), (t, tr, rot, w)) in samples.iter().zip(want) {
        assert_eq!(*time, t);
        let order: Vec<(u64, &str)> = channels.iter().map(|c| (c.0, c.1.as_str())).collect();
        assert_eq!(order, [(1, "translation"), (0, "rotation"), (2, "weights")]);
        assert!(
            close(&channels[0].2, &tr, tol),
            "t={t}: {:?}",
            channels[0].2
        );
        assert!(
            close(&channels[1].2, &rot, tol),
            "t={t}: {:?}",
            channels[1].2
        );
        assert!(close(&channels[2].2, &w, tol), "t={t}: {:?}", channels[2].2);
    }
}

#[test]
fn json_on_the_cpu_backend() {
    let (dir, path) = write_asset("cli-json-cpu");
    let p = path.to_str().unwrap();
    let o = run(&[p, "--json", "--backend", "cpu", "--times", "0.5,-1,0.25,7"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    let samples = parse_json(out.trim(), "cli asset.glb", 0, "cpu");
    check_first_animation(&samples, 1e-6);
    // A list that starts with a negative time is a value, not a flag.
    let o = run(&[p, "--json", "--backend", "cpu", "--times", "-1,0.5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let samples = parse_json(stdout(&o).trim(), "cli asset.glb", 0, "cpu");
    let times: Vec<f64> = samples.iter().map(|s| s.0).collect();
    assert_eq!(times, [-1.0, 0.5]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn json_on_the_gpu_backend() {
    let (dir, path) = write_asset("cli-json-gpu");
    let p = path.to_str().unwrap();
    let o = run(&[p, "--json", "--times", "0.5,-1,0.25,7"]);
    if gpu_ran("json_on_the_gpu_backend", &o) {
        assert!(o.status.success(), "{}", stderr(&o));
        let samples = parse_json(stdout(&o).trim(), "cli asset.glb", 0, "gpu");
        check_first_animation(&samples, 2e-5);
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn default_times_and_all_animations() {
    let (dir, path) = write_asset("cli-all");
    let p = path.to_str().unwrap();
    let o = run(&[p, "--json", "--backend", "cpu", "--all-animations"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    // Animation 0: keys 0, 0.5, 1 plus midpoints.
    let s0 = parse_json(lines[0], "cli asset.glb", 0, "cpu");
    let t0: Vec<f64> = s0.iter().map(|s| s.0).collect();
    assert_eq!(t0, [0.0, 0.25, 0.5, 0.75, 1.0]);
    // Animation 1: keys 2 and 3 plus the midpoint; scale halfway is (2, 3, 4).
    let s1 = parse_json(lines[1], "cli asset.glb", 1, "cpu");
    let t1: Vec<f64> = s1.iter().map(|s| s.0).collect();
    assert_eq!(t1, [2.0, 2.5, 3.0]);
    assert_eq!(s1[1].1, [(1, "scale".to_string(), vec![2.0, 3.0, 4.0])]);
    // --animation 1 alone gives the same object.
    let o = run(&[p, "--json", "--backend", "cpu", "--animation", "1"]);
    assert_eq!(stdout(&o).trim(), lines[1]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn compare_and_plot() {
    let (dir, path) = write_asset("cli-compare");
    let p = path.to_str().unwrap();
    let o = run(&[p, "--compare", "--all-animations", "--tol", "2e-5"]);
    if !gpu_ran("compare_and_plot", &o) {
        return;
    }
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let errs: Vec<f64> = out
        .lines()
        .filter_map(|l| l.strip_prefix("max_abs_err="))
        .map(|l| l.split_whitespace().next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(errs.len(), 2, "{out}");
    assert!(errs.iter().all(|&e| e <= 2e-5), "{out}");
    // A negative tolerance is refused; no error can be under it otherwise.
    let o = run(&[p, "--compare", "--tol", "-1"]);
    assert_eq!(o.status.code(), Some(2));

    let png_path = dir.join("plot.png");
    let o = run(&[p, "--plot", png_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let decoder = png::Decoder::new(std::fs::File::open(&png_path).unwrap());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    // Three channels: a grid of at least three panels, with drawn pixels.
    assert!(info.width >= 300 && info.height >= 200, "{info:?}");
    let coloured = buf
        .chunks(3)
        .filter(|p| p[0] != p[1] || p[1] != p[2])
        .count();
    assert!(coloured > 500, "{coloured} coloured pixels");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn demo_ends_with_max_abs_err() {
    let o = run(&[]);
    if !gpu_ran("demo_ends_with_max_abs_err", &o) {
        return;
    }
    let out = stdout(&o);
    assert!(out.contains("adapter: "), "{out}");
    let last = out.lines().last().unwrap();
    let err: f64 = last
        .strip_prefix("max_abs_err=")
        .unwrap_or_else(|| panic!("last line: {last}"))
        .parse()
        .unwrap();
    assert!(err < 2e-5, "{last}");
    // Every interpolation x property has rows.
    for interp in ["STEP", "LINEAR", "CUBICSPLINE"] {
        for p in ["translation", "rotation", "scale", "weights"] {
            assert!(out.contains(&format!("{interp} {p}")), "{interp} {p}");
        }
    }
}

/// Each broken input: exit code 2, exactly one line on stderr, nothing on
/// stdout.
#[test]
fn broken_input_exits_2_with_one_line() {
    let dir = temp_dir("cli-broken");
    let good = asset();
    let glb = good.to_glb();
    let mut cases: Vec<(&str, Vec<u8>)> = vec![
        ("truncated.glb", glb[..glb.len() / 2].to_vec()),
        ("garbage.gltf", b"this is not json".to_vec()),
        ("notgltf.gltf", b"{\"hello\": 1}".to_vec()),
        ("empty.glb", Vec::new()),
    ];
    let mut j = good.json(Some("missing.bin".into()));
    cases.push(("missing-buffer.gltf", serde_json::to_vec(&j).unwrap()));
    j["accessors"][3]["count"] = serde_json::json!(1_000_000_000u64);
    cases.push(("huge-count.gltf", serde_json::to_vec(&j).unwrap()));
    let mut j = good.json(None);
    j["extensionsRequired"] = serde_json::json!(["EXT_nope"]);
    cases.push(("ext.glb", glb_bytes(&j, &good.bin)));
    let mut j = good.json(None);
    j["animations"][0]["channels"][0]["sampler"] = serde_json::json!(99);
    cases.push(("bad-sampler.glb", glb_bytes(&j, &good.bin)));
    let mut j = good.json(None);
    j["bufferViews"][2]["byteStride"] = serde_json::json!(1);
    cases.push(("bad-stride.glb", glb_bytes(&j, &good.bin)));
    let mut args: Vec<Vec<String>> = Vec::new();
    for (name, bytes) in &cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        args.push(vec![path.display().to_string(), "--json".into()]);
    }
    let good_path = dir.join("good.glb");
    std::fs::write(&good_path, &glb).unwrap();
    let g = good_path.display().to_string();
    args.push(vec![dir.join("absent.glb").display().to_string()]);
    args.push(vec![dir.display().to_string()]);
    args.push(vec![g.clone(), "--animation".into(), "5".into()]);
    args.push(vec![g.clone(), "--times".into(), "1,nan".into()]);
    args.push(vec![g.clone(), "--times".into(), "1,x".into()]);
    args.push(vec![g.clone(), "--backend".into(), "tpu".into()]);
    args.push(vec![g, "--frobnicate".into()]);
    for a in &args {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let o = run(&refs);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{a:?}: {err:?}");
        assert!(err.trim().len() > 10, "{a:?}: {err:?}");
        assert!(!err.contains("panicked"), "{a:?}: {err}");
        assert!(o.stdout.is_empty(), "{a:?}: {}", stdout(&o));
    }
    let _ = std::fs::remove_dir_all(dir);
}

fn glb_bytes(j: &Value, bin: &[u8]) -> Vec<u8> {
    glb(&serde_json::to_vec(j).unwrap(), Some(bin))
}
