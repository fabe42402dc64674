//! Running the `proprio` binary as a user does, shared by the CLI test suites.

use std::process::{Command, Output};

/// Runs `proprio` with `args` and waits for it.
pub fn proprio(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_proprio"))
        .args(args)
        .output()
        .unwrap()
}

/// Asserts a failed run: exit status 1, exactly one line on stderr
/// (`error: …` containing `needle`), no panic or backtrace.
pub fn assert_one_line_error(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "expected exit 1: {err}");
    assert_eq!(err.lines().count(), 1, "stderr must be one line:\n{err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("backtrace"),
        "{err}"
    );
}

/// Asserts a successful run, showing its stderr otherwise.
pub fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
