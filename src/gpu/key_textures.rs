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

/// Two of the sampler's tables in textures: the track rows and the clips'
/// track groups, for a kernel of one's own that reads them as the sampler
/// does (the bench's floors).
///
/// The sampling pass makes its own as its plan declares them (with the
/// key search's texels); build one yourself only to bind them in a
/// pipeline of your own (bindings 7 and 8 of `SAMPLE_BINDINGS`, override
/// `ROW_SHIFT` = [`row_shift`](Self::row_shift)).
#[derive(Debug)]
pub struct KeyTextures {
    track_search: wgpu::TextureView,
    clip_groups: wgpu::TextureView,
    row_shift: u32,
}

impl KeyTextures {
    /// Creates and fills the textures of `library`'s track rows
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
        let max_dim = device.limits().max_texture_dimension_2d.max(1);
        let row_shift = KEY_TEXTURE_ROW_SHIFT.min(max_dim.ilog2());
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
        let tables = [
            ("track search table", &search, 4),
            ("clip group table", &groups, 2),
        ];
        for (what, data, words) in tables {
            texture_rows(what, data, words, row_shift, max_dim)?;
        }
        // Every texture is created, and its allocation checked, before any
        // is written: a device out of memory gets no write.
        let made = scoped(device, "KeyTextures::new", || {
            tables.map(|(what, data, words)| {
                let texels = data.len() as u64 / u64::from(words);
                texture_with(device, what, words, texels, row_shift)
            })
        })?;
        let [track_search, clip_groups] = made;
        scoped(device, "KeyTextures::new (upload)", || KeyTextures {
            track_search: fill(queue, &track_search, bytemuck::cast_slice(&search), 4),
            clip_groups: fill(queue, &clip_groups, bytemuck::cast_slice(&groups), 2),
            row_shift,
        })
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

/// A texture of `texels` texels of `words` 32-bit words (`Rgba32Uint`
/// for 4, `Rg32Uint` for 2), `2^row_shift` texels a row, to be filled by
/// [`fill`].
pub(crate) fn texture_with(
    device: &wgpu::Device,
    label: &'static str,
    words: u32,
    texels: u64,
    row_shift: u32,
) -> wgpu::Texture {
    let width = 1u32 << row_shift;
    let rows = texels.div_ceil(u64::from(width)).max(1);
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height: u32::try_from(rows).unwrap_or(u32::MAX),
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: if words == 2 {
            wgpu::TextureFormat::Rg32Uint
        } else {
            wgpu::TextureFormat::Rgba32Uint
        },
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    })
}

/// Writes `bytes` (`words` words a texel) into `texture`, its last row
/// padded with zeros, and returns its view.
pub(crate) fn fill(
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
    bytes: &[u8],
    words: u32,
) -> wgpu::TextureView {
    let width = texture.width();
    let row_bytes = (width * words * 4) as usize;
    // Whole rows first, then the last partial row padded.
    let full = bytes.len() / row_bytes;
    if full > 0 {
        write(
            queue,
            texture,
            row_bytes,
            0,
            &bytes[..full * row_bytes],
            full as u32,
        );
    }
    let rest = &bytes[full * row_bytes..];
    if !rest.is_empty() {
        let mut last = vec![0u8; row_bytes];
        last[..rest.len()].copy_from_slice(rest);
        write(queue, texture, row_bytes, full, &last, 1);
    }
    texture.create_view(&wgpu::TextureViewDescriptor::default())
}

/// Writes `height` whole rows of `row_bytes` bytes of `bytes` into
/// `texture` from row `row`.
fn write(
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
    row_bytes: usize,
    row: usize,
    bytes: &[u8],
    height: u32,
) {
    queue.write_texture(
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
            bytes_per_row: Some(row_bytes as u32),
            rows_per_image: Some(height),
        },
        wgpu::Extent3d {
            width: texture.width(),
            height,
            depth_or_array_layers: 1,
        },
    );
}
