//! Writes: item templates, creates that happen exactly once, collection membership and
//! version-checked deletes.
//!
//! Exactly once: every create (of an item or a collection) carries a key generated here and a
//! `Zotero-Write-Token`, so the HTTP layer may send it again when the answer is lost. The
//! retry then either creates the object or answers `412 Write token already used`, and either
//! way the object is found under the key we chose.

use std::collections::BTreeMap;

use hyper::header::HeaderValue;
use hyper::Method;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use super::error::ZoteroError;
use super::http::{ApiRequest, ApiResponse};
use super::model::{Creator, Item, WireObject};
use crate::client::Library;
use crate::library::ObjectKey;
use crate::model::ObjectKind;
use crate::response::{parse_json, unexpected};

/// How many times a version-checked write is tried again after `412` before giving up.
pub(crate) const MAX_VERSION_RETRIES: usize = 5;

/// A fresh object key: 8 characters of `KEY_ALPHABET`.
pub fn new_object_key() -> ObjectKey {
    ObjectKey::random()
}

/// A `Zotero-Write-Token`: 32 random hex characters.
fn write_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A new regular item, as the caller described it.
#[derive(Debug, Clone, Default)]
pub struct NewItem {
    pub item_type: String,
    pub title: String,
    pub creators: Vec<Creator>,
    pub date: Option<String>,
    pub doi: Option<String>,
    pub url: Option<String>,
    pub abstract_note: Option<String>,
    /// Already de-duplicated.
    pub tags: Vec<String>,
    pub extra: Option<String>,
}

/// A new note, its HTML as it is to be stored (sanitized by the caller).
#[derive(Debug, Clone, Default)]
pub struct NewNote {
    pub html: String,
    /// The regular item it is a child of; `None` for a standalone note.
    pub parent: Option<ObjectKey>,
    /// Already de-duplicated.
    pub tags: Vec<String>,
    /// Standalone notes only: Zotero refuses collections on a child item.
    pub collections: Vec<ObjectKey>,
}

/// A new annotation on a file attachment, every field as Zotero stores it (computed by the
/// caller: the position is a JSON string, the sort index `ppppp|oooooo|ttttt`).
#[derive(Debug, Clone, Default)]
pub struct NewAnnotation {
    /// The file attachment it is on.
    pub parent: Option<ObjectKey>,
    /// `highlight`, `underline`, `note`, ...
    pub annotation_type: String,
    /// Highlights and underlines only: the marked text.
    pub text: Option<String>,
    pub comment: String,
    /// `#rrggbb`, lower case.
    pub color: String,
    pub page_label: String,
    pub sort_index: String,
    /// `{"pageIndex":N,"rects":[[x1,y1,x2,y2],...]}` as a string.
    pub position: String,
    /// Already de-duplicated.
    pub tags: Vec<String>,
}

impl NewAnnotation {
    /// The item JSON that creates it (without the key and version, chosen when it is
    /// written). No template is fetched: every field an annotation has is set here.
    pub fn to_object(&self) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("itemType".into(), Value::from("annotation"));
        if let Some(p) = &self.parent {
            o.insert("parentItem".into(), Value::from(p.as_str()));
        }
        o.insert(
            "annotationType".into(),
            Value::from(self.annotation_type.as_str()),
        );
        if let Some(text) = &self.text {
            o.insert("annotationText".into(), Value::from(text.as_str()));
        }
        for (k, v) in [
            ("annotationComment", &self.comment),
            ("annotationColor", &self.color),
            ("annotationPageLabel", &self.page_label),
            ("annotationSortIndex", &self.sort_index),
            ("annotationPosition", &self.position),
        ] {
            o.insert(k.into(), Value::from(v.as_str()));
        }
        o.insert(
            "tags".into(),
            Value::Array(self.tags.iter().map(|t| json!({ "tag": t })).collect()),
        );
        o
    }
}

/// An item as [`Library::create_item`] would create it, before anything is written.
#[derive(Debug, Clone)]
pub struct PlannedItem {
    /// The object to be sent: its type's template filled in (without the key and version,
    /// chosen when it is written).
    pub object: Map<String, Value>,
    /// Inputs the item type has no field for, to be written into `extra` as `Field: value`
    /// lines.
    pub moved_to_extra: Vec<&'static str>,
}

impl PlannedItem {
    /// The item as it would be: no key (`""`) and version 0 (not written yet).
    pub fn to_item(&self) -> Item {
        WireObject {
            data: self.object.clone(),
            ..WireObject::default()
        }
        .to_item()
    }

    /// Each field that would be written with a value, by its Zotero name (the template's
    /// empty fields, the item type, creators, tags and other lists left out).
    pub fn fields(&self) -> BTreeMap<String, String> {
        self.object
            .iter()
            .filter(|(name, _)| name.as_str() != "itemType")
            .filter_map(|(name, value)| match value.as_str() {
                Some(v) if !v.is_empty() => Some((name.clone(), v.to_string())),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct CreatedItem {
    pub item: Item,
    /// Inputs the item type has no field for, written into `extra` as `Field: value` lines.
    pub moved_to_extra: Vec<&'static str>,
}

/// Where each optional input goes: the input's name, the Zotero field name used for an
/// `extra` line, and the template fields that can hold it (base fields first, then the
/// type-specific fields Zotero maps onto them, e.g. `caseName` for `title`).
const FIELD_MAP: [(&str, &str, &[&str]); 5] = [
    (
        "title",
        "title",
        &["title", "caseName", "nameOfAct", "subject"],
    ),
    (
        "date",
        "date",
        &["date", "dateDecided", "dateEnacted", "issueDate"],
    ),
    ("doi", "DOI", &["DOI"]),
    ("url", "URL", &["url"]),
    ("abstract", "abstractNote", &["abstractNote"]),
];

impl Library<'_> {
    /// Creates a regular item from its template: [`Library::plan_item`], then the create.
    pub async fn create_item(
        &self,
        new: &NewItem,
        cancel: &CancellationToken,
    ) -> Result<CreatedItem, ZoteroError> {
        let PlannedItem {
            object,
            moved_to_extra,
        } = self.plan_item(new, cancel).await?;
        let wire = self.create_object(object, cancel).await?;
        Ok(CreatedItem {
            item: wire.to_item(),
            moved_to_extra,
        })
    }

    /// What [`Library::create_item`] would send: its type's template filled in, after the
    /// same checks (the key may write here, the item type exists). Reads; writes nothing.
    pub async fn plan_item(
        &self,
        new: &NewItem,
        cancel: &CancellationToken,
    ) -> Result<PlannedItem, ZoteroError> {
        // Missing credentials or access are said before the template is fetched.
        self.require_write(false, cancel).await?;
        let mut object = self.client.template(&new.item_type, None, cancel).await?;
        let values: [Option<&String>; 5] = [
            Some(&new.title),
            new.date.as_ref(),
            new.doi.as_ref(),
            new.url.as_ref(),
            new.abstract_note.as_ref(),
        ];
        let mut extra_lines: Vec<String> = Vec::new();
        let mut moved_to_extra = Vec::new();
        for ((input, zotero_name, fields), value) in FIELD_MAP.iter().zip(values) {
            let Some(value) = value else { continue };
            match fields.iter().find(|f| object.contains_key(**f)) {
                Some(field) => {
                    object.insert((*field).to_string(), Value::from(value.as_str()));
                }
                None => {
                    extra_lines.push(format!("{zotero_name}: {value}"));
                    moved_to_extra.push(*input);
                }
            }
        }
        let mut extra = new.extra.clone().unwrap_or_default();
        for line in extra_lines {
            if !extra.is_empty() {
                extra.push('\n');
            }
            extra.push_str(&line);
        }
        if !extra.is_empty() {
            object.insert("extra".into(), Value::from(extra));
        }
        object.insert(
            "creators".into(),
            Value::Array(new.creators.iter().map(creator_to_wire).collect()),
        );
        object.insert(
            "tags".into(),
            Value::Array(new.tags.iter().map(|t| json!({ "tag": t })).collect()),
        );
        Ok(PlannedItem {
            object,
            moved_to_extra,
        })
    }

    /// Creates a note from the `note` template, exactly once (see the module comment).
    pub async fn create_note(
        &self,
        new: &NewNote,
        cancel: &CancellationToken,
    ) -> Result<WireObject, ZoteroError> {
        self.require_write(false, cancel).await?;
        let mut object = self.client.template("note", None, cancel).await?;
        object.insert("note".into(), Value::from(new.html.as_str()));
        if let Some(parent) = &new.parent {
            object.insert("parentItem".into(), Value::from(parent.as_str()));
        }
        object.insert(
            "tags".into(),
            Value::Array(new.tags.iter().map(|t| json!({ "tag": t })).collect()),
        );
        object.insert(
            "collections".into(),
            Value::Array(
                new.collections
                    .iter()
                    .map(|c| Value::from(c.as_str()))
                    .collect(),
            ),
        );
        self.create_object(object, cancel).await
    }

    /// Creates an annotation, exactly once (see the module comment).
    pub async fn create_annotation(
        &self,
        new: &NewAnnotation,
        cancel: &CancellationToken,
    ) -> Result<WireObject, ZoteroError> {
        self.require_write(false, cancel).await?;
        self.create_object(new.to_object(), cancel).await
    }

    /// POSTs one item under a key chosen here, exactly once (see the module comment).
    pub(crate) async fn create_object(
        &self,
        object: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<WireObject, ZoteroError> {
        self.create_object_of(ObjectKind::Item, object, cancel)
            .await
    }

    /// POSTs one object of `kind` under a key chosen here, exactly once (see the module
    /// comment).
    pub(crate) async fn create_object_of(
        &self,
        kind: ObjectKind,
        mut object: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<WireObject, ZoteroError> {
        if kind == ObjectKind::Item {
            if let (Some(t), Some(creators)) = (
                object.get("itemType").and_then(Value::as_str),
                object.get("creators"),
            ) {
                self.check_creator_types_locally(t, creators, cancel)
                    .await?;
            }
        }
        let key = new_object_key();
        object.insert("key".into(), Value::from(key.as_str()));
        // A key-based write needs a version; 0 says "this object must not exist yet".
        object.insert("version".into(), Value::from(0));
        let body = serde_json::to_vec(&[Value::Object(object)]).map_err(|e| {
            ZoteroError::InvalidRequest {
                reason: e.to_string(),
            }
        })?;
        let token =
            HeaderValue::from_str(&write_token()).map_err(|e| ZoteroError::InvalidRequest {
                reason: e.to_string(),
            })?;
        let req = ApiRequest::with_body(
            Method::POST,
            kind.path().to_string(),
            "application/json",
            body,
        )
        .header("zotero-write-token", token)
        .repeatable(true);

        let resp = match self.send(&req, cancel).await {
            Ok(resp) => resp,
            // Nothing was sent, or Zotero refused the only attempt (403): nothing was
            // created. A refusal of a repeat says nothing of the attempt before it.
            Err(e) if e.nothing_written() => return Err(e),
            // Any attempt may have landed before its answer was lost (or the call was
            // cancelled, or a retry was refused): the key says what happened.
            Err(cause) => return self.confirm_created(kind, &key, cause).await,
        };
        if resp.status == 412 && String::from_utf8_lossy(&resp.body).contains("Write token") {
            tracing::info!(
                retries = resp.retries,
                "write token already used: the create landed; reading it back"
            );
            return self.read_back(kind, &key, &resp).await;
        }
        let what = format!("create the {}", kind.noun());
        if resp.status != 200 {
            let error = unexpected(&resp, &what);
            // An error on a repeat says nothing about the attempts before it.
            return if resp.retries > 0 {
                self.confirm_created(kind, &key, error).await
            } else {
                Err(error)
            };
        }
        let answer: Value = match parse_json(&resp) {
            Ok(answer) => answer,
            Err(e) => return self.confirm_created(kind, &key, e).await,
        };
        if let Some(failed) = answer.get("failed").and_then(|f| f.get("0")) {
            let code = failed.get("code").and_then(Value::as_u64).unwrap_or(400);
            let message = failed
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no reason given");
            return Err(ZoteroError::Rejected {
                code: u16::try_from(code).unwrap_or(400),
                message: format!("Zotero refused the new {}: {message}", kind.noun()),
                answer: resp.answer(),
            });
        }
        match answer
            .get("successful")
            .and_then(|s| s.get("0"))
            .and_then(|obj| serde_json::from_value::<WireObject>(obj.clone()).ok())
        {
            Some(wire) => Ok(wire),
            // Older answers list only the key under `success`.
            None => self.read_back(kind, &key, &resp).await,
        }
    }

    /// Reads back an object Zotero said it created. A failure to read it is not a failure
    /// to create it: the error says the object exists.
    async fn read_back(
        &self,
        kind: ObjectKind,
        key: &ObjectKey,
        resp: &ApiResponse,
    ) -> Result<WireObject, ZoteroError> {
        match self
            .fetch_object(kind, key, &CancellationToken::new())
            .await
        {
            Ok(Some(wire)) => Ok(wire),
            Ok(None) => Err(unexpected(resp, &format!("create the {}", kind.noun()))),
            Err(e) => Err(ZoteroError::CreateUnconfirmed {
                kind,
                key: key.to_string(),
                created: true,
                reason: e.to_string(),
            }),
        }
    }

    /// After a create whose outcome was not seen: the object exists under its key, or it
    /// was not created (the original error stands), or we cannot tell, and say so. Runs
    /// even when the call was cancelled: whoever cleans up needs the answer.
    async fn confirm_created(
        &self,
        kind: ObjectKind,
        key: &ObjectKey,
        cause: ZoteroError,
    ) -> Result<WireObject, ZoteroError> {
        match self
            .fetch_object(kind, key, &CancellationToken::new())
            .await
        {
            Ok(Some(wire)) => {
                tracing::info!(error = %cause, "create outcome not seen; the {} was found under its key", kind.noun());
                Ok(wire)
            }
            Ok(None) => Err(cause),
            Err(e) => Err(ZoteroError::CreateUnconfirmed {
                kind,
                key: key.to_string(),
                created: false,
                reason: format!("{cause}; checking afterwards failed too: {e}"),
            }),
        }
    }

    /// One item as it is now (never from the cache), or `None` when it does not exist.
    pub(crate) async fn fetch_item(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Option<WireObject>, ZoteroError> {
        self.fetch_object(ObjectKind::Item, key, cancel).await
    }

    /// One object as it is now (never from the cache), or `None` when it does not exist.
    pub(crate) async fn fetch_object(
        &self,
        kind: ObjectKind,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Option<WireObject>, ZoteroError> {
        let req = ApiRequest::get(format!("{}/{key}", kind.path())).fresh();
        let resp = self.send(&req, cancel).await?;
        match resp.status {
            200 => parse_json(&resp).map(Some),
            404 => Ok(None),
            _ => Err(unexpected(&resp, &format!("read {} {key}", kind.noun()))),
        }
    }

    /// Deletes an item, checked against its version; re-reads the version after a `412`.
    /// An item that is already gone counts as deleted.
    pub(crate) async fn delete_item(
        &self,
        key: &ObjectKey,
        mut version: u64,
        cancel: &CancellationToken,
    ) -> Result<(), ZoteroError> {
        for _ in 0..MAX_VERSION_RETRIES {
            let req = ApiRequest::delete(format!("/items/{key}"))
                .header("if-unmodified-since-version", HeaderValue::from(version))
                .repeatable(true);
            let resp = self.send(&req, cancel).await?;
            match resp.status {
                204 | 404 => return Ok(()),
                412 => match self.fetch_item(key, cancel).await? {
                    Some(wire) => version = wire.version(),
                    None => return Ok(()),
                },
                _ => return Err(unexpected(&resp, &format!("delete item {key}"))),
            }
        }
        Err(ZoteroError::KeptChanging {
            what: format!("item {key}"),
            attempts: MAX_VERSION_RETRIES,
        })
    }
}

/// A creator as Zotero stores it (`name` for a single-field name).
pub fn creator_to_wire(c: &Creator) -> Value {
    match &c.name {
        Some(name) => json!({ "creatorType": c.creator_type, "name": name }),
        None => json!({
            "creatorType": c.creator_type,
            "firstName": c.first_name.clone().unwrap_or_default(),
            "lastName": c.last_name.clone().unwrap_or_default(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::KEY_ALPHABET;

    #[test]
    fn keys_use_the_zotero_alphabet() {
        for _ in 0..200 {
            let k = new_object_key();
            assert_eq!(k.as_str().len(), 8);
            assert!(
                k.as_str()
                    .bytes()
                    .all(|b| KEY_ALPHABET.as_bytes().contains(&b)),
                "{k}"
            );
        }
        assert_ne!(new_object_key(), new_object_key());
        assert_eq!(write_token().len(), 32);
    }
}
