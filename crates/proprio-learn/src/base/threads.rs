//! The update's own thread pool: burn's matrix products split over the
//! threads of the pool they run in, so a config's `update_threads` sets them.
//! Work that already runs side by side on them (minibatch shards) keeps
//! each of its products on its own thread instead.

use crate::base::error::{LearnError, Result};
use std::cell::Cell;

/// A pool of `threads` for an algorithm's update.
pub fn update_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| LearnError::Config(format!("cannot start {threads} update threads: {e}")))
}

thread_local! {
    static ONE_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// `f()` with this thread's matrix products kept on it (not split over the pool).
pub fn on_this_thread<T>(f: impl FnOnce() -> T) -> T {
    let before = ONE_THREAD.replace(true);
    let out = f();
    ONE_THREAD.set(before);
    out
}

/// Whether a product may split over the pool's threads (not inside [`on_this_thread`]).
pub fn products_may_split() -> bool {
    !ONE_THREAD.get()
}
