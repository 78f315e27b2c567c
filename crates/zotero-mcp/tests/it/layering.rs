//! No import circle inside any crate of the workspace, except the client <-> routing pair
//! of zotero-api's handle pattern: each crate's modules are read as text, every
//! `crate::`/`super::`/`self::` path (in `use` trees and inline) is an arrow to the module
//! file it names, and a circle of arrows fails the test with its files.
//!
//! Test code (`#[cfg(test)]` modules) is left out. Not seen: a name a parent module
//! re-exports (an arrow to the parent, not to the module that defines it), and a parent's
//! own `child::name` paths (a parent and its children are read as one step of the tree).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The circles the layering rules allow: the two halves of zotero-api's client handle.
const ALLOWED: &[&[&str]] = &[&["zotero-api/src/client.rs", "zotero-api/src/routing.rs"]];

/// Module path (`["local", "z10"]`) → file, for the crate whose sources are in `src`.
fn modules(src: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().and_then(|e| e.to_str()) != Some("rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The source without comments and without its `#[cfg(test)]` items.
fn production_code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let code = line.split("//").next().unwrap_or("");
        if code.trim() == "#[cfg(test)]" {
            match lines.peek() {
                // `mod tests;`: one line.
                Some(next) if next.trim_end().ends_with(';') => {
                    lines.next();
                    continue;
                }
                // An inline test module runs to the end of the file (the crate's style).
                _ => break,
            }
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reads a `use` tree at `s` (after `prefix::`) and calls `f` with each full path.
fn use_tree(s: &str, prefix: &[String], f: &mut dyn FnMut(Vec<String>)) -> usize {
    let mut path = prefix.to_vec();
    let mut i = 0;
    let b = s.as_bytes();
    loop {
        while i < b.len() && (b[i] as char).is_whitespace() {
            i += 1;
        }
        if i < b.len() && b[i] == b'{' {
            i += 1;
            loop {
                i += use_tree(&s[i..], &path, f);
                while i < b.len() && (b[i] as char).is_whitespace() {
                    i += 1;
                }
                match b.get(i) {
                    Some(b',') => i += 1,
                    Some(b'}') => {
                        i += 1;
                        break;
                    }
                    _ => break,
                }
                while i < b.len() && (b[i] as char).is_whitespace() {
                    i += 1;
                }
                if b.get(i) == Some(&b'}') {
                    i += 1;
                    break;
                }
            }
            return i;
        }
        let start = i;
        while i < b.len() && is_ident(b[i] as char) {
            i += 1;
        }
        if start == i {
            f(path);
            return i;
        }
        path.push(s[start..i].to_string());
        if s[i..].starts_with("::") {
            i += 2;
            continue;
        }
        f(path);
        return i;
    }
}

/// The module files that module `module` imports within its crate.
fn arrows(
    module: &[String],
    code: &str,
    mods: &BTreeMap<Vec<String>, PathBuf>,
) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let parent = module[..module.len().saturating_sub(1)].to_vec();
    let mut resolve = |full: Vec<String>| {
        // The longest prefix that names a module file.
        let mut best = None;
        for n in 0..=full.len() {
            if let Some(p) = mods.get(&full[..n]) {
                best = Some(p.clone());
            }
        }
        if let Some(p) = best {
            out.insert(p);
        }
    };
    let prefixes = [
        ("crate::", Vec::new()),
        ("super::", parent),
        ("self::", module.to_vec()),
    ];
    for (kw, base) in prefixes {
        let mut from = 0;
        while let Some(pos) = code[from..].find(kw) {
            let at = from + pos;
            from = at + kw.len();
            // `a::b::` is not `b::`.
            if code[..at]
                .chars()
                .next_back()
                .is_some_and(|c| is_ident(c) || c == ':')
            {
                continue;
            }
            let mut prefix = base.clone();
            let mut rest = &code[at + kw.len()..];
            if kw == "super::" {
                while let Some(r) = rest.strip_prefix("super::") {
                    prefix.pop();
                    rest = r;
                }
            }
            use_tree(rest, &prefix, &mut |p| resolve(p));
        }
    }
    out
}

/// Strongly connected components of more than one file (Tarjan).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<BTreeSet<PathBuf>> {
    struct T<'g> {
        g: &'g BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'g PathBuf, usize>,
        low: BTreeMap<&'g PathBuf, usize>,
        stack: Vec<&'g PathBuf>,
        on: BTreeSet<&'g PathBuf>,
        out: Vec<BTreeSet<PathBuf>>,
    }
    fn visit<'g>(t: &mut T<'g>, v: &'g PathBuf) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for w in t.g.get(v).into_iter().flatten() {
            let Some((w, _)) = t.g.get_key_value(w) else {
                continue;
            };
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut c = BTreeSet::new();
            while let Some(w) = t.stack.pop() {
                t.on.remove(w);
                c.insert(w.clone());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                t.out.push(c);
            }
        }
    }
    let mut t = T {
        g: graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            visit(&mut t, v);
        }
    }
    t.out
}

#[test]
fn no_import_circle_inside_a_crate_but_the_client_handle() {
    // `LAYERING_CRATES_DIR` checks another checkout's `crates/` (e.g. before a change).
    let crates = std::env::var_os("LAYERING_CRATES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .unwrap()
                .into()
        });
    let crates = crates.as_path();
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let src = entry.unwrap().path().join("src");
        if !src.is_dir() {
            continue;
        }
        let mods = modules(&src);
        let mut graph = BTreeMap::new();
        for (module, file) in &mods {
            let code = production_code(&std::fs::read_to_string(file).unwrap());
            let mut to = arrows(module, &code, &mods);
            to.remove(file);
            graph.insert(file.clone(), to);
        }
        for circle in circles(&graph) {
            let names: Vec<String> = circle
                .iter()
                .map(|p| {
                    p.strip_prefix(crates)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            let allowed = ALLOWED
                .iter()
                .any(|a| a.len() == names.len() && a.iter().all(|n| names.iter().any(|m| m == n)));
            if !allowed {
                found.push(names.join(" <-> "));
            }
        }
    }
    assert!(
        found.is_empty(),
        "import circles (move the shared types or consts into a leaf module, or into the \
         lower file):\n{}",
        found.join("\n")
    );
}

#[test]
fn a_circle_is_seen() {
    let mut g = BTreeMap::new();
    let (a, b, c) = (PathBuf::from("a"), PathBuf::from("b"), PathBuf::from("c"));
    g.insert(a.clone(), BTreeSet::from([b.clone()]));
    g.insert(b.clone(), BTreeSet::from([a.clone(), c.clone()]));
    g.insert(c.clone(), BTreeSet::new());
    assert_eq!(circles(&g), vec![BTreeSet::from([a, b])]);
    let mut seen = Vec::new();
    use_tree("x::{y, z::{w, v}};", &["m".to_string()], &mut |p| {
        seen.push(p.join("::"))
    });
    assert_eq!(seen, ["m::x::y", "m::x::z::w", "m::x::z::v"]);
}
