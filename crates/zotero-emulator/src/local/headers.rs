//! The headers the desktop's HTTP server and its API endpoints add to every answer: a leaf
//! that the dispatch (`respond.rs`) and the Zotero 10 wire server both use.

/// Headers the desktop's HTTP server puts on every answer (`_generateResponse`).
pub(crate) const SERVER_HEADERS: &[(&str, &str)] = &[
    ("X-Zotero-Version", "9.0.6"),
    ("X-Zotero-Connector-API-Version", "3"),
];

/// Headers every local API endpoint adds (`LocalAPIEndpoint.makeResponse`); the schema
/// version is that of `fixtures/schema/templates.json`.
pub(crate) const API_HEADERS: &[(&str, &str)] =
    &[("Zotero-API-Version", "3"), ("Zotero-Schema-Version", "41")];
