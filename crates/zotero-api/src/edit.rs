//! Changes to objects that exist: items (fields, tags, collections, trash) and collections
//! (name, parent), never losing a change made in Zotero meanwhile.
//!
//! A change is kept as intent (set these fields; add and remove these tags and
//! collections), not as a new copy of the object, so it can be applied again to whatever the
//! object has become. Every write names the version it was computed from (`version` in a
//! `POST` array, 50 objects at a time); Zotero refuses it (`412`) if the object changed since.
//! The object is then read again and the change re-applied when no field it sets was changed
//! elsewhere (tags and collections are sets: what Zotero added meanwhile stays); otherwise
//! the object is left as Zotero has it and the outcome names each field with both values.
//!
//! Each object is all or nothing (one object in one `POST`), and each gets its own outcome:
//! a failure of one never hides the success of another. An answer that was lost (or a call
//! cancelled mid-write) is settled by reading the objects again: the change is there or not.

use std::collections::{BTreeMap, HashMap};

use hyper::Method;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::library::ObjectKey;
pub use crate::model::{field_value, ObjectKind};
use crate::model::{truthy, WireObject};
use crate::response::{encode_query, parse_json, unexpected};
use crate::write::MAX_VERSION_RETRIES;

/// Zotero takes at most this many objects in one write (and keys in one read or delete).
pub const WRITE_BATCH: usize = 50;

/// Additions to and removals from a set-valued property (an item's tags or collections).
/// `replace` is turned into additions and removals against the object as first read, so a
/// value Zotero added after that read is kept.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SetEdit {
    pub add: Vec<String>,
    pub remove: Vec<String>,
    pub replace: Option<Vec<String>>,
    /// Tags only: (old name, new name). Decided on the object as it is when written: one
    /// carrying the old name (exactly, of either type) carries the new one instead, once,
    /// as a manual tag (what Zotero's own rename does); one without it is left as it is.
    pub rename: Vec<(String, String)>,
}

impl SetEdit {
    pub fn is_empty(&self) -> bool {
        self.add.is_empty()
            && self.remove.is_empty()
            && self.replace.is_none()
            && self.rename.is_empty()
    }
}

/// The change asked for on one object.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub key: ObjectKey,
    /// Fields and their new values, by their Zotero names (`""` clears a text field;
    /// `deleted: true` trashes, `false` restores; a collection's `parentCollection: false`
    /// makes it top-level).
    pub set: BTreeMap<String, Value>,
    /// Items only: tags (manual tags are added; a removal removes the tag of any type; a
    /// rename applies only where the old name is).
    pub tags: SetEdit,
    /// Items only: collection keys.
    pub collections: SetEdit,
    /// The version the caller last saw: when set, an object changed since then is not
    /// written (`Stale`), because which of its fields changed cannot be known.
    pub expect_version: Option<u64>,
}

impl Edit {
    pub fn new(key: ObjectKey) -> Self {
        Self {
            key,
            set: BTreeMap::new(),
            tags: SetEdit::default(),
            collections: SetEdit::default(),
            expect_version: None,
        }
    }
}

/// One field of one object, before → after.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldChange {
    pub field: String,
    pub before: Value,
    pub after: Value,
}

/// A field this change sets that was changed in Zotero since it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    pub field: String,
    /// The value when this call first read the object.
    pub before: Value,
    /// What this call would have written.
    pub yours: Value,
    /// What Zotero has now.
    pub in_zotero: Value,
}

/// What happened to one object.
#[derive(Debug, Clone, PartialEq)]
pub enum EditStatus {
    /// Written; `changes` lists what.
    Changed,
    /// Nothing to do: the object already was as asked.
    Unchanged,
    /// Dry run: `changes` is what would be written.
    WouldChange,
    /// Not written: fields it sets were changed in Zotero meanwhile.
    Conflict(Vec<Conflict>),
    /// Not written: the object changed since `expect_version`.
    Stale {
        current_version: u64,
    },
    NotFound,
    /// Not written: Zotero refused it (`code` is its HTTP status), or the call failed.
    Failed {
        code: u16,
        message: String,
    },
    /// Not attempted: the call was cancelled before this object's turn.
    NotAttempted,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EditOutcome {
    pub key: ObjectKey,
    pub status: EditStatus,
    /// The object's version after this call (its new version when written).
    pub version: Option<u64>,
    pub changes: Vec<FieldChange>,
    /// The object's `data` as this call last knew it (after the write when written).
    pub data: Option<Map<String, Value>>,
}

/// Reports (objects done, objects in all).
pub type EditProgress<'a> = &'a (dyn Fn(u64, u64) + Send + Sync);

/// Whether two values of a field are the same for Zotero (`deleted: 1` is `true`).
fn same(field: &str, a: &Value, b: &Value) -> bool {
    match field {
        "deleted" => truthy(a) == truthy(b),
        _ => a == b,
    }
}

fn tag_names(data: &Map<String, Value>) -> Vec<String> {
    data.get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(|t| t.get("tag").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn collection_keys(data: &Map<String, Value>) -> Vec<String> {
    data.get("collections")
        .and_then(Value::as_array)
        .map(|c| {
            c.iter()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The set edit as additions and removals against `base` (the object as first read).
fn resolve(set: &SetEdit, base: &[String]) -> (Vec<String>, Vec<String>) {
    let mut add: Vec<String> = Vec::new();
    let mut remove: Vec<String> = Vec::new();
    if let Some(replace) = &set.replace {
        for v in replace {
            if !base.contains(v) && !add.contains(v) {
                add.push(v.clone());
            }
        }
        for v in base {
            if !replace.contains(v) && !remove.contains(v) {
                remove.push(v.clone());
            }
        }
    }
    for v in &set.add {
        if !add.contains(v) {
            add.push(v.clone());
        }
        remove.retain(|r| r != v);
    }
    for v in &set.remove {
        if !remove.contains(v) {
            remove.push(v.clone());
        }
        add.retain(|a| a != v);
    }
    (add, remove)
}

/// An edit made concrete against the object as first read: what it sets, adds and removes.
#[derive(Debug, Clone)]
struct Plan {
    edit: Edit,
    /// The object's `data` as first read: the base of the three-way comparison.
    base: Map<String, Value>,
    tags: (Vec<String>, Vec<String>),
    collections: (Vec<String>, Vec<String>),
}

/// What writing a plan onto `current` takes: the fields to send, the changes they make, or
/// the fields changed elsewhere that stop it.
fn patch_for(plan: &Plan, current: &Map<String, Value>) -> Patched {
    let mut patch = Map::new();
    let mut changes = Vec::new();
    let mut conflicts = Vec::new();
    for (field, wanted) in &plan.edit.set {
        let now = field_value(current, field);
        if same(field, &now, wanted) {
            continue;
        }
        let before = field_value(&plan.base, field);
        if same(field, &now, &before) {
            patch.insert(field.clone(), wanted.clone());
            changes.push(FieldChange {
                field: field.clone(),
                before: now,
                after: wanted.clone(),
            });
        } else {
            conflicts.push(Conflict {
                field: field.clone(),
                before,
                yours: wanted.clone(),
                in_zotero: now,
            });
        }
    }
    if !conflicts.is_empty() {
        return Err(conflicts);
    }
    let (add, remove) = &plan.tags;
    let renames = &plan.edit.tags.rename;
    if !add.is_empty() || !remove.is_empty() || !renames.is_empty() {
        let tags: Vec<Value> = current
            .get("tags")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let names = tag_names(current);
        let mut kept: Vec<Value> = tags
            .into_iter()
            .filter(|t| {
                t.get("tag")
                    .and_then(Value::as_str)
                    .is_none_or(|n| !remove.iter().any(|r| r == n))
            })
            .collect();
        for a in add {
            if !names.contains(a) {
                kept.push(json!({ "tag": a }));
            }
        }
        for (from, to) in renames {
            rename_tag(&mut kept, from, to);
        }
        let after: Vec<String> = kept
            .iter()
            .filter_map(|t| t.get("tag").and_then(Value::as_str).map(str::to_string))
            .collect();
        if after != names {
            changes.push(FieldChange {
                field: "tags".into(),
                before: json!(names),
                after: json!(after),
            });
            patch.insert("tags".into(), Value::Array(kept));
        }
    }
    let (add, remove) = &plan.collections;
    if !add.is_empty() || !remove.is_empty() {
        let now = collection_keys(current);
        let mut after: Vec<String> = now
            .iter()
            .filter(|k| !remove.contains(k))
            .cloned()
            .collect();
        for a in add {
            if !after.contains(a) {
                after.push(a.clone());
            }
        }
        if after != now {
            changes.push(FieldChange {
                field: "collections".into(),
                before: json!(now),
                after: json!(after),
            });
            patch.insert("collections".into(), json!(after));
        }
    }
    Ok((patch, changes))
}

fn tag_name(tag: &Value) -> Option<&str> {
    tag.get("tag").and_then(Value::as_str)
}

/// Renames the tag `from` to `to` in an item's `tags` when it is there: `to` ends up there
/// once, as a manual tag (`type` 0 or absent), as Zotero's rename leaves it.
fn rename_tag(tags: &mut Vec<Value>, from: &str, to: &str) {
    if from == to || !tags.iter().any(|t| tag_name(t) == Some(from)) {
        return;
    }
    tags.retain(|t| tag_name(t) != Some(from));
    let manual = |t: &Value| {
        tag_name(t) == Some(to) && t.get("type").and_then(Value::as_u64).unwrap_or(0) == 0
    };
    if let Some(at) = tags.iter().position(manual) {
        // Kept where it is; any automatic twin goes.
        let mut i = 0;
        tags.retain(|t| {
            let keep = i == at || tag_name(t) != Some(to);
            i += 1;
            keep
        });
    } else {
        tags.retain(|t| tag_name(t) != Some(to));
        tags.push(json!({ "tag": to }));
    }
}

/// The changes a plan made, read off the object as it is now (after a write whose answer was
/// not seen): every field it sets has the wanted value, and the sets hold what it added and
/// not what it removed. `None` when the object does not show the change.
fn shows_change(plan: &Plan, current: &Map<String, Value>) -> Option<Vec<FieldChange>> {
    let mut changes = Vec::new();
    let (base_tags, now_tags) = (tag_names(&plan.base), tag_names(current));
    for (from, to) in &plan.edit.tags.rename {
        if base_tags.contains(from) && (now_tags.contains(from) || !now_tags.contains(to)) {
            return None;
        }
    }
    for (field, wanted) in &plan.edit.set {
        let now = field_value(current, field);
        if !same(field, &now, wanted) {
            return None;
        }
        let before = field_value(&plan.base, field);
        if !same(field, &before, wanted) {
            changes.push(FieldChange {
                field: field.clone(),
                before,
                after: now,
            });
        }
    }
    for (name, (add, remove), renames, now, base) in [
        (
            "tags",
            &plan.tags,
            plan.edit.tags.rename.len(),
            now_tags,
            base_tags,
        ),
        (
            "collections",
            &plan.collections,
            0,
            collection_keys(current),
            collection_keys(&plan.base),
        ),
    ] {
        if add.iter().any(|a| !now.contains(a)) || remove.iter().any(|r| now.contains(r)) {
            return None;
        }
        if now != base && (!add.is_empty() || !remove.is_empty() || renames > 0) {
            changes.push(FieldChange {
                field: name.into(),
                before: json!(base),
                after: json!(now),
            });
        }
    }
    Some(changes)
}

fn settle(outcomes: &mut BTreeMap<usize, EditOutcome>, i: usize, o: EditOutcome) {
    outcomes.insert(i, o);
}

/// A write to send: (index of the edit, its plan, the object as read, the fields to send,
/// the changes they make).
type Write = (
    usize,
    Plan,
    WireObject,
    Map<String, Value>,
    Vec<FieldChange>,
);
/// The fields to send and the changes they make, or what stops them.
type Patched = Result<(Map<String, Value>, Vec<FieldChange>), Vec<Conflict>>;

fn outcome(key: &ObjectKey, status: EditStatus) -> EditOutcome {
    EditOutcome {
        key: key.clone(),
        status,
        version: None,
        changes: Vec::new(),
        data: None,
    }
}

/// Template properties that are not fields a caller sets through an item update: the type,
/// the lists that have their own arguments, an attachment's file and link, a note's text.
const NOT_SETTABLE: [&str; 14] = [
    "itemType",
    "creators",
    "tags",
    "collections",
    "relations",
    "parentItem",
    "note",
    "linkMode",
    "contentType",
    "charset",
    "filename",
    "md5",
    "mtime",
    "path",
];

impl Library<'_> {
    /// The fields an update may set on an item of this type (and link mode, for an
    /// attachment), from its template: every field of the type but the ones in
    /// [`NOT_SETTABLE`].
    pub async fn settable_fields(
        &self,
        item_type: &str,
        link_mode: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, ZoteroError> {
        let template = self.client.template(item_type, link_mode, cancel).await?;
        Ok(template
            .keys()
            .filter(|k| !NOT_SETTABLE.contains(&k.as_str()))
            .cloned()
            .collect())
    }

    /// Reads these objects as they are now (never from a cache), trashed ones included,
    /// 50 keys a request. Keys not in the answer do not exist.
    pub async fn read_objects(
        &self,
        kind: ObjectKind,
        keys: &[ObjectKey],
        cancel: &CancellationToken,
    ) -> Result<HashMap<String, WireObject>, ZoteroError> {
        let mut found = HashMap::new();
        for chunk in keys.chunks(WRITE_BATCH) {
            let list: Vec<&str> = chunk.iter().map(ObjectKey::as_str).collect();
            let joined = list.join(",");
            let query = encode_query(&[
                (kind.key_param(), &joined),
                ("includeTrashed", "1"),
                ("limit", "100"),
            ]);
            let req = ApiRequest::get(format!("{}?{query}", kind.path())).fresh();
            let resp = self.send(&req, cancel).await?;
            if resp.status != 200 {
                return Err(unexpected(&resp, &format!("read {}s", kind.noun())));
            }
            let objects: Vec<WireObject> = parse_json(&resp)?;
            for o in objects {
                if let Some(key) = o.key.clone() {
                    found.insert(key, o);
                }
            }
        }
        Ok(found)
    }

    /// Applies each edit to its object, version-checked, merging with changes made in
    /// Zotero meanwhile (see the module comment). With `dry_run`, reads and answers what
    /// would change (`WouldChange`) without writing. One outcome per edit, in their order.
    /// An `Err` means nothing was written (the objects could not be read, or the key may
    /// not write here); after the first write every failure is an object's outcome.
    pub async fn edit_objects(
        &self,
        kind: ObjectKind,
        edits: Vec<Edit>,
        dry_run: bool,
        cancel: &CancellationToken,
        progress: Option<EditProgress<'_>>,
    ) -> Result<Vec<EditOutcome>, ZoteroError> {
        self.require_write(false, cancel).await?;
        let keys: Vec<ObjectKey> = edits.iter().map(|e| e.key.clone()).collect();
        let first = self.read_objects(kind, &keys, cancel).await?;
        let total = edits.len() as u64;
        let mut outcomes: BTreeMap<usize, EditOutcome> = BTreeMap::new();
        // (index, plan, the object as now known) of what is still to be written.
        let mut pending: Vec<(usize, Plan, WireObject)> = Vec::new();
        for (i, edit) in edits.into_iter().enumerate() {
            let Some(object) = first.get(edit.key.as_str()) else {
                settle(&mut outcomes, i, outcome(&edit.key, EditStatus::NotFound));
                continue;
            };
            let version = object.version.unwrap_or(0);
            if let Some(expected) = edit.expect_version {
                if expected != version {
                    let mut o = outcome(
                        &edit.key,
                        EditStatus::Stale {
                            current_version: version,
                        },
                    );
                    o.version = Some(version);
                    o.data = Some(object.data.clone());
                    settle(&mut outcomes, i, o);
                    continue;
                }
            }
            let base = object.data.clone();
            let plan = Plan {
                tags: resolve(&edit.tags, &tag_names(&base)),
                collections: resolve(&edit.collections, &collection_keys(&base)),
                edit,
                base,
            };
            pending.push((i, plan, object.clone()));
        }

        let mut done = outcomes.len() as u64;
        let report = |done: u64| {
            if let Some(p) = progress {
                p(done, total);
            }
        };
        // Set for an object once a write of it may have landed unseen.
        let mut maybe_written: HashMap<usize, bool> = HashMap::new();
        for round in 0..=MAX_VERSION_RETRIES {
            if pending.is_empty() {
                break;
            }
            // What each pending object needs now; those with nothing to write are settled.
            let mut to_write: Vec<Write> = Vec::new();
            for (i, plan, object) in std::mem::take(&mut pending) {
                let key = plan.edit.key.clone();
                let written = maybe_written.get(&i).copied().unwrap_or(false);
                // After a write that may have landed unseen, the object says whether it did.
                let landed = if written {
                    shows_change(&plan, &object.data)
                } else {
                    None
                };
                let settled = match patch_for(&plan, &object.data) {
                    _ if landed.is_some() => {
                        let changes = landed.unwrap_or_default();
                        Some(EditOutcome {
                            key,
                            status: if changes.is_empty() {
                                EditStatus::Unchanged
                            } else {
                                EditStatus::Changed
                            },
                            version: object.version,
                            changes,
                            data: Some(object.data.clone()),
                        })
                    }
                    Err(conflicts) => Some(EditOutcome {
                        key,
                        status: EditStatus::Conflict(conflicts),
                        version: object.version,
                        changes: Vec::new(),
                        data: Some(object.data.clone()),
                    }),
                    Ok((patch, _)) if patch.is_empty() => Some(EditOutcome {
                        key,
                        status: EditStatus::Unchanged,
                        version: object.version,
                        changes: Vec::new(),
                        data: Some(object.data.clone()),
                    }),
                    Ok((_, changes)) if dry_run => Some(EditOutcome {
                        key,
                        status: EditStatus::WouldChange,
                        version: object.version,
                        changes,
                        data: Some(object.data.clone()),
                    }),
                    Ok((patch, changes)) if round < MAX_VERSION_RETRIES => {
                        to_write.push((i, plan, object, patch, changes));
                        None
                    }
                    Ok(_) => Some(outcome(
                        &key,
                        EditStatus::Failed {
                            code: 412,
                            message: format!(
                                "{} {key} kept changing in Zotero while this call wrote it ({} attempts); nothing was written to it",
                                kind.noun(),
                                MAX_VERSION_RETRIES
                            ),
                        },
                    )),
                };
                if let Some(o) = settled {
                    settle(&mut outcomes, i, o);
                    done += 1;
                    report(done);
                }
            }
            let mut reread: Vec<(usize, Plan)> = Vec::new();
            let mut batches = to_write.into_iter().peekable();
            while batches.peek().is_some() {
                let batch: Vec<_> = batches.by_ref().take(WRITE_BATCH).collect();
                if cancel.is_cancelled() {
                    for (i, plan, ..) in batch {
                        settle(
                            &mut outcomes,
                            i,
                            outcome(&plan.edit.key, EditStatus::NotAttempted),
                        );
                    }
                    continue;
                }
                let results = self.write_batch(kind, &batch, cancel).await;
                for ((i, plan, object, _, changes), result) in batch.into_iter().zip(results) {
                    match result {
                        BatchResult::Written(wire) => {
                            settle(
                                &mut outcomes,
                                i,
                                EditOutcome {
                                    key: plan.edit.key.clone(),
                                    status: EditStatus::Changed,
                                    version: wire.version.or(object.version),
                                    changes,
                                    data: Some(wire.data),
                                },
                            );
                            done += 1;
                            report(done);
                        }
                        BatchResult::Unchanged => {
                            settle(
                                &mut outcomes,
                                i,
                                EditOutcome {
                                    key: plan.edit.key.clone(),
                                    status: EditStatus::Unchanged,
                                    version: object.version,
                                    changes: Vec::new(),
                                    data: Some(object.data),
                                },
                            );
                            done += 1;
                            report(done);
                        }
                        BatchResult::Failed { code, message } => {
                            settle(
                                &mut outcomes,
                                i,
                                outcome(&plan.edit.key, EditStatus::Failed { code, message }),
                            );
                            done += 1;
                            report(done);
                        }
                        BatchResult::Stale => reread.push((i, plan)),
                        BatchResult::Unknown => {
                            maybe_written.insert(i, true);
                            reread.push((i, plan));
                        }
                    }
                }
            }
            if reread.is_empty() {
                break;
            }
            // Read again, even when the call was cancelled: an object whose write may have
            // landed must be reported as it is.
            let keys: Vec<ObjectKey> = reread.iter().map(|(_, p)| p.edit.key.clone()).collect();
            let now = match self
                .read_objects(kind, &keys, &CancellationToken::new())
                .await
            {
                Ok(now) => now,
                Err(e) => {
                    for (i, plan) in reread {
                        let message = if maybe_written.get(&i).copied().unwrap_or(false) {
                            format!("the write's answer was lost and reading the {} again failed too ({e}): it may or may not have been changed; read it to see", kind.noun())
                        } else {
                            format!("it changed in Zotero and reading it again failed: {e}")
                        };
                        settle(
                            &mut outcomes,
                            i,
                            outcome(&plan.edit.key, EditStatus::Failed { code: 0, message }),
                        );
                    }
                    break;
                }
            };
            for (i, plan) in reread {
                match now.get(plan.edit.key.as_str()) {
                    Some(object) if !cancel.is_cancelled() => {
                        pending.push((i, plan, object.clone()))
                    }
                    Some(object) => {
                        // Cancelled: report what the object shows, write nothing more.
                        let status = match shows_change(&plan, &object.data) {
                            Some(changes) if maybe_written.get(&i).copied().unwrap_or(false) => {
                                settle(
                                    &mut outcomes,
                                    i,
                                    EditOutcome {
                                        key: plan.edit.key.clone(),
                                        status: EditStatus::Changed,
                                        version: object.version,
                                        changes,
                                        data: Some(object.data.clone()),
                                    },
                                );
                                continue;
                            }
                            _ => EditStatus::NotAttempted,
                        };
                        settle(&mut outcomes, i, outcome(&plan.edit.key, status));
                    }
                    None => settle(
                        &mut outcomes,
                        i,
                        outcome(&plan.edit.key, EditStatus::NotFound),
                    ),
                }
            }
        }
        Ok(keys
            .iter()
            .enumerate()
            .map(|(i, key)| {
                outcomes
                    .remove(&i)
                    .unwrap_or_else(|| outcome(key, EditStatus::NotAttempted))
            })
            .collect())
    }

    /// One `POST` of up to 50 partial objects, each with the version it was computed from.
    async fn write_batch(
        &self,
        kind: ObjectKind,
        batch: &[Write],
        cancel: &CancellationToken,
    ) -> Vec<BatchResult> {
        let objects: Vec<Value> = batch
            .iter()
            .map(|(_, plan, object, patch, _)| {
                let mut o = patch.clone();
                o.insert("key".into(), Value::from(plan.edit.key.as_str()));
                o.insert("version".into(), Value::from(object.version.unwrap_or(0)));
                Value::Object(o)
            })
            .collect();
        let unknown = || batch.iter().map(|_| BatchResult::Unknown).collect();
        let body = match serde_json::to_vec(&objects) {
            Ok(b) => b,
            Err(e) => {
                return batch
                    .iter()
                    .map(|_| BatchResult::Failed {
                        code: 0,
                        message: e.to_string(),
                    })
                    .collect()
            }
        };
        // Safe to send again: a repeat of a write that landed meets a newer version (412)
        // and the object is read again.
        let req = ApiRequest::with_body(
            Method::POST,
            kind.path().to_string(),
            "application/json",
            body,
        )
        .repeatable(true);
        let resp = match self.send(&req, cancel).await {
            Ok(resp) => resp,
            // Refused before anything was written.
            Err(
                e @ (ZoteroError::MissingCredentials { .. }
                | ZoteroError::InvalidRequest { .. }
                | ZoteroError::BadApiKey
                | ZoteroError::LibraryAccess {
                    repeated: false, ..
                }),
            ) => {
                let code = if matches!(e, ZoteroError::LibraryAccess { .. }) {
                    403
                } else {
                    0
                };
                return batch
                    .iter()
                    .map(|_| BatchResult::Failed {
                        code,
                        message: e.to_string(),
                    })
                    .collect();
            }
            // Lost, cancelled or refused after a repeat: any attempt may have landed.
            Err(_) => return unknown(),
        };
        if resp.status != 200 {
            if resp.retries > 0 {
                return unknown();
            }
            let e = unexpected(&resp, &format!("write {}s", kind.noun()));
            return batch
                .iter()
                .map(|_| BatchResult::Failed {
                    code: resp.status,
                    message: e.to_string(),
                })
                .collect();
        }
        let Ok(answer) = parse_json::<Value>(&resp) else {
            return unknown();
        };
        (0..batch.len())
            .map(|idx| {
                let idx = idx.to_string();
                if let Some(obj) = answer.get("successful").and_then(|s| s.get(&idx)) {
                    return match serde_json::from_value::<WireObject>(obj.clone()) {
                        Ok(wire) => BatchResult::Written(wire),
                        Err(_) => BatchResult::Unknown,
                    };
                }
                if answer.get("unchanged").and_then(|s| s.get(&idx)).is_some() {
                    return BatchResult::Unchanged;
                }
                if let Some(failed) = answer.get("failed").and_then(|s| s.get(&idx)) {
                    let code = failed
                        .get("code")
                        .and_then(Value::as_u64)
                        .and_then(|c| u16::try_from(c).ok())
                        .unwrap_or(400);
                    if code == 412 {
                        // Changed since read; after a repeat, possibly by our own attempt.
                        return if resp.retries > 0 {
                            BatchResult::Unknown
                        } else {
                            BatchResult::Stale
                        };
                    }
                    let message = failed
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no reason given")
                        .to_string();
                    return BatchResult::Failed { code, message };
                }
                // Zotero answered nothing for it: read it to see.
                BatchResult::Unknown
            })
            .collect()
    }
}

/// What a batch write answered for one object.
enum BatchResult {
    Written(WireObject),
    Unchanged,
    /// Refused with 412: changed since it was read, nothing written.
    Stale,
    Failed {
        code: u16,
        message: String,
    },
    /// Not known whether it was written: read it again.
    Unknown,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn plan(edit: Edit, base: Map<String, Value>) -> Plan {
        Plan {
            tags: resolve(&edit.tags, &tag_names(&base)),
            collections: resolve(&edit.collections, &collection_keys(&base)),
            edit,
            base,
        }
    }

    fn key() -> ObjectKey {
        ObjectKey::parse("ABCD2345").unwrap()
    }

    #[test]
    fn a_field_changed_elsewhere_is_a_conflict_with_both_values() {
        let base = data(json!({"title": "A", "date": "2020"}));
        let mut e = Edit::new(key());
        e.set.insert("title".into(), json!("B"));
        let p = plan(e, base);
        // Untouched elsewhere: written.
        let (patch, changes) = patch_for(&p, &data(json!({"title": "A", "date": "2021"}))).unwrap();
        assert_eq!(Value::Object(patch), json!({"title": "B"}));
        assert_eq!(changes[0].before, json!("A"));
        // Changed elsewhere: conflict, nothing to write.
        let c = patch_for(&p, &data(json!({"title": "C"}))).unwrap_err();
        assert_eq!(
            c,
            vec![Conflict {
                field: "title".into(),
                before: json!("A"),
                yours: json!("B"),
                in_zotero: json!("C")
            }]
        );
        // Changed elsewhere to what we want: nothing to do, no conflict.
        let (patch, _) = patch_for(&p, &data(json!({"title": "B"}))).unwrap();
        assert!(patch.is_empty());
    }

    #[test]
    fn tags_merge_as_sets() {
        let base = data(json!({"tags": [{"tag": "a"}, {"tag": "b", "type": 1}]}));
        let mut e = Edit::new(key());
        e.tags.add.push("c".into());
        e.tags.remove.push("b".into());
        let p = plan(e, base);
        // Zotero added "z" meanwhile: kept.
        let now = data(json!({"tags": [{"tag": "a"}, {"tag": "b", "type": 1}, {"tag": "z"}]}));
        let (patch, _) = patch_for(&p, &now).unwrap();
        assert_eq!(
            patch["tags"],
            json!([{"tag": "a"}, {"tag": "z"}, {"tag": "c"}])
        );
        // Replace keeps what Zotero added after the first read.
        let mut e = Edit::new(key());
        e.tags.replace = Some(vec!["x".into()]);
        let p = plan(e, data(json!({"tags": [{"tag": "a"}]})));
        let (patch, _) =
            patch_for(&p, &data(json!({"tags": [{"tag": "a"}, {"tag": "n"}]}))).unwrap();
        assert_eq!(patch["tags"], json!([{"tag": "n"}, {"tag": "x"}]));
    }

    #[test]
    fn a_rename_applies_where_the_old_name_is_when_written() {
        let rename = |base: Value| {
            let mut e = Edit::new(key());
            e.tags.rename.push(("old".into(), "new".into()));
            plan(e, data(base))
        };
        // An automatic "old" becomes a manual "new"; "z", added in Zotero meanwhile, stays.
        let p = rename(json!({"tags": [{"tag": "old", "type": 1}, {"tag": "x"}]}));
        let now = data(json!({"tags": [{"tag": "old", "type": 1}, {"tag": "x"}, {"tag": "z"}]}));
        let (patch, changes) = patch_for(&p, &now).unwrap();
        assert_eq!(
            patch["tags"],
            json!([{"tag": "x"}, {"tag": "z"}, {"tag": "new"}])
        );
        assert_eq!(changes[0].after, json!(["x", "z", "new"]));
        // Only the exact name: "Old" is another tag.
        assert!(patch_for(&p, &data(json!({"tags": [{"tag": "Old"}]})))
            .unwrap()
            .0
            .is_empty());
        // Removed in Zotero meanwhile: nothing to do (no "new" without "old").
        assert!(patch_for(&p, &data(json!({"tags": [{"tag": "x"}]})))
            .unwrap()
            .0
            .is_empty());
        // Already carrying "new": once, manual, where it was.
        let both =
            data(json!({"tags": [{"tag": "new"}, {"tag": "old"}, {"tag": "new", "type": 1}]}));
        let (patch, _) = patch_for(&rename(Value::Object(both.clone())), &both).unwrap();
        assert_eq!(patch["tags"], json!([{"tag": "new"}]));
        let auto = data(json!({"tags": [{"tag": "new", "type": 1}, {"tag": "old"}]}));
        let (patch, _) = patch_for(&rename(Value::Object(auto.clone())), &auto).unwrap();
        assert_eq!(patch["tags"], json!([{"tag": "new"}]));
        // A landed rename shows: "old" gone, "new" there.
        assert!(shows_change(&p, &now).is_none());
        let landed = data(json!({"tags": [{"tag": "x"}, {"tag": "new"}]}));
        assert_eq!(shows_change(&p, &landed).unwrap()[0].field, "tags");
    }

    #[test]
    fn deleted_compares_as_a_boolean() {
        let mut e = Edit::new(key());
        e.set.insert("deleted".into(), json!(true));
        let p = plan(e, data(json!({})));
        assert!(patch_for(&p, &data(json!({"deleted": 1})))
            .unwrap()
            .0
            .is_empty());
        let (patch, changes) = patch_for(&p, &data(json!({}))).unwrap();
        assert_eq!(patch["deleted"], json!(true));
        assert_eq!(changes[0].before, json!(false));
    }

    #[test]
    fn a_landed_write_shows_its_change() {
        let mut e = Edit::new(key());
        e.set.insert("title".into(), json!("B"));
        e.collections.add.push("COLL2345".into());
        let p = plan(e, data(json!({"title": "A", "collections": []})));
        assert!(shows_change(&p, &data(json!({"title": "A", "collections": []}))).is_none());
        let changes = shows_change(
            &p,
            &data(json!({"title": "B", "collections": ["COLL2345"]})),
        )
        .unwrap();
        assert_eq!(changes.len(), 2);
    }
}
