//! Each dispatch's bindings by name: what every binding of the sampler's,
//! the pose and skin stages' and the mixer's modules names
//! ([`Plan::resource_of`]), the parts a dispatch is recorded in with their
//! grids, and the contents of every table a plan uploads
//! ([`Plan::table`]). Adding a stage adds its bindings here.

use std::mem::size_of;

use super::passes::{Lanes, Module, RigModule};
use super::resources::{
    Bind, Count, FrameSource, Grid, HeadOf, Resource, Resources, Shape, Size, Source, Table,
    Window, SAMPLE_WORKGROUP,
};
use super::schedule::{key_row_shift, lanes_per_instance, Dispatch, Plan};
use super::{block_row_run, SamplerPlan};
use crate::error::{Error, Result};
use crate::layout::{
    Binding, GpuBlockParams, GpuInstance, GpuJoint, GpuLocalPose, GpuMesh, GpuMixAction, GpuNode,
    GpuParams, GpuSampleBlock, GpuSampleRow, GpuSkinParams, BLOCK_HEAD, DECODE_HEAD,
    PLAYBACK_WORKGROUP_SIZE, ROW_HEAD, SAMPLE_GROUPS, SKIN_WORKGROUP_SIZE, UNIFORM_HEAD,
};
use crate::tables::blocks::Part as BlockPart;
use crate::tables::key_lookup::{clip_group_texels, track_search_texels};
use crate::tables::mix::mask_table;
use crate::tables::rig::SkinTables;
use crate::tables::sample::HeadWindow;

/// Names the host reads resources by.
pub(crate) mod names {
    /// The sampler's output: a row of sampled values per instance row.
    pub(crate) const OUTPUT: &str = "output buffer";
    /// The local poses (staged strategy and mixer).
    pub(crate) const LOCALS: &str = "local poses";
    /// The world matrices of every node.
    pub(crate) const GLOBALS: &str = "global matrices";
    /// The joint matrices of every skin.
    pub(crate) const JOINT_MATRICES: &str = "joint matrices";
    /// The morph weights of every mesh.
    pub(crate) const MORPH_WEIGHTS: &str = "morph weights";
    /// The mixer's blended pointer properties.
    pub(crate) const PROPERTIES: &str = "mixer properties";
    /// The resolved instance rows (written by the host, or by the GPU
    /// playback pass).
    pub(crate) const INSTANCES: &str = "instance table";
    /// The mixer's action records (the host's, or the playback pass's).
    pub(crate) const MIX_ACTIONS: &str = "mixer actions";
    /// The mixer's character ranges (the host's, or the playback pass's).
    pub(crate) const MIX_CHARACTERS: &str = "mixer characters";
}

/// One recorded dispatch: its bindings and its grid. A dispatch is one
/// part, or several (the clip-blocks plan's dispatches over windows of a
/// compressed library's block heads), each with bindings of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DispatchPart {
    /// Every binding of the dispatch's layout, by number and resource.
    pub(crate) binds: Vec<Bind>,
    /// Its workgroups in a frame.
    pub(crate) grid: Grid,
}

/// The resources of the rig stage in the order the limits are checked
/// (the outputs sized by the capacity first), declared where a pass binds
/// them.
const RIG_ORDER: [&str; 25] = [
    "globals",
    "joint_matrices",
    "morph_weights",
    "locals",
    "mix_actions",
    "masks",
    "channels",
    "characters",
    "properties",
    "params",
    "samples",
    "instances",
    "nodes",
    "meshes",
    "default_weights",
    "morph_channels",
    "joints",
    "inverse_binds",
    "nodes_head",
    "channels_head",
    "inverse_binds_head",
    "joints_head",
    "pointer_channels",
    "pointer_targets",
    "pointer_rest",
];

/// Any rig module: they share their bindings' numbers and names.
const RIG: Module = Module::Rig(RigModule::Pose);

fn u64_of(n: usize) -> u64 {
    n as u64
}

/// A stride of parameter slots of `entry` bytes, at the uniform offset
/// alignment.
fn slot_stride(alignment: u32, entry: usize) -> u64 {
    u64::from(alignment).max(u64_of(entry))
}

impl Plan {
    /// Declares every dispatch's resources and binds its parts: the
    /// sampler's, then the rig's (its outputs first: [`RIG_ORDER`]).
    pub(crate) fn declare(&mut self) -> Result<()> {
        let mut resources = Resources::default();
        let mut parts = Vec::with_capacity(self.dispatches.len());
        let mut slot = 0usize;
        let mut rig_declared = false;
        for d in &self.dispatches {
            if matches!(d.module, Module::Rig(_)) && !rig_declared {
                self.declare_rig(&mut resources)?;
                rig_declared = true;
            }
            parts.push(self.parts_of(d, &mut slot, &mut resources)?);
        }
        for (d, p) in self.dispatches.iter_mut().zip(parts) {
            d.parts = p;
        }
        self.resources = resources;
        Ok(())
    }

    /// Declares, in [`RIG_ORDER`], the rig bindings any rig dispatch of
    /// the plan uses.
    fn declare_rig(&self, resources: &mut Resources) -> Result<()> {
        let mut used: Vec<Binding> = Vec::new();
        for d in &self.dispatches {
            let Module::Rig(m) = d.module else { continue };
            for b in m.bindings() {
                if d.row().bindings.contains(&b.binding) && !used.iter().any(|u| u.name == b.name) {
                    used.push(*b);
                }
            }
        }
        for name in RIG_ORDER {
            if let Some(b) = used.iter().find(|u| u.name == name) {
                let (r, _) = self.resource_of(RIG, b, 0, None)?;
                resources.bind(r, b.kind)?;
            }
        }
        Ok(())
    }

    /// The parts of dispatch `d`, its bindings declared in `resources`;
    /// `slot` counts the sampler's parts (each has its own parameters).
    fn parts_of(
        &self,
        d: &Dispatch,
        slot: &mut usize,
        resources: &mut Resources,
    ) -> Result<Vec<DispatchPart>> {
        let whole = [HeadWindow {
            first_row: 0,
            clip_begin: 0,
            clip_end: u32::try_from(self.sample_tables.library.clip_table().len())
                .unwrap_or(u32::MAX),
        }];
        let windows = match d.module {
            Module::Sample if !d.head_windows.is_empty() => &d.head_windows[..],
            _ => &whole[..],
        };
        let mut parts = Vec::with_capacity(windows.len());
        for w in windows {
            let mut binds = Vec::with_capacity(d.row().bindings.len());
            for &n in d.row().bindings {
                let b = d
                    .module
                    .bindings()
                    .iter()
                    .find(|b| b.binding == n)
                    .ok_or_else(|| Error::Gpu {
                        during: "Plan",
                        message: format!("{}: binding {n} is not in its module", d.entry_point),
                    })?;
                let (r, window) = self.resource_of(d.module, b, *slot, Some(*w))?;
                binds.push(Bind {
                    binding: n,
                    name: b.name,
                    resource: resources.bind(r, b.kind)?,
                    window,
                });
            }
            parts.push(DispatchPart {
                binds,
                grid: self.grid_of(d, *w),
            });
            if d.module == Module::Sample {
                *slot += 1;
            }
        }
        Ok(parts)
    }

    /// The grid of a part of `d` over the clips of window `w`.
    fn grid_of(&self, d: &Dispatch, w: HeadWindow) -> Grid {
        match (d.module, self.sampler) {
            (Module::Sample, SamplerPlan::ClipBlocks) => Grid::Blocks {
                part: BlockPart {
                    group: d.group.unwrap_or(0),
                    clip_begin: w.clip_begin,
                    clip_end: w.clip_end,
                    head_first: w.first_row,
                },
                runs: block_runs(d.per_instance),
            },
            (Module::Sample, _) => Grid::Invocations {
                count: Count::Rows,
                per: d.per_instance.div_ceil(d.row_run.max(1)),
                workgroup: SAMPLE_WORKGROUP,
                what: "dispatch (instances x tracks per instance)",
            },
            (Module::Playback, _) => Grid::Invocations {
                count: Count::Characters,
                per: 1,
                workgroup: PLAYBACK_WORKGROUP_SIZE,
                what: "dispatch (characters)",
            },
            (Module::Rig(_), _) => {
                let lanes = d.rig_pass.map_or(Lanes::One, |p| p.lanes);
                let per = self
                    .skin_tables
                    .as_ref()
                    .map_or(0, |t| lanes_per_instance(t, lanes));
                Grid::Invocations {
                    count: Count::Characters,
                    per,
                    workgroup: SKIN_WORKGROUP_SIZE,
                    what: match lanes {
                        Lanes::Node => "dispatch (instances x nodes)",
                        Lanes::Mesh => "dispatch (instances x meshes)",
                        Lanes::One | Lanes::Workgroup => "dispatch (instances)",
                        Lanes::Pointer => "dispatch (characters x pointer targets)",
                    },
                }
            }
        }
    }

    /// What binding `b` of `module` names, with the window it takes:
    /// `slot` is a sampler part's parameter slot, `w` its window of the
    /// block heads.
    pub(crate) fn resource_of(
        &self,
        module: Module,
        b: &Binding,
        slot: usize,
        w: Option<HeadWindow>,
    ) -> Result<(Resource, Option<Window>)> {
        let found = match module {
            Module::Sample => self.sample_resource(b.name, slot, w),
            Module::Rig(_) => self.rig_resource(b.name),
            // The playback pass's resources are its own (`gpu::playback`)
            // until a plan declares them.
            Module::Playback => None,
        };
        found.ok_or_else(|| Error::Gpu {
            during: "Plan",
            message: format!("binding {} ({}) names no resource", b.binding, b.name),
        })
    }

    /// The sampler module's binding `name`: a table of the library, or
    /// what the frame writes.
    fn sample_resource(
        &self,
        name: &str,
        slot: usize,
        w: Option<HeadWindow>,
    ) -> Option<(Resource, Option<Window>)> {
        self.sample_table(name, w)
            .or_else(|| self.sample_frame(name, slot))
    }

    /// The sampler's binding `name` where it is a library table (`w`:
    /// the part's window of the block heads).
    fn sample_table(
        &self,
        name: &str,
        w: Option<HeadWindow>,
    ) -> Option<(Resource, Option<Window>)> {
        let t = &self.sample_tables;
        let lib = &t.library;
        let shift = key_row_shift(&self.profile);
        let texture = |name, table, words: u32, texels: usize| Resource {
            name,
            source: Source::Table(table),
            shape: Shape::Texture {
                words,
                texels: u64_of(texels),
                row_shift: shift,
            },
            usage: Default::default(),
        };
        let table = |name, table, size| Resource::buffer(name, Source::Table(table), size);
        let head_window = |rows: u32, entry: usize| Window {
            offset: 0,
            size: u64::from(rows) * u64_of(entry),
        };
        Some(match name {
            "key_windows" => (
                texture("key search table", Table::KeyWindows, 4, t.texels.len()),
                None,
            ),
            "track_search" => {
                let texels = 2 * lib.tracks().len();
                (
                    texture("track search table", Table::TrackSearch, 4, texels),
                    None,
                )
            }
            "clip_groups" => {
                let texels = lib.clip_table().len() * (SAMPLE_GROUPS + 1);
                (
                    texture("clip group table", Table::ClipGroups, 2, texels),
                    None,
                )
            }
            "values" | "values4" | "packed" => {
                let size = Size {
                    count: Count::Fixed(value_bytes(lib)),
                    per: 1,
                    min: 0,
                    align: 16,
                    // One vec4 of zeros after the last value, which the
                    // clip-blocks plan's exact run tables read (unused)
                    // past a last key instead of reading the key count to
                    // clamp (slerp_pair), and where the decoder's windows
                    // read past the last packed word (the twin's zeros).
                    tail: 16,
                };
                (table("key values", Table::Values, size), None)
            }
            "clips" => {
                let size = Size::bytes(u64_of(size_of_val(lib.clip_table())));
                (table("clip table", Table::Clips, size), None)
            }
            "rows_head" | "rows" => {
                let rows = u64_of(lib.tracks().len()).max(u64::from(ROW_HEAD));
                let size = Size::bytes(rows * u64_of(size_of::<GpuSampleRow>()));
                let window = (name == "rows_head")
                    .then_some(head_window(ROW_HEAD, size_of::<GpuSampleRow>()));
                (
                    table("clip-blocks row table", Table::SampleRows, size),
                    window,
                )
            }
            "decode_heads" | "decode_frames" => {
                let at = match w {
                    Some(w) if !t.decode_heads.is_empty() => u64::from(w.first_row) * 32,
                    _ => 0,
                };
                let frames = match name {
                    "decode_frames" if !t.decode_heads.is_empty() => {
                        u64::from(t.decode_head_rows()) * 32
                    }
                    _ => 0,
                };
                let name = if t.decode_heads.is_empty() {
                    // Bound for the layout, never read (`HEADS_IN_UNIFORM`
                    // is off).
                    "block heads placeholder (zeros, unread)"
                } else {
                    "decode heads"
                };
                let size = Size::bytes(decode_heads_len(t));
                let window = Window {
                    offset: frames + at,
                    size: u64::from(DECODE_HEAD) * 32,
                };
                (table(name, Table::DecodeHeads, size), Some(window))
            }
            _ => return None,
        })
    }

    /// The sampler's binding `name` where the host writes it each frame
    /// (`slot`: the part's parameter slot) or the passes do.
    fn sample_frame(&self, name: &str, slot: usize) -> Option<(Resource, Option<Window>)> {
        let t = &self.sample_tables;
        let frame = |name, source, size| Resource::buffer(name, Source::Frame(source), size);
        let align = self.profile.limits.min_uniform_buffer_offset_alignment;
        let slots = u64_of(t.parts().max(1));
        let slot_of = |entry: usize| {
            let stride = slot_stride(align, entry);
            let window = Window {
                offset: stride * slot as u64,
                size: u64_of(entry),
            };
            (Size::bytes(stride * slots), Some(window))
        };
        let block = u64_of(size_of::<GpuSampleBlock>());
        Some(match name {
            "instances" => (instance_table(), None),
            "output" | "output4" => (self.output_buffer(), None),
            "params" => {
                let (size, window) = slot_of(size_of::<GpuParams>());
                let params = frame("sampler parameters", FrameSource::SampleParams, size);
                (params, window)
            }
            "block_params" => {
                let (size, window) = slot_of(size_of::<GpuBlockParams>());
                (
                    frame("block parameters", FrameSource::BlockParams, size),
                    window,
                )
            }
            "sorted_instances" => {
                let size = Size::of(Count::Rows, 8, 8);
                (
                    frame("sorted instance table", FrameSource::SortedInstances, size),
                    None,
                )
            }
            "blocks_head" | "blocks" => {
                let head = u64::from(BLOCK_HEAD) * block;
                let size = Size::of(Count::BlockEntries, block, head);
                let window = (name == "blocks_head").then_some(Window {
                    offset: 0,
                    size: head,
                });
                (
                    frame("clip-blocks block table", FrameSource::Blocks, size),
                    window,
                )
            }
            _ => return None,
        })
    }

    /// The sampler's output buffer: a row of `output_stride` floats per
    /// sampler row, whole vec4s (it is also bound as `output4`).
    fn output_buffer(&self) -> Resource {
        let stride = u64::from(self.sample_tables.library.output_stride());
        Resource::buffer(
            names::OUTPUT,
            Source::Pass {
                init: None,
                host_writes: true,
            },
            Size {
                count: Count::Rows,
                per: stride * 4,
                min: 16,
                align: 16,
                tail: 0,
            },
        )
    }

    /// The rig modules' binding `name` (pose.wgsl's, skin.wgsl's and
    /// mix.wgsl's share their numbers and names): a table of the rig or
    /// the mixer, or what the frame or the passes write.
    fn rig_resource(&self, name: &str) -> Option<(Resource, Option<Window>)> {
        let t = self.skin_tables.as_ref()?;
        let r = self
            .rig_upload(name, t)
            .or_else(|| self.rig_frame(name, t))?;
        Some((r, None))
    }

    /// The rig's binding `name` where it is a table of the rig or the
    /// mixer.
    fn rig_upload(&self, name: &str, t: &SkinTables) -> Option<Resource> {
        let table = |name, table, bytes: usize, min: usize| {
            let size = Size::of(Count::Fixed(u64_of(bytes)), 1, u64_of(min));
            Resource::buffer(name, Source::Table(table), size)
        };
        let head = |name, of, entry: usize| {
            let size = Size::bytes(u64::from(UNIFORM_HEAD) * u64_of(entry));
            Resource::buffer(name, Source::Table(Table::Head(of)), size)
        };
        let (node, joint) = (size_of::<GpuNode>(), size_of::<GpuJoint>());
        Some(match name {
            "nodes" => table("node table", Table::Nodes, size_of_val(t.nodes()), node),
            "channels" => {
                let bytes = size_of_val(t.channels());
                table("pose channel table", Table::Channels, bytes, 16)
            }
            "meshes" => {
                let bytes = size_of_val(t.meshes());
                table("mesh table", Table::Meshes, bytes, size_of::<GpuMesh>())
            }
            "default_weights" => {
                let bytes = size_of_val(t.default_weights());
                table("default weights", Table::DefaultWeights, bytes, 4)
            }
            "morph_channels" => {
                let bytes = size_of_val(t.morph_channels());
                table("morph channel table", Table::MorphChannels, bytes, 4)
            }
            "joints" => table("joint table", Table::Joints, size_of_val(t.joints()), joint),
            "inverse_binds" => {
                let bytes = size_of_val(t.inverse_binds());
                table("inverse binds", Table::InverseBinds, bytes, 64)
            }
            "nodes_head" => head("node table (uniform copy)", HeadOf::Nodes, node),
            "channels_head" => head("pose channel table (uniform copy)", HeadOf::Channels, 16),
            "inverse_binds_head" => head("inverse binds (uniform copy)", HeadOf::InverseBinds, 64),
            "joints_head" => head("joint table (uniform copy)", HeadOf::Joints, joint),
            "masks" => table("mixer masks", Table::Masks, 4 * self.mask_floats(), 4),
            "pointer_channels" => {
                let bytes = size_of_val(t.pointer_channels());
                table("pointer channels", Table::PointerChannels, bytes, 4)
            }
            "pointer_targets" => {
                let bytes = size_of_val(t.pointer_targets());
                table("pointer targets", Table::PointerTargets, bytes, 16)
            }
            "pointer_rest" => {
                let bytes = size_of_val(t.pointer_rest());
                table("pointer rest values", Table::PointerRest, bytes, 4)
            }
            _ => return None,
        })
    }

    /// The rig's binding `name` where the host writes it each frame or
    /// the passes do.
    fn rig_frame(&self, name: &str, t: &SkinTables) -> Option<Resource> {
        let chars = |per: u64, min: u64| Size::of(Count::Characters, per, min);
        let output = |name, init, host_writes, size| {
            Resource::buffer(name, Source::Pass { init, host_writes }, size)
        };
        let frame = |name, source, size| Resource::buffer(name, Source::Frame(source), size);
        let nodes = u64::from(t.node_count());
        let pose = u64_of(size_of::<GpuLocalPose>());
        let action = u64_of(size_of::<GpuMixAction>());
        let per_character = self.mixer.as_ref().map_or(1, |m| m.actions_per_character);
        Some(match name {
            "params" => {
                let size = Size::bytes(u64_of(size_of::<GpuSkinParams>()));
                frame("skin parameters", FrameSource::SkinParams, size)
            }
            "samples" => self.output_buffer(),
            "instances" => instance_table(),
            "locals" => output(names::LOCALS, None, true, chars(nodes * pose, pose)),
            "morph_weights" => {
                let size = chars(u64::from(t.morph_stride()) * 4, 4);
                output(names::MORPH_WEIGHTS, None, false, size)
            }
            "globals" => {
                let size = chars(nodes * 64, 64);
                output(names::GLOBALS, Some(Table::Identity), false, size)
            }
            "joint_matrices" => {
                let size = chars(u64::from(t.joint_count()) * 64, 64);
                output(
                    names::JOINT_MATRICES,
                    Some(Table::JointLastRows),
                    false,
                    size,
                )
            }
            "properties" => {
                let size = chars(u64::from(t.property_stride()) * 4, 4);
                output(names::PROPERTIES, None, false, size)
            }
            "mix_actions" => {
                let size = chars(u64::from(per_character) * action, action);
                frame(names::MIX_ACTIONS, FrameSource::MixActions, size)
            }
            "characters" => frame(
                names::MIX_CHARACTERS,
                FrameSource::MixCharacters,
                chars(8, 8),
            ),
            _ => return None,
        })
    }

    /// The floats of the mixer's masks (none without a mixer).
    fn mask_floats(&self) -> usize {
        self.mixer
            .as_ref()
            .map_or(0, |m| m.masks.iter().map(|k| k.factors().len()).sum())
    }
}

/// The clip-blocks plan's workgroups per block of a group of
/// `group_rows` rows: one per run of rows.
fn block_runs(group_rows: u32) -> u32 {
    group_rows.max(1).div_ceil(block_row_run(group_rows))
}

/// The instance table: a row per sampler row, written each frame, read by
/// the sampler and the rig passes.
fn instance_table() -> Resource {
    Resource::buffer(
        names::INSTANCES,
        Source::Frame(FrameSource::Instances),
        Size::of(
            Count::Rows,
            u64_of(size_of::<GpuInstance>()),
            u64_of(size_of::<GpuInstance>()),
        ),
    )
}

/// The bytes of the library's values (or packed words).
fn value_bytes(lib: &crate::tables::library::LibraryTables) -> u64 {
    match lib.packed() {
        Some(p) => u64_of(p.words().len()) * 4,
        None => u64_of(lib.values().len()) * 4,
    }
}

/// The bytes of the decode heads' uniform copies: two regions of
/// `decode_head_rows` rows of 32 bytes (heads, then frames), or one of
/// zeros where there are none.
fn decode_heads_len(t: &crate::tables::sample::SampleTables) -> u64 {
    let regions = if t.decode_heads.is_empty() { 1 } else { 2 };
    regions * u64::from(t.decode_head_rows()) * 32
}

impl Plan {
    /// Whether `d` writes its binding `binding` (its stage table row's
    /// `writes`).
    #[must_use]
    pub(crate) fn writes(&self, d: &Dispatch, binding: u32) -> bool {
        d.row().writes.contains(&binding)
    }

    /// The contents of table `t`, as the executors upload it: a buffer's
    /// bytes (no more than its size; the rest is zeros), a texture's
    /// texels, word after word.
    #[must_use]
    pub(crate) fn table(&self, t: Table) -> Vec<u8> {
        let s = &self.sample_tables;
        let lib = &s.library;
        let bytes = |v: &[u8]| v.to_vec();
        match t {
            Table::KeyWindows => bytes(bytemuck::cast_slice(&s.texels)),
            Table::TrackSearch => lib
                .tracks()
                .iter()
                .flat_map(|t| track_search_texels(t).into_iter().flatten())
                .flat_map(u32::to_ne_bytes)
                .collect(),
            Table::ClipGroups => lib
                .clip_table()
                .iter()
                .flat_map(|c| clip_group_texels(c).into_iter().flatten())
                .flat_map(u32::to_ne_bytes)
                .collect(),
            Table::Values => values_table(s),
            Table::Clips => bytes(bytemuck::cast_slice(lib.clip_table())),
            Table::SampleRows => {
                let rows = lib.tracks().len().max(ROW_HEAD as usize);
                let mut out = vec![0u8; rows * size_of::<GpuSampleRow>()];
                let used: &[u8] = bytemuck::cast_slice(&s.rows);
                out[..used.len()].copy_from_slice(used);
                out
            }
            Table::DecodeHeads => decode_head_bytes(&s.decode_heads, s.decode_head_rows()),
            Table::Masks => {
                let masks = self.mixer.as_ref().map(|m| mask_table(&m.masks));
                bytes(bytemuck::cast_slice(&masks.unwrap_or_default()))
            }
            rig => self.rig_contents(rig),
        }
    }

    /// The contents of a rig table.
    fn rig_contents(&self, t: Table) -> Vec<u8> {
        let Some(r) = &self.skin_tables else {
            return Vec::new();
        };
        let bytes = |v: &[u8]| v.to_vec();
        let head = |v: &[u8], entry: usize| {
            let mut out = vec![0u8; UNIFORM_HEAD as usize * entry];
            let n = v.len().min(out.len());
            out[..n].copy_from_slice(&v[..n]);
            out
        };
        let identity = glam::Mat4::IDENTITY.to_cols_array();
        match t {
            Table::Nodes => bytes(bytemuck::cast_slice(r.nodes())),
            Table::Channels => bytes(bytemuck::cast_slice(r.channels())),
            Table::Meshes => bytes(bytemuck::cast_slice(r.meshes())),
            Table::DefaultWeights => bytes(bytemuck::cast_slice(r.default_weights())),
            Table::MorphChannels => bytes(bytemuck::cast_slice(r.morph_channels())),
            Table::Joints => bytes(bytemuck::cast_slice(r.joints())),
            Table::InverseBinds => bytes(bytemuck::cast_slice(r.inverse_binds())),
            Table::Head(HeadOf::Nodes) => {
                head(bytemuck::cast_slice(r.nodes()), size_of::<GpuNode>())
            }
            Table::Head(HeadOf::Channels) => head(bytemuck::cast_slice(r.channels()), 16),
            Table::Head(HeadOf::Joints) => {
                head(bytemuck::cast_slice(r.joints()), size_of::<GpuJoint>())
            }
            Table::Head(HeadOf::InverseBinds) => head(bytemuck::cast_slice(r.inverse_binds()), 64),
            Table::PointerChannels => bytes(bytemuck::cast_slice(r.pointer_channels())),
            Table::PointerTargets => bytes(bytemuck::cast_slice(r.pointer_targets())),
            Table::PointerRest => bytes(bytemuck::cast_slice(r.pointer_rest())),
            Table::Identity => bytes(bytemuck::cast_slice(&identity)),
            // Joint slot j of every instance: inverse bind j's last row
            // (0, 0, 0, 1 where they are all affine): the skin kernels
            // write only the first three rows of each matrix, or whole
            // columns with the last row the products give; the buffer
            // holds those rows from the start, so both leave the same
            // bits.
            Table::JointLastRows
                if r.inverse_binds_are_affine() || r.inverse_binds().is_empty() =>
            {
                bytes(bytemuck::cast_slice(&identity))
            }
            Table::JointLastRows => r
                .inverse_binds()
                .iter()
                .flat_map(|m| {
                    let mut out = identity;
                    for c in 0..4 {
                        out[4 * c + 3] = m[4 * c + 3];
                    }
                    out
                })
                .flat_map(f32::to_ne_bytes)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// The values buffer's contents: the library's values (or packed words)
/// in whole vec4s and one of zeros after them, with the clip-blocks
/// plan's interleaved runs written over their rows.
fn values_table(s: &crate::tables::sample::SampleTables) -> Vec<u8> {
    let flat = &s.library;
    let value_bytes: &[u8] = match flat.packed() {
        Some(p) => bytemuck::cast_slice(p.words()),
        None => bytemuck::cast_slice(flat.values()),
    };
    let mut out = vec![0u8; (value_bytes.len() as u64).div_ceil(16) as usize * 16 + 16];
    out[..value_bytes.len()].copy_from_slice(value_bytes);
    for run in &s.interleaved {
        run.write(value_bytes, |at, bytes| {
            if let Some(to) = out.get_mut(at..at + bytes.len()) {
                to.copy_from_slice(bytes);
            }
        });
    }
    out
}

/// The bytes of the clip-blocks plan's uniform copies of `heads`: a
/// region of `rows` rows of 32 bytes for the heads (meta word and
/// offsets), one for the frames; one region of zeros where there are no
/// heads, which both bindings take.
fn decode_head_bytes(heads: &[[[u32; 4]; 4]], rows: u32) -> Vec<u8> {
    let region = rows as usize * 32;
    let regions = if heads.is_empty() { 1 } else { 2 };
    let mut bytes = vec![0u8; regions * region];
    for (r, head) in heads.iter().enumerate().take(rows as usize) {
        let words: &[u8] = bytemuck::cast_slice(head);
        bytes[r * 32..r * 32 + 32].copy_from_slice(&words[..32]);
        bytes[region + r * 32..region + r * 32 + 32].copy_from_slice(&words[32..]);
    }
    bytes
}
