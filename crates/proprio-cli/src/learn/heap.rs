//! glibc heap tuning for the learners: burn's CPU backend allocates and frees
//! megabyte-sized temporaries on every op, which glibc serves with fresh
//! `mmap`s by default — a page fault per touched page, about a quarter of a
//! transformer update's time (measured with `perf`; GRPO on
//! `language/arithmetic-v0` ran 35% faster with the heap kept). Only the
//! learner commands use it: kept pages also hold the fragments of physics
//! temporaries, and a long `proprio soak` of pick-cube crept up with it.

/// Keeps freed blocks up to 256 MiB in the heap (no `mmap`/`munmap` per
/// tensor), and the heap's top from being returned to the kernel until 1 GiB is free.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub fn keep_freed_memory() {
    const MMAP_THRESHOLD: libc::c_int = 256 << 20;
    const TRIM_THRESHOLD: libc::c_int = 1 << 30;
    // SAFETY: `mallopt` only sets glibc's allocator parameters; it is called
    // once, before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        libc::mallopt(libc::M_TOP_PAD, MMAP_THRESHOLD);
    }
}

/// Other allocators need no tuning.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn keep_freed_memory() {}
