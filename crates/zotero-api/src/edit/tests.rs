//! The merge of an edit with what Zotero has now: conflicts, sets, renames, `deleted`.

use serde_json::{json, Map, Value};

use super::merge::{collection_keys, patch_for, resolve, shows_change, tag_names, Plan};
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
    let (patch, _) = patch_for(&p, &data(json!({"tags": [{"tag": "a"}, {"tag": "n"}]}))).unwrap();
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
    let both = data(json!({"tags": [{"tag": "new"}, {"tag": "old"}, {"tag": "new", "type": 1}]}));
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
