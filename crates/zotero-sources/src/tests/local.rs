//! Paths of every kind and base64.

use super::*;

// ---------------------------------------------------------------- paths

#[tokio::test]
async fn a_file_is_hashed_and_streamed_again() {
    let dir = TestDir::new();
    let content: Vec<u8> = (0..700_000u32).map(|i| (i % 251) as u8).collect();
    let p = dir.file("Paper One.PDF", &content);
    let f = fetcher(10_000_000, false, dir.path());
    let file = prep(&f, SourceSpec::Path(p.clone())).await.unwrap();
    assert_eq!(file.filename, "Paper One.PDF");
    assert_eq!(file.content_type, "application/pdf");
    assert_eq!(file.size, content.len() as u64);
    assert_eq!(file.md5, md5_hex(&content));
    assert_eq!(file.final_url, None);
    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
    assert_eq!(file.mtime_ms, crate::local::millis(mtime));
    for chunk in [0, 1000, 65_536, 10_000_000] {
        assert_eq!(read_all(&file, chunk).await.unwrap(), content);
    }
    let debug = format!("{file:?}");
    assert!(
        !debug.contains(&dir.path().to_string_lossy().to_string()),
        "{debug}"
    );
}

#[tokio::test]
async fn an_empty_file_is_a_file() {
    let dir = TestDir::new();
    let p = dir.file("empty", b"");
    let f = fetcher(10, false, dir.path());
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
    let f = fetcher(100, false, dir.path());
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
        assert_eq!(Seen::from(err).details["field"], field);
    }
}

#[tokio::test]
async fn paths_that_are_not_regular_files_are_refused() {
    let dir = TestDir::new();
    let f = fetcher(1000, false, dir.path());
    let real = dir.file("real.txt", b"hello");

    let err = prep(&f, SourceSpec::Path(dir.path().to_path_buf()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    let err = prep(&f, SourceSpec::Path(dir.path().join("missing.pdf")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");
    let t = Seen::from(err);
    assert_eq!(t.code, Blame::Input);
    assert_eq!(t.details["field"], "file_path");
    let err = prep(&f, SourceSpec::Path(PathBuf::from("~/x.pdf")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("'~' is not expanded"), "{err}");
    let err = prep(&f, SourceSpec::Path(real.join("below")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");

    // A device is refused for what it is, where ZOTERO_UPLOAD_ROOTS allows its directory
    // (by default /dev is not read at all).
    let in_dev = fetcher_in(&[Path::new("/dev")], dir.path());
    let err = prep(&in_dev, SourceSpec::Path("/dev/null".into()))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("character device"), "{err}");

    // Symlinks are followed.
    std::os::unix::fs::symlink(&real, dir.path().join("link.txt")).unwrap();
    let file = prep(&f, SourceSpec::Path(dir.path().join("link.txt")))
        .await
        .unwrap();
    assert_eq!((file.size, file.filename.as_str()), (5, "link.txt"));
    std::os::unix::fs::symlink(dir.path(), dir.path().join("dirlink")).unwrap();
    let err = prep(&f, SourceSpec::Path(dir.path().join("dirlink")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("is a directory"), "{err}");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("dangling")).unwrap();
    let err = prep(&f, SourceSpec::Path(dir.path().join("dangling")))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no such file"), "{err}");

    // A socket.
    let sock = dir.path().join("sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let err = prep(&f, SourceSpec::Path(sock)).await.unwrap_err();
    assert!(err.to_string().contains("a socket"), "{err}");

    // A FIFO: refused without blocking on it.
    let fifo = dir.path().join("fifo");
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
    let f = fetcher(1000, false, dir.path());
    let err = prep(&f, SourceSpec::Path(p)).await.unwrap_err();
    assert!(err.to_string().contains("permission denied"), "{err}");
}

#[tokio::test]
async fn a_file_over_the_limit_is_refused_without_reading_it() {
    let dir = TestDir::new();
    let max = 1 << 30;
    let p = dir.path().join("huge.pdf");
    let file = std::fs::File::create(&p).unwrap();
    file.set_len(max + 1).unwrap(); // sparse: instant
    drop(file);
    // Not even readable: the refusal comes from the metadata alone.
    set_mode(&p, 0o000);
    let f = fetcher(max, false, dir.path());
    let err = prep(&f, SourceSpec::Path(p.clone())).await.unwrap_err();
    let t = Seen::from(err);
    assert_eq!(t.code, Blame::Input);
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
    let f = fetcher(10, false, dir.path());
    assert_eq!(prep(&f, SourceSpec::Path(p)).await.unwrap().size, 10);
}

#[tokio::test]
async fn a_file_changed_after_hashing_is_never_streamed_whole() {
    let dir = TestDir::new();
    let p = dir.file("a.txt", b"0123456789");
    let f = fetcher(1000, false, dir.path());
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
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        let text = err.to_string();
        assert!(
            text.starts_with("file_path changed after it was hashed"),
            "{text}"
        );
        assert!(text.contains("nothing was stored"), "{text}");
    }
    for new in [&b"01234567890"[..], b"012345678", b""] {
        std::fs::write(&p, new).unwrap();
        let mut s = file.stream_in(3);
        let mut last = None;
        while let Some(item) = s.next().await {
            last = Some(item);
        }
        let err = last.unwrap().unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("file_path changed after it was hashed"),
            "{text}"
        );
        assert!(text.contains("nothing was stored"), "{text}");
    }
    // The stream opens lazily: a file deleted since hashing ends the stream with an error.
    std::fs::remove_file(&p).unwrap();
    assert!(read_all(&file, 3).await.is_err());
}

#[tokio::test]
async fn a_file_that_reports_another_size_is_refused_before_upload() {
    // /proc files report 0 bytes and read as text: every upload would fail its size check.
    if !Path::new("/proc/self/status").exists() {
        return;
    }
    let dir = TestDir::new();
    // By default /proc is not read at all; here ZOTERO_UPLOAD_ROOTS allows it.
    let f = fetcher_in(&[Path::new("/proc")], dir.path());
    let err = prep(&f, SourceSpec::Path("/proc/self/status".into()))
        .await
        .unwrap_err();
    let t = Seen::from(err);
    assert_eq!(t.code, Blame::Input);
    assert_eq!(t.details["field"], "file_path");
    assert!(t.message.contains("reports 0 bytes"), "{}", t.message);
}

/// The PDF check is for downloads (arXiv): see `pdf_checks_on_downloads`. A path or base64
/// source with `require_pdf` is a caller's defect, refused before anything is read.
#[tokio::test]
async fn require_pdf_is_for_urls_only() {
    let dir = TestDir::new();
    let f = fetcher(1000, false, dir.path());
    let opts = || PrepareOptions {
        require_pdf: true,
        ..Default::default()
    };
    let good = dir.file("a", b"%PDF-1.4\n...");
    let base64 = SourceSpec::Base64 {
        data: "JVBERi0xLjQ=".into(),
        filename: "a.pdf".into(),
    };
    for spec in [SourceSpec::Path(good), base64] {
        let err = f
            .prepare(spec, opts(), &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(matches!(err, SourceError::Internal { .. }), "{err}");
        assert!(err.to_string().contains("require_pdf"), "{err}");
    }
}

// ---------------------------------------------------------------- base64

#[tokio::test]
async fn base64_is_decoded_named_and_typed() {
    let dir = TestDir::new();
    let f = fetcher(100, false, dir.path());
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
    let t = Seen::from(err);
    assert_eq!(t.details["field"], "filename");
    assert!(t.message.contains("'/'"), "{}", t.message);

    // The name is the spec's: `PrepareOptions.filename` is for paths and URLs.
    let file = f
        .prepare(
            spec("aGVsbG8=", " notes.md "),
            PrepareOptions {
                content_type: Some("text/plain".into()),
                ..Default::default()
            },
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(
        (file.filename.as_str(), file.content_type.as_str()),
        ("notes.md", "text/plain")
    );

    let err = prep(&f, spec("aGVsbG8*", "x")).await.unwrap_err();
    let t = Seen::from(err);
    assert_eq!(t.details["field"], "file_bytes_base64");
    assert!(t.message.contains("'*' at position 7"), "{}", t.message);

    // 136 characters decode to 102 bytes: over the limit, refused before decoding.
    let err = prep(&f, spec(&"A".repeat(136), "x")).await.unwrap_err();
    let t = Seen::from(err);
    assert_eq!(
        (t.details["size"].as_u64(), t.details["max_bytes"].as_u64()),
        (Some(102), Some(100))
    );
    assert_eq!(t.details["field"], "file_bytes_base64");
}
