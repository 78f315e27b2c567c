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

#[tokio::test]
async fn every_redirect_hop_is_checked_literal_or_resolved() {
    // 127.0.0.2 plays a public host; every other address is refused, as private ones are.
    fn refused(ip: std::net::IpAddr) -> bool {
        ip != std::net::IpAddr::from([127, 0, 0, 2])
    }
    let dir = TestDir::new();
    let target = raw_server(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx".to_vec()).await;
    let port = target
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let strict = Fetcher::with_policy(
        &config(100, false, &dir.0),
        guard::AddressPolicy::Refuse(refused),
    );
    for location in [
        target.clone(),                              // a literal private address
        format!("http://localhost:{port}/file.bin"), // a name that resolves to one
    ] {
        let public = raw_server_on(
            "127.0.0.2",
            format!("HTTP/1.1 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n")
                .into_bytes(),
        )
        .await;
        let err = prep(&strict, SourceSpec::Url(public)).await.unwrap_err();
        assert!(
            matches!(err, SourceError::Forbidden { .. }),
            "{location}: {err}"
        );
    }
    // The same target is reached when the policy allows it.
    let lax = fetcher(100, true, &dir.0);
    assert!(prep(&lax, SourceSpec::Url(target)).await.is_ok());
}

// ---------------------------------------------------------------- a raw server

/// Serves `response` to every connection; with an empty response, holds the connection
/// open without answering.
async fn raw_server(response: Vec<u8>) -> String {
    raw_server_on("127.0.0.1", response).await
}

/// `raw_server` on another loopback address (all of 127/8 is loopback on Linux).
async fn raw_server_on(ip: &str, response: Vec<u8>) -> String {
    let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
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
