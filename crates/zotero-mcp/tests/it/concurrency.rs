//! Bursts against the bounds on upstream requests: a counting TCP proxy in front of the
//! emulator holds every request until the test lets it through, and counts the requests in
//! flight at once (sent, not yet answered) and the connections open at once. A burst of tool
//! calls never has more than `MAX_IN_FLIGHT_PER_BACKEND` requests in flight, a cancelled
//! queued call gives its place to the next one, and a burst of subscriptions to one URI reads
//! it once (and once per change, however many sessions follow it).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio_util::sync::CancellationToken;
use zotero_emulator::{Emulator, API_KEY, USER_ID};
use zotero_net::MAX_IN_FLIGHT_PER_BACKEND as CAP;

use crate::common::{env_for, in_process_as, TestClient};

/// What the proxy has seen so far.
#[derive(Debug, Clone, Default)]
struct Seen {
    in_flight: usize,
    max_in_flight: usize,
    open: usize,
    max_open: usize,
    /// Connections accepted in all.
    accepted: usize,
    /// The request line's target of every request, in arrival order.
    paths: Vec<String>,
}

/// A TCP proxy that counts what goes through it and holds each request at its gate.
struct Proxy {
    addr: SocketAddr,
    seen: watch::Sender<Seen>,
    gate: Arc<Semaphore>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// A proxy to `target` whose gate is open (see `hold`).
    async fn start(target: &str) -> Proxy {
        let target: SocketAddr = target
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .parse()
            .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (seen, _) = watch::channel(Seen::default());
        let gate = Arc::new(Semaphore::new(Semaphore::MAX_PERMITS / 2));
        let (tx, g) = (seen.clone(), gate.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tx.send_modify(|s| {
                    s.accepted += 1;
                    s.open += 1;
                    s.max_open = s.max_open.max(s.open);
                });
                tokio::spawn(pipe(client, target, tx.clone(), g.clone()));
            }
        });
        Proxy {
            addr,
            seen,
            gate,
            task,
        }
    }

    fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn seen(&self) -> Seen {
        self.seen.borrow().clone()
    }

    /// Waits until what the proxy has seen satisfies `done` (an event, not a time).
    async fn until(&self, done: impl FnMut(&Seen) -> bool) -> Seen {
        self.seen.subscribe().wait_for(done).await.unwrap().clone()
    }

    /// Shuts the gate: requests wait there until `release` or `open`.
    fn hold(&self) {
        self.gate.forget_permits(self.gate.available_permits());
    }

    /// Lets `n` more requests through.
    fn release(&self, n: usize) {
        self.gate.add_permits(n);
    }

    /// Lets every request through from now on.
    fn open(&self) {
        self.gate.add_permits(Semaphore::MAX_PERMITS / 2);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The target of an HTTP/1 request line at the start of `bytes`.
fn request_target(bytes: &[u8]) -> String {
    let line = String::from_utf8_lossy(bytes);
    line.split_whitespace().nth(1).unwrap_or("").to_string()
}

/// Carries one connection both ways. A request is in flight from its first bytes until the
/// first bytes of its answer (HTTP/1.1 clients do not pipeline); its bytes wait at the gate.
async fn pipe(
    client: TcpStream,
    target: SocketAddr,
    seen: watch::Sender<Seen>,
    gate: Arc<Semaphore>,
) {
    let Ok(upstream) = TcpStream::connect(target).await else {
        seen.send_modify(|s| s.open -= 1);
        return;
    };
    let (mut cr, mut cw) = client.into_split();
    let (mut ur, mut uw) = upstream.into_split();
    let busy = AtomicBool::new(false);
    let up = async {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = cr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if !busy.swap(true, Ordering::SeqCst) {
                let target = request_target(&buf[..n]);
                seen.send_modify(|s| {
                    s.in_flight += 1;
                    s.max_in_flight = s.max_in_flight.max(s.in_flight);
                    s.paths.push(target);
                });
                let Ok(permit) = gate.acquire().await else {
                    break;
                };
                permit.forget();
            }
            if uw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = uw.shutdown().await;
    };
    let down = async {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = ur.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if busy.swap(false, Ordering::SeqCst) {
                seen.send_modify(|s| s.in_flight -= 1);
            }
            if cw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = cw.shutdown().await;
    };
    tokio::join!(up, down);
    let unanswered = busy.load(Ordering::SeqCst);
    seen.send_modify(|s| {
        s.open -= 1;
        if unanswered {
            s.in_flight -= 1;
        }
    });
}

/// Runs every future at once and answers their outputs in order (a burst from one task).
async fn join_all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut running: Vec<_> = futures.into_iter().map(|f| Some(Box::pin(f))).collect();
    let mut outputs: Vec<Option<F::Output>> = running.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, out) in running.iter_mut().zip(outputs.iter_mut()) {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        *out = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().map(Option::unwrap).collect()
}

/// How many burst calls the tests make: far more than the cap, few enough for a test.
const BURST: usize = 200;

#[tokio::test]
async fn a_burst_of_tool_calls_queues_behind_the_cap() {
    let emu = Emulator::start().await;
    let proxy = Proxy::start(&emu.uri()).await;
    let s = in_process_as(
        &env_for(&proxy.uri(), USER_ID, API_KEY),
        TestClient::default(),
    )
    .await;
    // One call first: what the server reads once (the key's rights) is read by then.
    s.call("zotero_get_item", json!({"item_key": "VASWANI7"}))
        .await
        .expect_ok();
    let warm = proxy.seen().paths.len();
    proxy.hold();
    let calls =
        join_all((0..BURST).map(|_| s.call("zotero_get_item", json!({"item_key": "VASWANI7"}))));
    let let_through = async {
        // The cap is reached and every request is held: no more may arrive.
        proxy.until(|s| s.in_flight >= CAP).await;
        proxy.open();
    };
    let (outcomes, ()) = tokio::join!(calls, let_through);
    for outcome in outcomes {
        outcome.expect_ok();
    }
    let seen = proxy.seen();
    assert_eq!(seen.max_in_flight, CAP, "{seen:?}");
    assert!(
        seen.paths.len() >= warm + BURST,
        "{} requests",
        seen.paths.len()
    );
    // A connection per request in flight, and at most as many idle ones kept.
    // (a connect that lost the race to an idle connection is kept idle).
    assert!(seen.max_open <= 2 * CAP, "{seen:?}");
    assert!(seen.accepted <= 2 * CAP, "{seen:?}");
    println!(
        "{BURST} calls: {} requests, at most {} in flight, {} connections at once, {} in all",
        seen.paths.len(),
        seen.max_in_flight,
        seen.max_open,
        seen.accepted
    );
}

#[tokio::test]
async fn a_cancelled_queued_request_gives_its_place_to_the_next() {
    use zotero_api::http::{ApiRequest, HttpClient};
    use zotero_api::ClientConfig;
    let emu = Emulator::start().await;
    let proxy = Proxy::start(&emu.uri()).await;
    let config = ClientConfig {
        api_base: proxy.uri(),
        api_key: Some(zotero_api::ApiKey::new(API_KEY)),
        user_id: Some(USER_ID),
        missing_credentials: Vec::new(),
        retry: zotero_net::RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(1),
            max_wait: Duration::from_secs(1),
        },
        timeout: Duration::from_secs(300),
        read_cache: None,
        local_api_base: None,
        local_writes: Default::default(),
        storage_policy: zotero_net::AddressPolicy::Any,
    };
    let http = HttpClient::new(&config).unwrap();
    proxy.hold();
    let send = |path: String, cancel: CancellationToken| {
        let http = http.clone();
        tokio::spawn(async move { http.send(&ApiRequest::get(path), &cancel).await })
    };
    let item = |n: usize| format!("/users/{USER_ID}/items?limit=1&start={n}");
    // The cap's worth of requests hold every place.
    let holders: Vec<_> = (0..CAP)
        .map(|n| send(item(n), CancellationToken::new()))
        .collect();
    proxy.until(|s| s.in_flight == CAP).await;
    // Two more queue, in this order; the first of them is cancelled while it waits.
    let give_up = CancellationToken::new();
    let cancelled = send(item(100), give_up.clone());
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    let next = send(item(101), CancellationToken::new());
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
    give_up.cancel();
    let err = cancelled.await.unwrap().unwrap_err();
    assert!(matches!(err, zotero_api::ZoteroError::Cancelled), "{err:?}");
    // One place is given back: the next in line (not the cancelled one) takes it.
    proxy.release(1);
    let seen = proxy.until(|s| s.paths.len() > CAP).await;
    assert_eq!(seen.paths[CAP..], [item(101)], "{:?}", seen.paths);
    proxy.open();
    for h in holders {
        assert_eq!(h.await.unwrap().unwrap().status, 200);
    }
    assert_eq!(next.await.unwrap().unwrap().status, 200);
    let seen = proxy.seen();
    assert!(!seen.paths.contains(&item(100)), "{:?}", seen.paths);
    assert_eq!(seen.max_in_flight, CAP);
    assert_eq!(http.in_flight(), 0);
}

/// The requests that read the item `key` (its metadata and its children).
fn reads_of(emu: &Emulator, key: &str) -> usize {
    emu.requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.contains(key))
        .count()
}

#[tokio::test]
#[allow(deprecated)] // resources/subscribe is the subscription of protocols before 2026-07-28
async fn a_burst_of_subscriptions_to_one_uri_reads_it_once() {
    use rmcp::model::SubscribeRequestParams;
    let emu = Emulator::start().await;
    let uri = "zotero://user/items/VASWANI7";
    // What one read of the resource asks upstream.
    let reader = in_process_as(
        &env_for(&emu.uri(), USER_ID, API_KEY),
        TestClient::default(),
    )
    .await;
    reader
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await
        .unwrap();
    let one_read = reads_of(&emu, "VASWANI7");
    assert!(one_read >= 1);
    emu.reset_counts();

    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    // Polls read the library's versions, not the item: they are not counted here.
    env.push(("ZOTERO_SUBSCRIBE_POLL_SECONDS".into(), "3600".into()));
    let s = in_process_as(&env, TestClient::default()).await;
    let subscribed =
        join_all((0..BURST).map(|_| s.client.subscribe(SubscribeRequestParams::new(uri)))).await;
    for r in subscribed {
        r.unwrap();
    }
    assert_eq!(reads_of(&emu, "VASWANI7"), one_read);
    // Subscribing again to what the session follows reads nothing.
    s.client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .unwrap();
    assert_eq!(reads_of(&emu, "VASWANI7"), one_read);
}
