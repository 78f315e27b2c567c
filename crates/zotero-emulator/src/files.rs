//! The file endpoint `POST|GET {prefix}/items/{key}/file`: upload authorization, upload
//! registration and download, as `ItemsController::_handleFileRequest` and `Zotero_Storage`
//! (zotero/dataserver) do them. The upload itself goes to the fake S3 bucket (`s3.rs`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use super::libs::{Lib, LibraryId};
use super::schema::ordered_json;
use super::storage::{b64_md5, Upload, BUCKET_PATH};
use super::stored::ItemFile;
use super::util::{
    iso8601, php_empty, php_float, php_int, php_is_numeric, random_hex32, round1, unix_now,
};
use super::{Answer, Recorded, State};

const MIB: f64 = 1024.0 * 1024.0;

/// `$_REQUEST`: query parameters, then the form body (only for a form content type).
fn request_params(req: &Recorded, body: &[u8]) -> HashMap<String, String> {
    let mut p: HashMap<String, String> = req.query.iter().cloned().collect();
    let form = req.header("content-type").is_some_and(|ct| {
        ct.to_ascii_lowercase()
            .starts_with("application/x-www-form-urlencoded")
    });
    if form {
        p.extend(super::util::parse_form(body));
    }
    p
}

/// What the key may do with a library's files, beyond reading the library.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FileRights {
    /// `Zotero_Group::userCanEditFiles` (always for the user library).
    pub(crate) edit: bool,
    /// Downloads answer 404: a `PublicClosed` group and no file access.
    pub(crate) hide_downloads: bool,
}

fn lib_mut(st: &mut State, lib: LibraryId) -> &mut Lib {
    st.libs.get_mut(&lib).unwrap()
}

/// `{prefix}/items/{key}/file[/view]`
pub(crate) fn file_request(
    st: &mut State,
    lib: LibraryId,
    (base, req, body): (&str, &Recorded, &[u8]),
    key: &str,
    rights: FileRights,
) -> Answer {
    let write = !matches!(req.method.as_str(), "GET" | "HEAD");
    if !super::util::is_valid_key(key) {
        return Answer::text(404, "Not found");
    }
    let Some(idx) = st.libs[&lib].item_index(key) else {
        return Answer::text(
            404,
            if write {
                "Not found"
            } else {
                "Item does not exist"
            },
        );
    };
    if !matches!(req.method.as_str(), "GET" | "HEAD" | "POST" | "PATCH") {
        return Answer::text(405, "Method not allowed");
    }
    let data = st.libs[&lib].items[idx]["data"].clone();
    if data["itemType"] != "attachment" {
        return Answer::text(400, "Item is not an attachment");
    }
    if !write {
        if rights.hide_downloads {
            return Answer::text(404, "Not found");
        }
        return download(st, lib, base, key);
    }
    let lm = data["linkMode"].as_str().unwrap_or("");
    if !matches!(lm, "imported_file" | "imported_url" | "embedded_image") {
        return Answer::text(
            400,
            "Cannot upload file for linked file/URL attachment item",
        );
    }
    if !rights.edit {
        return Answer::text(403, "You do not have file editing access");
    }
    let if_match = req.header("if-match").filter(|v| !v.is_empty());
    let if_none = req.header("if-none-match").filter(|v| !v.is_empty());
    let stored_hash = data["md5"].as_str().filter(|h| !h.is_empty());
    let item_version = st.libs[&lib].items[idx]["version"].as_u64().unwrap_or(0);
    if if_match.is_none() && if_none.is_none() {
        return Answer::text(428, "If-Match/If-None-Match header not provided");
    }
    if let Some(m) = if_match {
        let m = m.trim_matches('"');
        let etag = m.len() == 32 && m.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !etag {
            return Answer::text(400, "Invalid ETag in If-Match header");
        }
        let Some(h) = stored_hash else {
            return Answer::text(412, "If-Match set but file does not exist");
        };
        if h != m {
            return Answer::text(412, "ETag does not match current version of file")
                .header("Last-Modified-Version", item_version);
        }
    } else {
        if if_none != Some("*") {
            return Answer::text(400, "Invalid value for If-None-Match header");
        }
        if stored_hash.is_some() {
            return Answer::text(412, "If-None-Match: * set but file exists")
                .header("Last-Modified-Version", item_version);
        }
    }
    if req.method == "PATCH" {
        return Answer::text(
            501,
            "The emulator does not implement partial (binary diff) uploads",
        );
    }
    let p = request_params(req, body);
    if let Some(upload) = p.get("upload") {
        return register(st, lib, key, upload, None);
    }
    if let Some(update) = p.get("update") {
        if php_empty(p.get("mtime").map(String::as_str)) {
            return Answer::text(500, "An error occurred");
        }
        return register(st, lib, key, update, p.get("mtime").cloned());
    }
    authorize(st, lib, base, key, &p)
}

fn authorize(
    st: &mut State,
    lib: LibraryId,
    base: &str,
    key: &str,
    p: &HashMap<String, String>,
) -> Answer {
    let get = |k: &str| p.get(k).map(String::as_str);
    let Some(md5) = get("md5").filter(|_| !php_empty(get("md5"))) else {
        return Answer::text(400, "MD5 hash not provided");
    };
    // The server's pattern is unanchored and allows 'g': /[abcdefg0-9]{32}/
    let hashlike = |s: &str| {
        s.as_bytes()
            .windows(32)
            .any(|w| w.iter().all(|b| matches!(b, b'a'..=b'g' | b'0'..=b'9')))
    };
    if !hashlike(md5) {
        return Answer::text(400, "Invalid MD5 hash");
    }
    let Some(filename) = get("filename").filter(|f| !f.is_empty()) else {
        return Answer::text(400, "Filename not provided");
    };
    let mut up = Upload {
        hash: md5.into(),
        filename: filename.into(),
        zip: false,
        item_hash: None,
        item_filename: None,
        size: 0,
        mtime: String::new(),
        content_type: None,
        charset: None,
        created: Instant::now(),
    };
    if !php_empty(get("zipMD5")) {
        let zip_md5 = get("zipMD5").unwrap_or("");
        if !hashlike(zip_md5) {
            return Answer::text(400, "Invalid ZIP MD5 hash");
        }
        if php_empty(get("zipFilename")) {
            return Answer::text(400, "ZIP filename not provided");
        }
        up.zip = true;
        up.hash = zip_md5.into();
        up.filename = get("zipFilename").unwrap_or("").into();
        up.item_hash = Some(md5.into());
        up.item_filename = Some(filename.into());
    } else if !php_empty(get("zipFilename")) {
        return Answer::text(400, "ZIP MD5 hash not provided");
    } else {
        up.zip = !php_empty(get("zip"));
    }
    if php_empty(get("mtime")) {
        return Answer::text(400, "File modification time not provided");
    }
    up.mtime = get("mtime").unwrap_or("").into();
    let Some(size) = get("filesize") else {
        return Answer::text(400, "File size not provided");
    };
    if !php_is_numeric(size) {
        return Answer::text(400, "Invalid file size");
    }
    let size_f: f64 = size.trim().parse().unwrap_or(0.0);
    if size_f > 4_000_000_000.0 {
        return Answer::text(400, "Files above 4 GB are not currently supported");
    }
    up.size = size_f.max(0.0) as u64;
    // `$x = $_REQUEST['x'] ?? null; if ($x && !preg_match(...)) $x = null;`
    let clean = |v: Option<&str>, extra: &[u8]| -> Option<String> {
        let s = v?;
        if s.is_empty() || s == "0" {
            return Some(s.to_string());
        }
        let ok = s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || extra.contains(&b));
        ok.then(|| s.to_string())
    };
    up.content_type = clean(get("contentType"), b"/");
    up.charset = clean(get("charset"), b"");

    // A group's files count against its owner's quota (`getEffectiveUserQuota($ownerUserID)`).
    let owner = st.owner(lib);
    let quota_mb = st.files.quota(owner) as f64 / MIB;
    let usage = st.usage_of(owner);
    let requested = round1((usage + up.size) as f64 / MIB);
    if requested > quota_mb {
        let usage_mb = php_float(round1(usage as f64 / MIB));
        let quota = php_float(quota_mb);
        return Answer::text(
            413,
            &format!(
                "File would exceed quota ({} > {quota})",
                php_float(requested)
            ),
        )
        .header("Zotero-Storage-Usage", usage_mb)
        .header("Zotero-Storage-Quota", quota)
        .header("Zotero-Storage-UserID", owner);
    }
    if let Some(known) = st.files.known.get(&(up.hash.clone(), up.zip)).copied() {
        if known != up.size {
            return Answer::text(400, "Specified file size incorrect for known file");
        }
        let version = attach(st, lib, key, &up);
        return Answer::json(&json!({"exists": 1})).header("Last-Modified-Version", version);
    }
    let recent = st
        .files
        .uploads
        .values()
        .filter(|u| u.created.elapsed() < Duration::from_secs(300))
        .count();
    if recent > 10 {
        // The server picks 429, 400 or 503 at random; the emulator always answers 429.
        return Answer::text(429, "Too many queued uploads").header("Retry-After", 300);
    }
    let upload_key = random_hex32();
    let fields = post_fields(st, &up);
    st.files.issued.push(upload_key.clone());
    st.files.uploads.insert(upload_key.clone(), up);
    let url = format!("{base}{BUCKET_PATH}");
    let body = if get("params") == Some("1") {
        let params: serde_json::Map<String, Value> = fields
            .iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
        ordered_json(&[
            ("url", json!(url)),
            ("params", Value::Object(params)),
            ("uploadKey", json!(upload_key)),
        ])
    } else {
        let boundary = format!("---------------------------{}", random_hex32());
        let mut prefix = String::new();
        for (k, v) in &fields {
            prefix.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
            ));
        }
        prefix.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\n"
        ));
        ordered_json(&[
            ("url", json!(url)),
            (
                "contentType",
                json!(format!("multipart/form-data; boundary={boundary}")),
            ),
            ("prefix", json!(prefix)),
            ("suffix", json!(format!("\r\n--{boundary}--"))),
            ("uploadKey", json!(upload_key)),
        ])
    };
    Answer::raw(200, body.into_bytes(), "application/json")
}

/// The S3 POST form fields of `Zotero_Storage::generateUploadPOSTParams`, in its order.
fn post_fields(st: &State, up: &Upload) -> Vec<(&'static str, String)> {
    let now = unix_now();
    let iso = iso8601(now);
    let amz_date = iso.replace(['-', ':'], "");
    let short = &amz_date[..8];
    let credential = format!("EMULATORACCESSKEY/{short}/us-east-1/s3/aws4_request");
    let exp = iso8601(now.saturating_add_signed(st.files.policy_ttl_secs));
    // gmdate('Y-m-d\TG:i:s\Z'): the hour has no leading zero.
    let hour: u32 = exp[11..13].parse().unwrap_or(0);
    let expiration = format!("{}T{hour}{}", &exp[..10], &exp[13..]);
    let content_md5 = b64_md5(&up.hash);
    let policy = json!({
        "expiration": expiration,
        "conditions": [
            {"bucket": "zotero-uploads"},
            {"key": up.hash},
            {"acl": "private"},
            {"Content-MD5": content_md5},
            ["content-length-range", up.size, up.size],
            {"success_action_status": "201"},
            {"x-amz-credential": credential},
            {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
            {"x-amz-date": amz_date},
        ]
    });
    let policy_b64 = base64::engine::general_purpose::STANDARD.encode(policy.to_string());
    let signature = st.files.sign(&policy_b64);
    vec![
        ("key", up.hash.clone()),
        ("acl", "private".into()),
        ("Content-MD5", content_md5),
        ("success_action_status", "201".into()),
        ("policy", policy_b64),
        ("x-amz-algorithm", "AWS4-HMAC-SHA256".into()),
        ("x-amz-credential", credential),
        ("x-amz-date", amz_date.clone()),
        ("x-amz-signature", signature),
    ]
}

/// Registration (`upload=<key>`, or the old client's `update=<key>` with `mtime`).
fn register(
    st: &mut State,
    lib: LibraryId,
    key: &str,
    upload_key: &str,
    mtime: Option<String>,
) -> Answer {
    if upload_key.is_empty() {
        return Answer::text(400, "Upload key not provided");
    }
    let Some(mut up) = st.files.uploads.get(upload_key).cloned() else {
        return Answer::text(400, "Upload key not found");
    };
    // The server asks S3 for the object named by the hash; a size mismatch is only logged.
    if !st.files.s3.contains_key(&up.hash) {
        return Answer::text(400, "Remote file not found");
    }
    if let Some(m) = mtime {
        up.mtime = m;
    }
    st.files
        .known
        .entry((up.hash.clone(), up.zip))
        .or_insert(up.size);
    let version = attach(st, lib, key, &up);
    st.files.uploads.remove(upload_key);
    Answer::empty(204).header("Last-Modified-Version", version)
}

/// `Zotero_Storage::updateFileItemInfo`: the item gets the file's metadata and a new version.
fn attach(st: &mut State, lib: LibraryId, key: &str, up: &Upload) -> u64 {
    let size = st
        .files
        .known
        .get(&(up.hash.clone(), up.zip))
        .copied()
        .unwrap_or(up.size);
    let lib = lib_mut(st, lib);
    lib.version += 1;
    let version = lib.version;
    lib.files.insert(
        key.to_string(),
        ItemFile {
            hash: up.hash.clone(),
            size,
        },
    );
    let path = lib.id().path();
    let Some(item) = lib.items.iter_mut().find(|i| i["key"] == key) else {
        return version;
    };
    let d = &mut item["data"];
    let filename = up
        .item_filename
        .clone()
        .unwrap_or_else(|| up.filename.clone());
    if !up.zip || up.item_filename.is_some() {
        d["filename"] = json!(filename);
    }
    d["md5"] = json!(up.item_hash.clone().unwrap_or_else(|| up.hash.clone()));
    d["mtime"] = json!(php_int(&up.mtime));
    if let Some(ct) = &up.content_type {
        d["contentType"] = json!(ct);
    }
    if let Some(cs) = &up.charset {
        d["charset"] = json!(cs);
    }
    d["version"] = json!(version);
    let mut enclosure = json!({
        "href": format!("{}/{path}/items/{key}/file/view", super::libs::REAL_API),
        "title": d["filename"],
        "length": size,
    });
    if let Some(ct) = d["contentType"].as_str().filter(|c| !c.is_empty()) {
        enclosure["type"] = json!(ct);
    }
    item["version"] = json!(version);
    item["links"]["enclosure"] = enclosure;
    version
}

/// `GET .../file`: a redirect to the stored object, or 404 without a file.
fn download(st: &State, lib: LibraryId, base: &str, key: &str) -> Answer {
    let lib = &st.libs[&lib];
    let Some(f) = lib.files.get(key) else {
        return Answer::text(404, "Not found");
    };
    let item = lib.items.iter().find(|i| i["key"] == key);
    let mtime = item
        .map(|i| i["data"]["mtime"].clone())
        .unwrap_or(Value::Null);
    let md5 = item
        .and_then(|i| i["data"]["md5"].as_str().map(str::to_string))
        .unwrap_or_else(|| f.hash.clone());
    Answer::empty(302)
        .header("Location", format!("{base}{BUCKET_PATH}{}", f.hash))
        .header("Zotero-File-Modification-Time", mtime)
        .header("Zotero-File-MD5", md5)
        .header("Zotero-File-Size", f.size)
        .header("Zotero-File-Compressed", "No")
}
