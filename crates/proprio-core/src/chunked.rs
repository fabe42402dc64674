//! `ChunkedKernel`: the CPU [`Kernel`] of a family whose state is a fixed
//! block of floats per env (the drones, the cars), stored as chunked
//! struct-of-arrays — the layout its GPU kernel reads — and stepped whole
//! chunks per worker thread, so results never depend on the thread count.
//!
//! Envs are grouped in chunks of [`CHUNK`]; inside a chunk, each scalar field
//! of the state is a run of `CHUNK` consecutive floats. A CPU thread owns
//! whole chunks (one contiguous slice); a GPU workgroup of `CHUNK` threads
//! reads each field with one coalesced load.

use crate::env::{EnvSpec, ResetOptions};
use crate::error::{Error, Result};
use crate::info::Info;
use crate::kernel::{Kernel, command};
use crate::pool::WorkerPool;
use crate::rng::EnvRng;
use crate::scene::Scene;
use crate::threaded::MAX_THREADS;
use crate::vec_env::{Batch, Rows};
use bytemuck::{Pod, Zeroable};
use serde::{Serialize, de::DeserializeOwned};
use std::sync::Arc;

/// Envs per chunk of the struct-of-arrays layout (and GPU workgroup size).
pub const CHUNK: usize = 64;

/// What one control step of one env produced.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stepped {
    /// Reward of the step.
    pub reward: f32,
    /// The task reached a terminal state.
    pub terminated: bool,
    /// The model cut the episode short (a physics failure); time limits come from the kernel.
    pub truncated: bool,
}

impl Stepped {
    /// A step that did not cut the episode short.
    pub fn new(reward: f32, terminated: bool) -> Self {
        Self {
            reward,
            terminated,
            truncated: false,
        }
    }
}

/// A task's verdict on one control step: [`Stepped`]'s reward and end, plus
/// success and the family's cause of an early end (`C`, code 0 = none) for `info`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepResult<C> {
    /// Reward of the step.
    pub reward: f32,
    /// The episode ended (a crash, or the task is done).
    pub terminated: bool,
    /// The task is done.
    pub success: bool,
    /// Why the episode ended early, if it did.
    pub crash: C,
}

impl<C> StepResult<C> {
    /// The step as the kernel sees it (no truncation: time limits come from the kernel).
    pub fn stepped(&self) -> Stepped {
        Stepped::new(self.reward, self.terminated)
    }
}

/// Writes a step's `info`: the family's metrics (`keys` with their `values`)
/// and, after a step (`ended`: its success and crash code, 0 = none), `success` and `crash`.
pub fn write_info(
    info: &mut Info,
    keys: &[&'static str],
    values: &[f32],
    ended: Option<(bool, u8)>,
) {
    info.clear();
    for (key, &value) in keys.iter().zip(values) {
        info.set(key, f64::from(value));
    }
    if let Some((success, crash)) = ended {
        info.set("success", f64::from(u8::from(success)));
        info.set("crash", f64::from(crash));
    }
}

/// One env family's physics and task on a single env's state, for [`ChunkedKernel`].
pub trait ChunkedModel: Send + Sync + 'static {
    /// One env's state: a plain block of `f32` fields (`#[repr(C)]`, no padding), read through [`fields`].
    type State: Pod + Send + Sync + Serialize + DeserializeOwned;
    /// Draws the start of an episode from the env's stream.
    fn draw(&self, rng: &mut EnvRng, options: ResetOptions) -> Result<Self::State>;
    /// Rejects states no episode can reach (for restored snapshots).
    fn check(&self, state: &Self::State) -> std::result::Result<(), String>;
    /// One control step with `action` (already validated as finite): returns
    /// the reward and how the episode ends, if it does, and writes the step's info.
    fn step(&self, state: &mut Self::State, action: &[f32], info: &mut Info) -> Stepped;
    /// Writes the info of a freshly started episode.
    fn start_info(&self, state: &Self::State, info: &mut Info);
    /// Writes the observation.
    fn observe(&self, state: &Self::State, obs: &mut [f32]);
    /// Draws the env as it is now.
    fn scene(&self, state: &Self::State, scene: &mut Scene);
}

/// A state's fields as one flat slice, in declaration order.
pub fn fields<S: Pod>(state: &S) -> &[f32] {
    bytemuck::cast_slice(std::slice::from_ref(state))
}

/// A state's fields as one mutable flat slice.
pub fn fields_mut<S: Pod>(state: &mut S) -> &mut [f32] {
    bytemuck::cast_slice_mut(std::slice::from_mut(state))
}

/// Floats of one state of `M`.
pub fn state_len<M: ChunkedModel>() -> usize {
    std::mem::size_of::<M::State>() / 4
}

/// Rejects a state to restore: whatever the model refuses, or a non-finite field.
pub fn validate<M: ChunkedModel>(model: &M, state: &M::State) -> Result<()> {
    model.check(state).map_err(Error::State)?;
    match fields(state).iter().position(|v| !v.is_finite()) {
        Some(f) => Err(Error::State(format!(
            "field {f} of the state is not finite"
        ))),
        None => Ok(()),
    }
}

/// Floats needed to store `n` envs of `M`: whole chunks.
pub fn chunked_len<M: ChunkedModel>(n: usize) -> usize {
    n.div_ceil(CHUNK) * CHUNK * state_len::<M>()
}

/// Reads lane `lane` of a chunk (`LEN × CHUNK` floats).
pub fn load<M: ChunkedModel>(chunk: &[f32], lane: usize) -> M::State {
    let mut s = M::State::zeroed();
    for (f, v) in fields_mut(&mut s).iter_mut().enumerate() {
        *v = chunk[f * CHUNK + lane];
    }
    s
}

/// Writes lane `lane` of a chunk.
pub fn store<M: ChunkedModel>(state: &M::State, chunk: &mut [f32], lane: usize) {
    for (f, v) in fields(state).iter().enumerate() {
        chunk[f * CHUNK + lane] = *v;
    }
}

/// Steps N envs of one [`ChunkedModel`] on CPU threads.
pub struct ChunkedKernel<M: ChunkedModel> {
    spec: Arc<EnvSpec>,
    model: M,
    num_envs: usize,
    /// Chunked struct-of-arrays state.
    state: Vec<f32>,
    /// The start of each env's next episode.
    staged: Vec<M::State>,
    pool: WorkerPool,
}

/// The chunks, staged starts, commands, actions and batch rows of one thread.
struct Part<'a, M: ChunkedModel> {
    state: &'a mut [f32],
    staged: &'a [M::State],
    commands: &'a [u32],
    actions: &'a [f32],
    rows: Rows<'a>,
}

impl<M: ChunkedModel> Part<'_, M> {
    fn run(mut self, model: &M, action_dim: usize) {
        let block = CHUNK * state_len::<M>();
        for k in 0..self.commands.len() {
            let cmd = self.commands[k];
            if cmd == 0 {
                continue;
            }
            let chunk = &mut self.state[(k / CHUNK) * block..(k / CHUNK + 1) * block];
            let lane = k % CHUNK;
            let mut s = if cmd & command::RESET != 0 {
                self.staged[k]
            } else {
                load::<M>(chunk, lane)
            };
            if cmd & command::RESET != 0 {
                self.rows.clear_flags(k);
                model.start_info(&s, &mut self.rows.infos[k]);
            } else {
                let action = &self.actions[k * action_dim..(k + 1) * action_dim];
                let out = model.step(&mut s, action, &mut self.rows.infos[k]);
                let truncated = out.truncated || cmd & command::LAST != 0;
                self.rows.reward[k] = out.reward;
                self.rows.terminated[k] = out.terminated;
                self.rows.truncated[k] = truncated;
                self.rows.has_final[k] = false;
                if cmd & command::SAME_STEP != 0 && (out.terminated || truncated) {
                    model.observe(&s, self.rows.obs(k));
                    self.rows.keep_final(k);
                    s = self.staged[k];
                    model.start_info(&s, &mut self.rows.infos[k]);
                }
            }
            model.observe(&s, self.rows.obs(k));
            store::<M>(&s, chunk, lane);
        }
    }
}

impl<M: ChunkedModel> ChunkedKernel<M> {
    /// `num_envs` envs of `spec`, stepped by `model` on `threads` worker threads.
    pub fn new(spec: Arc<EnvSpec>, model: M, num_envs: usize, threads: usize) -> Result<Self> {
        let threads = threads.clamp(1, MAX_THREADS).min(num_envs.div_ceil(CHUNK));
        let pool = WorkerPool::new(threads)
            .map_err(|e| Error::Shape(format!("cannot start {threads} worker threads: {e}")))?;
        Ok(Self {
            spec,
            model,
            num_envs,
            state: vec![0.0; chunked_len::<M>(num_envs)],
            staged: vec![M::State::zeroed(); num_envs],
            pool,
        })
    }

    /// Number of worker threads.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// The model the kernel steps.
    pub fn model(&self) -> &M {
        &self.model
    }

    fn chunk(&self, env: usize) -> &[f32] {
        let block = CHUNK * state_len::<M>();
        &self.state[(env / CHUNK) * block..(env / CHUNK + 1) * block]
    }
}

impl<M: ChunkedModel> Kernel for ChunkedKernel<M> {
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
        self.staged[env] = *start;
        Ok(())
    }

    fn run(&mut self, commands: &[u32], actions: &[f32], batch: &mut Batch) -> Result<()> {
        let n = self.num_envs;
        let action_dim = self.spec.action_space.flat_dim();
        let block = CHUNK * state_len::<M>();
        let chunks = n.div_ceil(CHUNK);
        let threads = self.pool.threads();
        let mut parts: [Option<Part<'_, M>>; MAX_THREADS] = std::array::from_fn(|_| None);
        let mut state = self.state.as_mut_slice();
        let mut staged = self.staged.as_slice();
        let mut commands = commands;
        let mut actions = actions;
        let mut rows = batch.rows_mut();
        let mut done = 0;
        for (t, part) in parts.iter_mut().enumerate().take(threads) {
            let end = ((t + 1) * chunks / threads * CHUNK).min(n);
            let size = end - done;
            let (s_head, s_tail) = state.split_at_mut(size.div_ceil(CHUNK) * block);
            let (st_head, st_tail) = staged.split_at(size);
            let (c_head, c_tail) = commands.split_at(size);
            let (a_head, a_tail) = actions.split_at((size * action_dim).min(actions.len()));
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
        let model = &self.model;
        self.pool
            .run_parts(parts, &|part| part.run(model, action_dim));
        Ok(())
    }

    fn state(&self, env: usize) -> Result<M::State> {
        Ok(load::<M>(self.chunk(env), env % CHUNK))
    }

    fn set_state(&mut self, env: usize, state: &M::State, batch: &mut Batch) -> Result<()> {
        validate(&self.model, state)?;
        let block = CHUNK * state_len::<M>();
        let chunk = &mut self.state[(env / CHUNK) * block..(env / CHUNK + 1) * block];
        store::<M>(state, chunk, env % CHUNK);
        self.model.observe(state, batch.rows_mut().obs(env));
        Ok(())
    }

    fn scene(&self, env: usize, scene: &mut Scene) -> Result<()> {
        let state = self.state(env)?;
        self.model.scene(&state, scene);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A three-float state, enough to check the layout.
    struct Triple;

    impl ChunkedModel for Triple {
        type State = [f32; 3];
        fn draw(&self, _: &mut EnvRng, _: ResetOptions) -> Result<[f32; 3]> {
            Ok([0.0; 3])
        }
        fn check(&self, _: &[f32; 3]) -> std::result::Result<(), String> {
            Ok(())
        }
        fn step(&self, _: &mut [f32; 3], _: &[f32], _: &mut Info) -> Stepped {
            Stepped::new(0.0, false)
        }
        fn start_info(&self, _: &[f32; 3], _: &mut Info) {}
        fn observe(&self, _: &[f32; 3], _: &mut [f32]) {}
        fn scene(&self, _: &[f32; 3], _: &mut Scene) {}
    }

    #[test]
    fn load_inverts_store_in_every_lane_and_fields_run_in_chunks() {
        let mut chunk = vec![0.0; CHUNK * 3];
        store::<Triple>(&[0.5, 1.5, 2.5], &mut chunk, 5);
        assert_eq!(load::<Triple>(&chunk, 5), [0.5, 1.5, 2.5]);
        assert_eq!(load::<Triple>(&chunk, 4), [0.0; 3]);
        assert_eq!(chunk[CHUNK + 5], 1.5, "field 1 of lane 5");
        assert_eq!(chunked_len::<Triple>(65), 2 * CHUNK * 3, "whole chunks");
    }
}
