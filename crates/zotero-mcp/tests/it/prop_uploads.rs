//! Property tests of the write tools through the BUILT binary over stdio, against the stateful
//! Zotero emulator.
//!
//! 1. Bytes in = bytes stored: for every source (`file_path`, `file_bytes_base64`, `file_url`
//!    with `Content-Length`, `file_url` chunked), every size around the chunk and buffer
//!    boundaries (0, 1, 64 KiB ± 1, 256 KiB ± 1, 1 MiB ± 1), a few MB, and random sizes and
//!    contents (random, zeros, text, short repeating patterns): the upload succeeds, the
//!    emulator stores exactly these bytes under their MD5, the answer's `size` is the length,
//!    and bytes the library already holds are attached without being sent again (`exists`).
//!    (Zero bytes cannot be given as `file_bytes_base64`: its schema wants one character.)
//! 2. All or nothing: random schedules of faults (500, dropped answers, 400/403/409/412/500/503,
//!    1..=4 times each) on every step of an upload (attachment create, authorization, storage,
//!    registration, reading the item, the cleanup DELETE) end with exactly one complete
//!    attachment or none, and an error leaves an item only when the answer says
//!    `attachment_removed: false` and names it. Random schedules (500, dropped answers, answers
//!    slower than `ZOTERO_TIMEOUT_SECONDS`) on `zotero_create_item`'s POST and its read-back
//!    end with exactly one item under the answered key, or none, or exactly the named one when
//!    the answer says `created: true` (created, not read back), or at most the named one when
//!    it says `created: "unknown"`.
//!
//! Each proptest case builds its own tokio runtime, emulator and server process (the boundary
//! sweep uses one for all its uploads).

use std::collections::HashSet;
use std::time::Duration;

use crate::common::Server;
use crate::prop_support::{config, runtime, start};
use crate::upload_support::{md5_hex, TempFile, PARENT};
use base64::Engine;
use proptest::prelude::*;
use serde_json::{json, Value};
use zotero_emulator::{Emulator, Fault, FaultKind, HostedFile, Library};

/// Where items are created.
const ITEMS: &str = "/users/475425/items";
/// Every single-item path (`GET`/`DELETE …/items/<key>`, `POST …/items/<key>/file`).
const ITEM_PATHS: &str = "/users/475425/items/";
/// Every size next to a chunk or buffer boundary: 0, 1, 64 KiB ± 1, 256 KiB ± 1, 1 MiB ± 1.
const BOUNDARY_SIZES: [usize; 11] = [
    0, 1, 65_535, 65_536, 65_537, 262_143, 262_144, 262_145, 1_048_575, 1_048_576, 1_048_577,
];
/// "A few MB", once per source.
const FEW_MB: usize = 3 * 1024 * 1024 + 7;

// ---------------------------------------------------------------------------------------------
// Contents, sources, checks
// ---------------------------------------------------------------------------------------------

/// How a file's bytes look.
#[derive(Debug, Clone, Copy)]
enum Pattern {
    Random,
    Zeros,
    Text,
    /// A short block of random bytes, repeated.
    Repeat,
}

fn pattern_strategy() -> impl Strategy<Value = Pattern> {
    prop_oneof![
        3 => Just(Pattern::Random),
        1 => Just(Pattern::Zeros),
        1 => Just(Pattern::Text),
        1 => Just(Pattern::Repeat),
    ]
}

/// xorshift64*: fast enough to fill megabytes in a debug build.
fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        out.extend_from_slice(&x.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(n);
    out
}

fn content(pattern: Pattern, n: usize, seed: u64) -> Vec<u8> {
    match pattern {
        Pattern::Random => random_bytes(n, seed),
        Pattern::Zeros => vec![0; n],
        Pattern::Text => {
            let line = format!("line of text {seed:x}: the quick brown fox\n");
            line.bytes().cycle().take(n).collect()
        }
        Pattern::Repeat => {
            let block = random_bytes(1 + (seed % 97) as usize, seed);
            block.iter().copied().cycle().take(n).collect()
        }
    }
}

/// Where the server reads a file from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Path,
    Base64,
    /// The web host answers with `Content-Length`.
    Url,
    /// The web host answers `Transfer-Encoding: chunked`.
    UrlChunked,
}

const SOURCES: [Source; 4] = [
    Source::Path,
    Source::Base64,
    Source::Url,
    Source::UrlChunked,
];

fn source_strategy() -> impl Strategy<Value = Source> {
    proptest::sample::select(SOURCES.to_vec())
}

/// A file in a fresh directory of its own; removed again on drop.
/// The arguments that upload `bytes` from `source` (a file or a hosted URL is set up for it),
/// and the temp file to keep alive until the call is answered.
fn upload_args(
    emu: &Emulator,
    source: Source,
    bytes: &[u8],
    tag: &str,
) -> (Value, Option<TempFile>) {
    let name = format!("{tag}.bin");
    match source {
        Source::Path => {
            let file = TempFile::new(&name, bytes);
            (json!({"item_key": PARENT, "file_path": &file}), Some(file))
        }
        Source::Base64 => {
            let data = base64::engine::general_purpose::STANDARD.encode(bytes);
            (
                json!({"item_key": PARENT, "file_bytes_base64": data, "filename": name}),
                None,
            )
        }
        Source::Url | Source::UrlChunked => {
            let path = format!("/web/{name}");
            let mut hosted = HostedFile::new(bytes.to_vec(), "application/octet-stream");
            hosted.chunked = source == Source::UrlChunked;
            emu.serve(&path, hosted);
            (
                json!({"item_key": PARENT, "file_url": emu.web_url(&path)}),
                None,
            )
        }
    }
}

/// The fixture library, and a server allowed to fetch from the emulator's web host.
async fn start_for_uploads() -> (Emulator, Server) {
    start(
        Library::from_fixtures(),
        &[("ZOTERO_FETCH_ALLOW_PRIVATE", "1")],
    )
    .await
}

fn keys(items: &[Value]) -> HashSet<String> {
    items
        .iter()
        .filter_map(|i| i["key"].as_str().map(str::to_string))
        .collect()
}

/// Every MD5 an item of the library carries: bytes with one of these are not sent again.
fn stored_md5s(emu: &Emulator) -> HashSet<String> {
    emu.items()
        .iter()
        .filter_map(|i| i["data"]["md5"].as_str().map(str::to_string))
        .collect()
}

/// Checks that attachment `key` under `PARENT` holds exactly `bytes`.
fn assert_holds(emu: &Emulator, key: &str, bytes: &[u8], what: &str) {
    let md5 = md5_hex(bytes);
    let item = emu
        .item(key)
        .unwrap_or_else(|| panic!("{what}: no item {key}"));
    assert_eq!(item["data"]["itemType"], "attachment", "{what}");
    assert_eq!(item["data"]["linkMode"], "imported_file", "{what}");
    assert_eq!(item["data"]["parentItem"], PARENT, "{what}");
    assert_eq!(item["data"]["md5"], md5.as_str(), "{what}: item md5");
    let file = emu
        .file(key)
        .unwrap_or_else(|| panic!("{what}: no file stored for {key}"));
    assert_eq!(file.md5, md5, "{what}: stored md5");
    assert_eq!(file.size, bytes.len() as u64, "{what}: stored size");
    let stored = file.bytes.expect("the emulator keeps bytes");
    // Not assert_eq!: a failure would print megabytes.
    assert!(stored == bytes, "{what}: other bytes stored");
}

/// Uploads `bytes` from `source` and checks the answer and what the emulator stored.
async fn upload_and_check(emu: &Emulator, server: &Server, source: Source, bytes: &[u8]) {
    let tag = format!("f{:016x}", rand::random::<u64>());
    let what = format!("{source:?}, {} bytes", bytes.len());
    let md5 = md5_hex(bytes);
    let known = stored_md5s(emu).contains(&md5);
    let before = keys(&emu.children(PARENT));
    let s3_before = emu.count("POST", "/s3/");
    let writes_before = emu.count("POST", ITEMS);
    let (args, _file) = upload_args(emu, source, bytes, &tag);
    let a = server.call("zotero_upload_attachment", args).await;
    if source == Source::Base64 && bytes.is_empty() {
        // Zero bytes have no base64 text, and the schema wants at least one character.
        let err = a.expect_err("ZOTERO_VALIDATION_ERROR");
        assert_eq!(err["details"]["field"], "file_bytes_base64", "{err}");
        assert_eq!(emu.count("POST", ITEMS), writes_before, "nothing written");
        return;
    }
    assert!(a.ok(), "{what}: {}", a.envelope);
    let data = a.data();
    assert_eq!(data["size"], bytes.len(), "{what}: {data}");
    assert_eq!(data["parent_item_key"], PARENT, "{what}");
    let key = data["attachment_key"].as_str().unwrap();
    assert_holds(emu, key, bytes, &what);
    let after = keys(&emu.children(PARENT));
    let added: Vec<&String> = after.difference(&before).collect();
    assert_eq!(added, vec![key], "{what}: exactly one new attachment");
    // Bytes the library has already are attached without being sent again.
    let sent = emu.count("POST", "/s3/") - s3_before;
    assert_eq!(
        sent,
        usize::from(!known),
        "{what}: storage uploads (known: {known})"
    );
}

// ---------------------------------------------------------------------------------------------
// 1. Bytes in = bytes stored
// ---------------------------------------------------------------------------------------------

/// Every boundary size, and a few MB, through every source (one server; ~30 MB in all).
#[test]
fn every_boundary_size_through_every_source_stores_the_same_bytes() {
    runtime().block_on(async {
        let (emu, server) = start_for_uploads().await;
        for (i, &n) in BOUNDARY_SIZES.iter().chain([&FEW_MB]).enumerate() {
            for (j, &source) in SOURCES.iter().enumerate() {
                let bytes = random_bytes(n, (i * 16 + j) as u64 + 0x5eed);
                upload_and_check(&emu, &server, source, &bytes).await;
            }
        }
        server.stop().await;
    });
}

/// Sizes near a boundary (± 3) or anywhere up to 150 KB.
fn size_strategy() -> impl Strategy<Value = usize> {
    prop_oneof![
        2 => (proptest::sample::select(BOUNDARY_SIZES.to_vec()), -3i64..=3)
            .prop_map(|(b, d)| (b as i64 + d).max(0) as usize),
        3 => 0usize..150_000,
    ]
}

proptest! {
    #![proptest_config(config(8))]

    /// Random sizes, contents and sources; the same bytes may come twice (then `exists`).
    #[test]
    fn random_files_are_stored_byte_for_byte(
        uploads in proptest::collection::vec(
            (source_strategy(), size_strategy(), pattern_strategy(), any::<u64>()),
            4,
        ),
    ) {
        runtime().block_on(async {
            let (emu, server) = start_for_uploads().await;
            for (source, n, pattern, seed) in &uploads {
                let bytes = content(*pattern, *n, *seed);
                upload_and_check(&emu, &server, *source, &bytes).await;
            }
            server.stop().await;
        });
    }
}

// ---------------------------------------------------------------------------------------------
// 2. All or nothing under random fault schedules
// ---------------------------------------------------------------------------------------------

/// A step of an upload that a fault can hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// `POST …/items` (the attachment item).
    Create,
    /// `POST …/items/<key>/file` with `md5=…`.
    Authorize,
    /// `POST /s3/…` (the bytes).
    Store,
    /// `POST …/items/<key>/file` with `upload=…`.
    Register,
    /// `GET …/items/<parent>/children` (is this file attached already?).
    Children,
    /// `GET …/items/<key>`: the read-back of the attachment (or of a create to confirm).
    Read,
    /// `DELETE …/items/<key>` (the cleanup).
    Delete,
}

fn to_fault(step: Step, kind: FaultKind, times: usize, first_read: bool) -> Fault {
    let f = Fault::times(kind, times);
    match step {
        Step::Create => f.method("POST").path_suffix(ITEMS),
        Step::Authorize => f.method("POST").path_suffix("/file").body_contains("md5="),
        Step::Store => f.method("POST").path_contains("/s3/"),
        Step::Register => f
            .method("POST")
            .path_suffix("/file")
            .body_contains("upload="),
        Step::Children => f.method("GET").path_suffix("/children"),
        // The first two GETs below items/ are the parent check and the children listing.
        Step::Read if first_read => f.method("GET").on(ITEM_PATHS).skip(2),
        Step::Read => f.method("GET").on(ITEM_PATHS),
        Step::Delete => f.method("DELETE").on(ITEM_PATHS),
    }
}

fn upload_fault_kind() -> impl Strategy<Value = FaultKind> {
    prop_oneof![
        2 => Just(FaultKind::ServerError),
        2 => Just(FaultKind::Drop),
        3 => proptest::sample::select(vec![400u16, 403, 409, 412, 500, 503])
            .prop_map(FaultKind::Status),
    ]
}

fn upload_schedule() -> impl Strategy<Value = Vec<(Step, FaultKind, usize)>> {
    let step = proptest::sample::select(vec![
        Step::Create,
        Step::Authorize,
        Step::Store,
        Step::Register,
        Step::Children,
        Step::Read,
        Step::Delete,
    ]);
    proptest::collection::vec((step, upload_fault_kind(), 1usize..=4), 1..=4)
}

/// Injects the schedule in order (faults on one step apply first-in, first-out).
fn inject_schedule(emu: &Emulator, schedule: &[(Step, FaultKind, usize)]) {
    let mut first_read = true;
    for (step, kind, times) in schedule {
        emu.inject(to_fault(*step, kind.clone(), *times, first_read));
        first_read &= *step != Step::Read;
    }
}

proptest! {
    #![proptest_config(config(96))]

    /// One upload under a random fault schedule: one complete attachment, or none (the
    /// answer naming what it could not remove).
    #[test]
    fn an_upload_under_faults_is_all_or_nothing(
        schedule in upload_schedule(),
        source in source_strategy(),
        n in 1usize..60_000,
        seed in any::<u64>(),
    ) {
        runtime().block_on(async {
            let (emu, server) = start_for_uploads().await;
            let bytes = random_bytes(n, seed);
            let (args, _file) = upload_args(&emu, source, &bytes, "faulted");
            let before = keys(&emu.items());
            inject_schedule(&emu, &schedule);
            let a = server.call("zotero_upload_attachment", args).await;
            let items = emu.items();
            let new: Vec<&Value> = items
                .iter()
                .filter(|i| !before.contains(i["key"].as_str().unwrap_or("")))
                .collect();
            let new_keys: Vec<&str> = new.iter().map(|i| i["key"].as_str().unwrap()).collect();
            let what = format!("{schedule:?} via {source:?}: {} -> new items {new_keys:?}", a.envelope);
            assert!(new.len() <= 1, "two items for one call: {what}");
            for i in &new {
                assert_eq!(i["data"]["itemType"], "attachment", "{what}");
                assert_eq!(i["data"]["parentItem"], PARENT, "{what}");
            }
            if a.ok() {
                let key = a.data()["attachment_key"].as_str().unwrap();
                assert_eq!(new_keys, vec![key], "{what}");
                assert_eq!(a.data()["size"], n, "{what}");
                assert_holds(&emu, key, &bytes, &what);
            } else {
                assert!(a.is_error, "{what}");
                let d = a.details();
                let named = d["attachment_key"].as_str();
                if d["attachment_removed"] == false && named.is_some() {
                    // The cleanup itself failed: that item, if still there, is the only one.
                    assert!(new_keys.iter().all(|k| Some(*k) == named), "{what}");
                } else {
                    assert!(new.is_empty(), "a failed upload left an item: {what}");
                }
                if d["attachment_removed"] == true {
                    assert!(emu.item(named.unwrap()).is_none(), "said removed: {what}");
                }
            }
            server.stop().await;
        });
    }
}

/// The server's per-request timeout in the create property, and how slow a slow answer is.
const CREATE_TIMEOUT: &str = "0.25";
const SLOW: Duration = Duration::from_millis(600);

fn create_fault_kind() -> impl Strategy<Value = FaultKind> {
    prop_oneof![
        Just(FaultKind::ServerError),
        Just(FaultKind::Drop),
        Just(FaultKind::Slow(SLOW)),
        Just(FaultKind::Status(500)),
    ]
}

proptest! {
    #![proptest_config(config(48))]

    /// One create under a random fault schedule on its POST and its read-back by key.
    #[test]
    fn a_create_under_faults_happens_once_or_not_at_all(
        schedule in proptest::collection::vec(
            (any::<bool>(), create_fault_kind(), 1usize..=4),
            1..=3,
        ),
        seed in any::<u64>(),
    ) {
        runtime().block_on(async {
            let (emu, server) = start(
                Library::from_fixtures(),
                &[("ZOTERO_TIMEOUT_SECONDS", CREATE_TIMEOUT)],
            )
            .await;
            // Fetch the template before the faults, so that they hit the create itself. The
            // timeout is short: a loaded machine may need a second try.
            let mut warm = None;
            for _ in 0..5 {
                let a = server
                    .call("zotero_create_item", json!({"item_type": "journalArticle", "title": "warm-up"}))
                    .await;
                if a.ok() {
                    warm = Some(a);
                    break;
                }
            }
            assert!(warm.is_some(), "the warm-up create never succeeded");
            for (on_post, kind, times) in &schedule {
                let f = Fault::times(kind.clone(), *times);
                emu.inject(if *on_post {
                    f.method("POST").path_suffix(ITEMS)
                } else {
                    f.method("GET").on(ITEM_PATHS)
                });
            }
            let title = format!("prop create {seed:016x}");
            let a = server
                .call("zotero_create_item", json!({"item_type": "journalArticle", "title": title}))
                .await;
            let found: Vec<String> = emu
                .items()
                .iter()
                .filter(|i| i["data"]["title"] == title.as_str())
                .map(|i| i["key"].as_str().unwrap().to_string())
                .collect();
            let what = format!("{schedule:?}: {} -> items {found:?}", a.envelope);
            if a.ok() {
                assert_eq!(found, vec![a.data()["item_key"].as_str().unwrap()], "{what}");
            } else if a.details()["created"] == true {
                // Created, but it could not be read back: the answer names it.
                assert_eq!(found, vec![a.details()["item_key"].as_str().unwrap()], "{what}");
            } else if a.details()["created"] == "unknown" {
                assert!(found.len() <= 1, "{what}");
                if let Some(k) = found.first() {
                    assert_eq!(a.details()["item_key"], k.as_str(), "{what}");
                }
            } else {
                assert!(found.is_empty(), "a failed create left an item: {what}");
            }
            server.stop().await;
        });
    }
}
