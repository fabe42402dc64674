//! # proprio-gpu
//!
//! `ChunkedGpuKernel`: the wgpu [`Kernel`] of an env family whose state is a
//! fixed block of floats per env ([`ChunkedModel`]), the GPU twin of
//! [`proprio_core::ChunkedKernel`]. The state lives in storage buffers in the
//! same chunked layout; one compute dispatch per control step runs every env
//! (physics, rewards, autoresets from staged starts, observations) and one
//! read-back returns the results — or leaves the observations on the device.
//!
//! The family's shader ([`GpuModel::shader`]) binds, in group 0: 0 its
//! parameter block (read-only storage), 1 the state (read-write), 2 the
//! staged starts (`LEN` floats per env), 3 the actions, 4 the commands
//! (`u32`), 5 the outputs `[results N×OUT | obs N×D | final obs N×D]`, where
//! each env's results are `[reward, terminated, truncated, has_final, info
//! now (INFO floats), final info (INFO floats)]`.

use proprio_core::chunked::{self, CHUNK, ChunkedModel};
use proprio_core::{
    AutoresetMode, Batch, EnvRng, EnvSpec, Error, Info, Kernel, KernelVecEnv, ResetOptions, Result,
    Scene, VecEnv, command,
};
use std::sync::Arc;
use std::sync::mpsc;
use wgpu::util::DeviceExt;

/// The offset in floats of each named field of a state, for [`shader`]'s
/// `F_*` constants: `fields!(Drone: pos, vel)` is
/// `[("pos", offset_of!(Drone, pos) / 4), ("vel", ...)]`.
#[macro_export]
macro_rules! fields {
    ($state:ty: $($field:ident),+ $(,)?) => {
        [$((stringify!($field), ::std::mem::offset_of!($state, $field) / 4)),+]
    };
}

/// Builds a family's shader: its constants (`LEN`, `CHUNK`, `OUT_LEN`,
/// `INFO`, then each of `fields` as `F_<NAME>`, `counts` as `u32` and
/// `scalars` as `f32`, all from the Rust values so the two sides cannot drift
/// apart), the shared prelude (bindings, command flags, the state's loads and
/// stores, the entry point `main` with the autoreset), then `code`, which
/// defines `Params`, `control_step`, `observe` and `write_info` (see `prelude.wgsl`).
pub fn shader<M: GpuModel>(
    fields: &[(&str, usize)],
    counts: &[(&str, usize)],
    scalars: &[(&str, f32)],
    code: &[&str],
) -> String {
    use std::fmt::Write;
    let mut h = String::new();
    let len = chunked::state_len::<M>();
    let shared = [
        ("LEN", len),
        ("HOT", M::HOT.min(len)),
        ("SCRATCH", M::SCRATCH),
        ("CHUNK", CHUNK),
        ("OUT_LEN", out_len::<M>()),
        ("INFO", M::INFO),
    ];
    for (name, value) in shared.iter().chain(counts) {
        let _ = writeln!(h, "const {name}: u32 = {value}u;");
    }
    for (name, value) in fields {
        let _ = writeln!(h, "const F_{}: u32 = {value}u;", name.to_uppercase());
    }
    for (name, value) in scalars {
        let _ = writeln!(h, "const {name}: f32 = {value:?};");
    }
    h += include_str!("prelude.wgsl");
    code.iter().fold(h, |h, c| h + c)
}

/// Declares a shader's parameter block once: the `#[repr(C)]` Rust struct
/// (`Pod`, so the caller depends on `bytemuck`), led by the `num_envs` and
/// `obs_dim` the kernel fills, and its WGSL declaration `WGSL`, which the
/// family passes to [`shader`], so the two cannot drift apart. Fields are
/// `u32` or `f32`; the author pads the block to a multiple of 16 bytes.
#[macro_export]
macro_rules! params {
    ($(#[$meta:meta])* struct $name:ident { $($field:ident: $ty:ident),* $(,)? }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
        struct $name {
            num_envs: u32,
            obs_dim: u32,
            $($field: $ty),*
        }

        impl $name {
            /// The WGSL declaration of this block.
            const WGSL: &'static str = concat!(
                "struct ", stringify!($name), " {\n",
                "    num_envs: u32,\n    obs_dim: u32,\n",
                $("    ", stringify!($field), ": ", stringify!($ty), ",\n",)*
                "}\n"
            );

            /// The block as bytes (the kernel fills `num_envs` and `obs_dim`).
            fn bytes(self) -> Vec<u8> {
                bytemuck::bytes_of(&self).to_vec()
            }
        }
    };
}

/// A batch of `n` envs of `model` on the GPU: a family's [`proprio_core::Family::GPU`].
pub fn vec_env<M: GpuModel>(
    spec: Arc<EnvSpec>,
    model: M,
    n: usize,
    autoreset: AutoresetMode,
) -> Result<Box<dyn VecEnv>> {
    let kernel = ChunkedGpuKernel::new(spec, model, n)?;
    Ok(Box::new(KernelVecEnv::new(kernel, autoreset)?))
}

/// A [`ChunkedModel`] that also runs as a WGSL compute shader.
pub trait GpuModel: ChunkedModel {
    /// The metrics of the usual info layout — these keys' values, then the
    /// step's success and crash — that the default [`Self::write_info`] reads.
    const INFO_KEYS: &'static [&'static str] = &[];
    /// Info floats per env the shader writes (see the crate docs); by default
    /// the usual layout's: [`Self::INFO_KEYS`], success, crash.
    const INFO: usize = Self::INFO_KEYS.len() + 2;
    /// The family's name, for labels and errors.
    const NAME: &'static str;
    /// Leading state fields the shader keeps in private memory (`s`); the
    /// rest it reads and writes in the state buffer (`cold`, `set_cold`).
    const HOT: usize = usize::MAX;
    /// Floats of per-env workspace the shader declares at binding 6 (none by default).
    const SCRATCH: usize = 0;
    /// The whole WGSL source, entry point `main`, workgroup size [`CHUNK`].
    fn shader(&self) -> String;
    /// The bytes of the parameter block at binding 0; its first two `u32`,
    /// `num_envs` and `obs_dim`, are the kernel's to fill (`params!` declares them).
    fn params(&self) -> Vec<u8>;
    /// Writes an env's `info` from its info floats; `stepped` is false for a
    /// freshly started episode (no step outcome yet).
    fn write_info(info: &mut Info, values: &[f32], stepped: bool) {
        write_info(info, Self::INFO_KEYS, values, stepped);
    }
}

/// Writes `info` from info floats laid out as the metrics `keys`, then
/// success and crash (see [`GpuModel::INFO`]); `stepped` as in [`GpuModel::write_info`].
fn write_info(info: &mut Info, keys: &[&'static str], values: &[f32], stepped: bool) {
    let n = keys.len();
    let ended = stepped.then(|| (values[n] != 0.0, values[n + 1] as u8));
    chunked::write_info(info, keys, &values[..n], ended);
}

/// Steps N envs of a [`GpuModel`] on a GPU through wgpu.
pub struct ChunkedGpuKernel<M: GpuModel> {
    spec: Arc<EnvSpec>,
    model: M,
    num_envs: usize,
    obs_dim: usize,
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    bind_group: wgpu::BindGroup,
    state: wgpu::Buffer,
    staged: wgpu::Buffer,
    actions: wgpu::Buffer,
    commands: wgpu::Buffer,
    outputs: wgpu::Buffer,
    readback: wgpu::Buffer,
    /// Host copy of the read-back outputs (reused every step).
    host: Vec<f32>,
    keep_obs_on_device: bool,
    adapter: String,
}

fn backend_error(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Backend(format!("GPU backend: {what}: {e}"))
}

/// Floats of one env's results.
fn out_len<M: GpuModel>() -> usize {
    4 + 2 * M::INFO
}

impl<M: GpuModel> ChunkedGpuKernel<M> {
    /// `num_envs` envs of `spec`, stepped by `model` on the first GPU adapter wgpu finds.
    pub fn new(spec: Arc<EnvSpec>, model: M, num_envs: usize) -> Result<Self> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
        }))
        .map_err(|e| {
            Error::Backend(format!(
                "no GPU adapter found ({e}); install a Vulkan driver (on Debian/Ubuntu: \
                 apt-get install mesa-vulkan-drivers libvulkan1, which also provides the \
                 software renderer lavapipe) or use --backend cpu"
            ))
        })?;
        let info = adapter.get_info();
        let adapter_name = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some(M::NAME),
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| backend_error("cannot open the device", e))?;
        let obs_dim = spec.observation_space.flat_dim();
        let action_dim = spec.action_space.flat_dim();
        let floats = |n: usize| (n.max(1) * 4) as u64;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(M::NAME),
            source: wgpu::ShaderSource::Wgsl(model.shader().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(M::NAME),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        let storage = |label: &str, size: u64, extra: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
                mapped_at_creation: false,
            })
        };
        let outputs_len = num_envs * (out_len::<M>() + 2 * obs_dim);
        let len = chunked::state_len::<M>();
        let state = storage(
            "state",
            floats(chunked::chunked_len::<M>(num_envs)),
            wgpu::BufferUsages::COPY_SRC,
        );
        let staged = storage(
            "staged",
            floats(num_envs * len),
            wgpu::BufferUsages::empty(),
        );
        let actions = storage(
            "actions",
            floats(num_envs * action_dim),
            wgpu::BufferUsages::empty(),
        );
        let commands = storage("commands", floats(num_envs), wgpu::BufferUsages::empty());
        let outputs = storage("outputs", floats(outputs_len), wgpu::BufferUsages::COPY_SRC);
        // Holds either the step outputs or the states (a snapshot's chunk, a batch's scenes).
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: floats(outputs_len.max(chunked::chunked_len::<M>(num_envs))),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        // The family's workspace, only if it declares one (binding 6).
        let scratch = (M::SCRATCH > 0).then(|| {
            storage(
                "scratch",
                floats(num_envs.div_ceil(CHUNK) * CHUNK * M::SCRATCH),
                wgpu::BufferUsages::empty(),
            )
        });
        let mut block = model.params();
        if block.len() < 8 {
            return Err(Error::Backend(format!(
                "{}'s parameter block has {} bytes; it starts with num_envs and obs_dim",
                M::NAME,
                block.len()
            )));
        }
        block[..4].copy_from_slice(&(num_envs as u32).to_le_bytes());
        block[4..8].copy_from_slice(&(obs_dim as u32).to_le_bytes());
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: &block,
            usage: wgpu::BufferUsages::STORAGE,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(M::NAME),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[&params, &state, &staged, &actions, &commands, &outputs]
                .into_iter()
                .chain(scratch.as_ref())
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect::<Vec<_>>(),
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(backend_error(
                &format!("the {} shader does not build", M::NAME),
                e,
            ));
        }
        Ok(Self {
            spec,
            model,
            num_envs,
            obs_dim,
            device,
            queue,
            pipeline,
            bind_group,
            state,
            staged,
            actions,
            commands,
            outputs,
            readback,
            host: vec![0.0; outputs_len],
            keep_obs_on_device: false,
            adapter: adapter_name,
        })
    }

    /// The adapter in use, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Vulkan, Cpu)`.
    pub fn adapter(&self) -> &str {
        &self.adapter
    }

    /// With `true`, observations stay in [`Self::outputs`] (from float
    /// `N × (4 + 2 INFO)`) for a learner on the same device and the batch's
    /// `obs` is not updated; rewards, flags and infos are still read back.
    pub fn keep_obs_on_device(&mut self, keep: bool) {
        self.keep_obs_on_device = keep;
    }

    /// The device, queue and output buffer (see the crate docs for its layout).
    pub fn outputs(&self) -> (&wgpu::Device, &wgpu::Queue, &wgpu::Buffer) {
        (&self.device, &self.queue, &self.outputs)
    }

    /// Copies `size` bytes at `offset` of `source` to the host.
    fn read(&self, source: &wgpu::Buffer, offset: u64, size: u64, into: &mut [f32]) -> Result<()> {
        let mut encoder = self.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(source, offset, &self.readback, 0, size);
        self.queue.submit([encoder.finish()]);
        self.map_readback(size, into)
    }

    fn map_readback(&self, size: u64, into: &mut [f32]) -> Result<()> {
        let (tx, rx) = mpsc::channel();
        let slice = self.readback.slice(0..size);
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| backend_error("waiting for the GPU", e))?;
        rx.recv()
            .map_err(|e| backend_error("reading results", e))?
            .map_err(|e| backend_error("reading results", e))?;
        into.copy_from_slice(bytemuck::cast_slice(&slice.get_mapped_range()));
        self.readback.unmap();
        Ok(())
    }
}

impl<M: GpuModel> Kernel for ChunkedGpuKernel<M> {
    type State = M::State;

    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn num_envs(&self) -> usize {
        self.num_envs
    }

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<M::State> {
        self.model.draw(rng, options)
    }

    fn stage(&mut self, env: usize, start: &M::State) -> Result<()> {
        let len = chunked::state_len::<M>();
        self.queue.write_buffer(
            &self.staged,
            (env * len * 4) as u64,
            bytemuck::cast_slice(chunked::fields(start)),
        );
        Ok(())
    }

    fn run(&mut self, commands: &[u32], actions: &[f32], batch: &mut Batch) -> Result<()> {
        let n = self.num_envs;
        let d = self.obs_dim;
        let out = out_len::<M>();
        self.queue
            .write_buffer(&self.commands, 0, bytemuck::cast_slice(commands));
        if !actions.is_empty() {
            self.queue
                .write_buffer(&self.actions, 0, bytemuck::cast_slice(actions));
        }
        let same_step = commands.iter().any(|c| c & command::SAME_STEP != 0);
        // Read back [results | obs (unless kept on device) | final obs (same-step only)].
        let floats = match (self.keep_obs_on_device, same_step) {
            (true, _) => n * out,
            (false, false) => n * (out + d),
            (false, true) => n * (out + 2 * d),
        };
        let bytes = (floats * 4) as u64;
        let mut encoder = self.device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &self.bind_group, &[]);
            pass.dispatch_workgroups(n.div_ceil(CHUNK) as u32, 1, 1);
        }
        encoder.copy_buffer_to_buffer(&self.outputs, 0, &self.readback, 0, bytes);
        self.queue.submit([encoder.finish()]);
        let mut host = std::mem::take(&mut self.host);
        let mapped = self.map_readback(bytes, &mut host[..floats]);
        self.host = host;
        mapped?;
        let host = &self.host;
        let obs_at = n * out;
        let final_at = n * (out + d);
        let now = 4..4 + M::INFO;
        let last = 4 + M::INFO..out;
        for (i, &cmd) in commands.iter().enumerate() {
            if cmd == 0 {
                continue;
            }
            let r = &host[i * out..(i + 1) * out];
            if !self.keep_obs_on_device {
                batch.obs[i * d..(i + 1) * d]
                    .copy_from_slice(&host[obs_at + i * d..obs_at + (i + 1) * d]);
            }
            batch.reward[i] = r[0];
            batch.terminated[i] = r[1] != 0.0;
            batch.truncated[i] = r[2] != 0.0;
            batch.has_final[i] = r[3] != 0.0;
            if cmd & command::RESET != 0 {
                M::write_info(&mut batch.infos[i], &r[now.clone()], false);
            } else if batch.has_final[i] {
                M::write_info(&mut batch.final_infos[i], &r[last.clone()], true);
                M::write_info(&mut batch.infos[i], &r[now.clone()], false);
                batch.final_obs[i * d..(i + 1) * d]
                    .copy_from_slice(&host[final_at + i * d..final_at + (i + 1) * d]);
            } else {
                M::write_info(&mut batch.infos[i], &r[now.clone()], true);
            }
        }
        Ok(())
    }

    fn state(&self, env: usize) -> Result<M::State> {
        let chunk_floats = CHUNK * chunked::state_len::<M>();
        let mut chunk = vec![0.0f32; chunk_floats];
        self.read(
            &self.state,
            ((env / CHUNK) * chunk_floats * 4) as u64,
            (chunk_floats * 4) as u64,
            &mut chunk,
        )?;
        Ok(chunked::load::<M>(&chunk, env % CHUNK))
    }

    fn set_state(&mut self, env: usize, state: &M::State, batch: &mut Batch) -> Result<()> {
        chunked::validate(&self.model, state)?;
        let base = (env / CHUNK) * CHUNK * chunked::state_len::<M>() + env % CHUNK;
        for (f, v) in chunked::fields(state).iter().enumerate() {
            self.queue.write_buffer(
                &self.state,
                ((base + f * CHUNK) * 4) as u64,
                bytemuck::bytes_of(v),
            );
        }
        self.model.observe(state, batch.rows_mut().obs(env));
        Ok(())
    }

    fn scene(&self, env: usize, scene: &mut Scene) -> Result<()> {
        let state = self.state(env)?;
        self.model.scene(&state, scene);
        Ok(())
    }

    /// One read-back of the chunks that hold `envs`, however many envs they are.
    fn scenes(&self, envs: &[usize], scenes: &mut [Scene]) -> Result<()> {
        let Some(&last) = envs.iter().max() else {
            return Ok(());
        };
        let chunk_floats = CHUNK * chunked::state_len::<M>();
        let mut states = vec![0.0f32; (last / CHUNK + 1) * chunk_floats];
        self.read(&self.state, 0, (states.len() * 4) as u64, &mut states)?;
        for &i in envs {
            let chunk = &states[(i / CHUNK) * chunk_floats..(i / CHUNK + 1) * chunk_floats];
            self.model
                .scene(&chunked::load::<M>(chunk, i % CHUNK), &mut scenes[i]);
        }
        Ok(())
    }
}
