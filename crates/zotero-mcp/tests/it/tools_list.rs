//! The published tool list, from the built binary: an `insta` snapshot of the whole
//! `tools/list` answer (a change to it is a change of the public interface: review it), and
//! every schema in it a valid JSON Schema 2020-12.

use crate::common::spawn;
use serde_json::Value;

#[tokio::test]
async fn tools_list_is_the_reviewed_one() {
    let server = spawn(&[]).await;
    let tools = serde_json::to_value(server.tools().await).unwrap();
    insta::assert_json_snapshot!("tools_list", tools);
    server.stop().await;
}

#[tokio::test]
async fn every_schema_is_valid_json_schema_2020_12() {
    let server = spawn(&[]).await;
    for t in server.tools().await {
        let input = Value::Object((*t.input_schema).clone());
        let output = Value::Object((*t.output_schema.clone().unwrap()).clone());
        for (what, schema) in [("input", &input), ("output", &output)] {
            jsonschema::draft202012::meta::validate(schema)
                .unwrap_or_else(|e| panic!("{} {what} schema: {e}", t.name));
        }
    }
    server.stop().await;
}

/// The harness's output check (every `Server::call`) has teeth: a real answer passes, a
/// wrong one does not.
#[tokio::test]
async fn the_output_check_refuses_an_answer_off_the_schema() {
    let server = spawn(&[]).await;
    let tool = "zotero_get_sort_values";
    let good = server.call(tool, serde_json::json!({})).await;
    assert!(server.output_errors(tool, &good.envelope).await.is_empty());
    for bad in [
        serde_json::json!({"ok": true, "data": {"values": [1], "default": "relevance", "fallback": "dateModified"}, "error": null}),
        serde_json::json!({"ok": true, "data": {"values": [], "default": "relevance"}, "error": null}),
        serde_json::json!({"ok": true, "data": {"values": [], "default": "x", "fallback": "y", "extra": 1}, "error": null}),
        serde_json::json!({"ok": false, "data": null, "error": {"code": "ZOTERO_NOT_FOUND"}}),
        serde_json::json!({"ok": true, "data": null}),
    ] {
        assert!(!server.output_errors(tool, &bad).await.is_empty(), "{bad}");
    }
    server.stop().await;
}
