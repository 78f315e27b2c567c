//! `Fetcher::prepare` end to end: paths of every kind, base64, URLs against local servers
//! (wiremock, and a raw TCP server for what wiremock cannot send), the SSRF guard, spooling,
//! and the verified stream. Paths and base64 in `local`, which paths may be read in `paths`,
//! URLs in `urls`, the guard and raw-server cases in `raw`.

mod local;
mod paths;
mod raw;
mod urls;

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use md5::{Digest, Md5};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use serde_json::{Map, Value};

use super::*;

/// What a caller is shown of an error: whose doing it is, the message and the context.
struct Seen {
    code: Blame,
    message: String,
    details: Map<String, Value>,
}

impl From<SourceError> for Seen {
    fn from(e: SourceError) -> Self {
        Seen {
            code: e.blame(),
            message: e.to_string(),
            details: e.context(),
        }
    }
}

/// A fresh directory, removed at the end of the test.
struct TestDir(tempfile::TempDir);

impl TestDir {
    fn new() -> Self {
        TestDir(
            tempfile::Builder::new()
                .prefix("zotero-mcp-sources-test-")
                .tempdir()
                .unwrap(),
        )
    }
    fn path(&self) -> &Path {
        self.0.path()
    }
    fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, content).unwrap();
        p
    }
    fn entries(&self) -> usize {
        std::fs::read_dir(self.path()).unwrap().count()
    }
}

fn config(max: u64, allow_private: bool, temp_dir: &Path) -> SourcesConfig {
    SourcesConfig {
        timeout: Duration::from_secs(5),
        max_bytes: max,
        policy: guard::AddressPolicy::from_config(allow_private),
        temp_dir: temp_dir.to_path_buf(),
        upload_roots: Vec::new(),
    }
}

fn fetcher(max: u64, allow_private: bool, temp_dir: &Path) -> Fetcher {
    Fetcher::new(&config(max, allow_private, temp_dir)).unwrap()
}

/// A fetcher whose `file_path` may read only below `roots` (`ZOTERO_UPLOAD_ROOTS`, resolved
/// as the server resolves it at start-up).
fn fetcher_in(roots: &[&Path], temp_dir: &Path) -> Fetcher {
    let mut c = config(1 << 20, false, temp_dir);
    c.upload_roots = roots
        .iter()
        .map(|r| std::fs::canonicalize(r).unwrap())
        .collect();
    Fetcher::new(&c).unwrap()
}

fn md5_hex(data: &[u8]) -> String {
    format!("{:x}", Md5::digest(data))
}

/// Everything `file.stream()` hands out (`chunk` 0), or a stream in chunks of `chunk` bytes.
async fn read_all(file: &PreparedFile, chunk: usize) -> Result<Vec<u8>, std::io::Error> {
    let mut s = match chunk {
        0 => file.stream(),
        n => file.stream_in(n),
    };
    let mut out = Vec::new();
    while let Some(item) = s.next().await {
        out.extend_from_slice(&item?);
    }
    Ok(out)
}

async fn prep(f: &Fetcher, spec: SourceSpec) -> Result<PreparedFile, SourceError> {
    f.prepare(spec, PrepareOptions::default(), &CancellationToken::new())
        .await
}

fn is_root() -> bool {
    // A file with no permissions is still readable by root.
    let dir = TestDir::new();
    let p = dir.file("probe", b"x");
    set_mode(&p, 0o000);
    std::fs::File::open(&p).is_ok()
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}
