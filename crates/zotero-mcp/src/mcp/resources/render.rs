//! A read's text from a tool's typed answer: JSON with how to read on, or Markdown for the
//! full text, the notes and the annotations, bounded as a whole.

use serde::Serialize;
use serde_json::Value;

use crate::error::ToolError;
use crate::notes::markdown::{close_open_fence, escape_lines, escape_text, link_to};
use crate::tools::files::get_item_fulltext::GetItemFulltextData;
use crate::tools::notes::get_annotations::GetAnnotationsData;
use crate::tools::notes::get_notes::GetNotesData;

/// The characters of Markdown the notes of a read may take: a read, like a tool's answer,
/// stays within the budget of 20,000 characters.
pub const NOTES_CHARS: usize = 18_000;
/// The characters of Markdown the annotations of a read may take.
pub const ANNOTATIONS_CHARS: usize = 18_000;

/// `v` as indented JSON, or compact when indenting would take it past the budget.
fn to_json(v: &Value) -> String {
    let pretty = serde_json::to_string_pretty(v).unwrap_or_default();
    if pretty.chars().count() <= crate::budget::ANSWER_CHARS {
        pretty
    } else {
        serde_json::to_string(v).unwrap_or_default()
    }
}

/// A tool's answer as pretty JSON, as the tool's `data` (keys in the order a call's answer
/// has them), with a `read_on` when it has one.
pub(super) fn json_text<T: Serialize>(
    data: &T,
    read_on: Option<String>,
) -> Result<String, ToolError> {
    let mut value = serde_json::to_value(data)
        .map_err(|e| ToolError::internal(format!("a resource could not write its answer: {e}")))?;
    if let (Some(read_on), Value::Object(m)) = (read_on, &mut value) {
        m.insert("read_on".into(), Value::from(read_on));
    }
    Ok(to_json(&value))
}

/// The full text's first page, and how to read on when there is more.
pub(super) fn fulltext_text(data: &GetItemFulltextData, key: &str, lib: &str) -> String {
    let mut text = data.text.clone();
    if let Some(next) = data.next_offset {
        let total = data.total_chars;
        text.push_str(&format!(
            "\n\n[Cut here: this is the first {next} of {total} characters. Read on with \
             zotero_get_item_fulltext {{\"item_key\": \"{key}\", \"library\": \"{lib}\", \
             \"offset\": {next}}}.]\n"
        ));
    }
    text
}

/// The notes as one Markdown document, bounded as a whole.
pub(super) fn notes_markdown(data: &GetNotesData, key: &str, lib: &str) -> String {
    let total = data.total;
    let mut out = format!("# Notes of {key}\n\n");
    if data.notes.is_empty() {
        out.push_str("No notes.\n");
        return out;
    }
    let mut shown = 0u64;
    for n in &data.notes {
        // The title is the note's first line as plain text, decoded: a note can start with
        // anything, `[x](javascript:…)` or `&lt;img onerror=…&gt;` included.
        let mut part = format!("## {}\n\n", escape_text(&n.title));
        let mut meta = vec![link_to("Open in Zotero", &n.zotero_url)];
        if let Some(d) = &n.date_modified {
            meta.push(format!("modified {}", escape_text(d)));
        }
        meta.extend(tags_line(&n.tags));
        part.push_str(&format!("{}\n\n", meta.join(" · ")));
        // A note cut inside its code must not make the next notes code too.
        part.push_str(&close_open_fence(n.markdown.trim_end()));
        part.push_str("\n\n");
        if let Some(next) = n.next_offset {
            part.push_str(&format!(
                "_\\[Cut at {next} of {} characters: zotero_get_notes with item_key {}, \
                 library {lib} and offset {next} reads on.\\]_\n\n",
                n.total_chars,
                escape_text(&n.note_key),
            ));
        }
        part.push_str("---\n\n");
        if shown > 0 && out.len() + part.len() > NOTES_CHARS {
            break;
        }
        out.push_str(&part);
        shown += 1;
    }
    if shown < total {
        out.push_str(&format!(
            "_\\[{shown} of {total} notes shown: zotero_get_notes with item_key {key}, library \
             {lib} and start {shown} reads the others.\\]_\n"
        ));
    }
    out
}

/// "tags: a, b" of a note or annotation, each tag escaped; nothing without tags.
fn tags_line(tags: &[String]) -> Option<String> {
    let tags: Vec<String> = tags.iter().map(|t| escape_text(t)).collect();
    (!tags.is_empty()).then(|| format!("tags: {}", tags.join(", ")))
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The annotations as Markdown, in reading order.
pub(super) fn annotations_markdown(data: &GetAnnotationsData, key: &str, lib: &str) -> String {
    let list = &data.annotations;
    let total = data.total;
    let mut out = format!("# Annotations of {key}\n\n");
    if list.is_empty() {
        out.push_str("No annotations.\n");
        return out;
    }
    let mut attachment = "";
    let mut shown = 0u64;
    for a in list {
        let before = out.len();
        let on = a.attachment_key.as_str();
        if on != attachment {
            out.push_str(&format!("## On attachment {}\n\n", escape_text(on)));
            attachment = on;
        }
        let mut head = vec![capitalized(&a.annotation_type)];
        if let Some(p) = &a.page_label {
            head.push(format!("p. {p}"));
        }
        match (&a.color_name, &a.color) {
            (Some(name), _) => head.push(name.clone()),
            (None, Some(hex)) => head.push(hex.clone()),
            _ => {}
        }
        out.push_str(&format!(
            "### {} \\[{}\\]\n\n",
            escape_text(&head.join(" · ")),
            escape_text(&a.annotation_key)
        ));
        if let Some(t) = &a.text {
            let quoted = escape_lines(t, "> ");
            if !quoted.is_empty() {
                out.push_str(&format!("{quoted}\n"));
            }
        }
        if let Some(c) = &a.comment {
            let comment = escape_lines(c, "");
            if !comment.is_empty() {
                out.push_str(&format!("{comment}\n"));
            }
        }
        let mut meta = Vec::new();
        if a.truncated {
            meta.push("cut at 1,000 characters (zotero_get_annotations max_chars)".to_string());
        }
        meta.extend(tags_line(&a.tags));
        if let Some(u) = &a.zotero_url {
            meta.push(link_to("Open in Zotero", u));
        }
        if !meta.is_empty() {
            out.push_str(&format!("{}\n\n", meta.join(" · ")));
        }
        // Bytes bound the characters: the read stays within the budget.
        if shown > 0 && out.len() > ANNOTATIONS_CHARS {
            out.truncate(before);
            break;
        }
        shown += 1;
    }
    let next = if shown < list.len() as u64 {
        Some(shown)
    } else {
        data.next_start
    };
    if let Some(next) = next {
        out.push_str(&format!(
            "_\\[{shown} of {total} annotations shown: zotero_get_annotations with item_key \
             {key}, library {lib} and start {next} reads on.\\]_\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn page(text: &str, next_offset: Option<u64>, total_chars: u64) -> GetItemFulltextData {
        GetItemFulltextData {
            item_key: "VASWANI7".into(),
            item_type: "journalArticle".into(),
            title: String::new(),
            zotero_url: String::new(),
            text: text.into(),
            offset: 0,
            next_offset,
            total_chars,
            source: crate::tools::files::get_item_fulltext::TextOrigin::ZoteroIndex,
            sections: Vec::new(),
            pages: Vec::new(),
            not_indexed: Vec::new(),
            unread_attachments: 0,
        }
    }

    #[test]
    fn a_page_with_a_next_one_says_how_to_read_on() {
        let more: Value = serde_json::from_str(
            &json_text(&json!({"items": []}), Some("start 25".into())).unwrap(),
        )
        .unwrap();
        assert_eq!(more["read_on"], "start 25");
        let last: Value =
            serde_json::from_str(&json_text(&json!({"items": []}), None).unwrap()).unwrap();
        assert!(last.get("read_on").is_none());
        let text = fulltext_text(&page("abc", Some(3), 10), "VASWANI7", "group:1");
        assert!(text.starts_with("abc\n\n[Cut here: this is the first 3 of 10"));
        assert!(
            text.contains("\"library\": \"group:1\", \"offset\": 3}"),
            "{text}"
        );
        assert_eq!(
            fulltext_text(&page("abc", None, 3), "VASWANI7", "user"),
            "abc"
        );
    }
}
