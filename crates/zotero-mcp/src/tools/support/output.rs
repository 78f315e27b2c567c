//! The parts of tool answers that several tools share: items, attachments, collections and
//! uploaded files, in the seed's field names. Their schemas are derived like every `Data`, so
//! what a tool publishes is what it serializes.
//!
//! zotero-api's own types know nothing of schemas or of the seed; each is converted here.

use schemars::JsonSchema;
use serde::Serialize;

use zotero_api::LibraryRef;

use crate::budget;
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
    /// Zotero flags it retracted (zotero_get_item_metadata: why)
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retracted: bool,
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
            retracted: i.retraction.is_some(),
        }
    }
}

/// How much of an item one answer shows, in characters of JSON: of each text field, of the
/// abstract, of the creators and of the tags. A listing shows less of each item than
/// `zotero_get_item`; `zotero_get_item_metadata` with `field` and `offset` reads the rest.
#[derive(Debug, Clone, Copy)]
pub struct ItemCaps {
    /// Of each text field other than the abstract.
    pub text: usize,
    /// Of the abstract.
    pub abstract_chars: usize,
    /// Of the creators, all together.
    pub creators: usize,
    /// Of the tags, all together.
    pub tags: usize,
}

impl ItemCaps {
    /// An item of a page of `zotero_search_items` or `zotero_list_items`.
    pub const LISTED: ItemCaps = ItemCaps {
        text: 500,
        abstract_chars: 1_000,
        creators: 1_500,
        tags: 1_000,
    };
    /// The item of `zotero_get_item`.
    pub const ONE: ItemCaps = ItemCaps {
        text: 1_000,
        abstract_chars: 5_000,
        creators: 3_000,
        tags: 2_000,
    };
}

/// What was cut of one field or list: its Zotero name, what is shown and what there is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The field's Zotero name, or `creators` / `tags`.
    pub field: &'static str,
    /// Characters (entries of a list) shown.
    pub shown: usize,
    /// Characters (entries of a list) there are.
    pub total: usize,
}

impl Cut {
    /// "abstractNote: the first 1000 of 60000 characters; zotero_get_item_metadata with
    /// item_key K, field=abstractNote, offset=1000 reads on"
    pub fn note(&self, item_key: &str) -> String {
        let unit = match self.field {
            "creators" | "tags" => "",
            _ => " characters",
        };
        format!(
            "{}: the first {} of {}{unit}; zotero_get_item_metadata with item_key {item_key}, \
             field={}, offset={} reads on",
            self.field, self.shown, self.total, self.field, self.shown
        )
    }
}

/// `text` cut to `max` characters of JSON, noting the cut as `field`'s.
fn cut_text(text: &mut String, max: usize, field: &'static str, cuts: &mut Vec<Cut>) {
    if let Some((kept, n)) = budget::cut_json(text, max) {
        let kept = kept.to_string();
        cuts.push(Cut {
            field,
            shown: n,
            total: text.chars().count(),
        });
        *text = kept;
    }
}

/// The first entries of `list` whose JSON fits in `max` characters, noting a cut as `field`'s.
fn cut_list<T: Serialize>(list: &mut Vec<T>, max: usize, field: &'static str, cuts: &mut Vec<Cut>) {
    let total = list.len();
    let mut used = 0;
    let keep = list
        .iter()
        .position(|e| {
            used += budget::json_chars(e).saturating_add(1);
            used > max
        })
        .unwrap_or(total);
    if keep < total {
        list.truncate(keep);
        cuts.push(Cut {
            field,
            shown: keep,
            total,
        });
    }
}

impl Item {
    /// The item cut to `caps`, and what was cut (by Zotero field name).
    pub fn shortened(mut self, caps: ItemCaps) -> (Self, Vec<Cut>) {
        let mut cuts = Vec::new();
        cut_text(&mut self.title, caps.text, "title", &mut cuts);
        for (value, field, max) in [
            (&mut self.abstract_note, "abstractNote", caps.abstract_chars),
            (&mut self.extra, "extra", caps.text),
            (&mut self.url, "url", caps.text),
            (&mut self.doi, "DOI", caps.text),
            (&mut self.date, "date", caps.text),
        ] {
            if let Some(v) = value {
                cut_text(v, max, field, &mut cuts);
            }
        }
        cut_list(&mut self.creators, caps.creators, "creators", &mut cuts);
        cut_list(&mut self.tags, caps.tags, "tags", &mut cuts);
        (self, cuts)
    }
}

/// A page of items from `start` as a listing answers it: each cut to [`ItemCaps::LISTED`],
/// as many as fit in the budget, where the next page starts (the listing's `next` unless
/// some were left out), and a note naming the items that were shortened, when any.
pub fn listed_page(
    items: Vec<Item>,
    start: u64,
    next: Option<u64>,
) -> (Vec<Item>, Option<u64>, Vec<String>) {
    let shortened: Vec<(Item, bool)> = items
        .into_iter()
        .map(|i| {
            let (i, cuts) = i.shortened(ItemCaps::LISTED);
            (i, !cuts.is_empty())
        })
        .collect();
    let (page, cut) = budget::fit_page(
        shortened.into_iter().map(|(i, c)| Listed(i, c)).collect(),
        budget::PAGE_CHARS,
    );
    let next = budget::next_start(start, page.len(), cut, next);
    let cut_keys: Vec<String> = page
        .iter()
        .filter(|l| l.1)
        .map(|l| l.0.item_key.clone())
        .collect();
    let notes = if cut_keys.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "shortened to fit (a long title, abstract, extra, creators or tags): {}; \
             zotero_get_item_metadata with item_key (then field and offset) reads on",
            cut_keys.join(", ")
        )]
    };
    (page.into_iter().map(|l| l.0).collect(), next, notes)
}

/// An item of a page and whether it was shortened; measured as the item alone.
struct Listed(Item, bool);

impl Serialize for Listed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
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
    /// The item cut to [`ItemCaps::ONE`] with as many attachments as fit in 3,000 characters,
    /// and notes of what was cut, each naming the call that reads on.
    pub fn shortened(self) -> (Self, Vec<String>) {
        let (item, cuts) = self.item.shortened(ItemCaps::ONE);
        let mut notes: Vec<String> = cuts.iter().map(|c| c.note(&item.item_key)).collect();
        let mut attachments = self.attachments;
        let total = attachments.len();
        let mut cut = Vec::new();
        cut_list(&mut attachments, 3_000, "attachments", &mut cut);
        if !cut.is_empty() {
            notes.push(format!(
                "attachments: the first {} of {total}; zotero_get_item_children with item_key \
                 {} and kinds [\"attachment\"] lists them all",
                attachments.len(),
                item.item_key
            ));
        }
        (Self { item, attachments }, notes)
    }

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
    /// attachment that would be created (attachment_key "", version 0 until written)
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
