//! The parts of tool answers that several tools share: items, attachments, collections and
//! uploaded files, in the seed's field names. Their schemas are derived like every `Data`, so
//! what a tool publishes is what it serializes.
//!
//! zotero-api's own types know nothing of schemas or of the seed; each is converted here.

use schemars::JsonSchema;
use serde::Serialize;

use zotero_api::LibraryRef;

use crate::tools::params::{Creator, Tag};

/// An item; fields it lacks are left out.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Item {
    /// 8-character key
    pub item_key: String,
    /// Zotero item type
    pub item_type: String,
    /// Title
    pub title: String,
    /// Authors, editors, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub creators: Vec<Creator>,
    /// Date as written
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// DOI
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doi: Option<String>,
    /// URL
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Abstract
    #[serde(rename = "abstract", skip_serializing_if = "Option::is_none")]
    pub abstract_note: Option<String>,
    /// Tag names
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<Tag>,
    /// Zotero's Extra field
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra: Option<String>,
    /// Version; grows with every change
    pub version: u64,
    /// Opens the item in the Zotero app: zotero://select/…
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zotero_url: Option<String>,
}

impl Item {
    /// The item of `library` as tools answer it.
    pub fn new(i: zotero_api::model::Item, library: LibraryRef) -> Self {
        let zotero_url = zotero_api::ObjectKey::parse(&i.item_key)
            .ok()
            .map(|k| library.zotero_url(&k));
        Self {
            item_key: i.item_key,
            item_type: i.item_type,
            title: i.title,
            creators: i.creators.into_iter().map(Creator::from).collect(),
            date: i.date,
            doi: i.doi,
            url: i.url,
            abstract_note: i.abstract_note,
            tags: i.tags.into_iter().map(Tag::from).collect(),
            extra: i.extra,
            version: i.version,
            zotero_url,
        }
    }
}

/// An item with a summary of each attachment (`zotero_get_item`).
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ItemWithAttachments {
    /// The item (its fields inline)
    #[serde(flatten)]
    pub item: Item,
    /// The item's attachments
    pub attachments: Vec<Attachment>,
}

impl ItemWithAttachments {
    /// The item of `library` with what it carries.
    pub fn new(mut i: zotero_api::model::Item, library: LibraryRef) -> Self {
        let attachments = i.attachments.take().unwrap_or_default();
        Self {
            attachments: attachments.into_iter().map(Attachment::from).collect(),
            item: Item::new(i, library),
        }
    }
}

/// One attachment of an item.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Attachment {
    /// Key of the attachment item
    pub attachment_key: String,
    /// Title (else the file name)
    pub title: String,
    /// MIME type
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Bytes
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl From<zotero_api::model::AttachmentSummary> for Attachment {
    fn from(a: zotero_api::model::AttachmentSummary) -> Self {
        Self {
            attachment_key: a.attachment_key,
            title: a.title,
            content_type: a.content_type,
            size: a.size,
        }
    }
}

/// A collection.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Collection {
    /// 8-character key
    pub collection_key: String,
    /// Name
    pub name: String,
    /// Key of the parent collection; absent at the top level
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_key: Option<String>,
    /// Version
    pub version: u64,
    /// Items in it, when Zotero says
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_items: Option<u64>,
    /// true: it is in Zotero's trash (restore it there to use it); absent otherwise
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub in_trash: bool,
}

impl From<zotero_api::model::Collection> for Collection {
    fn from(c: zotero_api::model::Collection) -> Self {
        Self {
            collection_key: c.collection_key,
            name: c.name,
            parent_key: c.parent_key,
            version: c.version,
            num_items: c.num_items,
            in_trash: c.in_trash,
        }
    }
}

/// A file attached to an item (`zotero_upload_attachment`, `zotero_attach_arxiv_pdf`), or in a
/// dry run the attachment that would be.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct Attached {
    /// Key of the new attachment item ("" in a dry run, unless already_attached)
    pub attachment_key: String,
    /// The item it is attached to
    pub parent_item_key: String,
    /// Attachment title
    pub title: String,
    /// MIME type
    pub content_type: String,
    /// Bytes
    pub size: u64,
    /// Version of the attachment item (0 in a dry run, unless already_attached)
    pub version: u64,
    /// The file's name as stored
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// MD5 of the file's bytes (lower-case hex)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub md5: Option<String>,
    /// Present when the item had this file (same name and bytes) already: nothing was
    /// written, this is that attachment
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub already_attached: bool,
    /// Present in a dry run: nothing was written. Unless already_attached, this is the
    /// attachment that would be created (attachment_key "" and version 0: they exist once
    /// it is written)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

impl Attached {
    /// The upload to `parent` as tools answer it.
    pub fn new(parent: &str, up: zotero_api::upload::Uploaded) -> Self {
        Self {
            attachment_key: up.attachment_key,
            parent_item_key: parent.to_string(),
            title: up.title,
            content_type: up.content_type,
            size: up.size,
            version: up.version,
            filename: Some(up.filename),
            md5: Some(up.md5),
            already_attached: up.already_attached,
            dry_run: false,
        }
    }

    /// A dry run's answer: the attachment there already, or the one that would be created.
    pub fn planned(parent: &str, plan: zotero_api::upload::AttachmentPlan) -> Self {
        use zotero_api::upload::AttachmentPlan;
        match plan {
            AttachmentPlan::Attached(up) => Self {
                dry_run: true,
                ..Self::new(parent, up)
            },
            AttachmentPlan::New(new) => Self {
                attachment_key: String::new(),
                parent_item_key: parent.to_string(),
                title: new.title,
                content_type: new.content_type,
                size: new.size,
                version: 0,
                filename: Some(new.filename),
                md5: Some(new.md5),
                already_attached: false,
                dry_run: true,
            },
        }
    }
}
