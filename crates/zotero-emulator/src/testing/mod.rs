//! A plain hyper client of the emulator, for its self-tests and for tests elsewhere that
//! speak to it directly (not through the Zotero client): requests with the emulator's key,
//! items, templates, the file upload flow, and signed requests to the emulated OAuth
//! (`oauth.rs`).
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

use crate::{Emulator, API_KEY, USER_ID};

/// Signed requests to the emulated OAuth endpoints and the person's answer on its page.
pub mod oauth;

pub struct Resp {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Resp {
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    /// The keys of a JSON array of objects.
    pub fn keys(&self) -> Vec<String> {
        self.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["key"].as_str().unwrap().to_string())
            .collect()
    }
    /// The URL of a `Link` relation.
    pub fn link(&self, rel: &str) -> Option<String> {
        let link = self.header("link")?;
        link.split(", ").find_map(|part| {
            let (url, r) = part.split_once("; ")?;
            (r == format!("rel=\"{rel}\""))
                .then(|| url.trim_matches(|c| c == '<' || c == '>').to_string())
        })
    }
    /// `Last-Modified-Version` as a number.
    pub fn lmv(&self) -> Option<u64> {
        self.header("last-modified-version")
            .map(|v| v.parse().unwrap())
    }
}

/// Why a test request got no complete answer: the connection failed (or was dropped, as
/// the desktop drops browser requests) or the body broke off.
#[derive(Debug)]
pub enum SendError {
    /// No answer: the connection was refused, reset or dropped.
    Request(hyper_util::client::legacy::Error),
    /// The answer's body broke off.
    Body(hyper::Error),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::Request(e) => write!(f, "request: {e}"),
            SendError::Body(e) => write!(f, "body: {e}"),
        }
    }
}

impl std::error::Error for SendError {}

/// Any request; `url` is absolute or a path on the emulator. An error when the client does
/// not receive a complete answer.
pub async fn send(
    emu: &Emulator,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Result<Resp, SendError> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let url = if url.starts_with("http") {
        url.to_string()
    } else {
        format!("{}{}", emu.uri(), url)
    };
    let mut req = hyper::Request::builder().method(method).uri(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = client
        .request(req.body(Full::new(body.into())).unwrap())
        .await
        .map_err(SendError::Request)?;
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp
        .into_body()
        .collect()
        .await
        .map_err(SendError::Body)?
        .to_bytes();
    Ok(Resp {
        status,
        headers,
        body,
    })
}

/// The library path of the emulator's user.
pub fn lib(path: &str) -> String {
    format!("/users/{USER_ID}/{path}")
}

/// A request to the API with the key and `Zotero-API-Version: 3`.
pub async fn api(
    emu: &Emulator,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Resp {
    let mut h = vec![("Zotero-API-Key", API_KEY), ("Zotero-API-Version", "3")];
    h.extend_from_slice(headers);
    send(emu, method, path, &h, body).await.unwrap()
}

pub async fn get(emu: &Emulator, path: &str) -> Resp {
    api(emu, "GET", path, &[], Bytes::new()).await
}

/// `POST {prefix}/items` with a JSON body.
pub async fn post_items(emu: &Emulator, items: &Value, headers: &[(&str, &str)]) -> Resp {
    let mut h = vec![("Content-Type", "application/json")];
    h.extend_from_slice(headers);
    api(emu, "POST", &lib("items"), &h, items.to_string()).await
}

/// A template from `GET /items/new`.
pub async fn template(emu: &Emulator, query: &str) -> Value {
    let r = get(emu, &format!("/items/new?{query}")).await;
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()
}

/// Creates one item; its key.
pub async fn create(emu: &Emulator, item: Value) -> String {
    let r = post_items(emu, &Value::Array(vec![item]), &[]).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let v = r.json();
    assert_eq!(v["failed"], serde_json::json!({}), "{v}");
    v["success"]["0"].as_str().unwrap().to_string()
}

/// A form-encoded POST to an item's file endpoint.
pub async fn file_post(emu: &Emulator, key: &str, form: &str, headers: &[(&str, &str)]) -> Resp {
    let mut h = vec![("Content-Type", "application/x-www-form-urlencoded")];
    h.extend_from_slice(headers);
    api(
        emu,
        "POST",
        &lib(&format!("items/{key}/file")),
        &h,
        form.to_string(),
    )
    .await
}

/// Lower-case hex MD5.
pub fn md5_hex(bytes: &[u8]) -> String {
    crate::util::md5_hex(bytes)
}

/// The authorization form for `bytes`.
pub fn auth_form(bytes: &[u8], filename: &str, content_type: &str) -> String {
    format!(
        "md5={}&filename={filename}&filesize={}&mtime=1700000000000&contentType={content_type}",
        md5_hex(bytes),
        bytes.len()
    )
}

/// Posts `prefix + bytes + suffix` to the authorization's URL, as a client does.
pub async fn upload(emu: &Emulator, auth: &Value, bytes: &[u8]) -> Resp {
    let mut body = auth["prefix"].as_str().unwrap().as_bytes().to_vec();
    body.extend_from_slice(bytes);
    body.extend_from_slice(auth["suffix"].as_str().unwrap().as_bytes());
    let ct = auth["contentType"].as_str().unwrap();
    send(
        emu,
        "POST",
        auth["url"].as_str().unwrap(),
        &[("Content-Type", ct)],
        body,
    )
    .await
    .unwrap()
}

/// A new imported_file attachment under `parent` (or top-level); its key.
pub async fn new_attachment(emu: &Emulator, parent: Option<&str>) -> String {
    let mut t = template(emu, "itemType=attachment&linkMode=imported_file").await;
    t["title"] = serde_json::json!("PDF");
    if let Some(p) = parent {
        t["parentItem"] = serde_json::json!(p);
        t.as_object_mut().unwrap().remove("collections");
    }
    create(emu, t).await
}
