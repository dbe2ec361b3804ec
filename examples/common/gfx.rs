//! Render-target plumbing shared by the examples that draw (`skinning`,
//! `viewer`): a 2D texture of one mip level, a render pass that clears
//! its colour and depth targets, and the camera's view and projection
//! matrices. Included by path: Cargo has no
//! library target for examples.

/// A 2D texture of `size` (width, height), one mip level and one sample,
/// in `format`, for `usage`.
pub fn texture_2d(
    device: &wgpu::Device,
    label: &str,
    (width, height): (u32, u32),
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}

/// Begins a render pass labelled `label` that clears `color` to `clear`
/// (red, green, blue, as the target stores them) and `depth` to 1.
pub fn clear_pass<'e>(
    encoder: &'e mut wgpu::CommandEncoder,
    label: &str,
    color: &wgpu::TextureView,
    depth: &wgpu::TextureView,
    clear: [f64; 3],
) -> wgpu::RenderPass<'e> {
    encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
        label: Some(label),
        color_attachments: &[Some(wgpu::RenderPassColorAttachment {
            view: color,
            depth_slice: None,
            resolve_target: None,
            ops: wgpu::Operations {
                load: wgpu::LoadOp::Clear(wgpu::Color {
                    r: clear[0],
                    g: clear[1],
                    b: clear[2],
                    a: 1.0,
                }),
                store: wgpu::StoreOp::Store,
            },
        })],
        depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
            view: depth,
            depth_ops: Some(wgpu::Operations {
                load: wgpu::LoadOp::Clear(1.0),
                store: wgpu::StoreOp::Store,
            }),
            stencil_ops: None,
        }),
        timestamp_writes: None,
        occlusion_query_set: None,
        multiview_mask: None,
    })
}

/// A right-handed view matrix looking from `eye` at `centre`.
pub fn look_at(eye: glam::Vec3, centre: glam::Vec3, up: glam::Vec3) -> glam::Mat4 {
    let f = (centre - eye).normalize();
    let s = f.cross(up).normalize();
    let u = s.cross(f);
    glam::Mat4::from_cols(
        glam::Vec4::new(s.x, u.x, -f.x, 0.0),
        glam::Vec4::new(s.y, u.y, -f.y, 0.0),
        glam::Vec4::new(s.z, u.z, -f.z, 0.0),
        glam::Vec4::new(-s.dot(eye), -u.dot(eye), f.dot(eye), 1.0),
    )
}

/// A right-handed perspective projection to wgpu's clip space (depth 0..1).
pub fn perspective(fov_y: f32, aspect: f32, near: f32, far: f32) -> glam::Mat4 {
    let h = 1.0 / (0.5 * fov_y).tan();
    let r = far / (near - far);
    glam::Mat4::from_cols(
        glam::Vec4::new(h / aspect, 0.0, 0.0, 0.0),
        glam::Vec4::new(0.0, h, 0.0, 0.0),
        glam::Vec4::new(0.0, 0.0, r, -1.0),
        glam::Vec4::new(0.0, 0.0, r * near, 0.0),
    )
}
