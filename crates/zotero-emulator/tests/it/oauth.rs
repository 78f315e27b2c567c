//! zotero.org's OAuth 1.0a as the emulator plays it: the whole exchange, the presets on the
//! authorize page, a person who denies or changes the form, every check of a signed request
//! (client, signature, token secret, nonce, timestamp, verifier, single use), and the minted
//! key working on the API with what it was granted.

use bytes::Bytes;
use zotero_emulator::testing::oauth::{answer, form, request_token, Signed};
use zotero_emulator::testing::{send, Resp};
use zotero_emulator::{Emulator, KeyAccess, Preset, USERNAME, USER_ID};

const CALLBACK: &str = "http://127.0.0.1:9/callback";

fn location(r: &Resp) -> String {
    assert_eq!(r.status, 302, "{}", r.text());
    r.header("location").unwrap()
}

fn param(url: &str, name: &str) -> Option<String> {
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix(&format!("{name}=")))
        .map(str::to_string)
}

async fn with_key(emu: &Emulator, key: &str, method: &str, path: &str, body: &str) -> Resp {
    let h = [
        ("Zotero-API-Key", key),
        ("Zotero-API-Version", "3"),
        ("Content-Type", "application/json"),
    ];
    send(emu, method, path, &h, Bytes::from(body.to_string()))
        .await
        .unwrap()
}

/// Request, authorize with `query` presets, answer, exchange: (key, access answer).
async fn sign_in(emu: &Emulator, query: &str, fields: &str) -> Resp {
    let (token, secret) = request_token(emu, CALLBACK).await;
    let url = format!("/oauth/authorize?oauth_token={token}&{query}&name=Test%20key");
    let back = location(&answer(emu, &url, "allow", fields).await);
    assert!(back.starts_with(&format!("{CALLBACK}?oauth_token={token}&oauth_verifier=")));
    let verifier = param(&back, "oauth_verifier").unwrap();
    Signed::new("/oauth/access")
        .token(&token, &secret)
        .param("oauth_verifier", &verifier)
        .send(emu)
        .await
}

#[tokio::test]
async fn a_read_only_sign_in_mints_a_key_that_reads_and_may_not_write() {
    let emu = Emulator::start().await;
    let r = sign_in(
        &emu,
        "library_access=1&notes_access=1&write_access=0&all_groups=read",
        "",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let f = form(&r);
    let key = f["oauth_token"].clone();
    assert_eq!(key.len(), 24);
    assert_eq!(
        f["oauth_token_secret"], key,
        "the token and its secret are the key"
    );
    assert_eq!(f["userID"], USER_ID.to_string());
    assert_eq!(f["username"], USERNAME);
    assert_eq!(
        emu.oauth_presets(),
        [Preset {
            library: true,
            notes: true,
            write: false,
            all_groups: "read"
        }]
    );
    let k = with_key(&emu, &key, "GET", "/keys/current", "")
        .await
        .json();
    assert_eq!(k["key"], key.as_str());
    assert_eq!(
        k["access"],
        serde_json::json!({"user": {"library": true, "files": true, "notes": true},
                           "groups": {"all": {"library": true, "write": false}}})
    );
    let items = format!("/users/{USER_ID}/items");
    assert_eq!(with_key(&emu, &key, "GET", &items, "").await.status, 200);
    let w = with_key(&emu, &key, "POST", &items, r#"[{"itemType":"book"}]"#).await;
    assert_eq!(w.status, 403, "{}", w.text());
    assert_eq!(w.text(), "Write access denied");
    assert_eq!(
        emu.oauth_pending(),
        0,
        "the temporary credentials are spent"
    );
}

#[tokio::test]
async fn the_person_may_change_the_form_and_zotero_may_grant_more() {
    let emu = Emulator::start().await;
    let all = "library_access=1&notes_access=1&write_access=1&all_groups=write";
    let r = sign_in(&emu, all, "write_access=0&all_groups=none").await;
    let key = form(&r)["oauth_token"].clone();
    let k = with_key(&emu, &key, "GET", "/keys/current", "")
        .await
        .json();
    assert_eq!(k["access"]["user"]["write"], serde_json::Value::Null);
    assert_eq!(k["access"]["groups"], serde_json::Value::Null);

    emu.oauth_grant_instead(Some(KeyAccess::all_groups(true)));
    let r = sign_in(&emu, "library_access=1&write_access=0&all_groups=none", "").await;
    let key = form(&r)["oauth_token"].clone();
    let k = with_key(&emu, &key, "GET", "/keys/current", "")
        .await
        .json();
    assert_eq!(k["access"]["user"]["write"], true);
    assert_eq!(k["access"]["groups"]["all"]["write"], true);
    // A key reaches only its own `/keys/{key}`.
    let other = with_key(&emu, &key, "GET", "/keys/EmuKey0123456789abcdefAB", "").await;
    assert_eq!(other.status, 403);
    assert_eq!(emu.oauth_keys().len(), 2);
}

#[tokio::test]
async fn a_denial_redirects_without_a_verifier_and_mints_nothing() {
    let emu = Emulator::start().await;
    let (token, secret) = request_token(&emu, "http://127.0.0.1:9/cb?state=x").await;
    let url = format!("/oauth/authorize?oauth_token={token}");
    let back = location(&answer(&emu, &url, "deny", "").await);
    assert_eq!(
        back,
        format!("http://127.0.0.1:9/cb?state=x&oauth_token={token}&oauth_problem=user_refused")
    );
    let r = Signed::new("/oauth/access")
        .token(&token, &secret)
        .param("oauth_verifier", "anything")
        .send(&emu)
        .await;
    assert_eq!(
        (r.status, r.text().as_str()),
        (401, "oauth_problem=permission_denied")
    );
    // Answered once: the page refuses the token now.
    let again = send(&emu, "GET", &url, &[], Bytes::new()).await.unwrap();
    assert_eq!(again.status, 400);
    assert!(emu.oauth_keys().is_empty());
}

#[tokio::test]
async fn every_signed_request_is_checked() {
    let emu = Emulator::start().await;
    let problem = |r: &Resp| (r.status, r.text());
    let req = || Signed::new("/oauth/request").param("oauth_callback", CALLBACK);

    let mut wrong = req();
    wrong.client_secret = "not-the-secret".into();
    assert_eq!(
        problem(&wrong.send(&emu).await),
        (401, "oauth_problem=signature_invalid".into())
    );
    let mut tampered = req();
    let good = tampered.params(&emu).last().unwrap().1.clone();
    tampered.extra[0].1 = "http://attacker.example/cb".into();
    tampered.signature = Some(good);
    assert_eq!(
        problem(&tampered.send(&emu).await).1,
        "oauth_problem=signature_invalid"
    );
    let mut unknown = req();
    unknown.client_key = "00000000000000000000".into();
    assert_eq!(
        problem(&unknown.send(&emu).await),
        (401, "oauth_problem=consumer_key_unknown".into())
    );
    let mut old = req();
    old.timestamp -= 3600;
    assert_eq!(
        problem(&old.send(&emu).await).1,
        "oauth_problem=timestamp_refused"
    );
    let once = req();
    assert_eq!(once.send(&emu).await.status, 200);
    assert_eq!(
        problem(&once.send(&emu).await),
        (401, "oauth_problem=nonce_used".into())
    );
    let no_callback = Signed::new("/oauth/request").send(&emu).await;
    assert_eq!(no_callback.status, 400);
    assert!(
        no_callback.text().contains("oauth_callback"),
        "{}",
        no_callback.text()
    );
    let unsigned = send(&emu, "POST", "/oauth/request", &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(unsigned.status, 400);

    // The exchange: the token's secret signs it, the verifier must match, once.
    let (token, secret) = request_token(&emu, CALLBACK).await;
    let url = format!("/oauth/authorize?oauth_token={token}");
    let verifier = param(
        &location(&answer(&emu, &url, "allow", "").await),
        "oauth_verifier",
    )
    .unwrap();
    let exchange = || {
        Signed::new("/oauth/access")
            .token(&token, &secret)
            .param("oauth_verifier", &verifier)
    };
    let mut no_secret = exchange();
    no_secret.token = Some((token.clone(), String::new()));
    assert_eq!(
        problem(&no_secret.send(&emu).await).1,
        "oauth_problem=signature_invalid"
    );
    let forged = Signed::new("/oauth/access")
        .token(&token, &secret)
        .param("oauth_verifier", "0000000000")
        .send(&emu)
        .await;
    assert_eq!(
        problem(&forged),
        (401, "oauth_problem=verifier_invalid".into())
    );
    assert_eq!(
        exchange().send(&emu).await.status,
        200,
        "a wrong verifier spends nothing"
    );
    assert_eq!(
        problem(&exchange().send(&emu).await),
        (401, "oauth_problem=token_rejected".into())
    );
    assert_eq!(emu.oauth_keys().len(), 1);
    let page = send(
        &emu,
        "GET",
        "/oauth/authorize?oauth_token=nope",
        &[],
        Bytes::new(),
    )
    .await
    .unwrap();
    assert_eq!(page.status, 400);
}

#[tokio::test]
async fn the_authorize_page_shows_the_presets_and_escapes_the_name() {
    let emu = Emulator::start().await;
    let (token, _) = request_token(&emu, CALLBACK).await;
    let url = format!(
        "/oauth/authorize?oauth_token={token}&write_access=1&all_groups=write&name=%3Cb%3E"
    );
    let page = send(&emu, "GET", &url, &[], Bytes::new()).await.unwrap();
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(html.contains("Key name: &lt;b&gt;"), "{html}");
    assert!(html.contains("<option value=\"write\" selected>"), "{html}");
    assert!(!html.contains("<script"), "{html}");
    // Defaults for what the URL leaves out (notes off).
    assert_eq!(
        emu.oauth_presets(),
        [Preset {
            library: true,
            notes: false,
            write: true,
            all_groups: "write"
        }]
    );
}
