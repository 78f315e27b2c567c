//! The model cache against the emulator's fake Hugging Face Hub: the cache layout Python
//! tools share, the requests made (and not made), integrity, resume, tokens, offline mode.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use zotero_emulator::{
    git_blob_sha1, sha256_hex, Emulator, Fault, FaultKind, HfFile, Recorded, HF_CDN_ROOT,
};
use zotero_hub::{
    HubConfig, ModelCache, ModelCacheError, ModelDir, ModelSpec, OPTIONAL_FILES, REQUIRED_FILES,
};

const REPO: &str = "emu-org/tiny-model";
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";
const TOKEN: &str = "hf_EmuSecretToken1234";
/// Big enough to arrive in many pieces.
const WEIGHTS_LEN: usize = 3 * 1024 * 1024 + 17;

/// A safetensors file of WEIGHTS_LEN bytes (the cache checks a weights file's header): one
/// U8 tensor of varied bytes after a header padded to 128 bytes.
fn weights() -> Vec<u8> {
    const HEADER: usize = 128;
    let data = WEIGHTS_LEN - 8 - HEADER;
    let header = format!(r#"{{"w":{{"dtype":"U8","shape":[{data}],"data_offsets":[0,{data}]}}}}"#);
    let mut bytes = (HEADER as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(format!("{header:<HEADER$}").as_bytes());
    bytes.extend((0..data).map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1]));
    bytes
}

/// The files of a small sentence-transformers model (any bytes will do here); it has no
/// `config_sentence_transformers.json`.
fn model_files() -> Vec<HfFile> {
    vec![
        HfFile::new("config.json", br#"{"model_type":"bert","hidden_size":8}"#.to_vec()),
        HfFile::new("tokenizer.json", br#"{"version":"1.0","model":{"type":"WordPiece"}}"#.to_vec()),
        HfFile::new("model.safetensors", weights()),
        HfFile::new("modules.json", br#"[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"}]"#.to_vec()),
        HfFile::new("1_Pooling/config.json", br#"{"word_embedding_dimension":8,"pooling_mode_mean_tokens":true}"#.to_vec()),
        HfFile::new("sentence_bert_config.json", br#"{"max_seq_length":128,"do_lower_case":false}"#.to_vec()),
    ]
}

/// The blob name the Hub gives a file: sha256 for LFS, git blob sha1 otherwise.
fn etag(f: &HfFile) -> String {
    if f.lfs {
        sha256_hex(&f.bytes)
    } else {
        git_blob_sha1(&f.bytes)
    }
}

struct Setup {
    emu: Emulator,
    home: tempfile::TempDir,
}

impl Setup {
    async fn new() -> Setup {
        let emu = Emulator::start().await;
        emu.add_hf_model(REPO, COMMIT, model_files());
        Setup {
            emu,
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn env(&self, extra: &[(&str, &str)]) -> HashMap<String, String> {
        let mut m: HashMap<String, String> = [
            ("HOME", self.home.path().to_str().unwrap().to_string()),
            ("HF_ENDPOINT", self.emu.hf_endpoint()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        for (k, v) in extra {
            m.insert(k.to_string(), v.to_string());
        }
        m
    }

    fn cache(&self, extra: &[(&str, &str)]) -> ModelCache {
        let env = self.env(extra);
        let mut c = HubConfig::from_env(&|k| env.get(k).cloned());
        c.allow_http_loopback = true;
        c.timeout = Duration::from_secs(10);
        c.retry.base_delay = Duration::from_millis(5);
        c.retry.max_delay = Duration::from_millis(20);
        ModelCache::new(c).unwrap()
    }

    fn hub_cache(&self) -> PathBuf {
        self.home.path().join(".cache/huggingface/hub")
    }

    fn repo_dir(&self) -> PathBuf {
        self.hub_cache().join("models--emu-org--tiny-model")
    }
}

fn spec(s: &str) -> ModelSpec {
    ModelSpec::parse(s).unwrap()
}

fn quiet(_: &str, _: u64, _: u64) {}

async fn get(cache: &ModelCache, s: &str) -> Result<ModelDir, ModelCacheError> {
    cache.get(&spec(s), &quiet, &CancellationToken::new()).await
}

fn summary(reqs: &[Recorded]) -> Vec<String> {
    reqs.iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

fn expected_hashes() -> Vec<(String, String)> {
    REQUIRED_FILES
        .iter()
        .chain(OPTIONAL_FILES)
        .filter_map(|p| {
            model_files()
                .into_iter()
                .find(|f| f.path == *p)
                .map(|f| (f.path.clone(), sha256_hex(&f.bytes)))
        })
        .collect()
}

#[tokio::test]
async fn a_first_download_makes_the_huggingface_hub_layout_and_later_runs_ask_little_or_nothing() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    let dir = get(&cache, REPO).await.unwrap();

    // What was asked: per file a HEAD, then a GET of the Hub (or of the CDN for LFS files).
    let reqs = s.emu.hf_requests();
    let heads = reqs.iter().filter(|r| r.method == "HEAD").count();
    assert_eq!(heads, 7, "{:#?}", summary(&reqs));
    let gets: Vec<&Recorded> = reqs.iter().filter(|r| r.method == "GET").collect();
    assert_eq!(gets.len(), 6, "{:#?}", summary(&reqs));
    assert_eq!(
        gets.iter()
            .filter(|r| r.path.starts_with(HF_CDN_ROOT))
            .count(),
        1
    );
    assert_eq!(
        reqs[0].path,
        format!("/hf/{REPO}/resolve/main/config.json"),
        "the first HEAD asks for the branch"
    );
    assert!(
        reqs[1..]
            .iter()
            .filter(|r| r.path.starts_with("/hf/"))
            .all(|r| r.path.contains(&format!("/resolve/{COMMIT}/"))),
        "the other files are asked at the commit the branch pointed to: {:#?}",
        summary(&reqs)
    );

    // The layout of huggingface_hub.
    let repo = s.repo_dir();
    assert_eq!(dir.path, repo.join("snapshots").join(COMMIT));
    assert_eq!(dir.id, REPO);
    assert_eq!(dir.revision, COMMIT);
    assert_eq!(
        std::fs::read_to_string(repo.join("refs/main")).unwrap(),
        COMMIT
    );
    for f in model_files() {
        let blob = repo.join("blobs").join(etag(&f));
        assert_eq!(std::fs::read(&blob).unwrap(), f.bytes, "{}", f.path);
        let mode = std::fs::metadata(&blob).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{}", f.path);
        let link = std::fs::read_link(dir.path.join(&f.path)).unwrap();
        let up = "../".repeat(2 + f.path.matches('/').count());
        assert_eq!(
            link,
            PathBuf::from(format!("{up}blobs/{}", etag(&f))),
            "{}",
            f.path
        );
        assert_eq!(std::fs::read(dir.path.join(&f.path)).unwrap(), f.bytes);
    }
    assert!(repo
        .join(".no_exist")
        .join(COMMIT)
        .join("config_sentence_transformers.json")
        .exists());
    let leftovers: Vec<_> = std::fs::read_dir(repo.join("blobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".incomplete"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert!(s.hub_cache().join("CACHEDIR.TAG").exists());
    assert_eq!(dir.files, expected_hashes());
    let identity = dir.identity(8);
    assert_eq!(
        (identity.id.as_str(), identity.revision.as_str()),
        (REPO, COMMIT)
    );
    assert_eq!(identity.file_hashes, expected_hashes());

    // A branch again: one HEAD to learn its commit, whose snapshot is complete.
    s.emu.reset_counts();
    let again = get(&cache, REPO).await.unwrap();
    assert_eq!(again, dir);
    assert_eq!(
        summary(&s.emu.hf_requests()),
        vec![format!("HEAD /hf/{REPO}/resolve/main/config.json")]
    );

    // Pinned to the commit: nothing at all.
    s.emu.reset_counts();
    let pinned = get(&cache, &format!("{REPO}@{COMMIT}")).await.unwrap();
    assert_eq!(pinned, dir);
    assert!(s.emu.hf_requests().is_empty());

    // Offline, by branch: refs/main says which snapshot, nothing is asked.
    let offline = s.cache(&[("HF_HUB_OFFLINE", "1")]);
    assert_eq!(get(&offline, REPO).await.unwrap(), dir);
    assert!(s.emu.hf_requests().is_empty());
}

/// Builds the cache as `huggingface_hub` leaves it, by hand.
fn python_cache(repo: &Path) {
    for f in model_files() {
        let blob = repo.join("blobs").join(etag(&f));
        std::fs::create_dir_all(blob.parent().unwrap()).unwrap();
        std::fs::write(&blob, &f.bytes).unwrap();
        let pointer = repo.join("snapshots").join(COMMIT).join(&f.path);
        std::fs::create_dir_all(pointer.parent().unwrap()).unwrap();
        let up = "../".repeat(2 + f.path.matches('/').count());
        std::os::unix::fs::symlink(format!("{up}blobs/{}", etag(&f)), &pointer).unwrap();
    }
    let no_exist = repo.join(".no_exist").join(COMMIT);
    std::fs::create_dir_all(&no_exist).unwrap();
    std::fs::write(no_exist.join("config_sentence_transformers.json"), b"").unwrap();
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("refs/main"), COMMIT).unwrap();
}

#[tokio::test]
async fn a_cache_python_tools_made_is_reused_without_a_request() {
    let s = Setup::new().await;
    let hub = s.home.path().join("elsewhere/hf-hub");
    let repo = hub.join("models--emu-org--tiny-model");
    python_cache(&repo);
    let cache = s.cache(&[("HF_HUB_CACHE", hub.to_str().unwrap())]);
    let dir = get(&cache, &format!("{REPO}@{COMMIT}")).await.unwrap();
    assert_eq!(dir.path, repo.join("snapshots").join(COMMIT));
    assert_eq!(dir.files, expected_hashes());
    assert!(s.emu.hf_requests().is_empty());
    // And through HF_HOME, offline, by branch.
    let hf_home = s.home.path().join("hf-home");
    python_cache(&hf_home.join("hub/models--emu-org--tiny-model"));
    let cache = s.cache(&[
        ("HF_HOME", hf_home.to_str().unwrap()),
        ("HF_HUB_OFFLINE", "true"),
    ]);
    assert_eq!(get(&cache, REPO).await.unwrap().files, expected_hashes());
    assert!(s.emu.hf_requests().is_empty());
}

#[tokio::test]
async fn offline_without_a_cache_says_how_to_download() {
    let s = Setup::new().await;
    let cache = s.cache(&[("HF_HUB_OFFLINE", "1")]);
    for spec in [REPO.to_string(), format!("{REPO}@{COMMIT}")] {
        let err = get(&cache, &spec).await.unwrap_err();
        assert!(matches!(err, ModelCacheError::Offline { .. }), "{err}");
        let msg = err.to_string();
        assert!(
            msg.contains("HF_HUB_OFFLINE")
                && msg.contains("zotero-mcp update-db")
                && msg.contains("ZOTERO_EMBEDDING_MODEL"),
            "{msg}"
        );
    }
    assert!(s.emu.hf_requests().is_empty());
}

#[tokio::test]
async fn bytes_that_do_not_match_their_hash_are_refused_and_nothing_is_linked() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    s.emu
        .inject(Fault::once(FaultKind::CorruptBody).on(&format!("{HF_CDN_ROOT}/")));
    let err = get(&cache, REPO).await.unwrap_err();
    let sha = sha256_hex(&weights());
    match &err {
        ModelCacheError::HashMismatch {
            file,
            expected,
            actual,
            ..
        } => {
            assert_eq!(file, "model.safetensors");
            assert_eq!(expected, &sha);
            assert_ne!(actual, &sha);
        }
        other => panic!("{other}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("model.safetensors") && msg.contains(&sha),
        "{msg}"
    );
    let repo = s.repo_dir();
    let snap = repo.join("snapshots").join(COMMIT);
    assert!(!snap.join("model.safetensors").exists());
    assert!(!repo.join("blobs").join(&sha).exists());
    assert!(!repo
        .join("blobs")
        .join(format!("{sha}.incomplete"))
        .exists());
    // The next run gets the right bytes.
    let dir = get(&cache, REPO).await.unwrap();
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
}

#[tokio::test]
async fn a_download_cut_off_midway_is_resumed_with_range() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    let cut = 1_000_000;
    s.emu
        .inject(Fault::once(FaultKind::Truncate(cut)).on(&format!("{HF_CDN_ROOT}/")));
    let dir = get(&cache, REPO).await.unwrap();
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
    let cdn: Vec<Recorded> = s
        .emu
        .hf_requests()
        .into_iter()
        .filter(|r| r.path.starts_with(HF_CDN_ROOT))
        .collect();
    assert_eq!(cdn.len(), 2);
    assert_eq!(cdn[0].header("range"), None);
    assert_eq!(
        cdn[1].header("range"),
        Some(format!("bytes={cut}-").as_str())
    );
}

#[tokio::test]
async fn the_token_goes_to_the_hub_only_never_to_the_cdn() {
    let s = Setup::new().await;
    s.emu.gate_hf_model(REPO, TOKEN);
    let cache = s.cache(&[("HF_TOKEN", TOKEN)]);
    get(&cache, REPO).await.unwrap();
    let reqs = s.emu.hf_requests();
    let bearer = format!("Bearer {TOKEN}");
    for r in &reqs {
        if r.path.starts_with(HF_CDN_ROOT) {
            assert_eq!(r.header("authorization"), None, "{}", r.path);
        } else {
            assert_eq!(
                r.header("authorization"),
                Some(bearer.as_str()),
                "{}",
                r.path
            );
        }
    }
    assert!(reqs.iter().any(|r| r.path.starts_with(HF_CDN_ROOT)));
}

#[tokio::test]
async fn a_gated_model_asks_for_hf_token_and_never_shows_it() {
    let s = Setup::new().await;
    s.emu.gate_hf_model(REPO, TOKEN);
    let err = get(&s.cache(&[]), REPO).await.unwrap_err();
    assert!(
        matches!(err, ModelCacheError::Gated { status: 401, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("HF_TOKEN"), "{err}");
    let wrong = "hf_SomeoneElsesToken999";
    let err = get(&s.cache(&[("HF_TOKEN", wrong)]), REPO)
        .await
        .unwrap_err();
    assert!(
        matches!(err, ModelCacheError::Gated { status: 403, .. }),
        "{err}"
    );
    let msg = format!("{err} {err:?}");
    assert!(msg.contains("HF_TOKEN") && !msg.contains(wrong), "{msg}");
    assert!(!format!("{:?}", s.cache(&[("HF_TOKEN", wrong)])).contains(wrong));
}

#[tokio::test]
async fn progress_rises_to_the_total_of_each_file() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    let seen: Mutex<Vec<(String, u64, u64)>> = Mutex::new(Vec::new());
    let progress = |f: &str, done: u64, total: u64| {
        seen.lock().unwrap().push((f.to_string(), done, total));
    };
    cache
        .get(&spec(REPO), &progress, &CancellationToken::new())
        .await
        .unwrap();
    let seen = seen.into_inner().unwrap();
    for f in model_files() {
        let mine: Vec<_> = seen.iter().filter(|(p, _, _)| *p == f.path).collect();
        assert!(!mine.is_empty(), "{}", f.path);
        assert!(mine.iter().all(|(_, _, t)| *t == f.bytes.len() as u64));
        assert!(mine.windows(2).all(|w| w[0].1 <= w[1].1), "{}", f.path);
        assert_eq!(mine.last().unwrap().1, f.bytes.len() as u64);
    }
    let pieces = seen
        .iter()
        .filter(|(p, _, _)| p == "model.safetensors")
        .count();
    assert!(pieces > 3, "the weights arrive in pieces: {pieces}");
}

#[tokio::test]
async fn a_cancelled_download_keeps_its_part_and_the_next_run_finishes_it() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let progress = move |f: &str, done: u64, total: u64| {
        if f == "model.safetensors" && done > 0 && done < total {
            c2.cancel();
        }
    };
    let err = cache
        .get(&spec(REPO), &progress, &cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, ModelCacheError::Cancelled { .. }), "{err}");
    let sha = sha256_hex(&weights());
    let partial = s.repo_dir().join("blobs").join(format!("{sha}.incomplete"));
    let kept = std::fs::metadata(&partial).unwrap().len();
    assert!(kept > 0 && kept < WEIGHTS_LEN as u64, "{kept}");
    assert!(!s
        .repo_dir()
        .join("snapshots")
        .join(COMMIT)
        .join("model.safetensors")
        .exists());

    s.emu.reset_counts();
    let dir = get(&cache, REPO).await.unwrap();
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
    assert!(!partial.exists());
    let cdn: Vec<Recorded> = s
        .emu
        .hf_requests()
        .into_iter()
        .filter(|r| r.path.starts_with(HF_CDN_ROOT))
        .collect();
    assert_eq!(cdn.len(), 1);
    assert_eq!(
        cdn[0].header("range"),
        Some(format!("bytes={kept}-").as_str())
    );
}

#[tokio::test]
async fn two_downloads_of_one_model_at_once_share_the_work_safely() {
    let s = Setup::new().await;
    let (a, b) = (s.cache(&[]), s.cache(&[]));
    let (ra, rb) = tokio::join!(get(&a, REPO), get(&b, REPO));
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_eq!(ra, rb);
    assert_eq!(
        std::fs::read(ra.path.join("model.safetensors")).unwrap(),
        weights()
    );
    let cdn = s
        .emu
        .hf_requests()
        .iter()
        .filter(|r| r.path.starts_with(HF_CDN_ROOT))
        .count();
    assert_eq!(cdn, 1, "the second waits for the first's blob");
}

#[tokio::test]
async fn unknown_models_revisions_and_files_are_named() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    let err = get(&cache, "emu-org/no-such-model").await.unwrap_err();
    assert!(matches!(err, ModelCacheError::RepoNotFound { .. }), "{err}");
    assert!(err.to_string().contains("emu-org/no-such-model"));
    let err = get(&cache, &format!("{REPO}@v9")).await.unwrap_err();
    assert!(
        matches!(err, ModelCacheError::RevisionNotFound { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("v9"));
    // A repo without a tokenizer.
    let mut files = model_files();
    files.retain(|f| f.path != "tokenizer.json");
    s.emu.add_hf_model(
        "emu-org/no-tokenizer",
        "89abcdef0123456789abcdef0123456789abcdef",
        files,
    );
    let err = get(&cache, "emu-org/no-tokenizer").await.unwrap_err();
    match &err {
        ModelCacheError::FileNotFound { file, .. } => assert_eq!(file, "tokenizer.json"),
        other => panic!("{other}"),
    }
}

#[tokio::test]
async fn a_branch_that_moved_gets_the_new_commit_and_keeps_shared_blobs() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    get(&cache, REPO).await.unwrap();
    let next = "fedcba9876543210fedcba9876543210fedcba98";
    let mut files = model_files();
    files[0].bytes = br#"{"model_type":"bert","hidden_size":16}"#.to_vec();
    s.emu.add_hf_model(REPO, next, files);
    s.emu.reset_counts();
    let dir = get(&cache, REPO).await.unwrap();
    assert_eq!(dir.revision, next);
    assert_eq!(
        std::fs::read_to_string(s.repo_dir().join("refs/main")).unwrap(),
        next
    );
    // Only config.json changed: the weights are not downloaded again.
    assert!(!s
        .emu
        .hf_requests()
        .iter()
        .any(|r| r.method == "GET" && r.path.starts_with(HF_CDN_ROOT)));
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
}

#[tokio::test]
async fn a_local_directory_is_used_as_it_is() {
    let s = Setup::new().await;
    let local = s.home.path().join("my-model");
    for f in model_files() {
        let p = local.join(&f.path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &f.bytes).unwrap();
    }
    let cache = s.cache(&[]);
    let dir = get(&cache, local.to_str().unwrap()).await.unwrap();
    assert_eq!(dir.path, local);
    assert_eq!(dir.revision, "local");
    assert_eq!(dir.files, expected_hashes());
    let env: HashMap<&str, String> =
        HashMap::from([("HOME", s.home.path().to_str().unwrap().to_string())]);
    let tilde = ModelSpec::parse_with("~/my-model", &|k| env.get(k).cloned()).unwrap();
    assert_eq!(
        cache
            .get(&tilde, &quiet, &CancellationToken::new())
            .await
            .unwrap()
            .files,
        dir.files
    );
    assert!(s.emu.hf_requests().is_empty());

    std::fs::remove_file(local.join("1_Pooling/config.json")).unwrap();
    let err = get(&cache, local.to_str().unwrap()).await.unwrap_err();
    match &err {
        ModelCacheError::MissingFile { file, .. } => assert_eq!(file, "1_Pooling/config.json"),
        other => panic!("{other}"),
    }
    assert!(err.to_string().contains("1_Pooling/config.json"));
    let err = get(&cache, "/no/such/dir").await.unwrap_err();
    assert!(err.to_string().contains("/no/such/dir"), "{err}");
}

/// A weights file whose header claims 2^40 bytes, 1 GiB long (sparse: cheap to make), is
/// refused from its first bytes, with the file named, before the cache hashes it: in a local
/// directory and in a cached snapshot.
#[tokio::test]
async fn weights_with_an_impossible_header_are_refused_before_hashing() {
    use std::io::Write;
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    let sparse = |path: &Path| {
        let file = std::fs::File::create(path).unwrap();
        file.set_len(1 << 30).unwrap();
        (&file).write_all(&(1u64 << 40).to_le_bytes()).unwrap();
    };
    let local = s.home.path().join("my-model");
    for f in model_files() {
        let p = local.join(&f.path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &f.bytes).unwrap();
    }
    sparse(&local.join("model.safetensors"));
    let err = get(&cache, local.to_str().unwrap()).await.unwrap_err();
    assert!(matches!(err, ModelCacheError::BadWeights { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("header length is 1099511627776 bytes")
            && msg.contains(&local.join("model.safetensors").display().to_string())
            && msg.contains("download the model's model.safetensors again"),
        "{msg}"
    );

    let dir = get(&cache, REPO).await.unwrap();
    let blob = std::fs::canonicalize(dir.path.join("model.safetensors")).unwrap();
    std::fs::remove_file(&blob).unwrap();
    sparse(&blob);
    let err = get(&cache, REPO).await.unwrap_err();
    assert!(matches!(err, ModelCacheError::BadWeights { .. }), "{err}");
}

#[tokio::test]
async fn bad_specs_and_plain_http_are_refused() {
    for bad in ["", "just-a-name", "a/b/c", "org/name@", "org/na me"] {
        let err = ModelSpec::parse(bad).unwrap_err();
        assert!(
            matches!(err, ModelCacheError::BadSpec { .. }),
            "{bad:?}: {err}"
        );
    }
    // http to another machine is refused, token or not.
    let s = Setup::new().await;
    let env: HashMap<&str, String> = HashMap::from([
        ("HOME", s.home.path().to_str().unwrap().to_string()),
        ("HF_ENDPOINT", "http://hub.example".to_string()),
    ]);
    let c = HubConfig::from_env(&|k| env.get(k).cloned());
    let cache = ModelCache::new(c).unwrap();
    let err = get(&cache, REPO).await.unwrap_err();
    assert!(matches!(err, ModelCacheError::Insecure { .. }), "{err}");
    // And so is the emulator when http to this machine is not allowed.
    let env = s.env(&[]);
    let c = HubConfig::from_env(&|k| env.get(k).cloned());
    let err = get(&ModelCache::new(c).unwrap(), REPO).await.unwrap_err();
    assert!(matches!(err, ModelCacheError::Insecure { .. }), "{err}");
}

#[tokio::test]
async fn a_hub_on_this_machine_or_a_private_network_is_refused_unless_allowed() {
    // https, so the scheme check passes: the address guard refuses before any connection
    // (nothing listens there, so an unguarded client would fail with a retried network error).
    let s = Setup::new().await;
    for endpoint in [
        "https://127.0.0.1:9",
        "https://localhost:9",
        "https://10.0.0.1",
    ] {
        let env: HashMap<&str, String> = HashMap::from([
            ("HOME", s.home.path().to_str().unwrap().to_string()),
            ("HF_ENDPOINT", endpoint.to_string()),
        ]);
        let c = HubConfig::from_env(&|k| env.get(k).cloned());
        let err = get(&ModelCache::new(c).unwrap(), REPO).await.unwrap_err();
        assert!(
            matches!(err, ModelCacheError::Forbidden { .. }),
            "{endpoint}: {err}"
        );
        assert!(
            err.to_string().contains("ZOTERO_FETCH_ALLOW_PRIVATE=1"),
            "{err}"
        );
    }
}

#[tokio::test]
async fn a_small_file_is_checked_against_its_git_blob_sha1() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    s.emu.inject(
        Fault::once(FaultKind::CorruptBody)
            .on(&format!("/hf/{REPO}/resolve/"))
            .path_suffix("/tokenizer.json")
            .method("GET"),
    );
    let err = get(&cache, REPO).await.unwrap_err();
    match &err {
        ModelCacheError::HashMismatch {
            file,
            algorithm,
            expected,
            ..
        } => {
            assert_eq!(file, "tokenizer.json");
            assert_eq!(*algorithm, "git blob sha1");
            let f = &model_files()[1];
            assert_eq!(expected, &git_blob_sha1(&f.bytes));
        }
        other => panic!("{other}"),
    }
    assert!(get(&cache, REPO).await.is_ok());
}

/// A 503 is retried, and so is an answer that does not come: the first download of the
/// weights never answers (an hour: it can only end by the client's timeout), so the test does
/// not depend on how fast this machine is (it used to give 2 s against a 400 ms timeout, and
/// a loaded machine's normal answers took longer than 400 ms too). The timeout is long enough
/// for any normal answer; the test asserts what happened (a second GET), not durations.
#[tokio::test]
async fn busy_or_slow_answers_are_retried() {
    let s = Setup::new().await;
    let env = s.env(&[]);
    let mut c = HubConfig::from_env(&|k| env.get(k).cloned());
    c.allow_http_loopback = true;
    c.timeout = Duration::from_secs(3);
    c.retry.base_delay = Duration::from_millis(5);
    c.retry.max_delay = Duration::from_millis(20);
    let cache = ModelCache::new(c).unwrap();
    s.emu.inject(
        Fault::once(FaultKind::Unavailable {
            retry_after: None,
            backoff: None,
        })
        .on("/hf/"),
    );
    s.emu.inject(
        Fault::once(FaultKind::Slow(Duration::from_secs(3600))).on(&format!("{HF_CDN_ROOT}/")),
    );
    let dir = get(&cache, REPO).await.unwrap();
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
    assert_eq!(s.emu.faults_pending(), 0);
    let cdn_gets = s
        .emu
        .hf_requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path.starts_with(HF_CDN_ROOT))
        .count();
    assert_eq!(
        cdn_gets, 2,
        "the unanswered GET was abandoned and sent again"
    );
}

#[tokio::test]
async fn when_the_hub_cannot_be_reached_the_last_snapshot_of_the_branch_is_used() {
    let s = Setup::new().await;
    let dir = get(&s.cache(&[]), REPO).await.unwrap();
    // Nothing listens on port 9 of this machine (discard, never run in a test box).
    let cache = s.cache(&[("HF_ENDPOINT", "http://127.0.0.1:9/hf")]);
    assert_eq!(get(&cache, REPO).await.unwrap(), dir);
    // Without a snapshot, the error says what to do.
    let err = get(&cache, "emu-org/other").await.unwrap_err();
    assert!(matches!(err, ModelCacheError::Network { .. }), "{err}");
    assert!(err.to_string().contains("HF_HUB_OFFLINE"), "{err}");
}

#[test]
fn a_download_can_run_on_another_task() {
    fn send<T: Send>(_: &T) {}
    let cache = ModelCache::new(HubConfig::from_env(&|_| None)).unwrap();
    let cancel = CancellationToken::new();
    let s = spec(REPO);
    let fut = cache.get(&s, &quiet, &cancel);
    send(&fut);
}

#[tokio::test]
async fn a_renamed_repo_is_followed_to_its_new_name() {
    let s = Setup::new().await;
    s.emu.rename_hf_model(REPO, "emu-org/renamed-model");
    let dir = get(&s.cache(&[]), REPO).await.unwrap();
    // Stored under the name asked for, as huggingface_hub does.
    assert_eq!(dir.path, s.repo_dir().join("snapshots").join(COMMIT));
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
    let reqs = s.emu.hf_requests();
    assert!(reqs
        .iter()
        .any(|r| r.path.starts_with("/hf/emu-org/renamed-model/")));
}

/// The other process of `two_processes_download_one_blob_once`.
#[tokio::test]
#[ignore = "run by two_processes_download_one_blob_once in a child process"]
async fn child_downloader() {
    let (Some(home), Some(endpoint)) = (
        std::env::var_os("ZOTERO_INDEX_TEST_HF_HOME"),
        std::env::var("ZOTERO_INDEX_TEST_HF_ENDPOINT").ok(),
    ) else {
        return;
    };
    let env: HashMap<&str, String> = HashMap::from([
        ("HOME", home.to_str().unwrap().to_string()),
        ("HF_ENDPOINT", endpoint),
    ]);
    let mut c = HubConfig::from_env(&|k| env.get(k).cloned());
    c.allow_http_loopback = true;
    let dir = get(&ModelCache::new(c).unwrap(), REPO).await.unwrap();
    println!("done {}", dir.revision);
}

#[tokio::test]
async fn two_processes_download_one_blob_once() {
    use std::process::{Command, Stdio};
    let s = Setup::new().await;
    // The child's weights arrive slowly: the parent comes while it holds the blob's lock.
    s.emu.inject(
        Fault::once(FaultKind::Slow(Duration::from_millis(1500))).on(&format!("{HF_CDN_ROOT}/")),
    );
    let child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_downloader",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("ZOTERO_INDEX_TEST_HF_HOME", s.home.path())
        .env("ZOTERO_INDEX_TEST_HF_ENDPOINT", s.emu.hf_endpoint())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let cdn_gets = |emu: &Emulator| {
        emu.hf_requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path.starts_with(HF_CDN_ROOT))
            .count()
    };
    // Waits for the event (the child's GET), however long the child takes to start.
    for _ in 0..6000 {
        if cdn_gets(&s.emu) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(cdn_gets(&s.emu), 1, "the child is downloading");
    let dir = get(&s.cache(&[]), REPO).await.unwrap();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("done {COMMIT}")));
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
    assert_eq!(
        cdn_gets(&s.emu),
        1,
        "the parent waited for the child's blob"
    );
}

#[tokio::test]
async fn a_server_that_ignores_range_gets_the_whole_file_taken_from_the_start() {
    let s = Setup::new().await;
    let cache = s.cache(&[]);
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    let stop = move |f: &str, done: u64, total: u64| {
        if f == "model.safetensors" && done > 0 && done < total {
            c2.cancel();
        }
    };
    assert!(cache.get(&spec(REPO), &stop, &cancel).await.is_err());
    s.emu.hf_ignore_range(true);
    s.emu.reset_counts();
    let dir = get(&cache, REPO).await.unwrap();
    assert_eq!(
        std::fs::read(dir.path.join("model.safetensors")).unwrap(),
        weights()
    );
    let cdn: Vec<Recorded> = s
        .emu
        .hf_requests()
        .into_iter()
        .filter(|r| r.path.starts_with(HF_CDN_ROOT))
        .collect();
    assert_eq!(cdn.len(), 1, "the 200 answer is used, not asked again");
    assert!(cdn[0].header("range").is_some());
}
