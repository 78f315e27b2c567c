//! Every answer on a budget: every tool that reads (derived from the tool table: read-only
//! hints) and every resource, called with its defaults and the least it requires on the
//! emulator's largest library (`zotero_emulator::largest`), answers at most 20,000 characters
//! of text, and when there is more it says how to get it: following that once gets the next
//! part. A list never silently stops at a page.

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use serde_json::{json, Map, Value};
use zotero_emulator::largest::{HEAVY_ITEM, HEAVY_NOTE, PLAIN_ITEMS, QUERY};
use zotero_emulator::{Emulator, Library, API_KEY, USER_ID};
use zotero_mcp::tools::ToolName;

use crate::common::{env_for, in_process, Answer, Server};

/// The most characters of text an answer may hold.
const BUDGET: usize = 20_000;

/// The lists answers page through, by the field that holds them.
const LISTS: &[&str] = &[
    "items",
    "collections",
    "tags",
    "children",
    "notes",
    "annotations",
    "results",
    "findings",
];

/// The least each reading tool needs, and whether the largest library holds more than one
/// answer can (then the answer must say how to go on). A reading tool missing here fails
/// the test: add it.
fn least_arguments(tool: &str) -> (Value, bool) {
    match tool {
        "zotero_search_items" => (json!({"query": QUERY}), true),
        "zotero_list_collections" | "zotero_list_items" | "zotero_list_tags" => (json!({}), true),
        "zotero_get_sort_values" | "zotero_list_libraries" => (json!({}), false),
        "zotero_get_search_database_status" => (json!({}), false),
        "zotero_get_item"
        | "zotero_get_item_metadata"
        | "zotero_get_item_fulltext"
        | "zotero_get_item_children"
        | "zotero_get_notes"
        | "zotero_get_annotations" => (json!({"item_key": HEAVY_ITEM}), true),
        "zotero_cite" | "zotero_export" => (json!({"item_keys": [HEAVY_ITEM]}), true),
        "zotero_check_retractions" => (json!({}), true),
        // No index: building one of this library takes minutes in a debug build. The answer
        // (ZOTERO_NOT_FOUND, saying how to build one) is held to the budget all the same.
        "zotero_semantic_search" => (json!({"query": QUERY}), false),
        // The emulator's OpenAlex: ResNet's references and citing works (one page each).
        "zotero_find_related" => (json!({"dois": ["10.1109/CVPR.2016.90"]}), false),
        // Citations of keys no item carries, each with its closest items: more than a page.
        "zotero_check_manuscript" => {
            let text: String = (0..150).map(|n| format!("[@{QUERY}{n}] ")).collect();
            (json!({"text": text}), true)
        }
        other => panic!("{other} reads: give the least arguments it needs in least_arguments"),
    }
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn with(args: &Value, key: &str, value: Value) -> Value {
    let mut m: Map<String, Value> = args.as_object().cloned().unwrap_or_default();
    m.insert(key.to_string(), value);
    Value::Object(m)
}

/// The page's list: its field and its entries.
fn list_of(data: &Value) -> Option<(&'static str, &Vec<Value>)> {
    LISTS
        .iter()
        .find_map(|f| data.get(*f).and_then(Value::as_array).map(|a| (*f, a)))
}

/// `field=NAME, offset=N` in a `truncated` note: how to read a cut field on.
fn field_and_offset(note: &str) -> Option<(String, u64)> {
    let field = note.split("field=").nth(1)?;
    let field: String = field
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    let offset = note.split("offset=").nth(1)?;
    let offset: String = offset.chars().take_while(char::is_ascii_digit).collect();
    Some((field, offset.parse().ok()?))
}

struct Check<'a> {
    s: &'a Server,
    failures: Vec<String>,
}

impl Check<'_> {
    fn fail(&mut self, what: String) {
        self.failures.push(what);
    }

    /// Calls `tool`; notes a failure unless it succeeded within the budget.
    async fn call(&mut self, tool: &str, args: &Value) -> Option<Answer> {
        let a = self.s.call(tool, args.clone()).await;
        let n = chars(&a.text);
        if n > BUDGET {
            self.fail(format!("{tool} {args}: {n} characters of text"));
        }
        let no_index = tool == "zotero_semantic_search" && a.code() == "ZOTERO_NOT_FOUND";
        if !a.ok() && !no_index {
            self.fail(format!("{tool} {args}: failed: {}", a.envelope["error"]));
            return None;
        }
        if !a.ok() {
            return None;
        }
        Some(a)
    }

    /// One tool: within the budget, and when there is more, the continuation works.
    async fn tool(&mut self, tool: &str, args: Value, more: bool) {
        let Some(a) = self.call(tool, &args).await else {
            return;
        };
        let data = a.data().clone();
        // A list that stops before its total says where the next page starts.
        if let (Some((field, list)), Some(total)) =
            (list_of(&data), data.get("total").and_then(Value::as_u64))
        {
            let start = args.get("start").and_then(Value::as_u64).unwrap_or(0);
            if start + (list.len() as u64) < total && data.get("next_start").is_none() {
                self.fail(format!(
                    "{tool}: {} of {total} {field} and no next_start",
                    list.len()
                ));
            }
        }
        if let Some(next) = data.get("next_start").and_then(Value::as_u64) {
            let Some((field, first)) = list_of(&data) else {
                return self.fail(format!("{tool}: next_start without a list"));
            };
            if next != first.len() as u64 {
                self.fail(format!(
                    "{tool}: next_start {next} after a first page of {} {field}",
                    first.len()
                ));
            }
            let Some(b) = self.call(tool, &with(&args, "start", json!(next))).await else {
                return;
            };
            match list_of(b.data()) {
                Some((_, second)) if !second.is_empty() => {
                    if second.iter().any(|e| first.contains(e)) {
                        self.fail(format!("{tool}: the next page repeats the first"));
                    }
                }
                _ => self.fail(format!("{tool}: the page at start {next} is empty")),
            }
            return;
        }
        // A text cut on its own (a note's too) says where the rest starts.
        let note_next = data["notes"][0]["next_offset"].as_u64();
        if let Some(next) = data["next_offset"].as_u64().or(note_next) {
            if let (Some(offset), Some(text)) = (data["offset"].as_u64(), data["text"].as_str()) {
                let shown = chars(text) as u64;
                if offset + shown != next {
                    self.fail(format!(
                        "{tool}: next_offset {next} after {shown} characters from {offset}"
                    ));
                }
            }
            let Some(b) = self.call(tool, &with(&args, "offset", json!(next))).await else {
                return;
            };
            let (first, second) = (part(&data), part(b.data()));
            if second.is_empty() || second == first {
                self.fail(format!(
                    "{tool}: offset {next} did not read on: {}",
                    b.data()
                ));
            }
            return;
        }
        let notes: Vec<String> = data["truncated"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if let Some((field, offset)) = notes.iter().find_map(|n| field_and_offset(n)) {
            let key = data["item_key"]
                .as_str()
                .or(data["item"]["item_key"].as_str())
                .unwrap_or(HEAVY_ITEM);
            let args = json!({"item_key": key, "field": field, "offset": offset});
            let Some(b) = self.call("zotero_get_item_metadata", &args).await else {
                return;
            };
            if b.data()["offset"] != json!(offset) || part(b.data()).is_empty() {
                self.fail(format!(
                    "{tool}: {args} did not read the field on: {}",
                    b.data()
                ));
            }
            return;
        }
        if more {
            self.fail(format!(
                "{tool} {args}: the library holds more than this answer, which does not say \
                 how to get it: {}",
                cut(&a.text)
            ));
        }
    }

    async fn resource(&mut self, uri: &str, more: bool) {
        let read = self
            .s
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await;
        let text = match read.as_ref().ok().and_then(|r| r.contents.first()) {
            Some(ResourceContents::TextResourceContents { text, .. }) => text.clone(),
            _ => return self.fail(format!("{uri}: no text: {read:?}")),
        };
        let n = chars(&text);
        if n > BUDGET {
            self.fail(format!("{uri}: {n} characters"));
        }
        let says = ["reads on", "reads the others", "Read on with"]
            .iter()
            .any(|s| text.contains(s));
        if more && !says {
            self.fail(format!(
                "{uri}: more to read, and no word of how: {}",
                cut(&text)
            ));
        }
        // The full text says which call reads on, as JSON: make it.
        if let Some(call) = text.split("Read on with zotero_get_item_fulltext ").nth(1) {
            let args = call.trim_end().trim_end_matches(".]");
            match serde_json::from_str::<Value>(args) {
                Ok(args) => {
                    if let Some(b) = self.call("zotero_get_item_fulltext", &args).await {
                        if b.data()["offset"] != args["offset"] {
                            self.fail(format!("{uri}: {args} did not read on"));
                        }
                    }
                }
                Err(e) => self.fail(format!(
                    "{uri}: the call to read on is not JSON ({e}): {call}"
                )),
            }
        }
    }
}

/// The text an answer carries: a page of text, a bibliography, a note, or a field's part.
fn part(data: &Value) -> String {
    for text in [
        &data["text"],
        &data["bibliography"],
        &data["notes"][0]["markdown"],
    ] {
        if let Some(t) = text.as_str() {
            return t.to_string();
        }
    }
    let item = &data["item"];
    for list in [&item["fields"], &item["creators"], &item["tags"]] {
        let empty = list.as_object().is_some_and(|o| o.is_empty())
            || list.as_array().is_some_and(|a| a.is_empty());
        if !list.is_null() && !empty {
            return list.to_string();
        }
    }
    String::new()
}

fn cut(text: &str) -> String {
    text.chars().take(300).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_read_answers_within_the_budget_and_says_how_to_read_on() {
    let emu = Emulator::with_library(Library::largest()).await;
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push((
        "ZOTERO_TOOLSETS".into(),
        "read,write,files,cite,identify,index,research".into(),
    ));
    // Crossref is the emulator's (its DOIs are unknown there: the check says so).
    env.push(("ZOTERO_OPENALEX_BASE".into(), emu.openalex_base()));
    env.push(("ZOTERO_CROSSREF_BASE".into(), emu.crossref_base()));
    env.push(("ZOTERO_FETCH_ALLOW_PRIVATE".into(), "1".into()));
    env.push(("ZOTERO_INDEX_DIR".into(), dir.path().display().to_string()));
    let s = in_process(&env).await;
    let listed: Vec<String> = s.tools().await.iter().map(|t| t.name.to_string()).collect();
    let reading: Vec<&str> = ToolName::ALL
        .iter()
        .filter(|t| t.hints().read_only)
        .map(|t| t.name())
        .collect();
    assert!(reading.len() >= 15, "{reading:?}");
    let mut check = Check {
        s: &s,
        failures: Vec::new(),
    };
    for tool in reading {
        assert!(listed.iter().any(|l| l == tool), "{tool} is not listed");
        let (args, more) = least_arguments(tool);
        check.tool(tool, args, more).await;
    }
    // The longest note alone.
    check
        .tool("zotero_get_notes", json!({"item_key": HEAVY_NOTE}), true)
        .await;

    let item = |view: &str| format!("zotero://user/items/{HEAVY_ITEM}{view}");
    check.resource(&item(""), false).await;
    for view in [
        "/fulltext.txt",
        "/notes.md",
        "/annotations.md",
        "/annotations.json",
    ] {
        check.resource(&item(view), true).await;
    }
    check
        .resource("zotero://user/collections/C2222222", true)
        .await;
    check.resource("zotero://styles", false).await;

    let page = s.client.list_resources(None).await.unwrap();
    let n = chars(&serde_json::to_string(&page).unwrap());
    if n > BUDGET {
        check.fail(format!("resources/list: {n} characters"));
    }
    if page.next_cursor.is_none() {
        check.fail(format!(
            "resources/list: {} of {PLAIN_ITEMS}+ items and no nextCursor",
            page.resources.len()
        ));
    }
    let failures = std::mem::take(&mut check.failures);
    assert!(failures.is_empty(), "{failures:#?}");
}
