//! Property: whatever HTML a note holds — random trees of tags and attributes, adversarial
//! pieces (event handlers, `javascript:` in every spelling, entity-encoded schemes, `<svg
//! onload>`, `<iframe>`, `<script>` in foreign content, comments, CDATA, `<plaintext>`) and
//! broken markup (unclosed tags and quotes, stray end tags) — the Markdown
//! `zotero_mcp::notes::markdown::note_to_markdown` makes of it:
//!
//! 1. read by a CommonMark parser (pulldown-cmark, with tables), has no raw HTML at all, no
//!    image, and no link but to `http`, `https`, `mailto` or `zotero`;
//! 2. holds nothing of a script's or style's content, an event handler, a dangerous URL or a
//!    comment (each carries a marker the output must not contain);
//! 3. is what `zotero_get_notes` answers for that note, through the server and the emulator.

use proptest::prelude::*;
use pulldown_cmark::{Event, Options, Parser, Tag};
use serde_json::json;
use zotero_emulator::Library;
use zotero_mcp::notes::markdown::note_to_markdown;

use crate::prop_support::{config, runtime, start};

/// Markers that may only sit where they must never reach the output.
pub(crate) const HIDDEN: [&str; 5] = [
    "PWNSCRIPT",
    "PWNSTYLE",
    "PWNHANDLER",
    "PWNURL",
    "PWNCOMMENT",
];

/// Text a reader sees: words, Markdown and HTML specials, entities, and text that looks like
/// a link definition or a tag once decoded. `broken` adds raw `<`, which may open a tag or a
/// bogus comment that swallows the next tag (so markers after it may rightly be shown).
fn text(broken: bool) -> impl Strategy<Value = String> {
    let words = proptest::sample::select(vec![
        "residual",
        "learning",
        "shortcut",
        "Zotero",
        "ü",
        "日本語",
        " ",
        "  ",
        "\n",
    ])
    .prop_map(str::to_string);
    let specials = proptest::sample::select(vec![
        "*",
        "_",
        "`",
        "``",
        "[",
        "]",
        "(",
        ")",
        "#",
        "# ",
        "> ",
        "- ",
        "1. ",
        "|",
        "\\",
        ">",
        "&",
        "&lt;",
        "&gt;",
        "&amp;",
        "&#60;",
        "&#x3C;script&#x3E;",
        "&lt;b&gt;",
        "&lt;!-- x --&gt;",
        "&lt;![CDATA[",
        "]]&gt;",
        "&nbsp;",
        "[x]: javascript:alert(1)",
        "[x]",
        "&lt;http://e.org&gt;",
        "javascript:alert(1)",
        "![i](https://e.org/i.png)",
        "```",
        "~~~",
        "---",
        "===",
    ])
    .prop_map(str::to_string);
    let raw = proptest::sample::select(vec![
        "<",
        "<!",
        "</",
        "<3",
        "a<b",
        "<http://e.org>",
        "<mailto:a@b.c>",
    ])
    .prop_map(str::to_string);
    if broken {
        prop_oneof![4 => words, 3 => specials, 1 => raw].boxed()
    } else {
        prop_oneof![4 => words, 3 => specials].boxed()
    }
}

/// `href`/`src` values: safe ones, and every way of writing a dangerous one.
fn url() -> impl Strategy<Value = String> {
    proptest::sample::select(vec![
        "https://example.org/ok",
        "http://e.org/a)b<c>d e\"f'g`h",
        "mailto:reader@example.org",
        "zotero://select/library/items/ABCD2345",
        "zotero://open-pdf/library/items/ABCD2345?annotation=EFGH2345",
        "javascript:PWNURL()",
        "JaVaScRiPt:PWNURL()",
        " javascript:PWNURL()",
        "jav&#x61;script:PWNURL()",
        "jav&#97;script&colon;PWNURL()",
        "&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;PWNURL()",
        "java\tscript:PWNURL()",
        "java&#x09;script:PWNURL()",
        "&#x6A;avascript:PWNURL()",
        "data:text/html;base64,PWNURL",
        "vbscript:PWNURL",
        "//evil.example/PWNURL",
        "/relative/PWNURL",
        "",
    ])
    .prop_map(str::to_string)
}

/// An attribute; `broken` adds unclosed quotes, which make what follows part of the
/// attribute, or text (so markers after them may rightly be shown).
fn attribute(broken: bool) -> impl Strategy<Value = String> {
    let well_formed = prop_oneof![
        3 => url().prop_map(|u| format!(" href=\"{u}\"")),
        2 => url().prop_map(|u| format!(" src=\"{u}\"")),
        2 => proptest::sample::select(vec![
            "onclick", "onload", "onerror", "onmouseover", "ONFOCUS", "onbegin",
        ])
        .prop_map(|h| format!(" {h}=\"PWNHANDLER()\"")),
        1 => Just(" style=\"background:url(PWNSTYLE)\"".to_string()),
        1 => Just(" class=\"citation\" data-citation=\"%7B%22citationItems%22%3A%5B%7B%22uris%22%3A%5B%22http%3A%2F%2Fzotero.org%2Fusers%2F1%2Fitems%2FABCD2345%22%5D%7D%5D%7D\"".to_string()),
        1 => Just(" class=\"citation\" data-citation=\"%7B%22citationItems%22%3A%5B%7B%22uris%22%3A%5B%22javascript%3APWNURL()%2Fitems%2FABCD2345%22%5D%7D%5D%7D\"".to_string()),
        1 => Just(" class=\"highlight\" data-annotation=\"%7B%7D\"".to_string()),
        1 => Just(" srcdoc=\"<script>PWNSCRIPT</script>\"".to_string()),
    ];
    let unclosed = proptest::sample::select(vec![" href=\"", " title='x", " alt=\"y"])
        .prop_map(str::to_string);
    // Unquoted, a value with `>` ends the tag early.
    let unquoted = url().prop_map(|u| format!(" href={u}"));
    if broken {
        prop_oneof![8 => well_formed, 1 => unclosed, 1 => unquoted].boxed()
    } else {
        well_formed.boxed()
    }
}

/// Elements that hold what must never be shown: their content carries a marker.
fn hidden_element() -> impl Strategy<Value = String> {
    proptest::sample::select(vec![
        "<script>PWNSCRIPT()</script>",
        "<SCRIPT type=\"text/javascript\">PWNSCRIPT</SCRIPT>",
        "<script>document.write('<p>PWNSCRIPT</p>')</script>",
        "<style>p { color: red } /* PWNSTYLE */</style>",
        "<svg onload=\"PWNHANDLER()\"><script>PWNSCRIPT</script><style>PWNSTYLE</style></svg>",
        "<svg><foreignObject><p>PWNSCRIPT</p></foreignObject></svg>",
        "<math><mi>PWNSCRIPT</mi><style>PWNSTYLE</style></math>",
        "<iframe src=\"https://evil.example\">PWNSCRIPT</iframe>",
        "<iframe srcdoc=\"&lt;script&gt;PWNSCRIPT&lt;/script&gt;\"></iframe>",
        "<noscript><p>PWNSCRIPT</p></noscript>",
        "<template><p>PWNSCRIPT</p></template>",
        "<object data=\"x\">PWNSCRIPT</object>",
        "<embed src=\"javascript:PWNURL()\">",
        "<textarea>PWNSCRIPT</textarea>",
        "<title>PWNSCRIPT</title>",
        "<xmp><script>PWNSCRIPT</script></xmp>",
        "<form action=\"javascript:PWNURL()\"><input value=\"PWNSCRIPT\"><button>PWNSCRIPT</button></form>",
        "<select><option>PWNSCRIPT</option></select>",
        "<!-- PWNCOMMENT -->",
        "<![CDATA[ PWNCOMMENT ]]>",
        "<img src=x onerror=PWNHANDLER()>",
        "<img src=\"javascript:PWNURL()\" alt=\"\">",
        "<a href=\"javascript:PWNURL()\"></a>",
        "<video><source src=\"x\" onerror=\"PWNHANDLER()\">PWNSCRIPT</video>",
        "<plaintext><script>PWNSCRIPT</script>",
    ])
    .prop_map(str::to_string)
}

const TAGS: [&str; 30] = [
    "p",
    "div",
    "span",
    "b",
    "i",
    "em",
    "strong",
    "u",
    "s",
    "sub",
    "sup",
    "a",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "pre",
    "code",
    "blockquote",
    "table",
    "tr",
    "td",
    "th",
    "br",
    "img",
    "x-custom",
    "font",
    "details",
];

/// A random HTML tree, sometimes left unclosed or with a stray end tag; `broken`: with
/// unclosed attribute quotes too.
pub(crate) fn html(broken: bool) -> impl Strategy<Value = String> {
    let leaf = prop_oneof![4 => text(broken), 1 => hidden_element()];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        (
            proptest::sample::select(TAGS.to_vec()),
            proptest::collection::vec(attribute(broken), 0..3),
            proptest::collection::vec(inner, 0..6),
            0u8..10,
        )
            .prop_map(|(tag, attrs, children, broken)| {
                let body = children.concat();
                let attrs = attrs.concat();
                match broken {
                    0 => format!("<{tag}{attrs}>{body}"),
                    1 => format!("<{tag}{attrs}>{body}</div></{tag}>"),
                    _ => format!("<{tag}{attrs}>{body}</{tag}>"),
                }
            })
    })
}

/// What the CommonMark reading of `md` shows that it must not; `markers`: and any marker.
fn problems(md: &str, markers: bool) -> Vec<String> {
    let mut found = Vec::new();
    for marker in HIDDEN.iter().filter(|_| markers) {
        if md.contains(marker) {
            found.push(format!("marker {marker}"));
        }
    }
    let parser = Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH);
    for event in parser {
        match event {
            Event::Html(h) | Event::InlineHtml(h) => found.push(format!("raw HTML {h:?}")),
            Event::Start(Tag::Image { dest_url, .. }) => found.push(format!("image {dest_url:?}")),
            Event::Start(Tag::Link { dest_url, .. }) => {
                let scheme = dest_url
                    .split_once(':')
                    .map(|(s, _)| s.to_ascii_lowercase());
                let allowed = matches!(
                    scheme.as_deref(),
                    Some("http" | "https" | "mailto" | "zotero")
                );
                if !allowed {
                    found.push(format!("link to {dest_url:?}"));
                }
            }
            _ => {}
        }
    }
    found
}

proptest! {
    #![proptest_config(config(512))]

    #[test]
    fn markdown_from_any_note_is_inert(html in html(false)) {
        let md = note_to_markdown(&html);
        let found = problems(&md, true);
        prop_assert!(found.is_empty(), "{found:?}\nHTML: {html}\nMarkdown: {md}");
    }

    #[test]
    fn markdown_from_broken_attributes_has_no_html_and_no_bad_link(html in html(true)) {
        let md = note_to_markdown(&html);
        let found = problems(&md, false);
        prop_assert!(found.is_empty(), "{found:?}\nHTML: {html}\nMarkdown: {md}");
    }
}

proptest! {
    #![proptest_config(config(12))]

    #[test]
    fn the_tool_answers_the_same_markdown(html in html(true)) {
        runtime().block_on(async {
            let mut lib = Library::from_fixtures();
            let note = lib.items.iter_mut().find(|i| i["key"] == "RESCLP53").unwrap();
            note["data"]["note"] = json!(html);
            let (_emu, server) = start(lib, &[]).await;
            let a = server
                .call(
                    "zotero_get_notes",
                    json!({"item_key": "RESCLP53", "max_chars": 100_000}),
                )
                .await;
            let md = a.expect_ok()["notes"][0]["markdown"].as_str().unwrap().to_string();
            server.stop().await;
            prop_assert_eq!(md, note_to_markdown(&html));
            Ok(())
        })?;
    }
}

#[test]
fn the_known_tricks_are_inert() {
    for html in [
        "<a href=\"jav&#x61;script&colon;PWNURL()\">x</a>",
        "<a href=\"java\nscript:PWNURL()\">x</a>",
        "<svg><a xlink:href=\"javascript:PWNURL()\"><text>x</text></a></svg>",
        "<math><maction actiontype=\"statusline#http://e.org\" xlink:href=\"javascript:PWNURL()\">x</maction></math>",
        "<p><a href=\"https://e.org/)[y](javascript:alert(9)\">t</a></p>",
        "<p>[a](javascript:alert(1)) and <b>[b]</b>: javascript:x</p>",
        "<pre><code>`</code>&lt;script&gt;</pre>",
        "<p>x</p><plaintext><script>PWNSCRIPT</script><p>y",
        "<table><tr><td><script>PWNSCRIPT</script>|</td></tr></table>",
        "<noscript><img src=x onerror=PWNHANDLER()></noscript>",
        "<div><!--<script>PWNCOMMENT</script>--></div>",
        "<p><code>x<script>PWNSCRIPT</script><textarea>PWNSCRIPT</textarea></code></p>",
        "<x-custom><pre><script>PWNSCRIPT()</script></pre></x-custom>",
        "<h1><svg><title>PWNSCRIPT</title></svg>t</h1>",
        "<img src=\"https://tracker.example/p.gif\" alt=\"![x](javascript:alert(1))\">",
    ] {
        let md = note_to_markdown(html);
        let found = problems(&md, true);
        assert!(found.is_empty(), "{found:?}\nHTML: {html}\nMarkdown: {md}");
    }
}
