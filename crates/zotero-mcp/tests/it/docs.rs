//! The documentation says what the server does: the README's table of tools and
//! `docs/tools.md` are what the server's own tool table writes (`zotero-mcp tools
//! --readme-table` / `--markdown`), the table of Zotero requests in `docs/using-the-tools.md`
//! names exactly the tools served, the README stays a front door (≤ 15 KB), and every relative
//! link in the README, CONTRIBUTING.md and `docs/` leads to a file that exists.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use zotero_mcp::tool_docs::{readme_table, reference, README_BEGIN, README_END};
use zotero_mcp::tools::ToolName;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

#[test]
fn readme_table_is_the_servers_tool_list() {
    let readme = read("README.md");
    let begin = readme
        .find(README_BEGIN)
        .expect("README has the tools:begin marker")
        + README_BEGIN.len();
    let end = readme
        .find(README_END)
        .expect("README has the tools:end marker");
    let block = readme[begin..end].trim();
    assert_eq!(
        block,
        readme_table().trim(),
        "README's table of tools is out of date: paste `cargo run -q -- tools --readme-table` between the markers"
    );
}

#[test]
fn tools_reference_is_the_servers_tool_list() {
    assert!(
        read("docs/tools.md") == reference(),
        "docs/tools.md is out of date: run `cargo run -q -- tools --markdown > docs/tools.md`"
    );
}

#[test]
fn zotero_requests_table_names_every_tool_once() {
    let page = read("docs/using-the-tools.md");
    let listed: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| `zotero_"))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    let listed_set: BTreeSet<String> = listed.iter().map(|n| format!("zotero_{n}")).collect();
    assert_eq!(listed.len(), listed_set.len(), "a tool listed twice");
    let served: BTreeSet<String> = ToolName::ALL.iter().map(|t| t.name().to_string()).collect();
    assert_eq!(
        listed_set, served,
        "docs/using-the-tools.md's table of Zotero requests"
    );
}

#[test]
fn readme_is_a_front_door() {
    let len = read("README.md").len();
    assert!(
        len <= 15 * 1024,
        "README.md is {len} bytes; move detail to docs/"
    );
}

/// `[text](target)` links whose target is a relative path (no scheme, no bare anchor).
fn relative_links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = &rest[..end];
        if !target.contains("://")
            && !target.starts_with('#')
            && !target.starts_with("mailto:")
            && !target.contains(' ')
            && !target.is_empty()
        {
            out.push(target.split('#').next().unwrap_or(target).to_string());
        }
    }
    out
}

#[test]
fn relative_links_lead_to_files() {
    let mut pages: Vec<PathBuf> = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut broken = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let dir = page.parent().unwrap_or(Path::new("."));
        for target in relative_links(&text) {
            if !dir.join(&target).exists() {
                broken.push(format!("{} → {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
}
