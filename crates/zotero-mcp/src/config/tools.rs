//! The tool sets `ZOTERO_TOOLSETS` chooses from. Here, below the tools, so that the
//! configuration can name them without importing the tools.

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
}

impl ToolSet {
    pub const ALL: [ToolSet; 6] = [
        ToolSet::Read,
        ToolSet::Write,
        ToolSet::Files,
        ToolSet::Cite,
        ToolSet::Identify,
        ToolSet::Index,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ToolSet::Read => "read",
            ToolSet::Write => "write",
            ToolSet::Files => "files",
            ToolSet::Cite => "cite",
            ToolSet::Identify => "identify",
            ToolSet::Index => "index",
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
        }
    }

    /// A set by its name, in any case.
    pub fn from_name(name: &str) -> Option<ToolSet> {
        Self::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }
}
