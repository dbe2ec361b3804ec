//! [`Executor`]: the one GPU executor. It makes every resource a
//! [`Plan`] declares (its buffers and textures, uploading the tables it
//! names and filling the outputs it starts from), a pipeline per dispatch
//! and a bind group per dispatch part from the part's bindings by name,
//! writes what the host writes each frame from a [`HostFrame`], and
//! records the parts with the frame's grids. Nothing in it knows a stage:
//! a plan of any stages runs through the same code.
//!
//! Executors of the same library under the same sampler plan share the
//! library's tables ([`Table::is_library`]): the first uploads them, the
//! others (an animator's later chunks, a crowd's models bound to one
//! library) take the same buffers and textures.

use std::num::NonZeroU64;
use std::sync::Arc;

use super::key_textures::texture_with;
use super::{bind, buffer_filled, read_buffer, scoped, Health};
use crate::error::{Error, Result};
use crate::model::library::AnimationLibrary;
use crate::plan::frame::HostFrame;
use crate::plan::resources::{Resource, Shape, Source, Table, Usage, Window};
use crate::plan::{Plan, SamplerPlan};

/// A buffer or texture the executor made or took.
#[derive(Debug, Clone)]
enum Made {
    Buffer(wgpu::Buffer),
    Texture(wgpu::TextureView),
}

/// The library's tables on the device, shared by the executors of that
/// library under one sampler plan.
#[derive(Debug)]
struct LibraryUpload {
    library: AnimationLibrary,
    sampler: SamplerPlan,
    tables: Vec<(Table, Made)>,
}

/// A plan's resources, pipelines and bind groups on a device.
#[derive(Debug)]
pub(crate) struct Executor {
    health: Health,
    /// The plan's resources, by id.
    made: Vec<Made>,
    upload: Arc<LibraryUpload>,
    /// The buffers the host writes each frame, with what it writes.
    frame_writes: Vec<(crate::plan::resources::FrameSource, wgpu::Buffer)>,
    /// Every dispatch part, in recording order.
    parts: Vec<(wgpu::ComputePipeline, wgpu::BindGroup)>,
}

/// `u`'s wgpu usages.
fn usages(u: Usage) -> wgpu::BufferUsages {
    use wgpu::BufferUsages as U;
    let mut out = U::empty();
    for (on, flag) in [
        (u.storage, U::STORAGE),
        (u.uniform, U::UNIFORM),
        (u.copy_src, U::COPY_SRC),
        (u.copy_dst, U::COPY_DST),
    ] {
        if on {
            out |= flag;
        }
    }
    out
}

impl Executor {
    /// Makes `plan`'s resources, pipelines and bind groups on `device`,
    /// taking `share`'s upload of the library where it is the same library
    /// under the same sampler plan, else uploading it with `queue`.
    ///
    /// # Errors
    /// [`Error::Gpu`] (the upload cannot be shared and there is no queue;
    /// wgpu's errors), [`Error::OutOfMemory`], [`Error::DeviceLost`].
    pub(crate) fn new(
        device: &wgpu::Device,
        queue: Option<&wgpu::Queue>,
        plan: &Plan,
        share: Option<&Executor>,
    ) -> Result<Executor> {
        let share = share.filter(|s| s.can_share(plan));
        let health = share.map_or_else(|| Health::of(device), |s| s.health.clone());
        health.check("Animator::new")?;
        let upload = match (share, queue) {
            (Some(s), _) => Arc::clone(&s.upload),
            (None, Some(queue)) => Arc::new(LibraryUpload::new(device, queue, plan)?),
            (None, None) => {
                return Err(Error::Gpu {
                    during: "Animator (a chunk sharing another's upload)",
                    message: "the upload cannot be shared (another library or sampler plan)".into(),
                })
            }
        };
        let made = scoped(device, "Animator::new (resources)", || {
            plan.resources
                .all()
                .iter()
                .map(|r| own(device, plan, r, &upload))
                .collect::<Result<Vec<Made>>>()
        })??;
        let parts = scoped(device, "Animator::new (pipelines)", || {
            Self::pipelines(device, plan, &made)
        })??;
        let frame_writes = plan
            .resources
            .all()
            .iter()
            .zip(&made)
            .filter_map(|(r, m)| match (r.source, m) {
                (Source::Frame(s), Made::Buffer(b)) => Some((s, b.clone())),
                _ => None,
            })
            .collect();
        Ok(Executor {
            health,
            made,
            upload,
            frame_writes,
            parts,
        })
    }

    /// A pipeline per dispatch (one shader module per module the plan
    /// uses) and a bind group per part, from its bindings by name.
    fn pipelines(
        device: &wgpu::Device,
        plan: &Plan,
        made: &[Made],
    ) -> Result<Vec<(wgpu::ComputePipeline, wgpu::BindGroup)>> {
        let wide = plan.wide_accesses && device.features().contains(wgpu::Features::SHADER_INT64);
        let mut modules: Vec<(crate::plan::passes::Module, wgpu::ShaderModule)> = Vec::new();
        let mut out = Vec::new();
        for d in &plan.dispatches {
            let row = d.row();
            if !modules.iter().any(|(m, _)| *m == d.module) {
                let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
                    label: Some(d.module.label()),
                    source: wgpu::ShaderSource::Wgsl(d.module.wgsl(wide).into()),
                });
                modules.push((d.module, module));
            }
            let module = modules
                .iter()
                .find(|(m, _)| *m == d.module)
                .map(|(_, module)| module)
                .ok_or_else(|| Error::Gpu {
                    during: "Animator::new (pipelines)",
                    message: format!("no shader module for {}", d.entry_point),
                })?;
            let layout = bind::layout(device, d.entry_point, d.module.bindings(), row.bindings)?;
            let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(d.entry_point),
                bind_group_layouts: &[Some(&layout)],
                immediate_size: 0,
            });
            let constants = d.overrides.constants(d.module);
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(d.entry_point),
                layout: Some(&pipeline_layout),
                module,
                entry_point: Some(d.entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &constants,
                    ..Default::default()
                },
                cache: None,
            });
            for part in &d.parts {
                let resources = part
                    .binds
                    .iter()
                    .map(|b| {
                        let resource = made.get(b.resource.0).ok_or_else(|| Error::Gpu {
                            during: "Animator::new (pipelines)",
                            message: format!(
                                "{}: binding {} names no resource",
                                d.entry_point, b.binding
                            ),
                        })?;
                        Ok((b.binding, binding(resource, b.window)))
                    })
                    .collect::<Result<Vec<_>>>()?;
                let group = bind::group(device, d.entry_point, &layout, row.bindings, &resources)?;
                out.push((pipeline.clone(), group));
            }
        }
        Ok(out)
    }

    /// Whether an executor of `plan` can take this one's upload: the same
    /// library under the same sampler plan.
    pub(crate) fn can_share(&self, plan: &Plan) -> bool {
        self.upload.library.same_data(&plan.library) && self.upload.sampler == plan.sampler
    }

    /// The identity of the library's upload: equal for executors that
    /// share one.
    pub(crate) fn upload_id(&self) -> usize {
        Arc::as_ptr(&self.upload) as usize
    }

    /// The device's health.
    pub(crate) fn health(&self) -> &Health {
        &self.health
    }

    /// Writes what the host writes this frame (each buffer whose bytes
    /// are not empty), without the device check.
    pub(crate) fn write_frame(&self, queue: &wgpu::Queue, frame: &HostFrame) {
        for (source, buffer) in &self.frame_writes {
            let bytes = frame.bytes(*source);
            if !bytes.is_empty() {
                queue.write_buffer(buffer, 0, bytes);
            }
        }
    }

    /// Records every dispatch part with `frame`'s grid into a compute pass
    /// the caller owns (none without work, nothing once the device is
    /// known lost).
    pub(crate) fn record(&self, pass: &mut wgpu::ComputePass<'_>, frame: &HostFrame) {
        self.record_range(pass, frame, 0..usize::MAX);
    }

    /// [`record`](Self::record), the parts of `range` only (in recording
    /// order).
    pub(crate) fn record_range(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        frame: &HostFrame,
        range: std::ops::Range<usize>,
    ) {
        if self.health.is_lost() {
            return;
        }
        let parts = self.parts.iter().enumerate();
        for (k, (pipeline, group)) in parts.skip(range.start).take(range.end - range.start) {
            let (x, y, z) = frame.grid(k);
            if x == 0 || y == 0 || z == 0 {
                continue;
            }
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, group, &[]);
            pass.dispatch_workgroups(x, y, z);
        }
    }

    /// The buffer of the plan's resource named `name`.
    pub(crate) fn buffer(&self, plan: &Plan, name: &str) -> Option<&wgpu::Buffer> {
        match self.made.get(plan.resources.find(name)?.0)? {
            Made::Buffer(b) => Some(b),
            Made::Texture(_) => None,
        }
    }

    /// Reads back the first `bytes` of the resource named `name` (blocking),
    /// as floats; empty for none or a resource the plan lacks.
    ///
    /// # Errors
    /// [`Error::DeviceLost`], [`Error::Readback`], [`Error::Gpu`].
    pub(crate) fn read(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        plan: &Plan,
        name: &str,
        bytes: u64,
    ) -> Result<Vec<f32>> {
        self.health.check("Animator::read_back")?;
        match self.buffer(plan, name) {
            Some(buffer) if bytes > 0 => read_buffer(&self.health, device, queue, buffer, bytes),
            _ => Ok(Vec::new()),
        }
    }
}

/// The binding resource of `made`, whole or the window `w`.
fn binding(made: &Made, w: Option<Window>) -> wgpu::BindingResource<'_> {
    match (made, w) {
        (Made::Texture(view), _) => wgpu::BindingResource::TextureView(view),
        (Made::Buffer(b), None) => b.as_entire_binding(),
        (Made::Buffer(b), Some(w)) => wgpu::BindingResource::Buffer(wgpu::BufferBinding {
            buffer: b,
            offset: w.offset,
            size: NonZeroU64::new(w.size),
        }),
    }
}

/// Resource `r` of `plan`: the library's tables from `upload`, the others
/// made here (call inside an error scope).
fn own(device: &wgpu::Device, plan: &Plan, r: &Resource, upload: &LibraryUpload) -> Result<Made> {
    if let Source::Table(t) = r.source {
        if t.is_library() {
            return upload
                .tables
                .iter()
                .find(|(u, _)| *u == t)
                .map(|(_, m)| m.clone())
                .ok_or_else(|| Error::Gpu {
                    during: "Animator::new (resources)",
                    message: format!("{}: not in the library's upload", r.name),
                });
        }
    }
    let Shape::Buffer(size) = r.shape else {
        return Err(Error::Gpu {
            during: "Animator::new (resources)",
            message: format!("{}: a texture that is not the library's", r.name),
        });
    };
    let bytes = size.at(&plan.counts(plan.capacity));
    let usage = usages(r.usage);
    let buffer = match r.source {
        Source::Table(t) => filled(device, r.name, bytes, usage, &plan.table(t), false)?,
        Source::Pass { init: Some(t), .. } => {
            filled(device, r.name, bytes, usage, &plan.table(t), true)?
        }
        Source::Frame(_) | Source::Pass { init: None, .. } => {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(r.name),
                size: bytes,
                usage,
                mapped_at_creation: false,
            })
        }
    };
    Ok(Made::Buffer(buffer))
}

/// A buffer of `size` bytes holding `contents` (repeated over the whole
/// buffer where `repeat`), zeros after it.
fn filled(
    device: &wgpu::Device,
    label: &'static str,
    size: u64,
    usage: wgpu::BufferUsages,
    contents: &[u8],
    repeat: bool,
) -> Result<wgpu::Buffer> {
    if contents.len() as u64 > size {
        return Err(Error::Gpu {
            during: label,
            message: format!(
                "{} bytes of contents for a buffer of {size}",
                contents.len()
            ),
        });
    }
    buffer_filled(device, label, size, usage, |view| {
        let len = view.len();
        if contents.is_empty() {
            return;
        }
        let step = if repeat { contents.len() } else { len.max(1) };
        for at in (0..len).step_by(step) {
            let n = contents.len().min(len - at);
            view.slice(at..at + n).copy_from_slice(&contents[..n]);
        }
    })
}

impl LibraryUpload {
    /// Uploads `plan`'s library tables: every texture created (and its
    /// allocation checked) before any is written, then the buffers.
    fn new(device: &wgpu::Device, queue: &wgpu::Queue, plan: &Plan) -> Result<LibraryUpload> {
        let library: Vec<&Resource> = plan
            .resources
            .all()
            .iter()
            .filter(|r| matches!(r.source, Source::Table(t) if t.is_library()))
            .collect();
        let textures = scoped(device, "Animator::new (upload)", || {
            library
                .iter()
                .filter_map(|r| match (r.source, r.shape) {
                    (
                        Source::Table(t),
                        Shape::Texture {
                            words,
                            texels,
                            row_shift,
                        },
                    ) => Some((t, texture_with(device, r.name, words, texels, row_shift))),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })?;
        let counts = plan.counts(plan.capacity);
        let tables = scoped(device, "Animator::new (upload)", || {
            let mut tables = Vec::with_capacity(library.len());
            for r in &library {
                let Source::Table(t) = r.source else { continue };
                let made = match r.shape {
                    Shape::Texture { words, .. } => {
                        let texture = textures.iter().find(|(u, _)| *u == t).map(|(_, x)| x);
                        let Some(texture) = texture else { continue };
                        Made::Texture(super::key_textures::fill(
                            queue,
                            texture,
                            &plan.table(t),
                            words,
                        ))
                    }
                    Shape::Buffer(size) => Made::Buffer(filled(
                        device,
                        r.name,
                        size.at(&counts),
                        usages(r.usage),
                        &plan.table(t),
                        false,
                    )?),
                };
                tables.push((t, made));
            }
            Ok::<_, Error>(tables)
        })??;
        Ok(LibraryUpload {
            library: plan.library.clone(),
            sampler: plan.sampler,
            tables,
        })
    }
}
