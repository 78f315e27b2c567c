//! Storage state: files per item, the registered files, the fake S3 bucket's objects, queued
//! uploads and the quota; and the test API to inspect and configure them.

use std::collections::HashMap;
use std::time::Instant;

use base64::Engine;
use serde_json::Value;

use super::files::{BUCKET_PATH, DEFAULT_QUOTA};
use super::util::{md5_hex, random_hex32, unhex};
use super::Recorded;

/// A file attached to an item (`storageFileItems`).
#[derive(Debug, Clone)]
pub(crate) struct ItemFile {
    pub(crate) hash: String,
    pub(crate) size: u64,
}

/// An object in the fake bucket (key = MD5 of the uploaded file).
#[derive(Debug, Clone)]
pub(crate) struct S3Object {
    pub(crate) bytes: Option<Vec<u8>>,
}

/// An authorized upload (`storageUploadQueue`).
#[derive(Debug, Clone)]
pub(crate) struct Upload {
    pub(crate) hash: String,
    pub(crate) filename: String,
    pub(crate) zip: bool,
    pub(crate) item_hash: Option<String>,
    pub(crate) item_filename: Option<String>,
    pub(crate) size: u64,
    pub(crate) mtime: String,
    pub(crate) content_type: Option<String>,
    pub(crate) charset: Option<String>,
    pub(crate) created: Instant,
}

/// Storage state: files per item, known files, the bucket, queued uploads, quota.
pub(crate) struct FileStore {
    pub(crate) item_files: HashMap<String, ItemFile>,
    /// `storageFiles`: registered files by (hash, zip) with their size.
    pub(crate) known: HashMap<(String, bool), u64>,
    pub(crate) s3: HashMap<String, S3Object>,
    pub(crate) uploads: HashMap<String, Upload>,
    /// Every upload key handed out, in order.
    pub(crate) issued: Vec<String>,
    pub(crate) quota: u64,
    pub(crate) keep_bytes: bool,
    /// Signs upload policies, so the bucket can tell its own from forged ones.
    pub(crate) secret: String,
}

impl FileStore {
    /// Files of the library's attachments that already have one (`md5` and an enclosure).
    pub(crate) fn new(items: &[Value]) -> FileStore {
        let mut fs = FileStore {
            item_files: HashMap::new(),
            known: HashMap::new(),
            s3: HashMap::new(),
            uploads: HashMap::new(),
            issued: Vec::new(),
            quota: DEFAULT_QUOTA,
            keep_bytes: true,
            secret: random_hex32(),
        };
        for i in items {
            let (Some(md5), Some(size)) = (
                i["data"]["md5"].as_str(),
                i["links"]["enclosure"]["length"].as_u64(),
            ) else {
                continue;
            };
            let key = i["key"].as_str().unwrap_or("").to_string();
            fs.item_files.insert(
                key,
                ItemFile {
                    hash: md5.into(),
                    size,
                },
            );
            fs.known.insert((md5.into(), false), size);
            fs.s3.insert(md5.into(), S3Object { bytes: None });
        }
        fs
    }

    /// Bytes used by the library's files (each attachment counts, as the server's triggers do).
    pub(crate) fn usage(&self) -> u64 {
        self.item_files.values().map(|f| f.size).sum()
    }

    /// The upload policy's signature (64 hex digits, like AWS SigV4).
    pub(crate) fn sign(&self, policy_b64: &str) -> String {
        let a = md5_hex(format!("{}{policy_b64}", self.secret).as_bytes());
        let b = md5_hex(format!("{policy_b64}{}", self.secret).as_bytes());
        format!("{a}{b}")
    }
}

/// Base64 of the 16 bytes of a hex MD5 (the `Content-MD5` form field).
pub(crate) fn b64_md5(hex: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(unhex(hex).unwrap_or_default())
}

/// A file stored for an attachment, as the test sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredFile {
    /// The bytes, if they were uploaded through the bucket while
    /// [`Emulator::keep_file_bytes`] was on (`None` for library fixtures and when off).
    pub bytes: Option<Vec<u8>>,
    /// The item's `md5` (of the file itself, also for ZIP uploads).
    pub md5: String,
    pub size: u64,
    pub filename: String,
    pub content_type: String,
    /// Milliseconds, as the client sent them.
    pub mtime: u64,
}

impl super::Emulator {
    /// The file stored for an attachment, if it has one.
    pub fn file(&self, key: &str) -> Option<StoredFile> {
        let st = self.state.lock().unwrap();
        let f = st.files.item_files.get(key)?;
        let item = st.items.iter().find(|i| i["key"] == key)?;
        let d = &item["data"];
        Some(StoredFile {
            bytes: st.files.s3.get(&f.hash).and_then(|o| o.bytes.clone()),
            md5: d["md5"].as_str().unwrap_or(&f.hash).to_string(),
            size: f.size,
            filename: d["filename"].as_str().unwrap_or("").to_string(),
            content_type: d["contentType"].as_str().unwrap_or("").to_string(),
            mtime: d["mtime"].as_u64().unwrap_or(0),
        })
    }

    /// The storage quota in bytes (default 300 MB, the free plan). The server compares in
    /// megabytes rounded to one decimal, and reports the quota in MB.
    pub fn set_storage_quota(&self, bytes: u64) {
        self.state.lock().unwrap().files.quota = bytes;
    }

    /// Bytes used by stored files (every attachment with a file counts, duplicates too).
    pub fn storage_usage(&self) -> u64 {
        self.state.lock().unwrap().files.usage()
    }

    /// `false`: uploads keep only their MD5 and size (for huge benchmark files); downloads of
    /// such files answer 404 `NoSuchKey`. Default `true`.
    pub fn keep_file_bytes(&self, keep: bool) {
        self.state.lock().unwrap().files.keep_bytes = keep;
    }

    /// Every upload key the emulator handed out (registered or not), oldest first.
    pub fn upload_keys(&self) -> Vec<String> {
        self.state.lock().unwrap().files.issued.clone()
    }

    /// Upload authorizations not yet registered.
    pub fn pending_uploads(&self) -> usize {
        self.state.lock().unwrap().files.uploads.len()
    }

    /// Requests that reached the fake S3 bucket (tests assert no Zotero key is sent there).
    pub fn bucket_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.path.starts_with(BUCKET_PATH.trim_end_matches('/')))
            .collect()
    }
}
