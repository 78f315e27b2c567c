//! Full text, as the dataserver keeps it per attachment (`controllers/FullTextController.php`,
//! `model/FullText.inc.php`): the content and its counts, stored under the attachment's key
//! with the library version of the write. Served by the web API as
//! `GET {prefix}/items/{k}/fulltext` and `GET {prefix}/fulltext?since=N`; the desktop's
//! answers to the same paths (Zotero 8+) are in `local/render.rs`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::libs::{Lib, LibraryId};
use super::stored::FullText;
use super::view::LibraryView;
use super::{Answer, Emulator, Recorded};

const FULLTEXT_JSON: &str = include_str!("../../../fixtures/library/fulltext.json");

/// A stored full text as the fixture file and the write body have it:
/// `{content, indexedChars?, totalChars?, indexedPages?, totalPages?, version}`.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    content: String,
    indexed_pages: Option<u64>,
    total_pages: Option<u64>,
    indexed_chars: Option<u64>,
    total_chars: Option<u64>,
    version: u64,
}

/// The full texts of `fixtures/library/fulltext.json`, by attachment key.
pub(crate) fn fixtures() -> BTreeMap<String, FullText> {
    let stored: BTreeMap<String, Stored> = serde_json::from_str(FULLTEXT_JSON).unwrap();
    stored
        .into_iter()
        .map(|(k, s)| {
            let ft = FullText {
                content: s.content,
                indexed_pages: s.indexed_pages,
                total_pages: s.total_pages,
                indexed_chars: s.indexed_chars,
                total_chars: s.total_chars,
                version: s.version,
            };
            (k, ft)
        })
        .collect()
}

/// The web API's body: `content`, then the counts in `Zotero_FullText::$metadata` order,
/// each only when not empty (`!empty()`: a 0 is left out too), as `formatJSON` writes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WebBody<'a> {
    content: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    indexed_chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_chars: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    indexed_pages: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_pages: Option<u64>,
}

fn non_zero(n: Option<u64>) -> Option<u64> {
    n.filter(|n| *n != 0)
}

/// The item can hold full text: an attachment other than a link to a URL
/// (`FullTextController::itemContent` answers 404 for anything else).
pub(crate) fn can_hold(item: &Value) -> bool {
    item["data"]["itemType"] == "attachment" && item["data"]["linkMode"] != "linked_url"
}

/// `GET {prefix}/items/{key}/fulltext`: 404 when there is no such item, it is not an
/// attachment (or a linked URL), or nothing is stored; `Last-Modified-Version` is the full
/// text's own version.
pub(crate) fn item_content(lib: &Lib, key: &str) -> Answer {
    let found = lib
        .item_index(key)
        .filter(|i| can_hold(&lib.items[*i]))
        .and_then(|_| lib.fulltext.get(key));
    let Some(ft) = found else {
        return Answer::text(404, "Not found");
    };
    let body = WebBody {
        content: &ft.content,
        indexed_chars: non_zero(ft.indexed_chars),
        total_chars: non_zero(ft.total_chars),
        indexed_pages: non_zero(ft.indexed_pages),
        total_pages: non_zero(ft.total_pages),
    };
    let bytes = serde_json::to_vec_pretty(&body).unwrap();
    Answer::raw(200, bytes, "application/json").header("Last-Modified-Version", ft.version)
}

/// `GET {prefix}/fulltext?since=N`: `{itemKey: version}` of the full texts written after
/// version N (all of them without `since`); `Last-Modified-Version` is the library's.
pub(crate) fn versions(lib: &Lib, req: &Recorded) -> Answer {
    let since = match req.query.iter().rev().find(|(k, _)| k == "since") {
        None => 0,
        // `Zotero_API::parseQueryParams`: `is_numeric`, else 400.
        Some((_, v)) => match v.trim().parse::<f64>() {
            Ok(n) if v.trim() == v && n.is_finite() => n.max(0.0) as u64,
            _ => return Answer::text(400, "Invalid value for 'since' parameter"),
        },
    };
    let newer: serde_json::Map<String, Value> = lib
        .fulltext
        .iter()
        .filter(|(key, ft)| ft.version > since && lib.item_index(key).is_some())
        .map(|(key, ft)| (key.clone(), Value::from(ft.version)))
        .collect();
    Answer::json(&Value::Object(newer)).header("Last-Modified-Version", lib.version)
}

impl LibraryView<'_> {
    /// Stores the full text of an attachment as the desktop's full-text sync does
    /// (`PUT …/items/{key}/fulltext`): the library version goes up by one and the full text
    /// carries the new version. Panics unless the item can hold full text (an attachment
    /// that is not a linked URL), as the server refuses it.
    pub fn set_fulltext_of(&self, item_key: &str, mut fulltext: FullText) {
        self.with_mut(|lib| {
            let i = lib
                .item_index(item_key)
                .unwrap_or_else(|| panic!("no item {item_key}"));
            assert!(
                can_hold(&lib.items[i]),
                "{item_key} cannot hold full text: only attachments that are not linked URLs can"
            );
            lib.version += 1;
            fulltext.version = lib.version;
            lib.fulltext.insert(item_key.to_string(), fulltext);
        });
    }

    /// The stored full text of an attachment.
    pub fn fulltext(&self, item_key: &str) -> Option<FullText> {
        self.with(|lib| lib.fulltext.get(item_key).cloned())
    }
}

impl Emulator {
    /// Stores the full text of an attachment of the user library (see
    /// [`LibraryView::set_fulltext_of`]).
    pub fn set_fulltext_of(&self, item_key: &str, fulltext: FullText) {
        self.library(LibraryId::USER)
            .set_fulltext_of(item_key, fulltext);
    }
}
