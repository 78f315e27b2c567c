//! A crate's module files and the arrows between them: every `crate::`/`super::`/`self::`
//! path, every path through a child module or through a name a `use` binds, followed through
//! the `use` and `pub use` bindings of the modules it passes to the file that defines the name
//! it ends at. An import of `crate::tools::json_chars` that `tools/mod.rs` re-exports from
//! `tools/budget.rs` is an arrow to `tools/budget.rs`, named `json_chars`.
//!
//! Test code (`#[cfg(test)]` items and the files of `#[cfg(test)] mod`s) draws no arrow.

use std::collections::{BTreeMap, BTreeSet};

use super::source::{self, FnSpan, UseLeaf};

/// The module path of a binary root (`main.rs` beside a `lib.rs`): not an identifier, so no
/// path of the library names it; its `<lib>::` paths are read as `crate::`.
pub const BIN: &str = "main.rs";

/// How many bindings a path is followed through before it is taken as leading nowhere (a
/// loop of re-exports).
const MAX_HOPS: usize = 16;

pub struct File {
    /// The path under the crate's `src/`, with `/`.
    pub rel: String,
    pub module: Vec<String>,
    pub text: String,
    /// The file of a `#[cfg(test)] mod`, or of a module under one.
    pub test: bool,
    /// Lines of the file's own `#[cfg(test)]` items.
    pub test_lines: usize,
    pub functions: Vec<FnSpan>,
    /// The `#[cfg(test)] mod name;` it declares.
    test_mods: Vec<String>,
    uses: Vec<UseLeaf>,
    paths: Vec<Vec<String>>,
    defs: BTreeSet<String>,
}

impl File {
    /// Lines outside test code: none in a test file.
    pub fn production_lines(&self) -> usize {
        if self.test {
            0
        } else {
            self.text.lines().count().saturating_sub(self.test_lines)
        }
    }
}

/// One import of a name: `from` and `to` index [`Crate::files`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Arrow {
    pub from: usize,
    pub to: usize,
    pub name: String,
}

/// Where a path leads inside the crate.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Module(Vec<String>),
    /// A name the module's file defines (or holds from outside the crate), and that name.
    Item(Vec<String>, String),
}

pub struct Crate {
    /// The crate's folder name (`zotero-mcp`).
    pub name: String,
    /// Its library's name in paths (`zotero_mcp`).
    lib: String,
    pub files: Vec<File>,
    /// Production module path → index in `files`.
    modules: BTreeMap<Vec<String>, usize>,
}

impl Crate {
    /// A crate from its `src/` files: (path under `src/` with `/`, text).
    pub fn new(name: &str, sources: Vec<(String, String)>) -> Crate {
        let has_lib = sources.iter().any(|(rel, _)| rel == "lib.rs");
        let mut files: Vec<File> = sources
            .into_iter()
            .map(|(rel, text)| read(rel, text, has_lib))
            .collect();
        // The files of `#[cfg(test)] mod name;` and all below them.
        let mut test_roots = Vec::new();
        for f in &files {
            for name in &f.test_mods {
                test_roots.push([f.module.as_slice(), std::slice::from_ref(name)].concat());
            }
        }
        for f in &mut files {
            f.test = test_roots.iter().any(|root| f.module.starts_with(root));
        }
        let modules = files
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.test)
            .map(|(k, f)| (f.module.clone(), k))
            .collect();
        Crate {
            name: name.to_string(),
            lib: name.replace('-', "_"),
            files,
            modules,
        }
    }

    fn file(&self, module: &[String]) -> Option<&File> {
        self.modules.get(module).and_then(|&k| self.files.get(k))
    }

    /// The module path as Rust writes it from the crate root (`tools::budget`; `crate` for
    /// the root).
    pub fn module_name(&self, file: usize) -> String {
        let module = &self.files[file].module;
        if module.is_empty() {
            "crate".to_string()
        } else {
            module.join("::")
        }
    }

    /// Every import of a name between two different production files.
    pub fn arrows(&self) -> Vec<Arrow> {
        let mut out = BTreeSet::new();
        for (module, &from) in &self.modules {
            let file = &self.files[from];
            let mut add = |target: Option<Target>| {
                let (m, name) = match target {
                    Some(Target::Module(m)) => {
                        let name = m.last().cloned().unwrap_or_else(|| "crate".into());
                        (m, name)
                    }
                    Some(Target::Item(m, name)) => (m, name),
                    None => return,
                };
                if let Some(&to) = self.modules.get(&m) {
                    if to != from {
                        out.insert(Arrow { from, to, name });
                    }
                }
            };
            for leaf in &file.uses {
                let target = self.resolve(module, &leaf.path, 0);
                match (&target, &leaf.binds) {
                    // A glob takes the whole module.
                    (Some(Target::Module(m)), _) if leaf.glob => {
                        add(Some(Target::Item(m.clone(), "*".into())))
                    }
                    // A module bound to a name: the paths through that name are the arrows.
                    (Some(Target::Module(_)), _) | (_, None) | (None, _) => {}
                    (Some(Target::Item(..)), Some(_)) => add(target),
                }
            }
            for path in &file.paths {
                add(self.resolve(module, path, 0));
            }
        }
        out.into_iter().collect()
    }

    /// Where `path`, written in `from`, leads: None for an outside crate, a local name or a
    /// type's associated item (`Self::new`).
    fn resolve(&self, from: &[String], path: &[String], hops: usize) -> Option<Target> {
        let (first, mut rest) = path.split_first()?;
        if hops > MAX_HOPS {
            return None;
        }
        let base = match first.as_str() {
            "crate" => Vec::new(),
            name if name == self.lib && from == [BIN] => Vec::new(),
            "self" => from.to_vec(),
            "super" => {
                let mut base = from.to_vec();
                base.pop();
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base
            }
            _ => {
                let child = [from, std::slice::from_ref(first)].concat();
                if self.modules.contains_key(&child) {
                    child
                } else {
                    // A name this file's `use` binds (not a crate binding itself: `use serde;`).
                    let leaf = self.file(from)?.uses.iter().find(|u| {
                        u.binds.as_ref() == Some(first) && u.path.as_slice() != [first.clone()]
                    })?;
                    match self.resolve(from, &leaf.path, hops + 1)? {
                        Target::Module(m) => m,
                        item => return Some(item),
                    }
                }
            }
        };
        self.walk(base, rest, hops)
    }

    /// From module `module` down `rest`: into child modules, then to the file that defines
    /// the next name, through the bindings of the files passed.
    fn walk(&self, module: Vec<String>, rest: &[String], hops: usize) -> Option<Target> {
        let Some((name, more)) = rest.split_first() else {
            return Some(Target::Module(module));
        };
        if name == "self" {
            return self.walk(module, more, hops);
        }
        let child = [module.as_slice(), std::slice::from_ref(name)].concat();
        if self.modules.contains_key(&child) {
            return self.walk(child, more, hops);
        }
        let file = self.file(&module)?;
        let item = |module| Some(Target::Item(module, name.clone()));
        if file.defs.contains(name) || hops >= MAX_HOPS {
            return item(module);
        }
        if let Some(leaf) = file.uses.iter().find(|u| u.binds.as_ref() == Some(name)) {
            return match self.resolve(&module, &leaf.path, hops + 1) {
                Some(Target::Module(m)) => self.walk(m, more, hops + 1),
                Some(item) => Some(item),
                // Held from an outside crate: this file hands it on.
                None => item(module),
            };
        }
        for glob in file.uses.iter().filter(|u| u.glob) {
            if let Some(Target::Module(m)) = self.resolve(&module, &glob.path, hops + 1) {
                if self.provides(&m, name, hops + 1) {
                    return self.walk(m, rest, hops + 1);
                }
            }
        }
        // Not seen where it is defined (a macro's item, say): the file it was asked of.
        item(module)
    }

    /// Whether `name` can be reached in module `module`: a child, a definition or a binding.
    fn provides(&self, module: &[String], name: &String, hops: usize) -> bool {
        let child = [module, std::slice::from_ref(name)].concat();
        let Some(file) = self.file(module) else {
            return false;
        };
        self.modules.contains_key(&child)
            || file.defs.contains(name)
            || file.uses.iter().any(|u| u.binds.as_ref() == Some(name))
            || (hops < MAX_HOPS
                && file.uses.iter().filter(|u| u.glob).any(|g| {
                    match self.resolve(module, &g.path, hops + 1) {
                        Some(Target::Module(m)) => self.provides(&m, name, hops + 1),
                        _ => false,
                    }
                }))
    }
}

fn read(rel: String, text: String, has_lib: bool) -> File {
    let mut module: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if module.len() == 1 && module[0] == "main" && has_lib {
        module = vec![BIN.to_string()];
    } else if matches!(
        module.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        module.pop();
    }
    let blanked = source::blank(&text);
    let src = source::production(&source::tokens(&blanked));
    let (uses, spans) = source::uses(&src.tokens);
    let paths = source::paths(&src.tokens, &spans);
    let defs = source::definitions(&src.tokens).into_iter().collect();
    let functions = source::functions(&src.tokens);
    File {
        rel,
        module,
        text,
        test: false,
        test_lines: src.test_lines,
        functions,
        test_mods: src.test_mods,
        uses,
        paths,
        defs,
    }
}

/// Strongly connected components of more than one node (Tarjan), each sorted.
pub fn circles<N: Ord + Clone>(graph: &BTreeMap<N, BTreeSet<N>>) -> Vec<BTreeSet<N>> {
    struct T<'g, N> {
        g: &'g BTreeMap<N, BTreeSet<N>>,
        index: BTreeMap<&'g N, usize>,
        low: BTreeMap<&'g N, usize>,
        stack: Vec<&'g N>,
        on: BTreeSet<&'g N>,
        out: Vec<BTreeSet<N>>,
    }
    fn visit<'g, N: Ord + Clone>(t: &mut T<'g, N>, v: &'g N) {
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
