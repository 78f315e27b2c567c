//! A sentence encoder that fails during a search-index update is the user's to resolve (a
//! model that cannot run here), not a defect of the server: `ZOTERO_VALIDATION_ERROR`, naming
//! the model and what to do (another `ZOTERO_EMBEDDING_MODEL`, or `none`), the keyword index
//! kept.

use std::sync::Arc;

use serde_json::json;
use zotero_emulator::{Emulator, API_KEY, USER_ID};
use zotero_index::{EncodeError, Encoder, ModelIdentity};

use crate::common::{env_for, in_process_with_encoder};

/// A model that loads but cannot encode (as a model whose weights do not fit this machine).
struct BrokenEncoder;

impl Encoder for BrokenEncoder {
    fn identity(&self) -> ModelIdentity {
        ModelIdentity {
            id: "example/broken-model".into(),
            revision: "0".into(),
            file_hashes: Vec::new(),
            dims: 8,
        }
    }
    fn dims(&self) -> usize {
        8
    }
    fn encode(&self, _texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        Err(EncodeError("the attention kernel ran out of memory".into()))
    }
}

#[tokio::test]
async fn an_encoder_failure_names_the_model_and_the_remedy() {
    let emu = Emulator::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mut env = env_for(&emu.uri(), USER_ID, API_KEY);
    env.push(("ZOTERO_INDEX_DIR".into(), dir.path().display().to_string()));
    let server = in_process_with_encoder(&env, Some(Arc::new(BrokenEncoder))).await;
    let a = server
        .call("zotero_update_search_database", json!({}))
        .await;
    let err = a.expect_err("ZOTERO_VALIDATION_ERROR").clone();
    let message = err["message"].as_str().unwrap();
    for named in [
        "example/broken-model",
        "ran out of memory",
        "ZOTERO_EMBEDDING_MODEL",
    ] {
        assert!(message.contains(named), "{named}: {err}");
    }
    assert_eq!(
        err["details"]["variable"], "ZOTERO_EMBEDDING_MODEL",
        "{err}"
    );
    assert_eq!(err["details"]["model"], "example/broken-model", "{err}");
    // The keyword part was committed before the vectors: searching by words still works.
    let a = server
        .call(
            "zotero_semantic_search",
            json!({"query": "attention", "mode": "keyword"}),
        )
        .await;
    a.expect_ok();
}
