//! A scratch directory for one test, removed when the test ends (passed or
//! failed), so test runs leave nothing behind in the system's temp dir.
//! Shared by the test suites of several crates through `#[path]`.

use std::path::{Path, PathBuf};

/// An empty directory under the system's temp dir, deleted on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh directory named after the test and this process.
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("proprio-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
