//! `Fetcher::prepare` end to end: paths of every kind, base64, URLs against local servers
//! (wiremock, and a raw TCP server for what wiremock cannot send), the SSRF guard, spooling,
//! and the verified stream.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use md5::{Digest, Md5};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use super::*;
use crate::envelope::{ErrorCode, ToolError};

/// A fresh directory, removed at the end of the test.
struct TestDir(PathBuf);

impl TestDir {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!(
            "zotero-mcp-sources-test-{:016x}",
            rand::random::<u64>()
        ));
        std::fs::create_dir(&dir).unwrap();
        TestDir(dir)
    }
    fn file(&self, name: &str, content: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, content).unwrap();
        p
    }
    fn entries(&self) -> usize {
        std::fs::read_dir(&self.0).unwrap().count()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn config(max: u64, allow_private: bool, temp_dir: &Path) -> Config {
    let mut c = Config::from_map(&HashMap::new()).unwrap();
    c.upload_max_bytes = max;
    c.fetch_allow_private = allow_private;
    c.temp_dir = temp_dir.to_path_buf();
    c.timeout = Duration::from_secs(5);
    c
}

fn fetcher(max: u64, allow_private: bool, temp_dir: &Path) -> Fetcher {
    Fetcher::new(&config(max, allow_private, temp_dir)).unwrap()
}

fn md5_hex(data: &[u8]) -> String {
    store::lowercase_hex(&Md5::digest(data))
}

async fn read_all(file: &PreparedFile, chunk: usize) -> Result<Vec<u8>, std::io::Error> {
    let mut s = file.stream(chunk).unwrap();
    let mut out = Vec::new();
    while let Some(item) = s.next().await {
        out.extend_from_slice(&item?);
    }
    Ok(out)
}

async fn prep(f: &Fetcher, spec: SourceSpec) -> Result<PreparedFile, SourceError> {
    f.prepare(spec, PrepareOptions::default(), &CancellationToken::new())
        .await
}

fn is_root() -> bool {
    // A file with no permissions is still readable by root.
    let dir = TestDir::new();
    let p = dir.file("probe", b"x");
    set_mode(&p, 0o000);
    std::fs::File::open(&p).is_ok()
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

// ---------------------------------------------------------------- paths

#[tokio::test]
async fn a_file_is_hashed_and_streamed_again() {
    let dir = TestDir::new();
    let content: Vec<u8> = (0..700_000u32).map(|i| (i % 251) as u8).collect();
    let p = dir.file("Paper One.PDF", &content);
    let f = fetcher(10_000_000, false, &dir.0);
    let file = prep(&f, SourceSpec::Path(p.clone())).await.unwrap();
    assert_eq!(file.filename, "Paper One.PDF");
    assert_eq!(file.content_type, "application/pdf");
    assert_eq!(file.size, content.len() as u64);
    assert_eq!(file.md5, md5_hex(&content));
    assert_eq!(file.final_url, None);
    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
    assert_eq!(file.mtime_ms, local::millis(mtime));
    for chunk in [0, 1000, 65_536, 10_000_000] {
        assert_eq!(read_all(&file, chunk).await.unwrap(), content);
    }
    let debug = format!("{file:?}");
    assert!(
        !debug.contains(&dir.0.to_string_lossy().to_string()),
        "{debug}"
    );
}

#[tokio::test]
async fn an_empty_file_is_a_file() {
    let dir = TestDir::new();
    let p = dir.file("empty", b"");
    let f = fetcher(10, false, &dir.0);
    let file = prep(&f, SourceSpec::Path(p)).await.unwrap();
    assert_eq!(file.size, 0);
    assert_eq!(file.md5, "d41d8cd98f00b204e9800998ecf8427e");
    assert_eq!(file.content_type, "application/octet-stream");
    assert!(read_all(&file, 0).await.unwrap().is_empty());
}

#[tokio::test]
async fn options_override_name_and_type_and_are_checked() {
    let dir = TestDir::new();
    let p = dir.file("x.bin", b"%PDF-1.7 hello");
    let f = fetcher(100, false, &dir.0);
    let opts = PrepareOptions {
        content_type: Some("Application/PDF; charset=binary".into()),
        filename: Some(" better.pdf ".into()),
        ..Default::default()
    };
    let file = f
        .prepare(SourceSpec::Path(p.clone()), opts, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(file.filename, "better.pdf");
    assert_eq!(file.content_type, "application/pdf");

    for (opts, field) in [
        (
            PrepareOptions {
                content_type: Some("pdf".into()),
                ..Default::default()
            },
            "content_type",
        ),
        (
            PrepareOptions {
                filename: Some("a/b.pdf".into()),
                ..Default::default()
            },
            "filename",
        ),
    ] {
        let err = f
            .prepare(SourceSpec::Path(p.clone()), opts, &CancellationToken::new())
            .await
            .unwrap_err();
        assert_eq!(ToolError::from(err).details["field"], field);
    }
}

#[tokio::test]
async fn paths_that_are_not_regular_files_are_refused() {
    let dir = TestDir::new();
    let f = fetcher(1000, false, &dir.0);
    let real = dir.file("real.txt", b"hello");

    let err = prep(&f, SourceSpec::Path(dir.0.clone())).await.unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    let err = prep(&f, SourceSpec::Path(dir.0.join("missing.pdf")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");
    let t = ToolError::from(err);
    assert_eq!(t.code, ErrorCode::Validation);
    assert_eq!(t.details["field"], "file_path");
    let err = prep(&f, SourceSpec::Path(PathBuf::from("~/x.pdf")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("'~' is not expanded"), "{err}");
    let err = prep(&f, SourceSpec::Path(real.join("below")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");

    let err = prep(&f, SourceSpec::Path("/dev/null".into()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("character device"), "{err}");

    // Symlinks are followed.
    std::os::unix::fs::symlink(&real, dir.0.join("link.txt")).unwrap();
    let file = prep(&f, SourceSpec::Path(dir.0.join("link.txt")))
        .await
        .unwrap();
    assert_eq!((file.size, file.filename.as_str()), (5, "link.txt"));
    std::os::unix::fs::symlink(&dir.0, dir.0.join("dirlink")).unwrap();
    let err = prep(&f, SourceSpec::Path(dir.0.join("dirlink")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    std::os::unix::fs::symlink(dir.0.join("nowhere"), dir.0.join("dangling")).unwrap();
    let err = prep(&f, SourceSpec::Path(dir.0.join("dangling")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");

    // A socket.
    let sock = dir.0.join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let err = prep(&f, SourceSpec::Path(sock)).await.unwrap_err();
    assert!(err.to_string().contains("a socket"), "{err}");

    // A FIFO: refused without blocking on it.
    let fifo = dir.0.join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if matches!(made, Ok(s) if s.success()) {
        let err = tokio::time::timeout(Duration::from_secs(5), prep(&f, SourceSpec::Path(fifo)))
            .await
            .expect("a FIFO must not block")
            .unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
    }
}

#[tokio::test]
async fn an_unreadable_file_says_permission_denied() {
    if is_root() {
        return;
    }
    let dir = TestDir::new();
    let p = dir.file("secret.pdf", b"x");
    set_mode(&p, 0o000);
    let f = fetcher(1000, false, &dir.0);
    let err = prep(&f, SourceSpec::Path(p)).await.unwrap_err();
    assert!(err.to_string().contains("permission denied"), "{err}");
}

#[tokio::test]
async fn a_file_over_the_limit_is_refused_without_reading_it() {
    let dir = TestDir::new();
    let max = 1 << 30;
    let p = dir.0.join("huge.pdf");
    let file = std::fs::File::create(&p).unwrap();
    file.set_len(max + 1).unwrap(); // sparse: instant
    drop(file);
    // Not even readable: the refusal comes from the metadata alone.
    set_mode(&p, 0o000);
    let f = fetcher(max, false, &dir.0);
    let err = prep(&f, SourceSpec::Path(p.clone())).await.unwrap_err();
    let t = ToolError::from(err);
    assert_eq!(t.code, ErrorCode::Validation);
    assert_eq!(t.details["field"], "file_path");
    assert_eq!(t.details["size"], max + 1);
    assert_eq!(t.details["max_bytes"], max);
    assert!(
        t.message.contains("ZOTERO_UPLOAD_MAX_BYTES"),
        "{}",
        t.message
    );
    set_mode(&p, 0o600);

    let p = dir.file("exact", &[1u8; 10]);
    let f = fetcher(10, false, &dir.0);
    assert_eq!(prep(&f, SourceSpec::Path(p)).await.unwrap().size, 10);
}

#[tokio::test]
async fn a_file_changed_after_hashing_is_never_streamed_whole() {
    let dir = TestDir::new();
    let p = dir.file("a.txt", b"0123456789");
    let f = fetcher(1000, false, &dir.0);
    let file = prep(&f, SourceSpec::Path(p.clone())).await.unwrap();
    assert_eq!(read_all(&file, 4).await.unwrap(), b"0123456789");

    for (new, chunk) in [
        (&b"0123456780"[..], 4),   // same size, other bytes
        (&b"0123456789"[..], 100), // restored below, then...
    ] {
        std::fs::write(&p, new).unwrap();
        let result = read_all(&file, chunk).await;
        if new == b"0123456789" {
            assert!(result.is_ok());
            continue;
        }
        let err = result.unwrap_err();
        let changed = SourceError::from_stream_error(&err).expect("SourceChanged");
        let t = ToolError::from(changed);
        assert_eq!(t.details["field"], "file_path");
        assert!(t.message.contains("changed"), "{}", t.message);
    }
    for new in [&b"01234567890"[..], b"012345678", b""] {
        std::fs::write(&p, new).unwrap();
        let mut s = file.stream(3).unwrap();
        let mut last = None;
        while let Some(item) = s.next().await {
            last = Some(item);
        }
        let err = last.unwrap().unwrap_err();
        assert!(SourceError::from_stream_error(&err).is_some(), "{err}");
    }
    // The stream opens lazily: a file deleted since hashing ends the stream with an error.
    std::fs::remove_file(&p).unwrap();
    assert!(read_all(&file, 3).await.is_err());
}

#[tokio::test]
async fn require_pdf_checks_the_first_bytes() {
    let dir = TestDir::new();
    let f = fetcher(1000, false, &dir.0);
    let opts = || PrepareOptions {
        require_pdf: true,
        ..Default::default()
    };
    let good = dir.file("a", b"%PDF-1.4\n...");
    let file = f
        .prepare(SourceSpec::Path(good), opts(), &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(file.content_type, "application/pdf");
    for bad in [&b"<html>"[..], b"%PDF", b""] {
        let p = dir.file("b.pdf", bad);
        let err = f
            .prepare(SourceSpec::Path(p), opts(), &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(matches!(err, SourceError::NotPdf { .. }), "{err}");
        assert_eq!(err.code(), ErrorCode::Validation);
    }
}

// ---------------------------------------------------------------- base64

#[tokio::test]
async fn base64_is_decoded_named_and_typed() {
    let dir = TestDir::new();
    let f = fetcher(100, false, &dir.0);
    let spec = |data: &str, name: &str| SourceSpec::Base64 {
        data: data.into(),
        filename: name.into(),
    };
    let file = prep(&f, spec("aGVsbG8=", "notes.txt")).await.unwrap();
    assert_eq!(file.size, 5);
    assert_eq!(file.md5, md5_hex(b"hello"));
    assert_eq!(file.content_type, "text/plain");
    assert_eq!(read_all(&file, 2).await.unwrap(), b"hello");

    let file = prep(&f, spec("", "empty.pdf")).await.unwrap();
    assert_eq!(
        (file.size, file.content_type.as_str()),
        (0, "application/pdf")
    );

    let file = prep(&f, spec("data:application/epub+zip;base64,aGVsbG8", "book"))
        .await
        .unwrap();
    assert_eq!(file.content_type, "application/epub+zip");
    let file = prep(&f, spec("aGVsbG8", "blob")).await.unwrap();
    assert_eq!(file.content_type, "application/octet-stream");

    let err = prep(&f, spec("aGVsbG8=", "../x.pdf")).await.unwrap_err();
    let t = ToolError::from(err);
    assert_eq!(t.details["field"], "filename");
    assert!(t.message.contains("'/'"), "{}", t.message);

    let err = prep(&f, spec("aGVsbG8*", "x")).await.unwrap_err();
    let t = ToolError::from(err);
    assert_eq!(t.details["field"], "file_bytes_base64");
    assert!(t.message.contains("'*' at position 7"), "{}", t.message);

    // 136 characters decode to 102 bytes: over the limit, refused before decoding.
    let err = prep(&f, spec(&"A".repeat(136), "x")).await.unwrap_err();
    let t = ToolError::from(err);
    assert_eq!(
        (t.details["size"].as_u64(), t.details["max_bytes"].as_u64()),
        (Some(102), Some(100))
    );
    assert_eq!(t.details["field"], "file_bytes_base64");
}

// ---------------------------------------------------------------- URLs

async fn server() -> MockServer {
    MockServer::start().await
}

#[tokio::test]
async fn a_download_is_spooled_to_an_unlinked_file_and_named() {
    let dir = TestDir::new();
    let s = server().await;
    let body: Vec<u8> = (0..600_000u32).map(|i| (i % 253) as u8).collect();
    Mock::given(method("GET"))
        .and(path("/files/x"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/pdf; qs=0.001")
                .insert_header(
                    "content-disposition",
                    "attachment; filename=\"a.pdf\"; filename*=UTF-8''%C3%BCber.pdf",
                )
                .set_body_bytes(body.clone()),
        )
        .mount(&s)
        .await;
    let f = fetcher(1_000_000, true, &dir.0);
    let file = prep(&f, SourceSpec::Url(format!("{}/files/x#frag", s.uri())))
        .await
        .unwrap();
    assert_eq!(file.filename, "über.pdf");
    assert_eq!(file.content_type, "application/pdf");
    assert_eq!(file.size, body.len() as u64);
    assert_eq!(file.md5, md5_hex(&body));
    assert_eq!(
        file.final_url.as_deref(),
        Some(format!("{}/files/x", s.uri()).as_str())
    );
    assert!(format!("{file:?}").contains("temp file"));
    assert_eq!(dir.entries(), 0, "the spool file is unlinked");
    assert_eq!(read_all(&file, 0).await.unwrap(), body);
    assert_eq!(read_all(&file, 7).await.unwrap(), body);
    // The request carried no Zotero key.
    let requests = s.received_requests().await.unwrap();
    assert!(requests.iter().all(|r| !r
        .headers
        .keys()
        .any(|k| k.as_str().eq_ignore_ascii_case("zotero-api-key"))));
}

#[tokio::test]
async fn without_a_temp_dir_downloads_are_held_in_memory() {
    let s = server().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"abc".to_vec()))
        .mount(&s)
        .await;
    let f = fetcher(100, true, Path::new("/nonexistent/zotero-mcp-no-tmp"));
    let file = prep(
        &f,
        SourceSpec::Url(format!("{}/d/paper%20one.pdf", s.uri())),
    )
    .await
    .unwrap();
    assert!(format!("{file:?}").contains("memory"));
    assert_eq!(file.filename, "paper one.pdf");
    // No server type, a known extension.
    assert_eq!(file.content_type, "application/pdf");
    assert_eq!(read_all(&file, 2).await.unwrap(), b"abc");
}

#[tokio::test]
async fn names_and_types_fall_back_sensibly() {
    let dir = TestDir::new();
    let s = server().await;
    Mock::given(method("GET"))
        .and(path("/"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"x".to_vec()))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/get"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/pdf")
                .set_body_bytes(b"%PDF-".to_vec()),
        )
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/paper.pdf"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/octet-stream")
                .set_body_bytes(b"%PDF-".to_vec()),
        )
        .mount(&s)
        .await;
    let f = fetcher(100, true, &dir.0);
    let file = prep(&f, SourceSpec::Url(s.uri())).await.unwrap();
    assert_eq!(
        (file.filename.as_str(), file.content_type.as_str()),
        ("download", "application/octet-stream")
    );
    let file = prep(&f, SourceSpec::Url(format!("{}/get?id=5", s.uri())))
        .await
        .unwrap();
    assert_eq!(
        (file.filename.as_str(), file.content_type.as_str()),
        ("get.pdf", "application/pdf")
    );
    let file = prep(&f, SourceSpec::Url(format!("{}/paper.pdf", s.uri())))
        .await
        .unwrap();
    assert_eq!(file.content_type, "application/pdf");
    let file = f
        .prepare(
            SourceSpec::Url(format!("{}/paper.pdf", s.uri())),
            PrepareOptions {
                content_type: Some("application/x-custom".into()),
                filename: Some("mine.bin".into()),
                ..Default::default()
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        (file.filename.as_str(), file.content_type.as_str()),
        ("mine.bin", "application/x-custom")
    );
}

fn redirect(to: &str, status: u16) -> ResponseTemplate {
    ResponseTemplate::new(status).insert_header("location", to)
}

#[tokio::test]
async fn redirects_are_followed_up_to_five() {
    let dir = TestDir::new();
    let s = server().await;
    // /r/1 -> /r/2 -> ... -> /r/N -> /final (relative Locations of several shapes)
    for (from, to, status) in [
        ("/r/1", "2", 301),
        ("/r/2", "/r/3", 302),
        ("/r/3", "./4?q=1", 303),
        ("/r/4", "../r/5", 307),
    ] {
        Mock::given(method("GET"))
            .and(path(from))
            .respond_with(redirect(to, status))
            .mount(&s)
            .await;
    }
    Mock::given(method("GET"))
        .and(path("/r/5"))
        .respond_with(redirect(&format!("{}/final/doc.pdf", s.uri()), 308))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/r/0"))
        .respond_with(redirect("/r/1", 302))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/final/doc.pdf"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"done".to_vec()))
        .mount(&s)
        .await;
    let f = fetcher(100, true, &dir.0);
    let file = prep(&f, SourceSpec::Url(format!("{}/r/1", s.uri())))
        .await
        .unwrap();
    assert_eq!(
        file.final_url.as_deref(),
        Some(format!("{}/final/doc.pdf", s.uri()).as_str())
    );
    assert_eq!(file.filename, "doc.pdf");
    assert_eq!(read_all(&file, 0).await.unwrap(), b"done");

    let err = prep(&f, SourceSpec::Url(format!("{}/r/0", s.uri())))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("more than 5 redirects"), "{err}");
    assert_eq!(ToolError::from(err).code, ErrorCode::Upstream);
}

#[tokio::test]
async fn bad_redirects_and_statuses_are_reported() {
    let dir = TestDir::new();
    let s = server().await;
    Mock::given(method("GET"))
        .and(path("/ftp"))
        .respond_with(redirect("ftp://example.org/x", 302))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/gone"))
        .respond_with(ResponseTemplate::new(404))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/broken"))
        .respond_with(ResponseTemplate::new(503))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/private"))
        .respond_with(ResponseTemplate::new(403))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/nolocation"))
        .respond_with(ResponseTemplate::new(302))
        .mount(&s)
        .await;
    let f = fetcher(100, true, &dir.0);
    let err = prep(&f, SourceSpec::Url(format!("{}/ftp", s.uri())))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("only http://"), "{err}");
    assert_eq!(err.code(), ErrorCode::Upstream);
    for (p, code, status) in [
        ("/gone", ErrorCode::NotFound, 404),
        ("/broken", ErrorCode::Upstream, 503),
        ("/private", ErrorCode::Upstream, 403),
        ("/nolocation", ErrorCode::Upstream, 302),
    ] {
        let url = format!("{}{p}", s.uri());
        let t = ToolError::from(prep(&f, SourceSpec::Url(url.clone())).await.unwrap_err());
        assert_eq!(t.code, code, "{p}");
        assert_eq!(t.details["status"], status, "{p}");
        assert_eq!(t.details["url"], url.as_str(), "{p}");
    }
}

#[tokio::test]
async fn a_content_length_over_the_limit_is_refused_before_reading() {
    let dir = TestDir::new();
    let s = server().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(vec![0u8; 101]))
        .mount(&s)
        .await;
    let f = fetcher(100, true, &dir.0);
    let t = ToolError::from(prep(&f, SourceSpec::Url(s.uri())).await.unwrap_err());
    assert_eq!(t.code, ErrorCode::Validation);
    assert_eq!(t.details["field"], "file_url");
    assert_eq!(t.details["size"], 101);
    assert_eq!(t.details["max_bytes"], 100);
}

#[tokio::test]
async fn pdf_checks_on_downloads() {
    let dir = TestDir::new();
    let s = server().await;
    Mock::given(method("GET"))
        .and(path("/pdf/1706.03762"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "application/octet-stream")
                .set_body_bytes(b"%PDF-1.5 ...".to_vec()),
        )
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/pdf/2312.99999"))
        .respond_with(
            ResponseTemplate::new(200)
                .insert_header("content-type", "text/html; charset=utf-8")
                .set_body_bytes(b"<html>captcha</html>".to_vec()),
        )
        .mount(&s)
        .await;
    let f = fetcher(1000, true, &dir.0);
    let arxiv_opts = |id: &ArxivId| PrepareOptions {
        filename: Some(id.filename()),
        require_pdf: true,
        input_field: Some("arxiv_id"),
        ..Default::default()
    };
    let id = ArxivId::parse("arXiv:1706.03762").unwrap();
    let file = f
        .prepare(
            SourceSpec::Url(id.pdf_url(&s.uri())),
            arxiv_opts(&id),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        (file.filename.as_str(), file.content_type.as_str()),
        ("1706.03762.pdf", "application/pdf")
    );

    let id = ArxivId::parse("2312.99999").unwrap();
    let err = f
        .prepare(
            SourceSpec::Url(id.pdf_url(&s.uri())),
            arxiv_opts(&id),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    let t = ToolError::from(err);
    assert_eq!(t.code, ErrorCode::Upstream);
    assert_eq!(t.details["field"], "arxiv_id");
    assert_eq!(t.details["content_type"], "text/html");
    assert!(t.message.contains("text/html"), "{}", t.message);

    let id = ArxivId::parse("2401.56789").unwrap();
    let err = f
        .prepare(
            SourceSpec::Url(id.pdf_url(&s.uri())),
            arxiv_opts(&id),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
}

#[tokio::test]
async fn bad_urls_are_validation_errors() {
    let dir = TestDir::new();
    let f = fetcher(100, false, &dir.0);
    for url in [
        "ftp://example.org/x",
        "https://u:p@example.org/x",
        "not a url",
        "file:///etc/passwd",
    ] {
        let t = ToolError::from(prep(&f, SourceSpec::Url(url.into())).await.unwrap_err());
        assert_eq!(t.code, ErrorCode::Validation, "{url}");
        assert_eq!(t.details["field"], "file_url", "{url}");
    }
}

// ---------------------------------------------------------------- the SSRF guard

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let dir = TestDir::new();
    let s = server().await;
    Mock::given(method("GET"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"x".to_vec()))
        .mount(&s)
        .await;
    let port = s.address().port();
    let strict = fetcher(100, false, &dir.0);
    for url in [
        s.uri(),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://0.0.0.0:{port}/"),
        "http://169.254.169.254/latest/meta-data/".to_string(),
        "https://10.0.0.1/x.pdf".to_string(),
    ] {
        let err = prep(&strict, SourceSpec::Url(url.clone()))
            .await
            .unwrap_err();
        assert!(matches!(err, SourceError::Forbidden { .. }), "{url}: {err}");
        let t = ToolError::from(err);
        assert_eq!(t.code, ErrorCode::Validation, "{url}");
        assert_eq!(t.details["field"], "file_url");
        assert!(
            t.message.contains("ZOTERO_FETCH_ALLOW_PRIVATE"),
            "{}",
            t.message
        );
    }
    assert!(s.received_requests().await.unwrap().is_empty());
    let lax = fetcher(100, true, &dir.0);
    assert!(
        prep(&lax, SourceSpec::Url(format!("http://localhost:{port}/")))
            .await
            .is_ok()
    );
}

// ---------------------------------------------------------------- a raw server

/// Serves `response` to every connection; with an empty response, holds the connection
/// open without answering.
async fn raw_server(response: Vec<u8>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let response = response.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut byte = [0u8; 1024];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut byte).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&byte[..n]),
                    }
                }
                if response.is_empty() {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    return;
                }
                let _ = sock.write_all(&response).await;
                let _ = sock.shutdown().await;
            });
        }
    });
    format!("http://{addr}/file.bin")
}

#[tokio::test]
async fn the_limit_holds_without_content_length() {
    let dir = TestDir::new();
    let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..3 {
        chunked.extend_from_slice(b"40\r\n");
        chunked.extend_from_slice(&[b'x'; 64]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    let url = raw_server(chunked).await;
    let err = prep(&fetcher(100, true, &dir.0), SourceSpec::Url(url.clone()))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            SourceError::TooLarge {
                size: None,
                max_bytes: 100,
                ..
            }
        ),
        "{err}"
    );
    // Under the limit the same body is fine.
    assert_eq!(
        prep(&fetcher(192, true, &dir.0), SourceSpec::Url(url))
            .await
            .unwrap()
            .size,
        192
    );

    let mut close_delimited = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
    close_delimited.extend_from_slice(&[b'y'; 150]);
    let url = raw_server(close_delimited).await;
    let err = prep(&fetcher(100, true, &dir.0), SourceSpec::Url(url))
        .await
        .unwrap_err();
    assert!(
        matches!(err, SourceError::TooLarge { size: None, .. }),
        "{err}"
    );
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_is_a_network_error() {
    let dir = TestDir::new();
    let mut short = b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n".to_vec();
    short.extend_from_slice(&[b'z'; 10]);
    let url = raw_server(short).await;
    let err = prep(&fetcher(100, true, &dir.0), SourceSpec::Url(url))
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Network { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::Upstream);
}

#[tokio::test]
async fn a_silent_server_times_out_and_a_call_can_be_cancelled() {
    let dir = TestDir::new();
    let url = raw_server(Vec::new()).await;
    let mut c = config(100, true, &dir.0);
    c.timeout = Duration::from_millis(300);
    let f = Fetcher::new(&c).unwrap();
    let err = prep(&f, SourceSpec::Url(url.clone())).await.unwrap_err();
    assert!(matches!(err, SourceError::Timeout { .. }), "{err}");
    assert_eq!(err.code(), ErrorCode::Upstream);

    let mut c = config(100, true, &dir.0);
    c.timeout = Duration::from_secs(30);
    let f = Fetcher::new(&c).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let err = f
        .prepare(SourceSpec::Url(url), PrepareOptions::default(), &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, SourceError::Cancelled), "{err}");
    assert_eq!(ToolError::from(err).code, ErrorCode::Upstream);
}

#[tokio::test]
async fn debug_output_hides_sources() {
    let spec = SourceSpec::Base64 {
        data: "c2VjcmV0".into(),
        filename: "x".into(),
    };
    assert!(!format!("{spec:?}").contains("c2VjcmV0"));
    let spec = SourceSpec::Path("/home/someone/secret.pdf".into());
    assert!(!format!("{spec:?}").contains("secret"));
}
