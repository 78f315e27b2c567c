//! The four-step file upload of the Zotero API: create the attachment item, authorize the
//! upload, send `prefix + bytes + suffix` to the storage URL, register the upload.
//!
//! All or nothing: once the attachment item exists, any later failure (cancellation
//! included) deletes it again, so no empty attachment is left behind. The upload
//! authorization (storage URL, form fields, upload key) never reaches a log line or an
//! answer; neither do the file's bytes.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::error::ZoteroError;
use super::http::ByteStream;
use crate::client::Library;
use crate::library::ObjectKey;
use crate::progress::Progress;
pub use crate::progress::ProgressFn;

mod transfer;

/// How long removing an abandoned attachment item may take, whatever became of the call.
const CLEANUP_TIME: Duration = Duration::from_secs(60);

/// A file ready to upload: its metadata, hashed beforehand, and a way to read its bytes.
pub struct FileToUpload {
    pub filename: String,
    pub content_type: String,
    pub size: u64,
    /// Lower-case hex MD5 of the bytes `open` yields.
    pub md5: String,
    pub mtime_ms: u64,
    /// A fresh stream of the bytes, once per attempt.
    pub open: Box<dyn Fn() -> std::io::Result<ByteStream> + Send + Sync>,
}

pub struct NewAttachment<'a> {
    pub parent_key: &'a ObjectKey,
    /// Defaults to the filename.
    pub title: Option<&'a str>,
    pub file: &'a FileToUpload,
}

#[derive(Debug, Clone)]
pub struct Uploaded {
    pub attachment_key: String,
    pub version: u64,
    pub title: String,
    pub content_type: String,
    pub size: u64,
    /// The file's name as stored.
    pub filename: String,
    /// Lower-case hex MD5 of the bytes.
    pub md5: String,
    /// The parent already had this file (same name and bytes): nothing was written, and the
    /// answer is that attachment.
    pub already_attached: bool,
}

/// What [`Library::upload_attachment`] would do, found out without writing
/// ([`Library::plan_attachment`]).
#[derive(Debug, Clone)]
pub enum AttachmentPlan {
    /// The parent has this file already (same name and bytes): nothing would be written.
    Attached(Uploaded),
    /// A new attachment item, then the file uploaded to it.
    New(PlannedAttachment),
}

/// A new `imported_file` attachment as it would be created.
#[derive(Debug, Clone)]
pub struct PlannedAttachment {
    /// The attachment item to be sent: the template filled in (without the key and version,
    /// chosen when it is written).
    pub object: Map<String, Value>,
    pub title: String,
    pub filename: String,
    pub content_type: String,
    pub size: u64,
    /// Lower-case hex MD5 of the bytes.
    pub md5: String,
}

impl Library<'_> {
    /// Checks that `key` is an item that can take an attachment (it exists and is neither
    /// an attachment nor a note), before any bytes are fetched or anything is written.
    pub async fn check_parent(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<(), ZoteroError> {
        self.require_write(true, cancel).await?;
        let Some(wire) = self.fetch_item(key, cancel).await? else {
            return Err(ZoteroError::NotFound {
                message: format!(
                    "no item with key {key} in this library; search for the parent item with zotero_search_items, or create it with zotero_create_item"
                ),
            });
        };
        let item_type = wire.item_type();
        if matches!(item_type.as_str(), "attachment" | "note" | "annotation") {
            return Err(ZoteroError::NotAParent {
                key: key.to_string(),
                item_type,
            });
        }
        Ok(())
    }

    /// Creates an `imported_file` attachment under `parent_key` and uploads the file to it.
    pub async fn upload_attachment(
        &self,
        new: NewAttachment<'_>,
        progress: Option<ProgressFn>,
        cancel: &CancellationToken,
    ) -> Result<Uploaded, ZoteroError> {
        let file = new.file;
        self.require_write(true, cancel).await?;
        // Identical uploads in this process (same library, parent and bytes) take turns from
        // the duplicate check to the end of the upload: the first creates the attachment, the
        // others then find it (the check reads the library as it is now, never a cache or the
        // lagging desktop), so concurrent twins make one attachment. A twin cancelled while
        // it waits leaves the turns as they were.
        let turn = (self.name(), new.parent_key.clone(), file.md5.clone());
        let _turn = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(ZoteroError::Cancelled),
            turn = self.client.upload_turns.lock(turn) => turn,
        };
        let planned = match self.plan_upload(&new, cancel).await? {
            AttachmentPlan::Attached(existing) => {
                tracing::info!("the parent has this file already; nothing written");
                Progress::new(progress, file.size).done();
                return Ok(existing);
            }
            AttachmentPlan::New(planned) => planned,
        };
        let PlannedAttachment { object, title, .. } = planned;
        let created = match self.create_object(object, cancel).await {
            Ok(created) => created,
            Err(error) => {
                // An unconfirmed create may have left an attachment item without a file.
                let ZoteroError::CreateUnconfirmed { key, .. } = &error else {
                    return Err(error);
                };
                // The key is the one this client chose for the create.
                let Ok(key) = ObjectKey::parse(key) else {
                    return Err(error);
                };
                let removed = self.remove_abandoned(&key, None).await;
                return Err(ZoteroError::AttachmentAbandoned {
                    error: Box::new(error),
                    attachment_key: key.to_string(),
                    removed,
                });
            }
        };
        // The key goes into the upload URLs: only a well-formed one (Zotero echoes the key
        // chosen for the create; anything else is an answer this client cannot trust).
        let key = match ObjectKey::parse(&created.key()) {
            Ok(key) => key,
            Err(e) => {
                return Err(ZoteroError::BadResponse {
                    reason: format!("the created attachment has no usable key: {e}"),
                    status: 200,
                })
            }
        };

        let progress = Arc::new(Progress::new(progress, file.size));
        match self.transfer(&key, file, &progress, cancel).await {
            Ok(registered_version) => {
                progress.done();
                // The upload is done; a failure to read the item back must not undo it.
                let version = match self.fetch_item(&key, cancel).await {
                    Ok(Some(wire)) => wire.version(),
                    _ => registered_version.unwrap_or(created.version()),
                };
                Ok(Uploaded {
                    attachment_key: key.to_string(),
                    version,
                    title,
                    content_type: file.content_type.clone(),
                    size: file.size,
                    filename: file.filename.clone(),
                    md5: file.md5.clone(),
                    already_attached: false,
                })
            }
            Err(error) => {
                let removed = self.remove_abandoned(&key, Some(created.version())).await;
                Err(ZoteroError::AttachmentAbandoned {
                    error: Box::new(error),
                    attachment_key: key.to_string(),
                    removed,
                })
            }
        }
    }

    /// What [`Library::upload_attachment`] would do, after the same checks (the key may
    /// write files here; the parent's attachments are read for this file). Writes nothing:
    /// no attachment item, no upload authorization, no bytes sent.
    pub async fn plan_attachment(
        &self,
        new: &NewAttachment<'_>,
        cancel: &CancellationToken,
    ) -> Result<AttachmentPlan, ZoteroError> {
        self.require_write(true, cancel).await?;
        self.plan_upload(new, cancel).await
    }

    /// The attachment of the parent that has this file already, or the attachment item to
    /// create for it.
    async fn plan_upload(
        &self,
        new: &NewAttachment<'_>,
        cancel: &CancellationToken,
    ) -> Result<AttachmentPlan, ZoteroError> {
        let file = new.file;
        if let Some(existing) = self.attached_already(new.parent_key, file, cancel).await? {
            let text = |k: &str| {
                existing
                    .data
                    .get(k)
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            return Ok(AttachmentPlan::Attached(Uploaded {
                attachment_key: existing.key(),
                version: existing.version(),
                title: text("title").unwrap_or_else(|| file.filename.clone()),
                content_type: text("contentType").unwrap_or_else(|| file.content_type.clone()),
                size: file.size,
                filename: file.filename.clone(),
                md5: file.md5.clone(),
                already_attached: true,
            }));
        }
        let title = new.title.unwrap_or(&file.filename).to_string();
        let mut object = self
            .client
            .template("attachment", Some("imported_file"), cancel)
            .await?;
        object.insert("parentItem".into(), Value::from(new.parent_key.as_str()));
        object.insert("title".into(), Value::from(title.clone()));
        object.insert("filename".into(), Value::from(file.filename.clone()));
        object.insert("contentType".into(), Value::from(file.content_type.clone()));
        Ok(AttachmentPlan::New(PlannedAttachment {
            object,
            title,
            filename: file.filename.clone(),
            content_type: file.content_type.clone(),
            size: file.size,
            md5: file.md5.clone(),
        }))
    }

    /// The attachment of `parent` that holds exactly this file (same filename and MD5), so
    /// that attaching the same file twice does not make a second attachment.
    async fn attached_already(
        &self,
        parent: &ObjectKey,
        file: &FileToUpload,
        cancel: &CancellationToken,
    ) -> Result<Option<super::model::WireObject>, ZoteroError> {
        let children = self.attachment_children(parent, true, cancel).await?;
        let same = |w: &super::model::WireObject| {
            let field = |k: &str| w.data.get(k).and_then(Value::as_str);
            field("md5") == Some(file.md5.as_str())
                && field("filename") == Some(file.filename.as_str())
                && matches!(field("linkMode"), Some("imported_file" | "imported_url"))
        };
        Ok(children.into_iter().find(same))
    }

    /// Whether the attachment item carries a file with this MD5.
    async fn has_file(&self, key: &ObjectKey, md5: &str, cancel: &CancellationToken) -> bool {
        match self.fetch_item(key, cancel).await {
            Ok(Some(wire)) => wire.data.get("md5").and_then(Value::as_str) == Some(md5),
            _ => false,
        }
    }

    /// Deletes the attachment item of a failed upload (its version read first when not
    /// known), with its own deadline and a token of its own: a cancelled call still cleans
    /// up after itself. An item that does not exist counts as removed; so does one that a
    /// failed removal turns out to have removed after all (its answer was lost).
    async fn remove_abandoned(&self, key: &ObjectKey, version: Option<u64>) -> bool {
        let cancel = CancellationToken::new();
        let remove = async {
            let version = match version {
                Some(v) => v,
                None => match self.fetch_item(key, &cancel).await? {
                    Some(wire) => wire.version(),
                    None => return Ok(()),
                },
            };
            self.delete_item(key, version, &cancel).await
        };
        let failure = match tokio::time::timeout(CLEANUP_TIME, remove).await {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => Some("it timed out".to_string()),
        };
        let Some(failure) = failure else {
            tracing::info!(
                attachment_key = %key,
                "removed the attachment item of a failed upload"
            );
            return true;
        };
        // A DELETE that landed may have lost its answer (and its repeats theirs): only
        // Zotero saying the item is not there makes it removed.
        let gone = tokio::time::timeout(CLEANUP_TIME, self.fetch_item(key, &cancel)).await;
        if matches!(gone, Ok(Ok(None))) {
            tracing::info!(
                attachment_key = %key,
                answer_lost = true,
                "removed the attachment item of a failed upload"
            );
            return true;
        }
        tracing::error!(
            attachment_key = %key,
            error = %failure,
            "could not remove the attachment item of a failed upload"
        );
        false
    }
}
