//! Which files `file_path` may read: by default no hidden file, nothing in a hidden directory
//! and nothing in a system tree; with `ZOTERO_UPLOAD_ROOTS` only what is below a root. Both
//! are checked on the resolved path (symlinks followed), and the file sent is the one checked.

use super::*;

/// Prepares `path` and expects the refusal `reason`, with the field and the advice every
/// refusal carries; what the caller is shown.
async fn refused(f: &Fetcher, path: impl AsRef<Path>, reason: &str) -> Seen {
    let path = path.as_ref();
    let err = match prep(f, SourceSpec::Path(path.to_path_buf())).await {
        Ok(file) => panic!("{} was accepted ({} bytes)", path.display(), file.size),
        Err(e) => e,
    };
    let seen = Seen::from(err);
    let shown = format!("{}: {} {:?}", path.display(), seen.message, seen.details);
    assert_eq!(seen.code, Blame::Input, "{shown}");
    assert_eq!(seen.details["field"], "file_path", "{shown}");
    assert_eq!(seen.details["reason"], reason, "{shown}");
    assert!(
        seen.message.contains("ZOTERO_UPLOAD_ROOTS=/path/to/papers"),
        "says how to allow a directory: {shown}"
    );
    // The message is logged; file paths never are (the caller's answer quotes it in details).
    assert!(!seen.message.contains(&*path.to_string_lossy()), "{shown}");
    seen
}

async fn accepted(f: &Fetcher, path: impl AsRef<Path>) -> PreparedFile {
    let path = path.as_ref();
    prep(f, SourceSpec::Path(path.to_path_buf()))
        .await
        .unwrap_or_else(|e| panic!("{} was refused: {e}", path.display()))
}

fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

#[tokio::test]
async fn system_files_are_refused_by_default() {
    let dir = TestDir::new();
    let f = fetcher(1 << 20, false, dir.path());
    for p in [
        "/etc/passwd",
        "/proc/self/status",
        "/var/../etc/passwd",
        "/dev/null",
        "/sys/kernel/notes",
        "/root/.bashrc",
        "/boot/vmlinuz",
        "/run/secrets/token",
        // One that does not exist is refused the same way: the answer never tells what
        // exists where nothing may be read.
        "/etc/zotero-mcp-no-such-file",
    ] {
        let seen = refused(&f, p, "system_directory").await;
        assert!(
            seen.message.contains("system directory"),
            "{}",
            seen.message
        );
        assert_eq!(seen.details["path"], p);
    }
}

#[tokio::test]
async fn a_symlink_into_a_system_tree_is_refused() {
    let dir = TestDir::new();
    let f = fetcher(1 << 20, false, dir.path());
    symlink("/etc/passwd", dir.path().join("paper.pdf"));
    let seen = refused(&f, dir.path().join("paper.pdf"), "system_directory").await;
    assert!(seen.message.contains("/etc"), "{}", seen.message);
    // A symlinked directory on the way counts as much as a symlinked file.
    symlink("/etc", dir.path().join("papers"));
    refused(&f, dir.path().join("papers/passwd"), "system_directory").await;
}

#[tokio::test]
async fn hidden_files_and_directories_are_refused() {
    let dir = TestDir::new();
    let f = fetcher(1 << 20, false, dir.path());
    let visible = dir.file("visible.pdf", b"%PDF-1.4 fine");
    assert_eq!(accepted(&f, &visible).await.size, 13);

    dir.file(".secret.pdf", b"hidden file");
    let seen = refused(&f, dir.path().join(".secret.pdf"), "hidden").await;
    assert!(seen.message.contains("hidden"), "{}", seen.message);

    std::fs::create_dir(dir.path().join(".ssh")).unwrap();
    dir.file(".ssh/id_rsa", b"-----BEGIN OPENSSH PRIVATE KEY-----");
    refused(&f, dir.path().join(".ssh/id_rsa"), "hidden").await;
    // Whether or not the file exists.
    refused(&f, dir.path().join(".ssh/missing.pdf"), "hidden").await;
    // Reached through a symlink with an innocent name, to the file or to its directory.
    symlink(dir.path().join(".ssh/id_rsa"), dir.path().join("paper.pdf"));
    refused(&f, dir.path().join("paper.pdf"), "hidden").await;
    symlink(dir.path().join(".ssh"), dir.path().join("notes"));
    refused(&f, dir.path().join("notes/id_rsa"), "hidden").await;
    // What counts is where the path leads, not how it is written.
    accepted(&f, dir.path().join(".ssh/../visible.pdf")).await;
}

#[tokio::test]
async fn a_refusal_quotes_at_most_256_characters_of_the_path() {
    let dir = TestDir::new();
    let f = fetcher(1 << 20, false, dir.path());
    let short = dir.path().join(".x.pdf");
    let seen = refused(&f, &short, "hidden").await;
    assert_eq!(seen.details["path"], short.to_str().unwrap());

    // Two-byte characters, so that a cut by bytes would split one.
    let long = dir
        .path()
        .join(".hidden")
        .join("é".repeat(120))
        .join("ü".repeat(120))
        .join("x.pdf");
    let seen = refused(&f, &long, "hidden").await;
    let quoted = seen.details["path"].as_str().unwrap();
    assert!(quoted.chars().count() <= 256, "{quoted}");
    let kept = quoted.strip_suffix('…').expect("a cut path ends with …");
    assert!(long.to_str().unwrap().starts_with(kept), "{quoted}");
}

#[tokio::test]
async fn upload_roots_allow_only_files_inside_them() {
    let root = TestDir::new();
    let outside = TestDir::new();
    let f = fetcher_in(&[root.path()], root.path());

    let inside = root.file("paper.pdf", b"%PDF-1.4 inside");
    assert_eq!(accepted(&f, &inside).await.size, 15);
    std::fs::create_dir_all(root.path().join("sub/deeper")).unwrap();
    let real = root.file("sub/deeper/real.pdf", b"%PDF-1.4 real");
    accepted(&f, &real).await;

    let secret = outside.file("secret.pdf", b"outside");
    let seen = refused(&f, &secret, "outside_upload_roots").await;
    assert!(seen.message.contains("outside"), "{}", seen.message);
    assert_eq!(
        seen.details["upload_roots"],
        serde_json::json!([std::fs::canonicalize(root.path()).unwrap()])
    );
    // Out through `..`.
    let escape = root
        .path()
        .join("..")
        .join(outside.path().file_name().unwrap())
        .join("secret.pdf");
    refused(&f, &escape, "outside_upload_roots").await;
    // Out through a symlink to a file, or to a directory.
    symlink(&secret, root.path().join("escape.pdf"));
    refused(&f, root.path().join("escape.pdf"), "outside_upload_roots").await;
    symlink(outside.path(), root.path().join("elsewhere"));
    refused(
        &f,
        root.path().join("elsewhere/secret.pdf"),
        "outside_upload_roots",
    )
    .await;
    // A system file, and a missing one outside: refused, not "no such file".
    refused(&f, "/etc/passwd", "outside_upload_roots").await;
    refused(
        &f,
        outside.path().join("missing.pdf"),
        "outside_upload_roots",
    )
    .await;
    let err = prep(&f, SourceSpec::Path(root.path().join("missing.pdf")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");

    // A symlink inside the root to a file inside the root.
    symlink(&real, root.path().join("alias.pdf"));
    let file = accepted(&f, root.path().join("alias.pdf")).await;
    assert_eq!((file.size, file.filename.as_str()), (13, "alias.pdf"));

    // Hidden names below a root are still refused.
    std::fs::create_dir(root.path().join(".cache")).unwrap();
    root.file(".cache/x.pdf", b"cached");
    refused(&f, root.path().join(".cache/x.pdf"), "hidden").await;
    root.file(".x.pdf", b"hidden");
    refused(&f, root.path().join(".x.pdf"), "hidden").await;
}

#[tokio::test]
async fn a_root_named_explicitly_may_be_hidden() {
    let dir = TestDir::new();
    let hidden_root = dir.path().join(".papers");
    std::fs::create_dir(&hidden_root).unwrap();
    dir.file(".papers/x.pdf", b"%PDF-1.4 x");
    let f = fetcher_in(&[&hidden_root], dir.path());
    accepted(&f, hidden_root.join("x.pdf")).await;
    std::fs::create_dir(hidden_root.join(".private")).unwrap();
    dir.file(".papers/.private/y.pdf", b"y");
    refused(&f, hidden_root.join(".private/y.pdf"), "hidden").await;
    refused(&f, dir.file("z.pdf", b"z"), "outside_upload_roots").await;

    // With a root that contains the hidden one as well, the file is still allowed: it is
    // below a root with no hidden name in between.
    let f = fetcher_in(&[dir.path(), &hidden_root], dir.path());
    accepted(&f, hidden_root.join("x.pdf")).await;
    accepted(&f, dir.path().join("z.pdf")).await;
}

#[tokio::test]
async fn a_file_replaced_after_hashing_is_not_streamed() {
    let dir = TestDir::new();
    let p = dir.file("a.pdf", b"0123456789");
    let f = fetcher(1000, false, dir.path());
    let file = prep(&f, SourceSpec::Path(p.clone())).await.unwrap();
    // The same bytes in another file, renamed over it: the path now names another file,
    // which was never checked.
    let other = dir.file("b.tmp", b"0123456789");
    std::fs::rename(&other, &p).unwrap();
    let err = read_all(&file, 0).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("file_path changed after it was hashed"),
        "{text}"
    );
    assert!(text.contains("replaced"), "{text}");
}

#[tokio::test]
async fn a_relative_path_is_resolved_against_the_working_directory_then_checked() {
    let dir = TestDir::new();
    // cargo runs the tests in the crate's directory, which holds Cargo.toml.
    let cwd = std::env::current_dir().unwrap();
    let f = fetcher_in(&[&cwd], dir.path());
    assert_eq!(accepted(&f, "Cargo.toml").await.filename, "Cargo.toml");
    let f = fetcher_in(&[dir.path()], dir.path());
    refused(&f, "Cargo.toml", "outside_upload_roots").await;
    refused(&f, "./src/../Cargo.toml", "outside_upload_roots").await;
}
