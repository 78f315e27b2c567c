//! What checking a long draft costs: a 100-page Markdown draft (about 300,000 characters)
//! with 300 citations (540 cited keys) of 150 items and 60 quotations, checked with one call of
//! `zotero_check_manuscript` against a library of 2,150 items whose 150 cited items each
//! have a 2-page PDF text of 30,000 characters: the time of the call (first and repeated),
//! the requests it sent to Zotero, and the answer's counts.
//!
//! Then one-paragraph drafts of 200 kB, 1 MB and 5 MB (the bound; short lines, no blank
//! line, no citation): the time of a call, which grew with the square of the size while the
//! paragraph was scanned to its end at every character (issue 35).
//!
//! A plain binary (`harness = false`): it prints figures and asserts nothing but the
//! answer's shape. Run with `cargo bench --bench manuscript` (or, for a debug build's
//! figures, `cargo test --bench manuscript`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod support;

use std::time::Instant;

use serde_json::{json, Value};
use support::Proc;
use zotero_emulator::{Emulator, FullText, Library};

const CITED: usize = 150;
const CITATIONS: usize = 300;
const QUOTATIONS: usize = 60;
const PAGES: usize = 100;
const PAGE_CHARS: usize = 3_000;
const ROUNDS: usize = 3;

/// A Zotero key for the n-th item (`M` + 7 characters of the key alphabet).
fn key(prefix: char, n: usize) -> String {
    const ALPHABET: &[u8] = b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";
    let mut k = String::from(prefix);
    let mut x = n;
    for _ in 0..7 {
        k.push(ALPHABET[x % ALPHABET.len()] as char);
        x /= ALPHABET.len();
    }
    k
}

/// The text of item n's PDF: two pages of sentences that differ from item to item.
fn pdf_text(n: usize) -> String {
    let mut page = String::new();
    let mut s = 0;
    while page.len() < 15_000 {
        page.push_str(&format!(
            "Sentence {s} of paper {n} reports that the measured effect of treatment {} \
             on outcome {} was consistent across the cohorts we studied. ",
            (s * 7 + n) % 97,
            (s * 13 + n) % 89
        ));
        s += 1;
    }
    format!("{page}\u{c}{}", page.replace("Sentence", "Finding"))
}

fn library() -> Library {
    let mut lib = Library::synthetic(2_000, 11);
    for n in 0..CITED {
        let item = key('M', n);
        let pdf = key('P', n);
        lib.items
            .push(json!({"key": item, "version": 1, "meta": {}, "links": {},
            "data": {"key": item, "version": 1, "itemType": "journalArticle",
                "title": format!("Paper number {n} on effects"), "creators": [], "tags": [],
                "collections": [], "relations": {}, "citationKey": format!("author{n}paper"),
                "dateAdded": "2024-01-01T00:00:00Z", "dateModified": "2024-01-01T00:00:00Z"}}));
        lib.items.push(json!({"key": pdf, "version": 1, "meta": {}, "links": {},
            "data": {"key": pdf, "version": 1, "itemType": "attachment", "parentItem": item,
                "linkMode": "imported_file", "title": "Full Text PDF", "contentType": "application/pdf",
                "filename": "paper.pdf", "tags": [], "relations": {},
                "dateAdded": "2024-01-01T00:00:00Z", "dateModified": "2024-01-01T00:00:00Z"}}));
        lib.fulltext.insert(pdf, FullText::pdf(&pdf_text(n), 2, 2));
    }
    lib
}

/// The draft: 100 pages of prose, 3 citations a page, a quotation every 5 citations (every
/// fourth of them reworded, every tenth not in the paper).
fn draft() -> String {
    let mut out = String::new();
    let filler = "The literature on this question is broad and the methods vary widely. ";
    for page in 0..PAGES {
        let mut text = String::new();
        for c in 0..CITATIONS / PAGES {
            let i = page * (CITATIONS / PAGES) + c;
            let n = i % CITED;
            if i.is_multiple_of(CITATIONS / QUOTATIONS) {
                let q = i / (CITATIONS / QUOTATIONS);
                let s = (q * 3) % 40;
                let quote = match q % 10 {
                    9 => "an effect nobody ever measured in any cohort at all".to_string(),
                    3 | 7 => format!(
                        "Sentence {s} of paper {n} reports that the measured effect of treatment {} \
                         upon outcome {}",
                        (s * 7 + n) % 97,
                        (s * 13 + n) % 89
                    ),
                    _ => format!(
                        "Sentence {s} of paper {n} reports that the measured effect of treatment {} \
                         on outcome {} … across the cohorts",
                        (s * 7 + n) % 97,
                        (s * 13 + n) % 89
                    ),
                };
                text.push_str(&format!("As shown, “{quote}” [@author{n}paper, p. 1]. "));
            } else {
                text.push_str(&format!(
                    "Prior work agrees [@author{n}paper; see also @author{}paper]. ",
                    (n + 1) % CITED
                ));
            }
        }
        while text.len() < PAGE_CHARS {
            text.push_str(filler);
        }
        out.push_str(&format!("## Page {page}\n\n{text}\n\n"));
    }
    out
}

fn main() {
    let (bin, rt) = support::setup();
    let emu = rt.block_on(Emulator::with_library(library()));
    let base = emu.uri();
    let text = draft();
    println!(
        "draft: {} characters, {PAGES} pages; library: {} items ({CITED} cited, each a 2-page PDF text)",
        text.chars().count(),
        2_000 + CITED
    );
    // The cited items carry no DOI, so no retraction is asked of Crossref; were one asked,
    // it would go to the emulator's, never to the internet.
    let mut server = Proc::spawn(
        &bin,
        &base,
        &[
            ("ZOTERO_CROSSREF_BASE", emu.crossref_base()),
            ("ZOTERO_FETCH_ALLOW_PRIVATE", "1".to_string()),
        ],
    );
    server.initialize();
    for round in 1..=ROUNDS {
        let before = emu.requests().len();
        let t = Instant::now();
        let answer: Value = server.request(
            "tools/call",
            json!({"name": "zotero_check_manuscript", "arguments": {"text": text, "problems_only": true}}),
        );
        let elapsed = t.elapsed();
        let sent = emu.requests().len() - before;
        let envelope: Value = match answer["result"].get("structuredContent") {
            Some(v) => v.clone(),
            None => serde_json::from_str(
                answer["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or("null"),
            )
            .unwrap_or(Value::Null),
        };
        let summary = &envelope["data"]["summary"];
        assert!(summary.is_object(), "{answer}");
        println!(
            "round {round}: {:.0} ms, {sent} requests to Zotero (the answer counts {}); \
             {} citations ({} resolved), {} quotations ({} exact, {} fuzzy, {} not found)",
            elapsed.as_secs_f64() * 1000.0,
            summary["requests"],
            summary["citations"],
            summary["resolved"],
            summary["quotations"],
            summary["exact"],
            summary["fuzzy"],
            summary["not_found"],
        );
    }
    for bytes in [200_000, 1_000_000, 5_000_000] {
        let text = one_paragraph(bytes);
        let t = Instant::now();
        let answer: Value = server.request(
            "tools/call",
            json!({"name": "zotero_check_manuscript", "arguments": {"text": text}}),
        );
        let elapsed = t.elapsed();
        let ok = answer["result"]["structuredContent"]["ok"] == json!(true);
        assert!(ok, "{answer}");
        println!(
            "one paragraph of {} bytes: {:.0} ms",
            text.len(),
            elapsed.as_secs_f64() * 1000.0
        );
    }
    server.stop();
}

/// A draft of at most `bytes` bytes written as one paragraph: short lines, no blank line.
fn one_paragraph(bytes: usize) -> String {
    let line = "A short line of a draft written as one long paragraph, \"quoted\" or not\n";
    line.repeat(bytes / line.len())
}
