//! What a big upload costs: wall time, throughput and the server's memory for 50 MB and
//! 200 MB files from a path, and a 50 MB file from a URL (spooled to a temporary file), each
//! through the emulator's upload protocol into its fake bucket (which keeps only MD5 and size).
//!
//! A plain binary (`harness = false`): it prints figures and asserts nothing. The server is
//! driven with raw JSON-RPC lines over stdio, no MCP client library in between; a fresh
//! server process per upload, so each peak (`VmHWM`) belongs to one upload.
//! Run with `cargo build --release && cargo bench --bench upload`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{json, Value};
use support::Proc;
use zotero_emulator::{Emulator, HostedFile};

const MB: u64 = 1024 * 1024;
/// A regular item of the fixture library.
const PARENT: &str = "NLPML6K7";

/// `n` bytes of xorshift noise (incompressible, and distinct per seed).
fn fill(n: usize, seed: u64, mut sink: impl FnMut(&[u8])) {
    let mut x = seed | 1;
    let mut buf = Vec::with_capacity(1 << 20);
    let mut left = n;
    while left > 0 {
        buf.clear();
        while buf.len() < (1 << 20).min(left) {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            buf.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        buf.truncate((1 << 20).min(left));
        sink(&buf);
        left -= buf.len();
    }
}

/// Removes the bench's scratch directory (temp files, spools), whatever happens.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One measured upload.
struct Row {
    source: &'static str,
    size: u64,
    secs: f64,
    idle_rss: f64,
    peak: f64,
}

/// Uploads with `arguments` through a fresh server and measures it. The server spools to
/// `scratch/spool` and reads `file_path` only below `scratch` (ZOTERO_UPLOAD_ROOTS), so the
/// bench works wherever the system's temp directory is.
fn measure(
    bin: &Path,
    emu: &Emulator,
    scratch: &Path,
    source: &'static str,
    size: u64,
    arguments: Value,
) -> Row {
    let mut server = Proc::spawn(
        bin,
        &emu.uri(),
        &[
            ("ZOTERO_UPLOAD_MAX_BYTES", (512 * MB).to_string()),
            ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
            ("TMPDIR", scratch.join("spool").display().to_string()),
            ("ZOTERO_UPLOAD_ROOTS", scratch.display().to_string()),
        ],
    );
    server.initialize();
    server.request("tools/list", json!({}));
    let (idle_rss, _) = server.memory();
    let t = Instant::now();
    let v = server.request(
        "tools/call",
        json!({"name": "zotero_upload_attachment", "arguments": arguments}),
    );
    let secs = t.elapsed().as_secs_f64();
    let (_, peak) = server.memory();
    let env = &v["result"]["structuredContent"];
    assert_eq!(env["ok"], true, "upload failed: {env}");
    assert_eq!(env["data"]["size"], size, "{env}");
    let key = env["data"]["attachment_key"].as_str().unwrap_or("");
    let stored = emu.file(key).map(|f| f.size);
    assert_eq!(stored, Some(size), "the emulator stored another size");
    server.stop();
    Row {
        source,
        size,
        secs,
        idle_rss,
        peak,
    }
}

fn main() {
    let (bin, rt) = support::setup();
    let emu = rt.block_on(Emulator::start());
    emu.keep_file_bytes(false);
    emu.set_storage_quota(100 * 1024 * MB);

    let dir = std::env::temp_dir().join(format!("zotero-mcp-bench-{:016x}", rand::random::<u64>()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let scratch = Scratch(dir.clone());
    std::fs::create_dir_all(dir.join("spool")).expect("spool dir");

    let mut rows = Vec::new();
    for (mb, seed) in [(50u64, 1u64), (200, 2)] {
        let path = dir.join(format!("file-{mb}mb.pdf"));
        let mut w = BufWriter::new(std::fs::File::create(&path).expect("temp file"));
        fill((mb * MB) as usize, seed, |b| {
            w.write_all(b).expect("write temp file")
        });
        w.flush().expect("flush temp file");
        drop(w);
        let args = json!({"item_key": PARENT, "file_path": path});
        rows.push(measure(&bin, &emu, &dir, "file_path", mb * MB, args));
        let _ = std::fs::remove_file(&path);
    }

    let mut body = Vec::with_capacity((50 * MB) as usize);
    fill((50 * MB) as usize, 3, |b| body.extend_from_slice(b));
    emu.serve(
        "/web/bench-50mb.bin",
        HostedFile::new(body, "application/octet-stream"),
    );
    let args = json!({"item_key": PARENT, "file_url": emu.web_url("/web/bench-50mb.bin")});
    rows.push(measure(
        &bin,
        &emu,
        &dir,
        "file_url (spooled)",
        50 * MB,
        args,
    ));

    println!();
    println!("| source | size | wall time | throughput | idle RSS | peak RSS (VmHWM) |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &rows {
        let mb = r.size as f64 / MB as f64;
        println!(
            "| {} | {mb:.0} MiB | {:.2} s | {:.0} MiB/s | {:.1} MiB | {:.1} MiB |",
            r.source,
            r.secs,
            mb / r.secs,
            r.idle_rss,
            r.peak
        );
    }
    println!();
    println!(
        "Wall time is the whole tool call: hashing, the transfer to the emulator's bucket (in \
         this process, which receives and hashes the body too), registration. TMPDIR (the URL's \
         spool) is a scratch directory, removed with the temp files."
    );
    drop(scratch);
}
