//! Which local files `file_path` may read. The check is made on the resolved path (every
//! symlink followed, `.` and `..` gone), so a link named `paper.pdf` is judged by where it
//! leads, and the file then opened is that resolved path (see `local::open_checked`).
//!
//! Without `ZOTERO_UPLOAD_ROOTS` (the default): any file the process can read, except hidden
//! files, anything under a hidden directory (a name starting with `.`: `~/.ssh`, `~/.config`,
//! an MCP client's settings with its API keys) and the system trees in `SYSTEM_DIRS`. With
//! it: only files below one of its directories, and still no hidden name below the root (a
//! root may itself be hidden: the operator named it).

use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use crate::error::{PathRefusal, SourceError};
use crate::local;

/// The system trees no `file_path` reaches by default. `/private/etc` is macOS's `/etc`
/// after resolution (macOS's `/var` is `/private/var`, which also holds every user's temp
/// directory, and is left out there).
pub const SYSTEM_DIRS: [&str; 9] = [
    "/etc",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var",
    "/boot",
    "/root",
    "/private/etc",
];

/// The most of a refused path an answer quotes, in characters.
const QUOTE_MAX: usize = 256;

/// Resolves `path` (symlinks, `.`, `..`; a relative path against the working directory) and
/// checks the result against `roots` (canonical; empty: the default policy). The resolved
/// path is what must be opened.
pub(crate) fn resolve(
    path: &Path,
    roots: &[PathBuf],
    field: &'static str,
) -> Result<PathBuf, SourceError> {
    let refused = |refusal| SourceError::PathNotAllowed {
        field,
        path: quote(path),
        refusal,
    };
    match std::fs::canonicalize(path) {
        Ok(resolved) => {
            check(&resolved, roots).map_err(refused)?;
            Ok(resolved)
        }
        Err(e) => {
            // Judged where it would be before it is called missing, so that the answer
            // does not tell what exists where nothing may be read.
            if let Some(would_be) = lexical(path) {
                check(&would_be, roots).map_err(refused)?;
            }
            Err(local::path_error(&e, path, field))
        }
    }
}

/// Whether the resolved, absolute `path` may be read under `roots`.
pub(crate) fn check(path: &Path, roots: &[PathBuf]) -> Result<(), PathRefusal> {
    if roots.is_empty() {
        if let Some(dir) = SYSTEM_DIRS.iter().find(|d| path.starts_with(d)) {
            return Err(PathRefusal::SystemDir { dir });
        }
        if has_hidden_name(path) {
            return Err(PathRefusal::Hidden { with_roots: false });
        }
        return Ok(());
    }
    // Any root will do: one root may hold another that is hidden.
    let mut below_a_root = false;
    for root in roots {
        if let Ok(below) = path.strip_prefix(root) {
            if !has_hidden_name(below) {
                return Ok(());
            }
            below_a_root = true;
        }
    }
    Err(if below_a_root {
        PathRefusal::Hidden { with_roots: true }
    } else {
        PathRefusal::OutsideRoots {
            roots: roots.to_vec(),
        }
    })
}

fn has_hidden_name(path: &Path) -> bool {
    path.components()
        .any(|c| matches!(c, Component::Normal(name) if name.as_bytes().first() == Some(&b'.')))
}

/// Where `path` would be: absolute (against the working directory), `.` and `..` taken by
/// name, no symlink followed. Only used to refuse a path that cannot be resolved.
fn lexical(path: &Path) -> Option<PathBuf> {
    let mut out = if path.is_absolute() {
        PathBuf::from("/")
    } else {
        std::env::current_dir().ok()?
    };
    for c in path.components() {
        match c {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(out)
}

/// At most `QUOTE_MAX` characters of the path as given; a longer one is cut and ends in `…`.
fn quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    if text.chars().count() <= QUOTE_MAX {
        return text.into_owned();
    }
    let mut cut: String = text.chars().take(QUOTE_MAX - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roots(list: &[&str]) -> Vec<PathBuf> {
        list.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn the_default_refuses_system_trees_and_hidden_names_only() {
        for ok in [
            "/home/me/Papers/a.pdf",
            "/tmp/x.pdf",
            "/etcetera/a",
            "/srv/x",
            "/a..b/c",
        ] {
            assert_eq!(check(Path::new(ok), &[]), Ok(()), "{ok}");
        }
        for (path, dir) in [
            ("/etc", "/etc"),
            ("/etc/passwd", "/etc"),
            ("/var/lib/x", "/var"),
            ("/root/paper.pdf", "/root"),
            ("/proc/1/environ", "/proc"),
            ("/private/etc/passwd", "/private/etc"),
        ] {
            assert_eq!(
                check(Path::new(path), &[]),
                Err(PathRefusal::SystemDir { dir }),
                "{path}"
            );
        }
        for hidden in [
            "/home/me/.ssh/id_rsa",
            "/home/me/.env",
            "/tmp/.tmpAbc/x.pdf",
        ] {
            assert_eq!(
                check(Path::new(hidden), &[]),
                Err(PathRefusal::Hidden { with_roots: false }),
                "{hidden}"
            );
        }
    }

    #[test]
    fn roots_replace_the_default() {
        let r = roots(&["/srv/papers", "/home/me/.zotero-inbox", "/var/papers"]);
        for ok in [
            "/srv/papers/a.pdf",
            "/srv/papers/sub/b.pdf",
            "/home/me/.zotero-inbox/c.pdf",
            "/var/papers/d.pdf",
        ] {
            assert_eq!(check(Path::new(ok), &r), Ok(()), "{ok}");
        }
        for hidden in ["/srv/papers/.git/config", "/home/me/.zotero-inbox/.x"] {
            assert_eq!(
                check(Path::new(hidden), &r),
                Err(PathRefusal::Hidden { with_roots: true }),
                "{hidden}"
            );
        }
        for outside in [
            "/srv/papers-old/a.pdf",
            "/srv/a.pdf",
            "/etc/passwd",
            "/home/me/x",
        ] {
            assert_eq!(
                check(Path::new(outside), &r),
                Err(PathRefusal::OutsideRoots { roots: r.clone() }),
                "{outside}"
            );
        }
    }

    #[test]
    fn lexical_resolution_and_quoting() {
        assert_eq!(
            lexical(Path::new("/a/./b/../../etc/x")),
            Some(PathBuf::from("/etc/x"))
        );
        assert_eq!(lexical(Path::new("/../..")), Some(PathBuf::from("/")));
        let relative = lexical(Path::new("x/../y")).unwrap();
        assert_eq!(relative, std::env::current_dir().unwrap().join("y"));

        assert_eq!(quote(Path::new("/a/b")), "/a/b");
        let exact = format!("/{}", "é".repeat(QUOTE_MAX - 1));
        assert_eq!(quote(Path::new(&exact)), exact);
        let long = format!("/{}", "é".repeat(QUOTE_MAX));
        let q = quote(Path::new(&long));
        assert_eq!(q.chars().count(), QUOTE_MAX);
        assert!(q.ends_with('…') && long.starts_with(q.trim_end_matches('…')));
    }
}
