//! Which tools a session lists and may call. The configuration permits (`ZOTERO_TOOLSETS`,
//! `ZOTERO_READ_ONLY`, the local API alone): [`Offer`]. Of what it permits, `tools/list`
//! shows the default surface ([`DEFAULT_TOOLS`] and `zotero_enable_tools`) unless
//! `ZOTERO_TOOLSETS` is set, which lists its sets whole from the start, as before the default
//! surface existed. `zotero_enable_tools` lists the families (the tool sets) and adds some to
//! this session's listing, then sends `notifications/tools/list_changed`.
//!
//! Listing is not permission: a permitted tool that is not listed is still called by name
//! (a client that ignores list changes, or stateless HTTP, where nothing outlives a request),
//! so the enabling answer carries each new tool's input schema. What is not permitted is
//! refused exactly as before, listed or not.

use std::collections::BTreeSet;
use std::sync::Mutex;

use rmcp::model::Tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::config::Config;
use crate::error::{ErrorCode, ToolError};
use crate::tools::params::null_is_default;
use crate::tools::{support::publish, Definition, Hints, ToolName, ToolSet};

/// The discovery tool's name.
pub const ENABLE_TOOLS: &str = "zotero_enable_tools";

/// Listed by default besides `zotero_enable_tools`: the seed's tools (the contract registries
/// promise) and what the deep-research workflow reads with (search by meaning and the index's
/// status, an item's metadata, full text and notes; annotations come back as passages of the
/// search by meaning).
pub const DEFAULT_TOOLS: [ToolName; 13] = [
    ToolName::SearchItems,
    ToolName::ListCollections,
    ToolName::GetItem,
    ToolName::CreateItem,
    ToolName::UploadAttachment,
    ToolName::AttachArxivPdf,
    ToolName::GetSortValues,
    ToolName::AddItemToCollection,
    ToolName::GetItemFulltext,
    ToolName::GetItemMetadata,
    ToolName::GetNotes,
    ToolName::SemanticSearch,
    ToolName::SearchDatabaseStatus,
];

/// The most characters of input schemas one enabling answer carries; the tools past it are
/// named with their descriptions, and `tools/list` (or enabling fewer families) gives the rest.
const HOW_TO_CALL_CHARS: usize = 16_000;

/// Which tools this server permits: the sets of `ZOTERO_TOOLSETS`, without any tool that
/// writes when `ZOTERO_READ_ONLY` is on; and whether they are all listed from the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    read_only: bool,
    /// Only the desktop app's local API or Zotero's database is configured: nothing can be
    /// written either.
    local_only: bool,
    sets: BTreeSet<ToolSet>,
    /// `ZOTERO_TOOLSETS` is set: every permitted tool is listed, as before the default surface.
    up_front: bool,
}

impl Offer {
    pub fn new(config: &Config) -> Self {
        Self {
            read_only: config.tools.read_only,
            local_only: config.local_only(),
            sets: config.tools.sets.clone(),
            up_front: config.tools.sets_up_front,
        }
    }

    /// `None` when `tool` is permitted; otherwise the answer to a call of it. Either way
    /// nothing is sent anywhere.
    ///
    /// `ZOTERO_AUTH_ERROR`: the caller is not permitted to use the tool, as with a key that
    /// may not write (Zotero's 403). Not a validation error (no argument would help) and not
    /// "not found" (the tool exists; the message says how to enable it).
    pub fn refusal(&self, tool: ToolName) -> Option<ToolError> {
        let name = tool.name();
        if self.read_only && tool.writes() {
            let e = ToolError::auth(format!(
                    "{name} changes the library, and read-only mode is on (ZOTERO_READ_ONLY=1); \
                     to allow changes, unset ZOTERO_READ_ONLY (or set it to 0) and restart the server"
                ),
            );
            return Some(e.with_detail("variable", "ZOTERO_READ_ONLY"));
        }
        if self.local_only && tool.writes() {
            let e = ToolError::auth(format!(
                "{name} changes the library, and this server reads through the Zotero desktop \
                     app's local API (ZOTERO_LOCAL=1) or Zotero's database (ZOTERO_DATA_DIR) \
                     only, which it uses read-only; set ZOTERO_API_KEY and ZOTERO_USER_ID \
                     (https://www.zotero.org/settings/keys) and restart the server to write \
                     through the Web API, or run `zotero-mcp authorize` to write through \
                     Zotero 10"
            ));
            return Some(e.with_detail("missing", vec!["ZOTERO_API_KEY", "ZOTERO_USER_ID"]));
        }
        let set = tool.set();
        if !self.sets.contains(&set) {
            let sets: Vec<&str> = self.sets.iter().map(|s| s.name()).collect();
            let e = ToolError::auth(format!(
                "{name} is in the tool set '{}', which ZOTERO_TOOLSETS ({}) leaves out; \
                     add {} to ZOTERO_TOOLSETS and restart the server to use it",
                set.name(),
                sets.join(","),
                set.name()
            ));
            return Some(
                e.with_detail("variable", "ZOTERO_TOOLSETS")
                    .with_detail("tool_set", set.name()),
            );
        }
        None
    }

    /// Every tool a call may reach, in the table's order.
    pub fn permitted(&self) -> Vec<ToolName> {
        ToolName::ALL
            .iter()
            .copied()
            .filter(|t| self.refusal(*t).is_none())
            .collect()
    }

    /// `zotero_enable_tools` is listed: the default surface, where there is more to reach.
    pub fn discovers(&self) -> bool {
        !self.up_front
    }

    /// What `tools/list` shows a session that enabled `enabled` (besides
    /// `zotero_enable_tools`, see [`Offer::discovers`]), in the table's order.
    pub fn listed(&self, enabled: &BTreeSet<ToolSet>) -> Vec<ToolName> {
        self.permitted()
            .into_iter()
            .filter(|t| self.up_front || DEFAULT_TOOLS.contains(t) || enabled.contains(&t.set()))
            .collect()
    }

    /// Why `set` cannot be enabled: the refusal of its first tool that is not permitted (a
    /// family that holds writes, in read-only mode). A family is enabled whole or not at all.
    pub fn family_refusal(&self, set: ToolSet) -> Option<ToolError> {
        ToolName::ALL
            .iter()
            .filter(|t| t.set() == set)
            .find_map(|t| self.refusal(*t))
            .map(|e| {
                let message = format!(
                    "the family '{}' cannot be enabled: {}",
                    set.name(),
                    e.message
                );
                ToolError {
                    message,
                    ..e.with_detail("family", set.name())
                }
            })
    }

    /// The `instructions` of `initialize`: what the listed tools are for, by set, and how to
    /// reach the others.
    pub fn instructions(&self) -> String {
        let listed = self.listed(&BTreeSet::new());
        let mut text = String::from(
            "Tools for the user's Zotero libraries (their own, and groups: see zotero_list_libraries; pass library to choose one).",
        );
        for set in ToolSet::ALL {
            let names: Vec<&str> = listed
                .iter()
                .filter(|t| t.set() == set)
                .map(|t| t.name())
                .collect();
            if !names.is_empty() {
                text.push_str(&format!(" To {}: {}.", set.purpose(), names.join(", ")));
            }
        }
        if self.discovers() {
            text.push_str(&format!(
                " More tools (collections, tags, notes and item edits, citations, export, add by DOI, …) are one call away: {ENABLE_TOOLS}."
            ));
        }
        if self.read_only {
            text.push_str(" Read-only mode is on: nothing can be changed.");
        } else if self.local_only {
            text.push_str(" Reading through the Zotero desktop app or its database only: nothing can be changed.");
        }
        let codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        text.push_str(&format!(
            " Every tool answers {{ok, data, error}}; error.code is one of {}.",
            codes.join(", ")
        ));
        text
    }
}

/// A family's name as `zotero_enable_tools` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Read,
    Write,
    Files,
    Cite,
    Identify,
    Index,
    Research,
    All,
}

impl Family {
    fn sets(self) -> Vec<ToolSet> {
        match self {
            Family::Read => vec![ToolSet::Read],
            Family::Write => vec![ToolSet::Write],
            Family::Files => vec![ToolSet::Files],
            Family::Cite => vec![ToolSet::Cite],
            Family::Identify => vec![ToolSet::Identify],
            Family::Index => vec![ToolSet::Index],
            Family::Research => vec![ToolSet::Research],
            Family::All => ToolSet::ALL.to_vec(),
        }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnableToolsParams {
    /// Families to enable (all: every one); none: list them
    #[serde(default, deserialize_with = "null_is_default")]
    #[schemars(length(max = 8))]
    pub families: Vec<Family>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct EnableToolsData {
    /// Every family, one line each
    pub families: Vec<FamilyLine>,
    /// The families this call enabled
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub enabled: Vec<&'static str>,
    /// The tools this call made available, with how to call them
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<HowToCall>,
    /// true: tools/list now lists them (notifications/tools/list_changed was sent); false:
    /// call them by name all the same (no session: stateless HTTP)
    pub list_changed: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct FamilyLine {
    pub family: &'static str,
    pub about: &'static str,
    /// listed (all its tools are), available (enable it) or unavailable (see why)
    pub state: &'static str,
    /// Its tools not listed now
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<&'static str>,
    /// Why it cannot be enabled
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct HowToCall {
    pub name: String,
    pub description: String,
    /// Absent past the answer's budget: see tools/list, or enable fewer families at once
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Map<String, Value>>,
}

/// `zotero_enable_tools` as `tools/list` publishes it.
pub fn definition() -> Definition {
    Definition {
        name: ENABLE_TOOLS,
        title: "Enable more tools",
        description: "List tool families not listed yet, or enable some for this session; \
            answers each new tool's input schema.",
        input_schema: publish::input_schema::<EnableToolsParams>(),
        output_schema: crate::tools::support::publish::output_schema(publish::data_schema::<
            EnableToolsData,
        >()),
        // Changes what this session lists, nothing outside the server.
        hints: Hints {
            read_only: true,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
    }
}

/// This session's families enabled with `zotero_enable_tools`.
#[derive(Debug, Default)]
pub struct Enabled(Mutex<BTreeSet<ToolSet>>);

impl Enabled {
    pub fn get(&self) -> BTreeSet<ToolSet> {
        zotero_net::lock(&self.0).clone()
    }

    fn add(&self, sets: &BTreeSet<ToolSet>) {
        zotero_net::lock(&self.0).extend(sets.iter().copied());
    }
}

/// What a call of `zotero_enable_tools` did.
#[derive(Debug)]
pub struct Outcome {
    /// The envelope's `data`.
    pub data: Value,
    /// The session's listing changed: send `notifications/tools/list_changed`.
    pub list_changed: bool,
}

/// Runs `zotero_enable_tools` for a session. `session`: the listing outlives this request (a
/// client to notify); without one nothing is kept, and the answer alone says how to call the
/// tools. `tool` gives a tool as this server lists it. All or nothing: one family refused
/// enables none.
pub fn enable(
    offer: &Offer,
    enabled: &Enabled,
    args: Option<Map<String, Value>>,
    session: bool,
    tool: impl Fn(ToolName) -> Tool,
) -> Result<Outcome, ToolError> {
    let params: EnableToolsParams = crate::tools::support::parse::arguments(args)?;
    if params.families.len() > 8 {
        return Err(ToolError::invalid(
            "families",
            "'families' must hold at most 8 names (all: every family)",
        ));
    }
    let asked: BTreeSet<ToolSet> = params.families.iter().flat_map(|f| f.sets()).collect();
    for set in &asked {
        if let Some(refusal) = offer.family_refusal(*set) {
            return Err(refusal);
        }
    }
    let before = offer.listed(&enabled.get());
    let mut now_enabled = enabled.get();
    now_enabled.extend(asked.iter().copied());
    let after = offer.listed(&now_enabled);
    let new: Vec<ToolName> = after
        .iter()
        .copied()
        .filter(|t| !before.contains(t))
        .collect();
    let list_changed = session && !new.is_empty();
    if session {
        enabled.add(&asked);
    }

    let families = ToolSet::ALL
        .into_iter()
        .filter(|set| ToolName::ALL.iter().any(|t| t.set() == *set))
        .map(|set| {
            let unlisted: Vec<&'static str> = ToolName::ALL
                .iter()
                .filter(|t| t.set() == set && !after.contains(t))
                .map(|t| t.name())
                .collect();
            let why = offer.family_refusal(set).map(|e| e.message);
            let state = match (&why, unlisted.is_empty()) {
                (Some(_), _) => "unavailable",
                (None, true) => "listed",
                (None, false) => "available",
            };
            FamilyLine {
                family: set.name(),
                about: set.purpose(),
                state,
                tools: unlisted,
                why,
            }
        })
        .collect();

    let mut budget = HOW_TO_CALL_CHARS;
    let tools = new
        .iter()
        .map(|t| {
            let listed = tool(*t);
            let schema = (*listed.input_schema).clone();
            let size = Value::Object(schema.clone()).to_string().len();
            let input_schema = (size <= budget).then(|| {
                budget -= size;
                schema
            });
            HowToCall {
                name: listed.name.to_string(),
                description: listed
                    .description
                    .map(|d| d.to_string())
                    .unwrap_or_default(),
                input_schema,
            }
        })
        .collect();
    let data = EnableToolsData {
        families,
        enabled: asked.iter().map(|s| s.name()).collect(),
        tools,
        list_changed,
    };
    let data = serde_json::to_value(data).map_err(|e| {
        ToolError::internal(format!("{ENABLE_TOOLS} could not write its answer: {e}"))
    })?;
    Ok(Outcome { data, list_changed })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(vars: &[(&str, &str)]) -> Offer {
        let env = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Offer::new(&Config::from_map(&env).unwrap())
    }

    fn names(tools: &[ToolName]) -> Vec<&'static str> {
        tools.iter().map(|t| t.name()).collect()
    }

    #[test]
    fn by_default_every_tool_is_permitted_and_the_default_surface_listed() {
        let o = offer(&[]);
        assert_eq!(o.permitted(), ToolName::ALL.to_vec());
        assert!(o.discovers());
        let none = BTreeSet::new();
        assert_eq!(o.listed(&none), DEFAULT_TOOLS.to_vec());
        let text = o.instructions();
        for t in DEFAULT_TOOLS {
            assert!(text.contains(t.name()), "{text}");
        }
        assert!(text.contains(ENABLE_TOOLS), "{text}");
        assert!(!text.contains("zotero_update_item"), "{text}");
        assert!(!text.contains("read-only"), "{text}");
        // A family enabled adds its tools, in the table's order.
        let cite = BTreeSet::from([ToolSet::Cite]);
        let listed = o.listed(&cite);
        assert!(listed.contains(&ToolName::Cite) && listed.contains(&ToolName::Export));
        assert_eq!(listed.len(), DEFAULT_TOOLS.len() + 2);
        // ZOTERO_TOOLSETS=all lists every tool from the start, as an unset one did before.
        let o = offer(&[("ZOTERO_TOOLSETS", "all")]);
        assert!(!o.discovers());
        assert_eq!(o.listed(&none), ToolName::ALL.to_vec());
        let text = o.instructions();
        for t in ToolName::ALL {
            assert!(text.contains(t.name()), "{text}");
        }
        assert!(!text.contains(ENABLE_TOOLS), "{text}");
    }

    #[test]
    fn a_family_that_writes_cannot_be_enabled_in_read_only_mode() {
        let o = offer(&[("ZOTERO_READ_ONLY", "1")]);
        for set in [ToolSet::Write, ToolSet::Files, ToolSet::Identify] {
            let e = o.family_refusal(set).unwrap();
            assert_eq!(e.code, ErrorCode::Auth);
            assert!(
                e.message
                    .contains(&format!("'{}' cannot be enabled", set.name())),
                "{}",
                e.message
            );
            assert!(e.message.contains("read-only mode is on"), "{}", e.message);
            assert_eq!(e.details["family"], set.name());
        }
        for set in [ToolSet::Read, ToolSet::Cite, ToolSet::Index] {
            assert!(o.family_refusal(set).is_none(), "{}", set.name());
        }
        // The default surface loses its writes; enabling read lists the other reads.
        let listed = o.listed(&BTreeSet::new());
        assert!(listed.iter().all(|t| !t.writes()));
        assert_eq!(listed.len(), DEFAULT_TOOLS.len() - 4);
    }

    #[test]
    fn read_only_mode_offers_no_tool_that_writes() {
        let o = offer(&[("ZOTERO_READ_ONLY", "1")]);
        assert_eq!(
            names(&o.permitted()),
            [
                "zotero_search_items",
                "zotero_list_collections",
                "zotero_get_item",
                "zotero_get_sort_values",
                "zotero_list_libraries",
                "zotero_list_items",
                "zotero_list_tags",
                "zotero_get_item_fulltext",
                "zotero_get_item_metadata",
                "zotero_cite",
                "zotero_export",
                "zotero_get_item_children",
                "zotero_get_notes",
                "zotero_get_annotations",
                // The index set writes only the local search index.
                "zotero_semantic_search",
                "zotero_get_search_database_status",
                "zotero_update_search_database",
                "zotero_check_manuscript",
                "zotero_check_retractions",
                "zotero_find_related"
            ]
        );
        for t in ToolName::ALL.iter().filter(|t| t.writes()) {
            let e = o.refusal(*t).unwrap();
            assert_eq!(e.code, ErrorCode::Auth);
            assert!(e.message.contains("read-only mode is on"), "{}", e.message);
            assert!(
                e.message.contains("unset ZOTERO_READ_ONLY"),
                "{}",
                e.message
            );
            assert_eq!(e.details["variable"], "ZOTERO_READ_ONLY");
        }
        let text = o.instructions();
        assert!(text.contains("Read-only mode is on"), "{text}");
        assert!(!text.contains("zotero_create_item"), "{text}");
        // Read-only wins over a tool set that asks for writes.
        let o = offer(&[("ZOTERO_READ_ONLY", "true"), ("ZOTERO_TOOLSETS", "write")]);
        assert!(o.permitted().is_empty());
    }

    #[test]
    fn the_local_api_alone_offers_no_tool_that_writes() {
        let o = offer(&[("ZOTERO_LOCAL", "1")]);
        assert!(o.permitted().iter().all(|t| !t.writes()));
        assert!(o.permitted().contains(&ToolName::ListLibraries));
        let e = o.refusal(ToolName::CreateItem).unwrap();
        assert_eq!(e.code, ErrorCode::Auth);
        assert!(e.message.contains("ZOTERO_LOCAL=1"), "{}", e.message);
        assert!(e.message.contains("ZOTERO_API_KEY"), "{}", e.message);
        // With the Web API's credentials as well, everything is offered.
        let o = offer(&[
            ("ZOTERO_LOCAL", "1"),
            ("ZOTERO_API_KEY", "k"),
            ("ZOTERO_USER_ID", "1"),
        ]);
        assert_eq!(o.permitted(), ToolName::ALL.to_vec());
    }

    #[test]
    fn tool_sets_choose_what_is_offered() {
        let o = offer(&[("ZOTERO_TOOLSETS", "read,files")]);
        assert_eq!(
            names(&o.permitted()),
            [
                "zotero_search_items",
                "zotero_list_collections",
                "zotero_get_item",
                "zotero_upload_attachment",
                "zotero_attach_arxiv_pdf",
                "zotero_get_sort_values",
                "zotero_list_libraries",
                "zotero_list_items",
                "zotero_list_tags",
                "zotero_get_item_fulltext",
                "zotero_get_item_metadata",
                "zotero_get_item_children",
                "zotero_get_notes",
                "zotero_get_annotations"
            ]
        );
        let e = o.refusal(ToolName::CreateItem).unwrap();
        assert_eq!(e.code, ErrorCode::Auth);
        assert!(e.message.contains("'write'"), "{}", e.message);
        assert!(
            e.message.contains("ZOTERO_TOOLSETS (read,files)"),
            "{}",
            e.message
        );
        assert_eq!(e.details["tool_set"], "write");
        let text = o.instructions();
        assert!(text.contains("zotero_attach_arxiv_pdf"), "{text}");
        assert!(!text.contains("zotero_add_item_to_collection"), "{text}");
    }

    fn tool(t: ToolName) -> Tool {
        crate::mcp::server::definition_to_mcp(t.definition())
    }

    fn args(v: Value) -> Option<Map<String, Value>> {
        v.as_object().cloned()
    }

    #[test]
    fn enabling_a_family_lists_it_in_the_session_and_says_how_to_call_it() {
        let o = offer(&[]);
        let enabled = Enabled::default();
        // No families: the list of them, nothing changed.
        let out = enable(&o, &enabled, None, true, tool).unwrap();
        assert!(!out.list_changed);
        let families = out.data["families"].as_array().unwrap();
        assert_eq!(families.len(), ToolSet::ALL.len());
        let cite = families.iter().find(|f| f["family"] == "cite").unwrap();
        assert_eq!(cite["state"], "available");
        assert_eq!(
            cite["tools"],
            serde_json::json!(["zotero_cite", "zotero_export"])
        );
        assert!(out.data.get("tools").is_none());

        let out = enable(
            &o,
            &enabled,
            args(serde_json::json!({"families": ["cite"]})),
            true,
            tool,
        )
        .unwrap();
        assert!(out.list_changed);
        assert_eq!(out.data["enabled"], serde_json::json!(["cite"]));
        let tools = out.data["tools"].as_array().unwrap();
        let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        assert_eq!(names, ["zotero_cite", "zotero_export"]);
        for t in tools {
            assert_eq!(t["input_schema"]["type"], "object", "{t}");
            assert!(t["description"].as_str().is_some_and(|d| !d.is_empty()));
        }
        assert_eq!(enabled.get(), BTreeSet::from([ToolSet::Cite]));
        // Again: nothing new, no notification.
        let out = enable(
            &o,
            &enabled,
            args(serde_json::json!({"families": ["cite"]})),
            true,
            tool,
        )
        .unwrap();
        assert!(!out.list_changed);
        assert!(out.data.get("tools").is_none());
        let cite = out.data["families"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["family"] == "cite")
            .cloned()
            .unwrap();
        assert_eq!(cite["state"], "listed");

        // Without a session: the same answer, nothing kept, no notification.
        let alone = Enabled::default();
        let out = enable(
            &o,
            &alone,
            args(serde_json::json!({"families": ["all"]})),
            false,
            tool,
        )
        .unwrap();
        assert!(!out.list_changed);
        assert_eq!(out.data["list_changed"], false);
        assert!(alone.get().is_empty());
        let tools = out.data["tools"].as_array().unwrap();
        assert_eq!(tools.len(), ToolName::ALL.len() - DEFAULT_TOOLS.len());
        // Within the answer's budget; past it, names and descriptions only.
        let schemas: usize = tools
            .iter()
            .filter_map(|t| t.get("input_schema"))
            .map(|s| s.to_string().len())
            .sum();
        assert!(schemas <= HOW_TO_CALL_CHARS, "{schemas}");
    }

    #[test]
    fn refusals_name_the_families_and_enable_nothing() {
        let o = offer(&[]);
        let enabled = Enabled::default();
        let e = enable(
            &o,
            &enabled,
            args(serde_json::json!({"families": ["cite", "writes"]})),
            true,
            tool,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Validation);
        assert_eq!(e.details["field"], "families[1]");
        for known in ["read", "write", "files", "cite", "identify", "index", "all"] {
            assert!(e.message.contains(known), "{}", e.message);
        }
        assert!(enabled.get().is_empty());

        let o = offer(&[("ZOTERO_READ_ONLY", "1")]);
        let e = enable(
            &o,
            &enabled,
            args(serde_json::json!({"families": ["cite", "write"]})),
            true,
            tool,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Auth);
        assert_eq!(e.details["variable"], "ZOTERO_READ_ONLY");
        assert!(enabled.get().is_empty(), "all or nothing");
        let e = enable(
            &o,
            &enabled,
            args(serde_json::json!({"families": ["all"]})),
            true,
            tool,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::Auth);
        // What can be enabled still can; the list says why the others cannot.
        let out = enable(
            &o,
            &enabled,
            args(serde_json::json!({"families": ["read"]})),
            true,
            tool,
        )
        .unwrap();
        let write = out.data["families"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["family"] == "write")
            .cloned()
            .unwrap();
        assert_eq!(write["state"], "unavailable");
        assert!(write["why"].as_str().unwrap().contains("ZOTERO_READ_ONLY"));
    }

    #[test]
    fn the_enable_tool_publishes_like_the_others() {
        let d = definition();
        assert!(d.description.len() <= 400);
        let input = Value::Object(d.input_schema);
        assert_eq!(input["additionalProperties"], false);
        assert_eq!(input["properties"]["families"]["maxItems"], 8);
        assert_eq!(
            input["properties"]["families"]["items"]["enum"],
            serde_json::json!([
                "read", "write", "files", "cite", "identify", "index", "research", "all"
            ])
        );
        assert!(input["properties"]["families"]["description"].is_string());
    }
}
