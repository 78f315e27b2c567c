//! Markdown an agent writes rendered to HTML by walking `pulldown-cmark`'s events, raw HTML
//! passed on to be sanitized with the rest.

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Markdown (CommonMark, GFM tables and strikethrough) as HTML. Raw HTML is passed on, to be
/// sanitized with the rest; an image keeps its alt text for the sanitizer to show. `None` if
/// the HTML grows past `max_bytes` (a link reference definition can be used any number of
/// times: 500,000 characters of Markdown could make gigabytes of HTML).
pub(super) fn markdown_to_html(markdown: &str, max_bytes: usize) -> Option<String> {
    let mut out = String::with_capacity(markdown.len() + markdown.len() / 4);
    let mut in_head = false;
    // Alt text of the images being read (images nest in links' text, not in each other, but a
    // stack costs nothing).
    let mut images: Vec<(String, String)> = Vec::new();
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for event in Parser::new_ext(markdown, options) {
        if out.len() > max_bytes {
            return None;
        }
        if let Some((_, alt)) = images.last_mut() {
            match &event {
                Event::Text(t) | Event::Code(t) => {
                    alt.push_str(t);
                    continue;
                }
                Event::SoftBreak | Event::HardBreak => {
                    alt.push(' ');
                    continue;
                }
                _ => {}
            }
        }
        match event {
            Event::Start(tag) => match tag {
                Tag::Paragraph => out.push_str("<p>"),
                Tag::Heading { level, .. } => out.push_str(&format!("<{level}>")),
                Tag::BlockQuote(_) => out.push_str("<blockquote>"),
                Tag::CodeBlock(CodeBlockKind::Fenced(_) | CodeBlockKind::Indented) => {
                    out.push_str("<pre>")
                }
                Tag::List(Some(1)) => out.push_str("<ol>"),
                Tag::List(Some(start)) => out.push_str(&format!("<ol start=\"{start}\">")),
                Tag::List(None) => out.push_str("<ul>"),
                Tag::Item => out.push_str("<li>"),
                Tag::Table(_) => out.push_str("<table>"),
                Tag::TableHead => {
                    in_head = true;
                    out.push_str("<thead><tr>");
                }
                Tag::TableRow => out.push_str("<tr>"),
                Tag::TableCell if in_head => out.push_str("<th>"),
                Tag::TableCell => out.push_str("<td>"),
                Tag::Emphasis => out.push_str("<em>"),
                Tag::Strong => out.push_str("<strong>"),
                Tag::Strikethrough => out.push_str("<s>"),
                Tag::Superscript => out.push_str("<sup>"),
                Tag::Subscript => out.push_str("<sub>"),
                Tag::Link { dest_url, .. } => {
                    out.push_str(&format!("<a href=\"{}\">", escape(&dest_url, true)))
                }
                Tag::Image { dest_url, .. } => images.push((dest_url.to_string(), String::new())),
                _ => {}
            },
            Event::End(tag) => match tag {
                TagEnd::Paragraph => out.push_str("</p>\n"),
                TagEnd::Heading(level) => out.push_str(&format!("</{level}>\n")),
                TagEnd::BlockQuote(_) => out.push_str("</blockquote>\n"),
                TagEnd::CodeBlock => out.push_str("</pre>\n"),
                TagEnd::List(true) => out.push_str("</ol>\n"),
                TagEnd::List(false) => out.push_str("</ul>\n"),
                TagEnd::Item => out.push_str("</li>\n"),
                TagEnd::Table => out.push_str("</tbody></table>\n"),
                TagEnd::TableHead => {
                    in_head = false;
                    out.push_str("</tr></thead><tbody>\n");
                }
                TagEnd::TableRow => out.push_str("</tr>\n"),
                TagEnd::TableCell if in_head => out.push_str("</th>"),
                TagEnd::TableCell => out.push_str("</td>"),
                TagEnd::Emphasis => out.push_str("</em>"),
                TagEnd::Strong => out.push_str("</strong>"),
                TagEnd::Strikethrough => out.push_str("</s>"),
                TagEnd::Superscript => out.push_str("</sup>"),
                TagEnd::Subscript => out.push_str("</sub>"),
                TagEnd::Link => out.push_str("</a>"),
                TagEnd::Image => {
                    if let Some((src, alt)) = images.pop() {
                        out.push_str(&format!(
                            "<img src=\"{}\" alt=\"{}\">",
                            escape(&src, true),
                            escape(&alt, true)
                        ));
                    }
                }
                _ => {}
            },
            Event::Text(t) => out.push_str(&escape(&t, false)),
            Event::Code(t) => out.push_str(&format!("<code>{}</code>", escape(&t, false))),
            Event::Html(h) | Event::InlineHtml(h) => out.push_str(&h),
            Event::SoftBreak => out.push('\n'),
            Event::HardBreak => out.push_str("<br>\n"),
            Event::Rule => out.push_str("<hr>\n"),
            _ => {}
        }
    }
    Some(out)
}

/// Text (or, `attribute`, an attribute value) escaped for HTML.
fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}
