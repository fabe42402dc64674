//! `ThreadedVecEnv`: N single [`Env`]s stepped as a [`VecEnv`] on a thread pool.
//!
//! The batch is split into one contiguous range of envs per thread. Each env
//! only touches its own rows and draws from its own random stream, so results
//! are identical for any thread count; when several envs fail, the error of
//! the lowest env index is reported, whatever the timing.

use crate::env::{Env, EnvSpec, Phase, ResetOptions, State};
use crate::error::{Error, Result};
use crate::pool::WorkerPool;
use crate::vec_env::{
    AutoresetMode, Batch, Rows, VecEnv, VecOptions, check_batch, check_env_indices, check_mask_len,
};
use std::sync::Mutex;

/// Most worker threads one vector env uses.
pub const MAX_THREADS: usize = 64;

/// Fewest envs per thread: smaller batches run on fewer threads, since waking a
/// worker costs more than stepping a few envs (and would take a core from the learner).
pub const MIN_ENVS_PER_THREAD: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Running,
    /// Next step resets this env (next-step mode).
    Pending,
    /// Waits for `reset_envs` (disabled mode).
    Over,
}

/// Runs N independent envs as one batch on a [`WorkerPool`].
pub struct ThreadedVecEnv<E: Env> {
    envs: Vec<E>,
    status: Vec<Status>,
    spec: EnvSpec,
    mode: AutoresetMode,
    batch: Batch,
    pool: WorkerPool,
}

/// The envs and batch rows of one contiguous range of envs.
struct Lanes<'a, E> {
    envs: &'a mut [E],
    status: &'a mut [Status],
    actions: &'a [f32],
    rows: Rows<'a>,
}

/// One env and its rows (row `k` of `rows`).
struct Lane<'a, 'r, E> {
    index: usize,
    env: &'a mut E,
    status: &'a mut Status,
    action: &'a [f32],
    rows: &'a mut Rows<'r>,
    k: usize,
}

impl<E> Lane<'_, '_, E> {
    fn reset(&mut self) -> Result<()>
    where
        E: Env,
    {
        let k = self.k;
        let obs = &mut self.rows.obs[k * self.rows.obs_dim..(k + 1) * self.rows.obs_dim];
        self.env
            .reset_into(None, None, obs, &mut self.rows.infos[k])
            .map_err(|e| e.at(self.index))
    }
}

impl<E: Env> Lanes<'_, E> {
    fn split(self, mid: usize, act_dim: usize) -> (Self, Self) {
        let (envs_a, envs_b) = self.envs.split_at_mut(mid);
        let (status_a, status_b) = self.status.split_at_mut(mid);
        let (act_a, act_b) = self.actions.split_at(mid * act_dim);
        let (rows_a, rows_b) = self.rows.split_at(mid);
        (
            Lanes {
                envs: envs_a,
                status: status_a,
                actions: act_a,
                rows: rows_a,
            },
            Lanes {
                envs: envs_b,
                status: status_b,
                actions: act_b,
                rows: rows_b,
            },
        )
    }

    /// Applies `f` to every env of the range in order, stopping at the first error.
    fn run<F>(mut self, act_dim: usize, f: &F) -> std::result::Result<(), (usize, Error)>
    where
        F: Fn(Lane<'_, '_, E>) -> Result<()>,
    {
        let first = self.rows.first;
        for (k, (env, status)) in self.envs.iter_mut().zip(self.status.iter_mut()).enumerate() {
            let index = first + k;
            f(Lane {
                index,
                env,
                status,
                action: &self.actions[k * act_dim..(k + 1) * act_dim],
                rows: &mut self.rows,
                k,
            })
            .map_err(|e| (index, e))?;
        }
        Ok(())
    }
}

impl<E: Env> ThreadedVecEnv<E> {
    /// Batches `envs` (all of the same spec); env `i` draws from stream `i`.
    pub fn new(mut envs: Vec<E>, options: VecOptions) -> Result<Self> {
        let first = envs
            .first()
            .ok_or_else(|| Error::Shape("a vector env needs at least one env".into()))?;
        let spec = first.spec().clone();
        for (i, env) in envs.iter_mut().enumerate() {
            env.set_env_index(i as u64);
        }
        let threads = options.worker_threads();
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(Error::Shape(format!(
                "threads must be in 1..={MAX_THREADS}, got {threads}"
            )));
        }
        let threads = threads.min(envs.len().div_ceil(MIN_ENVS_PER_THREAD));
        let pool = WorkerPool::new(threads)
            .map_err(|e| Error::Shape(format!("cannot start {threads} worker threads: {e}")))?;
        let n = envs.len();
        Ok(Self {
            batch: Batch::new(n, spec.observation_space.flat_dim())?,
            status: vec![Status::Running; n],
            envs,
            spec,
            mode: options.autoreset,
            pool,
        })
    }

    /// Number of worker threads (the requested number, capped at one per [`MIN_ENVS_PER_THREAD`] envs).
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// The envs, for inspection.
    pub fn envs(&self) -> &[E] {
        &self.envs
    }

    /// Runs `f` on every env, one contiguous range of envs per thread.
    fn for_each<F>(&mut self, actions: &[f32], f: F) -> Result<()>
    where
        F: Fn(Lane<'_, '_, E>) -> Result<()> + Sync,
    {
        let n = self.envs.len();
        let act_dim = if actions.is_empty() {
            0
        } else {
            self.spec.action_space.flat_dim()
        };
        let threads = self.pool.threads().min(n);
        let mut parts: [Option<Lanes<'_, E>>; MAX_THREADS] = std::array::from_fn(|_| None);
        let mut rest = Lanes {
            envs: &mut self.envs,
            status: &mut self.status,
            actions,
            rows: self.batch.rows_mut(),
        };
        for (k, part) in parts.iter_mut().enumerate().take(threads) {
            let size = (k + 1) * n / threads - k * n / threads;
            let (head, tail) = rest.split(size, act_dim);
            *part = Some(head);
            rest = tail;
        }
        let first_error: Mutex<Option<(usize, Error)>> = Mutex::new(None);
        self.pool.run_parts(parts, &|lanes| {
            if let Err((index, error)) = lanes.run(act_dim, &f) {
                let mut slot = first_error.lock().unwrap_or_else(|e| e.into_inner());
                if slot.as_ref().is_none_or(|(i, _)| index < *i) {
                    *slot = Some((index, error));
                }
            }
        });
        match first_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some((_, error)) => Err(error),
            None => Ok(()),
        }
    }

    fn reset_where(
        &mut self,
        mask: Option<&[bool]>,
        seed: Option<u64>,
        options: ResetOptions,
    ) -> Result<()> {
        self.for_each(&[], |lane| {
            if mask.is_some_and(|m| !m[lane.index]) {
                return Ok(());
            }
            let (k, d) = (lane.k, lane.rows.obs_dim);
            let obs = &mut lane.rows.obs[k * d..(k + 1) * d];
            lane.env
                .reset_into(seed, options, obs, &mut lane.rows.infos[k])
                .map_err(|e| e.at(lane.index))?;
            lane.rows.clear_flags(k);
            *lane.status = Status::Running;
            Ok(())
        })
    }
}

impl<E: Env> VecEnv for ThreadedVecEnv<E> {
    fn spec(&self) -> &EnvSpec {
        &self.spec
    }

    fn num_envs(&self) -> usize {
        self.envs.len()
    }

    fn autoreset_mode(&self) -> AutoresetMode {
        self.mode
    }

    fn reset(&mut self, seed: Option<u64>, options: ResetOptions) -> Result<()> {
        self.reset_where(None, seed, options)
    }

    fn reset_envs(&mut self, mask: &[bool], options: ResetOptions) -> Result<()> {
        check_mask_len(mask, self.envs.len())?;
        self.reset_where(Some(mask), None, options)
    }

    fn step(&mut self, actions: &[f32]) -> Result<()> {
        let status = &self.status;
        check_batch(&self.spec, self.envs.len(), actions, |i| match status[i] {
            Status::Over => Err(Error::EpisodeOver { env: Some(i) }),
            Status::Running | Status::Pending => Ok(()),
        })?;
        let mode = self.mode;
        self.for_each(actions, |mut lane| {
            let k = lane.k;
            if *lane.status == Status::Pending {
                lane.reset()?;
                lane.rows.clear_flags(k);
                *lane.status = Status::Running;
                return Ok(());
            }
            let d = lane.rows.obs_dim;
            let t = lane
                .env
                .step_into(
                    lane.action,
                    &mut lane.rows.obs[k * d..(k + 1) * d],
                    &mut lane.rows.infos[k],
                )
                .map_err(|e| e.at(lane.index))?;
            lane.rows.reward[k] = t.reward as f32;
            lane.rows.terminated[k] = t.terminated;
            lane.rows.truncated[k] = t.truncated;
            lane.rows.has_final[k] = false;
            if t.terminated || t.truncated {
                match mode {
                    AutoresetMode::NextStep => *lane.status = Status::Pending,
                    AutoresetMode::Disabled => *lane.status = Status::Over,
                    AutoresetMode::SameStep => {
                        lane.rows.keep_final(k);
                        lane.reset()?;
                    }
                }
            }
            Ok(())
        })
    }

    fn batch(&self) -> &Batch {
        &self.batch
    }

    fn batch_mut(&mut self) -> &mut Batch {
        &mut self.batch
    }

    fn snapshot(&self, env: usize) -> Result<State> {
        check_env_indices(&[env], self.envs.len())?;
        self.envs[env].snapshot()
    }

    fn scene(&self, env: usize, scene: &mut crate::Scene) -> Result<()> {
        check_env_indices(&[env], self.envs.len())?;
        self.envs[env].scene(scene)
    }

    fn restore(&mut self, state: &State, envs: &[usize]) -> Result<()> {
        check_env_indices(envs, self.envs.len())?;
        let status = match (state.phase, self.mode) {
            (Phase::Running, _) => Status::Running,
            (_, AutoresetMode::Disabled) => Status::Over,
            _ => Status::Pending,
        };
        let d = self.batch.obs_dim;
        for &i in envs {
            let obs = &mut self.batch.obs[i * d..(i + 1) * d];
            self.envs[i].restore(state, obs).map_err(|e| e.at(i))?;
            self.status[i] = status;
            self.batch.infos[i].clear();
            self.batch.rows_mut().clear_flags(i);
        }
        Ok(())
    }
}
