//! The workspace's floor plan and tidy rules, checked on the sources as text (`layering/source.rs`
//! says why not with `syn`): imports follow `pub use` re-exports and a parent's `child::Name`
//! paths to the file that defines the name (`layering/graph.rs`), and
//! - zotero-mcp's top-level modules import only downward in [`ORDER`], and `cli` not from
//!   `tools`;
//! - no circle among the modules of one folder, in any crate (at `src/`: among the crate's
//!   top-level modules); a parent and its children are one step of the tree;
//! - every file under `crates/*/src` opens with a `//!` comment;
//! - no file outside the emulator has more than 500 lines outside its tests;
//! - no function outside the emulator and [`LONG_FNS`] is longer than 100 lines.
//!
//! What today's code breaks and a later step of issue 37 mends is listed, each list with the
//! step that empties it. A list only shrinks: an entry that no longer matches fails the test
//! (delete it), so each list stays the to-do it is. `layering/rules_fail.rs` shows each rule
//! failing on small sources.

mod graph;
mod rules_fail;
mod source;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use graph::{circles, Arrow, Crate, BIN};

/// A list of names (modules, files) written in this file.
type Names = &'static [&'static str];

/// zotero-mcp's top-level modules, from the top floor down. A module imports from its own
/// folder and from floors below its own; not from the other modules of its floor, never from
/// above. (`cli` imports `transport`, so they are two floors; `log` imports `config`.)
const ORDER: &[Names] = &[
    &[BIN],
    &["cli"],
    &["transport", "tool_docs"],
    &["mcp"],
    &["tools"],
    &["service"],
    &["log"],
    &[
        "alloc", "budget", "config", "error", "notes", "text", "time",
    ],
];

/// Modules [`ORDER`] places that are not written yet; the test fails once one exists (move
/// it out of this list).
const NOT_YET: Names = &[
    // The one date conversion, `service/time.rs` today, once more than the service uses it.
    "time",
];

const PLAN: FloorPlan = FloorPlan {
    order: ORDER,
    // The CLI is the service's second face beside the tools: a workflow both need lives in
    // the service, not in a tool file.
    apart: &[("cli", "tools")],
    not_yet: NOT_YET,
};

/// Imports that climb [`ORDER`] today, as the test tells them: the importing file (under
/// `crates/zotero-mcp/src`), the imported module, the names it takes. Exact: a file that takes
/// other names, or no longer climbs, fails the test until its line is mended or deleted.
const KNOWN_CLIMBS: Names = &[
    // Step 1: `statuses` into `service/index/status.rs`; the CLI asks the service, not a tool.
    "cli/index.rs imports tools::index::search_database_status: SearchDatabaseStatusData, statuses",
    "cli/index.rs imports tools::index::semantic_search: SearchLibrary",
];

/// Circles among the modules of a folder that stay (crate, the modules as paths): the two
/// halves of zotero-api's client handle (`Library` borrows the client; the client hands out
/// `Library`).
const CIRCLES_ALLOWED: &[(&str, Names)] = &[("zotero-api", &["client", "routing"])];

/// Circles among the modules of a folder today.
#[rustfmt::skip]
const KNOWN_CIRCLES: &[(&str, Names)] = &[
    // Tied only by `error.rs` naming `crate::LibraryScope` (`answer.rs`, handed on by lib.rs)
    // in `DbError::NoLibrary`: the scope to a leaf (or into error.rs) unties it. Not in issue
    // 37's list; seen once re-exports were followed.
    ("zotero-db", &[
        "answer", "collections", "datafile", "error", "fulltext", "index", "listing", "reader",
        "schema", "snapshot",
    ]),
];

/// The crate the size rules leave alone: the emulator plays whole services in few files.
const EMULATOR: &str = "zotero-emulator";
const MAX_FILE_LINES: usize = 500;

/// Files over [`MAX_FILE_LINES`] today (path under `crates/`; its lines outside tests).
const LONG_FILES: &[&str] = &[
    // Issue 37 step 4 (zotero-api's floor plan: `write/`) splits it.
    "zotero-api/src/write.rs", // 507
];
const MAX_FN_LINES: usize = 100;

/// Functions over [`MAX_FN_LINES`] today (`path under crates/::fn`, its lines from `fn` to its
/// closing brace); issue 37 step 3 splits the workflows among them at their phases, and is
/// done when this list is shorter than the 26 of its review.
const LONG_FNS: &[&str] = &[
    "zotero-db/src/fixture/standard.rs::standard",   // 183
    "zotero-embed/src/bert.rs::cpu_fwd",             // 103
    "zotero-embed/src/lib.rs::load_with",            // 106
    "zotero-hub/src/cache.rs::get",                  // 112
    "zotero-hub/src/download.rs::download",          // 142
    "zotero-hub/src/download.rs::fetch_body",        // 132
    "zotero-index/src/rank/search.rs::search_inner", // 140
    "zotero-index/src/store/write.rs::upsert_inner", // 107
    "zotero-mcp/src/cli/add.rs::run",                // 107
    "zotero-mcp/src/cli/authorize.rs::run",          // 121
    "zotero-mcp/src/mcp/errors.rs::from",            // 172
    "zotero-mcp/src/service/identify/mod.rs::add_by_identifiers", // 228
    "zotero-mcp/src/service/items.rs::update_item",  // 110
    "zotero-mcp/src/service/research/graph/co_cited.rs::co_cited", // 103
    "zotero-mcp/src/service/research/graph/mod.rs::find_related", // 112
    "zotero-mcp/src/service/research/manuscript/cites/latex.rs::latex_command", // 105
    "zotero-mcp/src/service/index/search.rs::index_search", // 126
    "zotero-mcp/src/tools/index/search_database_status.rs::statuses", // 107
    "zotero-mcp/src/tools/items/item_markdown.rs::render", // 106
    "zotero-mcp/src/tools/items/metadata.rs::metadata", // 134
    "zotero-mcp/src/transport/http/mod.rs::serve",   // 137
];

/// The workspace's crates, read once for all tests. `LAYERING_CRATES_DIR` reads another
/// checkout's `crates/` (e.g. before a change).
fn workspace() -> &'static [Crate] {
    static CRATES: OnceLock<Vec<Crate>> = OnceLock::new();
    CRATES.get_or_init(|| {
        let dir = std::env::var_os("LAYERING_CRATES_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".."));
        let mut crates = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let src = path.join("src");
            if !src.is_dir() {
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            crates.push(Crate::new(&name, read_sources(&src)));
        }
        crates.sort_by(|a, b| a.name.cmp(&b.name));
        crates
    })
}

/// Every `.rs` file under `src`: (path under `src` with `/`, text), sorted.
fn read_sources(src: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(src).unwrap();
                let rel: Vec<_> = rel.iter().map(|c| c.to_string_lossy()).collect();
                out.push((rel.join("/"), std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn krate<'w>(crates: &'w [Crate], name: &str) -> &'w Crate {
    crates.iter().find(|c| c.name == name).unwrap()
}

/// A file's top-level module (`tools` for `tools/budget.rs`; `main.rs` for the binary); None
/// for the crate root.
fn top(krate: &Crate, file: usize) -> Option<&str> {
    krate.files[file].module.first().map(String::as_str)
}

/// The arrows from file to module with the names each takes, in `from -> to` order.
fn grouped<'a>(
    krate: &Crate,
    arrows: impl IntoIterator<Item = &'a Arrow>,
) -> BTreeMap<(String, String), BTreeSet<String>> {
    let mut out: BTreeMap<_, BTreeSet<_>> = BTreeMap::new();
    for a in arrows {
        let key = (krate.files[a.from].rel.clone(), krate.module_name(a.to));
        out.entry(key).or_default().insert(a.name.clone());
    }
    out
}

fn edge_line(from: &str, to: &str, names: &BTreeSet<String>) -> String {
    let names: Vec<_> = names.iter().map(String::as_str).collect();
    format!("{from} imports {to}: {}", names.join(", "))
}

/// zotero-mcp's floor plan: [`ORDER`] from the top floor down, and pairs of top-level modules
/// where the first never imports the second although it stands above it.
struct FloorPlan {
    order: &'static [Names],
    apart: &'static [(&'static str, &'static str)],
    not_yet: Names,
}

/// Where `krate`'s imports break `plan`: climbs (an import of the same floor or one above, or
/// of a module kept `apart`) not in `known`, modules with no floor, and the entries of
/// `known` and of `plan.not_yet` that are stale.
fn folder_order(krate: &Crate, plan: &FloorPlan, known: Names) -> Vec<String> {
    let floor = |module: &str| plan.order.iter().position(|f| f.contains(&module));
    let mut found = Vec::new();
    let tops: BTreeSet<&str> = (0..krate.files.len())
        .filter(|&f| !krate.files[f].test)
        .filter_map(|f| top(krate, f))
        .collect();
    for module in &tops {
        if floor(module).is_none() {
            found.push(format!(
                "top-level module `{module}` has no floor in ORDER: place it"
            ));
        }
    }
    for module in plan.order.iter().flat_map(|f| f.iter()) {
        match (tops.contains(module), plan.not_yet.contains(module)) {
            (false, false) => found.push(format!("ORDER names `{module}`, which is no module")),
            (true, true) => found.push(format!("`{module}` exists now: take it out of NOT_YET")),
            _ => {}
        }
    }
    let arrows = krate.arrows();
    let climbs = arrows
        .iter()
        .filter(|a| match (top(krate, a.from), top(krate, a.to)) {
            // A module with no floor is told above, once.
            (Some(from), Some(to)) => match (floor(from), floor(to)) {
                (Some(f), Some(t)) => from != to && (t <= f || plan.apart.contains(&(from, to))),
                _ => false,
            },
            // The crate root declares and hands on: it stands above every module.
            (Some(_), None) => true,
            (None, _) => false,
        });
    let mut untouched: BTreeSet<&str> = known.iter().copied().collect();
    for ((from, to), names) in grouped(krate, climbs) {
        let line = edge_line(&from, &to, &names);
        if untouched.remove(line.as_str()) || known.contains(&line.as_str()) {
            continue;
        }
        let head = format!("{from} imports {to}:");
        match known.iter().find(|k| k.starts_with(&head)) {
            Some(k) => {
                untouched.remove(k);
                found.push(format!("{line} (KNOWN_CLIMBS has \"{k}\")"));
            }
            None => found.push(line),
        }
    }
    for k in untouched {
        found.push(format!(
            "\"{k}\" is no longer true: mend or delete it in KNOWN_CLIMBS"
        ));
    }
    found
}

/// Where an arrow runs in the tree: the folder (module) in which its two ends part, and the
/// two modules of that folder they lie in. None between a module and one of its ancestors: a
/// parent and its children are one step of the tree (a child takes the parent's shared
/// names, the parent hands on and calls its children).
fn siblings(krate: &Crate, a: &Arrow) -> Option<(Vec<String>, String, String)> {
    let (from, to) = (&krate.files[a.from].module, &krate.files[a.to].module);
    let common = from.iter().zip(to).take_while(|(f, t)| f == t).count();
    let (f, t) = (from.get(common)?, to.get(common)?);
    let folder = from[..common].to_vec();
    let path = |m: &String| {
        [folder.as_slice(), std::slice::from_ref(m)]
            .concat()
            .join("::")
    };
    Some((folder.clone(), path(f), path(t)))
}

/// Circles among the modules of one folder, at every folder of every crate (at `src/`: among
/// the crate's top-level modules), but those `allowed` or `known` (crate, its modules as
/// paths); each with the imports that tie it, and the `known` entries that match no circle.
fn folder_circles(
    crates: &[Crate],
    allowed: &[(&'static str, Names)],
    known: &[(&'static str, Names)],
) -> Vec<String> {
    let mut found = Vec::new();
    let mut seen = Vec::new();
    for krate in crates {
        let arrows = krate.arrows();
        let mut graphs: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        let mut node = BTreeMap::new();
        for a in &arrows {
            if let Some((folder, f, t)) = siblings(krate, a) {
                let graph = graphs.entry(folder).or_default();
                graph.entry(f.clone()).or_default().insert(t.clone());
                node.insert(a, (f, t));
            }
        }
        for circle in graphs.values().flat_map(circles) {
            let same = |(c, list): &&(&str, Names)| {
                *c == krate.name
                    && list.len() == circle.len()
                    && list.iter().all(|n| circle.contains(*n))
            };
            if let Some(k) = known.iter().find(same) {
                seen.push(k);
                continue;
            }
            if allowed.iter().any(|e| same(&e)) {
                continue;
            }
            let inside = arrows.iter().filter(|a| {
                node.get(a)
                    .is_some_and(|(f, t)| circle.contains(f) && circle.contains(t))
            });
            let ties: Vec<_> = grouped(krate, inside)
                .iter()
                .map(|((from, to), names)| format!("  {}", edge_line(from, to, names)))
                .collect();
            let names: Vec<_> = circle.iter().map(String::as_str).collect();
            found.push(format!(
                "{}: circle among {:?}, tied by\n{}",
                krate.name,
                names,
                ties.join("\n")
            ));
        }
    }
    for k in known.iter().filter(|k| !seen.contains(k)) {
        found.push(format!("the known circle {k:?} is no more: delete it"));
    }
    found
}

fn files_without_doc(crates: &[Crate]) -> Vec<String> {
    let mut found = Vec::new();
    for krate in crates {
        for f in &krate.files {
            if !f.text.starts_with("//!") {
                found.push(format!(
                    "{}/src/{}: does not open with `//!` (say what the file is for)",
                    krate.name, f.rel
                ));
            }
        }
    }
    found
}

/// Files over `max` lines outside their tests but the `allowed`, and the `allowed` that are
/// no longer over `max`.
fn long_files(crates: &[Crate], max: usize, allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut listed: BTreeSet<&str> = allowed.iter().copied().collect();
    for krate in crates.iter().filter(|c| c.name != EMULATOR) {
        for f in &krate.files {
            let lines = f.production_lines();
            let name = format!("{}/src/{}", krate.name, f.rel);
            if lines > max && !listed.remove(name.as_str()) {
                found.push(format!(
                    "{name}: {lines} lines outside its tests (at most {max}): split it at a seam"
                ));
            }
        }
    }
    for name in listed {
        found.push(format!(
            "{name}: no longer over {max} lines (or gone): delete it from LONG_FILES"
        ));
    }
    found
}

/// Functions over `max` lines but the `allowed` (`path::fn`), and the `allowed` that are no
/// longer over `max`.
fn long_fns(crates: &[Crate], max: usize, allowed: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut listed: BTreeSet<&str> = allowed.iter().copied().collect();
    for krate in crates.iter().filter(|c| c.name != EMULATOR) {
        for f in krate.files.iter().filter(|f| !f.test) {
            for func in f.functions.iter().filter(|func| func.lines > max) {
                let name = format!("{}/src/{}::{}", krate.name, f.rel, func.name);
                if !listed.remove(name.as_str()) && !allowed.contains(&name.as_str()) {
                    found.push(format!(
                        "{name}: {} lines from its `fn` at line {} (at most {max}): split it at \
                         its phases",
                        func.lines, func.line
                    ));
                }
            }
        }
    }
    for name in listed {
        found.push(format!(
            "{name}: no longer over {max} lines (or gone): delete it from LONG_FNS"
        ));
    }
    found
}

fn assert_none(rule: &str, found: Vec<String>) {
    assert!(found.is_empty(), "{rule}:\n{}", found.join("\n"));
}

#[test]
fn zotero_mcp_imports_only_downward() {
    let krate = krate(workspace(), "zotero-mcp");
    assert_none(
        "imports that climb zotero-mcp's floors (move the name down to a floor both can \
         import, or call downward)",
        folder_order(krate, &PLAN, KNOWN_CLIMBS),
    );
}

#[test]
fn no_circle_among_the_modules_of_a_folder() {
    assert_none(
        "import circles (move the shared names into a leaf module, or into the lower one)",
        folder_circles(workspace(), CIRCLES_ALLOWED, KNOWN_CIRCLES),
    );
}

#[test]
fn every_file_opens_with_a_doc_comment() {
    assert_none(
        "files without a `//!` opening",
        files_without_doc(workspace()),
    );
}

#[test]
fn no_file_over_500_lines_outside_tests() {
    assert_none(
        "long files",
        long_files(workspace(), MAX_FILE_LINES, LONG_FILES),
    );
}

#[test]
fn no_function_over_100_lines_but_the_listed() {
    assert_none(
        "long functions",
        long_fns(workspace(), MAX_FN_LINES, LONG_FNS),
    );
}
