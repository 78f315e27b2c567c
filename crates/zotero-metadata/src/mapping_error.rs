//! Why an answer of a metadata service could not be turned into a Zotero item.

/// Why an answer could not be mapped. The services' answers are untrusted input: every shape
/// problem is one of these, never a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    /// The embedded schema (`fixtures/schema/*.json`) did not parse: a build problem.
    #[error("the embedded Zotero schema is unreadable: {0}")]
    Schema(SchemaError),
    /// The answer does not have the shape the service documents.
    #[error("unexpected {source_name} answer: {detail}")]
    Shape {
        /// The service ("CSL-JSON", "Crossref", "DataCite", "arXiv", "Open Library", "PubMed").
        source_name: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// The service answered with an error of its own (arXiv's error entries).
    #[error("{source_name} says: {message}")]
    Service {
        /// The service.
        source_name: &'static str,
        /// Its message.
        message: String,
    },
    /// The service has no record for the identifier (an empty arXiv feed, an Open Library
    /// answer without the ISBN, an esummary error for the PMID).
    #[error("{source_name} has no record for {identifier}")]
    NotFound {
        /// The service.
        source_name: &'static str,
        /// What was asked for.
        identifier: String,
    },
    /// A title longer than Zotero keeps (see `zotero_item::limits`).
    #[error("the {field} is {bytes} bytes long, over Zotero's limit of {max} bytes for a field: not added")]
    TooLong {
        field: String,
        bytes: usize,
        max: usize,
    },
    /// An XML answer is not well-formed.
    #[error("malformed XML: {0}")]
    Xml(String),
}

/// An embedded schema file that did not parse, and the parser's reason: the file shipped
/// with the build is wrong, so the fix is to restore it from zotero-schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {reason}")]
pub struct SchemaError {
    /// The file, from the repository's root (`fixtures/schema/templates.json`).
    pub file: &'static str,
    /// What the JSON parser found wrong.
    pub reason: String,
}

impl MappingError {
    pub(crate) fn shape(source_name: &'static str, detail: impl Into<String>) -> Self {
        MappingError::Shape {
            source_name,
            detail: detail.into(),
        }
    }
}
