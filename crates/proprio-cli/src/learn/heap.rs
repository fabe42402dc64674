//! glibc heap tuning for the learners: burn's CPU backend allocates and frees
//! megabyte-sized temporaries on every op, which glibc serves with fresh
//! `mmap`s by default — a page fault per touched page, about a quarter of a
//! transformer update's time (measured with `perf`; GRPO on
//! `language/arithmetic-v0` ran 35% faster with the heap kept). Only the
//! learner commands use it: kept pages also hold the fragments of physics
//! temporaries, and a long `proprio soak` of pick-cube crept up with it.

/// Serves blocks up to 32 MiB (glibc's largest allowed threshold; it refuses
/// more) from the heap, not one `mmap`/`munmap` each, and keeps the heap's top
/// until 1 GiB of it is free. True when glibc took every setting.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_freed_memory() -> bool {
    const MMAP_THRESHOLD: libc::c_int = 32 << 20;
    const TRIM_THRESHOLD: libc::c_int = 1 << 30;
    const TOP_PAD: libc::c_int = 256 << 20;
    // SAFETY: `mallopt` only sets glibc's allocator parameters; it is called
    // before the learner's threads exist.
    unsafe {
        [
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD),
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD),
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD),
        ]
        .iter()
        .all(|&accepted| accepted == 1)
    }
}

/// Other allocators need no tuning.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_memory() -> bool {
    true
}

#[cfg(test)]
mod tests {
    /// glibc silently refuses an `M_MMAP_THRESHOLD` above 32 MiB (the 256 MiB
    /// asked for until 2026-11-28 was refused, leaving tensors on `mmap`).
    #[test]
    fn glibc_takes_every_setting() {
        assert!(super::keep_freed_memory());
    }
}
