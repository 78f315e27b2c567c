//! What the two note-writing tools share: the content's format, the content made into the
//! note HTML Zotero's editor keeps (`crate::notes::html`, off the runtime's threads), and long
//! HTML cut for an answer so that a 500,000-character note never fills one.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::error::ToolError;
use crate::notes::html::{note_html, NoteFormat, NoteRefused, SanitizedNote};
use crate::notes::markdown::cut_chars;

/// What `content` is written in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContentFormat {
    #[default]
    Markdown,
    Html,
}

impl From<ContentFormat> for NoteFormat {
    fn from(f: ContentFormat) -> Self {
        match f {
            ContentFormat::Markdown => NoteFormat::Markdown,
            ContentFormat::Html => NoteFormat::Html,
        }
    }
}

/// The content as note HTML, or the refusal naming `content`. Nothing has been sent yet when
/// this refuses.
pub async fn sanitize(content: String, format: ContentFormat) -> Result<SanitizedNote, ToolError> {
    let note = tokio::task::spawn_blocking(move || note_html(&content, format.into()))
        .await
        .map_err(|e| ToolError::internal(format!("converting the note failed: {e}")))?;
    note.map_err(|e| {
        let what = match e {
            NoteRefused::TooDeep { .. } => "nest its elements less deeply",
            NoteRefused::TooLong { .. } | NoteRefused::TooLongAsHtml { .. } => {
                "shorten it, or split it into several notes"
            }
        };
        ToolError::invalid(
            "content",
            format!("'content' cannot be written: {e}; {what}"),
        )
    })
}

/// The most characters of a note's HTML in an answer's before → after, or of a dry run's
/// HTML.
pub const ANSWER_HTML_CHARS: usize = 2_000;

/// `text` cut to `max` characters, with a marker saying how long it was.
pub fn cut(text: &str, max: usize) -> String {
    match cut_chars(text, max) {
        (head, true) => format!("{head}… [cut: {} characters in all]", text.chars().count()),
        (whole, false) => whole.to_string(),
    }
}

/// A string value cut as [`cut`] does; other values as they are.
pub fn cut_value(v: &Value, max: usize) -> Value {
    match v {
        Value::String(s) => Value::from(cut(s, max)),
        other => other.clone(),
    }
}

/// How many characters before where two values part an excerpt still shows, so that it
/// reads in context.
const CONTEXT_CHARS: usize = 100;

/// How many characters an excerpt of a conflicting value shows: with its markers, under the
/// 1,000 characters an error's details keep of a string.
pub const EXCERPT_CHARS: usize = 800;

/// Each of `values` (named: the note before, yours, in Zotero) as an excerpt that starts
/// shortly before where it parts from the value it shares most with: long notes differ
/// somewhere in the middle, and what they share is said, not repeated. The wrapper Zotero's
/// note editor puts around a note (`<div data-schema-version=…>`) is not compared, so a note
/// written with one and a note written without still line up. Non-strings are left as they
/// are.
pub fn excerpts(values: &[(&str, &Value)]) -> Vec<Value> {
    let bodies: Vec<Option<(usize, &str)>> = values
        .iter()
        .map(|(_, v)| v.as_str().map(unwrapped))
        .collect();
    values
        .iter()
        .enumerate()
        .map(|(i, (_, v))| {
            let (Some(s), Some(Some((wrapper, body)))) = (v.as_str(), bodies.get(i)) else {
                return (*v).clone();
            };
            let closest = bodies
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(j, other)| {
                    other.map(|(_, o)| (common_prefix_chars(body, o), values.get(j)))
                })
                // The first of equals.
                .rev()
                .max_by_key(|(shared, _)| *shared);
            let (shared, other) = closest.unwrap_or((0, None));
            let skip = shared.saturating_sub(CONTEXT_CHARS);
            let from = if skip > 0 { wrapper + skip } else { 0 };
            let rest = match s.char_indices().nth(from) {
                Some((at, _)) => s.get(at..).unwrap_or_default(),
                None => "",
            };
            let excerpt = cut(rest, EXCERPT_CHARS);
            match other {
                Some((name, _)) if skip > 0 => {
                    Value::from(format!("[… {from} characters as in {name} …]{excerpt}"))
                }
                _ => Value::from(excerpt),
            }
        })
        .collect()
}

/// A note without the note editor's wrapper: (characters of the opening tag, the rest).
fn unwrapped(s: &str) -> (usize, &str) {
    if s.starts_with("<div data-schema-version=") {
        if let Some(end) = s.find('>') {
            let body = s.get(end + 1..).unwrap_or_default();
            return (s.chars().count() - body.chars().count(), body);
        }
    }
    (0, s)
}

fn common_prefix_chars(a: &str, b: &str) -> usize {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cut_says_how_long_it_was() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcdé", 3), "abc… [cut: 5 characters in all]");
    }

    #[test]
    fn excerpts_start_near_where_each_parts_from_its_closest() {
        let same = "x".repeat(5_000);
        let a = json!(format!("<p>{same}AAA</p>"));
        let b = json!(format!(
            "<div data-schema-version=\"9\"><p>{same}BBB</p></div>"
        ));
        let c = json!(format!("<p>{same}CCC{}</p>", "y".repeat(5_000)));
        let e = excerpts(&[("before", &a), ("yours", &b), ("in_zotero", &c)]);
        let first = e[0].as_str().unwrap();
        assert!(
            first.starts_with("[… 4903 characters as in yours …]"),
            "{first}"
        );
        assert!(first.ends_with("AAA</p>"), "{first}");
        let second = e[1].as_str().unwrap();
        assert!(
            second.starts_with("[… 4932 characters as in before …]"),
            "{second}"
        );
        assert!(second.ends_with("BBB</p></div>"), "{second}");
        let third = e[2].as_str().unwrap();
        assert!(third.contains("CCC") && third.ends_with("characters in all]"));
        assert!(third.chars().count() < 1_000);
        // Values that part early stay whole, or are cut.
        assert_eq!(
            excerpts(&[("a", &json!("a")), ("b", &json!("b")), ("n", &json!(null))]),
            vec![json!("a"), json!("b"), json!(null)]
        );
    }
}
