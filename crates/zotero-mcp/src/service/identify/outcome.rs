//! What became of each identifier and of its PDF: the outcome `zotero_add_by_identifier` and
//! `zotero-mcp add` report.

/// What happened to one identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddStatus {
    Created,
    /// The library has the work already (`item_key`); nothing created.
    AlreadyInLibrary,
    /// Another identifier of this call is the same work (its item is `item_key`).
    SameAsEarlier,
    /// Dry run: would be created.
    WouldCreate,
    /// No service knows it.
    NotFound,
    Failed,
    /// The call was cancelled before its turn.
    NotAttempted,
}

/// What happened to the PDF of one identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PdfStatus {
    Attached,
    AlreadyAttached,
    /// Unpaywall knows no open-access copy (or the work has no DOI to ask about).
    NoneOpenAccess,
    /// Not looked for, and why (`attach_pdf: false`, no contact address for Unpaywall, dry run).
    NotSearched,
    Failed,
}

#[derive(Debug, Clone)]
pub struct PdfOutcome {
    pub status: PdfStatus,
    pub attachment_key: Option<String>,
    pub source: Option<String>,
    /// Why it failed, or why it was not looked for.
    pub reason: Option<String>,
}

#[derive(Debug, Clone)]
pub struct AddOutcome {
    pub input: String,
    pub kind: Option<&'static str>,
    pub status: AddStatus,
    pub item_key: Option<String>,
    pub title: Option<String>,
    pub item_type: Option<String>,
    pub pdf: Option<PdfOutcome>,
    pub error: Option<String>,
    /// What was cut to fit Zotero's limits (field names and sizes, no values).
    pub cut: Vec<String>,
}

impl AddOutcome {
    pub(super) fn new(input: &str, kind: Option<&'static str>, status: AddStatus) -> Self {
        Self {
            input: input.to_string(),
            kind,
            status,
            item_key: None,
            title: None,
            item_type: None,
            pdf: None,
            error: None,
            cut: Vec::new(),
        }
    }

    pub(super) fn failed(input: &str, kind: Option<&'static str>, error: String) -> Self {
        let mut o = Self::new(input, kind, AddStatus::Failed);
        o.error = Some(error);
        o
    }
}
