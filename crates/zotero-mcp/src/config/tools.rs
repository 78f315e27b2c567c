//! Which tools are offered: `ZOTERO_TOOLSETS` and `ZOTERO_READ_ONLY`. The tool sets are
//! named here, below the tools, so that the configuration can name them without importing
//! the tools.

use std::collections::BTreeSet;

use super::parse::{parse_bool, Vars};
use super::ConfigError;

/// The tools listed and callable.
#[derive(Debug, Clone)]
pub struct ToolsConfig {
    /// No tool may change the library: write tools are neither listed nor callable
    /// (`ZOTERO_READ_ONLY=1`).
    pub read_only: bool,
    /// The tool sets callable (`ZOTERO_TOOLSETS`; every set when unset or `all`).
    pub sets: BTreeSet<ToolSet>,
    /// `ZOTERO_TOOLSETS` is set: every tool of its sets is listed from the start. Unset: the
    /// default surface is listed (`mcp::surface`), and the rest is one call away.
    pub sets_up_front: bool,
}

impl ToolsConfig {
    pub(super) fn parse(get: Vars) -> Result<Self, ConfigError> {
        let read_only = parse_bool(get, "ZOTERO_READ_ONLY", false)?;
        let sets_up_front = get("ZOTERO_TOOLSETS").is_some();
        let sets = match get("ZOTERO_TOOLSETS") {
            None => ToolSet::ALL.into_iter().collect(),
            Some(v) => parse_toolsets(&v)?,
        };
        Ok(ToolsConfig {
            read_only,
            sets,
            sets_up_front,
        })
    }
}

/// The groups `ZOTERO_TOOLSETS` chooses from (surface.md). Sets without tools yet are known
/// already, so a configuration written for a later version does not stop this one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ToolSet {
    Read,
    Write,
    /// Uploads: files and PDFs attached to items.
    Files,
    Cite,
    Identify,
    Index,
    /// Beyond the library's own records: checking a manuscript against it.
    Research,
}

impl ToolSet {
    pub const ALL: [ToolSet; 7] = [
        ToolSet::Read,
        ToolSet::Write,
        ToolSet::Files,
        ToolSet::Cite,
        ToolSet::Identify,
        ToolSet::Index,
        ToolSet::Research,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ToolSet::Read => "read",
            ToolSet::Write => "write",
            ToolSet::Files => "files",
            ToolSet::Cite => "cite",
            ToolSet::Identify => "identify",
            ToolSet::Index => "index",
            ToolSet::Research => "research",
        }
    }

    /// What its tools are for, to complete "To …" in the server's instructions.
    pub fn purpose(self) -> &'static str {
        match self {
            ToolSet::Read => "find and read items and collections (search before adding anything)",
            ToolSet::Write => {
                "create and change items, notes, collections and tags (version-checked; dry_run previews)"
            }
            ToolSet::Files => "attach files and arXiv PDFs to items",
            ToolSet::Cite => {
                "format citations and bibliographies and export items (BibTeX, RIS, CSL JSON, …)"
            }
            ToolSet::Identify => "add papers by DOI, arXiv id, ISBN or PMID",
            ToolSet::Index => "search by meaning",
            ToolSet::Research => "check a manuscript's citations and quotations against the library",
        }
    }

    /// A set by its name, in any case.
    pub fn from_name(name: &str) -> Option<ToolSet> {
        Self::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

/// `read,write,files`: names of tool sets, any case, separated by commas; `all`: every set.
fn parse_toolsets(v: &str) -> Result<BTreeSet<ToolSet>, ConfigError> {
    let valid = || {
        ToolSet::ALL
            .iter()
            .map(|s| s.name())
            .chain(["all"])
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut sets = BTreeSet::new();
    for name in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name.eq_ignore_ascii_case("all") {
            sets.extend(ToolSet::ALL);
            continue;
        }
        let set = ToolSet::from_name(name).ok_or_else(|| ConfigError {
            var: "ZOTERO_TOOLSETS",
            value: v.to_string(),
            expected: format!(
                "'{name}' is not a tool set; give a comma-separated list of {} (e.g. read,write)",
                valid()
            ),
        })?;
        sets.insert(set);
    }
    if sets.is_empty() {
        return Err(ConfigError {
            var: "ZOTERO_TOOLSETS",
            value: v.to_string(),
            expected: format!("a comma-separated list of {} (e.g. read,write)", valid()),
        });
    }
    Ok(sets)
}
