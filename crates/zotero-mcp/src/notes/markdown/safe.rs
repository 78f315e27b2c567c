//! The last layer: Markdown read as a renderer reads it, and whatever it finds that must not
//! be there (raw HTML, images, links to other schemes) escaped.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

use super::escape::allowed_link;

/// How many times [`neutralize`] reads the Markdown again before it gives up on its structure
/// and escapes every `<`, `[` and `!`.
const ESCAPE_ROUNDS: usize = 4;

/// The last layer: the Markdown read as CommonMark (with and without GFM tables) as a
/// renderer would, and whatever it finds that must not be there escaped, until no reading
/// finds any: raw HTML (each `<` in it), images, and links to other schemes than
/// `LINK_SCHEMES`. The layers before should leave none; this one does not depend on how
/// htmd composes its blocks.
pub(super) fn neutralize(mut markdown: String) -> String {
    for _ in 0..ESCAPE_ROUNDS {
        let mut at: Vec<usize> = Vec::new();
        for options in [
            Options::empty(),
            Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
        ] {
            // An ATX heading without content (`##` alone on a line): the HTML's empty
            // headings write nothing, so it came from text; its first `#` is escaped.
            let mut empty_heading: Option<usize> = None;
            for (event, range) in Parser::new_ext(&markdown, options).into_offset_iter() {
                let raw = markdown.get(range.clone()).unwrap_or_default();
                match event {
                    Event::Start(Tag::Heading { .. }) if raw.trim_start().starts_with('#') => {
                        empty_heading = Some(range.start + raw.len() - raw.trim_start().len());
                    }
                    // htmd writes the HTML's headings as `#`; a setext heading (a line of `-`
                    // or `=` under text, as `a<br>---` gives) came from text: its underline's
                    // first character is escaped.
                    Event::Start(Tag::Heading { .. }) => {
                        let line = raw.trim_end().rfind('\n').map_or(0, |i| i + 1);
                        let under = raw.get(line..).unwrap_or_default();
                        at.push(range.start + line + under.len() - under.trim_start().len());
                    }
                    Event::End(TagEnd::Heading(_)) => at.extend(empty_heading.take()),
                    Event::Html(_) | Event::InlineHtml(_) => {
                        at.extend(raw.match_indices('<').map(|(i, _)| range.start + i));
                    }
                    Event::Start(Tag::Image { .. }) => at.push(range.start),
                    Event::Start(Tag::Link { dest_url, .. }) if !allowed_link(&dest_url) => {
                        at.push(range.start)
                    }
                    // htmd writes the lists of the HTML as `1.` and escapes a `1.` in text, but
                    // not a `1)`: such an item came from text (`2) ## x` would put a heading,
                    // or any block, where the text was), so its `)` is escaped.
                    Event::Start(Tag::Item) => {
                        let digits = raw.bytes().take_while(u8::is_ascii_digit).count();
                        if digits > 0 && raw.as_bytes().get(digits) == Some(&b')') {
                            at.push(range.start + digits);
                        }
                    }
                    Event::Start(_) | Event::End(_) => {}
                    _ => empty_heading = None,
                }
            }
        }
        // Only before a character a backslash escapes; anything else is left to the end.
        at.retain(|i| {
            matches!(
                markdown.as_bytes().get(*i),
                Some(b'<' | b'[' | b'!' | b')' | b'#' | b'-' | b'=')
            )
        });
        if at.is_empty() {
            return markdown;
        }
        at.sort_unstable();
        at.dedup();
        for i in at.into_iter().rev() {
            markdown.insert(i, '\\');
        }
    }
    markdown
        .replace('<', "&lt;")
        .replace('[', "\\[")
        .replace('!', "\\!")
}

/// A piece of Markdown `note_to_markdown` made, cut at any character (a page of a long
/// note), as safe as the whole: a cut can leave a code span without its closing backtick, and
/// the `<script>` it held is then HTML again, or start a piece inside one.
pub fn safe_piece(piece: &str) -> String {
    neutralize(piece.to_string())
}

/// `md` with a fenced code block it ends in closed, when a cut left one open at its top
/// level: in a document that goes on after it (`notes.md`, the next note), the rest would
/// otherwise be shown as code. A fence inside a list or quote closes with its container.
pub fn close_open_fence(md: &str) -> String {
    let mut depth = 0usize;
    let mut open = None;
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for (event, range) in Parser::new_ext(md, options).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_)))
                if depth == 0 && range.end >= md.len() =>
            {
                let raw = md.get(range).unwrap_or_default();
                let first = raw.lines().next().unwrap_or_default().trim_start();
                let c = first.chars().next().unwrap_or('`');
                let fence: String = first.chars().take_while(|x| *x == c).collect();
                let last = raw.lines().last().unwrap_or_default().trim();
                let closed = raw.lines().count() > 1
                    && last.len() >= fence.len()
                    && last.chars().all(|x| x == c);
                if !closed {
                    open = Some(fence);
                }
                depth += 1;
            }
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    match open {
        Some(fence) => format!("{md}\n{fence}"),
        None => md.to_string(),
    }
}

/// Citation or bibliography Markdown converted from the HTML Zotero renders: links only to
/// `LINK_SCHEMES`, no raw HTML and no image, like a note's.
pub fn safe_converted(markdown: String) -> String {
    neutralize(markdown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_left_open_by_a_cut_is_closed() {
        assert_eq!(close_open_fence("a\n\n````\ncode"), "a\n\n````\ncode\n````");
        assert_eq!(close_open_fence("~~~ rust\n"), "~~~ rust\n\n~~~");
        for whole in [
            "a\n\n```\ncode\n```",
            "`x` and ```y```",
            "> ```\n> code",
            "- ```\n  x",
        ] {
            assert_eq!(close_open_fence(whole), whole);
        }
    }
}
