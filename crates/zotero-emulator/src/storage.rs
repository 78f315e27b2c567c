//! Storage state shared by all libraries: the registered files, the fake S3 bucket's objects,
//! queued uploads and the quota of each user (a group's files count against its owner's);
//! and the test API to inspect and configure them. Files per item live in each library.

use std::collections::HashMap;
use std::time::Instant;

use super::libs::{Lib, LibraryId};
use super::util::{md5_hex, random_hex32, unhex};
use super::{Recorded, State, USER_ID};
use base64::Engine;

/// The free storage plan: 300 MB (`Zotero_Storage::$defaultQuota`).
pub(crate) const DEFAULT_QUOTA: u64 = 300 * 1024 * 1024;
/// The fake bucket's path on the emulator.
pub(crate) const BUCKET_PATH: &str = "/s3/zotero-uploads/";
/// How long an upload authorization's S3 policy is valid (`Zotero_Storage::
/// $s3PresignedRequestTTL`, used as `+N seconds` in `generateUploadPOSTParams`).
pub(crate) const POLICY_TTL_SECS: i64 = 3600;

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

/// Storage state: known files, the bucket, queued uploads, quotas.
pub(crate) struct FileStore {
    /// `storageFiles`: registered files by (hash, zip) with their size.
    pub(crate) known: HashMap<(String, bool), u64>,
    pub(crate) s3: HashMap<String, S3Object>,
    pub(crate) uploads: HashMap<String, Upload>,
    /// Every upload key handed out, in order.
    pub(crate) issued: Vec<String>,
    /// Quotas in bytes of users other than the default ([`DEFAULT_QUOTA`]).
    pub(crate) quotas: HashMap<u64, u64>,
    pub(crate) keep_bytes: bool,
    /// Seconds from an upload authorization to the expiration of its S3 policy.
    pub(crate) policy_ttl_secs: i64,
    /// Signs upload policies, so the bucket can tell its own from forged ones.
    pub(crate) secret: String,
}

impl FileStore {
    pub(crate) fn new() -> FileStore {
        FileStore {
            known: HashMap::new(),
            s3: HashMap::new(),
            uploads: HashMap::new(),
            issued: Vec::new(),
            quotas: HashMap::new(),
            keep_bytes: true,
            policy_ttl_secs: POLICY_TTL_SECS,
            secret: random_hex32(),
        }
    }

    /// Registers the files a library's attachments already have (`md5` and an enclosure):
    /// the server knows them, and the bucket holds them (without bytes).
    pub(crate) fn register(&mut self, lib: &Lib) {
        for f in lib.files.values() {
            self.known.insert((f.hash.clone(), false), f.size);
            self.s3.insert(f.hash.clone(), S3Object { bytes: None });
        }
    }

    /// A user's storage quota in bytes.
    pub(crate) fn quota(&self, user: u64) -> u64 {
        self.quotas.get(&user).copied().unwrap_or(DEFAULT_QUOTA)
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

impl State {
    /// Who pays for a library's files: the user, or the group's owner.
    pub(crate) fn owner(&self, lib: LibraryId) -> u64 {
        match lib {
            LibraryId::User(id) => id,
            LibraryId::Group(g) => self.groups.get(&g).map_or(USER_ID, |g| g.spec.owner),
        }
    }

    /// `Zotero_Storage::getUserUsage`: a user's library plus the groups they own.
    pub(crate) fn usage_of(&self, user: u64) -> u64 {
        self.libs
            .values()
            .filter(|l| self.owner(l.id()) == user)
            .map(Lib::usage)
            .sum()
    }

    /// The file stored for an attachment of a library, if it has one.
    pub(crate) fn stored_file(&self, lib: LibraryId, key: &str) -> Option<StoredFile> {
        let lib = self.libs.get(&lib)?;
        let f = lib.files.get(key)?;
        let item = lib.items.iter().find(|i| i["key"] == key)?;
        let d = &item["data"];
        Some(StoredFile {
            bytes: self.files.s3.get(&f.hash).and_then(|o| o.bytes.clone()),
            md5: d["md5"].as_str().unwrap_or(&f.hash).to_string(),
            size: f.size,
            filename: d["filename"].as_str().unwrap_or("").to_string(),
            content_type: d["contentType"].as_str().unwrap_or("").to_string(),
            mtime: d["mtime"].as_u64().unwrap_or(0),
        })
    }
}

impl super::Emulator {
    /// The file stored for an attachment of the user library, if it has one.
    pub fn file(&self, key: &str) -> Option<StoredFile> {
        self.state.lock().unwrap().stored_file(LibraryId::USER, key)
    }

    /// The user's storage quota in bytes (default 300 MB, the free plan). The server compares
    /// in megabytes rounded to one decimal, and reports the quota in MB.
    pub fn set_storage_quota(&self, bytes: u64) {
        self.set_storage_quota_of(USER_ID, bytes);
    }

    /// Another user's storage quota (the owner of a group pays for its files).
    pub fn set_storage_quota_of(&self, user: u64, bytes: u64) {
        self.state.lock().unwrap().files.quotas.insert(user, bytes);
    }

    /// Bytes the user's stored files use: the user library and the groups they own (every
    /// attachment with a file counts, duplicates too).
    pub fn storage_usage(&self) -> u64 {
        self.state.lock().unwrap().usage_of(USER_ID)
    }

    /// `false`: uploads keep only their MD5 and size (for huge benchmark files); downloads of
    /// such files answer 404 `NoSuchKey`. Default `true`.
    pub fn keep_file_bytes(&self, keep: bool) {
        self.state.lock().unwrap().files.keep_bytes = keep;
    }

    /// Seconds from an upload authorization to the expiration of its S3 policy (default
    /// 3600). A negative value models bytes that reach the bucket after the policy expired
    /// (a slow or long-stalled client, a skewed clock): the bucket then answers `403
    /// AccessDenied` `Invalid according to Policy: Policy expired.`, as S3 does.
    pub fn set_upload_policy_ttl(&self, secs: i64) {
        self.state.lock().unwrap().files.policy_ttl_secs = secs;
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
