//! Shared by the benches: which server binary to measure, and a server process driven with
//! raw JSON-RPC lines over stdio (no MCP client library in between).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use zotero_emulator::{API_KEY, USER_ID};

/// `$ZOTERO_MCP_BENCH_BIN` if set; else the newer of the shipped static binary
/// (`target/x86_64-unknown-linux-musl/release`) and `target/release/zotero-mcp`; else the
/// binary next to this bench's build dir.
pub fn server_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("ZOTERO_MCP_BENCH_BIN") {
        return PathBuf::from(bin);
    }
    // Whichever release build is newer: a stale musl binary must not be measured by
    // mistake after `cargo build --release`.
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let newest = [
        "x86_64-unknown-linux-musl/release/zotero-mcp",
        "release/zotero-mcp",
    ]
    .iter()
    .map(|built| target.join(built))
    .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
    .max_by_key(|(modified, _)| *modified);
    if let Some((_, bin)) = newest {
        return bin;
    }
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<bench>-<hash> → target/<profile>/zotero-mcp
    exe.parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("zotero-mcp"))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| panic!("no zotero-mcp binary; run `cargo build --release` first"))
}

/// The binary to measure (printed) and a runtime for the emulator. `cargo bench` passes
/// `--bench`; there is nothing to parse.
pub fn setup() -> (PathBuf, tokio::runtime::Runtime) {
    let bin = server_binary();
    println!("binary: {}", bin.display());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    (bin, rt)
}

/// A server process spoken to with JSON-RPC lines.
pub struct Proc {
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Proc {
    /// Starts `bin` against the emulator at `base`, with `extra` variables on top of the
    /// credentials (nothing inherited).
    pub fn spawn(bin: &Path, base: &str, extra: &[(&str, String)]) -> Proc {
        let mut cmd = Command::new(bin);
        cmd.env_clear()
            .env("ZOTERO_API_BASE", base)
            .env("ZOTERO_USER_ID", USER_ID.to_string())
            .env("ZOTERO_API_KEY", API_KEY);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::piped())
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

    pub fn send(&mut self, msg: &Value) {
        let mut line = serde_json::to_vec(msg).expect("json");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write to server");
        self.stdin.flush().expect("flush");
    }

    /// Sends a request and reads lines until its answer.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
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

    /// The next message the server writes.
    pub fn next_message(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).expect("read from server");
        assert!(n > 0, "server closed stdout");
        serde_json::from_str(&line).expect("a JSON-RPC line")
    }

    /// `initialize` and `notifications/initialized`; answers the `initialize` result.
    pub fn initialize(&mut self) -> Value {
        let answer = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "zotero-mcp-bench", "version": "0"}
            }),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// `VmRSS` and `VmHWM` of the server, in MB.
    pub fn memory(&self) -> (f64, f64) {
        memory(self.child.id())
    }

    pub fn stop(mut self) {
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

/// How many file descriptors process `pid` has open (sockets included).
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// `VmRSS` and `VmHWM` of process `pid` (from `/proc/<pid>/status`), in MB.
pub fn memory(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
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
