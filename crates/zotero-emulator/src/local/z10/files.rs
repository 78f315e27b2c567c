//! Zotero 10's file upload (authorize `POST {lib}/items/{k}/file`, bytes to
//! `POST /api/local/uploads/{U}`, register with `upload=U`; LA L2350–2592) and full-text
//! writes (`PUT {lib}/items/{k}/fulltext`, `POST {lib}/fulltext`; LA L1370–1553).

use std::time::{Duration, Instant};

use md5::{Digest, Md5};
use serde_json::{json, Map, Value};

use super::super::super::answer::BadRequest;
use super::super::super::libs::LibraryId;
use super::super::super::storage::S3Object;
use super::super::super::stored::{FullText, ItemFile};
use super::super::super::{Answer, Recorded, State, USER_ID};
use super::super::text;
use super::objects::library_header;
use super::{compact, pretty, random_string, Data};

/// Upload keys live an hour in memory (LA L122–123).
const UPLOAD_TTL: Duration = Duration::from_secs(3600);

/// An authorized local upload.
#[derive(Debug, Clone)]
pub(crate) struct LocalUpload {
    lib: LibraryId,
    item: String,
    md5: String,
    filename: String,
    mtime: u64,
    content_type: String,
    charset: Option<String>,
    bytes: Option<Vec<u8>>,
    created: Instant,
}

/// The attachment `key` of `lib` as a file attachment: `Err` with the answer otherwise.
fn file_attachment(st: &State, lib: LibraryId, key: &str) -> Result<Value, Answer> {
    let item = st.libs[&lib]
        .items
        .iter()
        .find(|i| i["key"] == key)
        .cloned()
        .ok_or_else(|| text(404, "Not found"))?;
    let d = &item["data"];
    let mode = d["linkMode"].as_str().unwrap_or("");
    if d["itemType"] != "attachment" || mode == "linked_url" {
        return Err(text(400, &format!("Not a file attachment: {key}")));
    }
    if mode == "linked_file" {
        return Err(text(
            400,
            "Cannot upload files for non-imported attachments",
        ));
    }
    Ok(item)
}

fn files_editable(st: &State, lib: LibraryId) -> bool {
    match lib {
        LibraryId::User(_) => true,
        LibraryId::Group(g) => st
            .groups
            .get(&g)
            .is_some_and(|g| g.spec.can_edit_files(g.spec.role_of(USER_ID))),
    }
}

/// `If-Match` / `If-None-Match` against the synced hash; `required`: 428 without either.
fn if_headers(req: &Recorded, synced: Option<&String>, required: bool) -> Result<(), Answer> {
    if let Some(m) = req.header("if-match") {
        let m = m.trim_matches('"');
        let ok = m.len() == 32
            && m.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !ok {
            return Err(text(400, "Invalid If-Match header"));
        }
        return match synced {
            None => Err(text(412, "If-Match set but file does not exist")),
            Some(s) if s != m => Err(text(412, "ETag does not match current version of file")),
            Some(_) => Ok(()),
        };
    }
    if let Some(n) = req.header("if-none-match") {
        if n != "*" {
            return Err(text(400, "Invalid value for If-None-Match header"));
        }
        if synced.is_some() {
            return Err(text(412, "If-None-Match: * set but file exists"));
        }
        return Ok(());
    }
    if required {
        return Err(text(428, "If-Match/If-None-Match header not provided"));
    }
    Ok(())
}

/// `POST {lib}/items/{k}/file`: an upload authorization, or with `upload=U` the registration.
pub(crate) fn file(
    st: &mut State,
    _server: &str,
    req: &Recorded,
    lib: LibraryId,
    key: &str,
    data: &Data,
) -> Answer {
    let Data::Form(form) = data else {
        return text(
            400,
            "Content-Type must be application/x-www-form-urlencoded",
        );
    };
    let item = match file_attachment(st, lib, key) {
        Ok(i) => i,
        Err(a) => return a,
    };
    if !files_editable(st, lib) {
        return text(403, "File editing denied");
    }
    let param = |n: &str| form.get(n).and_then(Value::as_str).map(str::to_string);
    let synced = st.local.z10.synced.get(&(lib, key.to_string())).cloned();
    if let Some(u) = param("upload") {
        return register(st, req, lib, key, &u, synced.as_ref());
    }
    if let Err(a) = if_headers(req, synced.as_ref(), true) {
        return a;
    }
    let Some(md5) = param("md5").filter(|m| !m.is_empty()) else {
        return text(400, "MD5 hash not provided");
    };
    let md5 = md5.to_ascii_lowercase();
    let Some(filename) = param("filename").filter(|f| !f.is_empty()) else {
        return text(400, "File name not provided");
    };
    if filename.contains('/') || filename.contains('\\') || filename == "." || filename == ".." {
        return text(400, "Invalid file name");
    }
    let Some(size) = param("filesize") else {
        return text(400, "File size not provided");
    };
    let Ok(size) = size.parse::<u64>() else {
        return text(400, "Invalid file size value");
    };
    if size > 4 * 1024 * 1024 * 1024 {
        return text(400, "Files above 4 GB are not currently supported");
    }
    let Some(mtime) = param("mtime") else {
        return text(400, "File modification time not provided");
    };
    let Ok(mtime) = mtime.parse::<u64>() else {
        return text(400, "Invalid mtime value");
    };
    if mtime > 0 && mtime < 10_000_000_000 {
        return text(400, "mtime must be provided in milliseconds, not seconds");
    }
    let l = st.libs.get_mut(&lib).expect("the library was checked");
    if l.files.get(key).is_some_and(|f| f.hash == md5) {
        // The file on disk already is this one: recorded as synced, a new version.
        l.version += 1;
        let v = l.version;
        if let Some(i) = l.items.iter_mut().find(|i| i["key"] == key) {
            i["version"] = json!(v);
            i["data"]["version"] = json!(v);
            i["data"]["md5"] = json!(md5);
            i["data"]["mtime"] = json!(mtime);
        }
        st.local.z10.synced.insert((lib, key.to_string()), md5);
        return compact(200, &json!({"exists": 1}));
    }
    let content_type = param("contentType")
        .filter(|c| !c.is_empty())
        .or_else(|| {
            item["data"]["contentType"]
                .as_str()
                .filter(|c| !c.is_empty())
                .map(str::to_string)
        })
        .unwrap_or_else(|| "application/octet-stream".to_string());
    let upload_key = random_string(32);
    let host = req.header("host").unwrap_or("127.0.0.1:23119");
    let url = format!("http://{host}/api/local/uploads/{upload_key}");
    st.local.z10.uploads.insert(
        upload_key.clone(),
        LocalUpload {
            lib,
            item: key.to_string(),
            md5: md5.clone(),
            filename,
            mtime,
            content_type: content_type.clone(),
            charset: param("charset").filter(|c| !c.is_empty()),
            bytes: None,
            created: Instant::now(),
        },
    );
    if param("params").as_deref() == Some("1") {
        return compact(
            200,
            &json!({"url": url, "uploadKey": upload_key, "params": {"key": md5}}),
        );
    }
    compact(
        200,
        &json!({"url": url, "uploadKey": upload_key, "contentType": content_type, "prefix": "", "suffix": ""}),
    )
}

/// `upload=U`: the uploaded bytes become the attachment's file.
fn register(
    st: &mut State,
    req: &Recorded,
    lib: LibraryId,
    key: &str,
    upload_key: &str,
    synced: Option<&String>,
) -> Answer {
    let z = &mut st.local.z10;
    let Some(up) = z
        .uploads
        .get(upload_key)
        .filter(|u| u.created.elapsed() < UPLOAD_TTL)
        .cloned()
    else {
        return text(400, "Invalid or expired upload key");
    };
    if up.lib != lib || up.item != key {
        return text(400, "Upload key does not match item");
    }
    let Some(bytes) = up.bytes.clone() else {
        return text(400, "File contents were not uploaded");
    };
    if let Err(a) = if_headers(req, synced, false) {
        z.uploads.remove(upload_key);
        return a;
    }
    z.uploads.remove(upload_key);
    z.synced.insert((lib, key.to_string()), up.md5.clone());
    let size = bytes.len() as u64;
    st.files.known.insert((up.md5.clone(), false), size);
    st.files
        .s3
        .insert(up.md5.clone(), S3Object { bytes: Some(bytes) });
    let l = st.libs.get_mut(&lib).expect("the library was checked");
    l.version += 1;
    let v = l.version;
    l.files.insert(
        key.to_string(),
        ItemFile {
            hash: up.md5.clone(),
            size,
        },
    );
    let path = l.id().path();
    if let Some(i) = l.items.iter_mut().find(|i| i["key"] == key) {
        let d = &mut i["data"];
        d["filename"] = json!(up.filename);
        d["md5"] = json!(up.md5);
        d["mtime"] = json!(up.mtime);
        d["contentType"] = json!(up.content_type);
        if let Some(cs) = &up.charset {
            d["charset"] = json!(cs);
        }
        d["version"] = json!(v);
        i["version"] = json!(v);
        i["links"]["enclosure"] = json!({
            "href": format!("{}/{path}/items/{key}/file/view", super::super::super::libs::REAL_API),
            "title": up.filename, "length": size, "type": up.content_type,
        });
    }
    Answer::empty(204).header("Last-Modified-Version", v)
}

/// `POST /api/local/uploads/{U}`: the bytes (no key needed).
pub(crate) fn receive(st: &mut State, upload_key: &str, data: &Data, body: &[u8]) -> Answer {
    let z = &mut st.local.z10;
    let Some(up) = z
        .uploads
        .get(upload_key)
        .filter(|u| u.created.elapsed() < UPLOAD_TTL)
    else {
        return text(404, "Unknown or expired upload key");
    };
    let (lib, item) = (up.lib, up.item.clone());
    let exists = st
        .libs
        .get(&lib)
        .is_some_and(|l| l.item_index(&item).is_some());
    if !exists {
        return text(404, "Attachment item no longer exists");
    }
    // `server.js` hands text, JSON and form bodies on as decoded text (SV L234–244).
    let bytes: Vec<u8> = match data {
        Data::Json(v) => serde_json::to_vec(v).unwrap(),
        Data::Text(s) => s.clone().into_bytes(),
        Data::Form(m) => serde_json::to_vec(m).unwrap(),
        Data::Bytes | Data::None => body.to_vec(),
    };
    if bytes.is_empty() {
        return text(400, "No file content provided");
    }
    let got = format!("{:x}", Md5::digest(&bytes));
    let z = &mut st.local.z10;
    let Some(up) = z.uploads.get_mut(upload_key) else {
        return text(404, "Unknown or expired upload key");
    };
    if got != up.md5 {
        let expected = up.md5.clone();
        z.uploads.remove(upload_key);
        return text(
            400,
            &format!("File MD5 does not match expected (got {got}, expected {expected})"),
        );
    }
    up.bytes = Some(bytes);
    Answer::empty(201)
}

const FULLTEXT_TYPES: &[&str] = &["application/pdf", "text/html", "application/epub+zip"];

/// A full-text body checked (`'content' must be a string`, counts integers or absent).
fn fulltext_of(v: &Value) -> Result<FullText, BadRequest> {
    let Some(o) = v.as_object() else {
        return Err("Body must be a JSON object".into());
    };
    let Some(content) = o.get("content").and_then(Value::as_str) else {
        return Err("'content' must be a string".into());
    };
    let mut counts = [None; 4];
    for (n, name) in ["indexedChars", "totalChars", "indexedPages", "totalPages"]
        .iter()
        .enumerate()
    {
        match o.get(*name) {
            None | Some(Value::Null) => {}
            Some(x) => match x.as_u64() {
                Some(c) => counts[n] = Some(c),
                None => return Err(format!("'{name}' must be an integer").into()),
            },
        }
    }
    Ok(FullText {
        content: content.to_string(),
        indexed_chars: counts[0],
        total_chars: counts[1],
        indexed_pages: counts[2],
        total_pages: counts[3],
        version: 0,
    })
}

/// Stores a full text: `Err(404)` unless a stored-file attachment, `Err(400)` for other types.
fn store_fulltext(
    st: &mut State,
    lib: LibraryId,
    key: &str,
    mut ft: FullText,
) -> Result<(), Answer> {
    let item = file_attachment(st, lib, key).map_err(|_| text(404, "Not found"))?;
    let ct = item["data"]["contentType"].as_str().unwrap_or("");
    if !FULLTEXT_TYPES.contains(&ct) {
        return Err(text(
            400,
            "Full-text content is not supported for this item type",
        ));
    }
    let l = st.libs.get_mut(&lib).expect("the library was checked");
    l.version += 1;
    ft.version = l.version;
    l.fulltext.insert(key.to_string(), ft);
    Ok(())
}

/// `PUT {lib}/items/{k}/fulltext`
pub(crate) fn put_fulltext(st: &mut State, lib: LibraryId, key: &str, data: &Data) -> Answer {
    let v = match data {
        Data::Json(v) => v.clone(),
        _ => Value::Null,
    };
    let ft = match fulltext_of(&v) {
        Ok(f) => f,
        Err(m) => return text(400, m.body()),
    };
    match store_fulltext(st, lib, key, ft) {
        Ok(()) => Answer::empty(204).header("Last-Modified-Version", st.libs[&lib].version),
        Err(a) => a,
    }
}

/// `POST {lib}/fulltext`: at most 10 entries, the library version required.
pub(crate) fn post_fulltext(st: &mut State, req: &Recorded, lib: LibraryId, data: &Data) -> Answer {
    if let Err(a) = library_header(req, st.libs[&lib].version, true) {
        return a;
    }
    let Data::Json(body) = data else {
        return text(400, "Empty request body");
    };
    let Some(entries) = body.as_array() else {
        return text(400, "Uploaded data must be a JSON array");
    };
    if entries.is_empty() {
        return text(400, "No full-text entries provided");
    }
    if entries.len() > 10 {
        return text(413, "Cannot write more than 10 full-text entries at a time");
    }
    let (mut successful, mut success, mut failed) = (Map::new(), Map::new(), Map::new());
    for (i, e) in entries.iter().enumerate() {
        let idx = i.to_string();
        let Some(key) = e
            .get("key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
        else {
            failed.insert(
                idx,
                json!({"key": "", "code": 400, "message": "'key' is required"}),
            );
            continue;
        };
        let stored = fulltext_of(e)
            .map_err(|m| text(400, m.body()))
            .and_then(|ft| store_fulltext(st, lib, key, ft));
        match stored {
            Ok(()) => {
                successful.insert(idx.clone(), json!({"key": key}));
                success.insert(idx, json!(key));
            }
            Err(a) => {
                let m = String::from_utf8_lossy(&a.body).into_owned();
                failed.insert(idx, json!({"key": key, "code": a.status, "message": m}));
            }
        }
    }
    let v = st.libs[&lib].version;
    pretty(
        200,
        &json!({"successful": successful, "success": success, "unchanged": {}, "failed": failed}),
    )
    .header("Last-Modified-Version", v)
}
