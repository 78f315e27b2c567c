//! Writes the hostile files of `tests/support/hostile.rs` to a folder, for the figures of
//! the README's bounds section: `cargo run --release -p zotero-text --example hostile -- DIR
//! [NAME…]`, then each file through `examples/extract.rs` under `/usr/bin/time -v`
//! (`benches/hostile.sh` does both).
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "../tests/support/mod.rs"]
mod support;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: hostile DIR [NAME…]");
        std::process::exit(2);
    };
    std::fs::create_dir_all(dir).unwrap();
    for case in support::hostile::cases() {
        if args.len() > 1 && !args[1..].iter().any(|a| a == case.name) {
            continue;
        }
        let ext = match case.kind {
            zotero_text::DocumentKind::Pdf => "pdf",
            zotero_text::DocumentKind::Epub => "epub",
            zotero_text::DocumentKind::Html => "html",
            zotero_text::DocumentKind::Text => "txt",
        };
        let bytes = (case.make)();
        let path = format!("{dir}/{}.{ext}", case.name);
        std::fs::write(&path, &bytes).unwrap();
        println!("{path} {}", bytes.len());
    }
}
