//! Which model ([`ModelSpec`]) and where and how it is fetched ([`HubConfig`]): the
//! `huggingface_hub` settings read from the environment.

use std::fmt;
use std::fs::{self};
use std::path::{Path, PathBuf};
use std::time::Duration;

use zotero_net::RetryPolicy;

use crate::error::{ModelCacheError, Result};

/// The default model, PINNED to a commit so that vectors never silently change model: the
/// commit of `sentence-transformers/all-MiniLM-L6-v2`'s `main` that sentence-transformers
/// documents (and the snapshot name most existing Python caches hold).
pub const DEFAULT_MODEL: &str =
    "sentence-transformers/all-MiniLM-L6-v2@c9745ed1d9f207416be6d2e6f8de32d1f16199bf";

/// The alternative the README names (better ranking, half the speed), pinned likewise.
pub const BGE_SMALL_MODEL: &str = "BAAI/bge-small-en-v1.5@5c38ec7c405ec4b44b94cc5a9bb96e735b38267a";

/// The public Hub (`HF_ENDPOINT` overrides it).
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";

/// Which model: a Hugging Face id at a revision, or a local directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    Hub {
        /// `org/name`.
        id: String,
        /// A branch, a tag or a 40-hex commit (`main` when none was given).
        revision: String,
    },
    /// A directory holding the model's files, used as it is.
    Local(PathBuf),
}

impl fmt::Display for ModelSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelSpec::Hub { id, revision } => write!(f, "{id}@{revision}"),
            ModelSpec::Local(p) => write!(f, "{}", p.display()),
        }
    }
}

pub(crate) fn is_commit(s: &str) -> bool {
    s.len() == 40 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A part of a repo id as the Hub allows it: letters, digits, `-`, `_`, `.`, not starting
/// or ending with `-` or `.`, no `--` or `..` (`huggingface_hub`'s `validate_repo_id`).
fn valid_id_part(p: &str) -> bool {
    !p.is_empty()
        && p.len() <= 96
        && p.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && !p.starts_with(['-', '.'])
        && !p.ends_with(['-', '.'])
        && !p.contains("--")
        && !p.contains("..")
}

fn valid_revision(r: &str) -> bool {
    !r.is_empty()
        && r.len() <= 255
        && !r.starts_with('/')
        && !r.ends_with('/')
        && !r.split('/').any(|s| s.is_empty() || s == "." || s == "..")
        && r.chars().all(|c| !c.is_control() && !c.is_whitespace())
}

impl ModelSpec {
    /// Parses a spec, expanding `~/` with the process's `HOME`.
    pub fn parse(s: &str) -> Result<ModelSpec> {
        ModelSpec::parse_with(s, &|k| std::env::var(k).ok())
    }

    /// The default model unless `ZOTERO_EMBEDDING_MODEL` names another.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<ModelSpec> {
        match env("ZOTERO_EMBEDDING_MODEL").filter(|s| !s.trim().is_empty()) {
            Some(s) => ModelSpec::parse_with(&s, env),
            None => ModelSpec::parse_with(DEFAULT_MODEL, env),
        }
    }

    /// Parses `org/name[@revision]`, or a directory: absolute, `./…`, `../…` or `~/…`.
    pub fn parse_with(s: &str, env: &dyn Fn(&str) -> Option<String>) -> Result<ModelSpec> {
        let bad = |reason: &str| ModelCacheError::BadSpec {
            spec: s.to_string(),
            reason: reason.to_string(),
        };
        let t = s.trim();
        if t.is_empty() {
            return Err(bad("it is empty"));
        }
        if t.starts_with('/') || t.starts_with("./") || t.starts_with("../") || t == "." {
            return Ok(ModelSpec::Local(PathBuf::from(t)));
        }
        if let Some(rest) = t.strip_prefix("~/") {
            let home = env("HOME")
                .filter(|h| !h.is_empty())
                .ok_or_else(|| bad("`~` needs HOME to be set"))?;
            return Ok(ModelSpec::Local(Path::new(&home).join(rest)));
        }
        let (id, revision) = match t.split_once('@') {
            Some((id, rev)) => (id, rev),
            None => (t, "main"),
        };
        let parts: Vec<&str> = id.split('/').collect();
        match parts.as_slice() {
            [org, name] if valid_id_part(org) && valid_id_part(name) => {}
            [_] => return Err(bad(
                "a Hugging Face id has the form `org/name` (for a directory here, write `./name`)",
            )),
            _ => return Err(bad("not a valid Hugging Face id `org/name`")),
        }
        if !valid_revision(revision) {
            return Err(bad(
                "the revision after `@` is not a valid branch, tag or commit",
            ));
        }
        Ok(ModelSpec::Hub {
            id: id.to_string(),
            revision: revision.to_string(),
        })
    }

    /// A Hub model at a full commit: its cached snapshot never changes.
    pub fn is_pinned(&self) -> bool {
        matches!(self, ModelSpec::Hub { revision, .. } if is_commit(revision))
    }
}

/// Where and how models are fetched: the `huggingface_hub` settings.
#[derive(Clone)]
pub struct HubConfig {
    /// `HF_ENDPOINT`, without a trailing `/`.
    pub endpoint: String,
    /// `HF_HUB_CACHE`.
    pub cache_dir: PathBuf,
    /// `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`): no request at all.
    pub offline: bool,
    /// `HF_TOKEN`, else (once a [`ModelCache`](crate::ModelCache) is made) the token file
    /// `huggingface-cli login` wrote; never shown.
    pub(crate) token: Option<String>,
    /// Where that file is: read when a download may need it, not when the configuration is
    /// read (every start of the server reads it).
    token_file: Option<PathBuf>,
    /// `ZOTERO_FETCH_ALLOW_PRIVATE`: plain http to this machine (the emulator in tests) and
    /// connections to loopback and private addresses; otherwise https only, and public
    /// addresses only (zotero-net's guard, on every request and redirect hop: the Hub's and
    /// its CDN's).
    pub allow_http_loopback: bool,
    /// For a connection and an answer's head, then for each wait for more of a body.
    pub timeout: Duration,
    /// Retries of 429, 5xx and network failures.
    pub retry: RetryPolicy,
}

impl fmt::Debug for HubConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HubConfig")
            .field("endpoint", &self.endpoint)
            .field("cache_dir", &self.cache_dir)
            .field("offline", &self.offline)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("allow_http_loopback", &self.allow_http_loopback)
            .finish()
    }
}

/// `huggingface_hub`'s `_is_true`.
fn env_true(v: Option<String>) -> bool {
    v.is_some_and(|v| matches!(v.to_ascii_uppercase().as_str(), "1" | "ON" | "YES" | "TRUE"))
}

/// `os.path.expandvars(os.path.expanduser(p))`, as `huggingface_hub` reads its paths.
fn expand(p: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let p = match p.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => match env("HOME") {
            Some(home) => format!("{home}{rest}"),
            None => p.to_string(),
        },
        _ => p.to_string(),
    };
    // `$NAME` and `${NAME}` of set variables; others are left as they are.
    let mut out = String::with_capacity(p.len());
    let mut rest = p.as_str();
    while let Some(i) = rest.find('$') {
        let (before, after) = rest.split_at(i);
        out.push_str(before);
        let after = after.get(1..).unwrap_or("");
        let (name, tail, braced) = match after.strip_prefix('{') {
            Some(b) => match b.find('}') {
                Some(j) => (b.get(..j).unwrap_or(""), b.get(j + 1..).unwrap_or(""), true),
                None => ("", after, false),
            },
            None => {
                let j = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (
                    after.get(..j).unwrap_or(""),
                    after.get(j..).unwrap_or(""),
                    false,
                )
            }
        };
        match env(name).filter(|_| !name.is_empty()) {
            Some(v) => out.push_str(&v),
            None if braced => {
                out.push_str("${");
                out.push_str(name);
                out.push('}');
            }
            None => {
                out.push('$');
                out.push_str(name);
            }
        }
        rest = tail;
    }
    out.push_str(rest);
    out
}

impl HubConfig {
    /// The settings `huggingface_hub` would use with this environment: `HF_ENDPOINT`,
    /// `HF_HOME`, `HF_HUB_CACHE` (or the older `HUGGINGFACE_HUB_CACHE`), `XDG_CACHE_HOME`,
    /// `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`), `HF_TOKEN` (else the file at
    /// `HF_TOKEN_PATH`, default `$HF_HOME/token`).
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> HubConfig {
        let endpoint = env("HF_ENDPOINT")
            .filter(|e| !e.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_ENDPOINT.to_string())
            .trim()
            .trim_end_matches('/')
            .to_string();
        let home = env("HOME").unwrap_or_default();
        let hf_home = match env("HF_HOME") {
            Some(h) => expand(&h, env),
            None => {
                let xdg = env("XDG_CACHE_HOME").unwrap_or_else(|| format!("{home}/.cache"));
                expand(&format!("{xdg}/huggingface"), env)
            }
        };
        let cache = env("HF_HUB_CACHE")
            .or_else(|| env("HUGGINGFACE_HUB_CACHE"))
            .map(|c| expand(&c, env))
            .unwrap_or_else(|| format!("{hf_home}/hub"));
        let offline = env_true(env("HF_HUB_OFFLINE").or_else(|| env("TRANSFORMERS_OFFLINE")));
        let token = env("HF_TOKEN")
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty());
        let token_file = token.is_none().then(|| {
            PathBuf::from(
                env("HF_TOKEN_PATH")
                    .map(|p| expand(&p, env))
                    .unwrap_or_else(|| format!("{hf_home}/token")),
            )
        });
        HubConfig {
            endpoint,
            cache_dir: PathBuf::from(cache),
            offline,
            token,
            token_file,
            allow_http_loopback: false,
            timeout: Duration::from_secs(30),
            retry: RetryPolicy {
                max_attempts: 4,
                base_delay: Duration::from_millis(500),
                max_delay: Duration::from_secs(8),
                max_wait: Duration::from_secs(60),
            },
        }
    }

    /// Replaces the token (`None`: none).
    pub fn with_token(mut self, token: Option<String>) -> HubConfig {
        self.token = token.filter(|t| !t.is_empty());
        self.token_file = None;
        self
    }

    /// Reads the token file when no `HF_TOKEN` was given (offline: no need).
    pub(crate) fn with_token_file(mut self) -> HubConfig {
        if let (None, Some(path), false) = (&self.token, self.token_file.take(), self.offline) {
            self.token = fs::read_to_string(path)
                .ok()
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty());
        }
        self
    }

    /// Whether a token will be sent to the Hub.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// Hides the token in a message that might echo it.
    pub(crate) fn scrub(&self, s: &str) -> String {
        match &self.token {
            Some(t) if t.len() >= 4 => s.replace(t.as_str(), "<HF_TOKEN>"),
            _ => s.to_string(),
        }
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
pub(crate) mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The environment `pairs` describe, as `from_env` reads it (the cache's tests use it too).
    pub(crate) fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn config_follows_huggingface_hub() {
        let c = HubConfig::from_env(&env(&[("HOME", "/home/u")]));
        assert_eq!(c.endpoint, "https://huggingface.co");
        assert_eq!(c.cache_dir, PathBuf::from("/home/u/.cache/huggingface/hub"));
        assert!(!c.offline && !c.has_token());
        let c = HubConfig::from_env(&env(&[
            ("HOME", "/home/u"),
            ("XDG_CACHE_HOME", "/x"),
            ("HF_ENDPOINT", "https://mirror.example/"),
            ("HF_HUB_OFFLINE", "yes"),
            ("HF_TOKEN", "hf_secret"),
        ]));
        assert_eq!(c.endpoint, "https://mirror.example");
        assert_eq!(c.cache_dir, PathBuf::from("/x/huggingface/hub"));
        assert!(c.offline && c.has_token());
        assert!(!format!("{c:?}").contains("hf_secret"));
        let c = HubConfig::from_env(&env(&[("HOME", "/home/u"), ("HF_HOME", "~/hf")]));
        assert_eq!(c.cache_dir, PathBuf::from("/home/u/hf/hub"));
        let c = HubConfig::from_env(&env(&[
            ("HOME", "/home/u"),
            ("HF_HOME", "/h"),
            ("D", "/data"),
            ("HF_HUB_CACHE", "${D}/hub-cache"),
            ("TRANSFORMERS_OFFLINE", "1"),
        ]));
        assert_eq!(c.cache_dir, PathBuf::from("/data/hub-cache"));
        assert!(c.offline);
        let c = HubConfig::from_env(&env(&[("HOME", "/h"), ("HF_HUB_OFFLINE", "0")]));
        assert!(!c.offline);
    }

    #[test]
    fn specs_parse() {
        let e = env(&[("HOME", "/home/u")]);
        assert_eq!(
            ModelSpec::parse_with("BAAI/bge-small-en-v1.5", &e).unwrap(),
            ModelSpec::Hub {
                id: "BAAI/bge-small-en-v1.5".into(),
                revision: "main".into()
            }
        );
        let pinned = ModelSpec::parse_with(DEFAULT_MODEL, &e).unwrap();
        assert!(pinned.is_pinned());
        assert!(ModelSpec::parse_with(BGE_SMALL_MODEL, &e)
            .unwrap()
            .is_pinned());
        assert_eq!(
            ModelSpec::parse_with("~/models/m", &e).unwrap(),
            ModelSpec::Local(PathBuf::from("/home/u/models/m"))
        );
        assert_eq!(
            ModelSpec::parse_with("./m", &e).unwrap(),
            ModelSpec::Local(PathBuf::from("./m"))
        );
        assert_eq!(ModelSpec::from_env(&e).unwrap(), pinned);
        for bad in [
            "", "name", "a/b/c", "a//b", "-a/b", "a/b@", "a/b@x y", "a/b@../x", "a--x/b",
        ] {
            let err = ModelSpec::parse_with(bad, &e).unwrap_err();
            assert!(
                matches!(err, ModelCacheError::BadSpec { .. }),
                "{bad}: {err}"
            );
        }
        let err = ModelSpec::parse_with("all-MiniLM-L6-v2", &e)
            .unwrap_err()
            .to_string();
        assert!(err.contains("org/name") && err.contains("./"), "{err}");
    }
}
