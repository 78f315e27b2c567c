//! `zotero_attach_arxiv_pdf` in every id form, refusals of what is not a PDF, and upload
//! progress notifications, through the built binary against the emulator.

use std::sync::{Arc, Mutex};

use crate::upload_support::{assert_stored, attachments_of, bytes, env, setup, temp_file, PARENT};
use serde_json::json;
use zotero_emulator::Emulator;

#[tokio::test]
async fn arxiv_ids_in_every_form_fetch_the_pdf() {
    let (emu, server) = setup().await;
    let pdf = |n: u8| {
        let mut b = b"%PDF-1.5\n".to_vec();
        b.extend(bytes(30_000, n));
        b
    };
    // Like arxiv.org, an unversioned id redirects to its latest version.
    emu.arxiv_redirect_unversioned(true);
    emu.add_arxiv("1706.03762v1", pdf(1));
    emu.add_arxiv("1706.03762v7", pdf(2));
    emu.add_arxiv("hep-th/9901001", pdf(3));
    emu.add_arxiv("math.CA/0611800v2", pdf(4));
    let mut seen = std::collections::HashMap::new();
    for (input, id, filename, content) in [
        ("1706.03762v1", "1706.03762v1", "1706.03762v1.pdf", pdf(1)),
        ("arXiv:1706.03762", "1706.03762", "1706.03762.pdf", pdf(2)),
        (
            "https://arxiv.org/abs/1706.03762v1",
            "1706.03762v1",
            "1706.03762v1.pdf",
            pdf(1),
        ),
        (
            "https://arxiv.org/pdf/1706.03762v7.pdf",
            "1706.03762v7",
            "1706.03762v7.pdf",
            pdf(2),
        ),
        (
            "hep-th/9901001",
            "hep-th/9901001",
            "hep-th_9901001.pdf",
            pdf(3),
        ),
        (
            "arXiv:math.CA/0611800v2",
            "math.CA/0611800v2",
            "math.CA_0611800v2.pdf",
            pdf(4),
        ),
    ] {
        let a = server
            .call(
                "zotero_attach_arxiv_pdf",
                json!({"item_key": PARENT, "arxiv_id": input}),
            )
            .await;
        let data = a.expect_ok().clone();
        assert_eq!(data["arxiv_id"], id, "{input}");
        assert_eq!(data["pdf_url"], format!("{}/pdf/{id}", emu.arxiv_base()));
        assert_eq!(data["title"], filename);
        assert_eq!(data["content_type"], "application/pdf");
        let item = assert_stored(&emu, &data, &content);
        assert_eq!(item["data"]["filename"], filename);
        // The same PDF twice (1706.03762v1 by id, then by URL) is one attachment.
        let key = data["attachment_key"].as_str().unwrap().to_string();
        match seen.insert(id, key.clone()) {
            Some(earlier) => {
                assert_eq!(earlier, key, "{input}");
                assert_eq!(data["already_attached"], true, "{input}");
            }
            None => assert!(data.get("already_attached").is_none(), "{input}"),
        }
    }
    assert_eq!(attachments_of(&emu, PARENT).len(), seen.len());
    // The unversioned id went through the redirect to v7.
    let paths: Vec<String> = emu.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths
            .iter()
            .filter(|p| *p == "/arxiv/pdf/1706.03762")
            .count(),
        1
    );
    assert_eq!(
        paths
            .iter()
            .filter(|p| *p == "/arxiv/pdf/1706.03762v7")
            .count(),
        2
    );
    server.stop().await;
}

#[tokio::test]
async fn arxiv_refuses_what_is_not_a_pdf_and_unknown_ids() {
    let (emu, server) = setup().await;
    emu.add_arxiv_page("2101.00001", "<html><body>Just a moment…</body></html>");
    let a = server
        .call(
            "zotero_attach_arxiv_pdf",
            json!({"item_key": PARENT, "arxiv_id": "2101.00001"}),
        )
        .await;
    // arXiv answered, but not with a PDF (a challenge page, a withdrawn paper): upstream.
    let err = a.expect_err("ZOTERO_UPSTREAM_ERROR");
    assert!(err["message"].as_str().unwrap().contains("PDF"), "{err}");
    assert_eq!(err["details"]["content_type"], "text/html");
    let a = server
        .call(
            "zotero_attach_arxiv_pdf",
            json!({"item_key": PARENT, "arxiv_id": "2101.99999"}),
        )
        .await;
    a.expect_err("ZOTERO_NOT_FOUND");
    for bad in [
        "hello",
        "1706.3762",
        "https://example.org/abs/1706.03762",
        "17060.3762",
    ] {
        let a = server
            .call(
                "zotero_attach_arxiv_pdf",
                json!({"item_key": PARENT, "arxiv_id": bad}),
            )
            .await;
        assert_eq!(
            a.expect_err("ZOTERO_VALIDATION_ERROR")["details"]["field"],
            "arxiv_id",
            "{bad}"
        );
    }
    assert_eq!(emu.count("POST", "/users/475425/items"), 0);
    server.stop().await;
}

// --- progress notifications -------------------------------------------------------------

/// (progress, total) of each notification, in arrival order.
type Seen = Arc<Mutex<Vec<(f64, Option<f64>)>>>;

#[derive(Clone, Default)]
struct ProgressLog(Seen);

impl rmcp::ClientHandler for ProgressLog {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push((params.progress, params.total));
    }
}

#[tokio::test]
async fn progress_is_reported_in_bytes_when_asked_for() {
    use rmcp::model::{CallToolRequestParams, NumberOrString, ProgressToken, RequestMetaObject};
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;

    let emu = Emulator::start().await;
    let mut cmd = tokio::process::Command::new(crate::common::BIN);
    cmd.env_clear();
    for (k, v) in env(&emu, &[]) {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let log = ProgressLog::default();
    let client = log.clone().serve(transport).await.unwrap();

    let size = 3 * 1024 * 1024 + 17;
    let content = bytes(size, 6);
    let path = temp_file("big.pdf", &content);
    let mut meta = RequestMetaObject::default();
    meta.set_progress_token(ProgressToken(NumberOrString::String("up-1".into())));
    let mut params = CallToolRequestParams::new("zotero_upload_attachment").with_arguments(
        crate::common::obj(json!({"item_key": PARENT, "file_path": path})),
    );
    params.meta = Some(meta);
    let result = client.call_tool(params).await.unwrap();
    let answer = crate::common::to_answer(result);
    answer.expect_ok();
    // Notifications may trail the answer by a moment.
    for _ in 0..100 {
        if log.0.lock().unwrap().last().map(|p| p.0) == Some(size as f64) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let seen = log.0.lock().unwrap().clone();
    assert!(seen.len() >= 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "grows: {seen:?}");
    assert!(seen.iter().all(|p| p.1 == Some(size as f64)));
    assert_eq!(seen.last().unwrap().0, size as f64);
    let _ = client.cancel().await;
}

#[tokio::test]
async fn identical_concurrent_arxiv_attachments_make_one() {
    use crate::upload_support::{assert_one_attachment, concurrently};
    let (emu, server) = setup().await;
    let mut pdf = b"%PDF-1.5\n".to_vec();
    pdf.extend(bytes(50_000, 61));
    emu.add_arxiv("2106.09685v2", pdf.clone());
    let server = std::sync::Arc::new(server);
    let answers = concurrently(
        &server,
        8,
        "zotero_attach_arxiv_pdf",
        json!({"item_key": PARENT, "arxiv_id": "2106.09685v2"}),
    )
    .await;
    assert_one_attachment(&emu, &answers);
    std::sync::Arc::try_unwrap(server)
        .ok()
        .unwrap()
        .stop()
        .await;
}
