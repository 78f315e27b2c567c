//! Self-test of the emulator's injectable faults: each does what it says (429 with
//! `Retry-After`, 503 with `Backoff`, errors, dropped connections, slow answers, latency).

use std::time::{Duration, Instant};

use crate::selftest::{get, get_with, items};
use zotero_emulator::{Emulator, Fault, FaultKind, RetryAfter, API_KEY};

#[tokio::test]
async fn faults_rate_limit_unavailable_errors() {
    let emu = Emulator::start().await;
    emu.inject(Fault::once(FaultKind::RateLimited {
        retry_after: RetryAfter::Seconds(7),
    }));
    let r = get(&emu, &items("items")).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after").as_deref(), Some("7"));
    assert_eq!(get(&emu, &items("items")).await.status, 200);

    emu.inject(Fault::once(FaultKind::RateLimited {
        retry_after: RetryAfter::HttpDate(120),
    }));
    let r = get(&emu, &items("items")).await;
    assert_eq!(r.status, 429);
    let when = httpdate::parse_http_date(&r.header("retry-after").unwrap()).unwrap();
    let ahead = when
        .duration_since(std::time::SystemTime::now())
        .unwrap()
        .as_secs();
    assert!((100..=121).contains(&ahead), "{ahead}");

    emu.inject(Fault::once(FaultKind::Unavailable {
        retry_after: Some(RetryAfter::Seconds(3)),
        backoff: Some(30),
    }));
    let r = get(&emu, &items("items")).await;
    assert_eq!(r.status, 503);
    assert_eq!(r.header("backoff").as_deref(), Some("30"));
    assert_eq!(r.header("retry-after").as_deref(), Some("3"));

    emu.inject(Fault::times(FaultKind::ServerError, 2));
    assert_eq!(get(&emu, &items("items")).await.status, 500);
    assert_eq!(get(&emu, "/keys/current").await.status, 500);
    assert_eq!(get(&emu, "/keys/current").await.status, 200);

    emu.inject(Fault::once(FaultKind::Status(418)));
    assert_eq!(get(&emu, &items("items")).await.status, 418);

    // Path-restricted faults wait for a matching request; FIFO among matches.
    emu.inject(Fault::once(FaultKind::Status(502)).on(&items("collections")));
    emu.inject(Fault::once(FaultKind::Status(504)).on(&items("collections")));
    assert_eq!(get(&emu, &items("items")).await.status, 200);
    assert_eq!(get(&emu, &items("collections")).await.status, 502);
    assert_eq!(get(&emu, &items("collections")).await.status, 504);
    assert_eq!(get(&emu, &items("collections")).await.status, 200);

    emu.inject(Fault::once(FaultKind::BackoffHeader(45)));
    let r = get(&emu, &items("items")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("backoff").as_deref(), Some("45"));
    assert!(!r.keys().is_empty());
    // Faulted requests are recorded too.
    assert_eq!(emu.count("GET", &items("collections")), 3);
}

#[tokio::test]
async fn faults_drop_slow_and_latency() {
    let emu = Emulator::start().await;
    for path in [
        items("items"),
        items("items/ZZZZZZZZ"),
        "/keys/current".to_string(),
    ] {
        emu.inject(Fault::once(FaultKind::Drop));
        let r = get_with(&emu, &path, &[("Zotero-API-Key", API_KEY)]).await;
        assert!(r.is_err(), "a dropped answer reached the client for {path}");
    }
    assert_eq!(emu.count("GET", &items("items")), 2);
    assert_eq!(get(&emu, &items("items")).await.status, 200);

    emu.inject(Fault::once(FaultKind::Slow(Duration::from_millis(400))));
    let t = Instant::now();
    assert_eq!(get(&emu, &items("items")).await.status, 200);
    assert!(t.elapsed() >= Duration::from_millis(400));
    // The fault is spent (an event, where "the next answer is quicker than 400 ms" was a
    // race on a loaded machine).
    assert_eq!(emu.faults_pending(), 0);

    emu.set_latency(Duration::from_millis(250));
    let t = Instant::now();
    get(&emu, "/keys/current").await;
    assert!(t.elapsed() >= Duration::from_millis(250));
}
