//! The materials of a glTF file as the viewer draws them: base colour
//! factor and texture (with `KHR_texture_transform`; or the diffuse of
//! `KHR_materials_pbrSpecularGlossiness`), alpha mode, double sidedness,
//! emissive factor and `KHR_materials_unlit`; and each texture's sampler
//! as a wgpu sampler (glTF's filters and wraps). Metallic-roughness,
//! normal, occlusion and emissive textures are not drawn: the lighting is
//! a simple diffuse one.

use gltf::json;
use json::material::AlphaMode;
use json::texture::{MagFilter, MinFilter, WrappingMode};
use json::validation::Checked;
use keyframe_gpu::gltf::Document;

/// How a material's alpha is used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Alpha {
    /// Ignored: drawn fully opaque.
    Opaque,
    /// Fragments with alpha below the cutoff are dropped, the rest opaque.
    Mask(f32),
    /// Blended over what is behind, after every opaque part.
    Blend,
}

/// A material's base colour texture.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseTexture {
    /// The image (index in the file).
    pub image: usize,
    /// The sampler (index in the file; `None`: the default, repeat and
    /// linear filtering with mipmaps).
    pub sampler: Option<usize>,
    /// The texture coordinate set.
    pub tex_coord: u32,
    /// `KHR_texture_transform` as two rows of an affine map:
    /// `uv' = (dot(rows[0], (u, v, 1)), dot(rows[1], (u, v, 1)))`.
    pub transform: [[f32; 3]; 2],
}

/// What the fragment shader needs of a material.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    /// `baseColorFactor` (linear RGBA).
    pub base_color: [f32; 4],
    /// `baseColorTexture`, when the file has one.
    pub texture: Option<BaseTexture>,
    /// `alphaMode` and `alphaCutoff`.
    pub alpha: Alpha,
    /// `doubleSided`: back faces are drawn (and lit from their side).
    pub double_sided: bool,
    /// `KHR_materials_unlit`: the base colour as it is, without lighting.
    pub unlit: bool,
    /// `emissiveFactor` (linear RGB).
    pub emissive: [f32; 3],
}

impl Default for Material {
    /// glTF's default material: white, opaque, single-sided, lit.
    fn default() -> Self {
        Material {
            base_color: [1.0; 4],
            texture: None,
            alpha: Alpha::Opaque,
            double_sided: false,
            unlit: false,
            emissive: [0.0; 3],
        }
    }
}

/// The identity texture transform.
const IDENTITY_UV: [[f32; 3]; 2] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]];

/// Reads every material of `doc`.
///
/// # Errors
/// A message naming the material: a texture or image index out of range,
/// or factors that are not finite.
pub fn read_materials(doc: &Document) -> Result<Vec<Material>, String> {
    doc.root
        .materials
        .iter()
        .enumerate()
        .map(|(i, m)| read_material(doc, m).map_err(|e| format!("material {i}: {e}")))
        .collect()
}

fn read_material(doc: &Document, m: &json::Material) -> Result<Material, String> {
    let pbr = &m.pbr_metallic_roughness;
    let mut base_color = pbr.base_color_factor.0;
    let mut info = pbr.base_color_texture.clone();
    let others = m.extensions.as_ref().map(|e| &e.others);
    // Older files give their colour as specular-glossiness's diffuse
    // (which the extension says to prefer when both are there).
    if let Some(sg) = others.and_then(|o| o.get("KHR_materials_pbrSpecularGlossiness")) {
        (base_color, info) = diffuse(sg)?;
    }
    // An emissive factor meant to be masked by an emissive texture (which
    // the viewer does not draw) would light the whole part: left out.
    let emissive = if m.emissive_texture.is_some() {
        [0.0; 3]
    } else {
        m.emissive_factor.0
    };
    if !base_color.iter().chain(&emissive).all(|x| x.is_finite()) {
        return Err("a colour factor is not finite".into());
    }
    let texture = match &info {
        Some(info) => Some(base_texture(doc, info)?),
        None => None,
    };
    let alpha = match m.alpha_mode {
        Checked::Valid(AlphaMode::Mask) => Alpha::Mask(m.alpha_cutoff.map_or(0.5, |c| c.0)),
        Checked::Valid(AlphaMode::Blend) => Alpha::Blend,
        _ => Alpha::Opaque,
    };
    Ok(Material {
        base_color,
        texture,
        alpha,
        double_sided: m.double_sided,
        unlit: others.is_some_and(|o| o.contains_key("KHR_materials_unlit")),
        emissive,
    })
}

/// `KHR_materials_pbrSpecularGlossiness`'s `diffuseFactor` (default
/// white) and `diffuseTexture`.
fn diffuse(ext: &serde_json::Value) -> Result<([f32; 4], Option<json::texture::Info>), String> {
    let factor = match ext.get("diffuseFactor") {
        None => [1.0; 4],
        Some(v) => serde_json::from_value::<[f32; 4]>(v.clone())
            .map_err(|e| format!("KHR_materials_pbrSpecularGlossiness.diffuseFactor: {e}"))?,
    };
    let texture = match ext.get("diffuseTexture") {
        None => None,
        Some(v) => Some(
            serde_json::from_value::<json::texture::Info>(v.clone())
                .map_err(|e| format!("KHR_materials_pbrSpecularGlossiness.diffuseTexture: {e}"))?,
        ),
    };
    Ok((factor, texture))
}

/// The texture of `info`, with its image, sampler, texture coordinate set
/// and transform checked.
fn base_texture(doc: &Document, info: &json::texture::Info) -> Result<BaseTexture, String> {
    let t = info.index.value();
    let texture = doc.root.textures.get(t).ok_or_else(|| {
        format!(
            "texture {t} is out of range ({} textures)",
            doc.root.textures.len()
        )
    })?;
    let image = texture.source.value();
    if image >= doc.root.images.len() {
        return Err(format!(
            "texture {t}: image {image} is out of range ({} images)",
            doc.root.images.len()
        ));
    }
    let sampler = texture.sampler.map(|s| s.value());
    if let Some(s) = sampler.filter(|&s| s >= doc.root.samplers.len()) {
        return Err(format!(
            "texture {t}: sampler {s} is out of range ({} samplers)",
            doc.root.samplers.len()
        ));
    }
    let mut tex_coord = info.tex_coord;
    let mut transform = IDENTITY_UV;
    let ext = info
        .extensions
        .as_ref()
        .and_then(|e| e.others.get("KHR_texture_transform"));
    if let Some(ext) = ext {
        transform = texture_transform(ext)?;
        if let Some(set) = ext.get("texCoord").and_then(serde_json::Value::as_u64) {
            tex_coord = set as u32;
        }
    }
    Ok(BaseTexture {
        image,
        sampler,
        tex_coord,
        transform,
    })
}

/// `KHR_texture_transform`'s `offset * rotation * scale` as affine rows:
/// the rotation turns the UVs counter-clockwise by `rotation` radians, as
/// the extension's example (the lower-left quadrant, turned) requires.
fn texture_transform(ext: &serde_json::Value) -> Result<[[f32; 3]; 2], String> {
    let pair = |key: &str, default: [f32; 2]| -> Result<[f32; 2], String> {
        match ext.get(key) {
            None => Ok(default),
            Some(v) => {
                let a: Vec<f32> = v
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_f64())
                            .map(|x| x as f32)
                            .collect()
                    })
                    .unwrap_or_default();
                match a[..] {
                    [x, y] if x.is_finite() && y.is_finite() => Ok([x, y]),
                    _ => Err(format!("KHR_texture_transform: bad {key} {v}")),
                }
            }
        }
    };
    let offset = pair("offset", [0.0, 0.0])?;
    let scale = pair("scale", [1.0, 1.0])?;
    let rotation = ext
        .get("rotation")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0) as f32;
    if !rotation.is_finite() {
        return Err("KHR_texture_transform: bad rotation".into());
    }
    let (s, c) = rotation.sin_cos();
    Ok([
        [c * scale[0], s * scale[1], offset[0]],
        [-s * scale[0], c * scale[1], offset[1]],
    ])
}

/// The wgpu sampler of glTF sampler `sampler` (`None`: repeat, linear,
/// linear between mipmaps). A minification filter without mipmaps samples
/// the top level only ([`Sampling::mipmaps`] false).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sampling {
    /// Magnification filter.
    pub mag: wgpu::FilterMode,
    /// Minification filter.
    pub min: wgpu::FilterMode,
    /// Filter between mipmap levels.
    pub mipmap: wgpu::MipmapFilterMode,
    /// Whether mipmap levels are sampled at all.
    pub mipmaps: bool,
    /// Wrap along u.
    pub wrap_u: wgpu::AddressMode,
    /// Wrap along v.
    pub wrap_v: wgpu::AddressMode,
}

/// A checked enum's value, `None` when absent or unknown.
fn valid<T: Copy>(c: Option<&Checked<T>>) -> Option<T> {
    match c {
        Some(Checked::Valid(v)) => Some(*v),
        _ => None,
    }
}

impl Sampling {
    /// glTF sampler `sampler` of `doc` (checked in range by
    /// [`read_materials`]); unknown enums count as absent.
    pub fn of(doc: &Document, sampler: Option<usize>) -> Sampling {
        use wgpu::{FilterMode as F, MipmapFilterMode as M};
        let s = sampler.and_then(|s| doc.root.samplers.get(s));
        let mag = match valid(s.and_then(|s| s.mag_filter.as_ref())) {
            Some(MagFilter::Nearest) => F::Nearest,
            _ => F::Linear,
        };
        let (min, mipmap, mipmaps) = match valid(s.and_then(|s| s.min_filter.as_ref())) {
            Some(MinFilter::Nearest) => (F::Nearest, M::Nearest, false),
            Some(MinFilter::Linear) => (F::Linear, M::Nearest, false),
            Some(MinFilter::NearestMipmapNearest) => (F::Nearest, M::Nearest, true),
            Some(MinFilter::LinearMipmapNearest) => (F::Linear, M::Nearest, true),
            Some(MinFilter::NearestMipmapLinear) => (F::Nearest, M::Linear, true),
            _ => (F::Linear, M::Linear, true),
        };
        let wrap = |w: Option<&Checked<WrappingMode>>| match valid(w) {
            Some(WrappingMode::ClampToEdge) => wgpu::AddressMode::ClampToEdge,
            Some(WrappingMode::MirroredRepeat) => wgpu::AddressMode::MirrorRepeat,
            _ => wgpu::AddressMode::Repeat,
        };
        Sampling {
            mag,
            min,
            mipmap,
            mipmaps,
            wrap_u: wrap(s.map(|s| &s.wrap_s)),
            wrap_v: wrap(s.map(|s| &s.wrap_t)),
        }
    }

    /// The sampler.
    pub fn create(&self, device: &wgpu::Device) -> wgpu::Sampler {
        device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("viewer.sampler"),
            address_mode_u: self.wrap_u,
            address_mode_v: self.wrap_v,
            address_mode_w: wgpu::AddressMode::ClampToEdge,
            mag_filter: self.mag,
            min_filter: self.min,
            mipmap_filter: self.mipmap,
            lod_min_clamp: 0.0,
            lod_max_clamp: if self.mipmaps { 32.0 } else { 0.0 },
            ..Default::default()
        })
    }
}
