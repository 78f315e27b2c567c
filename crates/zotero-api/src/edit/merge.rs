//! The three-way merge of an edit: the object as first read (the base), as it is now, and
//! what the edit wants. Pure functions over the objects' `data`; nothing here talks to Zotero.

use serde_json::{json, Map, Value};

use super::{Conflict, Edit, FieldChange, SetEdit};
use crate::model::{field_value, truthy};

/// The fields to send and the changes they make, or what stops them.
pub(super) type Patched = Result<(Map<String, Value>, Vec<FieldChange>), Vec<Conflict>>;

/// Whether two values of a field are the same for Zotero (`deleted: 1` is `true`).
fn same(field: &str, a: &Value, b: &Value) -> bool {
    match field {
        "deleted" => truthy(a) == truthy(b),
        _ => a == b,
    }
}

pub(super) fn tag_names(data: &Map<String, Value>) -> Vec<String> {
    data.get("tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(|t| t.get("tag").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn collection_keys(data: &Map<String, Value>) -> Vec<String> {
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
pub(super) fn resolve(set: &SetEdit, base: &[String]) -> (Vec<String>, Vec<String>) {
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
pub(super) struct Plan {
    pub(super) edit: Edit,
    /// The object's `data` as first read: the base of the three-way comparison.
    pub(super) base: Map<String, Value>,
    pub(super) tags: (Vec<String>, Vec<String>),
    pub(super) collections: (Vec<String>, Vec<String>),
}

/// What writing a plan onto `current` takes: the fields to send, the changes they make, or
/// the fields changed elsewhere that stop it.
pub(super) fn patch_for(plan: &Plan, current: &Map<String, Value>) -> Patched {
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
pub(super) fn shows_change(plan: &Plan, current: &Map<String, Value>) -> Option<Vec<FieldChange>> {
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
