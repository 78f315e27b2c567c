//! Properties of changing what exists (zotero-api's edit engine, through
//! `zotero_update_item` and directly):
//! - edits made "in Zotero" (the emulator) before the server reads an item and between its
//!   read and its write, in any interleaving, never lose either side's change to a field
//!   the other did not touch; a field both changed stops the server's change as a whole,
//!   and the answer names exactly those fields;
//! - a batch write of many items under a random fault schedule leaves each item with all
//!   of its change or none of it, and the outcome of each item says which.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use tokio_util::sync::CancellationToken;
use zotero_api::edit::{Edit, EditStatus, ObjectKind, SetEdit};
use zotero_api::{LibraryRef, ObjectKey, ZoteroClient};
use zotero_emulator::{Emulator, Fault, FaultKind, Library, ZoteroEdit, API_KEY, USER_ID};

use crate::common::env_for;
use crate::prop_support::{config, runtime, start, TAGS};

/// Fields of VASWANI7 (a journal article) the two sides edit.
const FIELDS: [&str; 6] = ["title", "date", "extra", "volume", "pages", "issue"];
/// Values an edit writes: few, so that both sides often pick the same one.
const VALUES: [&str; 4] = ["", "v1", "v2", "v3"];
const ITEM: &str = "VASWANI7";

/// An edit of fields (by index into FIELDS) to values (by index into VALUES).
fn field_edits() -> impl Strategy<Value = BTreeMap<usize, usize>> {
    proptest::collection::btree_map(0..FIELDS.len(), 0..VALUES.len(), 0..=3)
}

/// A tag set: a subset of TAGS and the item's own tags.
fn tag_set() -> impl Strategy<Value = BTreeSet<&'static str>> {
    let all: Vec<&'static str> = TAGS
        .iter()
        .copied()
        .chain(["transformers", "nlp"])
        .collect();
    proptest::sample::subsequence(all, 0..=4).prop_map(|v| v.into_iter().collect())
}

/// An edit made in Zotero: fields, and maybe the whole tag list.
#[derive(Debug, Clone)]
struct InZotero {
    fields: BTreeMap<usize, usize>,
    tags: Option<BTreeSet<&'static str>>,
}

fn in_zotero() -> impl Strategy<Value = InZotero> {
    (field_edits(), proptest::option::of(tag_set()))
        .prop_map(|(fields, tags)| InZotero { fields, tags })
}

impl InZotero {
    fn to_edit(&self) -> ZoteroEdit {
        let mut e = ZoteroEdit::item(ITEM);
        for (f, v) in &self.fields {
            e = e.set(FIELDS[*f], json!(VALUES[*v]));
        }
        if let Some(tags) = &self.tags {
            let list: Vec<Value> = tags.iter().map(|t| json!({"tag": t})).collect();
            e = e.set("tags", Value::Array(list));
        }
        e
    }

    /// The item's fields and tags after this edit.
    fn apply(&self, state: &mut State) {
        for (f, v) in &self.fields {
            state.fields.insert(FIELDS[*f], VALUES[*v].to_string());
        }
        if let Some(tags) = &self.tags {
            state.tags = tags.iter().map(|t| t.to_string()).collect();
        }
    }
}

/// What the property compares: the edited fields ("" when absent) and the tag set.
#[derive(Debug, Clone, PartialEq)]
struct State {
    fields: BTreeMap<&'static str, String>,
    tags: BTreeSet<String>,
}

fn state_of(data: &Value) -> State {
    State {
        fields: FIELDS
            .iter()
            .map(|f| (*f, data[f].as_str().unwrap_or("").to_string()))
            .collect(),
        tags: data["tags"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| t["tag"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default(),
    }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn edits_in_zotero_interleaved_with_the_servers_never_lose_a_change(
        server_fields in field_edits(),
        add in tag_set(),
        remove in tag_set(),
        before in proptest::option::of(in_zotero()),
        between in proptest::collection::vec(in_zotero(), 0..=2),
    ) {
        let remove: BTreeSet<&str> = remove.difference(&add).copied().collect();
        prop_assume!(!server_fields.is_empty() || !add.is_empty() || !remove.is_empty());
        runtime().block_on(async {
            let (emu, server) = start(Library::from_fixtures(), &[]).await;
            if let Some(z) = &before {
                emu.edit_in_zotero(&z.to_edit()).unwrap();
            }
            let base = state_of(&emu.item(ITEM).unwrap()["data"]);
            for z in &between {
                emu.inject(
                    Fault::once(FaultKind::EditedElsewhereWith(z.to_edit())).method("POST"),
                );
            }
            let mut args = json!({"item_key": ITEM});
            let fields: Map<String, Value> = server_fields
                .iter()
                .map(|(f, v)| (FIELDS[*f].to_string(), json!(VALUES[*v])))
                .collect();
            if !fields.is_empty() {
                args["fields"] = Value::Object(fields);
            }
            if !add.is_empty() {
                args["add_tags"] = json!(add);
            }
            if !remove.is_empty() {
                args["remove_tags"] = json!(remove);
            }
            let a = server.call("zotero_update_item", args).await;
            let fired = between.len() - emu.faults_pending();
            // What Zotero made of the item: every edit of it that happened.
            let mut in_zotero = base.clone();
            for z in &between[..fired] {
                z.apply(&mut in_zotero);
            }
            let wanted: BTreeMap<&str, String> = server_fields
                .iter()
                .map(|(f, v)| (FIELDS[*f], VALUES[*v].to_string()))
                .collect();
            let conflicts: BTreeSet<&str> = wanted
                .iter()
                .filter(|(f, w)| {
                    let now = &in_zotero.fields[*f];
                    now != *w && *now != base.fields[*f]
                })
                .map(|(f, _)| *f)
                .collect();
            let after = state_of(&emu.item(ITEM).unwrap()["data"]);
            let what = format!(
                "base {base:?}, in Zotero {in_zotero:?}, fired {fired}, wanted {wanted:?} +{add:?} -{remove:?}: {}",
                a.envelope
            );
            if conflicts.is_empty() {
                let d = a.data();
                assert!(a.ok(), "{what}");
                let mut expected = in_zotero.clone();
                for (f, w) in &wanted {
                    expected.fields.insert(f, w.clone());
                }
                for t in &remove {
                    expected.tags.remove(*t);
                }
                for t in &add {
                    expected.tags.insert(t.to_string());
                }
                assert_eq!(after, expected, "{what}");
                // The answer tells what it changed, and only that.
                let changed = expected != in_zotero;
                assert_eq!(d["status"], if changed { "changed" } else { "unchanged" }, "{what}");
                for c in d["changes"].as_array().unwrap() {
                    let f = c["field"].as_str().unwrap();
                    if f == "tags" {
                        let listed: BTreeSet<String> = c["after"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|t| t.as_str().unwrap().to_string())
                            .collect();
                        assert_eq!(listed, after.tags, "{what}");
                    } else {
                        assert!(wanted.contains_key(f), "{what}");
                        assert_eq!(c["after"], json!(after.fields[f]), "{what}");
                    }
                }
            } else {
                // Nothing of the server's change was written; Zotero's edits all stand.
                let e = a.expect_err("ZOTERO_VALIDATION_ERROR");
                assert_eq!(e["details"]["reason"], "changed_in_zotero", "{what}");
                let named: BTreeSet<&str> = e["details"]["conflicts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["field"].as_str().unwrap())
                    .collect();
                assert_eq!(named, conflicts, "{what}");
                for c in e["details"]["conflicts"].as_array().unwrap() {
                    let f = c["field"].as_str().unwrap();
                    assert_eq!(c["yours"], json!(wanted[f]), "{what}");
                    assert_eq!(c["in_zotero"], json!(in_zotero.fields[f]), "{what}");
                    assert_eq!(c["before"], json!(base.fields[f]), "{what}");
                }
                assert_eq!(after, in_zotero, "{what}");
            }
            server.stop().await;
        });
    }
}

/// Items of the synthetic library the batch property edits.
const BATCH_ITEMS: usize = 60;

/// One item's change in the batch property: fields (index into BATCH_FIELDS) to a value
/// made for it, tags added and removed.
#[derive(Debug, Clone)]
struct ItemChange {
    item: usize,
    fields: BTreeSet<usize>,
    add: BTreeSet<&'static str>,
    remove: BTreeSet<&'static str>,
}

const BATCH_FIELDS: [&str; 4] = ["title", "extra", "date", "callNumber"];

fn item_change() -> impl Strategy<Value = ItemChange> {
    (
        0..BATCH_ITEMS,
        proptest::collection::btree_set(0..BATCH_FIELDS.len(), 1..=3),
        proptest::sample::subsequence(TAGS.to_vec(), 0..=2),
        proptest::sample::subsequence(TAGS.to_vec(), 0..=2),
    )
        .prop_map(|(item, fields, add, remove)| {
            let add: BTreeSet<&str> = add.into_iter().collect();
            let remove = remove.into_iter().filter(|t| !add.contains(t)).collect();
            ItemChange {
                item,
                fields,
                add,
                remove,
            }
        })
}

#[derive(Debug, Clone, Copy)]
enum Target {
    /// The batch POSTs.
    Write,
    /// The reads of the objects (and of the key's access).
    Read,
}

fn fault_kind() -> impl Strategy<Value = FaultKind> {
    prop_oneof![
        Just(FaultKind::Drop),
        Just(FaultKind::ServerError),
        proptest::sample::select(vec![400u16, 409, 412, 500, 503]).prop_map(FaultKind::Status),
    ]
}

fn schedule() -> impl Strategy<Value = Vec<(Target, FaultKind, usize, usize)>> {
    let target = prop_oneof![3 => Just(Target::Write), 1 => Just(Target::Read)];
    proptest::collection::vec((target, fault_kind(), 1usize..=3, 0usize..=2), 0..=4)
}

fn value_for(item: usize, field: &str) -> String {
    if field == "date" {
        format!("19{:02}-01-01", item % 100)
    } else {
        format!("{field} of {item} (batch)")
    }
}

/// Whether `data` holds the whole change (`all`) or none of it (`none`, against `before`).
fn holds(change: &ItemChange, before: &Value, data: &Value) -> (bool, bool) {
    let tags = |d: &Value| -> BTreeSet<String> {
        d["tags"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| t["tag"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let now = tags(data);
    let all = change.fields.iter().all(|f| {
        let f = BATCH_FIELDS[*f];
        data[f].as_str() == Some(value_for(change.item, f).as_str())
    }) && change.add.iter().all(|t| now.contains(*t))
        && change.remove.iter().all(|t| !now.contains(*t));
    let none = change
        .fields
        .iter()
        .all(|f| data[BATCH_FIELDS[*f]] == before[BATCH_FIELDS[*f]])
        && now == tags(before);
    (all, none)
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn a_batch_under_faults_changes_each_item_wholly_or_not_and_says_which(
        changes in proptest::collection::vec(item_change(), 1..=BATCH_ITEMS),
        faults in schedule(),
        seed in any::<u64>(),
    ) {
        // One change per item (the first drawn for it).
        let mut seen = BTreeSet::new();
        let changes: Vec<ItemChange> =
            changes.into_iter().filter(|c| seen.insert(c.item)).collect();
        runtime().block_on(async {
            let emu = Emulator::with_library(Library::synthetic(BATCH_ITEMS, seed)).await;
            let mut keys: Vec<String> = emu
                .items()
                .iter()
                .map(|i| i["key"].as_str().unwrap().to_string())
                .collect();
            keys.sort();
            let before: HashMap<String, Value> = emu
                .items()
                .into_iter()
                .map(|i| (i["key"].as_str().unwrap().to_string(), i["data"].clone()))
                .collect();
            for (target, kind, times, skip) in &faults {
                let f = Fault::times(kind.clone(), *times).skip(*skip);
                emu.inject(match target {
                    Target::Write => f.method("POST"),
                    Target::Read => f.method("GET"),
                });
            }
            let env: HashMap<String, String> =
                env_for(&emu.uri(), USER_ID, API_KEY).into_iter().collect();
            let client = ZoteroClient::new(
                &zotero_mcp::config::Config::from_map(&env).unwrap().client(),
            )
            .unwrap();
            let lib = client.library(LibraryRef::User).unwrap();
            let edits: Vec<Edit> = changes
                .iter()
                .map(|c| {
                    let mut e = Edit::new(ObjectKey::parse(&keys[c.item]).unwrap());
                    for f in &c.fields {
                        let f = BATCH_FIELDS[*f];
                        e.set.insert(f.to_string(), json!(value_for(c.item, f)));
                    }
                    e.tags = SetEdit {
                        add: c.add.iter().map(|t| t.to_string()).collect(),
                        remove: c.remove.iter().map(|t| t.to_string()).collect(),
                        ..SetEdit::default()
                    };
                    e
                })
                .collect();
            let result = lib
                .edit_objects(ObjectKind::Item, edits, false, &CancellationToken::new(), None)
                .await;
            let what = format!("{faults:?}: {result:?}");
            let outcomes = match &result {
                Ok(o) => {
                    assert_eq!(o.len(), changes.len(), "{what}");
                    Some(o)
                }
                Err(_) => None,
            };
            for (i, change) in changes.iter().enumerate() {
                let key = &keys[change.item];
                let data = emu.item(key).unwrap()["data"].clone();
                let (all, none) = holds(change, &before[key], &data);
                let item = format!("{key} {change:?} now {data}");
                // All or nothing, whatever happened.
                assert!(all || none, "partly changed: {item} / {what}");
                match outcomes.and_then(|o| o.get(i)).map(|o| &o.status) {
                    // The call failed before writing anything.
                    None => assert!(none, "written although the call failed: {item} / {what}"),
                    Some(EditStatus::Changed | EditStatus::Unchanged) => {
                        assert!(all, "said done but is not: {item} / {what}")
                    }
                    Some(EditStatus::Failed { message, .. })
                        if message.contains("may or may not") => {}
                    Some(other) => {
                        assert!(none, "said {other:?} but was written: {item} / {what}")
                    }
                }
            }
            // Items not in the batch are untouched.
            let named: BTreeSet<&String> = changes.iter().map(|c| &keys[c.item]).collect();
            for key in keys.iter().filter(|k| !named.contains(k)) {
                assert_eq!(&emu.item(key).unwrap()["data"], &before[key], "{key} / {what}");
            }
        });
    }
}
