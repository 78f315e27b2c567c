//! Opening the authorize page in the person's browser, best effort: `open` on macOS,
//! `rundll32 url.dll,FileProtocolHandler` on Windows (`start` goes through `cmd`, which
//! splits the URL at its `&`), `xdg-open` elsewhere. The URL is one argument, never parsed by
//! a shell; no opener (a container, a server) is not an error: the URL is printed anyway.

use std::process::{Command, Stdio};

/// Starts the platform's opener on `url`; whether one could be started.
pub fn open(url: &str) -> bool {
    let (program, args): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("rundll32", &["url.dll,FileProtocolHandler"])
    } else {
        ("xdg-open", &[])
    };
    let started = Command::new(program)
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            // Reaped off the way: the opener may outlive the wait for the browser.
            std::thread::spawn(move || child.wait());
            true
        }
        Err(_) => false,
    }
}
