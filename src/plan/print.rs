//! A plan printed: a line per dispatch (its entry point, grid at full
//! capacity, overrides and bindings by resource), then a line per
//! resource (its size at full capacity, usages and where its contents
//! come from). `sample FILE --plan` prints this.

use std::fmt;

use super::resources::{FrameSource, Resource, Shape, Source, Table};
use super::Plan;

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "plan for {} instances on a {}: sampler {}, skin {}{}",
            self.capacity,
            self.profile,
            self.sampler.name(),
            self.skin.map_or("none".to_string(), |s| format!("{s:?}")),
            if self.mixer.is_some() { ", mixer" } else { "" }
        )?;
        for (i, d) in self.dispatches.iter().enumerate() {
            let (x, y, z) = d.workgroups;
            write!(f, "  {i}: {:<18} ", d.entry_point)?;
            if let Some(g) = d.group {
                write!(
                    f,
                    "group {g}, {} rows, {} per invocation, ",
                    d.per_instance, d.row_run
                )?;
            } else {
                write!(f, "{} per instance, ", d.per_instance)?;
            }
            write!(f, "workgroups ({x}, {y}, {z}); ")?;
            if d.head_windows.len() > 1 {
                let firsts: Vec<u32> = d.head_windows.iter().map(|w| w.first_row).collect();
                write!(
                    f,
                    "{} parts, block heads in uniform windows from rows {firsts:?}; ",
                    d.head_windows.len()
                )?;
            }
            write!(f, "overrides")?;
            for (name, value) in d.overrides.constants(d.module) {
                write!(f, " {name}={value}")?;
            }
            write!(f, "; binds")?;
            for b in d.parts.first().map_or(&[][..], |p| &p.binds[..]) {
                write!(f, " {}=r{}", b.binding, b.resource.0)?;
            }
            writeln!(f)?;
        }
        writeln!(f, "  resources:")?;
        let counts = self.counts(self.capacity);
        for (i, r) in self.resources.all().iter().enumerate() {
            write!(f, "    r{i}: {}, ", r.name)?;
            match r.shape {
                Shape::Buffer(size) => write!(f, "{} B, {}", size.at(&counts), usages(r))?,
                Shape::Texture {
                    words,
                    texels,
                    row_shift,
                } => write!(
                    f,
                    "texture of {texels} texels of {} B, rows of {}",
                    4 * words,
                    1u64 << row_shift
                )?,
            }
            writeln!(f, ", {}", self.source_text(r))?;
        }
        Ok(())
    }
}

/// A buffer's usages, as wgpu names them.
fn usages(r: &Resource) -> String {
    let u = r.usage;
    let names = [
        (u.storage, "STORAGE"),
        (u.uniform, "UNIFORM"),
        (u.copy_src, "COPY_SRC"),
        (u.copy_dst, "COPY_DST"),
    ];
    let on: Vec<&str> = names.iter().filter(|n| n.0).map(|n| n.1).collect();
    on.join(" | ")
}

impl Plan {
    /// Where `r`'s contents come from, in words.
    fn source_text(&self, r: &Resource) -> String {
        match r.source {
            Source::Table(t) => format!("uploaded once: {}", table_text(t)),
            Source::Frame(s) => format!("written by the host each frame: {}", frame_text(s)),
            Source::Pass { init, .. } => {
                let id = self.resources.find(r.name);
                let writers: Vec<String> = self
                    .dispatches
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| {
                        d.parts.iter().any(|p| {
                            p.binds
                                .iter()
                                .any(|b| Some(b.resource) == id && self.writes(d, b.binding))
                        })
                    })
                    .map(|(i, _)| i.to_string())
                    .collect();
                let start = init.map_or(String::new(), |t| format!(", made as {}", table_text(t)));
                format!("written by dispatches {}{start}", writers.join(", "))
            }
        }
    }
}

/// A table's name in words.
fn table_text(t: Table) -> &'static str {
    use super::resources::HeadOf;
    match t {
        Table::KeyWindows => "the key search texels and run keys",
        Table::TrackSearch => "the track rows' search texels",
        Table::ClipGroups => "the clips' track groups",
        Table::Values => "the key values (or packed words)",
        Table::Clips => "the clip table",
        Table::SampleRows => "the clip-blocks plan's rows",
        Table::DecodeHeads => "the block heads' uniform copies",
        Table::Nodes => "the node table",
        Table::Channels => "the pose channels",
        Table::Meshes => "the mesh table",
        Table::DefaultWeights => "the default morph weights",
        Table::MorphChannels => "the morph channels",
        Table::Joints => "the joint table",
        Table::InverseBinds => "the inverse binds",
        Table::Head(HeadOf::Nodes) => "the node table's head",
        Table::Head(HeadOf::Channels) => "the pose channels' head",
        Table::Head(HeadOf::Joints) => "the joint table's head",
        Table::Head(HeadOf::InverseBinds) => "the inverse binds' head",
        Table::Masks => "the mixer's masks",
        Table::PointerChannels => "the pointer channels",
        Table::PointerTargets => "the pointer targets",
        Table::PointerRest => "the pointer rest values",
        Table::Identity => "identity matrices",
        Table::JointLastRows => "the inverse binds' last rows",
    }
}

/// A frame source's name in words.
fn frame_text(s: FrameSource) -> &'static str {
    match s {
        FrameSource::Instances => "the resolved instances",
        FrameSource::SampleParams => "each sampler dispatch's parameters",
        FrameSource::SortedInstances => "the instances sorted by clip",
        FrameSource::Blocks => "the clip-blocks plan's blocks",
        FrameSource::BlockParams => "each clip-blocks dispatch's parameters",
        FrameSource::SkinParams => "the rig passes' parameters",
        FrameSource::MixActions => "the mixer's actions",
        FrameSource::MixCharacters => "the mixer's character ranges",
    }
}
