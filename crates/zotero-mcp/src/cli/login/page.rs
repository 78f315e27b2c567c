//! The pages the callback listener answers a browser with: small, accessible HTML in plain
//! words, no script, no style, nothing from another host, and headers that keep it so
//! (`Content-Security-Policy: default-src 'none'`) and keep the callback's address (which
//! carries the approval) out of any `Referer`.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use zotero_api::oauth::{Callback, CallbackError};

fn html(status: u16, title: &str, text: &str) -> Response<Full<Bytes>> {
    let body = format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{title} – zotero-mcp</title>\n</head>\n<body>\n<main>\n<h1>{title}</h1>\n<p>{text}</p>\n</main>\n</body>\n</html>\n"
    );
    let mut resp = Response::new(Full::new(Bytes::from(body)));
    *resp.status_mut() = hyper::StatusCode::from_u16(status).unwrap_or_default();
    let h = resp.headers_mut();
    for (name, value) in [
        ("content-type", "text/html; charset=utf-8"),
        ("cache-control", "no-store"),
        (
            "content-security-policy",
            "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        ),
        ("referrer-policy", "no-referrer"),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
    ] {
        h.insert(name, hyper::header::HeaderValue::from_static(value));
    }
    resp
}

/// This sign-in's callback.
pub fn answered(cb: &Callback) -> Response<Full<Bytes>> {
    match cb {
        Callback::Approved(_) => html(
            200,
            "Zotero answered",
            "You allowed zotero-mcp to use your Zotero library. Go back to the terminal: it checks the new key with Zotero and says what the key may do. You can close this tab.",
        ),
        Callback::Denied { .. } => html(
            200,
            "Access not allowed",
            "You did not allow access, so no key was made and nothing was stored. You can close this tab; run zotero-mcp login again to sign in.",
        ),
    }
}

/// A callback of another sign-in (or none at all).
pub fn not_ours(e: &CallbackError) -> Response<Full<Bytes>> {
    let text = format!(
        "This is not the answer zotero-mcp is waiting for: {e}. If you started zotero-mcp login more than once, use the page of the latest one."
    );
    html(400, "Not this sign-in", &text)
}

/// Any other address on the listener.
pub fn not_found() -> Response<Full<Bytes>> {
    html(
        404,
        "Nothing here",
        "This address only receives Zotero's answer to zotero-mcp login.",
    )
}
