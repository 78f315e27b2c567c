//! The Zotero Web API emulator of the integration tests, as a stand-alone process.
//!
//! Prints the emulator's base URI (use it as `ZOTERO_API_BASE`) on stdout as one line, then
//! serves until stdin closes or the process gets SIGTERM / Ctrl-C. The library is the default
//! one of `fixtures/library/`; the only accepted credentials are user 475425 with the key
//! `EmuKey0123456789abcdefAB`. Its fake arXiv (`<uri>/arxiv`) serves a small PDF for
//! `1706.03762v1`.
//!
//! ```sh
//! cargo run --example emulator            # prints e.g. http://127.0.0.1:41234
//! ```
//!
//! `.ci/packaging.sh` uses it to drive the static binary inside an empty chroot.

use std::io::Write;

use tokio::io::AsyncReadExt;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let emu = zotero_emulator::Emulator::start().await;
    let mut pdf = b"%PDF-1.4\n% zotero-mcp emulator sample\n".to_vec();
    pdf.extend((0..200_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    emu.add_arxiv("1706.03762v1", pdf);
    {
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{}", emu.uri())
            .and_then(|()| out.flush())
            .is_err()
        {
            eprintln!("emulator: cannot write the URI to stdout");
            return std::process::ExitCode::FAILURE;
        }
    }
    eprintln!(
        "emulator: serving {} (user {}), the desktop's local API at {}; stops when stdin \
         closes or on SIGTERM",
        emu.uri(),
        zotero_emulator::USER_ID,
        emu.local_uri()
    );

    let stdin_closed = async {
        let mut stdin = tokio::io::stdin();
        let mut buf = [0u8; 256];
        // Read and discard until EOF (or an error, which means the same: nobody is there).
        while let Ok(n) = stdin.read(&mut buf).await {
            if n == 0 {
                break;
            }
        }
    };
    let terminated = async {
        #[cfg(unix)]
        {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        }
        #[cfg(not(unix))]
        std::future::pending::<()>().await;
    };

    tokio::select! {
        () = stdin_closed => eprintln!("emulator: stdin closed, stopping"),
        () = terminated => eprintln!("emulator: SIGTERM, stopping"),
        r = tokio::signal::ctrl_c() => {
            if r.is_ok() {
                eprintln!("emulator: interrupted, stopping");
            }
        }
    }
    drop(emu);
    std::process::ExitCode::SUCCESS
}
