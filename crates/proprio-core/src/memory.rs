//! Memory checks before large allocations: a batch, a rollout or a replay
//! buffer that cannot fit is refused with its size and the machine's free
//! memory, instead of the kernel killing the process half-way through.
//!
//! "Available" is the smaller of Linux's `MemAvailable` and, inside a cgroup
//! with a limit (a container, a CI job), the limit minus what is in use. On
//! other systems nothing is known and only the allocation itself is checked
//! (with `try_reserve`, so even then an impossible size is an error, not an abort).

use crate::error::{Error, Result};

/// Bytes this process can still allocate without swapping or being killed (`None`: unknown).
pub fn available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let system = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb.saturating_mul(1024))?;
    Some(cgroup_headroom().map_or(system, |c| c.min(system)))
}

/// `memory.max − memory.current` of this process's cgroup (v2), when it has a limit.
fn cgroup_headroom() -> Option<u64> {
    let read = |name: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{name}")).ok();
    let max = read("memory.max")?.trim().parse::<u64>().ok()?;
    let current = read("memory.current")?.trim().parse::<u64>().ok()?;
    Some(max.saturating_sub(current))
}

/// A byte count for people: `12.3 GB`, `512 MB`, `40 kB`.
pub fn human(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Refuses `bytes` for `what` when they exceed the memory available now.
pub fn check(what: &str, bytes: u128) -> Result<()> {
    check_against(what, bytes, available())
}

/// [`check`] against a given amount of available memory (`None`: unknown, accept).
pub fn check_against(what: &str, bytes: u128, available: Option<u64>) -> Result<()> {
    match available {
        Some(free) if bytes > u128::from(free) => Err(Error::Memory {
            what: what.into(),
            needed: human(bytes),
            available: human(u128::from(free)),
        }),
        _ => Ok(()),
    }
}

/// `n` copies of `value`, reserved with `try_reserve_exact` so an impossible size is an error.
pub fn filled<T: Clone>(what: &str, n: usize, value: T) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| Error::Memory {
        what: what.into(),
        needed: human(n as u128 * std::mem::size_of::<T>() as u128),
        available: available().map_or_else(|| "unknown".into(), |a| human(u128::from(a))),
    })?;
    v.resize(n, value);
    Ok(v)
}

/// `a × b × c` in bytes, without overflow.
pub fn bytes_of(counts: &[usize], size: usize) -> u128 {
    counts.iter().fold(size as u128, |acc, &c| acc * c as u128)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_more_than_available_and_names_both_sizes() {
        let err = check_against("a batch of 10 envs", 3_000_000_000, Some(2_000_000_000))
            .unwrap_err()
            .to_string();
        assert!(err.contains("a batch of 10 envs"), "{err}");
        assert!(err.contains("3.0 GB") && err.contains("2.0 GB"), "{err}");
        assert!(check_against("x", 1_000, Some(2_000)).is_ok());
        assert!(check_against("x", u128::MAX, None).is_ok());
    }

    #[test]
    fn this_machine_reports_some_free_memory() {
        if cfg!(target_os = "linux") {
            assert!(available().is_some_and(|a| a > 1 << 20));
        }
    }

    #[test]
    fn an_impossible_vector_is_an_error_not_an_abort() {
        let err = filled("huge", usize::MAX / 2, 0u64).unwrap_err();
        assert!(matches!(err, Error::Memory { .. }), "{err}");
        assert_eq!(filled("small", 3, 7u8).unwrap(), vec![7, 7, 7]);
    }

    #[test]
    fn sizes_multiply_without_overflow() {
        assert_eq!(bytes_of(&[usize::MAX, 4], 8), usize::MAX as u128 * 32);
        assert_eq!(human(999), "999 B");
        assert_eq!(human(1_500_000), "1.5 MB");
    }
}
