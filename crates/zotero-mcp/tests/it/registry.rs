//! The registry metadata (`registry/`) and the packaging files agree with the program.
//!
//! - `registry/tools.json` (Docker MCP registry format) lists exactly the tools the built binary
//!   lists (`zotero-mcp tools --json`): same names, descriptions, argument names, types and
//!   descriptions, in both directions, so the file cannot drift as the tool set grows.
//!   Regenerate it with `.ci/packaging.sh tools-json`.
//! - `registry/server.yaml` keeps the Docker registry's rules: lowercase hyphenated name, a
//!   title without "MCP" or "Server", every secret named `zotero-mcp.*`, env values that name
//!   declared parameters. It is written in a small YAML subset parsed here by hand.
//! - `registry/server.json` (official MCP registry) has the required fields, an OCI package and
//!   the same environment variables as server.yaml.
//! - The GitHub owner, image name and version are the same everywhere: Cargo.toml
//!   (`repository`, `version`) is the source of truth; server.yaml, server.json,
//!   Dockerfile.scratch and flake.nix must follow it.
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_zotero-mcp");
const NAME: &str = env!("CARGO_PKG_NAME");
const VERSION: &str = env!("CARGO_PKG_VERSION");
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

const REGEN: &str = "regenerate it with `.ci/packaging.sh tools-json`";

fn root_file(rel: &str) -> PathBuf {
    // The workspace root: this crate is crates/zotero-mcp.
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root_file(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// The GitHub owner, from `repository = "https://github.com/<owner>/<name>"` in Cargo.toml.
fn owner() -> String {
    let rest = REPOSITORY
        .strip_prefix("https://github.com/")
        .unwrap_or_else(|| panic!("Cargo.toml repository is not a GitHub URL: {REPOSITORY}"));
    let (owner, repo) = rest
        .split_once('/')
        .expect("https://github.com/<owner>/<name>");
    assert_eq!(
        repo.trim_end_matches('/'),
        NAME,
        "the repository name should be the package name"
    );
    owner.to_string()
}

fn image_ref() -> String {
    format!("ghcr.io/{}/{NAME}:{VERSION}", owner())
}

// ---------------------------------------------------------------------------------------
// tools.json
// ---------------------------------------------------------------------------------------

/// The type the Docker registry shows for an argument: the JSON Schema `type` (the first
/// non-null one of a list), else the first typed branch of anyOf/oneOf/allOf.
fn arg_type(schema: &Value) -> String {
    match schema.get("type") {
        Some(Value::String(t)) => return t.clone(),
        Some(Value::Array(ts)) => {
            if let Some(t) = ts.iter().filter_map(Value::as_str).find(|t| *t != "null") {
                return t.to_string();
            }
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let t = arg_type(branch);
            if t != "null" && !t.is_empty() {
                return t;
            }
        }
    }
    if schema.get("$ref").is_some() || schema.get("properties").is_some() {
        "object".into()
    } else {
        "string".into()
    }
}

/// name -> (description, argument name -> (type, description))
type ToolView = BTreeMap<String, (String, BTreeMap<String, (String, String)>)>;

fn binary_tools() -> ToolView {
    let out = Command::new(BIN)
        .args(["tools", "--json"])
        .env_remove("ZOTERO_API_KEY")
        .env_remove("ZOTERO_USER_ID")
        .output()
        .expect("run zotero-mcp tools --json");
    assert!(
        out.status.success(),
        "zotero-mcp tools --json failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tools: Vec<Value> = serde_json::from_slice(&out.stdout).expect("tools --json is JSON");
    assert!(!tools.is_empty(), "the binary lists no tools");
    let mut view = ToolView::new();
    for t in tools {
        let name = t["name"].as_str().expect("tool name").to_string();
        let desc = t["description"].as_str().unwrap_or("").to_string();
        let mut args = BTreeMap::new();
        if let Some(props) = t["inputSchema"]["properties"].as_object() {
            for (k, v) in props {
                let d = v.get("description").and_then(Value::as_str).unwrap_or("");
                args.insert(k.clone(), (arg_type(v), d.to_string()));
            }
        }
        assert!(
            view.insert(name.clone(), (desc, args)).is_none(),
            "the binary lists {name} twice"
        );
    }
    view
}

fn registry_tools() -> ToolView {
    let tools: Vec<Value> =
        serde_json::from_str(&read("registry/tools.json")).expect("registry/tools.json is JSON");
    let mut view = ToolView::new();
    for t in tools {
        let obj = t.as_object().expect("each tool is an object");
        for k in obj.keys() {
            assert!(
                ["name", "description", "arguments"].contains(&k.as_str()),
                "registry/tools.json: unexpected field {k:?} in {t}"
            );
        }
        let name = t["name"].as_str().expect("tool name").to_string();
        let desc = t["description"]
            .as_str()
            .expect("tool description")
            .to_string();
        let mut args = BTreeMap::new();
        for a in t
            .get("arguments")
            .map(|a| a.as_array().expect("arguments is a list"))
            .into_iter()
            .flatten()
        {
            let an = a["name"].as_str().expect("argument name").to_string();
            let at = a["type"].as_str().expect("argument type").to_string();
            let ad = a["desc"].as_str().expect("argument desc").to_string();
            assert!(
                args.insert(an.clone(), (at, ad)).is_none(),
                "registry/tools.json: {name} lists argument {an} twice"
            );
        }
        assert!(
            view.insert(name.clone(), (desc, args)).is_none(),
            "registry/tools.json lists {name} twice"
        );
    }
    view
}

#[test]
fn tools_json_matches_the_binary() {
    let bin = binary_tools();
    let reg = registry_tools();

    let bin_names: BTreeSet<_> = bin.keys().collect();
    let reg_names: BTreeSet<_> = reg.keys().collect();
    let missing: Vec<_> = bin_names.difference(&reg_names).collect();
    let extra: Vec<_> = reg_names.difference(&bin_names).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "registry/tools.json is out of date: missing {missing:?}, no longer served {extra:?}; {REGEN}"
    );

    for (name, (desc, args)) in &bin {
        let (rdesc, rargs) = &reg[name];
        assert_eq!(
            rdesc, desc,
            "registry/tools.json: description of {name} differs; {REGEN}"
        );
        let an: BTreeSet<_> = args.keys().collect();
        let rn: BTreeSet<_> = rargs.keys().collect();
        assert_eq!(
            rn, an,
            "registry/tools.json: arguments of {name} differ; {REGEN}"
        );
        for (arg, (ty, d)) in args {
            let (rty, rd) = &rargs[arg];
            assert_eq!(
                rty, ty,
                "registry/tools.json: type of {name}.{arg} differs; {REGEN}"
            );
            assert_eq!(
                rd, d,
                "registry/tools.json: description of {name}.{arg} differs; {REGEN}"
            );
        }
    }
}

/// server.yaml as JSON values; duplicate keys and malformed YAML fail loudly.
fn parse_yaml(src: &str) -> Value {
    serde_norway::from_str(src).unwrap_or_else(|e| panic!("server.yaml: {e}"))
}

// ---------------------------------------------------------------------------------------
// server.yaml (Docker MCP registry)
// ---------------------------------------------------------------------------------------

fn server_yaml() -> Value {
    parse_yaml(&read("registry/server.yaml"))
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    cur.as_str()
        .unwrap_or_else(|| panic!("{} must be a string, got {cur}", path.join(".")))
}

fn list_at<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    let mut cur = v;
    for p in path {
        cur = &cur[*p];
    }
    match cur {
        Value::Array(a) => a,
        Value::Null => &[],
        other => panic!("{} must be a list, got {other}", path.join(".")),
    }
}

/// Every environment variable server.yaml sets: secrets' `env` and `config.env` names.
fn yaml_env_names(y: &Value) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for s in list_at(y, &["config", "secrets"]) {
        names.insert(str_at(s, &["env"]).to_string());
    }
    for e in list_at(y, &["config", "env"]) {
        names.insert(str_at(e, &["name"]).to_string());
    }
    names
}

#[test]
fn server_yaml_keeps_the_docker_registry_rules() {
    let y = server_yaml();
    let name = str_at(&y, &["name"]);
    let hyphenated = !name.is_empty()
        && name.split('-').all(|p| {
            !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        });
    assert!(hyphenated, "name {name:?} must be lowercase and hyphenated");
    assert_eq!(name, NAME, "name must be the package name");
    assert_eq!(str_at(&y, &["type"]), "server");
    assert_eq!(
        str_at(&y, &["image"]),
        image_ref(),
        "image must be ghcr.io/<owner>/<name>:<Cargo.toml version>"
    );

    let title = str_at(&y, &["about", "title"]);
    assert!(!title.trim().is_empty(), "about.title is empty");
    let lower = title.to_lowercase();
    assert!(
        !lower.contains("mcp") && !lower.contains("server"),
        "about.title {title:?} must not contain \"MCP\" or \"Server\""
    );
    assert!(!str_at(&y, &["about", "description"]).trim().is_empty());
    assert!(str_at(&y, &["about", "icon"]).starts_with("https://"));
    assert!(!str_at(&y, &["meta", "category"]).is_empty());
    assert!(
        !list_at(&y, &["meta", "tags"]).is_empty(),
        "meta.tags is empty"
    );

    assert_eq!(str_at(&y, &["source", "project"]), REPOSITORY);
    let commit = str_at(&y, &["source", "commit"]);
    assert!(
        commit.len() == 40 && commit.chars().all(|c| c.is_ascii_hexdigit()),
        "source.commit {commit:?} must be a full commit hash"
    );

    let secrets = list_at(&y, &["config", "secrets"]);
    assert!(!secrets.is_empty(), "the API key must be a secret");
    for s in secrets {
        let sname = str_at(s, &["name"]);
        assert!(
            sname.starts_with(&format!("{name}.")),
            "secret {sname:?} must be prefixed {name}."
        );
        assert!(!str_at(s, &["env"]).is_empty());
    }
    let api_key = secrets
        .iter()
        .find(|s| str_at(s, &["env"]) == "ZOTERO_API_KEY")
        .expect("ZOTERO_API_KEY is a secret");
    assert_eq!(str_at(api_key, &["name"]), format!("{name}.api_key"));

    // Every templated env value names a declared parameter; required ones exist.
    let props = y["config"]["parameters"]["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for e in list_at(&y, &["config", "env"]) {
        let value = str_at(e, &["value"]);
        let inner = value
            .strip_prefix("{{")
            .and_then(|v| v.strip_suffix("}}"))
            .unwrap_or_else(|| panic!("env value {value:?} must be {{{{{name}.<parameter>}}}}"));
        let param = inner
            .strip_prefix(&format!("{name}."))
            .unwrap_or_else(|| panic!("env value {value:?} must be prefixed {name}."));
        assert!(
            props.contains_key(param),
            "env value {value:?}: no parameter {param} in config.parameters.properties"
        );
    }
    for r in list_at(&y, &["config", "parameters", "required"]) {
        let r = r.as_str().expect("required entries are strings");
        assert!(
            props.contains_key(r),
            "required parameter {r} is not declared"
        );
    }

    let env = yaml_env_names(&y);
    for var in zotero_mcp::config::CREDENTIAL_VARS {
        assert!(env.contains(var), "server.yaml must set {var}");
    }
}

// ---------------------------------------------------------------------------------------
// server.json (official MCP registry)
// ---------------------------------------------------------------------------------------

#[test]
fn server_json_has_the_required_fields_and_the_same_env() {
    let j: Value =
        serde_json::from_str(&read("registry/server.json")).expect("registry/server.json is JSON");
    let schema = str_at(&j, &["$schema"]);
    assert!(
        schema.starts_with("https://static.modelcontextprotocol.io/schemas/")
            && schema.ends_with("/server.schema.json"),
        "$schema {schema:?}"
    );
    let name = str_at(&j, &["name"]);
    assert_eq!(name, format!("io.github.{}/{NAME}", owner()));
    assert_eq!(name.matches('/').count(), 1);
    let desc = str_at(&j, &["description"]);
    assert!(
        (1..=100).contains(&desc.chars().count()),
        "description must be 1..=100 characters, is {}",
        desc.chars().count()
    );
    assert_eq!(str_at(&j, &["version"]), VERSION);
    assert_eq!(str_at(&j, &["repository", "url"]), REPOSITORY);
    assert_eq!(str_at(&j, &["repository", "source"]), "github");
    if let Some(t) = j.get("title").and_then(Value::as_str) {
        let lower = t.to_lowercase();
        assert!(!lower.contains("mcp") && !lower.contains("server"));
    }

    let packages = list_at(&j, &["packages"]);
    let oci: Vec<_> = packages
        .iter()
        .filter(|p| str_at(p, &["registryType"]) == "oci")
        .collect();
    assert_eq!(oci.len(), 1, "exactly one OCI package");
    let p = oci[0];
    assert_eq!(str_at(p, &["identifier"]), image_ref());
    assert_eq!(
        str_at(p, &["identifier"]),
        str_at(&server_yaml(), &["image"]),
        "server.json and server.yaml must name the same image"
    );
    assert_eq!(str_at(p, &["transport", "type"]), "stdio");
    if let Some(v) = p.get("version").and_then(Value::as_str) {
        assert_ne!(v, "latest");
    }

    let mut names = BTreeSet::new();
    for e in list_at(p, &["environmentVariables"]) {
        let n = str_at(e, &["name"]).to_string();
        assert!(
            !str_at(e, &["description"]).is_empty(),
            "{n} needs a description"
        );
        assert!(names.insert(n.clone()), "{n} listed twice");
        let required = e["isRequired"].as_bool().unwrap_or(false);
        let secret = e["isSecret"].as_bool().unwrap_or(false);
        if zotero_mcp::config::CREDENTIAL_VARS.contains(&n.as_str()) {
            assert!(required, "{n} must be isRequired");
        }
        assert_eq!(
            secret,
            n == "ZOTERO_API_KEY",
            "only ZOTERO_API_KEY is a secret ({n})"
        );
    }
    assert_eq!(
        names,
        yaml_env_names(&server_yaml()),
        "server.json and server.yaml must configure the same environment variables"
    );
}

// ---------------------------------------------------------------------------------------
// One owner everywhere
// ---------------------------------------------------------------------------------------

#[test]
fn dockerfile_and_flake_follow_cargo_toml() {
    let owner = owner();
    let docker = read("Dockerfile.scratch");
    assert!(
        docker
            .lines()
            .any(|l| l.trim() == format!("ARG OWNER={owner}")),
        "Dockerfile.scratch must have `ARG OWNER={owner}`"
    );
    for needle in [
        "FROM scratch AS meta",
        "io.modelcontextprotocol.server.name=\"io.github.${OWNER}/zotero-mcp\"",
        "org.opencontainers.image.source=\"https://github.com/${OWNER}/zotero-mcp\"",
        "org.opencontainers.image.revision=\"${REVISION}\"",
        "org.opencontainers.image.version=\"${VERSION}\"",
        "org.opencontainers.image.licenses=",
        "org.opencontainers.image.description=",
        "USER 65532:65532",
        "ENTRYPOINT [\"/zotero-mcp\"]",
    ] {
        assert!(
            docker.contains(needle),
            "Dockerfile.scratch lacks {needle:?}"
        );
    }
    // The default target is the last stage: the prebuilt binary, no network needed.
    let last_from = docker
        .lines()
        .rfind(|l| l.trim_start().starts_with("FROM "))
        .expect("a FROM line");
    assert_eq!(last_from.trim(), "FROM meta AS image");

    let flake = read("flake.nix");
    assert!(
        flake.contains(&format!("owner = \"{owner}\";")),
        "flake.nix must set owner = \"{owner}\";"
    );
}
