//! `zotero_upload_attachment`: attach a file (local path, URL or base64 bytes) to an item.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::args::{object_key, Args};
use super::{ToolContext, ToolSpec};
use crate::envelope::ToolError;
use zotero_api::upload::{FileToUpload, NewAttachment, Uploaded};
use zotero_sources::{PrepareOptions, PreparedFile, SourceSpec};

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_upload_attachment",
    title: "Upload attachment",
    description: "Attach a file to an existing item of the personal Zotero library, from \
                  exactly one source: file_path (a readable regular file where the server \
                  runs), file_url (http/https; public addresses only) or file_bytes_base64 \
                  with filename. Files over ZOTERO_UPLOAD_MAX_BYTES are refused before they \
                  are read. All or nothing: if any step fails, the new attachment item is \
                  removed again. The same file (name and bytes) attached twice to one item \
                  answers the existing attachment (already_attached). Sends progress \
                  notifications (bytes) when the request has a progressToken.",
    input_schema,
    data_schema,
    read_only: false,
    idempotent: false,
    open_world: true,
};

const FIELDS: [&str; 7] = [
    "item_key",
    "file_path",
    "file_url",
    "file_bytes_base64",
    "filename",
    "title",
    "content_type",
];

fn input_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_key": { "type": "string", "minLength": 1, "description": "Key of the parent item to attach to" },
            "file_path": { "type": "string", "minLength": 1, "description": "Path of a readable regular file where the server runs (in a container: inside the container)" },
            "file_url": { "type": "string", "minLength": 1, "description": "http/https URL to fetch (redirects followed up to 5; private addresses refused)" },
            "file_bytes_base64": { "type": "string", "minLength": 1, "description": "The file's bytes, base64-encoded; needs filename" },
            "filename": { "type": "string", "minLength": 1, "description": "File name; required with file_bytes_base64, overrides the name otherwise" },
            "title": { "type": "string", "description": "Attachment title (default: the filename)" },
            "content_type": { "type": "string", "description": "MIME type; default: the URL's Content-Type, else from the extension, else application/octet-stream" }
        },
        "required": ["item_key"],
        "anyOf": [
            { "required": ["item_key", "file_path"] },
            { "required": ["item_key", "file_url"] },
            { "required": ["item_key", "file_bytes_base64", "filename"] }
        ]
    })
}

/// The attachment part of the answer, shared with `zotero_attach_arxiv_pdf`.
pub fn attachment_properties() -> Map<String, Value> {
    let props = json!({
        "attachment_key": { "type": "string" },
        "parent_item_key": { "type": "string" },
        "title": { "type": "string" },
        "content_type": { "type": "string" },
        "size": { "type": "integer" },
        "version": { "type": "integer" },
        "already_attached": {
            "type": "boolean",
            "description": "The item had this file (same name and bytes) attached already; nothing was written and this is that attachment"
        }
    });
    match props {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn data_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": attachment_properties(),
        "required": ["attachment_key", "parent_item_key", "version"]
    })
}

pub async fn run(ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    let args = Args::new(raw, &FIELDS)?;
    let item_key = args.required_string("item_key", 1)?;
    object_key("item_key", &item_key)?;
    // With file_bytes_base64 the name goes into the source; otherwise it overrides the
    // path's or URL's name.
    let mut filename = args.string("filename", 1)?;
    let sources = [
        ("file_path", args.string("file_path", 1)?),
        ("file_url", args.string("file_url", 1)?),
        ("file_bytes_base64", args.string("file_bytes_base64", 1)?),
    ];
    let given: Vec<&str> = sources
        .iter()
        .filter(|(_, v)| v.is_some())
        .map(|(k, _)| *k)
        .collect();
    let spec = match sources {
        [(_, Some(path)), (_, None), (_, None)] => SourceSpec::Path(path.into()),
        [(_, None), (_, Some(url)), (_, None)] => SourceSpec::Url(url),
        [(_, None), (_, None), (_, Some(data))] => SourceSpec::Base64 {
            filename: filename.take().ok_or_else(|| {
                ToolError::invalid(
                    "filename",
                    "'filename' is required with file_bytes_base64, e.g. \"paper.pdf\"",
                )
            })?,
            data,
        },
        _ if given.is_empty() => {
            return Err(ToolError::invalid(
                "file_path",
                "give exactly one source: file_path, file_url, or file_bytes_base64 with filename",
            ))
        }
        _ => {
            return Err(ToolError::invalid(
                given.get(1).copied().unwrap_or("file_path"),
                format!(
                    "give exactly one source, not {}: file_path, file_url, or file_bytes_base64 with filename",
                    given.join(" and ")
                ),
            ))
        }
    };
    let options = PrepareOptions {
        content_type: args.optional_text("content_type")?,
        filename,
        require_pdf: false,
        input_field: None,
    };
    let title = args.optional_text("title")?;
    let uploaded = attach(ctx, &item_key, title.as_deref(), spec, options).await?;
    Ok(Value::Object(answer(&item_key, &uploaded)))
}

/// The envelope's data for an uploaded attachment.
pub fn answer(parent: &str, up: &Uploaded) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("attachment_key".into(), json!(up.attachment_key));
    m.insert("parent_item_key".into(), json!(parent));
    m.insert("title".into(), json!(up.title));
    m.insert("content_type".into(), json!(up.content_type));
    m.insert("size".into(), json!(up.size));
    m.insert("version".into(), json!(up.version));
    if up.already_attached {
        m.insert("already_attached".into(), json!(true));
    }
    m
}

/// Checks the parent, prepares the bytes (nothing is written before both succeeded), then
/// runs the upload.
pub async fn attach(
    ctx: &ToolContext,
    parent: &str,
    title: Option<&str>,
    spec: SourceSpec,
    options: PrepareOptions,
) -> Result<Uploaded, ToolError> {
    ctx.library()?.check_parent(parent, &ctx.cancel).await?;
    let prepared = ctx.fetcher.prepare(spec, options, &ctx.cancel).await?;
    let file = to_upload(prepared);
    let new = NewAttachment {
        parent_key: parent,
        title,
        file: &file,
    };
    Ok(ctx
        .library()?
        .upload_attachment(new, ctx.progress.clone(), &ctx.cancel)
        .await?)
}

fn to_upload(prepared: PreparedFile) -> FileToUpload {
    let prepared = Arc::new(prepared);
    let source = prepared.clone();
    FileToUpload {
        filename: prepared.filename.clone(),
        content_type: prepared.content_type.clone(),
        size: prepared.size,
        md5: prepared.md5.clone(),
        mtime_ms: prepared.mtime_ms,
        open: Box::new(move || Ok(source.stream())),
    }
}
