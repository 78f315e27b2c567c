//! Arguments of citations and exports: a CSL style id, a locale, an export format. A style
//! is checked for its shape before anything is sent, so a value that cannot be a style id
//! costs no request; one that has the shape but that Zotero does not know is refused by
//! Zotero (and answered as a validation error naming the field).

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer};
use serde::Deserialize;

use super::base::WholeNumber;
use crate::text::quote;

/// Where the ids of Zotero's citation styles are listed.
pub const STYLES_URL: &str = "https://www.zotero.org/styles";

/// Common style ids of the repository, as `zotero://styles` lists them (any other id of
/// the repository works as well).
pub const COMMON_STYLES: &[&str] = &[
    "apa",
    "chicago-author-date",
    "chicago-note-bibliography",
    "modern-language-association",
    "harvard-cite-them-right",
    "ieee",
    "nature",
    "vancouver",
    "american-medical-association",
    "american-chemical-society",
    "american-political-science-association",
    "american-sociological-association",
    "elsevier-harvard",
    "springer-basic-author-date",
    "cell",
    "science",
];

/// The longest style id accepted (the repository's longest are under 100 characters).
const STYLE_MAX: usize = 128;

/// A CSL style id as the Zotero style repository names it (`apa`,
/// `chicago-note-bibliography`): lower-case letters, digits and single hyphens. Its URL in
/// the repository (`https://www.zotero.org/styles/apa`) is taken as its id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StyleId(String);

impl StyleId {
    /// The style id.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The style id, or what it must be.
    pub fn parse(raw: &str) -> Result<StyleId, NotAStyle> {
        let id = [
            "https://www.zotero.org/styles/",
            "http://www.zotero.org/styles/",
        ]
        .iter()
        .find_map(|p| raw.strip_prefix(p))
        .unwrap_or(raw);
        let shaped = !id.is_empty()
            && id.len() <= STYLE_MAX
            && id.split('-').all(|part| {
                !part.is_empty()
                    && part
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
            });
        if shaped {
            Ok(StyleId(id.to_string()))
        } else {
            Err(NotAStyle { got: quote(raw) })
        }
    }
}

/// A value that is not a style id: what an id looks like, and the value quoted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "must be the id of a citation style in the Zotero style repository ({url}): lower-case letters, digits and hyphens, e.g. apa, chicago-note-bibliography, ieee, nature; got '{got}'",
    url = STYLES_URL
)]
pub struct NotAStyle {
    got: String,
}

impl Default for StyleId {
    fn default() -> Self {
        StyleId("apa".to_string())
    }
}

impl<'de> Deserialize<'de> for StyleId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        StyleId::parse(&s).map_err(de::Error::custom)
    }
}

impl JsonSchema for StyleId {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("StyleId")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "minLength": 1,
            "maxLength": 160,
            "pattern": "^(https?://www\\.zotero\\.org/styles/)?[a-z0-9]+(-[a-z0-9]+)*$",
            "default": "apa"
        })
    }
}

/// A locale with its region as CSL names them (`en-US`, `en-GB`, `de-DE`, `pt-BR`). The web
/// API passes on only this form (a bare language reaches its citation server mangled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locale(String);

impl Locale {
    /// The locale, e.g. en-US.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for Locale {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let b = s.as_bytes();
        let ok = b.len() == 5
            && b.get(..2)
                .is_some_and(|l| l.iter().all(u8::is_ascii_lowercase))
            && b.get(2) == Some(&b'-')
            && b.get(3..)
                .is_some_and(|r| r.iter().all(u8::is_ascii_uppercase));
        if ok {
            Ok(Locale(s))
        } else {
            Err(de::Error::custom(format!(
                "must be a language and region like en-US, en-GB, de-DE, fr-FR or ja-JP; got '{}'",
                quote(&s)
            )))
        }
    }
}

impl JsonSchema for Locale {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Locale")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "maxLength": 5, "pattern": "^[a-z]{2}-[A-Z]{2}$" })
    }
}

/// Items in one page of an export: 1 to 50, 25 unless given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExportLimit(u64);

impl ExportLimit {
    /// The most items one export may hold.
    pub const MAX: u64 = 50;
    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl Default for ExportLimit {
    fn default() -> Self {
        Self(25)
    }
}

impl<'de> Deserialize<'de> for ExportLimit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WholeNumber {
            min: 1,
            max: ExportLimit::MAX,
        })
        .map(Self)
    }
}

impl JsonSchema for ExportLimit {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("ExportLimit")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": 1, "maximum": 50, "default": 25 })
    }
}

/// A format Zotero exports, by its API name: zotero-api's own type (its `schema` feature
/// derives the schema), so the tool takes exactly what the client sends.
pub use zotero_api::export::ExportFormat as ExportFormatParam;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_styles_are_style_ids() {
        for id in COMMON_STYLES {
            assert_eq!(StyleId::parse(id).unwrap().as_str(), *id);
        }
    }

    #[test]
    fn style_ids_are_checked_for_their_shape() {
        for ok in [
            "apa",
            "chicago-note-bibliography",
            "iso690-author-date-cs",
            "nature",
        ] {
            assert_eq!(StyleId::parse(ok).unwrap().as_str(), ok);
        }
        assert_eq!(
            StyleId::parse("https://www.zotero.org/styles/ieee")
                .unwrap()
                .as_str(),
            "ieee"
        );
        for bad in [
            "",
            "APA",
            "apa ",
            "apa--x",
            "-apa",
            "../apa",
            "a/b",
            "https://evil.example/x",
        ] {
            let e = StyleId::parse(bad).unwrap_err();
            assert!(e.to_string().contains(STYLES_URL), "{e}");
        }
        assert!(StyleId::parse(&"a".repeat(200)).is_err());
        let every: Vec<&str> = ExportFormatParam::ALL
            .iter()
            .map(|f| f.api_name())
            .collect();
        for name in every {
            let p: ExportFormatParam = serde_json::from_value(serde_json::json!(name)).unwrap();
            assert_eq!(p.api_name(), name);
        }
    }
}
