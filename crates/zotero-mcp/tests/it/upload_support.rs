//! Shared by the upload conformance tests: the environment that reaches the emulator's web
//! host and fake arXiv, temporary files, test bytes, and the check that an upload landed.
use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde_json::Value;

use crate::common::{env_for, in_process, Server};
use zotero_emulator::{Emulator, API_KEY, USER_ID};

/// The parent item most upload tests attach to.
pub const PARENT: &str = "NLPML6K7";

pub fn env(emu: &Emulator, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()));
    env.push(("ZOTERO_ARXIV_BASE".into(), emu.arxiv_base()));
    for (k, v) in extra {
        env.push((k.to_string(), v.to_string()));
    }
    env
}

pub async fn setup() -> (Emulator, Server) {
    let emu = Emulator::start().await;
    let server = in_process(&env(&emu, &[])).await;
    (emu, server)
}

/// A file in a fresh directory of its own; the directory goes when this is dropped.
/// Serializes as its path, so it can be a `file_path` argument as it is.
pub struct TempFile {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl TempFile {
    pub fn new(name: &str, bytes: &[u8]) -> TempFile {
        let dir = tempfile::Builder::new()
            .prefix("zotero-mcp-test-")
            .tempdir()
            .unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        TempFile { path, _dir: dir }
    }
}

impl std::ops::Deref for TempFile {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempFile {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl serde::Serialize for TempFile {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.path.serialize(s)
    }
}

pub fn temp_file(name: &str, bytes: &[u8]) -> TempFile {
    TempFile::new(name, bytes)
}

pub fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

pub fn md5_hex(b: &[u8]) -> String {
    format!("{:x}", Md5::digest(b))
}

pub fn attachments_of(emu: &Emulator, parent: &str) -> Vec<Value> {
    emu.children(parent)
        .into_iter()
        .filter(|c| c["data"]["itemType"] == "attachment")
        .collect()
}

/// Checks that the upload landed: one attachment item under the parent, with these bytes.
pub fn assert_stored(emu: &Emulator, data: &Value, content: &[u8]) -> Value {
    let key = data["attachment_key"].as_str().unwrap();
    let item = emu.item(key).expect("attachment item exists");
    assert_eq!(item["data"]["parentItem"], data["parent_item_key"]);
    assert_eq!(item["data"]["linkMode"], "imported_file");
    assert_eq!(item["data"]["md5"], md5_hex(content));
    let file = emu.file(key).expect("file stored");
    assert_eq!(file.size, content.len() as u64);
    assert_eq!(file.md5, md5_hex(content));
    assert_eq!(file.bytes.as_deref(), Some(content));
    assert_eq!(data["size"], content.len());
    assert_eq!(data["version"], item["version"]);
    item
}

/// Makes `n` identical calls at once through one server and returns their answers.
pub async fn concurrently(
    server: &std::sync::Arc<Server>,
    n: usize,
    tool: &'static str,
    args: Value,
) -> Vec<crate::common::Answer> {
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..n {
        let (server, args) = (server.clone(), args.clone());
        calls.spawn(async move { server.call(tool, args).await });
    }
    calls.join_all().await
}

/// Checks `n` answers to identical uploads: exactly one created the attachment, every other
/// one answers `already_attached` with the same key; the parent has exactly one such
/// attachment. Returns its key.
pub fn assert_one_attachment(emu: &Emulator, answers: &[crate::common::Answer]) -> String {
    let keys: Vec<&str> = answers
        .iter()
        .map(|a| a.expect_ok()["attachment_key"].as_str().unwrap())
        .collect();
    let created: Vec<&crate::common::Answer> = answers
        .iter()
        .filter(|a| a.data().get("already_attached").is_none())
        .collect();
    assert_eq!(created.len(), 1, "exactly one call created it: {keys:?}");
    let key = created[0].data()["attachment_key"].as_str().unwrap();
    for a in answers {
        assert_eq!(a.data()["attachment_key"], key, "{}", a.envelope);
        if a.data().get("already_attached").is_some() {
            assert_eq!(a.data()["already_attached"], true, "{}", a.envelope);
        }
    }
    let attached = attachments_of(emu, PARENT);
    assert_eq!(attached.len(), 1, "one attachment: {attached:?}");
    assert_eq!(attached[0]["key"], key);
    key.to_string()
}
