//! Tests that render skip, with a note, on a machine without any wgpu adapter.

/// The result, or `None` (with a note) on a machine without any wgpu adapter,
/// unless `PROPRIO_REQUIRE_GPU` is set.
pub fn rendered<T>(result: Result<T, proprio_reward::RewardError>) -> Option<T> {
    match result {
        Ok(data) => Some(data),
        Err(e)
            if e.to_string().contains("no GPU adapter")
                && std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() =>
        {
            eprintln!("skipped: {e}");
            None
        }
        Err(e) => panic!("{e}"),
    }
}
