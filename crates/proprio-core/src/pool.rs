//! `WorkerPool`: persistent threads that run one batch job at a time, allocation-free.
//!
//! A job is split into `threads` parts; the caller runs part 0 itself and the
//! workers run the rest. Workers spin briefly before parking, because batch
//! steps arrive back to back and a futex wake-up costs as much as stepping
//! thousands of CartPoles. Dispatching allocates nothing (rayon's injector
//! queue allocates a block every 63 jobs).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle worker spins for the next job before parking.
const SPIN: Duration = Duration::from_micros(200);

/// A job with its lifetime erased; valid only while `WorkerPool::run` is on the stack.
#[derive(Clone, Copy)]
struct JobRef(*const (dyn Fn(usize) + Sync));

// SAFETY: the pointee is `Sync`, and `run` keeps it alive until every worker is done with it.
unsafe impl Send for JobRef {}

struct Shared {
    /// Bumped once per job; workers compare it with the last epoch they ran.
    epoch: AtomicU64,
    /// Workers that have not finished the current job.
    remaining: AtomicUsize,
    /// A worker's job panicked.
    panicked: AtomicBool,
    shutdown: AtomicBool,
    job: Mutex<Option<JobRef>>,
    wake: Condvar,
}

/// A fixed set of worker threads for data-parallel batch steps.
pub struct WorkerPool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
}

impl WorkerPool {
    /// Starts `threads - 1` workers (the caller is the remaining one).
    pub fn new(threads: usize) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            epoch: AtomicU64::new(0),
            remaining: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            job: Mutex::new(None),
            wake: Condvar::new(),
        });
        let workers = (1..threads.max(1))
            .map(|part| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("proprio-env-{part}"))
                    .spawn(move || worker(&shared, part))
            })
            .collect::<std::io::Result<Vec<_>>>()?;
        Ok(Self { shared, workers })
    }

    /// Number of parts a job is split into (workers plus the caller).
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Moves part `t` of `parts` to thread `t` and runs `job` on it (parts
    /// beyond `threads()` and empty ones are skipped); returns when all are done.
    pub fn run_parts<P: Send, const N: usize>(
        &self,
        parts: [Option<P>; N],
        job: &(dyn Fn(P) + Sync),
    ) {
        let slots = parts.map(Mutex::new);
        self.run(&|t| {
            if let Some(part) = slots.get(t).and_then(|slot| lock(slot).take()) {
                job(part);
            }
        });
    }

    /// Runs `job(part)` for every part in `0..threads()` and returns when all are done.
    pub fn run(&self, job: &(dyn Fn(usize) + Sync)) {
        if self.workers.is_empty() {
            job(0);
            return;
        }
        let shared = &*self.shared;
        // SAFETY: only the lifetime is erased; this function does not return before
        // `remaining` reaches zero, i.e. before every worker has stopped using `job`.
        let erased: *const (dyn Fn(usize) + Sync + 'static) = unsafe { std::mem::transmute(job) };
        *lock(&shared.job) = Some(JobRef(erased));
        shared
            .remaining
            .store(self.workers.len(), Ordering::Release);
        {
            let _guard = lock(&shared.job);
            shared.epoch.fetch_add(1, Ordering::AcqRel);
            shared.wake.notify_all();
        }
        let mine = catch_unwind(AssertUnwindSafe(|| job(0)));
        while shared.remaining.load(Ordering::Acquire) != 0 {
            std::hint::spin_loop();
        }
        *lock(&shared.job) = None;
        if let Err(payload) = mine {
            std::panic::resume_unwind(payload);
        }
        if shared.panicked.swap(false, Ordering::AcqRel) {
            panic!("a proprio worker thread panicked while stepping envs");
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn worker(shared: &Shared, part: usize) {
    let mut seen = 0u64;
    loop {
        let spin_until = Instant::now() + SPIN;
        while shared.epoch.load(Ordering::Acquire) == seen && Instant::now() < spin_until {
            for _ in 0..64 {
                std::hint::spin_loop();
            }
        }
        let mut guard = lock(&shared.job);
        while shared.epoch.load(Ordering::Acquire) == seen
            && !shared.shutdown.load(Ordering::Acquire)
        {
            guard = shared
                .wake
                .wait(guard)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        if shared.shutdown.load(Ordering::Acquire) {
            return;
        }
        seen = shared.epoch.load(Ordering::Acquire);
        let job = *guard;
        drop(guard);
        if let Some(JobRef(job)) = job {
            // SAFETY: `run` keeps the job alive until `remaining` drops to zero below.
            let job = unsafe { &*job };
            if catch_unwind(AssertUnwindSafe(|| job(part))).is_err() {
                shared.panicked.store(true, Ordering::Release);
            }
        }
        shared.remaining.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        {
            let _guard = lock(&self.shared.job);
            self.shared.shutdown.store(true, Ordering::Release);
            self.shared.wake.notify_all();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once_per_job() {
        let pool = WorkerPool::new(3).unwrap();
        let counts: Vec<AtomicUsize> = (0..3).map(|_| AtomicUsize::new(0)).collect();
        for _ in 0..1000 {
            pool.run(&|part| {
                counts[part].fetch_add(1, Ordering::Relaxed);
            });
        }
        for c in &counts {
            assert_eq!(c.load(Ordering::Relaxed), 1000);
        }
    }

    #[test]
    fn a_panicking_worker_is_reported_not_hung() {
        let pool = WorkerPool::new(2).unwrap();
        let result = catch_unwind(AssertUnwindSafe(|| pool.run(&|part| assert_ne!(part, 1))));
        assert!(result.is_err());
        let ran = AtomicUsize::new(0);
        pool.run(&|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(
            ran.load(Ordering::Relaxed),
            2,
            "the pool keeps working after a panic"
        );
    }
}
