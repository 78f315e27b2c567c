//! Parameters of the tools that read what lies under an item (children, notes, annotations):
//! bounded counts, the kinds of children, annotation types and colours.

use std::borrow::Cow;
use std::fmt;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use zotero_api::children::{ANNOTATION_COLORS, ANNOTATION_TYPES};

use super::base::WholeNumber;
use crate::text::quote;

/// A whole number from `MIN` to `MAX`, `DEFAULT` unless given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Count<const MIN: u64, const MAX: u64, const DEFAULT: u64>(u64);

impl<const MIN: u64, const MAX: u64, const DEFAULT: u64> Count<MIN, MAX, DEFAULT> {
    /// The number.
    pub fn get(self) -> u64 {
        self.0
    }

    /// `N`, checked against `MIN..=MAX` when compiled.
    pub const fn of<const N: u64>() -> Self {
        const { assert!(N >= MIN && N <= MAX) };
        Self(N)
    }
}

impl<const MIN: u64, const MAX: u64, const DEFAULT: u64> Default for Count<MIN, MAX, DEFAULT> {
    fn default() -> Self {
        Self(DEFAULT)
    }
}

impl<'de, const MIN: u64, const MAX: u64, const DEFAULT: u64> Deserialize<'de>
    for Count<MIN, MAX, DEFAULT>
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(WholeNumber { min: MIN, max: MAX })
            .map(Self)
    }
}

impl<const MIN: u64, const MAX: u64, const DEFAULT: u64> JsonSchema for Count<MIN, MAX, DEFAULT> {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Owned(format!("Count{MIN}to{MAX}"))
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "integer", "minimum": MIN, "maximum": MAX, "default": DEFAULT })
    }
}

/// Notes per answer: a few, since each may be long.
pub type NoteLimit = Count<1, 25, 5>;
/// Markdown characters of each note in one answer.
pub type NoteChars = Count<200, 100_000, 8_000>;
/// Characters of an annotation's text and of its comment in one answer.
pub type AnnotationChars = Count<50, 10_000, 1_000>;

/// What a child of an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum ChildKind {
    Attachment,
    Note,
    Annotation,
}

impl ChildKind {
    /// The kind of a child of this item type, if it is one.
    pub fn of(item_type: &str) -> Option<ChildKind> {
        match item_type {
            "attachment" => Some(ChildKind::Attachment),
            "note" => Some(ChildKind::Note),
            "annotation" => Some(ChildKind::Annotation),
            _ => None,
        }
    }
}

/// An annotation type as Zotero names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
// A doc on a variant would publish the schema's enum as a oneOf: the values say it.
#[allow(missing_docs)]
pub enum AnnotationType {
    Highlight,
    Underline,
    Note,
    Text,
    Image,
    Ink,
}

impl AnnotationType {
    /// The type as Zotero names it.
    pub fn name(self) -> &'static str {
        match self {
            AnnotationType::Highlight => "highlight",
            AnnotationType::Underline => "underline",
            AnnotationType::Note => "note",
            AnnotationType::Text => "text",
            AnnotationType::Image => "image",
            AnnotationType::Ink => "ink",
        }
    }
}

// The enum and zotero-api's list must agree.
const _: () = assert!(ANNOTATION_TYPES.len() == 6);

/// An annotation colour: `#rrggbb`, or the name Zotero shows for one of its colours (Yellow,
/// Red, Green, Blue, Purple, Magenta, Orange, Gray), in any case. Held as lower-case hex.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct AnnotationColor(String);

impl AnnotationColor {
    /// The colour, or what it must be.
    pub fn parse(s: &str) -> Result<Self, NotAColour> {
        let t = s.trim();
        let is_hex =
            t.len() == 7 && t.starts_with('#') && t.bytes().skip(1).all(|b| b.is_ascii_hexdigit());
        if is_hex {
            return Ok(Self(t.to_ascii_lowercase()));
        }
        let name = if t.eq_ignore_ascii_case("grey") {
            "gray"
        } else {
            t
        };
        ANNOTATION_COLORS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, hex)| Self((*hex).to_string()))
            .ok_or_else(|| NotAColour { got: quote(s) })
    }

    /// The colour as lower-case #rrggbb.
    pub fn hex(&self) -> &str {
        &self.0
    }
}

/// A value that is neither `#rrggbb` nor a colour Zotero names, quoted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be a colour as #rrggbb or one of {names}; got '{got}'", names = colour_names())]
pub struct NotAColour {
    got: String,
}

/// Zotero's colour names, as the message lists them.
fn colour_names() -> String {
    let names: Vec<&str> = ANNOTATION_COLORS.iter().map(|(n, _)| *n).collect();
    names.join(", ")
}

impl fmt::Display for AnnotationColor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for AnnotationColor {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        AnnotationColor::parse(&s).map_err(de::Error::custom)
    }
}

impl JsonSchema for AnnotationColor {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("AnnotationColor")
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "minLength": 3,
            "maxLength": 16,
            "pattern": "^\\s*(#[0-9A-Fa-f]{6}|[A-Za-z]+)\\s*$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn colours_by_hex_or_name() {
        let c = |v: &str| {
            AnnotationColor::parse(v)
                .map(|c| c.hex().to_string())
                .map_err(|e| e.to_string())
        };
        assert_eq!(c("#FFD400").unwrap(), "#ffd400");
        assert_eq!(c("yellow").unwrap(), "#ffd400");
        assert_eq!(c(" Gray ").unwrap(), "#aaaaaa");
        assert_eq!(c("grey").unwrap(), "#aaaaaa");
        assert_eq!(c("#009980").unwrap(), "#009980");
        let e = c("teal").unwrap_err();
        assert!(e.contains("Magenta") && e.contains("'teal'"), "{e}");
        assert!(c("#12345").is_err() && c("#12345g").is_err());
    }

    #[test]
    fn counts_are_bounded_with_a_default() {
        assert_eq!(NoteLimit::default().get(), 5);
        assert!(serde_json::from_value::<NoteLimit>(json!(26)).is_err());
        assert!(serde_json::from_value::<NoteLimit>(json!(0)).is_err());
        assert_eq!(
            serde_json::from_value::<NoteChars>(json!(200))
                .unwrap()
                .get(),
            200
        );
        assert!(serde_json::from_value::<ChildKind>(json!("collection")).is_err());
        assert_eq!(
            serde_json::from_value::<AnnotationType>(json!("ink")).unwrap(),
            AnnotationType::Ink
        );
    }
}
