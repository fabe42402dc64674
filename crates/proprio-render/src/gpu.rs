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

/// Longest side of a target layer, texels.
const MAX_SIDE: u32 = 2048;

/// Where each env's image is drawn: env `e` always gets the same tile, so its
/// image never depends on the batch it is rendered in; one render pass draws a
/// whole layer of tiles (a pass per env costs lavapipe a tile set-up each).
#[derive(Debug, Clone, Copy)]
pub struct Tiling {
    /// Tile size, texels.
    pub width: u32,
    pub height: u32,
    /// Tiles across and down one layer.
    pub columns: u32,
    pub rows: u32,
}

impl Tiling {
    pub fn new(config: &RenderConfig, max_side: u32) -> Self {
        let side = max_side.min(MAX_SIDE);
        Self {
            width: config.width,
            height: config.height,
            columns: (side / config.width).max(1),
            rows: (side / config.height).max(1),
        }
    }

    /// The tile of env `env`: its top-left texel and its layer.
    pub fn place(&self, env: usize) -> (u32, u32, u32) {
        let per_layer = (self.columns * self.rows) as usize;
        let (layer, tile) = (env / per_layer, (env % per_layer) as u32);
        (
            tile % self.columns * self.width,
            tile / self.columns * self.height,
            layer as u32,
        )
    }

    /// Tiles across and down, and layers, that envs `0..=last_env` need.
    pub fn extent(&self, last_env: usize) -> (u32, u32, u32) {
        let (_, _, layer) = self.place(last_env);
        let tiles = last_env as u32 + 1;
        if layer > 0 {
            (self.columns, self.rows, layer + 1)
        } else {
            (tiles.min(self.columns), tiles.div_ceil(self.columns), 1)
        }
    }
}

/// Texture arrays of tiles: colour, depth bits and one z-buffer layer.
pub struct Targets {
    /// Tiles across and down, and layers.
    pub extent: (u32, u32, u32),
    pub colour: wgpu::Texture,
    pub depth: wgpu::Texture,
    pub colour_views: Vec<wgpu::TextureView>,
    pub depth_views: Vec<wgpu::TextureView>,
    pub zbuffer: wgpu::TextureView,
}

impl Targets {
    pub fn new(device: &wgpu::Device, tiling: &Tiling, extent: (u32, u32, u32)) -> Self {
        let (columns, rows, layers) = extent;
        let texture = |label, format, layers, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width: columns * tiling.width,
                    height: rows * tiling.height,
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
            extent,
            colour_views: layer_views(&colour),
            depth_views: layer_views(&depth),
            zbuffer: zbuffer.create_view(&Default::default()),
            colour,
            depth,
        }
    }

    /// Whether these targets hold every tile of `extent`.
    pub fn covers(&self, extent: (u32, u32, u32)) -> bool {
        self.extent.0 >= extent.0 && self.extent.1 >= extent.1 && self.extent.2 >= extent.2
    }
}

/// Which scene pipeline a draw uses; [`PipelineKey::index`] numbers the
/// [`PipelineKey::COUNT`] of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PipelineKey {
    /// Writes the depth image as well as colour.
    pub depth: bool,
    /// Alpha-blended, no depth writes (markers).
    pub translucent: bool,
    /// Draws back faces (quads: cards are seen from both sides); closed meshes cull them.
    pub two_sided: bool,
}

impl PipelineKey {
    /// How many scene pipelines there are.
    pub const COUNT: usize = 8;

    /// This key's place among the pipelines, `0..COUNT`.
    pub fn index(self) -> usize {
        4 * self.depth as usize + 2 * self.translucent as usize + self.two_sided as usize
    }

    /// The key at `index` (the inverse of [`PipelineKey::index`]).
    pub fn from_index(index: usize) -> Self {
        Self {
            depth: index & 4 != 0,
            translucent: index & 2 != 0,
            two_sided: index & 1 != 0,
        }
    }
}

/// The scene pipeline of `key`.
pub fn create_pipeline(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    module: &wgpu::ShaderModule,
    key: PipelineKey,
) -> wgpu::RenderPipeline {
    let PipelineKey {
        depth,
        translucent,
        two_sided,
    } = key;
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
    let depth_target = wgpu::ColorTargetState {
        format: DEPTH_FORMAT,
        blend: None,
        write_mask: if translucent {
            wgpu::ColorWrites::empty()
        } else {
            wgpu::ColorWrites::ALL
        },
    };
    let targets = [Some(colour), Some(depth_target)];
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
        primitive: wgpu::PrimitiveState {
            cull_mode: (!two_sided).then_some(wgpu::Face::Back),
            ..Default::default()
        },
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
            entry_point: Some(if depth { "fs_main" } else { "fs_rgb" }),
            compilation_options: Default::default(),
            targets: &targets[..if depth { 2 } else { 1 }],
        }),
        multiview_mask: None,
        cache: None,
    })
}

#[cfg(test)]
mod tests {
    use super::PipelineKey;

    #[test]
    fn every_pipeline_key_has_its_own_index() {
        for k in 0..PipelineKey::COUNT {
            assert_eq!(PipelineKey::from_index(k).index(), k);
        }
    }
}
