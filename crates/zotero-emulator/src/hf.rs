//! A fake Hugging Face Hub under `/hf` (plays `https://huggingface.co`, for `HF_ENDPOINT`) and
//! its LFS CDN under `/hf-cdn` (plays `cdn-lfs.hf.co`), for the model download of the search
//! index. What is guessed about the real hosts is in `fixtures/README.md`.
//!
//! `GET|HEAD /hf/{org}/{name}/resolve/{revision}/{path}`: `revision` is a branch or tag (in
//! `refs`) or a full commit; `%2F` in it stands for `/` as `huggingface_hub` quotes it.
//! - a regular (git) file: `200`, its bytes, `ETag: "<git blob sha1>"`, `X-Repo-Commit`;
//! - an LFS file: `302` to the CDN with `X-Linked-Etag: "<sha256>"`, `X-Linked-Size`,
//!   `X-Repo-Commit`, `ETag` of the pointer file. The CDN URL uses the host name `localhost`
//!   when the request came to `127.0.0.1` (and the other way round), so that the client sees
//!   another host, as it would with the real CDN: it must not send its token there.
//! - a renamed repo: `307` to the same path under the new name (a relative `Location`).
//! - `Range: bytes=N-` / `bytes=N-M` on either: `206` with `Content-Range`; past the end `416`.
//! - errors as the Hub sends them, with `X-Error-Code` and `X-Error-Message`: unknown repo
//!   `401 RepoNotFound` (`404` with a token), unknown revision `404 RevisionNotFound`, unknown
//!   file `404 EntryNotFound` (with `X-Repo-Commit`), gated repo without a token
//!   `401 GatedRepo`, with another token `403 GatedRepo`.

use std::collections::BTreeMap;
use std::path::Path;

use sha1::Sha1;
use sha2::{Digest, Sha256};

use super::{Answer, Emulator, Recorded};

/// The path root of the fake Hub (`HF_ENDPOINT` = `{uri}/hf`).
pub const HF_ROOT: &str = "/hf";
/// The path root of the fake LFS CDN.
pub const HF_CDN_ROOT: &str = "/hf-cdn";

/// One file of a model repo on the fake Hub.
#[derive(Debug, Clone)]
pub struct HfFile {
    /// Path in the repo, e.g. `1_Pooling/config.json`.
    pub path: String,
    pub bytes: Vec<u8>,
    /// Stored with Git LFS (served through the CDN, `ETag` = sha256).
    pub lfs: bool,
}

impl HfFile {
    /// A file, stored with LFS when its name says so as Hugging Face repos' `.gitattributes`
    /// do (`*.safetensors`, `*.bin`, `*.onnx`, `*.h5`, `*.msgpack`, `*.ot`, `*.pt`).
    pub fn new(path: &str, bytes: impl Into<Vec<u8>>) -> HfFile {
        let lfs = [
            ".safetensors",
            ".bin",
            ".onnx",
            ".h5",
            ".msgpack",
            ".ot",
            ".pt",
        ]
        .iter()
        .any(|ext| path.ends_with(ext));
        HfFile {
            path: path.to_string(),
            bytes: bytes.into(),
            lfs,
        }
    }
}

/// The sha256 of `bytes`, lower-case hex (the ETag of an LFS file).
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The git blob sha1 of `bytes` (`sha1("blob <len>\0" + bytes)`): the ETag of a regular file.
pub fn git_blob_sha1(bytes: &[u8]) -> String {
    let mut h = Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    hex(&h.finalize())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Default)]
struct Repo {
    /// Commit → files by path.
    commits: BTreeMap<String, BTreeMap<String, HfFile>>,
    /// Branch or tag → commit.
    refs: BTreeMap<String, String>,
    /// The token a gated repo accepts (`None`: public).
    gated: Option<String>,
}

#[derive(Default)]
pub(crate) struct HfState {
    repos: BTreeMap<String, Repo>,
    /// sha256 → bytes, what the CDN serves.
    cdn: BTreeMap<String, Vec<u8>>,
    /// Old repo id → new one (a renamed repo: the Hub redirects).
    renamed: BTreeMap<String, String>,
    /// Answer `Range` requests with the whole body (`200`), as some proxies do.
    ignore_range: bool,
}

fn error(status: u16, code: &str, message: &str) -> Answer {
    let mut a = Answer::raw(
        status,
        serde_json::to_vec(&serde_json::json!({ "error": message })).unwrap(),
        "application/json; charset=utf-8",
    )
    .header("X-Error-Code", code)
    .header("X-Error-Message", message);
    a.bare = true;
    a
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            if let Some(v) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
            {
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

/// The bytes of `body` a `Range` header asks for: `Ok(None)` for the whole body, `Err` when
/// the range is past the end.
fn range(req: &Recorded, len: usize) -> Result<Option<(usize, usize)>, ()> {
    let Some(spec) = req
        .header("range")
        .and_then(|r| r.trim().strip_prefix("bytes="))
    else {
        return Ok(None);
    };
    let (a, b) = spec.split_once('-').ok_or(())?;
    let start: usize = a.trim().parse().map_err(|_| ())?;
    let end: usize = if b.trim().is_empty() {
        len.saturating_sub(1)
    } else {
        b.trim()
            .parse::<usize>()
            .map_err(|_| ())?
            .min(len.saturating_sub(1))
    };
    if start >= len || end < start {
        return Err(());
    }
    Ok(Some((start, end)))
}

/// A body with `Range` honoured (`Accept-Ranges: bytes` on every answer).
fn ranged(req: &Recorded, bytes: &[u8], etag: &str, ignore_range: bool) -> Answer {
    let len = bytes.len();
    let asked = if ignore_range {
        Ok(None)
    } else {
        range(req, len)
    };
    let mut a = match asked {
        Ok(None) => Answer::raw(200, bytes.to_vec(), "application/octet-stream"),
        Ok(Some((s, e))) => Answer::raw(206, bytes[s..=e].to_vec(), "application/octet-stream")
            .header("Content-Range", format!("bytes {s}-{e}/{len}")),
        Err(()) => Answer::empty(416).header("Content-Range", format!("bytes */{len}")),
    };
    a = a
        .header("Accept-Ranges", "bytes")
        .header("ETag", format!("\"{etag}\""));
    a.bare = true;
    a
}

/// The other loopback name of the request's host, for a CDN on "another host".
fn cdn_base(req: &Recorded, base: &str) -> String {
    let host = req.header("host").unwrap_or("");
    if host.starts_with("localhost") {
        base.replace("localhost", "127.0.0.1")
    } else {
        base.replace("127.0.0.1", "localhost")
    }
}

/// Answers a request to the fake Hub or its CDN (`None`: the path is not theirs).
pub(crate) fn handle(st: &mut super::State, base: &str, req: &Recorded) -> Option<Answer> {
    let path = req.path.as_str();
    if let Some(rest) = path
        .strip_prefix(HF_CDN_ROOT)
        .filter(|r| r.starts_with('/'))
    {
        return Some(cdn(&st.hf, req, rest));
    }
    let rest = path.strip_prefix(HF_ROOT).filter(|r| r.starts_with('/'))?;
    if req.method != "GET" && req.method != "HEAD" {
        let mut a = Answer::text(405, "Method Not Allowed");
        a.bare = true;
        return Some(a);
    }
    Some(hub(&st.hf, base, req, rest))
}

fn cdn(hf: &HfState, req: &Recorded, rest: &str) -> Answer {
    let sha = rest.trim_start_matches('/');
    let Some(bytes) = hf.cdn.get(sha) else {
        let mut a = Answer::raw(
            404,
            b"<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code></Error>".to_vec(),
            "application/xml",
        );
        a.bare = true;
        return a;
    };
    ranged(req, bytes, sha, hf.ignore_range)
}

fn hub(hf: &HfState, base: &str, req: &Recorded, rest: &str) -> Answer {
    // /{org}/{name}/resolve/{revision}/{path...}
    let parts: Vec<&str> = rest.trim_start_matches('/').splitn(5, '/').collect();
    let [org, name, "resolve", revision, file] = parts.as_slice() else {
        return error(404, "EntryNotFound", "Not Found");
    };
    let repo_id = format!("{org}/{name}");
    let token = req
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_string);
    if let Some(new_id) = hf.renamed.get(&repo_id) {
        // A renamed repo: a relative redirect to the same path under the new name.
        let mut a = Answer::empty(307).header(
            "Location",
            format!("{HF_ROOT}/{new_id}/resolve/{revision}/{file}"),
        );
        a.bare = true;
        return a;
    }
    let Some(repo) = hf.repos.get(&repo_id) else {
        // The Hub does not say whether a repo exists to someone who is not logged in.
        return if token.is_some() {
            error(404, "RepoNotFound", "Repository not found")
        } else {
            error(401, "RepoNotFound", "Invalid username or password.")
        };
    };
    if let Some(wanted) = &repo.gated {
        match &token {
            None => {
                return error(
                    401,
                    "GatedRepo",
                    &format!(
                        "Access to model {repo_id} is restricted. You must have access to it and be authenticated to access it. Please log in."
                    ),
                )
            }
            Some(t) if t != wanted => {
                return error(
                    403,
                    "GatedRepo",
                    &format!(
                        "Access to model {repo_id} is restricted and you are not in the authorized list. Visit https://huggingface.co/{repo_id} to ask for access."
                    ),
                )
            }
            Some(_) => {}
        }
    }
    let revision = percent_decode(revision);
    let commit = if repo.commits.contains_key(&revision) {
        revision.clone()
    } else if let Some(c) = repo.refs.get(&revision) {
        c.clone()
    } else {
        return error(
            404,
            "RevisionNotFound",
            &format!("Invalid rev id: {revision}"),
        );
    };
    let files = &repo.commits[&commit];
    let file = percent_decode(file);
    let Some(f) = files.get(&file) else {
        return error(404, "EntryNotFound", "Entry not found").header("X-Repo-Commit", &commit);
    };
    if f.lfs {
        let sha = sha256_hex(&f.bytes);
        // The pointer file git stores in place of the content.
        let pointer = format!(
            "version https://git-lfs.github.com/spec/v1\noid sha256:{sha}\nsize {}\n",
            f.bytes.len()
        );
        let location = format!(
            "{}{HF_CDN_ROOT}/{sha}?X-Amz-Expires=3600&X-Amz-Signature=emulated",
            cdn_base(req, base)
        );
        let mut a = Answer::empty(302)
            .header("Location", location)
            .header("X-Repo-Commit", &commit)
            .header("X-Linked-Etag", format!("\"{sha}\""))
            .header("X-Linked-Size", f.bytes.len())
            .header("ETag", format!("\"{}\"", git_blob_sha1(pointer.as_bytes())));
        a.bare = true;
        return a;
    }
    ranged(req, &f.bytes, &git_blob_sha1(&f.bytes), hf.ignore_range)
        .header("X-Repo-Commit", &commit)
}

impl Emulator {
    /// The fake Hub's endpoint (use as `HF_ENDPOINT`): `http://127.0.0.1:PORT/hf`.
    pub fn hf_endpoint(&self) -> String {
        format!("{}{HF_ROOT}", self.uri())
    }

    /// Adds `files` as commit `commit` of the model repo `repo` (`org/name`) and points its
    /// `main` branch at it.
    pub fn add_hf_model(&self, repo: &str, commit: &str, files: Vec<HfFile>) {
        assert!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "a commit is 40 hex digits"
        );
        let mut st = self.state.lock().unwrap();
        let hf = &mut st.hf;
        for f in files.iter().filter(|f| f.lfs) {
            hf.cdn.insert(sha256_hex(&f.bytes), f.bytes.clone());
        }
        let r = hf.repos.entry(repo.to_string()).or_default();
        r.commits.insert(
            commit.to_string(),
            files.into_iter().map(|f| (f.path.clone(), f)).collect(),
        );
        r.refs.insert("main".to_string(), commit.to_string());
    }

    /// Adds every file below `dir` (recursively) as commit `commit` of `repo`, as
    /// [`Emulator::add_hf_model`] does.
    pub fn add_hf_model_dir(&self, repo: &str, commit: &str, dir: &Path) {
        fn walk(root: &Path, dir: &Path, out: &mut Vec<HfFile>) {
            for e in std::fs::read_dir(dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    walk(root, &p, out);
                } else {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                    out.push(HfFile::new(&rel, std::fs::read(&p).unwrap()));
                }
            }
        }
        let mut files = Vec::new();
        walk(dir, dir, &mut files);
        self.add_hf_model(repo, commit, files);
    }

    /// Points branch or tag `name` of `repo` at `commit`.
    pub fn set_hf_ref(&self, repo: &str, name: &str, commit: &str) {
        let mut st = self.state.lock().unwrap();
        let r = st.hf.repos.get_mut(repo).expect("a repo added before");
        r.refs.insert(name.to_string(), commit.to_string());
    }

    /// Renames `old` to `new` (an added repo): requests for `old` are redirected (`307`, a
    /// relative `Location`), as the Hub does for renamed repos.
    pub fn rename_hf_model(&self, old: &str, new: &str) {
        let mut st = self.state.lock().unwrap();
        let repo = st.hf.repos.remove(old).expect("a repo added before");
        st.hf.repos.insert(new.to_string(), repo);
        st.hf.renamed.insert(old.to_string(), new.to_string());
    }

    /// `true`: `Range` is ignored (whole bodies, `200`), as by some proxies and CDNs.
    pub fn hf_ignore_range(&self, on: bool) {
        self.state.lock().unwrap().hf.ignore_range = on;
    }

    /// Makes `repo` gated: only `Authorization: Bearer {token}` may download it.
    pub fn gate_hf_model(&self, repo: &str, token: &str) {
        let mut st = self.state.lock().unwrap();
        let r = st.hf.repos.get_mut(repo).expect("a repo added before");
        r.gated = Some(token.to_string());
    }

    /// Every request to the fake Hub or its CDN, in order.
    pub fn hf_requests(&self) -> Vec<Recorded> {
        let st = self.state.lock().unwrap();
        st.requests
            .iter()
            .filter(|r| {
                [HF_ROOT, HF_CDN_ROOT].iter().any(|root| {
                    r.path
                        .strip_prefix(root)
                        .is_some_and(|x| x.starts_with('/'))
                })
            })
            .cloned()
            .collect()
    }
}
