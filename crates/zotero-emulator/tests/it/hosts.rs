//! Self-test of the emulator's fake web host (files, headers, chunked answers, redirects) and
//! fake arXiv (versions, old-style ids, `.pdf` redirects, HTML pages), with a plain hyper
//! client.

use bytes::Bytes;
use zotero_emulator::testing::send;
use zotero_emulator::{Emulator, HostedFile};

#[tokio::test]
async fn web_host_serves_files_and_redirects() {
    let emu = Emulator::start().await;
    emu.serve("/paper.pdf", HostedFile::pdf(b"%PDF-1.7 x".to_vec()));
    let mut f = HostedFile::new(b"chunks".to_vec(), "application/octet-stream");
    f.chunked = true;
    f.content_disposition = Some("attachment; filename=\"c.bin\"".into());
    emu.serve("/chunked", f);
    emu.serve(
        "/gone",
        HostedFile {
            status: 410,
            ..HostedFile::new(b"gone".to_vec(), "text/plain")
        },
    );
    emu.redirect("/a", "/web/b", 301);
    emu.redirect("/b", &emu.web_url("/c"), 302);
    emu.redirect("/c", "paper.pdf", 307);
    emu.redirect("/loop1", "/web/loop2", 302);
    emu.redirect("/loop2", "/web/loop1", 308);

    let r = send(&emu, "GET", &emu.web_url("/paper.pdf"), &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.header("content-type").as_deref()),
        (200, Some("application/pdf"))
    );
    assert_eq!(r.header("content-length").as_deref(), Some("10"));
    let r = send(&emu, "GET", &emu.web_url("/chunked"), &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(
        (r.text().as_str(), r.header("content-length")),
        ("chunks", None)
    );
    assert_eq!(r.header("transfer-encoding").as_deref(), Some("chunked"));
    assert_eq!(
        r.header("content-disposition").as_deref(),
        Some("attachment; filename=\"c.bin\"")
    );
    assert_eq!(
        send(&emu, "GET", &emu.web_url("/gone"), &[], Bytes::new())
            .await
            .unwrap()
            .status,
        410
    );
    assert_eq!(
        send(&emu, "GET", "/web/nothing", &[], Bytes::new())
            .await
            .unwrap()
            .status,
        404
    );

    let r = send(&emu, "GET", "/web/a", &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.header("location").as_deref()),
        (301, Some("/web/b"))
    );
    let r = send(&emu, "GET", "/web/b", &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.header("location")),
        (302, Some(emu.web_url("/c")))
    );
    let r = send(&emu, "GET", "/web/c", &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.header("location").as_deref()),
        (307, Some("paper.pdf"))
    );
    let r = send(&emu, "GET", "/web/loop2", &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(
        (r.status, r.header("location").as_deref()),
        (308, Some("/web/loop1"))
    );
}

#[tokio::test]
async fn fake_arxiv_versions_and_ids() {
    let emu = Emulator::start().await;
    let base = emu.arxiv_base();
    assert!(base.ends_with("/arxiv"));
    emu.add_arxiv("1706.03762v1", b"%PDF v1".to_vec());
    emu.add_arxiv("1706.03762v7", b"%PDF v7".to_vec());
    emu.add_arxiv("hep-th/9901001", b"%PDF old".to_vec());
    emu.add_arxiv("math.CA/0611800v2", b"%PDF math".to_vec());
    emu.add_arxiv_page("2301.00001", "<html>PDF unavailable</html>");
    let fetch = |p: &str| {
        let url = format!("{base}/pdf/{p}");
        let emu = &emu;
        async move { send(emu, "GET", &url, &[], Bytes::new()).await }
    };

    let r = fetch("1706.03762").await.unwrap();
    assert_eq!((r.status, r.text().as_str()), (200, "%PDF v7"));
    assert_eq!(r.header("content-type").as_deref(), Some("application/pdf"));
    assert_eq!(fetch("1706.03762v1").await.unwrap().text(), "%PDF v1");
    assert_eq!(fetch("1706.03762v3").await.unwrap().status, 404);
    let r = fetch("1706.03762v1.pdf").await.unwrap();
    assert_eq!(
        (r.status, r.header("location")),
        (301, Some(format!("{base}/pdf/1706.03762v1")))
    );
    assert_eq!(fetch("hep-th/9901001").await.unwrap().text(), "%PDF old");
    assert_eq!(
        fetch("math.CA/0611800v2").await.unwrap().text(),
        "%PDF math"
    );
    assert_eq!(fetch("math.CA/0611800").await.unwrap().text(), "%PDF math");
    assert_eq!(fetch("9999.99999").await.unwrap().status, 404);
    let r = fetch("2301.00001").await.unwrap();
    assert_eq!(
        (r.status, r.header("content-type").as_deref()),
        (200, Some("text/html; charset=utf-8"))
    );
    emu.arxiv_redirect_unversioned(true);
    let r = fetch("1706.03762").await.unwrap();
    assert_eq!(
        (r.status, r.header("location")),
        (302, Some(format!("{base}/pdf/1706.03762v7")))
    );
}
