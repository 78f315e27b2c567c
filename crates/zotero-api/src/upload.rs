//! The four-step file upload of the Zotero API: create the attachment item, authorize the
//! upload, send `prefix + bytes + suffix` to the storage URL, register the upload.
//!
//! All or nothing: once the attachment item exists, any later failure (cancellation
//! included) deletes it again, so no empty attachment is left behind. The upload
//! authorization (storage URL, form fields, upload key) never reaches a log line or an
//! answer; neither do the file's bytes.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use hyper::header::HeaderValue;
use hyper::Method;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::error::ZoteroError;
use super::http::{ApiRequest, ApiResponse, ByteStream, UploadRequest};
use crate::client::Library;
use crate::library::ObjectKey;
use crate::progress::Progress;
pub use crate::progress::ProgressFn;
use crate::response::{parse_json, percent_encode, unexpected};

/// How much of the storage's error answer is searched for its `<Code>` and `<Message>`.
const STORAGE_ERROR_PREFIX: usize = 8 * 1024;
/// The longest storage `<Message>` kept (in characters), and the longest `<Code>`.
const STORAGE_MESSAGE_CHARS: usize = 300;
const STORAGE_CODE_CHARS: usize = 64;

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

/// The answer to step 2.
enum Authorization {
    /// Zotero has these bytes already and attached them.
    Exists,
    Upload(UploadAuthorization),
}

/// Where and how to send the bytes. Signed by Zotero for this upload: never logged.
struct UploadAuthorization {
    url: String,
    content_type: String,
    prefix: Bytes,
    suffix: Bytes,
    upload_key: String,
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

    /// Steps 2–4. Answers the version the registration reported, if it did.
    async fn transfer(
        &self,
        key: &ObjectKey,
        file: &FileToUpload,
        progress: &Arc<Progress>,
        cancel: &CancellationToken,
    ) -> Result<Option<u64>, ZoteroError> {
        let auth = match self.authorize(key, file, cancel).await? {
            Authorization::Exists => return Ok(None),
            Authorization::Upload(auth) => auth,
        };
        let (prefix, suffix) = (&auth.prefix, &auth.suffix);
        let body = || -> std::io::Result<ByteStream> {
            let bytes = (file.open)()?;
            let progress = progress.clone();
            let mut sent = 0u64;
            let counted = bytes.inspect(move |chunk| {
                if let Ok(chunk) = chunk {
                    sent += chunk.len() as u64;
                    progress.sent(sent);
                }
            });
            let head = futures_util::stream::once(std::future::ready(Ok(prefix.clone())));
            let tail = futures_util::stream::once(std::future::ready(Ok(suffix.clone())));
            Ok(Box::pin(head.chain(counted).chain(tail)))
        };
        let upload = UploadRequest {
            url: &auth.url,
            content_type: &auth.content_type,
            content_length: prefix.len() as u64 + file.size + suffix.len() as u64,
            body: &body,
        };
        let resp = self.client.web()?.0.send_upload(&upload, cancel).await?;
        if !(200..300).contains(&resp.status) {
            return Err(storage_refused(&resp, &auth));
        }
        self.register(key, file, &auth.upload_key, cancel).await
    }

    /// Step 2: `POST …/file` with the file's MD5, name, size and mtime.
    async fn authorize(
        &self,
        key: &ObjectKey,
        file: &FileToUpload,
        cancel: &CancellationToken,
    ) -> Result<Authorization, ZoteroError> {
        let form = format!(
            "md5={}&filename={}&filesize={}&mtime={}&contentType={}",
            file.md5,
            percent_encode(&file.filename),
            file.size,
            file.mtime_ms,
            percent_encode(&file.content_type),
        );
        // Asking again is harmless: an authorization stores nothing.
        let req = file_request(&format!("/items/{key}/file"), form).repeatable(true);
        let resp = self.send(&req, cancel).await?;
        match resp.status {
            200 => {}
            413 => {
                return Err(ZoteroError::StorageFull {
                    size: file.size,
                    usage_mb: resp.header("zotero-storage-usage").map(str::to_string),
                    quota_mb: resp.header("zotero-storage-quota").map(str::to_string),
                    answer: Box::new(resp.answer()),
                })
            }
            _ => return Err(unexpected(&resp, "authorize the file upload")),
        }
        let answer: Value = parse_json(&resp)?;
        if answer.get("exists").and_then(Value::as_u64) == Some(1) {
            return Ok(Authorization::Exists);
        }
        let field = |name: &str| {
            answer
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| ZoteroError::BadResponse {
                    reason: format!("the upload authorization has no '{name}'"),
                    status: resp.status,
                })
        };
        Ok(Authorization::Upload(UploadAuthorization {
            url: field("url")?,
            content_type: field("contentType")?,
            prefix: Bytes::from(field("prefix")?),
            suffix: Bytes::from(field("suffix")?),
            upload_key: field("uploadKey")?,
        }))
    }

    /// Step 4: `POST …/file` with `upload=<uploadKey>`. A repeat after a lost answer finds
    /// the key used up; then the item itself says whether the file is registered.
    async fn register(
        &self,
        key: &ObjectKey,
        file: &FileToUpload,
        upload_key: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<u64>, ZoteroError> {
        let form = format!("upload={}", percent_encode(upload_key));
        let req = file_request(&format!("/items/{key}/file"), form).repeatable(true);
        let resp = match self.send(&req, cancel).await {
            Ok(resp) => resp,
            Err(cause @ (ZoteroError::Network { .. } | ZoteroError::Timeout { .. })) => {
                return if self.has_file(key, &file.md5, cancel).await {
                    Ok(None)
                } else {
                    Err(cause)
                };
            }
            Err(e) => return Err(e),
        };
        if resp.status == 204 {
            return Ok(resp
                .header("last-modified-version")
                .and_then(|v| v.trim().parse().ok()));
        }
        if resp.retries > 0 && self.has_file(key, &file.md5, cancel).await {
            return Ok(None);
        }
        Err(unexpected(&resp, "register the uploaded file"))
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

fn file_request(path: &str, form: String) -> ApiRequest {
    ApiRequest::with_body(
        Method::POST,
        path,
        "application/x-www-form-urlencoded",
        form,
    )
    .header("if-none-match", HeaderValue::from_static("*"))
}

/// The storage service refused the bytes: its status, and S3's `<Code>` and `<Message>`
/// read from the start of its XML `<Error>` (nothing else of the answer, which may echo the
/// signed form fields), with every value of the authorization taken out of the message.
fn storage_refused(resp: &ApiResponse, auth: &UploadAuthorization) -> ZoteroError {
    let head = resp.body.get(..STORAGE_ERROR_PREFIX).unwrap_or(&resp.body);
    let body = String::from_utf8_lossy(head);
    let element = |name: &str| {
        let open = format!("<{name}>");
        let start = body.find(&open)? + open.len();
        let end = body.get(start..)?.find(&format!("</{name}>"))? + start;
        body.get(start..end)
            .map(|text| text.trim().to_string())
            .filter(|text| !text.is_empty())
    };
    let code = element("Code")
        .filter(|c| c.len() <= STORAGE_CODE_CHARS && c.bytes().all(|b| b.is_ascii_alphanumeric()));
    let message = element("Message").map(|m| {
        let m = redact(&unescape_xml(&m), &authorization_values(auth));
        if m.chars().count() > STORAGE_MESSAGE_CHARS {
            let mut cut: String = m.chars().take(STORAGE_MESSAGE_CHARS).collect();
            cut.push('…');
            cut
        } else {
            m
        }
    });
    ZoteroError::StorageRefused {
        status: resp.status,
        code,
        message,
        retry_after: resp.header("retry-after").map(str::to_string),
    }
}

/// Everything an authorization carries that must not be shown: the storage URL, the upload
/// key, and the value of every form field in its prefix (policy, signature, credential,
/// hash, ...). Values shorter than 6 characters (`201`, `acl` names) are too common to
/// take out of a sentence, and reveal nothing.
fn authorization_values(auth: &UploadAuthorization) -> Vec<String> {
    let prefix = String::from_utf8_lossy(&auth.prefix);
    let mut values: Vec<String> = prefix
        .split("\r\n")
        .map(str::trim)
        .filter(|line| !line.starts_with("--"))
        .filter(|line| !line.to_ascii_lowercase().starts_with("content-"))
        .map(str::to_string)
        .chain([auth.url.clone(), auth.upload_key.clone()])
        .filter(|v| v.len() >= 6)
        .collect();
    // Longest first, so that a value containing another is taken out whole.
    values.sort_by_key(|v| std::cmp::Reverse(v.len()));
    values
}

fn redact(text: &str, secrets: &[String]) -> String {
    secrets.iter().fold(text.to_string(), |text, secret| {
        text.replace(secret.as_str(), "…")
    })
}

/// The five predefined XML entities (S3 escapes its messages).
fn unescape_xml(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn authorization(prefix: &str) -> UploadAuthorization {
        UploadAuthorization {
            url: "https://storage.example/zotero-uploads/?X-Amz-Signature=SIGNEDURL".into(),
            content_type: "multipart/form-data; boundary=B".into(),
            prefix: Bytes::from(prefix.to_string()),
            suffix: Bytes::from_static(b"\r\n--B--"),
            upload_key: "UPLOADKEY0123456789".into(),
        }
    }

    fn answer(status: u16, body: &str) -> ApiResponse {
        ApiResponse {
            status,
            headers: hyper::HeaderMap::new(),
            body: Bytes::from(body.to_string()),
            retries: 0,
        }
    }

    #[test]
    fn storage_errors_keep_status_code_and_message_only() {
        let resp = answer(
            403,
            "<Error><Code>SignatureDoesNotMatch</Code><Message>bad sig</Message><StringToSign>SECRETPOLICY</StringToSign></Error>",
        );
        let e = storage_refused(&resp, &authorization(""));
        let text = e.to_string();
        assert!(
            text.contains("HTTP 403 SignatureDoesNotMatch: bad sig"),
            "{text}"
        );
        assert!(!text.contains("SECRETPOLICY"));
        let ZoteroError::StorageRefused {
            status,
            code,
            message,
            ..
        } = e
        else {
            panic!("a storage refusal expected")
        };
        assert_eq!(status, 403);
        assert_eq!(code.as_deref(), Some("SignatureDoesNotMatch"));
        assert_eq!(message.as_deref(), Some("bad sig"));
    }

    #[test]
    fn storage_messages_lose_the_authorizations_values_and_are_capped() {
        let prefix = "--B\r\nContent-Disposition: form-data; name=\"x-amz-credential\"\r\n\r\nAKIAEXAMPLE/20250101/us-east-1/s3/aws4_request\r\n--B\r\nContent-Disposition: form-data; name=\"acl\"\r\n\r\nprivate\r\n--B\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n";
        let resp = answer(
            403,
            "<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>Invalid according to Policy: Policy Condition failed: [&quot;eq&quot;, &quot;$x-amz-credential&quot;, &quot;AKIAEXAMPLE/20250101/us-east-1/s3/aws4_request&quot;]</Message></Error>",
        );
        let ZoteroError::StorageRefused { message, .. } =
            storage_refused(&resp, &authorization(prefix))
        else {
            panic!("a storage refusal expected")
        };
        let message = message.unwrap();
        assert!(!message.contains("AKIAEXAMPLE"), "{message}");
        assert!(
            message.starts_with("Invalid according to Policy: Policy Condition failed: [\"eq\""),
            "{message}"
        );

        let long = format!(
            "<Error><Code>X</Code><Message>{}</Message></Error>",
            "a".repeat(5000)
        );
        let ZoteroError::StorageRefused { message, .. } =
            storage_refused(&answer(400, &long), &authorization(""))
        else {
            panic!("a storage refusal expected")
        };
        assert_eq!(message.unwrap().chars().count(), STORAGE_MESSAGE_CHARS + 1);

        // Only a bounded prefix is searched, and a code must look like one.
        let late = format!(
            "{}<Error><Code>Late</Code></Error>",
            " ".repeat(STORAGE_ERROR_PREFIX)
        );
        let ZoteroError::StorageRefused { code, message, .. } =
            storage_refused(&answer(500, &late), &authorization(""))
        else {
            panic!("a storage refusal expected")
        };
        assert_eq!((code, message), (None, None));
        let odd = "<Error><Code>not a code</Code></Error>";
        let ZoteroError::StorageRefused { code, .. } =
            storage_refused(&answer(500, odd), &authorization(""))
        else {
            panic!("a storage refusal expected")
        };
        assert_eq!(code, None);
    }
}
