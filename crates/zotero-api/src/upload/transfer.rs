//! Steps 2–4 of an upload: authorize it, send the bytes to the storage service, register
//! them. The authorization is never logged; a storage refusal keeps only its status, code and
//! message, with the authorization's values taken out.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use hyper::header::HeaderValue;
use hyper::Method;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::FileToUpload;
use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::{host_of, ApiRequest, ApiResponse, ByteStream, UploadRequest};
use crate::library::ObjectKey;
use crate::progress::Progress;
use crate::response::{parse_json, percent_encode, unexpected};
use crate::write_route::WriteRoute;

/// How much of the storage's error answer is searched for its `<Code>` and `<Message>`.
const STORAGE_ERROR_PREFIX: usize = 8 * 1024;
/// The longest storage `<Message>` kept (in characters), and the longest `<Code>`.
const STORAGE_MESSAGE_CHARS: usize = 300;
const STORAGE_CODE_CHARS: usize = 64;

/// The answer to step 2.
pub(super) enum Authorization {
    /// Zotero has these bytes already and attached them.
    Exists,
    Upload(UploadAuthorization),
}

/// Where and how to send the bytes. Signed by Zotero for this upload: never logged.
pub(super) struct UploadAuthorization {
    url: String,
    content_type: String,
    prefix: Bytes,
    suffix: Bytes,
    upload_key: String,
}
impl Library<'_> {
    /// Steps 2–4. Answers the version the registration reported, if it did.
    pub(super) async fn transfer(
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
        let route = self.client.write_route(cancel).await?;
        let (http, content_type, server_id) = match &route {
            WriteRoute::Web => (self.client.web()?.0, auth.content_type.as_str(), None),
            WriteRoute::Local { server_id, .. } => {
                let local = self
                    .client
                    .local_http()
                    .ok_or(ZoteroError::LocalApiNotConfigured)?;
                // The bytes go only to the desktop itself, whatever URL it named.
                if host_of(&auth.url) != host_of(local.base()) {
                    return Err(ZoteroError::BadResponse {
                        reason: "the desktop named an upload URL on another host".into(),
                        status: 200,
                    });
                }
                // Raw bytes: Zotero decodes text, JSON and form bodies as text.
                (local, "application/octet-stream", Some(server_id.as_str()))
            }
        };
        let upload = UploadRequest {
            url: &auth.url,
            content_type,
            content_length: prefix.len() as u64 + file.size + suffix.len() as u64,
            body: &body,
            server_id,
        };
        let resp = http.send_upload(&upload, cancel).await?;
        if !(200..300).contains(&resp.status) {
            return Err(storage_refused(&resp, &auth));
        }
        self.register(key, file, &auth.upload_key, cancel).await
    }

    /// Step 2: `POST …/file` with the file's MD5, name, size and mtime.
    pub(super) async fn authorize(
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
    pub(super) async fn register(
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
