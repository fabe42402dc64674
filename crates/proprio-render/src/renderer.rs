//! The batched renderer: one wgpu device, every env's scene drawn into its own
//! layer of one texture array (the same viewport for every env, so an image
//! never depends on its place in the batch), one read-back per call.

use crate::camera::View;
use crate::gpu::{Growing, PipelineKey, Targets, Tiling, create_pipeline};
use crate::mesh::{Instance, MESHES, Mesh, Meshes, primitives};
use crate::texture::Atlas;
use crate::{Frames, RenderError};
use bytemuck::{Pod, Zeroable};
use glam::Vec3;
use proprio_core::{Pose, Scene, Visual};

mod record;

/// Triangles around the sphere and cylinder meshes for images of `size`
/// pixels: 8 at 64 (a 4-pixel capsule's outline is then within 0.3 px of a
/// circle), 16 at 128, at most 32. Vertex work is a third of a render on a
/// CPU (lavapipe shades vertices on one thread).
fn segments(size: u32) -> u32 {
    (size / 32 * 4).clamp(8, 32)
}

/// Target layers at most (each up to 2048² texels of colour and of depth).
const MAX_LAYERS: u32 = 4;
/// Half the side of the floor, m.
const FLOOR_HALF_SIZE: f32 = 50.0;
/// sRGB colour of the floor.
const FLOOR_COLOUR: [f32; 4] = [0.62, 0.64, 0.66, 1.0];
/// Linear RGB of the background.
const SKY: wgpu::Color = wgpu::Color {
    r: 0.33,
    g: 0.42,
    b: 0.56,
    a: 1.0,
};

/// What to render: the image size and whether a floor is drawn under every scene.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderConfig {
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Draw a checkered floor at z = 0 (scenes do not carry their ground).
    pub floor: bool,
}

impl Default for RenderConfig {
    fn default() -> Self {
        Self {
            width: 64,
            height: 64,
            floor: true,
        }
    }
}

/// One camera as the shader reads it.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct GpuCamera {
    view_projection: [[f32; 4]; 4],
    eye: [f32; 4],
    forward: [f32; 4],
}

/// One instanced draw: `count` instances of `mesh` from `first`.
#[derive(Clone, Copy)]
struct Draw {
    mesh: usize,
    /// Drawn over what is there (a marker).
    translucent: bool,
    /// Back faces drawn (a quad).
    two_sided: bool,
    first: u32,
    count: u32,
}

/// Renders batches of scenes offscreen. Build one per image size and reuse it.
pub struct Renderer {
    config: RenderConfig,
    adapter: String,
    device: wgpu::Device,
    queue: wgpu::Queue,
    /// Indexed by [`PipelineKey::index`].
    pipelines: [wgpu::RenderPipeline; PipelineKey::COUNT],
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    ranges: [(i32, u32, u32); MESHES],
    instances: Growing,
    cameras: Growing,
    readback: Growing,
    bind_group: Option<wgpu::BindGroup>,
    atlas: Atlas,
    tiling: Tiling,
    targets: Targets,
    /// Target layers at most: a batch needing more is drawn in windows of this many.
    max_layers: u32,
    instance_data: Vec<Instance>,
    /// One scratch list per mesh while a scene's instances are sorted by mesh.
    by_mesh: [Vec<Instance>; MESHES],
    camera_data: Vec<GpuCamera>,
    draws: Vec<Draw>,
    /// Per slot: the env drawn there and its range of `draws`.
    env_draws: Vec<(usize, usize, usize)>,
    /// (layer, slot) of every slot, in layer order.
    order: Vec<(u32, usize)>,
}

impl Renderer {
    /// A renderer of `config.width × config.height` images on the adapter wgpu
    /// picks (`WGPU_BACKEND` chooses vulkan, gl, metal or dx12).
    pub fn new(config: RenderConfig) -> Result<Self, RenderError> {
        if !(8..=4096).contains(&config.width) || !(8..=4096).contains(&config.height) {
            return Err(RenderError::Size {
                width: config.width,
                height: config.height,
            });
        }
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
        }))
        .map_err(|e| RenderError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let adapter_name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("proprio-render"),
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| RenderError::Device(format!("{adapter_name}: {e}")))?;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("proprio-render"),
            source: wgpu::ShaderSource::Wgsl(include_str!("shader.wgsl").into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("proprio-render"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                    ty: wgpu::BindingType::Buffer {
                        ty: wgpu::BufferBindingType::Storage { read_only: true },
                        has_dynamic_offset: false,
                        min_binding_size: None,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::NonFiltering),
                    count: None,
                },
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("proprio-render"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipelines = std::array::from_fn(|k| {
            create_pipeline(
                &device,
                &pipeline_layout,
                &module,
                PipelineKey::from_index(k),
            )
        });
        let meshes = Meshes::new(segments(config.width.max(config.height)));
        let buffer = |label, contents: &[u8], usage| {
            wgpu::util::DeviceExt::create_buffer_init(
                &device,
                &wgpu::util::BufferInitDescriptor {
                    label: Some(label),
                    contents,
                    usage,
                },
            )
        };
        let vertices = buffer(
            "vertices",
            bytemuck::cast_slice(&meshes.vertices),
            wgpu::BufferUsages::VERTEX,
        );
        let indices = buffer(
            "indices",
            bytemuck::cast_slice(&meshes.indices),
            wgpu::BufferUsages::INDEX,
        );
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(RenderError::Device(format!(
                "{adapter_name}: the scene shader does not build: {}",
                chain(&e)
            )));
        }
        let sampler = device.create_sampler(&Default::default());
        let tiling = Tiling::new(&config, device.limits().max_texture_dimension_2d);
        let copy_dst = wgpu::BufferUsages::COPY_DST;
        Ok(Self {
            config,
            adapter: adapter_name,
            max_layers: device
                .limits()
                .max_texture_array_layers
                .clamp(1, MAX_LAYERS),
            instances: Growing::new(&device, "instances", wgpu::BufferUsages::VERTEX | copy_dst),
            cameras: Growing::new(&device, "cameras", wgpu::BufferUsages::STORAGE | copy_dst),
            readback: Growing::new(&device, "readback", wgpu::BufferUsages::MAP_READ | copy_dst),
            atlas: Atlas::new(&device),
            bind_group: None,
            tiling,
            targets: Targets::new(&device, &tiling, (1, 1, 1)),
            ranges: meshes.ranges,
            device,
            queue,
            pipelines,
            layout,
            sampler,
            vertices,
            indices,
            instance_data: Vec::new(),
            by_mesh: Default::default(),
            camera_data: Vec::new(),
            draws: Vec::new(),
            env_draws: Vec::new(),
            order: Vec::new(),
        })
    }

    /// The adapter in use, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Cpu)`.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// The image size and options this renderer was built for.
    pub fn config(&self) -> &RenderConfig {
        &self.config
    }

    /// Renders every scene from its camera `camera` into `frames` (RGB, and
    /// depth in metres when `depth`); frame `i` shows `scenes[i]`.
    pub fn render(
        &mut self,
        scenes: &[Scene],
        camera: &str,
        depth: bool,
        frames: &mut Frames,
    ) -> Result<(), RenderError> {
        self.render_envs(scenes, 0..scenes.len(), camera, depth, frames)
    }

    /// Renders the scenes `envs` picks (in that order) into `frames`.
    pub fn render_envs(
        &mut self,
        scenes: &[Scene],
        envs: impl ExactSizeIterator<Item = usize>,
        camera: &str,
        depth: bool,
        frames: &mut Frames,
    ) -> Result<(), RenderError> {
        let count = envs.len();
        frames.resize(count, self.config.width, self.config.height, depth);
        if count == 0 {
            return Ok(());
        }
        let mut instances = std::mem::take(&mut self.instance_data);
        let built = self.build(&mut instances, scenes, envs, camera);
        self.instance_data = instances;
        built?;
        self.upload();
        let (padded, rows) = (self.padded_row(), self.config.height as u64);
        let plane = count as u64 * rows * padded;
        self.readback
            .reserve(&self.device, if depth { 2 * plane } else { plane });
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(
            self.env_draws
                .iter()
                .enumerate()
                .map(|(slot, &(env, _, _))| (self.tiling.place(env).2, slot)),
        );
        order.sort_unstable();
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let window_layers = self.targets.extent.2;
        for window in order.chunk_by(|a, b| a.0 / window_layers == b.0 / window_layers) {
            for layer in window.chunk_by(|a, b| a.0 == b.0) {
                self.draw_layer(&mut encoder, layer[0].0 % window_layers, layer, depth);
            }
            for &(layer, slot) in window {
                let at = slot as u64 * rows * padded;
                let target = layer % window_layers;
                self.copy_out(&mut encoder, &self.targets.colour, slot, target, at);
                if depth {
                    self.copy_out(&mut encoder, &self.targets.depth, slot, target, plane + at);
                }
            }
        }
        self.order = order;
        self.queue.submit([encoder.finish()]);
        let size = if depth { 2 * plane } else { plane };
        self.read_back(size, frames)
    }
}

impl Renderer {
    /// Bytes of one image row in the read-back buffer (wgpu aligns rows to 256).
    fn padded_row(&self) -> u64 {
        (self.config.width as u64 * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as u64)
    }

    /// Fills `instances` and the camera and draw lists of the envs `envs` picks.
    fn build(
        &mut self,
        instances: &mut Vec<Instance>,
        scenes: &[Scene],
        envs: impl Iterator<Item = usize>,
        camera: &str,
    ) -> Result<(), RenderError> {
        self.atlas.begin_batch();
        instances.clear();
        self.camera_data.clear();
        self.draws.clear();
        self.env_draws.clear();
        let (w, h) = (self.config.width, self.config.height);
        let floor = Instance::new(
            &Pose::at([0.0, 0.0, -0.002]),
            Vec3::new(FLOOR_HALF_SIZE, FLOOR_HALF_SIZE, 1.0),
            FLOOR_COLOUR,
            0,
        )
        .checkered();
        for (slot, env) in envs.enumerate() {
            let scene = scenes.get(env).ok_or(RenderError::Env {
                env,
                count: scenes.len(),
            })?;
            let view = View::named(scene, camera)?;
            self.camera_data.push(GpuCamera {
                view_projection: view.view_projection(w, h).to_cols_array_2d(),
                eye: view.eye.extend(0.0).into(),
                forward: view.forward().extend(0.0).into(),
            });
            let first_draw = self.draws.len();
            let slot = slot as u32;
            if self.config.floor {
                self.by_mesh[Mesh::Quad as usize].push(floor.in_slot(slot));
            }
            self.push_draws(instances, &scene.bodies, false, slot)?;
            self.push_draws(instances, &scene.markers, true, slot)?;
            self.env_draws.push((env, first_draw, self.draws.len()));
        }
        Ok(())
    }

    /// Appends the instances of `visuals` (after any already sorted by mesh),
    /// grouped by mesh, and one draw per mesh used.
    fn push_draws(
        &mut self,
        instances: &mut Vec<Instance>,
        visuals: &[Visual],
        translucent: bool,
        slot: u32,
    ) -> Result<(), RenderError> {
        for visual in visuals {
            let texture = match (&visual.texture, visual.shape) {
                (Some(t), proprio_core::Shape::Rectangle { .. }) => {
                    Some(self.atlas.cell(&self.queue, t)?)
                }
                _ => None,
            };
            primitives(visual, |mesh, pose, scale: Vec3| {
                let mut instance = Instance::new(&pose, scale, visual.colour, slot);
                if let Some((cell, w, h)) = texture {
                    instance = instance.with_texture(cell, w, h);
                }
                self.by_mesh[mesh as usize].push(instance);
            });
        }
        for (mesh, bucket) in self.by_mesh.iter_mut().enumerate() {
            if bucket.is_empty() {
                continue;
            }
            self.draws.push(Draw {
                mesh,
                translucent,
                two_sided: mesh == Mesh::Quad as usize,
                first: instances.len() as u32,
                count: bucket.len() as u32,
            });
            instances.append(bucket);
        }
        Ok(())
    }

    /// Sends instances and cameras to the GPU; sizes the targets for the envs drawn.
    fn upload(&mut self) {
        let instance_bytes: &[u8] = bytemuck::cast_slice(&self.instance_data);
        let camera_bytes: &[u8] = bytemuck::cast_slice(&self.camera_data);
        self.instances
            .reserve(&self.device, instance_bytes.len() as u64);
        let new_cameras = self
            .cameras
            .reserve(&self.device, camera_bytes.len() as u64);
        if !instance_bytes.is_empty() {
            self.queue
                .write_buffer(&self.instances.buffer, 0, instance_bytes);
        }
        self.queue
            .write_buffer(&self.cameras.buffer, 0, camera_bytes);
        let last_env = self.env_draws.iter().map(|d| d.0).max().unwrap_or(0);
        let (columns, rows, layers) = self.tiling.extent(last_env);
        let needed = (columns, rows, layers.min(self.max_layers));
        if !self.targets.covers(needed) {
            let (c, r, l) = self.targets.extent;
            let grown = (c.max(needed.0), r.max(needed.1), l.max(needed.2));
            self.targets = Targets::new(&self.device, &self.tiling, grown);
        }
        if new_cameras || self.bind_group.is_none() {
            let atlas = self.atlas.view();
            self.bind_group = Some(self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("proprio-render"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.cameras.buffer.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: wgpu::BindingResource::TextureView(&atlas),
                    },
                    wgpu::BindGroupEntry {
                        binding: 2,
                        resource: wgpu::BindingResource::Sampler(&self.sampler),
                    },
                ],
            }));
        }
    }
}

/// An error and its sources on one line (wgpu's own message is only "Validation Error").
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text.replace('\n', " ")
}
