//! URLs against local servers, redirects, limits, the SSRF guard, spooling.

use super::*;

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
    let f = fetcher(1_000_000, true, dir.path());
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
    let f = fetcher(100, true, dir.path());
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
    let f = fetcher(100, true, dir.path());
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
    assert_eq!(Seen::from(err).code, Blame::Remote);
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
    let f = fetcher(100, true, dir.path());
    let err = prep(&f, SourceSpec::Url(format!("{}/ftp", s.uri())))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("only http://"), "{err}");
    assert_eq!(err.blame(), Blame::Remote);
    for (p, code, status) in [
        ("/gone", Blame::Missing, 404),
        ("/broken", Blame::Remote, 503),
        ("/private", Blame::Remote, 403),
        ("/nolocation", Blame::Remote, 302),
    ] {
        let url = format!("{}{p}", s.uri());
        let t = Seen::from(prep(&f, SourceSpec::Url(url.clone())).await.unwrap_err());
        assert_eq!(t.code, code, "{p}");
        assert_eq!(t.details["status"], status, "{p}");
        assert_eq!(t.details["url"], url.as_str(), "{p}");
    }
}

#[tokio::test]
async fn error_urls_leave_out_the_query_a_server_chose() {
    let dir = TestDir::new();
    let s = server().await;
    Mock::given(method("GET"))
        .and(path("/signed"))
        .respond_with(redirect("/store/f.pdf?X-Amz-Signature=secret#frag", 302))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/store/f.pdf"))
        .respond_with(ResponseTemplate::new(403))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/loop"))
        .respond_with(redirect("/loop?token=secret", 302))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/bad"))
        .respond_with(redirect("ftp://example.org/x", 302))
        .mount(&s)
        .await;
    let f = fetcher(100, true, dir.path());
    for (start, want) in [
        ("/signed", "/store/f.pdf"),
        ("/loop", "/loop"),
        ("/bad?token=secret", "/bad"),
    ] {
        let err = prep(&f, SourceSpec::Url(format!("{}{start}", s.uri())))
            .await
            .unwrap_err();
        assert!(
            matches!(
                err,
                SourceError::RemoteStatus { .. }
                    | SourceError::TooManyRedirects { .. }
                    | SourceError::BadRedirect { .. }
            ),
            "{start}: {err}"
        );
        let t = Seen::from(err);
        assert_eq!(
            t.details["url"],
            format!("{}{want}", s.uri()).as_str(),
            "{start}"
        );
        let shown = format!(
            "{} {}",
            t.message,
            serde_json::Value::Object(t.details.clone())
        );
        assert!(!shown.contains("secret"), "{start}: {shown}");
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
    let f = fetcher(100, true, dir.path());
    let t = Seen::from(prep(&f, SourceSpec::Url(s.uri())).await.unwrap_err());
    assert_eq!(t.code, Blame::Input);
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
    Mock::given(method("GET"))
        .and(path("/pdf/2312.00001"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"%PDF".to_vec()))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/pdf/2312.00002"))
        .respond_with(ResponseTemplate::new(200))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/pdf/2312.00003"))
        .respond_with(redirect("/cdn/x?sig=secret", 302))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/cdn/x"))
        .respond_with(ResponseTemplate::new(200).set_body_bytes(b"<html>".to_vec()))
        .mount(&s)
        .await;
    let f = fetcher(1000, true, dir.path());
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
    let t = Seen::from(err);
    assert_eq!(t.code, Blame::Remote);
    assert_eq!(t.details["field"], "arxiv_id");
    assert_eq!(t.details["content_type"], "text/html");
    assert_eq!(t.details["url"], id.pdf_url(&s.uri()).as_str());
    assert!(t.message.contains("text/html"), "{}", t.message);

    // Too short to be a PDF, empty, and a redirect whose signed query stays out of the error.
    for (id, url) in [
        ("2312.00001", "/pdf/2312.00001"),
        ("2312.00002", "/pdf/2312.00002"),
        ("2312.00003", "/cdn/x"),
    ] {
        let id = ArxivId::parse(id).unwrap();
        let err = f
            .prepare(
                SourceSpec::Url(id.pdf_url(&s.uri())),
                arxiv_opts(&id),
                &CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, SourceError::NotPdf { .. }), "{err}");
        let t = Seen::from(err);
        assert_eq!(t.code, Blame::Remote);
        assert_eq!(t.details["field"], "arxiv_id");
        assert_eq!(t.details["url"], format!("{}{url}", s.uri()).as_str());
    }

    let id = ArxivId::parse("2401.56789").unwrap();
    let err = f
        .prepare(
            SourceSpec::Url(id.pdf_url(&s.uri())),
            arxiv_opts(&id),
            &CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.blame(), Blame::Missing);
}

#[tokio::test]
async fn bad_urls_are_validation_errors() {
    let dir = TestDir::new();
    let f = fetcher(100, false, dir.path());
    for url in [
        "ftp://example.org/x",
        "https://u:p@example.org/x",
        "not a url",
        "file:///etc/passwd",
    ] {
        let t = Seen::from(prep(&f, SourceSpec::Url(url.into())).await.unwrap_err());
        assert_eq!(t.code, Blame::Input, "{url}");
        assert_eq!(t.details["field"], "file_url", "{url}");
    }
}
