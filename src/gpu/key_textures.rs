//! The key search's data in 2D textures: the search texels (key times and
//! bucket tables) and one search descriptor per track row.
//!
//! Why textures and not storage buffers: the search reads a few scattered
//! words per invocation (the track's search fields, then a search texel or
//! a few), each depending on the one before. On a real GPU either path
//! goes through a cache. On the CPU adapters (lavapipe, llvmpipe) a
//! storage-buffer load is a loop over the SIMD lanes with a branch and a
//! store-to-stack per lane, while a `textureLoad` is one vector gather, so
//! the search's chain of dependent loads costs a fraction of what it costs
//! from storage. Values and outputs stay in storage buffers.
//!
//! The key times are stored as search texels `[p, t_p, t_(p+1), t_(p+2)]`,
//! one `Rgba32Uint` texel per key (and per bucket of a bucket table): one
//! read decides between two keys and holds the segment's key times, where
//! separate lookup entries and key times took three dependent reads. It
//! costs 16 bytes per key time (48 with a bucket table) where the two
//! tables took 12.
//!
//! Element `i` of a table is texel `(i & (w - 1), i >> s)` of a texture
//! `w = 2^s` texels wide ([`KEY_TEXTURE_ROW_SHIFT`], or less on a device
//! whose `max_texture_dimension_2d` is smaller); rows past the data are
//! padded with zeros and never read.

use crate::error::{Error, Result};
use crate::layout::KEY_TEXTURE_ROW_SHIFT;
use crate::tables::key_lookup::{clip_group_texels, track_search_texels};
use crate::tables::library::LibraryTables;

use super::scoped;

/// The sampler's three tables in textures, uploaded once per library: the
/// key search's texels, the track rows and the clips' track groups.
///
/// The sampling pass builds its own; build one yourself only
/// to bind `shaders/sample.wgsl` in a pipeline of your own (bindings 0, 7
/// and 8 of `SAMPLE_BINDINGS`, override
/// `ROW_SHIFT` = [`row_shift`](Self::row_shift) and, for `sample_main`,
/// `GROUP_ROWS` = the dispatch's tracks per instance).
#[derive(Debug)]
pub struct KeyTextures {
    key_windows: wgpu::TextureView,
    track_search: wgpu::TextureView,
    clip_groups: wgpu::TextureView,
    row_shift: u32,
}

impl KeyTextures {
    /// Creates and fills the textures of `library`'s search texels
    /// (`LibraryTables::key_windows`, `Rgba32Uint`), track rows
    /// (`Rgba32Uint`, `track_search_texels`) and clip groups (`Rg32Uint`,
    /// `clip_group_texels`).
    ///
    /// # Errors
    /// [`Error::TextureRowsExceeded`] when a table needs more rows than the
    /// device's `max_texture_dimension_2d`; [`Error::Gpu`] when wgpu reports
    /// an error.
    pub fn new(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &LibraryTables,
    ) -> Result<Self> {
        Self::with_texels(device, queue, library, library.key_windows())
    }

    /// [`new`](Self::new), with `texels` as the key search texture's
    /// contents: the library's ([`LibraryTables::key_windows`](crate::tables::library::LibraryTables::key_windows)) and
    /// after them the clip-blocks plan's run keys and key texel copies
    /// (`crate::tables::run_keys`).
    pub(crate) fn with_texels(
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        library: &LibraryTables,
        texels: Vec<[u32; 4]>,
    ) -> Result<Self> {
        let max_dim = device.limits().max_texture_dimension_2d.max(1);
        let row_shift = KEY_TEXTURE_ROW_SHIFT.min(max_dim.ilog2());
        let windows: &[u32] = bytemuck::cast_slice(&texels);
        let search: Vec<u32> = library
            .tracks()
            .iter()
            .flat_map(|t| track_search_texels(t).into_iter().flatten())
            .collect();
        let groups: Vec<u32> = library
            .clip_table()
            .iter()
            .flat_map(|c| clip_group_texels(c).into_iter().flatten())
            .collect();
        let windows_rows = texture_rows("key search table", windows, 4, row_shift, max_dim)?;
        let search_rows = texture_rows("track search table", &search, 4, row_shift, max_dim)?;
        let group_rows = texture_rows("clip group table", &groups, 2, row_shift, max_dim)?;
        let upload = Upload {
            device,
            queue,
            width: 1u32 << row_shift,
        };
        // Every texture is created, and its allocation checked, before any
        // is written: a device out of memory gets no write.
        let (key_windows, track_search, clip_groups) = scoped(device, "KeyTextures::new", || {
            (
                upload.create(
                    "keyframe-gpu.key_windows",
                    windows_rows,
                    wgpu::TextureFormat::Rgba32Uint,
                ),
                upload.create(
                    "keyframe-gpu.track_search",
                    search_rows,
                    wgpu::TextureFormat::Rgba32Uint,
                ),
                upload.create(
                    "keyframe-gpu.clip_groups",
                    group_rows,
                    wgpu::TextureFormat::Rg32Uint,
                ),
            )
        })?;
        scoped(device, "KeyTextures::new (upload)", || KeyTextures {
            key_windows: upload.fill(&key_windows, windows, 4),
            track_search: upload.fill(&track_search, &search, 4),
            clip_groups: upload.fill(&clip_groups, &groups, 2),
            row_shift,
        })
    }

    /// Search texels, binding 0 (`key_windows`).
    #[must_use]
    pub(crate) fn key_windows(&self) -> &wgpu::TextureView {
        &self.key_windows
    }

    /// Track rows, two texels each, binding 8 (`track_search`).
    #[must_use]
    pub fn track_search(&self) -> &wgpu::TextureView {
        &self.track_search
    }

    /// Clip track groups, binding 7 (`clip_groups`).
    #[must_use]
    pub fn clip_groups(&self) -> &wgpu::TextureView {
        &self.clip_groups
    }

    /// `log2` of the textures' width: the value of the shader's override
    /// `ROW_SHIFT`.
    #[must_use]
    pub fn row_shift(&self) -> u32 {
        self.row_shift
    }
}

/// The rows (at least 1) of a texture `2^row_shift` texels wide that holds
/// `data`, `texel_words` words a texel; fails past `max_dim` rows.
fn texture_rows(
    what: &'static str,
    data: &[u32],
    texel_words: u32,
    row_shift: u32,
    max_dim: u32,
) -> Result<u32> {
    let width = 1u64 << row_shift;
    let texels = data.len() as u64 / u64::from(texel_words);
    let rows = texels.div_ceil(width).max(1);
    if rows > u64::from(max_dim) {
        return Err(Error::TextureRowsExceeded {
            what,
            rows,
            width: 1 << row_shift,
            limit: max_dim,
        });
    }
    Ok(rows as u32)
}

/// Creates the key search textures, `width` texels wide, and writes their
/// contents.
struct Upload<'a> {
    device: &'a wgpu::Device,
    queue: &'a wgpu::Queue,
    width: u32,
}

impl Upload<'_> {
    /// A texture of `rows` rows, to be filled by [`fill`](Self::fill).
    fn create(&self, label: &'static str, rows: u32, format: wgpu::TextureFormat) -> wgpu::Texture {
        self.device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: wgpu::Extent3d {
                width: self.width,
                height: rows,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        })
    }

    /// Writes `data` (`texel_words` words a texel) into `texture`, its
    /// last row padded with zeros, and returns its view.
    fn fill(&self, texture: &wgpu::Texture, data: &[u32], texel_words: u32) -> wgpu::TextureView {
        let row_words = (self.width * texel_words) as usize;
        // Whole rows first, then the last partial row padded.
        let full = data.len() / row_words;
        if full > 0 {
            let whole = bytemuck::cast_slice(&data[..full * row_words]);
            self.write(texture, texel_words, 0, whole, full as u32);
        }
        let rest = &data[full * row_words..];
        if !rest.is_empty() {
            let mut last = vec![0u32; row_words];
            last[..rest.len()].copy_from_slice(rest);
            self.write(texture, texel_words, full, bytemuck::cast_slice(&last), 1);
        }
        texture.create_view(&wgpu::TextureViewDescriptor::default())
    }

    /// Writes `height` whole rows of `bytes` into `texture` from row `row`.
    fn write(
        &self,
        texture: &wgpu::Texture,
        texel_words: u32,
        row: usize,
        bytes: &[u8],
        height: u32,
    ) {
        self.queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: 0,
                origin: wgpu::Origin3d {
                    x: 0,
                    y: row as u32,
                    z: 0,
                },
                aspect: wgpu::TextureAspect::All,
            },
            bytes,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(self.width * texel_words * 4),
                rows_per_image: Some(height),
            },
            wgpu::Extent3d {
                width: self.width,
                height,
                depth_or_array_layers: 1,
            },
        );
    }
}
