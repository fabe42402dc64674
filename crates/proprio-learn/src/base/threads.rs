//! The update's own thread pool: burn's matrix products split over the
//! threads of the pool they run in, so a config's `update_threads` sets them.

use crate::base::error::{LearnError, Result};

/// A pool of `threads` for an algorithm's update.
pub fn update_pool(threads: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| LearnError::Config(format!("cannot start {threads} update threads: {e}")))
}
