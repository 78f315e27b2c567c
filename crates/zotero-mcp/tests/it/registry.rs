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

use serde_json::{Map, Value};

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

// ---------------------------------------------------------------------------------------
// A hand parser for the YAML subset of server.yaml
// ---------------------------------------------------------------------------------------

struct Line {
    no: usize,
    indent: usize,
    text: String,
}

/// Parses block mappings and block lists whose scalars are plain, 'single' or "double"
/// quoted, one per line. Anything else (flow collections, block scalars, anchors, tabs)
/// fails loudly rather than being misread.
fn parse_yaml(src: &str) -> Value {
    let mut lines = Vec::new();
    for (i, raw) in src.lines().enumerate() {
        assert!(
            !raw.contains('\t'),
            "server.yaml line {}: tabs are not allowed",
            i + 1
        );
        let text = strip_comment(raw);
        if text.trim().is_empty() {
            continue;
        }
        let indent = text.len() - text.trim_start().len();
        lines.push(Line {
            no: i + 1,
            indent,
            text: text.trim().to_string(),
        });
    }
    assert!(!lines.is_empty(), "server.yaml is empty");
    let mut pos = 0;
    let v = parse_block(&mut lines, &mut pos, 0);
    if let Some(l) = lines.get(pos) {
        panic!("server.yaml line {}: unexpected indentation", l.no);
    }
    v
}

/// The line without a trailing ` # comment` (outside quotes).
fn strip_comment(raw: &str) -> String {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in raw.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return raw[..i].to_string(),
            _ => {}
        }
        prev = c;
    }
    raw.to_string()
}

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

fn parse_block(lines: &mut [Line], pos: &mut usize, indent: usize) -> Value {
    if is_item(&lines[*pos].text) {
        parse_list(lines, pos, indent)
    } else {
        parse_map(lines, pos, indent)
    }
}

fn parse_list(lines: &mut [Line], pos: &mut usize, indent: usize) -> Value {
    let mut items = Vec::new();
    while *pos < lines.len() && lines[*pos].indent == indent && is_item(&lines[*pos].text) {
        let rest = lines[*pos].text[1..].trim_start().to_string();
        if rest.is_empty() {
            *pos += 1;
            assert!(
                *pos < lines.len() && lines[*pos].indent > indent,
                "server.yaml line {}: empty list item",
                lines[*pos - 1].no
            );
            let child = lines[*pos].indent;
            items.push(parse_block(lines, pos, child));
        } else if split_key(&rest).is_some() {
            // `- key: value` starts a mapping whose keys sit at the column after "- ".
            let col = indent + (lines[*pos].text.len() - rest.len());
            lines[*pos].indent = col;
            lines[*pos].text = rest;
            items.push(parse_map(lines, pos, col));
        } else {
            items.push(scalar(&rest, lines[*pos].no));
            *pos += 1;
        }
    }
    Value::Array(items)
}

fn parse_map(lines: &mut [Line], pos: &mut usize, indent: usize) -> Value {
    let mut map = Map::new();
    while *pos < lines.len() && lines[*pos].indent == indent && !is_item(&lines[*pos].text) {
        let no = lines[*pos].no;
        let (key, rest) = split_key(&lines[*pos].text)
            .unwrap_or_else(|| panic!("server.yaml line {no}: expected `key: value`"));
        *pos += 1;
        let value = if rest.is_empty() {
            match lines.get(*pos) {
                Some(l) if l.indent > indent => {
                    let child = l.indent;
                    parse_block(lines, pos, child)
                }
                // A list may sit at the same indentation as its key.
                Some(l) if l.indent == indent && is_item(&l.text) => parse_list(lines, pos, indent),
                _ => Value::Null,
            }
        } else {
            scalar(&rest, no)
        };
        assert!(
            map.insert(key.clone(), value).is_none(),
            "server.yaml line {no}: duplicate key {key}"
        );
    }
    if let Some(l) = lines.get(*pos) {
        assert!(
            l.indent < indent,
            "server.yaml line {}: unexpected indentation",
            l.no
        );
    }
    Value::Object(map)
}

/// `key: rest` with a plain key (letters, digits, `_`, `-`, `.`).
fn split_key(text: &str) -> Option<(String, String)> {
    let (k, rest) = if let Some(k) = text.strip_suffix(':') {
        (k, "")
    } else {
        let i = text.find(": ")?;
        (&text[..i], &text[i + 2..])
    };
    let ok = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    ok.then(|| (k.to_string(), rest.trim().to_string()))
}

fn scalar(text: &str, no: usize) -> Value {
    let s = if let Some(inner) = text.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .unwrap_or_else(|| panic!("server.yaml line {no}: unterminated 'string'"));
        inner.replace("''", "'")
    } else if text.starts_with('"') {
        serde_json::from_str::<String>(text)
            .unwrap_or_else(|e| panic!("server.yaml line {no}: bad \"string\": {e}"))
    } else {
        let first = text.chars().next().unwrap_or(' ');
        assert!(
            !matches!(
                first,
                '[' | '{' | '|' | '>' | '&' | '*' | '!' | '%' | '@' | '`'
            ),
            "server.yaml line {no}: {text:?} is outside the YAML subset (quote it)"
        );
        assert!(
            !text.contains(": ") && !text.ends_with(':'),
            "server.yaml line {no}: {text:?} is ambiguous (quote it)"
        );
        text.to_string()
    };
    Value::String(s)
}

#[test]
fn the_yaml_subset_parser_reads_what_it_should() {
    let v = parse_yaml(
        "a: 1 # comment\nb:\n  - x\n  - 'it''s'\n  - k: \"v # not a comment\"\n    l: w\nc:\n- y\nd:\n  e: \"{{f.g}}\"\n",
    );
    let want = serde_json::json!({
        "a": "1",
        "b": ["x", "it's", {"k": "v # not a comment", "l": "w"}],
        "c": ["y"],
        "d": {"e": "{{f.g}}"},
    });
    assert_eq!(v, want);
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
