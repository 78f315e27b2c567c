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

#[path = "../tests/emulator/mod.rs"]
mod emulator;

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use emulator::{Emulator, HostedFile, API_KEY, USER_ID};
use serde_json::{json, Value};

const MB: u64 = 1024 * 1024;
/// A regular item of the fixture library.
const PARENT: &str = "NLPML6K7";

/// `$ZOTERO_MCP_BENCH_BIN` if set; else the shipped static binary
/// (`target/x86_64-unknown-linux-musl/release`) or `target/release/zotero-mcp`, whichever was
/// built; else the binary next to this bench's build dir.
fn server_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("ZOTERO_MCP_BENCH_BIN") {
        return PathBuf::from(bin);
    }
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    for built in [
        "x86_64-unknown-linux-musl/release/zotero-mcp",
        "release/zotero-mcp",
    ] {
        if target.join(built).is_file() {
            return target.join(built);
        }
    }
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/upload-<hash> → target/<profile>/zotero-mcp
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("zotero-mcp"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| panic!("no zotero-mcp binary; run `cargo build --release` first"))
}

/// A server process spoken to with JSON-RPC lines.
struct Proc {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Proc {
    fn spawn(bin: &Path, base: &str, tmp: &Path) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("ZOTERO_API_BASE", base)
            .env("ZOTERO_USER_ID", USER_ID.to_string())
            .env("ZOTERO_API_KEY", API_KEY)
            .env("ZOTERO_UPLOAD_MAX_BYTES", (512 * MB).to_string())
            .env("ZOTERO_FETCH_ALLOW_PRIVATE", "1")
            .env("TMPDIR", tmp)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn zotero-mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Proc {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("json");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write to server");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and reads lines until its answer.
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read from server");
            assert!(n > 0, "server closed stdout while waiting for answer {id}");
            let v: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if v["id"] == json!(id) {
                assert!(v.get("error").is_none(), "{method} failed: {v}");
                return v;
            }
        }
    }

    fn initialize(&mut self) {
        self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "upload-bench", "version": "0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        self.request("tools/list", json!({}));
    }

    /// `VmRSS` and `VmHWM` from `/proc/<pid>/status`, in MB.
    fn memory(&self) -> (f64, f64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        let kb = |name: &str| {
            status
                .lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse::<f64>().ok())
                .unwrap_or(f64::NAN)
        };
        (kb("VmRSS:") / 1024.0, kb("VmHWM:") / 1024.0)
    }

    fn stop(mut self) {
        drop(self.stdin);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

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

/// Uploads with `arguments` through a fresh server and measures it.
fn measure(
    bin: &Path,
    emu: &Emulator,
    tmp: &Path,
    source: &'static str,
    size: u64,
    arguments: Value,
) -> Row {
    let mut server = Proc::spawn(bin, &emu.uri(), tmp);
    server.initialize();
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
    // `cargo bench` passes `--bench`; nothing to parse.
    let bin = server_binary();
    println!("binary: {}", bin.display());

    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let emu = rt.block_on(Emulator::start());
    emu.keep_file_bytes(false);
    emu.set_storage_quota(100 * 1024 * MB);

    let dir = std::env::temp_dir().join(format!("zotero-mcp-bench-{:016x}", rand::random::<u64>()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let scratch = Scratch(dir.clone());
    let spool = dir.join("spool");
    std::fs::create_dir_all(&spool).expect("spool dir");

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
        rows.push(measure(&bin, &emu, &spool, "file_path", mb * MB, args));
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
        &spool,
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
