//! The 2026-07-28 lifecycle over Streamable HTTP (requests carrying their protocol version,
//! client info and capabilities in `_meta`), as the conformance suite's `server-stateless`
//! scenario checks it: the methods that revision removed are "method not found" (404), and
//! `server/discover` claims no capability the server cannot serve to such a client.

use serde_json::{json, Value};
use zotero_emulator::Emulator;

use crate::http_transport::{emulator_env, messages, post, HttpServer};

const V2026: &str = "2026-07-28";

/// The `_meta` every request of the 2026-07-28 lifecycle carries.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": V2026,
        "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// One request of the 2026-07-28 lifecycle (its headers included): status and message.
async fn request(server: &HttpServer, method: &str, params: Value) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
    let headers = [("mcp-protocol-version", V2026), ("mcp-method", method)];
    let (status, _, body) = post(server.addr, &headers, serde_json::to_vec(&body).unwrap()).await;
    let mut got = messages(&body);
    assert_eq!(got.len(), 1, "{}", String::from_utf8_lossy(&body));
    (status.as_u16(), got.remove(0))
}

fn with_sessions(emu: &Emulator) -> Vec<(String, String)> {
    let mut env = emulator_env(emu);
    env.push(("ZOTERO_MCP_HTTP_SESSIONS".into(), "1".into()));
    env
}

#[tokio::test]
async fn removed_methods_are_not_found_in_both_modes() {
    let emu = Emulator::start().await;
    for env in [emulator_env(&emu), with_sessions(&emu)] {
        let server = HttpServer::start(&env).await;
        // `initialize` without the older revisions' params: the method no longer exists,
        // so its params are not judged.
        for method in ["initialize", "ping"] {
            let (status, answer) = request(&server, method, json!({"_meta": meta()})).await;
            assert_eq!(status, 404, "{method}: {answer}");
            assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
            assert_eq!(answer["id"], 7);
        }
    }
}

#[tokio::test]
async fn discover_offers_no_subscriptions_that_initialize_offers_with_sessions() {
    let emu = Emulator::start().await;
    let server = HttpServer::start(&with_sessions(&emu)).await;
    let (status, found) = request(&server, "server/discover", json!({"_meta": meta()})).await;
    assert_eq!(status, 200, "{found}");
    let caps = &found["result"]["capabilities"];
    assert!(caps["resources"].is_object(), "{found}");
    assert!(caps["resources"].get("subscribe").is_none(), "{found}");
    // subscriptions/listen, the 2026-07-28 way to subscribe, is not served.
    let listen = json!({"_meta": meta(), "notifications": {"resourceSubscriptions": ["zotero://user/items/VASWANI7"]}});
    let (_, refused) = request(&server, "subscriptions/listen", listen).await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");

    // A session opened with `initialize` (2025-11-25) still subscribes.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "it", "version": "1"}}});
    let (_, _, body) = post(server.addr, &[], serde_json::to_vec(&init).unwrap()).await;
    let answer = messages(&body).pop().unwrap();
    assert_eq!(
        answer["result"]["capabilities"]["resources"]["subscribe"], true,
        "{answer}"
    );
}
