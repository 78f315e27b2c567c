//! Where Zotero's answer lands: a one-shot listener on loopback (`127.0.0.1`, the port the
//! callback URL names) that takes exactly one callback whose `oauth_token` is this sign-in's,
//! answers the browser a small page, and closes; requests that are not that callback get a
//! page saying so and change nothing. With `from_stdin`, an address pasted on stdin (the
//! one the browser shows after approving, when the callback cannot reach this machine) is
//! read the same way.

use std::convert::Infallible;
use std::io::BufRead;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use zotero_api::oauth::{query_of, read_callback, Callback};

use super::page;

/// The path of the callback URL on the listener.
pub const CALLBACK_PATH: &str = "/callback";

/// The answer to one request on the listener, and the callback it carried, if it was ours.
fn answer(req: &Request<Incoming>, expected: &str) -> (Response<Full<Bytes>>, Option<Callback>) {
    if req.uri().path() != CALLBACK_PATH {
        return (page::not_found(), None);
    }
    if req.method() != hyper::Method::GET {
        return (page::not_found(), None);
    }
    match read_callback(req.uri().query().unwrap_or_default(), expected) {
        Ok(cb) => (page::answered(&cb), Some(cb)),
        Err(e) => (page::not_ours(&e), None),
    }
}

/// Serves one connection (one request: no keep-alive); the callback it carried is handed
/// on only once its page has been sent.
async fn serve(
    stream: tokio::net::TcpStream,
    expected: Arc<str>,
    found: mpsc::UnboundedSender<Callback>,
) {
    let carried: Arc<Mutex<Option<Callback>>> = Arc::default();
    let slot = carried.clone();
    let service = hyper::service::service_fn(move |req: Request<Incoming>| {
        let (resp, cb) = answer(&req, &expected);
        if let Some(cb) = cb {
            *zotero_net::lock(&slot) = Some(cb);
        }
        async move { Ok::<_, Infallible>(resp) }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if served.is_ok() {
        if let Some(cb) = zotero_net::lock(&carried).take() {
            let _ = found.send(cb);
        }
    }
}

/// Reads pasted addresses from stdin until one is this sign-in's answer (or stdin ends).
/// A plain thread: it may block on a terminal nobody types in, and must not hold the
/// runtime's shutdown.
fn read_stdin(expected: Arc<str>, found: mpsc::UnboundedSender<Callback>) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { return };
            if line.trim().is_empty() {
                continue;
            }
            match read_callback(query_of(&line), &expected) {
                Ok(cb) => {
                    let _ = found.send(cb);
                    return;
                }
                Err(e) => eprintln!(
                    "zotero-mcp login: that address is not Zotero's answer to this sign-in ({e}); paste the whole address your browser shows after you approved"
                ),
            }
            if found.is_closed() {
                return;
            }
        }
    });
}

/// Waits for this sign-in's callback (`expected` is its temporary token) on `listener`, and
/// on stdin when `from_stdin`; the listener is closed when this returns.
pub async fn wait(listener: TcpListener, expected: &str, from_stdin: bool) -> Callback {
    let expected: Arc<str> = Arc::from(expected);
    let (found, mut arrived) = mpsc::unbounded_channel();
    if from_stdin {
        read_stdin(expected.clone(), found.clone());
    }
    loop {
        tokio::select! {
            Some(cb) = arrived.recv() => return cb,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(serve(stream, expected.clone(), found.clone()));
                }
            }
        }
    }
}
