//! The client side of zotero.org's OAuth 1.0a key exchange
//! (<https://www.zotero.org/support/dev/web_api/v3/oauth>): a registered application asks
//! for temporary credentials (`POST /oauth/request`, with its `oauth_callback`), sends the
//! person to `/oauth/authorize` with the access it wants preset, reads Zotero's redirect to
//! the callback ([`read_callback`]), and exchanges the approval for an API key
//! (`POST /oauth/access`, which answers the key as `oauth_token`, with `userID` and
//! `username`). Requests are signed with HMAC-SHA1 ([`sign`]) and go through the one HTTP
//! client (zotero-net's retry loop, sent once: a signed request's nonce is single-use).
//!
//! The flow knows nothing of where the callback lands: `zotero-mcp login` listens on
//! loopback; an authorization server can take it on its own redirect URI.

mod callback;
mod grant;
pub mod sign;

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use hyper::header::HeaderValue;
use hyper::Method;
use tokio_util::sync::CancellationToken;

pub use callback::{query_of, read_callback, Callback, CallbackError, Verifier};
pub use grant::{AccessRequest, GroupLevel};

use crate::config::{ApiKey, ClientConfig};
use crate::error::{UpstreamAnswer, ZoteroError};
use crate::http::{ApiRequest, HttpClient};
use crate::response::{encode_query, ApiResponse};
use sign::{form_pairs, Signing};

/// zotero.org, where the OAuth endpoints are.
pub const DEFAULT_BASE: &str = "https://www.zotero.org";
/// Where an application is registered to get its client key and secret.
pub const APPS_PAGE: &str = "https://www.zotero.org/oauth/apps";

/// A registered application's client key and secret.
#[derive(Debug, Clone)]
pub struct ClientCredentials {
    pub key: String,
    /// Never sent: it signs.
    pub secret: ApiKey,
}

/// The temporary credentials of one sign-in: the token the person approves (it is in the
/// authorize URL), and its secret, which signs the exchange and is never shown.
#[derive(Debug, Clone)]
pub struct TemporaryCredentials {
    pub token: String,
    secret: ApiKey,
}

/// The API key Zotero made, and whose it is.
#[derive(Debug, Clone)]
pub struct GrantedKey {
    pub key: ApiKey,
    pub user_id: u64,
    pub username: String,
}

/// Why a step of the exchange failed; each message says what to do.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OAuthError {
    #[error("zotero.org refused this application (HTTP {}{}): check ZOTERO_OAUTH_CLIENT_KEY and ZOTERO_OAUTH_CLIENT_SECRET against your application at {APPS_PAGE}, and that this computer's clock is right", .answer.status, said(.answer))]
    ClientRefused { answer: UpstreamAnswer },
    #[error("zotero.org refused to exchange the approval for a key (HTTP {}{}): the answer was not for this sign-in, was used already or expired; sign in again", .answer.status, said(.answer))]
    ExchangeRefused { answer: UpstreamAnswer },
    #[error("zotero.org answered {step} without {missing}; try again later")]
    BadAnswer {
        step: &'static str,
        missing: &'static str,
    },
    #[error("{0}")]
    Zotero(#[from] ZoteroError),
}

/// Zotero's short plain-text reason, if it gave one.
fn said(a: &UpstreamAnswer) -> String {
    let body = a.body.trim();
    let plain = !body.is_empty() && body.len() <= 200 && !body.contains('<');
    if plain {
        format!(": {}", body.replace(['\r', '\n'], " "))
    } else {
        String::new()
    }
}

/// One application's OAuth 1.0a client of zotero.org (or `ZOTERO_OAUTH_BASE`).
pub struct OAuthClient {
    http: Arc<HttpClient>,
    client: ClientCredentials,
}

impl OAuthClient {
    /// A client of the OAuth endpoints under `base` (no trailing slash), with the timeouts
    /// and retry policy of `config` and no API key.
    pub fn new(
        config: &ClientConfig,
        base: &str,
        client: ClientCredentials,
    ) -> Result<Self, ZoteroError> {
        Ok(Self {
            http: HttpClient::new_keyless(config, base)?,
            client,
        })
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.http.base())
    }

    /// Sends one signed `POST` to `path` (sent once: its nonce may not be used twice).
    async fn post(
        &self,
        path: &str,
        token: Option<(&str, &str)>,
        extra: &[(&str, &str)],
        cancel: &CancellationToken,
    ) -> Result<ApiResponse, ZoteroError> {
        let nonce = sign::nonce();
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let signing = Signing {
            client_key: &self.client.key,
            client_secret: self.client.secret.expose(),
            token,
            extra,
            nonce: &nonce,
            timestamp,
        };
        let mut header =
            HeaderValue::from_str(&signing.header("POST", &self.url(path))).map_err(|_| {
                ZoteroError::InvalidRequest {
                    reason: "the OAuth client key has characters a header cannot carry".into(),
                }
            })?;
        header.set_sensitive(true);
        let req = ApiRequest::with_body(
            Method::POST,
            path,
            "application/x-www-form-urlencoded",
            Bytes::new(),
        )
        .header("authorization", header);
        self.http.send(&req, cancel).await
    }

    /// Step 1: temporary credentials for a sign-in whose answer goes to `callback`.
    pub async fn request_token(
        &self,
        callback: &str,
        cancel: &CancellationToken,
    ) -> Result<TemporaryCredentials, OAuthError> {
        let resp = self
            .post(
                "/oauth/request",
                None,
                &[("oauth_callback", callback)],
                cancel,
            )
            .await?;
        match resp.status {
            200 => {}
            400 | 401 | 403 => {
                return Err(OAuthError::ClientRefused {
                    answer: resp.answer(),
                })
            }
            _ => return Err(unexpected(&resp, "ask zotero.org for a sign-in")),
        }
        let pairs = form_pairs(&String::from_utf8_lossy(&resp.body));
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let missing = |missing| OAuthError::BadAnswer {
            step: "the temporary credentials",
            missing,
        };
        if get("oauth_callback_confirmed").as_deref() != Some("true") {
            return Err(missing("oauth_callback_confirmed=true (OAuth 1.0a)"));
        }
        let token = get("oauth_token")
            .filter(|t| !t.is_empty())
            .ok_or_else(|| missing("oauth_token"))?;
        let secret = get("oauth_token_secret").ok_or_else(|| missing("oauth_token_secret"))?;
        Ok(TemporaryCredentials {
            token,
            secret: ApiKey::new(secret),
        })
    }

    /// Step 2: where the person approves `temp`, with the access asked for preset and the
    /// key named `name` on zotero.org's list of keys.
    pub fn authorize_url(
        &self,
        temp: &TemporaryCredentials,
        access: &AccessRequest,
        name: &str,
    ) -> String {
        let mut pairs = vec![("oauth_token", temp.token.as_str())];
        pairs.extend(access.query_pairs());
        pairs.push(("name", name));
        format!("{}?{}", self.url("/oauth/authorize"), encode_query(&pairs))
    }

    /// Step 3: the approval exchanged for the API key (once: the temporary credentials are
    /// spent).
    pub async fn access_token(
        &self,
        temp: &TemporaryCredentials,
        verifier: &Verifier,
        cancel: &CancellationToken,
    ) -> Result<GrantedKey, OAuthError> {
        let token = Some((temp.token.as_str(), temp.secret.expose()));
        let extra = [("oauth_verifier", verifier.expose())];
        let resp = self.post("/oauth/access", token, &extra, cancel).await?;
        match resp.status {
            200 => {}
            400 | 401 | 403 => {
                return Err(OAuthError::ExchangeRefused {
                    answer: resp.answer(),
                })
            }
            _ => return Err(unexpected(&resp, "exchange the approval for a key")),
        }
        let pairs = form_pairs(&String::from_utf8_lossy(&resp.body));
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        let missing = |missing| OAuthError::BadAnswer {
            step: "the key",
            missing,
        };
        let key = get("oauth_token")
            .filter(|k| !k.is_empty())
            .ok_or_else(|| missing("oauth_token"))?;
        let user_id = get("userID")
            .and_then(|u| u.parse().ok())
            .ok_or_else(|| missing("a numeric userID"))?;
        Ok(GrantedKey {
            key: ApiKey::new(key),
            user_id,
            username: get("username").unwrap_or_default(),
        })
    }
}

fn unexpected(resp: &ApiResponse, what: &str) -> OAuthError {
    OAuthError::Zotero(crate::response::unexpected(resp, what))
}
