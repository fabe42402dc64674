//! A local X server for tests that open a window: the machine's own
//! display, or an Xvfb started for the test and stopped with it.

use std::path::Path;
use std::process::{Child, Command};

/// A local X server: the machine's own display, or an Xvfb started for the test.
pub struct Display {
    pub name: String,
    _server: Option<Child>,
}

pub fn display() -> Option<Display> {
    if let Ok(name) = std::env::var("DISPLAY")
        && !name.is_empty()
    {
        return Some(Display {
            name,
            _server: None,
        });
    }
    let number = 90 + std::process::id() % 100;
    let name = format!(":{number}");
    let server = Command::new("Xvfb")
        .args([
            name.as_str(),
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let socket = format!("/tmp/.X11-unix/X{number}");
    for _ in 0..100 {
        if Path::new(&socket).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(Display {
        name,
        _server: Some(server),
    })
}

impl Drop for Display {
    fn drop(&mut self) {
        if let Some(server) = &mut self._server {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}
