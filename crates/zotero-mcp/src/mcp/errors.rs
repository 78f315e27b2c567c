//! The one place where domain errors become what a caller sees: `ZoteroError` and
//! `SourceError` to the public codes (`ZOTERO_*`) with their details, and those (for
//! resources and prompts, which answer MCP errors rather than envelopes) to MCP's codes.

use serde_json::{json, Value};
use zotero_api::error::UpstreamAnswer;
use zotero_api::ZoteroError;
use zotero_index::{IndexError, Remedy};
use zotero_text::TextError;

use crate::service::fulltext::reader::{text_error_reason, ReadError};
use zotero_metadata::services::ServiceError;
use zotero_sources::{Blame, SourceError};

use crate::error::{ErrorCode, ToolError};

/// The public code of a Zotero error.
pub fn zotero_code(err: &ZoteroError) -> ErrorCode {
    match err {
        ZoteroError::MissingCredentials { .. }
        | ZoteroError::BadApiKey
        | ZoteroError::LibraryAccess { .. }
        | ZoteroError::LocalApiOff
        | ZoteroError::LocalKeyRejected
        | ZoteroError::LocalWritesUnavailable { .. }
        | ZoteroError::LocalWriteDenied { .. }
        | ZoteroError::LocalApiNotConfigured => ErrorCode::Auth,
        // Another database opened meanwhile: read again and retry.
        ZoteroError::LocalDatabaseChanged => ErrorCode::Upstream,
        // A request this client could not build is a defect of the server, not the input.
        ZoteroError::InvalidRequest { .. } => ErrorCode::Internal,
        ZoteroError::Status { answer, .. } => ErrorCode::for_status(answer.status),
        ZoteroError::WaitTooLong { .. } => ErrorCode::RateLimited,
        ZoteroError::Network { .. }
        | ZoteroError::DesktopFailing { .. }
        | ZoteroError::StorageAddressRefused { .. }
        | ZoteroError::Database { .. }
        | ZoteroError::Timeout { .. }
        | ZoteroError::Cancelled
        | ZoteroError::BadResponse { .. } => ErrorCode::Upstream,
        ZoteroError::NotAParent { .. }
        | ZoteroError::Source { .. }
        | ZoteroError::UnknownItemType { .. }
        | ZoteroError::AmbiguousCollection { .. }
        | ZoteroError::KeptChanging { .. }
        | ZoteroError::StorageFull { .. }
        | ZoteroError::UnknownStyle { .. } => ErrorCode::Validation,
        ZoteroError::NotFound { .. }
        | ZoteroError::CollectionNotFound { .. }
        | ZoteroError::NoFullText { .. } => ErrorCode::NotFound,
        ZoteroError::FileUnavailable { why, .. } => {
            use zotero_api::error::FileUnavailable as F;
            match why {
                F::TooLarge { .. } | F::NoFile => ErrorCode::Validation,
                F::ChecksumMismatch => ErrorCode::Upstream,
                F::NotOnZoteroStorage
                | F::Missing
                | F::LinkedOutsideRoots
                | F::OutsideStorage
                | F::NotDownloaded => ErrorCode::NotFound,
            }
        }
        ZoteroError::Rejected { code, .. } => ErrorCode::for_status(*code),
        ZoteroError::CreateUnconfirmed { .. } => ErrorCode::Upstream,
        // The storage's refusal is not Zotero's answer to the key or the input: whatever its
        // status (a 403 is an expired or refused authorization, not a bad API key), it is
        // upstream; only its 429 asks the caller to wait.
        ZoteroError::StorageRefused { status: 429, .. } => ErrorCode::RateLimited,
        ZoteroError::StorageRefused { .. } => ErrorCode::Upstream,
        ZoteroError::AttachmentAbandoned { error, .. } => zotero_code(error),
    }
}

fn answer_details(e: &mut ToolError, a: &UpstreamAnswer) {
    e.details.insert("status".into(), Value::from(a.status));
    if !a.body.is_empty() {
        e.details.insert("body".into(), Value::from(a.body.clone()));
    }
    if let Some(r) = &a.retry_after {
        e.details
            .insert("retry_after".into(), Value::from(r.clone()));
    }
    if let Some(r) = &a.request_id {
        e.details
            .insert("request_id".into(), Value::from(r.clone()));
    }
}

impl From<ZoteroError> for ToolError {
    fn from(err: ZoteroError) -> ToolError {
        let mut e = ToolError::new(zotero_code(&err), err.to_string());
        match &err {
            ZoteroError::MissingCredentials { missing } => {
                e.details.insert(
                    "missing".into(),
                    Value::from(missing.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
                );
            }
            ZoteroError::Status { answer, .. } => answer_details(&mut e, answer),
            ZoteroError::LibraryAccess {
                library,
                need,
                answer,
                ..
            } => {
                if let Some(a) = answer {
                    answer_details(&mut e, a);
                }
                e.details.insert("library".into(), json!(library));
                e.details.insert("needed".into(), json!(need));
            }
            ZoteroError::WaitTooLong {
                wait_secs, answer, ..
            } => {
                if let Some(a) = answer {
                    answer_details(&mut e, a);
                }
                // The wait the caller should honour, in seconds, whatever form Zotero used.
                e.details
                    .insert("retry_after".into(), Value::from(wait_secs.to_string()));
            }
            ZoteroError::BadResponse { status, .. } => {
                e.details.insert("status".into(), Value::from(*status));
            }
            ZoteroError::UnknownItemType { valid, .. } => {
                e.details.insert("field".into(), json!("item_type"));
                e.details.insert("valid_item_types".into(), json!(valid));
            }
            ZoteroError::Rejected { code, answer, .. } => {
                answer_details(&mut e, answer);
                e.details.insert("object_code".into(), json!(code));
            }
            ZoteroError::CreateUnconfirmed {
                kind, key, created, ..
            } => {
                let field = match kind {
                    zotero_api::edit::ObjectKind::Item => "item_key",
                    zotero_api::edit::ObjectKind::Collection => "collection_key",
                };
                e.details.insert(field.into(), json!(key));
                let created = if *created {
                    json!(true)
                } else {
                    json!("unknown")
                };
                e.details.insert("created".into(), created);
            }
            ZoteroError::CollectionNotFound { closest, .. } => {
                e.details.insert("field".into(), json!("collection_name"));
                e.details.insert("closest_names".into(), json!(closest));
            }
            ZoteroError::AmbiguousCollection { candidates, .. } => {
                e.details.insert("field".into(), json!("collection_name"));
                e.details.insert("candidates".into(), json!(candidates));
            }
            ZoteroError::StorageFull {
                size,
                usage_mb,
                quota_mb,
                answer,
            } => {
                answer_details(&mut e, answer);
                e.details.insert("file_size".into(), json!(size));
                e.details.insert("storage_usage_mb".into(), json!(usage_mb));
                e.details.insert("storage_quota_mb".into(), json!(quota_mb));
            }
            ZoteroError::StorageRefused {
                status,
                code,
                message,
                retry_after,
            } => {
                e.details.insert("status".into(), json!(status));
                if let Some(c) = code {
                    e.details.insert("storage_code".into(), json!(c));
                }
                if let Some(m) = message {
                    e.details.insert("storage_message".into(), json!(m));
                }
                if let Some(r) = retry_after {
                    e.details.insert("retry_after".into(), json!(r));
                }
            }
            ZoteroError::AttachmentAbandoned {
                error,
                attachment_key,
                removed,
            } => {
                let inner = ToolError::from((**error).clone());
                e.details = inner.details;
                e.details
                    .insert("attachment_key".into(), json!(attachment_key));
                e.details
                    .insert("attachment_removed".into(), json!(removed));
            }
            ZoteroError::NoFullText { key, why } => {
                use zotero_api::fulltext::NoFullText;
                e.details.insert("item_key".into(), json!(key));
                let reason = match why {
                    NoFullText::NotADocument { .. } => "not_a_document",
                    NoFullText::LinkOnly => "link_only",
                    NoFullText::NoDocuments => "no_documents",
                    NoFullText::NotIndexed { attachments } => {
                        e.details
                            .insert("attachments_not_indexed".into(), json!(attachments));
                        "not_indexed"
                    }
                };
                e.details.insert("reason".into(), json!(reason));
            }
            ZoteroError::NotAParent { .. } => {
                e.details.insert("field".into(), json!("item_key"));
            }
            ZoteroError::FileUnavailable { key, why } => {
                use zotero_api::error::FileUnavailable as F;
                e.details.insert("attachment_key".into(), json!(key));
                let reason = match why {
                    F::NoFile => "no_file",
                    F::NotOnZoteroStorage => "not_on_zotero_storage",
                    F::Missing => "missing",
                    F::LinkedOutsideRoots => "linked_outside_upload_roots",
                    F::OutsideStorage => "outside_storage",
                    F::TooLarge { limit } => {
                        e.details.insert("limit_bytes".into(), json!(limit));
                        "too_large"
                    }
                    F::ChecksumMismatch => "md5_mismatch",
                    F::NotDownloaded => "not_downloaded",
                };
                e.details.insert("reason".into(), json!(reason));
            }
            ZoteroError::UnknownStyle { answer, .. } => {
                answer_details(&mut e, answer);
                e.details.insert("field".into(), json!("style"));
                e.details
                    .insert("styles".into(), json!("https://www.zotero.org/styles"));
            }
            ZoteroError::BadApiKey => {
                e.details.insert("variable".into(), json!("ZOTERO_API_KEY"));
            }
            ZoteroError::LocalWriteDenied { answer, .. } => answer_details(&mut e, answer),
            ZoteroError::LocalKeyRejected => {
                e.details
                    .insert("command".into(), json!("zotero-mcp authorize"));
            }
            ZoteroError::LocalApiOff
            | ZoteroError::LocalDatabaseChanged
            | ZoteroError::LocalWritesUnavailable { .. }
            | ZoteroError::LocalApiNotConfigured
            | ZoteroError::DesktopFailing { .. }
            | ZoteroError::StorageAddressRefused { .. }
            | ZoteroError::Network { .. }
            | ZoteroError::Database { .. }
            | ZoteroError::Timeout { .. }
            | ZoteroError::Cancelled
            | ZoteroError::InvalidRequest { .. }
            | ZoteroError::Source { .. }
            | ZoteroError::NotFound { .. }
            | ZoteroError::KeptChanging { .. } => {}
        }
        e
    }
}

/// A metadata service's failure (its text already cleaned of secrets by the service, which
/// builds every such text through `MetadataServices::clean`).
impl From<ServiceError> for ToolError {
    fn from(e: ServiceError) -> Self {
        let code = match &e {
            ServiceError::RateLimited { .. } | ServiceError::DailyBudget { .. } => {
                ErrorCode::RateLimited
            }
            ServiceError::BadIdentifier(_) => ErrorCode::Validation,
            ServiceError::Forbidden { .. } => ErrorCode::Auth,
            _ => ErrorCode::Upstream,
        };
        let mut err = ToolError::new(code, e.to_string());
        if let ServiceError::RateLimited { secs, .. } = e {
            err = err.with_detail("retry_after", secs.to_string());
        }
        err
    }
}

/// The public code of an index error. Everything the user can fix (the directory, a file's
/// permissions, a full disk, a damaged or foreign file, another model's vectors) is
/// `ZOTERO_VALIDATION_ERROR`, as Zotero's own 409/412 (a state to resolve before the call
/// can succeed, not a retry); another update running is `ZOTERO_RATE_LIMITED`; only what
/// would be this program's defect (a query SQLite refused, a lock mixed up) is internal.
fn index_error_code(e: &IndexError) -> ErrorCode {
    match e {
        IndexError::NoSemantic { .. }
        | IndexError::LibraryId(_)
        | IndexError::NoDirectory
        | IndexError::Corrupt { .. }
        | IndexError::ModelMismatch { .. }
        | IndexError::Io { .. }
        | IndexError::Storage { .. }
        // A model that cannot run here: the user picks another (ZOTERO_EMBEDDING_MODEL).
        | IndexError::Encode(_) => ErrorCode::Validation,
        IndexError::Busy { .. } => ErrorCode::RateLimited,
        IndexError::WrongLock { .. } | IndexError::Sqlite(_) => ErrorCode::Internal,
    }
}

/// An index error as a tool error: what to do is in the message; `details` name the path,
/// and the variable (`ZOTERO_INDEX_DIR`) or the command (`update-db --full`) that fixes it.
impl From<IndexError> for ToolError {
    fn from(e: IndexError) -> Self {
        index_error(e)
    }
}

fn index_error(e: IndexError) -> ToolError {
    let mut err = ToolError::new(index_error_code(&e), e.to_string());
    match &e {
        IndexError::Corrupt { path, .. } | IndexError::ModelMismatch { path, .. } => {
            err = err
                .with_detail("command", zotero_index::error::REBUILD_HINT)
                .with_detail("path", path.display().to_string());
        }
        IndexError::Io { path, remedy, .. } | IndexError::Storage { path, remedy, .. } => {
            err = err.with_detail("path", path.display().to_string());
            match remedy {
                Remedy::Directory | Remedy::Space => {
                    err = err.with_detail("variable", "ZOTERO_INDEX_DIR");
                }
                Remedy::File => {
                    err = err.with_detail("command", zotero_index::error::REBUILD_HINT);
                }
                Remedy::NotAFile => {}
            }
        }
        IndexError::NoDirectory => err = err.with_detail("variable", "ZOTERO_INDEX_DIR"),
        IndexError::Encode(_) => err = err.with_detail("variable", "ZOTERO_EMBEDDING_MODEL"),
        IndexError::Busy { path } => err = err.with_detail("path", path.display().to_string()),
        _ => {}
    }
    err
}

/// Why an attachment's file gave no document.
impl From<ReadError> for ToolError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::File(e) => e.into(),
            ReadError::Text { key, error } => text_error(&key, error),
            e @ ReadError::Stopped(_) => ToolError::internal(e.to_string()),
        }
    }
}

/// Why a file gave no document, as a tool error.
fn text_error(key: &str, e: TextError) -> ToolError {
    let reason = text_error_reason(&e);
    let code = match e {
        TextError::TooLarge { .. }
        | TextError::DecodedTooLarge { .. }
        | TextError::ContentTooLarge { .. }
        | TextError::TooMuchText { .. }
        | TextError::TooManyObjects { .. }
        | TextError::TooManyPages { .. } => ErrorCode::Validation,
        TextError::TimedOut { .. } => ErrorCode::Upstream,
        TextError::Encrypted | TextError::Damaged { .. } | TextError::Unsupported => {
            ErrorCode::NotFound
        }
    };
    ToolError::new(code, format!("attachment {key}: {e}"))
        .with_detail("attachment_key", key)
        .with_detail("reason", reason)
}

impl From<SourceError> for ToolError {
    fn from(e: SourceError) -> Self {
        let code = match e.blame() {
            Blame::Input => ErrorCode::Validation,
            Blame::Missing => ErrorCode::NotFound,
            Blame::Remote => ErrorCode::Upstream,
            Blame::Internal => ErrorCode::Internal,
        };
        let mut t = ToolError::new(code, e.to_string());
        t.details = e.context();
        t
    }
}

/// A tool error as an MCP error (resources and prompts): not found → resource not found
/// (-32002, as the MCP specification says), a bad URI or argument → invalid params (-32602),
/// anything else → internal error with the message. `data` keeps the public code and details.
impl From<ToolError> for rmcp::ErrorData {
    fn from(e: ToolError) -> Self {
        let e = e.bounded();
        let data = Some(json!({ "code": e.code.as_str(), "details": e.details }));
        match e.code {
            ErrorCode::NotFound => rmcp::ErrorData::resource_not_found(e.message, data),
            ErrorCode::Validation => rmcp::ErrorData::invalid_params(e.message, data),
            _ => rmcp::ErrorData::internal_error(e.message, data),
        }
    }
}

/// A Zotero error as an MCP error: through its tool error, so both agree.
pub fn zotero_mcp_error(e: ZoteroError) -> rmcp::ErrorData {
    ToolError::from(e).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Only the server's own defects are internal; a full disk (not made in the tests of the
    /// tools) is the user's to resolve, naming the variable that moves the index.
    #[test]
    fn index_errors_are_internal_only_for_defects() {
        let path = PathBuf::from("/data/index/user.sqlite");
        let full = index_error(IndexError::Storage {
            path: path.clone(),
            reason: "database or disk is full".into(),
            remedy: Remedy::Space,
        });
        assert_eq!(full.code, ErrorCode::Validation);
        assert_eq!(full.details["variable"], "ZOTERO_INDEX_DIR");
        assert!(
            full.message.contains("free some disk space"),
            "{}",
            full.message
        );
        let lock = IndexError::WrongLock {
            lock: path.clone(),
            index: path,
        };
        assert_eq!(index_error(lock).code, ErrorCode::Internal);
    }

    #[test]
    fn tool_errors_become_mcp_errors_by_their_code() {
        let not_found: rmcp::ErrorData = ToolError::not_found("no such item").into();
        assert_eq!(not_found.code.0, -32002);
        assert_eq!(not_found.data.unwrap()["code"], "ZOTERO_NOT_FOUND");
        let invalid: rmcp::ErrorData = ToolError::invalid("uri", "bad").into();
        assert_eq!(invalid.code.0, -32602);
        assert_eq!(invalid.data.unwrap()["details"]["field"], "uri");
        let auth = zotero_mcp_error(ZoteroError::BadApiKey);
        assert_eq!(auth.code.0, -32603);
        assert!(auth.message.contains("ZOTERO_API_KEY"), "{}", auth.message);
    }

    #[test]
    fn wait_too_long_is_rate_limited_with_retry_after() {
        let e: ToolError = ZoteroError::WaitTooLong {
            wait_secs: 120,
            max_wait_secs: 30,
            answer: Some(UpstreamAnswer {
                status: 429,
                body: "Too Many Requests".into(),
                retry_after: Some("120".into()),
                request_id: None,
            }),
        }
        .into();
        assert_eq!(e.code, ErrorCode::RateLimited);
        assert_eq!(e.details["retry_after"], "120");
        assert_eq!(e.details["status"], 429);
    }

    #[test]
    fn a_storage_refusal_is_upstream_whatever_its_status() {
        let refused = |status: u16| ZoteroError::StorageRefused {
            status,
            code: Some("AccessDenied".into()),
            message: Some("Invalid according to Policy: Policy expired.".into()),
            retry_after: None,
        };
        for status in [400, 401, 403, 404, 500, 503] {
            let e: ToolError = refused(status).into();
            assert_eq!(e.code, ErrorCode::Upstream, "{status}");
            assert_eq!(e.details["status"], status);
            assert_eq!(e.details["storage_code"], "AccessDenied");
            assert!(!e.message.contains("API key"), "{}", e.message);
        }
        assert_eq!(zotero_code(&refused(429)), ErrorCode::RateLimited);
    }
}
