//! After warm-up, stepping a batched env (wrappers included) allocates nothing.

use proprio::serde_json::Value;
use proprio::wrappers::{NormalizeObservation, NormalizeReward, RecordEpisodeStatistics};
use proprio::{AutoresetMode, VecEnv, VecOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn stepping_allocates_nothing_after_warm_up() {
    for (id, mode) in [
        ("classic/cartpole-v1", AutoresetMode::NextStep),
        ("classic/cartpole-v1", AutoresetMode::SameStep),
        ("classic/pendulum-v1", AutoresetMode::SameStep),
        ("drones/hover-v0", AutoresetMode::NextStep),
        ("drones/gates-v0", AutoresetMode::SameStep),
    ] {
        let options = VecOptions {
            autoreset: mode,
            threads: Some(2),
            ..VecOptions::default()
        };
        let venv = proprio::make_vec(id, 256, &Value::Null, options).unwrap();
        let mut venv = NormalizeReward::new(
            NormalizeObservation::new(RecordEpisodeStatistics::new(venv, 100), None),
            0.99,
            Some(10.0),
        );
        venv.reset(Some(0), None).unwrap();
        let dim = venv.spec().action_space.flat_dim();
        let actions: Vec<f32> = (0..256 * dim).map(|k| (k % 2) as f32).collect();
        for _ in 0..600 {
            venv.step(&actions).unwrap();
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for _ in 0..600 {
            venv.step(&actions).unwrap();
        }
        let during = ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert_eq!(
            during, 0,
            "{id} ({mode}): {during} allocations in 600 steps"
        );
    }
}
