//! The CPU backend: N drones in chunked struct-of-arrays storage, whole chunks per worker thread.

use crate::config::Settings;
use crate::state::{CHUNK, Drone, LEN, soa_len};
use crate::task::{self, write_info};
use proprio_core::{
    Batch, EnvRng, EnvSpec, Error, Kernel, MAX_THREADS, ResetOptions, Result, Rows, WorkerPool,
    command,
};
use std::sync::Arc;

/// Steps N drone envs on CPU threads.
pub struct CpuKernel {
    spec: Arc<EnvSpec>,
    settings: Settings,
    num_envs: usize,
    /// Chunked struct-of-arrays state ([`crate::state`]).
    state: Vec<f32>,
    /// The start of each env's next episode.
    staged: Vec<Drone>,
    pool: WorkerPool,
}

/// The chunks, staged starts, commands, actions and batch rows of one thread.
struct Part<'a> {
    state: &'a mut [f32],
    staged: &'a [Drone],
    commands: &'a [u32],
    actions: &'a [f32],
    rows: Rows<'a>,
}

impl Part<'_> {
    fn run(mut self, settings: &Settings) {
        for k in 0..self.commands.len() {
            let cmd = self.commands[k];
            if cmd == 0 {
                continue;
            }
            let chunk = &mut self.state[(k / CHUNK) * CHUNK * LEN..(k / CHUNK + 1) * CHUNK * LEN];
            let lane = k % CHUNK;
            let mut d = if cmd & command::RESET != 0 {
                self.staged[k]
            } else {
                Drone::load(chunk, lane)
            };
            if cmd & command::RESET != 0 {
                self.rows.clear_flags(k);
                write_info(&mut self.rows.infos[k], d.dist, d.goal, None);
            } else {
                let a = &self.actions[k * 4..k * 4 + 4];
                let out = task::control_step(&mut d, [a[0], a[1], a[2], a[3]], settings);
                self.rows.reward[k] = out.reward;
                self.rows.terminated[k] = out.terminated;
                self.rows.truncated[k] = cmd & command::LAST != 0;
                self.rows.has_final[k] = false;
                write_info(&mut self.rows.infos[k], d.dist, d.goal, Some(&out));
                if cmd & command::SAME_STEP != 0 && (out.terminated || cmd & command::LAST != 0) {
                    task::observe(&d, settings, self.rows.obs(k));
                    self.rows.keep_final(k);
                    d = self.staged[k];
                    write_info(&mut self.rows.infos[k], d.dist, d.goal, None);
                }
            }
            task::observe(&d, settings, self.rows.obs(k));
            d.store(chunk, lane);
        }
    }
}

impl CpuKernel {
    /// `num_envs` drones of `spec` on `threads` worker threads.
    pub fn new(
        spec: Arc<EnvSpec>,
        settings: Settings,
        num_envs: usize,
        threads: usize,
    ) -> Result<Self> {
        let threads = threads.clamp(1, MAX_THREADS).min(num_envs.div_ceil(CHUNK));
        let pool = WorkerPool::new(threads)
            .map_err(|e| Error::Shape(format!("cannot start {threads} worker threads: {e}")))?;
        Ok(Self {
            spec,
            settings,
            num_envs,
            state: vec![0.0; soa_len(num_envs)],
            staged: vec![bytemuck::Zeroable::zeroed(); num_envs],
            pool,
        })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }
}

impl Kernel for CpuKernel {
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
        self.staged[env] = *start;
        Ok(())
    }

    fn run(&mut self, commands: &[u32], actions: &[f32], batch: &mut Batch) -> Result<()> {
        let n = self.num_envs;
        let chunks = n.div_ceil(CHUNK);
        let threads = self.pool.threads();
        let mut parts: [Option<Part<'_>>; MAX_THREADS] = std::array::from_fn(|_| None);
        let mut state = self.state.as_mut_slice();
        let mut staged = self.staged.as_slice();
        let mut commands = commands;
        let mut actions = actions;
        let mut rows = batch.rows_mut();
        let mut done = 0;
        for (t, part) in parts.iter_mut().enumerate().take(threads) {
            let end = ((t + 1) * chunks / threads * CHUNK).min(n);
            let size = end - done;
            let (s_head, s_tail) = state.split_at_mut(size.div_ceil(CHUNK) * CHUNK * LEN);
            let (st_head, st_tail) = staged.split_at(size);
            let (c_head, c_tail) = commands.split_at(size);
            let (a_head, a_tail) = actions.split_at((size * 4).min(actions.len()));
            let (r_head, r_tail) = rows.split_at(size);
            *part = Some(Part {
                state: s_head,
                staged: st_head,
                commands: c_head,
                actions: a_head,
                rows: r_head,
            });
            (state, staged, commands, actions, rows) = (s_tail, st_tail, c_tail, a_tail, r_tail);
            done = end;
        }
        let settings = &self.settings;
        self.pool.run_parts(parts, &|part| part.run(settings));
        Ok(())
    }

    fn state(&self, env: usize) -> Result<Drone> {
        let chunk = &self.state[(env / CHUNK) * CHUNK * LEN..(env / CHUNK + 1) * CHUNK * LEN];
        Ok(Drone::load(chunk, env % CHUNK))
    }

    fn set_state(&mut self, env: usize, state: &Drone, batch: &mut Batch) -> Result<()> {
        state.check().map_err(Error::State)?;
        let chunk = &mut self.state[(env / CHUNK) * CHUNK * LEN..(env / CHUNK + 1) * CHUNK * LEN];
        state.store(chunk, env % CHUNK);
        task::observe(state, &self.settings, batch.rows_mut().obs(env));
        Ok(())
    }

    fn scene(&self, env: usize, scene: &mut proprio_core::Scene) -> Result<()> {
        crate::visuals::drone(&self.state(env)?, &self.settings, scene);
        Ok(())
    }
}
