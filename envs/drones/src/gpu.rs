//! The GPU backend: state in wgpu storage buffers, one compute dispatch per
//! control step for all envs (physics substeps, rewards, resets of finished
//! envs), results read back into the [`Batch`] — or left on the device.

use crate::config::{ActionMode, Settings};
use crate::cpu::DroneModel;
use crate::params::{
    BODY_RADIUS, DRAG, GRAVITY, INERTIA, KF, KM, MASS, MAX_RATE, RATE_GAIN, RPM_TO_RAD,
    THRUST_TO_WEIGHT, max_rpm, motor_xy,
};
use crate::state::{CHUNK, Drone, LEN};
use crate::task::{self, Crash, StepResult, write_info};
use bytemuck::{Pod, Zeroable};
use proprio_core::chunked;
use proprio_core::{Batch, EnvRng, EnvSpec, Error, Kernel, ResetOptions, Result, command};
use std::fmt::Write;
use std::mem::offset_of;
use std::sync::Arc;
use std::sync::mpsc;
use wgpu::util::DeviceExt;

/// Floats of per-env results after the observations (see `shader.wgsl`).
const OUT_LEN: usize = 12;

/// The parameter block of `shader.wgsl`: a read-only storage buffer, not a
/// uniform one (lavapipe inlines uniform values and recompiled the shader on
/// every dispatch, 3× slower and leaking ~0.5 MB a step).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    num_envs: u32,
    substeps: u32,
    task: u32,
    action_mode: u32,
    count: u32,
    control_hz: u32,
    obs_dim: u32,
    _pad0: u32,
    dt: f32,
    waypoint_radius: f32,
    gate_size: f32,
    _pad1: f32,
}

/// Steps N drone envs on a GPU through wgpu.
pub struct GpuKernel {
    spec: Arc<EnvSpec>,
    settings: Settings,
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

/// WGSL constants from the Rust values, so both backends use identical numbers.
fn shader_source() -> String {
    let mut h = String::new();
    let v3 = |v: [f32; 3]| format!("vec3<f32>({:?}, {:?}, {:?})", v[0], v[1], v[2]);
    let fields = [
        ("F_POS", offset_of!(Drone, pos)),
        ("F_VEL", offset_of!(Drone, vel)),
        ("F_QUAT", offset_of!(Drone, quat)),
        ("F_OMEGA", offset_of!(Drone, omega)),
        ("F_RPM", offset_of!(Drone, rpm)),
        ("F_ACTION", offset_of!(Drone, action)),
        ("F_MASS", offset_of!(Drone, mass)),
        ("F_INERTIA", offset_of!(Drone, inertia)),
        ("F_KF", offset_of!(Drone, kf)),
        ("F_KM", offset_of!(Drone, km)),
        ("F_MOTOR_ALPHA", offset_of!(Drone, motor_alpha)),
        ("F_WIND", offset_of!(Drone, wind)),
        ("F_GUST", offset_of!(Drone, gust)),
        ("F_GUST_PHASE", offset_of!(Drone, gust_phase)),
        ("F_GUST_STEP", offset_of!(Drone, gust_step)),
        ("F_GOAL", offset_of!(Drone, goal)),
        ("F_HOLD", offset_of!(Drone, hold)),
        ("F_DIST", offset_of!(Drone, dist)),
        ("F_POINTS", offset_of!(Drone, points)),
        ("F_GATE_DIR", offset_of!(Drone, gate_dir)),
    ];
    let _ = writeln!(h, "const LEN: u32 = {LEN}u;\nconst CHUNK: u32 = {CHUNK}u;");
    for (name, bytes) in fields {
        let _ = writeln!(h, "const {name}: u32 = {}u;", bytes / 4);
    }
    let scalars = [
        ("GRAVITY", GRAVITY),
        ("MASS", MASS),
        ("KF", KF),
        ("KM", KM),
        ("MIX_C", KM / KF),
        ("THRUST_TO_WEIGHT", THRUST_TO_WEIGHT),
        ("MAX_RATE", MAX_RATE),
        ("MAX_RPM", max_rpm()),
        ("MOTOR_D", motor_xy()[0][0]),
        ("RPM_TO_RAD", RPM_TO_RAD),
        ("BODY_RADIUS", BODY_RADIUS),
        ("ARENA", task::ARENA),
        ("FRAME_DEPTH", task::FRAME_DEPTH),
        ("FRAME_WIDTH", task::FRAME_WIDTH),
        ("HOVER_RADIUS", task::HOVER_RADIUS),
        ("HOVER_RATE", task::HOVER_RATE),
        ("HOVER_BONUS", task::HOVER_BONUS),
        ("CRASH_REWARD", task::CRASH_REWARD),
        ("POINT_BONUS", task::POINT_BONUS),
        ("PROGRESS_REWARD", task::PROGRESS_REWARD),
    ];
    for (name, value) in scalars {
        let _ = writeln!(h, "const {name}: f32 = {value:?};");
    }
    for (name, value) in [
        ("INERTIA", INERTIA),
        ("DRAG", DRAG),
        ("RATE_GAIN", RATE_GAIN),
    ] {
        let _ = writeln!(h, "const {name}: vec3<f32> = {};", v3(value));
    }
    h + include_str!("shader.wgsl")
}

impl GpuKernel {
    /// `num_envs` drones of `spec` on the first GPU adapter wgpu finds.
    pub fn new(spec: Arc<EnvSpec>, settings: Settings, num_envs: usize) -> Result<Self> {
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
            label: Some("proprio-drones"),
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| backend_error("cannot open the device", e))?;
        let obs_dim = spec.observation_space.flat_dim();
        let floats = |n: usize| (n.max(1) * 4) as u64;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("drones"),
            source: wgpu::ShaderSource::Wgsl(shader_source().into()),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("drones"),
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
        let outputs_len = num_envs * (OUT_LEN + 2 * obs_dim);
        let state = storage(
            "state",
            floats(chunked::chunked_len::<DroneModel>(num_envs)),
            wgpu::BufferUsages::COPY_SRC,
        );
        let staged = storage(
            "staged",
            floats(num_envs * LEN),
            wgpu::BufferUsages::empty(),
        );
        let actions = storage("actions", floats(num_envs * 4), wgpu::BufferUsages::empty());
        let commands = storage("commands", floats(num_envs), wgpu::BufferUsages::empty());
        let outputs = storage("outputs", floats(outputs_len), wgpu::BufferUsages::COPY_SRC);
        // Holds either the step outputs or one chunk of state (snapshots).
        let readback = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: floats(outputs_len.max(CHUNK * LEN)),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let params = Params {
            num_envs: num_envs as u32,
            substeps: settings.substeps,
            task: settings.task as u32,
            action_mode: u32::from(settings.action == ActionMode::ThrustRates),
            count: settings.count,
            control_hz: settings.control_hz,
            obs_dim: obs_dim as u32,
            _pad0: 0,
            dt: settings.dt,
            waypoint_radius: settings.waypoint_radius,
            gate_size: settings.gate_size,
            _pad1: 0.0,
        };
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("params"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::STORAGE,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("drones"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &[&params, &state, &staged, &actions, &commands, &outputs]
                .iter()
                .enumerate()
                .map(|(i, b)| wgpu::BindGroupEntry {
                    binding: i as u32,
                    resource: b.as_entire_binding(),
                })
                .collect::<Vec<_>>(),
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(backend_error("the drone shader does not build", e));
        }
        Ok(Self {
            spec,
            settings,
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

    /// With `true`, observations stay in [`Self::outputs`] (from float `N·12`)
    /// for a learner on the same device and the batch's `obs` is not updated;
    /// rewards, flags and infos are still read back.
    pub fn keep_obs_on_device(&mut self, keep: bool) {
        self.keep_obs_on_device = keep;
    }

    /// The device, queue and output buffer (`[results N×12 | obs N×D | final obs N×D]`).
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

fn result(out: &[f32], final_info: bool) -> StepResult {
    let o = if final_info { 8 } else { 4 };
    StepResult {
        reward: out[0],
        terminated: out[1] != 0.0,
        success: out[o + 2] != 0.0,
        crash: match out[o + 3] as u8 {
            1 => Crash::Ground,
            2 => Crash::Gate,
            3 => Crash::OutOfBounds,
            _ => Crash::None,
        },
    }
}

impl Kernel for GpuKernel {
    type State = Drone;

    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn num_envs(&self) -> usize {
        self.num_envs
    }

    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Drone> {
        crate::no_options(options)?;
        Ok(task::draw(&self.settings, rng))
    }

    fn stage(&mut self, env: usize, start: &Drone) -> Result<()> {
        self.queue.write_buffer(
            &self.staged,
            (env * LEN * 4) as u64,
            bytemuck::bytes_of(start),
        );
        Ok(())
    }

    fn run(&mut self, commands: &[u32], actions: &[f32], batch: &mut Batch) -> Result<()> {
        let n = self.num_envs;
        let d = self.obs_dim;
        self.queue
            .write_buffer(&self.commands, 0, bytemuck::cast_slice(commands));
        if !actions.is_empty() {
            self.queue
                .write_buffer(&self.actions, 0, bytemuck::cast_slice(actions));
        }
        let same_step = commands.iter().any(|c| c & command::SAME_STEP != 0);
        // Read back [results | obs (unless kept on device) | final obs (same-step only)].
        let floats = match (self.keep_obs_on_device, same_step) {
            (true, _) => n * OUT_LEN,
            (false, false) => n * (OUT_LEN + d),
            (false, true) => n * (OUT_LEN + 2 * d),
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
        let obs_at = n * OUT_LEN;
        let final_at = n * (OUT_LEN + d);
        let results = &host[..obs_at];
        for (i, &cmd) in commands.iter().enumerate() {
            if cmd == 0 {
                continue;
            }
            let out = &results[i * OUT_LEN..(i + 1) * OUT_LEN];
            if !self.keep_obs_on_device {
                batch.obs[i * d..(i + 1) * d]
                    .copy_from_slice(&host[obs_at + i * d..obs_at + (i + 1) * d]);
            }
            batch.reward[i] = out[0];
            batch.terminated[i] = out[1] != 0.0;
            batch.truncated[i] = out[2] != 0.0;
            batch.has_final[i] = out[3] != 0.0;
            if cmd & command::RESET != 0 {
                write_info(&mut batch.infos[i], out[4], out[5], None);
                continue;
            }
            if batch.has_final[i] {
                let last = result(out, true);
                write_info(&mut batch.final_infos[i], out[8], out[9], Some(&last));
                write_info(&mut batch.infos[i], out[4], out[5], None);
                batch.final_obs[i * d..(i + 1) * d]
                    .copy_from_slice(&host[final_at + i * d..final_at + (i + 1) * d]);
            } else {
                write_info(
                    &mut batch.infos[i],
                    out[4],
                    out[5],
                    Some(&result(out, false)),
                );
            }
        }
        Ok(())
    }

    fn state(&self, env: usize) -> Result<Drone> {
        let chunk_floats = CHUNK * LEN;
        let mut chunk = vec![0.0f32; chunk_floats];
        self.read(
            &self.state,
            ((env / CHUNK) * chunk_floats * 4) as u64,
            (chunk_floats * 4) as u64,
            &mut chunk,
        )?;
        Ok(chunked::load::<DroneModel>(&chunk, env % CHUNK))
    }

    fn set_state(&mut self, env: usize, state: &Drone, batch: &mut Batch) -> Result<()> {
        state.check().map_err(Error::State)?;
        let base = (env / CHUNK) * CHUNK * LEN + env % CHUNK;
        for (f, v) in state.flat().iter().enumerate() {
            self.queue.write_buffer(
                &self.state,
                ((base + f * CHUNK) * 4) as u64,
                bytemuck::bytes_of(v),
            );
        }
        task::observe(state, &self.settings, batch.rows_mut().obs(env));
        Ok(())
    }

    fn scene(&self, env: usize, scene: &mut proprio_core::Scene) -> Result<()> {
        crate::visuals::drone(&self.state(env)?, &self.settings, scene);
        Ok(())
    }
}
