//! `ZoteroError`, everything that can go wrong talking to Zotero. The server maps it to the
//! public error codes at its edge.

use crate::model::{Collection, ObjectKind};

/// Response bodies are cut to this many bytes in error details: enough to read Zotero's
/// message, never a whole page of items.
pub const MAX_BODY_IN_DETAILS: usize = 4096;

/// What an HTTP answer said, kept for the error details.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UpstreamAnswer {
    pub status: u16,
    pub body: String,
    pub retry_after: Option<String>,
    pub request_id: Option<String>,
}

/// Why Zotero has no full text for an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoFullText {
    /// A note or an annotation: only attachments have full text.
    NotADocument { item_type: String },
    /// An attachment that links to a URL: Zotero keeps no file of it.
    LinkOnly,
    /// A regular item with no PDF, EPUB, HTML or text attachment.
    NoDocuments,
    /// These attachments have no indexed text.
    NotIndexed { attachments: Vec<String> },
}

/// Why an attachment's file could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileUnavailable {
    /// Not an attachment with a file (a note, a regular item, a link to a URL).
    NoFile,
    /// The Web API has no file for it (`/file` answered 404): it is synced through WebDAV,
    /// not synced yet, or was never uploaded; zotero.org's storage does not hold it.
    NotOnZoteroStorage,
    /// A stored file the desktop or the data directory should have, and does not.
    Missing,
    /// A linked file outside the directories files may be read from.
    LinkedOutsideRoots,
    /// A path outside Zotero's storage directory, or a symbolic link or other non-file.
    OutsideStorage,
    /// The file is larger than the bound for reading it.
    TooLarge { limit: u64 },
    /// The bytes received are not the file Zotero describes (its `md5`).
    ChecksumMismatch,
    /// Only Zotero's file storage has the file, and the caller did not allow downloading it.
    NotDownloaded,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum ZoteroError {
    #[error("Zotero credentials are not configured: set {}", .missing.join(" and "))]
    MissingCredentials { missing: Vec<&'static str> },

    /// Zotero answered with a status the operation did not expect.
    #[error("{message}")]
    Status {
        message: String,
        answer: UpstreamAnswer,
    },

    /// Zotero asked us to wait longer than `ZOTERO_RETRY_MAX_WAIT`; we did not.
    #[error("Zotero asked to wait {wait_secs} s before the next request (more than ZOTERO_RETRY_MAX_WAIT={max_wait_secs} s); try again later")]
    WaitTooLong {
        wait_secs: u64,
        max_wait_secs: u64,
        answer: Option<UpstreamAnswer>,
    },

    /// The key may not read or write this library.
    #[error("the API key may not {need} the library {library}; give the key access to it at https://www.zotero.org/settings/keys (zotero_list_libraries shows what it may do where)")]
    LibraryAccess {
        library: String,
        need: &'static str,
        /// Zotero's refusal, when there was one (a check before sending has none).
        answer: Option<Box<UpstreamAnswer>>,
        /// The refusal answered a repeat of the request: an earlier attempt may have landed
        /// before its answer was lost.
        repeated: bool,
    },

    /// The desktop app's local API is switched off (403 `Local API is not enabled`).
    #[error("the Zotero desktop app's local API is off: turn on Settings → Advanced → \"Allow other applications on this computer to communicate with Zotero\"")]
    LocalApiOff,

    /// Zotero 10 answers with another `Zotero-Server-ID`: another database is open. The
    /// request was refused; nothing read before it may be used for a write.
    #[error("the Zotero desktop app has another database open now (its Zotero-Server-ID changed); nothing was written: read what you are changing again, then retry")]
    LocalDatabaseChanged,

    /// Zotero 10 refused the local key (401): revoked ("Clear Write Authorizations") or a
    /// one-time key already spent. Never retried: only a person can grant a new one.
    #[error("Zotero refused the local API key (revoked in Settings → Advanced, or a one-time \"Allow\" key already used); run `zotero-mcp authorize` and answer \"Always Allow\" in Zotero")]
    LocalKeyRejected,

    /// Writes were to go through the desktop app, and cannot.
    #[error("writes cannot go through the Zotero desktop app: {reason}")]
    LocalWritesUnavailable { reason: String },

    /// The desktop app may not change this library (a group where the user's role may not
    /// edit, `403 Write access denied` / `File editing denied`).
    #[error("Zotero may not {need} the library {library}: your role in that group does not allow it (ask a group admin)")]
    LocalWriteDenied {
        library: String,
        need: &'static str,
        answer: Box<UpstreamAnswer>,
    },

    /// The desktop app writes to this library and failed (5xx) a read a write depends on:
    /// that read is not asked of the web API, whose versions are not the desktop's.
    #[error("the Zotero desktop app, which writes to this library, is failing (HTTP {status}); try again once Zotero answers, or set ZOTERO_WRITE_BACKEND=web to write through the web API")]
    DesktopFailing { status: u16 },

    /// The storage URL of an upload authorization points at an address the guard refuses
    /// (loopback, private, link-local...): nothing was sent there.
    #[error("the storage address Zotero named for the upload is refused: {reason}; no bytes were sent. If your Zotero server keeps files on your own network, set ZOTERO_FETCH_ALLOW_PRIVATE=1")]
    StorageAddressRefused { reason: String },

    /// The desktop app's local API is asked for, but not configured.
    #[error("the desktop app's local API is not used (set ZOTERO_LOCAL=1)")]
    LocalApiNotConfigured,

    /// Zotero's own database (`ZOTERO_DATA_DIR`) could not be read.
    #[error("{reason}")]
    Database { reason: String },

    #[error("could not reach Zotero at {base}: {reason}")]
    Network { base: String, reason: String },

    #[error("Zotero did not answer within {secs} s (ZOTERO_TIMEOUT_SECONDS)")]
    Timeout { secs: f64 },

    #[error("the call was cancelled by the client")]
    Cancelled,

    #[error("Zotero sent an answer that could not be read: {reason}")]
    BadResponse { reason: String, status: u16 },

    /// A request this client could not build (a defect, not the caller's input).
    #[error("invalid request: {reason}")]
    InvalidRequest { reason: String },

    /// The item a file was to be attached to cannot take one.
    #[error("item {key} is of type {item_type}; attach files to a regular item (its parent item, if it has one)")]
    NotAParent { key: String, item_type: String },

    /// `ZOTERO_API_KEY` cannot be sent in a header.
    #[error("ZOTERO_API_KEY contains characters that cannot be sent in a header; copy the key again from https://www.zotero.org/settings/keys")]
    BadApiKey,

    /// The bytes being uploaded could not be read, or changed after they were hashed.
    #[error("the file could not be sent: {reason}")]
    Source { reason: String },

    #[error("{message}")]
    NotFound { message: String },

    /// Zotero has no full text for the item; the message says why and what the user can do.
    #[error("{}", no_full_text(.key, .why))]
    NoFullText { key: String, why: NoFullText },

    /// An attachment's file could not be read; the message says why and what to do.
    #[error("{}", file_unavailable(.key, .why))]
    FileUnavailable { key: String, why: FileUnavailable },

    #[error("'{item_type}' is not a Zotero item type; use one of: {}", .valid.join(", "))]
    UnknownItemType {
        item_type: String,
        valid: Vec<String>,
    },

    /// A write answered 200 but listed the object under `failed`.
    #[error("{message}")]
    Rejected {
        code: u16,
        message: String,
        answer: UpstreamAnswer,
    },

    /// A create whose outcome could not be read: it is known to have happened (`created`)
    /// but the item could not be read back, or neither the answer nor a check afterwards
    /// said whether it happened.
    #[error("{}", create_unconfirmed(*.kind, .key, *.created, .reason))]
    CreateUnconfirmed {
        /// What was being created.
        kind: ObjectKind,
        key: String,
        created: bool,
        reason: String,
    },

    /// Zotero does not have the citation style asked for (`400 Invalid style`).
    #[error("Zotero has no citation style '{style}': use the id of a style in the Zotero style repository, https://www.zotero.org/styles (e.g. apa, chicago-note-bibliography, ieee, nature, modern-language-association)")]
    UnknownStyle {
        style: String,
        answer: UpstreamAnswer,
    },

    #[error("{what} kept changing while it was being updated ({attempts} attempts); try again")]
    KeptChanging { what: String, attempts: usize },

    #[error("no collection is named '{name}'{}", closest_hint(.closest))]
    CollectionNotFound { name: String, closest: Vec<String> },

    #[error("{} collections are named '{name}'; pass collection_key instead, one of: {}", .candidates.len(), .candidates.iter().map(|c| c.collection_key.as_str()).collect::<Vec<_>>().join(", "))]
    AmbiguousCollection {
        name: String,
        candidates: Vec<Collection>,
    },

    /// `413` on an upload authorization: the user's Zotero storage cannot take the file.
    #[error("Zotero file storage is full: the file needs {size} bytes{}; free space or upgrade the storage plan at https://www.zotero.org/storage", storage_hint(.usage_mb.as_deref(), .quota_mb.as_deref()))]
    StorageFull {
        size: u64,
        usage_mb: Option<String>,
        quota_mb: Option<String>,
        answer: Box<UpstreamAnswer>,
    },

    /// The file storage (S3) refused the bytes of an upload. Its status, its error code
    /// and a capped message are kept, nothing else of its answer (it may echo the signed
    /// form fields of the authorization). Not a matter of the API key: the storage never
    /// sees it.
    #[error("Zotero's file storage refused the upload: HTTP {status}{}{}", storage_said(.code.as_deref(), .message.as_deref()), storage_refusal_hint(*.status, .code.as_deref()))]
    StorageRefused {
        status: u16,
        /// S3's `<Code>`, e.g. `AccessDenied`.
        code: Option<String>,
        /// S3's `<Message>`, capped, with the authorization's values taken out.
        message: Option<String>,
        retry_after: Option<String>,
    },

    /// An upload failed after its attachment item was created; the item was removed again
    /// (or could not be, and the message says which key to delete).
    #[error("{error}{}", abandoned_hint(.attachment_key, .removed))]
    AttachmentAbandoned {
        error: Box<ZoteroError>,
        attachment_key: String,
        removed: bool,
    },
}

impl ZoteroError {
    /// Whether the request was refused before anything could be written: nothing sent (no
    /// credentials, a request this client could not build, a bad key) or the only attempt
    /// refused (403). Any other failure of a write may hide an attempt that landed; a
    /// refusal of a repeat says nothing of the attempt before it.
    pub fn nothing_written(&self) -> bool {
        matches!(
            self,
            ZoteroError::MissingCredentials { .. }
                | ZoteroError::InvalidRequest { .. }
                | ZoteroError::BadApiKey
                | ZoteroError::LibraryAccess {
                    repeated: false,
                    ..
                }
                // Refused before anything was applied (local writes are sent once).
                | ZoteroError::LocalDatabaseChanged
                | ZoteroError::LocalKeyRejected
                | ZoteroError::LocalWritesUnavailable { .. }
                | ZoteroError::LocalWriteDenied { .. }
                | ZoteroError::LocalApiOff
        )
    }
}

fn create_unconfirmed(kind: ObjectKind, key: &str, created: bool, reason: &str) -> String {
    let (noun, tool) = match kind {
        ObjectKind::Item => ("item", "zotero_get_item"),
        ObjectKind::Collection => ("collection", "zotero_list_collections"),
    };
    if created {
        format!(
            "{noun} {key} was created, but reading it back failed: {reason}; get it with {tool}"
        )
    } else {
        format!("could not tell whether {noun} {key} was created: {reason}; look it up with {tool} before trying again")
    }
}

/// What to do when Zotero has not indexed a document.
const REINDEX_HINT: &str = "In Zotero, right-click the attachment and choose Reindex Item (Zotero indexes PDFs up to the page limit set in Settings → Search). The Web API has the text only when full-text sync is on (Settings → Sync → \"Sync full-text content\") and the file was synced; the desktop's local API (ZOTERO_LOCAL=1) has it when the file is on that computer.";

fn no_full_text(key: &str, why: &NoFullText) -> String {
    match why {
        NoFullText::NotADocument { item_type } => format!(
            "item {key} is a {item_type}: only attachments (PDF, EPUB, HTML snapshot, text file) have full text; pass the key of a regular item or of one of its attachments"
        ),
        NoFullText::LinkOnly => format!(
            "attachment {key} is a link to a URL: Zotero keeps no file of it, so it has no full text; save the page or its PDF in Zotero to get one"
        ),
        NoFullText::NoDocuments => format!(
            "item {key} has no PDF, EPUB, HTML snapshot or text attachment, so Zotero has no full text for it; attach the file first (zotero_upload_attachment, or zotero_attach_arxiv_pdf for an arXiv paper)"
        ),
        NoFullText::NotIndexed { attachments } if attachments.len() == 1 && attachments.first().is_some_and(|a| a == key) => {
            format!("Zotero has no indexed full text for attachment {key}. {REINDEX_HINT}")
        }
        NoFullText::NotIndexed { attachments } => format!(
            "Zotero has no indexed full text for the attachments of item {key} ({}). {REINDEX_HINT}",
            attachments.join(", ")
        ),
    }
}

fn file_unavailable(key: &str, why: &FileUnavailable) -> String {
    match why {
        FileUnavailable::NoFile => format!(
            "item {key} has no file: only attachments stored in Zotero or linked files do; pass an attachment's key"
        ),
        FileUnavailable::NotOnZoteroStorage => format!(
            "the file of attachment {key} is not on Zotero's file storage (it is synced through WebDAV, or not synced yet), so it is not reachable through the Web API; use the desktop app (ZOTERO_LOCAL=1) or its data directory (ZOTERO_DATA_DIR) on the computer that has it"
        ),
        FileUnavailable::Missing => format!(
            "the file of attachment {key} is not on this computer (Zotero's storage folder has no copy); open it once in Zotero to download it"
        ),
        FileUnavailable::LinkedOutsideRoots => format!(
            "attachment {key} links to a file outside ZOTERO_UPLOAD_ROOTS; add its folder to ZOTERO_UPLOAD_ROOTS to let it be read"
        ),
        FileUnavailable::OutsideStorage => format!(
            "the file of attachment {key} is not a plain file inside Zotero's storage folder (a symbolic link, or another place), so it is not read"
        ),
        FileUnavailable::TooLarge { limit } => format!(
            "the file of attachment {key} is larger than {limit} bytes, the limit for reading a file's text"
        ),
        FileUnavailable::ChecksumMismatch => format!(
            "the file received for attachment {key} does not match its MD5 in Zotero (changed or damaged on the way); try again"
        ),
        FileUnavailable::NotDownloaded => format!(
            "the file of attachment {key} is not on this computer, only on Zotero's file storage, and downloading files to index them is off; set ZOTERO_INDEX_DOWNLOAD_FILES to download them"
        ),
    }
}

fn closest_hint(closest: &[String]) -> String {
    if closest.is_empty() {
        "; the library has no collections".into()
    } else {
        format!("; the closest names are: {}", closest.join(", "))
    }
}

fn storage_hint(usage: Option<&str>, quota: Option<&str>) -> String {
    match (usage, quota) {
        (Some(u), Some(q)) => format!(" and {u} MB of the {q} MB quota are used"),
        (None, Some(q)) => format!(" and the quota is {q} MB"),
        _ => String::new(),
    }
}

fn storage_said(code: Option<&str>, message: Option<&str>) -> String {
    match (code, message) {
        (Some(c), Some(m)) => format!(" {c}: {m}"),
        (Some(c), None) => format!(" {c}"),
        (None, Some(m)) => format!(": {m}"),
        (None, None) => String::new(),
    }
}

fn storage_refusal_hint(status: u16, code: Option<&str>) -> &'static str {
    match (status, code) {
        (_, Some("BadDigest")) => {
            "; the bytes sent did not match their MD5 (did the file change while it was uploaded?)"
        }
        (403, _) => {
            "; the storage did not accept the upload's authorization from Zotero (it may have expired while the file was on its way); try the upload again"
        }
        _ => "",
    }
}

fn abandoned_hint(key: &str, removed: &bool) -> String {
    if *removed {
        format!(" (the attachment item {key} created for it was removed again; nothing was left behind)")
    } else {
        format!(
            " (the attachment item {key} created for it could not be removed; delete it in Zotero)"
        )
    }
}

/// Cuts a body to `MAX_BODY_IN_DETAILS` bytes on a character boundary.
pub fn cut_body(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.len() <= MAX_BODY_IN_DETAILS {
        return text.into_owned();
    }
    let mut end = MAX_BODY_IN_DETAILS;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", text.get(..end).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_cut_on_char_boundaries() {
        let long = "é".repeat(5000);
        let cut = cut_body(long.as_bytes());
        assert!(cut.len() <= MAX_BODY_IN_DETAILS + "…".len());
        assert!(cut.ends_with('…'));
        assert_eq!(cut_body(b"short"), "short");
    }
}
