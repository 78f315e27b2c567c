//! Citations, bibliographies and exports, rendered by Zotero itself (its citeproc-js and its
//! translators, on the web API or in the desktop app), so they match what the user sees in
//! Zotero: `format=bib`, `include=citation`, `style`, `locale`, `format=<export>`.
//!
//! Exports are paged so that one page stays under a size the caller chooses: a page whose
//! export is larger is asked for again with half as many items (an export cannot be cut
//! between records without knowing the format), and a single item larger than that is cut.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::{ApiRequest, Consistency};
use crate::library::ObjectKey;
use crate::response::{encode_query, expect, parse_json, unexpected, ApiResponse};

/// A format Zotero exports, by its API name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    Bibtex,
    Biblatex,
    Bookmarks,
    Coins,
    Csljson,
    Csv,
    EndnoteXml,
    Evernote,
    Mods,
    RdfBibliontology,
    RdfDc,
    RdfZotero,
    Refer,
    RefworksTagged,
    Ris,
    Tei,
    Wikipedia,
}

impl ExportFormat {
    pub const ALL: [ExportFormat; 17] = [
        ExportFormat::Bibtex,
        ExportFormat::Biblatex,
        ExportFormat::Bookmarks,
        ExportFormat::Coins,
        ExportFormat::Csljson,
        ExportFormat::Csv,
        ExportFormat::EndnoteXml,
        ExportFormat::Evernote,
        ExportFormat::Mods,
        ExportFormat::RdfBibliontology,
        ExportFormat::RdfDc,
        ExportFormat::RdfZotero,
        ExportFormat::Refer,
        ExportFormat::RefworksTagged,
        ExportFormat::Ris,
        ExportFormat::Tei,
        ExportFormat::Wikipedia,
    ];

    /// The value of `format=`.
    pub fn api_name(self) -> &'static str {
        match self {
            ExportFormat::Bibtex => "bibtex",
            ExportFormat::Biblatex => "biblatex",
            ExportFormat::Bookmarks => "bookmarks",
            ExportFormat::Coins => "coins",
            ExportFormat::Csljson => "csljson",
            ExportFormat::Csv => "csv",
            ExportFormat::EndnoteXml => "endnote_xml",
            ExportFormat::Evernote => "evernote",
            ExportFormat::Mods => "mods",
            ExportFormat::RdfBibliontology => "rdf_bibliontology",
            ExportFormat::RdfDc => "rdf_dc",
            ExportFormat::RdfZotero => "rdf_zotero",
            ExportFormat::Refer => "refer",
            ExportFormat::RefworksTagged => "refworks_tagged",
            ExportFormat::Ris => "ris",
            ExportFormat::Tei => "tei",
            ExportFormat::Wikipedia => "wikipedia",
        }
    }

    pub fn from_name(name: &str) -> Option<ExportFormat> {
        Self::ALL.into_iter().find(|f| f.api_name() == name)
    }

    /// Exported by the web API only: the desktop's local API has no EndNote XML, Evernote or
    /// RefWorks Tagged export (`exportFormats` in `server_localAPI.js`).
    pub fn web_only(self) -> bool {
        matches!(
            self,
            ExportFormat::EndnoteXml | ExportFormat::Evernote | ExportFormat::RefworksTagged
        )
    }

    /// The Content-Type the web API gives this export (the desktop answers `text/plain`).
    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Bibtex | ExportFormat::Biblatex => "application/x-bibtex",
            ExportFormat::Bookmarks | ExportFormat::Coins => "text/html",
            ExportFormat::Csljson => "application/vnd.citationstyles.csl+json",
            ExportFormat::Csv => "text/csv",
            ExportFormat::Mods => "application/mods+xml",
            ExportFormat::RdfBibliontology | ExportFormat::RdfDc | ExportFormat::RdfZotero => {
                "application/rdf+xml"
            }
            ExportFormat::Refer | ExportFormat::Ris => "application/x-research-info-systems",
            ExportFormat::Tei | ExportFormat::EndnoteXml | ExportFormat::Evernote => "text/xml",
            ExportFormat::RefworksTagged => "text/plain",
            ExportFormat::Wikipedia => "text/x-wiki",
        }
    }
}

/// How a citation is asked for: a CSL style id (checked by the caller) and a locale.
#[derive(Debug, Clone, PartialEq)]
pub struct CiteOptions {
    pub style: String,
    pub locale: Option<String>,
}

impl CiteOptions {
    fn query(&self) -> Vec<(&str, &str)> {
        let mut q = vec![("style", self.style.as_str())];
        if let Some(l) = &self.locale {
            q.push(("locale", l.as_str()));
        }
        q
    }
}

/// A bibliography as Zotero rendered it (HTML).
#[derive(Debug, Clone, PartialEq)]
pub struct Bibliography {
    pub html: String,
    /// Entries in it.
    pub entries: usize,
    /// Keys asked for that are not in the library.
    pub missing_keys: Vec<String>,
}

/// One item's citation as Zotero rendered it (HTML).
#[derive(Debug, Clone, PartialEq)]
pub struct Citation {
    pub item_key: String,
    pub html: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Citations {
    /// In the order the keys were given.
    pub citations: Vec<Citation>,
    /// Keys Zotero gave no citation: not in the library, or not a regular item.
    pub missing_keys: Vec<String>,
}

/// One page of an export.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPage {
    pub text: String,
    /// Items this page covers (notes and attachments among them export as nothing).
    pub items: u64,
    /// Items the export covers in all.
    pub total: u64,
    pub next_start: Option<u64>,
    /// Set when a single item's export was larger than the page size and was cut.
    pub truncated: bool,
    /// Keys asked for that are not in the library.
    pub missing_keys: Vec<String>,
}

/// Zotero's answer to a style it does not have (web: `Invalid style`, the desktop:
/// `Invalid style: ID (…)`).
fn is_style_rejection(resp: &ApiResponse) -> bool {
    resp.status == 400 && {
        let body = String::from_utf8_lossy(&resp.body);
        body.contains("Invalid style") || body.contains("Style not found")
    }
}

fn text_of(resp: &ApiResponse) -> Result<String, ZoteroError> {
    String::from_utf8(resp.body.to_vec()).map_err(|e| ZoteroError::BadResponse {
        reason: e.to_string(),
        status: resp.status,
    })
}

/// CSL JSON as one array: the web API wraps it (`{"items": [...]}`), the desktop's
/// translator does not.
fn csl_array(resp: &ApiResponse) -> Result<String, ZoteroError> {
    let v: Value = parse_json(resp)?;
    let items = match v {
        Value::Object(mut m) => m.remove("items").unwrap_or(Value::Array(Vec::new())),
        other => other,
    };
    serde_json::to_string_pretty(&items).map_err(|e| ZoteroError::BadResponse {
        reason: e.to_string(),
        status: resp.status,
    })
}

/// `text` cut to at most `max` bytes on a character boundary.
fn cut(mut text: String, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text, false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    (text, true)
}

fn joined(keys: &[ObjectKey]) -> String {
    keys.iter()
        .map(ObjectKey::as_str)
        .collect::<Vec<_>>()
        .join(",")
}

impl Library<'_> {
    fn style_error(resp: &ApiResponse, opts: &CiteOptions) -> ZoteroError {
        ZoteroError::UnknownStyle {
            style: opts.style.clone(),
            answer: resp.answer(),
        }
    }

    /// The bibliography of `keys` in a style (`format=bib`). With at most 150 keys Zotero's
    /// limit on bibliographies cannot be reached.
    pub async fn bibliography(
        &self,
        keys: &[ObjectKey],
        opts: &CiteOptions,
        cancel: &CancellationToken,
    ) -> Result<Bibliography, ZoteroError> {
        let item_key = joined(keys);
        let mut q = vec![("itemKey", item_key.as_str()), ("format", "bib")];
        q.extend(opts.query());
        let resp = self
            .send(
                &ApiRequest::get(format!("/items?{}", encode_query(&q))),
                cancel,
            )
            .await?;
        if is_style_rejection(&resp) {
            return Err(Self::style_error(&resp, opts));
        }
        expect(&resp, 200, "make a bibliography")?;
        let html = text_of(&resp)?;
        let entries = html.matches("class=\"csl-entry\"").count();
        let missing_keys = if entries < keys.len() {
            self.missing(keys, cancel).await?
        } else {
            Vec::new()
        };
        Ok(Bibliography {
            html,
            entries,
            missing_keys,
        })
    }

    /// A citation of each of `keys` in a style (`include=citation`).
    pub async fn citations(
        &self,
        keys: &[ObjectKey],
        opts: &CiteOptions,
        cancel: &CancellationToken,
    ) -> Result<Citations, ZoteroError> {
        let item_key = joined(keys);
        let mut q = vec![("itemKey", item_key.as_str()), ("include", "citation")];
        q.extend(opts.query());
        let resp = self
            .send(
                &ApiRequest::get(format!("/items?{}", encode_query(&q))),
                cancel,
            )
            .await?;
        if is_style_rejection(&resp) {
            return Err(Self::style_error(&resp, opts));
        }
        expect(&resp, 200, "make citations")?;
        let objects: Vec<Value> = parse_json(&resp)?;
        let found = |key: &str| {
            objects
                .iter()
                .find(|o| o.get("key").and_then(Value::as_str) == Some(key))
                .and_then(|o| o.get("citation"))
                .and_then(Value::as_str)
                .filter(|c| !c.trim().is_empty())
        };
        let mut out = Citations {
            citations: Vec::new(),
            missing_keys: Vec::new(),
        };
        for key in keys {
            match found(key.as_str()) {
                Some(html) => out.citations.push(Citation {
                    item_key: key.to_string(),
                    html: html.to_string(),
                }),
                None => out.missing_keys.push(key.to_string()),
            }
        }
        Ok(out)
    }

    /// Which of `keys` the library does not have (`format=keys`).
    async fn missing(
        &self,
        keys: &[ObjectKey],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, ZoteroError> {
        let item_key = joined(keys);
        let q = [("itemKey", item_key.as_str()), ("format", "keys")];
        let resp = self
            .send(
                &ApiRequest::get(format!("/items?{}", encode_query(&q))),
                cancel,
            )
            .await?;
        expect(&resp, 200, "look up item keys")?;
        let body = text_of(&resp)?;
        let present: Vec<&str> = body.lines().map(str::trim).collect();
        Ok(keys
            .iter()
            .filter(|k| !present.contains(&k.as_str()))
            .map(ToString::to_string)
            .collect())
    }

    async fn export_request(
        &self,
        path: String,
        format: ExportFormat,
        cancel: &CancellationToken,
    ) -> Result<(String, u64), ZoteroError> {
        let mut req = ApiRequest::get(path);
        if format.web_only() {
            // The desktop does not have this export: the web API answers it when it can.
            req.consistency = Consistency::Current;
        }
        let resp = self.send(&req, cancel).await?;
        let what = format!("export as {}", format.api_name());
        if resp.status == 404 {
            return Err(unexpected(&resp, &what));
        }
        if resp.status == 400 && String::from_utf8_lossy(&resp.body).contains("Invalid 'format'") {
            return Err(unexpected(
                &resp,
                &format!(
                    "{what}: the desktop's local API does not export {} (the web API does: set ZOTERO_API_KEY and ZOTERO_USER_ID)",
                    format.api_name()
                ),
            ));
        }
        expect(&resp, 200, &what)?;
        let total = resp
            .header("total-results")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        let text = if format == ExportFormat::Csljson && !resp.body.is_empty() {
            csl_array(&resp)?
        } else {
            text_of(&resp)?
        };
        Ok((text, total))
    }

    /// The export of `keys[start..start + limit]` (fewer when that would be larger than
    /// `max_bytes`).
    pub async fn export_items(
        &self,
        keys: &[ObjectKey],
        format: ExportFormat,
        (limit, start): (u64, u64),
        max_bytes: usize,
        cancel: &CancellationToken,
    ) -> Result<ExportPage, ZoteroError> {
        let total = keys.len() as u64;
        let rest = keys
            .get(usize::try_from(start).unwrap_or(usize::MAX)..)
            .unwrap_or(&[]);
        let mut take = limit.min(rest.len() as u64).max(1);
        loop {
            let slice = rest.get(..take as usize).unwrap_or(rest);
            if slice.is_empty() {
                return Ok(ExportPage {
                    text: String::new(),
                    items: 0,
                    total,
                    next_start: None,
                    truncated: false,
                    missing_keys: Vec::new(),
                });
            }
            let item_key = joined(slice);
            let q = [
                ("itemKey", item_key.as_str()),
                ("format", format.api_name()),
            ];
            let path = format!("/items?{}", encode_query(&q));
            let (text, found) = self.export_request(path, format, cancel).await?;
            if text.len() > max_bytes && take > 1 {
                take /= 2;
                continue;
            }
            let missing_keys = if found < slice.len() as u64 {
                self.missing(slice, cancel).await?
            } else {
                Vec::new()
            };
            let (text, truncated) = cut(text, max_bytes);
            let next = start + take;
            return Ok(ExportPage {
                text,
                items: take,
                total,
                next_start: (next < total).then_some(next),
                truncated,
                missing_keys,
            });
        }
    }

    /// One page of the export of a collection's top-level items, oldest first (so that items
    /// added meanwhile do not shift the pages), of at most `limit` items and `max_bytes`.
    pub async fn export_collection(
        &self,
        collection: &ObjectKey,
        format: ExportFormat,
        (limit, start): (u64, u64),
        max_bytes: usize,
        cancel: &CancellationToken,
    ) -> Result<ExportPage, ZoteroError> {
        let mut take = limit.max(1);
        loop {
            let (l, s) = (take.to_string(), start.to_string());
            let q = [
                ("format", format.api_name()),
                ("sort", "dateAdded"),
                ("direction", "asc"),
                ("limit", l.as_str()),
                ("start", s.as_str()),
            ];
            let path = format!("/collections/{collection}/items/top?{}", encode_query(&q));
            let (text, total) = match self.export_request(path, format, cancel).await {
                Err(ZoteroError::Status { answer, .. }) if answer.status == 404 => {
                    return Err(ZoteroError::NotFound {
                        message: format!("no collection with key {collection} in this library"),
                    })
                }
                other => other?,
            };
            let covered = take.min(total.saturating_sub(start));
            if text.len() > max_bytes && covered > 1 {
                take = covered / 2;
                continue;
            }
            let (text, truncated) = cut(text, max_bytes);
            let next = start + covered;
            return Ok(ExportPage {
                text,
                items: covered,
                total,
                next_start: (next < total).then_some(next),
                truncated,
                missing_keys: Vec::new(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_round_trip_and_cuts_keep_characters_whole() {
        for f in ExportFormat::ALL {
            assert_eq!(ExportFormat::from_name(f.api_name()), Some(f));
        }
        assert_eq!(ExportFormat::from_name("pdf"), None);
        let (t, cut_) = cut("ééé".to_string(), 3);
        assert_eq!((t.as_str(), cut_), ("é", true));
        assert_eq!(cut("ab".into(), 2), ("ab".into(), false));
    }

    #[test]
    fn a_format_is_taken_by_its_api_name() {
        // Tools take the format as Zotero names it: the serde name is the API name.
        for f in ExportFormat::ALL {
            let named: ExportFormat =
                serde_json::from_value(serde_json::json!(f.api_name())).unwrap();
            assert_eq!(named, f);
        }
        assert!(serde_json::from_value::<ExportFormat>(serde_json::json!("pdf")).is_err());
    }
}
