//! The whole way a model goes: downloaded from a Hugging Face-shaped host (the emulator's,
//! serving the tiny test model) into a huggingface_hub cache, loaded with the commit it came
//! from, and used by the index through its `Encoder` trait: the vectors are the model's, the
//! identity the index records is the download's, and semantic search uses them.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::HashMap;
use std::path::PathBuf;

use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;
use zotero_embed::{load_model_dir, SentenceEncoder};
use zotero_hub::{HubConfig, ModelCache, ModelSpec};
use zotero_index::{Document, Encoder, Index, ItemMeta, LibraryId, Mode, SearchQuery};

const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn tiny_model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/models/tiny-bert")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downloaded_model_encodes_for_the_index() {
    let emu = zotero_emulator::Emulator::start().await;
    emu.add_hf_model_dir("zotero-mcp/tiny-bert", COMMIT, &tiny_model());
    let cache = tempfile::tempdir().unwrap();
    let vars: HashMap<&str, String> = HashMap::from([
        ("HF_ENDPOINT", emu.hf_endpoint()),
        ("HF_HUB_CACHE", cache.path().display().to_string()),
    ]);
    let env = |k: &str| vars.get(k).cloned();
    let mut config = HubConfig::from_env(&env);
    config.allow_http_loopback = true;
    let spec = ModelSpec::parse_with("zotero-mcp/tiny-bert", &env).unwrap();
    let dir = ModelCache::new(config)
        .unwrap()
        .get(&spec, &|_, _, _| {}, &CancellationToken::new())
        .await
        .unwrap();
    assert!(dir.path.starts_with(cache.path()), "{}", dir.path.display());

    let downloaded = tokio::task::spawn_blocking(move || load_model_dir(&dir).unwrap())
        .await
        .unwrap();
    let encoder: &dyn Encoder = &downloaded;
    let identity = encoder.identity();
    assert_eq!(identity.id, "zotero-mcp/tiny-bert");
    assert_eq!(identity.revision, COMMIT);
    let weights = std::fs::read(tiny_model().join("model.safetensors")).unwrap();
    let weights_hash = format!("{:x}", Sha256::digest(&weights));
    assert!(
        identity
            .file_hashes
            .iter()
            .any(|(f, h)| f == "model.safetensors" && *h == weights_hash),
        "{:?}",
        identity.file_hashes
    );

    // The same vectors as the model loaded from where it was made.
    let direct = SentenceEncoder::load(&tiny_model()).unwrap();
    let texts = [
        "sleep deprivation and memory",
        "a history of the automobile",
    ];
    let via_trait = encoder.encode(&texts).unwrap();
    assert_eq!(via_trait, direct.encode(&texts).unwrap());
    assert_eq!(via_trait[0].len(), encoder.dims());

    // The index embeds with it, records it, and searches by meaning with it.
    let index_dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(index_dir.path(), &LibraryId::User).unwrap();
    {
        let mut up = index.updater().unwrap();
        let mut batch = up.batch().unwrap();
        for (key, title) in [
            ("SLEEP001", "sleep deprivation and memory"),
            ("CARS0001", "a history of the automobile"),
        ] {
            let meta = ItemMeta {
                title: title.to_string(),
                item_type: "journalArticle".to_string(),
                ..ItemMeta::default()
            };
            batch.upsert(&Document::item(key, 1, meta, false)).unwrap();
        }
        batch.commit().unwrap();
        assert!(up.embed_pending(encoder, 8, usize::MAX).unwrap() >= 2);
    }
    let status = index.status().unwrap();
    assert_eq!(status.model.as_ref().unwrap().revision, COMMIT);
    let answer = index
        .search(
            Some(encoder),
            &SearchQuery::new("a history of the automobile").mode(Mode::Semantic),
        )
        .unwrap();
    assert!(answer.semantic_used);
    assert_eq!(answer.hits[0].item_key, "CARS0001");
}
