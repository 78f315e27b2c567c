//! Which files `zotero_upload_attachment`'s `file_path` may read, through the tool against
//! the emulator: by default no system file, no hidden file and nothing in a hidden directory,
//! symlinks followed before the check; with `ZOTERO_UPLOAD_ROOTS` only what is below a root.
//! A refused path writes nothing upstream; a bad root stops the server at start-up; `check`
//! says which policy is in effect.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{in_process, spawn, Server, BIN};
use crate::upload_support::{assert_stored, attachments_of, bytes, env, PARENT};
use zotero_emulator::Emulator;

/// A fresh directory (not hidden, not in a system tree), removed at the end of the test.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("zotero-mcp-test-paths-")
        .tempdir()
        .unwrap()
}

fn write(path: impl AsRef<Path>, content: &[u8]) -> PathBuf {
    let path = path.as_ref();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    path.to_path_buf()
}

fn symlink(target: impl AsRef<Path>, link: impl AsRef<Path>) -> PathBuf {
    std::os::unix::fs::symlink(target, link.as_ref()).unwrap();
    link.as_ref().to_path_buf()
}

/// Uploads `path` and expects a refusal for `reason`; the error the caller is shown.
async fn refused(server: &Server, path: &Path, reason: &str) -> Value {
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": path}),
        )
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR").clone();
    assert_eq!(err["details"]["field"], "file_path", "{path:?}: {err}");
    assert_eq!(err["details"]["reason"], reason, "{path:?}: {err}");
    assert_eq!(err["details"]["path"], path.to_str().unwrap(), "{err}");
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("ZOTERO_UPLOAD_ROOTS=/path/to/papers"),
        "says how to allow a directory: {message}"
    );
    err
}

/// Nothing was written: no create, no upload, no attachment under the parent.
fn nothing_written(emu: &Emulator) {
    assert_eq!(emu.count("POST", "/"), 0, "nothing written");
    assert_eq!(emu.count("PATCH", "/"), 0, "nothing written");
    assert!(attachments_of(emu, PARENT).is_empty(), "no attachment item");
}

#[tokio::test]
async fn system_files_and_hidden_paths_are_refused_by_default() {
    let emu = Emulator::start().await;
    // The binary, at trace level: the refused paths must not reach a log line either.
    let server = spawn(&env(&emu, &[("ZOTERO_MCP_LOG_LEVEL", "trace")])).await;
    let dir = scratch();
    let d = dir.path();

    refused(&server, Path::new("/etc/passwd"), "system_directory").await;
    // A symlink with an innocent name, to a file in a system tree.
    let link = symlink("/etc/passwd", d.join("paper.pdf"));
    refused(&server, &link, "system_directory").await;
    // A symlink into a hidden directory, a file in one, a hidden file.
    let key = write(
        d.join(".ssh/id_rsa"),
        b"-----BEGIN OPENSSH PRIVATE KEY-----",
    );
    let link = symlink(&key, d.join("notes.pdf"));
    refused(&server, &link, "hidden").await;
    refused(&server, &key, "hidden").await;
    let hidden = write(d.join(".secret.pdf"), b"hidden");
    refused(&server, &hidden, "hidden").await;
    nothing_written(&emu);

    let logs = server.stderr().join("\n");
    assert!(logs.contains("tool call finished"), "trace logging is on");
    assert!(
        !logs.contains(&*d.to_string_lossy()),
        "a path reached the logs"
    );
    assert!(!logs.contains("/etc/passwd"), "a path reached the logs");

    // An ordinary file next to them still goes through.
    let content = bytes(20_000, 5);
    let fine = write(d.join("paper-ok.pdf"), &content);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": fine}),
        )
        .await;
    assert_stored(&emu, a.expect_ok(), &content);
    server.stop().await;
}

#[tokio::test]
async fn upload_roots_allow_only_files_inside_them() {
    let emu = Emulator::start().await;
    let root = scratch();
    let outside = scratch();
    let roots = root.path().to_str().unwrap().to_string();
    let server = in_process(&env(&emu, &[("ZOTERO_UPLOAD_ROOTS", &roots)])).await;

    let secret = write(outside.path().join("secret.pdf"), b"not for upload");
    let err = refused(&server, &secret, "outside_upload_roots").await;
    assert_eq!(
        err["details"]["upload_roots"],
        json!([std::fs::canonicalize(root.path()).unwrap()])
    );
    // Out of the root through `..`, and through a symlink inside it.
    let escape = root
        .path()
        .join("..")
        .join(outside.path().file_name().unwrap())
        .join("secret.pdf");
    refused(&server, &escape, "outside_upload_roots").await;
    let link = symlink(&secret, root.path().join("paper.pdf"));
    refused(&server, &link, "outside_upload_roots").await;
    refused(&server, Path::new("/etc/passwd"), "outside_upload_roots").await;
    // Hidden names below the root are still refused.
    let hidden = write(root.path().join(".cache/x.pdf"), b"cached");
    refused(&server, &hidden, "hidden").await;
    nothing_written(&emu);

    // Inside: allowed, directly and through a symlink to a file inside the root.
    let content = bytes(30_000, 6);
    let inside = write(root.path().join("papers/a.pdf"), &content);
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": inside}),
        )
        .await;
    assert_stored(&emu, a.expect_ok(), &content);
    let other = bytes(31_000, 7);
    let target = write(root.path().join("papers/b.pdf"), &other);
    let alias = symlink(&target, root.path().join("b-alias.pdf"));
    let a = server
        .call(
            "zotero_upload_attachment",
            json!({"item_key": PARENT, "file_path": alias}),
        )
        .await;
    let data = a.expect_ok().clone();
    assert_stored(&emu, &data, &other);
    assert_eq!(data["title"], "b-alias.pdf");
    server.stop().await;
}

/// Runs the binary with exactly these variables; exit code, stdout, stderr.
fn run(args: &[&str], env: &[(String, String)]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_bad_upload_root_is_a_startup_error() {
    let dir = scratch();
    let file = write(dir.path().join("a.pdf"), b"x");
    let good = dir.path().to_str().unwrap();
    for (value, why) in [
        (
            format!("{good}:/nonexistent/zotero-papers"),
            "does not exist",
        ),
        (file.to_str().unwrap().to_string(), "not a directory"),
        ("papers".to_string(), "absolute"),
        (":".to_string(), "no directory"),
    ] {
        for args in [&[][..], &["check"][..]] {
            let env = [("ZOTERO_UPLOAD_ROOTS".to_string(), value.clone())];
            let (code, out, err) = run(args, &env);
            assert_eq!(code, 2, "{value:?} must not start: {out}{err}");
            assert!(out.is_empty(), "nothing on stdout: {out}");
            assert!(err.contains("ZOTERO_UPLOAD_ROOTS"), "{err}");
            assert!(err.contains(why), "{value:?}: {err}");
            assert!(err.contains("/path/to/papers"), "{err}");
        }
    }
}

#[tokio::test]
async fn check_reports_the_upload_policy() {
    let emu = Emulator::start().await;
    let dir = scratch();
    let roots = format!("{}:/tmp", dir.path().display());
    let with_roots = env(&emu, &[("ZOTERO_UPLOAD_ROOTS", &roots)]);
    let default = env(&emu, &[]);
    let (runs, _) = tokio::task::spawn_blocking(move || {
        (
            [run(&["check"], &with_roots), run(&["check"], &default)],
            (),
        )
    })
    .await
    .unwrap();
    let [(code, out, err), (dcode, dout, derr)] = runs;
    assert_eq!(code, 0, "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.starts_with("file_path:"))
        .unwrap_or_else(|| panic!("no file_path line: {out}"));
    let canonical = std::fs::canonicalize(dir.path()).unwrap();
    assert!(line.contains(&*canonical.to_string_lossy()), "{line}");
    assert!(line.contains("ZOTERO_UPLOAD_ROOTS"), "{line}");
    assert_eq!(dcode, 0, "{dout}{derr}");
    let line = dout
        .lines()
        .find(|l| l.starts_with("file_path:"))
        .unwrap_or_else(|| panic!("no file_path line: {dout}"));
    assert!(line.contains("hidden") && line.contains("/etc"), "{line}");
    assert!(line.contains("ZOTERO_UPLOAD_ROOTS"), "{line}");
}
