//! `zotero_attach_arxiv_pdf`: fetch an arXiv PDF and attach it to an item.

use serde_json::{json, Map, Value};

use super::args::{object_key, Args};
use super::upload_attachment::{answer, attach, attachment_properties};
use super::{ToolContext, ToolSpec};
use crate::envelope::ToolError;
use zotero_sources::{ArxivId, PrepareOptions, SourceSpec};

pub const SPEC: ToolSpec = ToolSpec {
    name: "zotero_attach_arxiv_pdf",
    title: "Attach arXiv PDF",
    description: "Fetch the PDF of an arXiv paper and attach it to an existing item of the \
                  personal Zotero library. arxiv_id takes new ids (1706.03762, 1706.03762v5), \
                  old ids (hep-th/9901001, math.CA/0611800v2), 'arXiv:' prefixes and \
                  arxiv.org/abs or /pdf URLs. An answer that is not a PDF is refused. All or \
                  nothing, like zotero_upload_attachment; the same PDF attached twice answers \
                  the existing attachment (already_attached).",
    input_schema,
    data_schema,
    read_only: false,
    idempotent: false,
    open_world: true,
};

fn input_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "item_key": { "type": "string", "minLength": 1, "description": "Key of the parent item to attach to" },
            "arxiv_id": { "type": "string", "minLength": 1, "description": "arXiv identifier or URL, e.g. 1706.03762v1 or https://arxiv.org/abs/1706.03762" },
            "title": { "type": "string", "description": "Attachment title (default: the filename, <id>.pdf)" }
        },
        "required": ["item_key", "arxiv_id"]
    })
}

fn data_schema() -> Value {
    let mut props = attachment_properties();
    props.insert(
        "arxiv_id".into(),
        json!({ "type": "string", "description": "The id as fetched (with its version when one was given)" }),
    );
    props.insert("pdf_url".into(), json!({ "type": "string" }));
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": props,
        "required": ["attachment_key", "parent_item_key", "version", "arxiv_id", "pdf_url"]
    })
}

pub async fn run(ctx: &ToolContext, raw: Option<&Map<String, Value>>) -> Result<Value, ToolError> {
    let args = Args::new(raw, &["item_key", "arxiv_id", "title"])?;
    let item_key = args.required_string("item_key", 1)?;
    object_key("item_key", &item_key)?;
    let id = ArxivId::parse(&args.required_string("arxiv_id", 1)?)?;
    let title = args.optional_text("title")?;
    let pdf_url = id.pdf_url(&ctx.arxiv_base);
    let options = PrepareOptions {
        content_type: Some("application/pdf".into()),
        filename: Some(id.filename()),
        require_pdf: true,
        input_field: Some("arxiv_id"),
    };
    let uploaded = attach(
        ctx,
        &item_key,
        title.as_deref(),
        SourceSpec::Url(pdf_url.clone()),
        options,
    )
    .await?;
    let mut data = answer(&item_key, &uploaded);
    data.insert("arxiv_id".into(), json!(id.id));
    data.insert("pdf_url".into(), json!(pdf_url));
    Ok(Value::Object(data))
}
