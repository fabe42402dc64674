//! The GPU resources of the renderer: render targets, growing buffers, pipelines.

use crate::RenderConfig;
use crate::mesh::{Instance, Vertex};

pub const COLOUR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
/// Depth as the bits of an f32: R32Float is not renderable on GL, R32Uint is everywhere.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Uint;
pub const ZBUFFER_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Grows-only GPU buffer.
pub struct Growing {
    pub buffer: wgpu::Buffer,
    usage: wgpu::BufferUsages,
    label: &'static str,
}

impl Growing {
    pub fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages) -> Self {
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: 256,
            usage,
            mapped_at_creation: false,
        });
        Self {
            buffer,
            usage,
            label,
        }
    }

    /// Makes room for `size` bytes; true when the buffer was replaced.
    pub fn reserve(&mut self, device: &wgpu::Device, size: u64) -> bool {
        if size <= self.buffer.size() {
            return false;
        }
        self.buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(self.label),
            size: size.next_power_of_two(),
            usage: self.usage,
            mapped_at_creation: false,
        });
        true
    }
}

/// The render targets of up to `layers` envs at a time.
pub struct Targets {
    pub layers: u32,
    pub colour: wgpu::Texture,
    pub depth: wgpu::Texture,
    pub colour_views: Vec<wgpu::TextureView>,
    pub depth_views: Vec<wgpu::TextureView>,
    pub zbuffer: wgpu::TextureView,
}

impl Targets {
    pub fn new(device: &wgpu::Device, config: &RenderConfig, layers: u32) -> Self {
        let texture = |label, format, layers, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width: config.width,
                    height: config.height,
                    depth_or_array_layers: layers,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        let target = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC;
        let colour = texture("colour", COLOUR_FORMAT, layers, target);
        let depth = texture("depth", DEPTH_FORMAT, layers, target);
        let zbuffer = texture(
            "zbuffer",
            ZBUFFER_FORMAT,
            1,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let layer_views = |t: &wgpu::Texture| {
            (0..layers)
                .map(|layer| {
                    t.create_view(&wgpu::TextureViewDescriptor {
                        dimension: Some(wgpu::TextureViewDimension::D2),
                        base_array_layer: layer,
                        array_layer_count: Some(1),
                        ..Default::default()
                    })
                })
                .collect()
        };
        Self {
            layers,
            colour_views: layer_views(&colour),
            depth_views: layer_views(&depth),
            zbuffer: zbuffer.create_view(&Default::default()),
            colour,
            depth,
        }
    }
}

/// The opaque or the translucent (alpha-blended, no depth writes) scene pipeline.
pub fn create_pipeline(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    translucent: bool,
) -> wgpu::RenderPipeline {
    let vertex_attributes =
        wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x2];
    let instance_attributes = wgpu::vertex_attr_array![
        3 => Float32x4, 4 => Float32x4, 5 => Float32x4, 6 => Float32x4,
        7 => Float32x4, 8 => Float32x4, 9 => Float32x4, 10 => Float32x4, 11 => Uint32x4
    ];
    let colour = wgpu::ColorTargetState {
        format: COLOUR_FORMAT,
        blend: translucent.then_some(wgpu::BlendState::ALPHA_BLENDING),
        write_mask: wgpu::ColorWrites::ALL,
    };
    // Translucent markers do not hide what is behind them from the depth image.
    let depth = wgpu::ColorTargetState {
        format: DEPTH_FORMAT,
        blend: None,
        write_mask: if translucent {
            wgpu::ColorWrites::empty()
        } else {
            wgpu::ColorWrites::ALL
        },
    };
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(if translucent { "translucent" } else { "opaque" }),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some("vs_main"),
            compilation_options: Default::default(),
            buffers: &[
                wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<Vertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &vertex_attributes,
                },
                wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<Instance>() as u64,
                    step_mode: wgpu::VertexStepMode::Instance,
                    attributes: &instance_attributes,
                },
            ],
        },
        primitive: wgpu::PrimitiveState::default(),
        depth_stencil: Some(wgpu::DepthStencilState {
            format: ZBUFFER_FORMAT,
            depth_write_enabled: Some(!translucent),
            depth_compare: Some(wgpu::CompareFunction::Less),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some("fs_main"),
            compilation_options: Default::default(),
            targets: &[Some(colour), Some(depth)],
        }),
        multiview_mask: None,
        cache: None,
    })
}
