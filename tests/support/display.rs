//! A local X server for tests that open a window: the machine's own
//! display, or an Xvfb started for the test and stopped with it.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

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
    // Xvfb picks a free display itself and writes its number once it
    // accepts connections, so a stale socket or lock left by a killed
    // server (or a server of a test beside this one) is never taken for it.
    let mut server = Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "1024x768x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut number = String::new();
    let read = server
        .stdout
        .take()
        .map(|out| BufReader::new(out).read_line(&mut number));
    if !matches!(read, Some(Ok(n)) if n > 0) || number.trim().parse::<u32>().is_err() {
        let _ = server.kill();
        let _ = server.wait();
        return None;
    }
    let name = format!(":{}", number.trim());
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
