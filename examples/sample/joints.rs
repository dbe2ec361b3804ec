//! `--joints`: each skin's joint matrices at each time, as a table, as
//! JSON, or compared between the GPU and the CPU.

use std::io::Write;
use std::process::ExitCode;

use crate::args::{Backend, Cli};
use crate::engine::Engine;
use crate::source::{self, Source};
use crate::{compare, json, table, Failure};

/// Runs `--joints` over the selected animations.
pub fn run(
    cli: &Cli,
    source: &Source,
    tol: f32,
    out: &mut impl Write,
) -> Result<ExitCode, Failure> {
    let shown = cli
        .file
        .as_deref()
        .map_or_else(|| source.name.clone(), |p| p.display().to_string());
    if source.document.is_none() {
        return Err(Failure::Message(format!("no skins in {shown}")));
    }
    let bound = source.bound("--joints")?;
    let rig = bound.rig();
    if rig.skins().is_empty() {
        return Err(Failure::Message(format!("no skins in {shown}")));
    }
    let lib = &source.library;
    let anims = source::selected(cli, lib.clips().len())?;
    let mut engine = Engine::new(lib);
    engine.limit_for_skinning(rig);
    let mut code = ExitCode::SUCCESS;
    if !cli.json {
        writeln!(
            out,
            "file: {}  ({} animation(s), {} skin(s))",
            source.name,
            lib.clips().len(),
            rig.skins().len()
        )?;
        if cli.uses_gpu() {
            writeln!(out, "adapter: {}", engine.describe()?)?;
        }
        writeln!(out, "backend: {}", cli.backend_label())?;
    }
    for &a in &anims {
        let times = source::times(cli, &lib.clips()[a]);
        let instances = source::instances(a, &times);
        let values = if cli.compare {
            let gpu = engine.joints(Backend::Gpu, &bound, &instances)?;
            let cpu = engine.joints(Backend::Cpu, &bound, &instances)?;
            let verdict = compare::skins(rig, lib, a, times.len(), &gpu, &cpu, tol);
            if verdict.failed {
                code = ExitCode::from(1);
            }
            verdict.print(cli.json, out)?;
            if cli.backend == Backend::Gpu {
                gpu
            } else {
                cpu
            }
        } else {
            engine.joints(cli.backend, &bound, &instances)?
        };
        if cli.json {
            writeln!(out, "{}", json::joints(source, a, &times, &values))?;
        } else if !cli.compare {
            table::joints(source, a, &times, &values, out)?;
        }
    }
    Ok(code)
}
