//! A test client of the emulated OAuth endpoints (`testing::oauth`): requests signed by the
//! emulator's own rules (`sig.rs`) with any nonce and timestamp a test chooses, the answer's
//! form, and the person's click on the authorize page.

use bytes::Bytes;
use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use super::{send, Resp};
use crate::oauth::sig;
use crate::{Emulator, OAUTH_CLIENT_KEY, OAUTH_CLIENT_SECRET};

/// One signed `POST` to an OAuth endpoint; change a field to make it wrong.
#[derive(Debug, Clone)]
pub struct Signed {
    pub path: String,
    pub client_key: String,
    pub client_secret: String,
    /// The temporary token and its secret.
    pub token: Option<(String, String)>,
    /// Other parameters (`oauth_callback`, `oauth_verifier`).
    pub extra: Vec<(String, String)>,
    pub nonce: String,
    pub timestamp: u64,
    /// Sent in place of the right signature.
    pub signature: Option<String>,
}

impl Signed {
    /// A request of the emulator's application, now, with a fresh nonce.
    pub fn new(path: &str) -> Signed {
        Signed {
            path: path.to_string(),
            client_key: OAUTH_CLIENT_KEY.into(),
            client_secret: OAUTH_CLIENT_SECRET.into(),
            token: None,
            extra: Vec::new(),
            nonce: format!("n{}", rand::random::<u64>()),
            timestamp: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs(),
            signature: None,
        }
    }

    pub fn token(mut self, token: &str, secret: &str) -> Signed {
        self.token = Some((token.into(), secret.into()));
        self
    }

    pub fn param(mut self, k: &str, v: &str) -> Signed {
        self.extra.push((k.into(), v.into()));
        self
    }

    /// The protocol parameters, signed for the emulator's host.
    pub fn params(&self, emu: &Emulator) -> Vec<(String, String)> {
        let mut p: Vec<(String, String)> = vec![
            ("oauth_consumer_key".into(), self.client_key.clone()),
            ("oauth_nonce".into(), self.nonce.clone()),
            ("oauth_signature_method".into(), "HMAC-SHA1".into()),
            ("oauth_timestamp".into(), self.timestamp.to_string()),
            ("oauth_version".into(), "1.0".into()),
        ];
        if let Some((t, _)) = &self.token {
            p.push(("oauth_token".into(), t.clone()));
        }
        p.extend(self.extra.iter().cloned());
        let host = emu.uri().trim_start_matches("http://").to_string();
        let base = sig::base_string("POST", &host, &self.path, &p);
        let secret = self.token.as_ref().map(|(_, s)| s.as_str()).unwrap_or("");
        let good = sig::signature(&base, &self.client_secret, secret);
        p.push((
            "oauth_signature".into(),
            self.signature.clone().unwrap_or(good),
        ));
        p
    }

    /// Sends it with the parameters in the `Authorization` header.
    pub async fn send(&self, emu: &Emulator) -> Resp {
        let header = self
            .params(emu)
            .iter()
            .map(|(k, v)| format!("{}=\"{}\"", sig::encode(k), sig::encode(v)))
            .collect::<Vec<_>>()
            .join(", ");
        let header = format!("OAuth {header}");
        send(
            emu,
            "POST",
            &self.path,
            &[("Authorization", &header)],
            Bytes::new(),
        )
        .await
        .unwrap()
    }
}

/// The pairs of a form-encoded answer.
pub fn form(r: &Resp) -> BTreeMap<String, String> {
    sig::form(&r.text()).into_iter().collect()
}

/// Temporary credentials for a sign-in whose answer goes to `callback`: (token, secret).
pub async fn request_token(emu: &Emulator, callback: &str) -> (String, String) {
    let r = Signed::new("/oauth/request")
        .param("oauth_callback", callback)
        .send(emu)
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let f = form(&r);
    (f["oauth_token"].clone(), f["oauth_token_secret"].clone())
}

/// What a person's browser does with an authorize URL: opens the page (which must answer
/// 200), then sends the form with `decision` (`allow` or `deny`) and `fields` (extra
/// `k=v&…` changes to the form, `""` for none). The answer is the redirect to the callback.
pub async fn answer(emu: &Emulator, authorize_url: &str, decision: &str, fields: &str) -> Resp {
    let page = send(emu, "GET", authorize_url, &[], Bytes::new())
        .await
        .unwrap();
    assert_eq!(page.status, 200, "{}", page.text());
    let token = authorize_url
        .split(['?', '&'])
        .find_map(|p| p.strip_prefix("oauth_token="))
        .unwrap_or_default();
    let mut body = format!("oauth_token={token}&decision={decision}");
    if !fields.is_empty() {
        body.push('&');
        body.push_str(fields);
    }
    send(
        emu,
        "POST",
        "/oauth/authorize",
        &[("Content-Type", "application/x-www-form-urlencoded")],
        body,
    )
    .await
    .unwrap()
}
