//! Prints a file's pages as zotero-text reads them (for the quality bench and for trying
//! files by hand): `cargo run --release -p zotero-text --example extract -- FILE [--json]`.
//! Pages are separated by form feeds, as pdftotext separates them; `--json` prints one
//! object per page (index, label, status, the running headers/footers marked, text) on its
//! own line instead.
#![allow(clippy::print_stdout)]

use std::process::ExitCode;

use zotero_text::{extract, sniff, DocumentKind, Limits};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: extract FILE [--json]");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            return ExitCode::from(2);
        }
    };
    // The first bytes say the kind; else the name's extension (an EPUB whose `mimetype`
    // entry carries an extra field is not sniffed).
    let kind = sniff(&bytes).unwrap_or(if path.ends_with(".epub") {
        DocumentKind::Epub
    } else if path.ends_with(".pdf") {
        DocumentKind::Pdf
    } else {
        DocumentKind::Text
    });
    match extract(&bytes, kind, &Limits::default()) {
        Ok(doc) => {
            let json = args.iter().any(|a| a == "--json");
            let running = zotero_text::running::running_lines(&doc);
            for (page, marks) in doc.pages.iter().zip(&running) {
                if json {
                    let marked: Vec<&str> = marks
                        .iter()
                        .filter_map(|&(s, e)| page.text.get(s as usize..e as usize))
                        .collect();
                    println!(
                        "{{\"index\":{},\"label\":{:?},\"status\":\"{:?}\",\"glyphs\":{},\"running\":{:?},\"text\":{:?}}}",
                        page.index,
                        page.label,
                        page.status,
                        page.glyphs.len(),
                        marked,
                        page.text
                    );
                } else {
                    print!("{}\n\x0c", page.text);
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            ExitCode::from(1)
        }
    }
}
