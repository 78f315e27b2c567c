//! The desktop's HTTP server as it is on the wire (`server.js` over Mozilla's httpd.js): one
//! request per connection, `HTTP/1.0` status lines whose reason phrase is `undefined` for
//! the codes its table lacks, no `Content-Length` on a non-empty body (the connection closes
//! after every answer, so the body runs to EOF), `Content-Length: 0` on an empty one. A raw
//! TCP server, as hyper (wiremock) always writes `HTTP/1.1` with lengths.

use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

use super::super::super::{take_fault, FaultKind, Recorded, Server, State, RECORDED_BODY_LIMIT};
use super::super::headers::API_HEADERS;
use super::{DialogAnswer, Step};
use crate::Answer;

/// The largest request head read (the desktop has no limit the emulator needs to model).
const MAX_HEAD: usize = 64 * 1024;

/// `_responseCodes` of `server.js`: a code missing here is written as `undefined`.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        300 => "Multiple Choices",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        409 => "Conflict",
        412 => "Precondition Failed",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "undefined",
    }
}

/// Serves the Zotero 10 desktop on `listener` until the task is dropped.
pub(crate) async fn serve(listener: TcpListener, state: Arc<Mutex<State>>) {
    let base = listener
        .local_addr()
        .map(|a| format!("http://{a}"))
        .unwrap_or_default();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let state = state.clone();
        let base = base.clone();
        tokio::spawn(async move {
            // A client that hangs up early is not the emulator's problem.
            let _ = connection(stream, state, base).await;
        });
    }
}

/// How the request's body came.
enum Body {
    Length(Vec<u8>),
    /// `Transfer-Encoding: chunked` (decoded) or nothing at all.
    NoLength(Vec<u8>),
}

async fn read_request(
    stream: &mut BufReader<TcpStream>,
) -> std::io::Result<Option<(Recorded, Body)>> {
    let mut head = Vec::new();
    loop {
        let n = stream.read_until(b'\n', &mut head).await?;
        if n == 0 {
            return Ok(None);
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") || head.len() > MAX_HEAD {
            break;
        }
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let mut parts = first.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let target = parts.next().unwrap_or("/").to_string();
    let mut headers = Vec::new();
    for line in lines {
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let find = |name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let body = if let Some(len) = find("content-length").and_then(|l| l.parse::<usize>().ok()) {
        let mut b = vec![0; len];
        stream.read_exact(&mut b).await?;
        Body::Length(b)
    } else if find("transfer-encoding").is_some_and(|t| t.eq_ignore_ascii_case("chunked")) {
        Body::NoLength(read_chunked(stream).await?)
    } else {
        Body::NoLength(Vec::new())
    };
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (target.clone(), String::new()),
    };
    let query = url_query(&query);
    let bytes = match &body {
        Body::Length(b) | Body::NoLength(b) => b,
    };
    let rec = Recorded {
        method,
        path: percent_decode(&path),
        query,
        headers,
        body: bytes[..bytes.len().min(RECORDED_BODY_LIMIT)].to_vec(),
        body_len: bytes.len(),
        at: Instant::now(),
        time: SystemTime::now(),
    };
    Ok(Some((rec, body)))
}

async fn read_chunked(stream: &mut BufReader<TcpStream>) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let mut line = String::new();
        stream.read_line(&mut line).await?;
        let size =
            usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16).unwrap_or(0);
        if size == 0 {
            let mut end = String::new();
            stream.read_line(&mut end).await?;
            return Ok(out);
        }
        let mut chunk = vec![0; size + 2];
        stream.read_exact(&mut chunk).await?;
        chunk.truncate(size);
        out.extend(chunk);
    }
}

/// `URLSearchParams`: `+` is a space in a query string.
fn url_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (
                percent_decode(&k.replace('+', " ")),
                percent_decode(&v.replace('+', " ")),
            )
        })
        .collect()
}

/// `%XX` escapes decoded (invalid ones kept as written).
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn connection(
    stream: TcpStream,
    state: Arc<Mutex<State>>,
    base: String,
) -> std::io::Result<()> {
    let mut stream = BufReader::new(stream);
    let Some((rec, body)) = read_request(&mut stream).await? else {
        return Ok(());
    };
    let (bytes, has_length) = match body {
        Body::Length(b) => (b, true),
        Body::NoLength(b) => (b, false),
    };
    let (step, fault, dialog) = {
        let mut st = state.lock().unwrap();
        st.local.requests.push(rec.clone());
        let fault = take_fault(&mut st.faults, &rec, Server::Local);
        let step = match &fault {
            Some(FaultKind::Status(code)) => {
                Step::Answer(super::text(*code, &format!("Emulated status {code}")))
            }
            Some(FaultKind::ServerError) => Step::Answer(super::bare(500, "")),
            Some(FaultKind::RateLimited { .. } | FaultKind::Unavailable { .. }) => {
                Step::Answer(super::text(503, "Emulated unavailable"))
            }
            other => {
                match other {
                    Some(FaultKind::EditedElsewhere) => super::edited_elsewhere(&mut st, &rec.path),
                    Some(FaultKind::EditedElsewhereWith(edit)) => {
                        let lib = super::library_of_local_path(&rec.path);
                        super::super::super::writes::edit_in_zotero(&mut st, edit, lib);
                    }
                    _ => {}
                }
                super::handle(&mut st, &base, &rec, &bytes, has_length)
            }
        };
        let dialog = match step {
            Step::Dialog { .. } => Some(st.local.z10.dialog_wait()),
            _ => None,
        };
        (step, fault, dialog)
    };
    if let Some(FaultKind::Slow(d)) = &fault {
        tokio::time::sleep(*d).await;
    }
    let answer = match step {
        Step::Drop => {
            stream.get_mut().shutdown().await?;
            return Ok(());
        }
        Step::Answer(a) => a,
        Step::Dialog { app } => {
            let answer = match dialog {
                Some(d) => d.answer().await,
                None => DialogAnswer::Deny,
            };
            let mut st = state.lock().unwrap();
            super::dialog_answered(&mut st, &app, answer)
        }
    };
    if matches!(fault, Some(FaultKind::Drop)) {
        // Processed, then the answer is lost: the connection closes with nothing written.
        stream.get_mut().shutdown().await?;
        return Ok(());
    }
    let out = encode(&answer, &state);
    stream.get_mut().write_all(&out).await?;
    stream.get_mut().shutdown().await?;
    Ok(())
}

/// The bytes of an answer as `server.js` writes them.
fn encode(a: &Answer, state: &Arc<Mutex<State>>) -> Vec<u8> {
    let server_id = state.lock().unwrap().local.z10.server_id.clone();
    let mut out = format!("HTTP/1.0 {} {}\r\n", a.status, reason(a.status));
    out.push_str("X-Zotero-Version: 10.0.0\r\n");
    out.push_str("X-Zotero-Connector-API-Version: 3\r\n");
    if !a.bare {
        for (k, v) in API_HEADERS {
            out.push_str(&format!("{k}: {v}\r\n"));
        }
        out.push_str(&format!("Zotero-Server-ID: {server_id}\r\n"));
    }
    for (k, v) in &a.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(ct) = a.content_type.as_deref().filter(|c| !c.is_empty()) {
        out.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    if a.body.is_empty() {
        out.push_str("Content-Length: 0\r\n");
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&a.body);
    bytes
}

/// What the dialog of one authorization waits on.
pub(crate) struct DialogWait {
    pub(crate) scripted: Option<(DialogAnswer, std::time::Duration)>,
    pub(crate) answers: Arc<tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<DialogAnswer>>>,
}

impl DialogWait {
    async fn answer(self) -> DialogAnswer {
        if let Some((a, after)) = self.scripted {
            if !after.is_zero() {
                tokio::time::sleep(after).await;
            }
            return a;
        }
        let mut rx = self.answers.lock().await;
        // The sender lives as long as the emulator: `None` only while shutting down.
        rx.recv().await.unwrap_or(DialogAnswer::Deny)
    }
}
