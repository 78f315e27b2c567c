//! Markdown or HTML an agent writes → note HTML as Zotero's note editor stores it, with only
//! what that editor keeps.
//!
//! Zotero stores a note as HTML and shows it in its note editor (ProseMirror, with a schema of
//! its own in zotero/note-editor); a note written through the API is stored as sent. What an
//! agent sends is made into what the editor would have written, in two steps:
//!
//! 1. Markdown is rendered to HTML by walking `pulldown-cmark`'s events (CommonMark with GFM
//!    tables and strikethrough; raw HTML in it is passed on to step 2 like any other HTML).
//! 2. The HTML is parsed with html5ever as a browser parses `innerHTML` (broken markup
//!    included), and the tree is walked, without recursion, against an allow-list: the
//!    elements and attributes of the editor's schema (`allow::KEPT`), links only to
//!    [`LINK_SCHEMES`] (checked on the value html5ever decoded), images only as the editor
//!    stores them (`data-attachment-key`, never a `src`: a remote image is a tracking
//!    pixel). Active and embedded content is dropped with what it holds
//!    (`markdown::DROPPED_WITH_CONTENT`: script, style, iframe, object, svg, form, …); any
//!    other element is unwrapped, its content kept (a block one becomes a paragraph where it
//!    held only text); every other attribute (`on…`, `style`, …) is dropped. html5ever's
//!    serializer writes the result, escaping text and attribute values.
//!
//! What was taken out is reported ([`Removed`]), so an agent knows its note changed.
//!
//! `ammonia` was not used, as for reading (see `notes/markdown/`): it brings a second html5ever,
//! `url` with ICU's tables and cssparser (2.9 MB of binary); this module adds no crate.
//!
//! The result is wrapped as the editor stores notes: `<div data-schema-version="9">…</div>`.
//! 9 is what zotero/zotero `chrome/content/zotero/xpcom/editorInstance.js`
//! (`createNoteFromAnnotations`) writes for notes without underline annotations ("Update
//! schema version only if using new features"); a wrapper already in the input keeps its
//! version and `data-citation-items`.

mod allow;
mod dom;
mod render;
mod report;
mod sanitize;

use self::render::markdown_to_html;
pub use self::report::{Removed, RemovedKind, SanitizedNote, MAX_REPORTED};
use self::sanitize::sanitize;
pub use self::sanitize::SCHEMA_VERSION;
use crate::notes::markdown::{nesting_depth, MAX_PARSE_DEPTH};

/// Zotero's limit on a note's length in characters (dataserver `Zotero_Notes::$MAX_NOTE_LENGTH`).
pub const MAX_NOTE_CHARS: usize = 500_000;

/// How much HTML Markdown may render to before it is refused: more than a note can hold
/// even after the sanitizer has removed what it removes.
const MAX_RENDERED_BYTES: usize = 8 * MAX_NOTE_CHARS;

/// URL schemes a link may have: the same as in the Markdown this server writes.
pub use crate::notes::markdown::LINK_SCHEMES;

/// What a note is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteFormat {
    Markdown,
    Html,
}

/// Why a note is not written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteRefused {
    #[error("the note has {chars} characters; Zotero keeps at most {max}")]
    TooLong { chars: usize, max: usize },
    #[error("the note as HTML would be longer than the {max} characters Zotero keeps")]
    TooLongAsHtml { max: usize },
    #[error("the note nests its elements {depth} deep; at most {max} can be written")]
    TooDeep { depth: usize, max: usize },
}

/// How many more times a note is cleaned, at most, to reach HTML that parses back to itself.
const MAX_PASSES: usize = 3;

/// `input` as note HTML: only what Zotero's note editor keeps, wrapped as it stores notes;
/// refused if it is longer than Zotero keeps (before or after conversion) or nested too deep
/// to convert safely.
pub fn note_html(input: &str, format: NoteFormat) -> Result<SanitizedNote, NoteRefused> {
    check_length(input)?;
    let html = match format {
        NoteFormat::Markdown => {
            markdown_to_html(input, MAX_RENDERED_BYTES).ok_or(NoteRefused::TooLongAsHtml {
                max: MAX_NOTE_CHARS,
            })?
        }
        NoteFormat::Html => input.to_string(),
    };
    let depth = nesting_depth(&html);
    if depth > MAX_PARSE_DEPTH {
        return Err(NoteRefused::TooDeep {
            depth,
            max: MAX_PARSE_DEPTH,
        });
    }
    let mut note = sanitize(&html);
    // What the cleaning keeps can still be nested in a way a parser rebuilds differently
    // (a heading in a heading, a block in a paragraph): Zotero would then store something
    // else than this answer reports. Cleaning the result again until nothing changes makes
    // the stored note the one answered. The first pass's report says what was removed.
    for _ in 0..MAX_PASSES {
        let again = sanitize(&note.html);
        if again.html == note.html {
            break;
        }
        note.html = again.html;
    }
    if note.html.chars().count() > MAX_NOTE_CHARS {
        return Err(NoteRefused::TooLongAsHtml {
            max: MAX_NOTE_CHARS,
        });
    }
    Ok(note)
}

fn check_length(text: &str) -> Result<(), NoteRefused> {
    let chars = text.chars().count();
    if chars > MAX_NOTE_CHARS {
        return Err(NoteRefused::TooLong {
            chars,
            max: MAX_NOTE_CHARS,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::report::MAX_NAME_CHARS;
    use super::*;

    fn html(input: &str) -> SanitizedNote {
        note_html(input, NoteFormat::Html).unwrap_or_else(|e| SanitizedNote {
            html: e.to_string(),
            removed: Vec::new(),
        })
    }

    fn removed(note: &SanitizedNote, kind: RemovedKind, name: &str) -> usize {
        note.removed
            .iter()
            .find(|r| r.kind == kind && r.name == name)
            .map_or(0, |r| r.count)
    }

    fn inner(note: &SanitizedNote) -> &str {
        note.html
            .strip_prefix("<div data-schema-version=\"9\">")
            .and_then(|h| h.strip_suffix("</div>"))
            .unwrap_or(&note.html)
    }

    #[test]
    fn nesting_a_parser_would_rebuild_is_cleaned_until_it_parses_back_to_itself() {
        for input in ["<h1><div><h1>x", "<p><div><p>y</p></div></p>"] {
            let once = html(input);
            assert_eq!(html(&once.html).html, once.html, "{input}");
        }
    }

    #[test]
    fn a_newline_opening_a_pre_survives_being_written_again() {
        // The text left after the script is "\n": written once more so a parser keeps it.
        let once = html("<p><pre><script>x()</script>\n</pre>");
        let twice = html(&once.html);
        assert_eq!(once.html, twice.html);
        assert!(once.html.contains("<pre>\n\n</pre>"), "{}", once.html);
    }

    #[test]
    fn the_note_editors_markup_is_kept_as_is() {
        let body = "<h1>T</h1><h6>t</h6><p><strong>b</strong> <b>b</b> <em>e</em> <i>i</i> \
                    <u>u</u> <s>s</s> <strike>k</strike> <sub>1</sub><sup>2</sup> \
                    <code>c</code><br><a href=\"https://e.org/x?a=1&amp;b=2\">l</a></p>\
                    <ul><li>a<ol start=\"3\"><li>b</li></ol></li></ul><blockquote><p>q</p>\
                    </blockquote><pre>x &lt; y</pre><hr><table><thead><tr><th colspan=\"2\">h\
                    </th></tr></thead><tbody><tr><td rowspan=\"1\">1</td><td>2</td></tr></tbody>\
                    </table>";
        let note = html(body);
        assert_eq!(inner(&note), body);
        assert_eq!(note.removed, Vec::new());
    }

    #[test]
    fn a_new_note_is_wrapped_and_a_wrapper_is_kept() {
        let note = html("<p>x</p>");
        assert_eq!(note.html, "<div data-schema-version=\"9\"><p>x</p></div>");
        let note = html(
            "<div data-citation-items=\"%5B%5D\" data-schema-version=\"10\" onclick=\"x\">\
             <p>y</p></div>\n",
        );
        assert_eq!(
            note.html,
            "<div data-citation-items=\"%5B%5D\" data-schema-version=\"10\"><p>y</p></div>"
        );
        // A version that is not a number is replaced.
        let note = html("<div data-schema-version=\"9&quot;><script>\"><p>z</p></div>");
        assert_eq!(note.html, "<div data-schema-version=\"9\"><p>z</p></div>");
    }

    #[test]
    fn active_content_is_dropped_with_what_it_holds() {
        let note = html(
            "<p>a</p><script>alert(1)</script><style>p{}</style><iframe src=\"https://x\">f\
             </iframe><object data=\"x\">o</object><svg onload=\"x()\"><text>s</text></svg>\
             <form><input value=\"v\"><button>b</button></form><!-- c --><p>z</p>",
        );
        assert_eq!(inner(&note), "<p>a</p><p>z</p>");
        for name in ["script", "style", "iframe", "object", "svg", "form"] {
            assert_eq!(removed(&note, RemovedKind::Element, name), 1, "{name}");
        }
        assert_eq!(removed(&note, RemovedKind::Comment, "comment"), 1);
    }

    #[test]
    fn unknown_elements_are_unwrapped_keeping_their_text() {
        let note = html(
            "<div>one</div><div>two <font color=\"red\">red</font></div>\
             <section><p>p</p></section><p>x<x-custom>y</x-custom>z</p>",
        );
        assert_eq!(inner(&note), "<p>one</p><p>two red</p><p>p</p><p>xyz</p>");
        assert_eq!(removed(&note, RemovedKind::Tag, "div"), 2);
        assert_eq!(removed(&note, RemovedKind::Tag, "font"), 1);
        assert_eq!(removed(&note, RemovedKind::Attribute, "color"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "x-custom"), 1);
    }

    #[test]
    fn handlers_and_styles_are_removed() {
        let note = html(
            "<p onclick=\"x()\" style=\"color:red\" ONMOUSEOVER=\"y()\" class=\"c\" id=\"i\">t</p>",
        );
        assert_eq!(inner(&note), "<p>t</p>");
        for name in ["onclick", "style", "onmouseover", "class", "id"] {
            assert_eq!(removed(&note, RemovedKind::Attribute, name), 1, "{name}");
        }
    }

    #[test]
    fn links_keep_only_allowed_schemes() {
        let note = html(
            "<a href=\"http://e.org\">1</a><a href=\"MAILTO:a@b.c\">2</a>\
             <a href=\"zotero://select/library/items/ABCD2345\">3</a>\
             <a href=\"javascript:alert(1)\">4</a><a href=\"jav&#x61;script&colon;x\">5</a>\
             <a href=\" JaVaScRiPt:x\">6</a><a href=\"data:text/html,x\">7</a>\
             <a href=\"java&#x09;script:x\">8</a><a href=\"/rel\">9</a><a href=\"//e.org\">10</a>\
             <a name=\"n\">11</a>",
        );
        assert_eq!(
            inner(&note),
            "<a href=\"http://e.org\">1</a><a href=\"MAILTO:a@b.c\">2</a>\
             <a href=\"zotero://select/library/items/ABCD2345\">3</a>4567891011"
        );
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "javascript"), 3);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "data"), 1);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "invalid"), 1);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "none"), 2);
        assert_eq!(removed(&note, RemovedKind::Attribute, "name"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "a"), 8);
    }

    #[test]
    fn images_are_kept_only_as_attachment_keys() {
        let note = html(
            "<p><img src=\"https://t.example/p.gif\" alt=\"pixel\" onerror=\"x()\">\
             <img src=\"data:image/png;base64,AAAA\"><img data-attachment-key=\"ABCD2345\" \
             width=\"100\" height=\"50\" src=\"https://t.example/q.gif\" data-annotation=\"%7B%7D\">\
             <img data-attachment-key=\"../x\"></p>",
        );
        assert_eq!(
            inner(&note),
            "<p>pixel<img data-attachment-key=\"ABCD2345\" width=\"100\" height=\"50\" \
             data-annotation=\"%7B%7D\"></p>"
        );
        assert_eq!(removed(&note, RemovedKind::Tag, "img"), 3);
        assert_eq!(removed(&note, RemovedKind::Attribute, "src"), 3);
        assert_eq!(
            removed(&note, RemovedKind::Attribute, "data-attachment-key"),
            1
        );
    }

    #[test]
    fn citations_highlights_and_math_are_kept() {
        let body = "<p><span class=\"highlight\" data-annotation=\"%7B%7D\">“q”</span> \
                    <span class=\"citation\" data-citation=\"%7B%7D\">(<span class=\"citation-item\">\
                    Doe, 2020</span>)</span> <span class=\"math\">$x$</span></p>\
                    <pre class=\"math\">$$y$$</pre>";
        let note = html(body);
        assert_eq!(inner(&note), body);
        let note = html("<p><span class=\"citation evil\" data-x=\"1\">c</span><span>s</span></p>");
        assert_eq!(inner(&note), "<p><span class=\"citation\">c</span>s</p>");
        assert_eq!(removed(&note, RemovedKind::Attribute, "data-x"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "span"), 1);
    }

    #[test]
    fn markdown_is_rendered_then_sanitized() {
        let note = note_html(
            "# Title\n\nSome **bold**, *em*, ~~gone~~ and `code` with [a link](https://e.org/a).\n\n\
             - one\n- two\n\n3. three\n4. four\n\n> quoted\n\n```rust\nfn x() {}\n```\n\n\
             | a | b |\n|---|---|\n| 1 | 2 |\n\n---\n\n![pixel](https://t.example/p.gif) \
             [js](javascript:alert(1)) <script>alert(2)</script> <u>under</u>",
            NoteFormat::Markdown,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let h = inner(&note);
        for part in [
            "<h1>Title</h1>",
            "<strong>bold</strong>",
            "<em>em</em>",
            "<s>gone</s>",
            "<code>code</code>",
            "<a href=\"https://e.org/a\">a link</a>",
            "<ul><li>one</li>",
            "<ol start=\"3\">",
            "<blockquote><p>quoted</p>",
            "<pre>fn x() {}\n</pre>",
            "<thead><tr><th>a</th><th>b</th></tr></thead>",
            "<td>1</td><td>2</td>",
            "<hr>",
            "<p>pixel js  <u>under</u></p>",
        ] {
            assert!(h.contains(part), "{part} not in {h}");
        }
        assert!(!h.contains("alert"), "{h}");
        assert_eq!(removed(&note, RemovedKind::Element, "script"), 1);
        assert_eq!(removed(&note, RemovedKind::UrlScheme, "javascript"), 1);
        assert_eq!(removed(&note, RemovedKind::Tag, "img"), 1);
        // Markup in Markdown text stays text.
        let note =
            note_html("a &lt;b&gt; \\<i>", NoteFormat::Markdown).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(inner(&note), "<p>a &lt;b&gt; &lt;i&gt;</p>\n");
    }

    #[test]
    fn too_long_or_too_deep_is_refused() {
        let long = "a".repeat(MAX_NOTE_CHARS + 1);
        assert_eq!(
            note_html(&long, NoteFormat::Html),
            Err(NoteRefused::TooLong {
                chars: MAX_NOTE_CHARS + 1,
                max: MAX_NOTE_CHARS
            })
        );
        // Within the limit, but not once written as HTML.
        let stars = "*a* ".repeat(MAX_NOTE_CHARS / 4);
        assert_eq!(
            note_html(&stars, NoteFormat::Markdown),
            Err(NoteRefused::TooLongAsHtml {
                max: MAX_NOTE_CHARS
            })
        );
        // A link reference used over and over is refused before it is all rendered.
        let long = format!(
            "[r]: https://e.org/{}\n\n{}",
            "a".repeat(200_000),
            "[x][r] ".repeat(40_000)
        );
        let started = std::time::Instant::now();
        assert_eq!(
            note_html(&long, NoteFormat::Markdown),
            Err(NoteRefused::TooLongAsHtml {
                max: MAX_NOTE_CHARS
            })
        );
        assert!(started.elapsed().as_secs() < 10);
        let deep = format!("{}x{}", "<div>".repeat(2_000), "</div>".repeat(2_000));
        assert_eq!(
            note_html(&deep, NoteFormat::Html),
            Err(NoteRefused::TooDeep {
                depth: 2_000,
                max: MAX_PARSE_DEPTH
            })
        );
        let quotes = format!("{}x", "> ".repeat(2_000));
        assert!(matches!(
            note_html(&quotes, NoteFormat::Markdown),
            Err(NoteRefused::TooDeep { .. })
        ));
        // Deep but allowed nesting is walked without recursion.
        let ok = format!(
            "{}x{}",
            "<blockquote>".repeat(900),
            "</blockquote>".repeat(900)
        );
        let note = html(&ok);
        assert_eq!(note.html.matches("<blockquote>").count(), 900);
    }

    #[test]
    fn the_report_is_bounded() {
        let many: String = (0..100)
            .map(|i| format!("<x-{i} data-{i}=\"1\">t</x-{i}>"))
            .collect();
        let note = html(&format!("<p>{many}</p>"));
        assert!(note.removed.len() <= MAX_REPORTED + 1, "{:?}", note.removed);
        let total: usize = note.removed.iter().map(|r| r.count).sum();
        assert_eq!(total, 200);
        assert!(note.removed.iter().any(|r| r.kind == RemovedKind::Other));
        let long = "y".repeat(500);
        let note = html(&format!("<p><x-{long}>t</x-{long}></p>"));
        assert!(note
            .removed
            .iter()
            .all(|r| r.name.chars().count() <= MAX_NAME_CHARS));
    }
}
