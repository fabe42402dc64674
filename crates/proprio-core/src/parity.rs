//! The CPU ≡ GPU harness every batched family's parity test calls: both
//! backends of one env from the same seed, stepped with the same actions,
//! envs whose discrete events went the other way re-synced from the CPU, a
//! snapshot moved across backends halfway.
//!
//! Without a wgpu adapter a test is skipped, unless `PROPRIO_REQUIRE_GPU=1`
//! (set by `.ci/run`) makes that a failure.

use crate::agent::{ActMode, Agent};
use crate::error::Result;
use crate::registry::Registry;
use crate::rng::episode_rng;
use crate::vec_env::{AutoresetMode, Backend, Batch, VecEnv, VecOptions};
use rand::RngExt;
use serde_json::Value;

/// `agent`'s deterministic actions plus uniform noise of `width` (±`width`/2)
/// from a fixed stream, clipped to [−1, 1]: actions for [`Pair::drive`] that
/// leave the states the clean policy visits.
pub fn noisy(agent: &mut dyn Agent, width: f32) -> impl FnMut(&Batch, &mut [f32]) + '_ {
    let mut rng = episode_rng(1, 0, 0);
    move |batch, actions| {
        agent
            .act(&batch.obs, actions, ActMode::Deterministic)
            .expect("the scripted agent acts on its own env's observations");
        for a in actions.iter_mut() {
            *a = (*a + width * (rng.random::<f32>() - 0.5)).clamp(-1.0, 1.0);
        }
    }
}

/// `|a − b| ≤ tol · max(1, |a|, |b|)`: relative, with an absolute floor for components near 0.
pub fn close(a: f32, b: f32, tol: f32) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// `|a − b| / max(1, |a|, |b|)`, the measure [`close`] bounds.
pub fn relative(a: f32, b: f32) -> f32 {
    (a - b).abs() / a.abs().max(b.abs()).max(1.0)
}

/// For each row of `dim` components: whether it differs beyond `tol`.
pub fn differing(cpu: &[f32], gpu: &[f32], dim: usize, tol: f32) -> Vec<bool> {
    cpu.chunks(dim)
        .zip(gpu.chunks(dim))
        .map(|(a, b)| a.iter().zip(b).any(|(x, y)| !close(*x, *y, tol)))
        .collect()
}

/// The discrete outcome of env `i`'s step: its flags and the info `keys`
/// (from its final info when the episode ended), the events that may go
/// either way on two backends when their trigger is within rounding of a threshold.
pub fn events<const K: usize>(
    b: &Batch,
    i: usize,
    keys: [&str; K],
) -> (bool, bool, bool, [Option<f64>; K]) {
    let info = if b.has_final[i] {
        &b.final_infos[i]
    } else {
        &b.infos[i]
    };
    (
        b.terminated[i],
        b.truncated[i],
        b.has_final[i],
        keys.map(|k| info.get(k)),
    )
}

/// `result`, or `None` with a line on stderr when there is no GPU and none is required.
///
/// # Panics
/// When `PROPRIO_REQUIRE_GPU` is set and `result` is an error.
pub fn gpu_or_skip<T>(result: Result<T>) -> Option<T> {
    match result {
        Ok(v) => Some(v),
        Err(e) if std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() => {
            eprintln!("skipping the CPU/GPU parity test: {e}");
            None
        }
        Err(e) => panic!("PROPRIO_REQUIRE_GPU is set but: {e}"),
    }
}

/// The two backends of one env, `n` envs each, same-step autoreset, 2 CPU threads.
pub struct Pair {
    /// The reference.
    pub cpu: Box<dyn VecEnv>,
    /// Its GPU twin.
    pub gpu: Box<dyn VecEnv>,
}

impl Pair {
    /// Both backends of `id` under `config`; `None` when skipped (see [`gpu_or_skip`]).
    ///
    /// # Panics
    /// When the CPU env cannot be built.
    pub fn new(registry: &Registry, id: &str, config: &Value, n: usize) -> Option<Self> {
        let make = |backend| {
            let options = VecOptions {
                autoreset: AutoresetMode::SameStep,
                threads: Some(2),
                backend,
            };
            registry.make_vec(id, n, config, options)
        };
        let gpu = gpu_or_skip(make(Backend::Gpu))?;
        let cpu = make(Backend::Cpu).expect("the CPU env builds");
        Some(Self { cpu, gpu })
    }

    /// Runs `steps` steps from seed 5: first observations agree within 1e-4;
    /// each step `act` writes the actions from the CPU's batch, `check`
    /// returns the envs to re-sync from the CPU (a threshold event gone the
    /// other way); halfway env 3's state moves from the GPU to both. Returns
    /// how many env-steps were re-synced.
    ///
    /// # Panics
    /// On a backend error or first observations that differ.
    pub fn drive(
        &mut self,
        steps: usize,
        mut act: impl FnMut(&Batch, &mut [f32]),
        mut check: impl FnMut(usize, &dyn VecEnv, &dyn VecEnv) -> Vec<usize>,
    ) -> usize {
        let (cpu, gpu) = (&mut self.cpu, &mut self.gpu);
        let id = cpu.spec().id.clone();
        cpu.reset(Some(5), None).expect("cpu reset");
        gpu.reset(Some(5), None).expect("gpu reset");
        assert!(
            cpu.batch()
                .obs
                .iter()
                .zip(&gpu.batch().obs)
                .all(|(a, b)| close(*a, *b, 1e-4)),
            "{id}: first observations"
        );
        let width = cpu.spec().action_space.flat_dim();
        let mut actions = vec![0.0; cpu.num_envs() * width];
        let mut resynced = 0;
        for step in 1..=steps {
            act(cpu.batch(), &mut actions);
            cpu.step(&actions).expect("cpu step");
            gpu.step(&actions).expect("gpu step");
            let resync = check(step, cpu.as_ref(), gpu.as_ref());
            resynced += resync.len();
            for i in resync {
                let state = cpu.snapshot(i).expect("cpu snapshot");
                gpu.restore(&state, &[i]).expect("gpu restore");
            }
            if step == steps / 2 {
                // A snapshot read from the GPU restores on the CPU and vice versa.
                let from_gpu = gpu.snapshot(3).expect("gpu snapshot");
                assert_eq!(from_gpu.episode, cpu.snapshot(3).expect("cpu").episode);
                cpu.restore(&from_gpu, &[3]).expect("cpu restore");
                gpu.restore(&from_gpu, &[3]).expect("gpu restore");
            }
        }
        resynced
    }
}
