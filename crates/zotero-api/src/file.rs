//! An attachment's file, from wherever the library keeps it, bounded in size:
//!
//! - a linked file: read where it is, only inside the directories the caller allows
//!   (`ZOTERO_UPLOAD_ROOTS`), never anywhere else;
//! - Zotero's data directory (`ZOTERO_DATA_DIR`): `storage/<KEY>/<filename>`;
//! - the desktop app: `/items/{k}/file` redirects to a `file://` URL, read only when it is
//!   `…/storage/<KEY>/<name>` (inside the data directory when that is known);
//! - the Web API: `/items/{k}/file` redirects to the storage host, asked without the key,
//!   and the bytes must match the item's `md5`. A 404 there (a WebDAV user's file) is
//!   [`FileUnavailable::NotOnZoteroStorage`]. The caller may forbid this download
//!   ([`FileLimits::web`]: the search index downloads only when the user opts in).
//!
//! Local files are opened with `zotero_db::read_inside`: plain files only, no symlink out.

use std::path::{Path, PathBuf};

use md5::{Digest, Md5};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use zotero_db::{read_inside, SafeReadError};

use crate::client::Library;
use crate::error::{FileUnavailable, ZoteroError};
use crate::http::ApiRequest;
use crate::library::ObjectKey;
use crate::model::WireObject;

/// What may be read, and how much.
#[derive(Debug, Clone)]
pub struct FileLimits {
    /// The largest file read, in bytes.
    pub max_bytes: u64,
    /// The only directories a linked file may be read from (resolved); empty: none.
    pub linked_roots: Vec<PathBuf>,
    /// Whether Zotero's file storage may be asked (through the Web API) when this machine
    /// has no copy; without, such a file is [`FileUnavailable::NotDownloaded`].
    pub web: bool,
}

/// An attachment's bytes and where they came from.
#[derive(Debug, Clone)]
pub struct AttachmentFile {
    pub bytes: Vec<u8>,
    /// The MD5 of `bytes`, lowercase hex.
    pub md5: String,
    pub from: FileSource,
}

/// Where an attachment's bytes were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileSource {
    /// A linked file, where it is.
    Linked,
    /// `storage/` of Zotero's data directory.
    DataDir,
    /// The desktop app's storage folder, through its local API's redirect.
    Desktop,
    /// Zotero's file storage, through the Web API's redirect.
    Web,
}

pub(crate) fn md5_hex(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn text<'a>(item: &'a WireObject, name: &str) -> Option<&'a str> {
    item.data
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// What a local read's failure means for this attachment: `None` to try the next place.
fn local_failure(key: &ObjectKey, e: SafeReadError) -> Option<ZoteroError> {
    let why = match e {
        SafeReadError::NotFound => return None,
        SafeReadError::OutsideRoot { .. } | SafeReadError::NotAFile => {
            FileUnavailable::OutsideStorage
        }
        SafeReadError::TooLarge { limit, .. } => FileUnavailable::TooLarge { limit },
        SafeReadError::Io(e) => {
            return Some(ZoteroError::Source {
                reason: format!("the file of attachment {key} could not be read: {e}"),
            })
        }
    };
    Some(ZoteroError::FileUnavailable {
        key: key.to_string(),
        why,
    })
}

/// Reads a local file off the runtime's threads.
async fn read_local(root: PathBuf, path: PathBuf, limit: u64) -> Result<Vec<u8>, SafeReadError> {
    tokio::task::spawn_blocking(move || read_inside(&root, &path, limit))
        .await
        .map_err(|e| SafeReadError::Io(std::io::Error::other(e.to_string())))?
}

/// The path of a `file://` URL (percent-decoded), if it is one.
fn file_url_path(url: &str) -> Option<PathBuf> {
    let rest = url.strip_prefix("file://")?;
    // `file://localhost/…` and `file:///…` name this machine; another host is not read.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let decoded = percent_encoding::percent_decode_str(rest)
        .decode_utf8()
        .ok()?;
    Some(PathBuf::from(decoded.as_ref()))
}

/// The storage directory a desktop's path lies in, when the path is
/// `<storage>/<KEY>/<name>` for this attachment's key: the only shape Zotero stores files in.
fn desktop_storage_root(path: &Path, key: &ObjectKey) -> Option<PathBuf> {
    let dir = path.parent()?;
    let storage = dir.parent()?;
    let named = |p: &Path, n: &str| p.file_name().and_then(|s| s.to_str()) == Some(n);
    (named(dir, key.as_str()) && named(storage, "storage")).then(|| storage.to_path_buf())
}

/// An item and the attachments whose files may hold its text, in reading order.
#[derive(Debug, Clone)]
pub struct FileCandidates {
    pub item: WireObject,
    /// The item itself when it is an attachment; else its attachments with a file of a
    /// document kind (PDF, EPUB, HTML, text), as [`Library::item_fulltext`] orders them.
    pub attachments: Vec<WireObject>,
}

impl Library<'_> {
    /// `key` and the attachments whose files hold its text; a note, an annotation, a link
    /// to a URL or an item without document attachments is [`ZoteroError::NoFullText`].
    pub async fn file_candidates(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<FileCandidates, ZoteroError> {
        use crate::fulltext::{DocumentKind, NoFullText};
        let resp = self
            .send(
                &ApiRequest::get(format!("/items?itemKey={key}&includeTrashed=1&format=json")),
                cancel,
            )
            .await?;
        crate::response::expect(&resp, 200, &format!("get item {key}"))?;
        let found: Vec<WireObject> = crate::response::parse_json(&resp)?;
        let item = found
            .into_iter()
            .find(|o| o.key() == key.as_str())
            .ok_or_else(|| ZoteroError::NotFound {
                message: format!("no item with key {key} in this library"),
            })?;
        let no_text = |why| ZoteroError::NoFullText {
            key: key.to_string(),
            why,
        };
        let kind = |o: &WireObject| DocumentKind::of(text(o, "contentType").unwrap_or_default());
        let attachments = match item.item_type().as_str() {
            "attachment" if text(&item, "linkMode") == Some("linked_url") => {
                return Err(no_text(NoFullText::LinkOnly))
            }
            "attachment" => vec![item.clone()],
            t @ ("note" | "annotation") => {
                return Err(no_text(NoFullText::NotADocument {
                    item_type: t.to_string(),
                }))
            }
            _ => {
                let mut children: Vec<WireObject> = self
                    .attachment_children(key, false, cancel)
                    .await?
                    .into_iter()
                    .filter(|c| text(c, "linkMode") != Some("linked_url"))
                    .filter(|c| kind(c) != DocumentKind::Other)
                    .collect();
                children.sort_by_cached_key(|c| {
                    let added = text(c, "dateAdded").unwrap_or_default().to_string();
                    (kind(c), added, c.key())
                });
                children
            }
        };
        if attachments.is_empty() {
            return Err(no_text(NoFullText::NoDocuments));
        }
        Ok(FileCandidates { item, attachments })
    }

    /// The file of attachment `item` (its wire JSON, as read), from the first place that
    /// has it, at most `limits.max_bytes`.
    pub async fn attachment_file(
        &self,
        item: &WireObject,
        limits: &FileLimits,
        cancel: &CancellationToken,
    ) -> Result<AttachmentFile, ZoteroError> {
        let key = ObjectKey::parse(&item.key()).map_err(|_| ZoteroError::BadResponse {
            reason: "an attachment without a valid key".into(),
            status: 200,
        })?;
        let unavailable = |why| ZoteroError::FileUnavailable {
            key: key.to_string(),
            why,
        };
        let link_mode = text(item, "linkMode").unwrap_or_default();
        if item.item_type() != "attachment" || link_mode == "linked_url" {
            return Err(unavailable(FileUnavailable::NoFile));
        }
        let done = |bytes: Vec<u8>, from| AttachmentFile {
            md5: md5_hex(&bytes),
            bytes,
            from,
        };
        if link_mode == "linked_file" {
            let bytes = self.linked_file(item, &key, limits).await?;
            return Ok(done(bytes, FileSource::Linked));
        }
        if let Some(bytes) = self.data_dir_file(item, &key, limits).await? {
            return Ok(done(bytes, FileSource::DataDir));
        }
        match self.desktop_file(&key, limits, cancel).await? {
            Some(bytes) => return Ok(done(bytes, FileSource::Desktop)),
            None if !self.client.has_web() => return Err(unavailable(FileUnavailable::Missing)),
            None if !limits.web => return Err(unavailable(FileUnavailable::NotDownloaded)),
            None => {}
        }
        let bytes = self.web_file(&key, limits, cancel).await?;
        let file = done(bytes, FileSource::Web);
        if text(item, "md5").is_some_and(|m| !m.eq_ignore_ascii_case(&file.md5)) {
            return Err(unavailable(FileUnavailable::ChecksumMismatch));
        }
        Ok(file)
    }

    /// A linked file: read only inside one of the allowed roots.
    async fn linked_file(
        &self,
        item: &WireObject,
        key: &ObjectKey,
        limits: &FileLimits,
    ) -> Result<Vec<u8>, ZoteroError> {
        let outside = || ZoteroError::FileUnavailable {
            key: key.to_string(),
            why: FileUnavailable::LinkedOutsideRoots,
        };
        // `attachments:…` (relative to a base directory only the desktop knows) is not read.
        let path = text(item, "path")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .ok_or_else(outside)?;
        let resolved = path
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .ok_or(ZoteroError::FileUnavailable {
                key: key.to_string(),
                why: FileUnavailable::Missing,
            })?;
        let root = limits
            .linked_roots
            .iter()
            .find(|r| resolved.starts_with(r))
            .ok_or_else(outside)?;
        match read_local(root.clone(), path, limits.max_bytes).await {
            Ok(bytes) => Ok(bytes),
            Err(SafeReadError::NotFound) => Err(ZoteroError::FileUnavailable {
                key: key.to_string(),
                why: FileUnavailable::Missing,
            }),
            Err(e) => Err(local_failure(key, e).unwrap_or_else(outside)),
        }
    }

    /// `storage/<KEY>/<filename>` of the configured data directory; `None` when there is
    /// none or it has no copy.
    async fn data_dir_file(
        &self,
        item: &WireObject,
        key: &ObjectKey,
        limits: &FileLimits,
    ) -> Result<Option<Vec<u8>>, ZoteroError> {
        let (Some(db), Some(name)) = (self.client.database(), text(item, "filename")) else {
            return Ok(None);
        };
        if name.contains(['/', '\\']) || name == ".." || name == "." {
            return Err(ZoteroError::FileUnavailable {
                key: key.to_string(),
                why: FileUnavailable::OutsideStorage,
            });
        }
        let storage = db.data_dir().join("storage");
        let path = storage.join(key.as_str()).join(name);
        match read_local(storage, path, limits.max_bytes).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) => match local_failure(key, e) {
                None => Ok(None),
                Some(e) => Err(e),
            },
        }
    }

    /// The desktop's `file://` redirect, read when it names this attachment's folder in a
    /// storage directory; `None` when the desktop is not used or has no copy.
    async fn desktop_file(
        &self,
        key: &ObjectKey,
        limits: &FileLimits,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<u8>>, ZoteroError> {
        let req = ApiRequest::get(format!("/items/{key}/file")).uncached();
        let resp = match self.send_local(&req, cancel).await {
            None => return Ok(None),
            Some(Ok(resp)) => resp,
            Some(Err(ZoteroError::Network { .. } | ZoteroError::Timeout { .. }))
                if self.client.has_web() =>
            {
                return Ok(None)
            }
            Some(Err(e)) => return Err(e),
        };
        if resp.status != 302 {
            return Ok(None);
        }
        let Some(path) = resp.header("location").and_then(file_url_path) else {
            return Ok(None);
        };
        let root = match desktop_storage_root(&path, key) {
            // The data directory, when it is known, is the only storage directory.
            Some(_) if self.client.database().is_some() => self
                .client
                .database()
                .map(|db| db.data_dir().join("storage"))
                .unwrap_or_default(),
            Some(root) => root,
            None => {
                return Err(ZoteroError::FileUnavailable {
                    key: key.to_string(),
                    why: FileUnavailable::OutsideStorage,
                })
            }
        };
        match read_local(root, path, limits.max_bytes).await {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) => match local_failure(key, e) {
                None => Ok(None),
                Some(e) => Err(e),
            },
        }
    }

    /// The Web API's `/file`: a redirect to the storage host, which is asked without the
    /// key.
    async fn web_file(
        &self,
        key: &ObjectKey,
        limits: &FileLimits,
        cancel: &CancellationToken,
    ) -> Result<Vec<u8>, ZoteroError> {
        let req = ApiRequest::get(format!("/items/{key}/file")).fresh();
        let resp = self.send_web(&req, cancel).await?;
        let location = match resp.status {
            302 | 303 | 307 => resp.header("location").map(str::to_string),
            404 => {
                return Err(ZoteroError::FileUnavailable {
                    key: key.to_string(),
                    why: FileUnavailable::NotOnZoteroStorage,
                })
            }
            _ => {
                crate::response::expect(&resp, 302, &format!("get the file of {key}"))?;
                None
            }
        };
        let location = location.ok_or_else(|| ZoteroError::BadResponse {
            reason: format!("Zotero redirected the file of {key} nowhere"),
            status: resp.status,
        })?;
        let (web, _) = self.client.web()?;
        let url = absolute(&location, web.base()).ok_or_else(|| ZoteroError::BadResponse {
            reason: format!("Zotero redirected the file of {key} to a URL that is not http(s)"),
            status: resp.status,
        })?;
        let got = web
            .download(&url, key.as_str(), limits.max_bytes, cancel)
            .await?;
        if got.status != 200 {
            return Err(ZoteroError::Status {
                message: format!(
                    "Zotero's file storage answered HTTP {} for the file of {key}; try again later",
                    got.status
                ),
                answer: crate::error::UpstreamAnswer {
                    status: got.status,
                    ..Default::default()
                },
            });
        }
        Ok(got.body.to_vec())
    }
}

/// A redirect's target as an absolute http(s) URL (a path is taken on the API's host).
fn absolute(location: &str, base: &str) -> Option<String> {
    let lower = location.to_ascii_lowercase();
    if lower.starts_with("https://") || lower.starts_with("http://") {
        return Some(location.to_string());
    }
    if location.starts_with('/') && !location.starts_with("//") {
        return Some(format!("{}{location}", crate::http::host_of(base)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn desktop_paths_are_read_only_in_the_attachment_s_storage_folder() {
        let k = ObjectKey::parse("ABCD2345").unwrap();
        let p = file_url_path("file:///home/u/Zotero/storage/ABCD2345/a%20b.pdf").unwrap();
        assert_eq!(p, PathBuf::from("/home/u/Zotero/storage/ABCD2345/a b.pdf"));
        assert_eq!(
            desktop_storage_root(&p, &k),
            Some(PathBuf::from("/home/u/Zotero/storage"))
        );
        let other = PathBuf::from("/home/u/Zotero/storage/ZZZZ2345/a.pdf");
        assert_eq!(desktop_storage_root(&other, &k), None);
        let linked = PathBuf::from("/etc/ABCD2345/passwd");
        assert_eq!(desktop_storage_root(&linked, &k), None);
        assert_eq!(file_url_path("file://otherhost/x"), None);
        assert_eq!(file_url_path("http://x/y"), None);
    }

    #[test]
    fn redirects_resolve_to_http_urls_only() {
        assert_eq!(
            absolute("/s3/x", "http://127.0.0.1:5/api").as_deref(),
            Some("http://127.0.0.1:5/s3/x")
        );
        assert_eq!(
            absolute("https://s3.amazonaws.com/z/x?sig", "https://api.zotero.org").as_deref(),
            Some("https://s3.amazonaws.com/z/x?sig")
        );
        assert_eq!(
            absolute("file:///etc/passwd", "https://api.zotero.org"),
            None
        );
        assert_eq!(absolute("//evil/x", "https://api.zotero.org"), None);
    }
}
