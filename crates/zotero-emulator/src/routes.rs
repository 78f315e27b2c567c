//! Request dispatch of the web API (after the hosts that are not the API: the bucket, the web
//! host, arXiv, the metadata hosts): authentication, routing on method and path to a library
//! (`/users/{id}/…`, `/groups/{id}/…`) with the key's access checked as `ApiController` and
//! the controllers do it, `/keys/current`, the groups, item types and fields.

use super::access::{keys_current, Creds, KeyAccess, Perm};
use super::files::{self, FileRights};
use super::libs::LibraryId;
use super::storage::BUCKET_PATH;
use super::{collwrites, groups, hf, mappings, metadata, oauth, reads, s3, schema, web, writes};
use super::{Answer, Recorded, State, API_KEY, USER_ID};

/// What the request's credentials amount to: none, or a key with what it may do (the
/// emulator's own key, or one made by an OAuth sign-in).
enum Auth {
    None,
    Valid { key: String, access: KeyAccess },
}

fn authenticate(st: &State, req: &Recorded) -> Result<Auth, Answer> {
    let mut key = req.header("zotero-api-key").map(str::to_string);
    if key.is_none() {
        key = req
            .query
            .iter()
            .find(|(k, _)| k == "key")
            .map(|(_, v)| v.clone());
    }
    if key.is_none() {
        if let Some(v) = req.header("authorization") {
            if v.len() >= 6 && v[..6].eq_ignore_ascii_case("bearer") {
                let rest = v[6..].trim_start_matches(' ');
                let ok = v[6..].starts_with(' ')
                    && !rest.is_empty()
                    && rest.bytes().all(|b| b.is_ascii_alphanumeric());
                if !ok {
                    return Err(Answer::text(400, "Invalid Authorization header format"));
                }
                key = Some(rest.to_string());
            }
        }
    }
    match key {
        None => Ok(Auth::None),
        Some(k) if k == API_KEY => Ok(Auth::Valid {
            access: st.access.clone(),
            key: k,
        }),
        Some(k) => match st.oauth.keys.get(&k) {
            Some(access) => Ok(Auth::Valid {
                access: access.clone(),
                key: k,
            }),
            None => Err(Answer::text(403, "Invalid key")),
        },
    }
}

/// Answers one request (faults are handled by the caller). `body` is the full body.
pub(crate) fn handle(st: &mut State, base: &str, req: &Recorded, body: &[u8]) -> Answer {
    // Hosts that are not the API: the S3 bucket, the web host, arXiv.
    let path = req.path.as_str();
    let get = req.method == "GET" || req.method == "HEAD";
    if path == BUCKET_PATH || path == BUCKET_PATH.trim_end_matches('/') {
        return match req.method.as_str() {
            "POST" => s3::post_object(st, base, req, body),
            _ => Answer::text(405, "Method Not Allowed"),
        };
    }
    if let Some(key) = path.strip_prefix(BUCKET_PATH) {
        return if get {
            s3::get_object(st, req, key)
        } else {
            Answer::text(405, "Method Not Allowed")
        };
    }
    if path.starts_with("/web/") {
        return if get {
            web::web_get(st, req)
        } else {
            Answer::text(405, "Method Not Allowed")
        };
    }
    if path.starts_with("/arxiv/") {
        return web::arxiv_get(st, base, req);
    }
    if let Some(a) = hf::handle(st, base, req) {
        return a;
    }
    if let Some(a) = metadata::handle(st, base, req) {
        return a;
    }
    if let Some(a) = oauth::handle(st, req, body) {
        return a;
    }
    if let Some(v) = req.header("zotero-api-version") {
        if !matches!(v.trim(), "1" | "2" | "3") {
            return Answer::text(400, &format!("Invalid API version '{v}'"));
        }
    }
    let auth = match authenticate(st, req) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let is_read = req.method == "GET" || req.method == "HEAD";
    if !is_read && matches!(auth, Auth::None) {
        return Answer::text(403, "An API key is required for write requests.");
    }
    if !is_read {
        if let Err(a) = writes::check_write_token(st, req) {
            return a;
        }
    }
    let segs: Vec<&str> = req.path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["items", "new"] => return schema::new_item(st.schema(), &req.query),
        ["itemTypes"] => return mappings::item_types(),
        ["itemFields"] => return mappings::item_fields(st.schema()),
        ["keys", k] => {
            if !is_read {
                return Answer::text(405, "Method not allowed");
            }
            let Auth::Valid { key, access } = &auth else {
                return Answer::text(
                    403,
                    if *k == "current" {
                        "Forbidden"
                    } else {
                        "Invalid key"
                    },
                );
            };
            if *k != "current" && k != key {
                return Answer::text(
                    403,
                    if *k == "current" {
                        "Forbidden"
                    } else {
                        "Invalid key"
                    },
                );
            }
            return Answer::json(&keys_current(key, access));
        }
        ["users", id, rest @ ..] => {
            let anonymous = matches!(auth, Auth::None);
            // Anyone may list the user's groups (public ones show without a key).
            let listing = rest == ["groups"] && is_read;
            if id.parse::<u64>().ok() != Some(USER_ID) || anonymous && !listing {
                return Answer::text(403, "Forbidden");
            }
            let creds = match &auth {
                Auth::Valid { access, .. } => Some(access),
                Auth::None => None,
            };
            if rest == ["groups"] && !is_read {
                // Creating groups is for the super-user.
                return Answer::text(403, "Forbidden");
            }
            if listing {
                return groups::list(st, creds, base, req);
            }
            return library(st, creds, LibraryId::USER, (base, req, body), rest);
        }
        ["groups", id, rest @ ..] => {
            if !id.bytes().all(|b| b.is_ascii_digit()) {
                return Answer::text(404, "Not found");
            }
            let Some(gid) = id.parse::<u64>().ok().filter(|g| *g != 0) else {
                return Answer::text(400, "Invalid group ID");
            };
            if !st.groups.contains_key(&gid) {
                return Answer::text(404, "Not found");
            }
            let creds = match &auth {
                Auth::Valid { access, .. } => Some(access),
                Auth::None => None,
            };
            if rest.is_empty() {
                if !is_read {
                    // Creating, changing and deleting groups is for the super-user.
                    return Answer::text(403, "Forbidden");
                }
                return groups::single(st, creds, base, gid);
            }
            return library(st, creds, LibraryId::Group(gid), (base, req, body), rest);
        }
        _ => {}
    }
    Answer::text(404, "Not found")
}

/// A request below a library's prefix, with the key's access to it checked.
fn library(
    st: &mut State,
    creds: Creds,
    lib: LibraryId,
    (base, req, body): (&str, &Recorded, &[u8]),
    rest: &[&str],
) -> Answer {
    let is_read = req.method == "GET" || req.method == "HEAD";
    let readable = st.can(creds, lib, Perm::Library);
    if !is_read && !st.can_write(creds, lib) {
        return Answer::text(403, "Write access denied");
    }
    if let ["items", key, "file", ..] = rest {
        if !readable {
            // No access to the item: the server does not say it exists.
            return Answer::text(404, "Not found");
        }
        let rights = file_rights(st, creds, lib);
        return files::file_request(st, lib, (base, req, body), key, rights);
    }
    if is_read && !readable {
        // A single item the key cannot see does not exist; listings are refused.
        let single_item = matches!(rest, ["items", k] if !matches!(*k, "top" | "trash"));
        return if single_item {
            Answer::text(404, "Not found")
        } else {
            Answer::text(403, "Forbidden")
        };
    }
    let vis = st.visible(creds, lib);
    if !is_read {
        return library_write(st, (lib, vis), base, req, body, rest);
    }
    reads::library_read(&st.libs[&lib], vis, base, req, rest)
}

/// What the key may do with a library's files (`ItemsController::_handleFileRequest`).
fn file_rights(st: &State, creds: Creds, lib: LibraryId) -> FileRights {
    match lib {
        LibraryId::User(_) => FileRights {
            edit: true,
            hide_downloads: false,
        },
        LibraryId::Group(gid) => {
            let g = &st.groups[&gid].spec;
            let files = st.can(creds, lib, Perm::Files);
            FileRights {
                edit: g.can_edit_files(st.role(gid)),
                hide_downloads: g.group_type == super::GroupType::PublicClosed && !files,
            }
        }
    }
}

fn library_write(
    st: &mut State,
    (lib, vis): (LibraryId, super::library::Visible),
    base: &str,
    req: &Recorded,
    body: &[u8],
    rest: &[&str],
) -> Answer {
    match (req.method.as_str(), rest) {
        ("POST", ["items"]) => writes::create_items(st, (lib, vis), base, req, body),
        ("PUT" | "PATCH" | "DELETE", ["items", key]) => {
            writes::write_single(st, lib, req, body, key)
        }
        ("DELETE", ["items"]) => writes::delete_items(st.libs.get_mut(&lib).unwrap(), req),
        ("POST", ["collections"]) => collwrites::post_collections(st, lib, base, req, body),
        ("DELETE", ["collections"]) => {
            collwrites::delete_collections(st.libs.get_mut(&lib).unwrap(), req)
        }
        ("PUT" | "PATCH" | "DELETE", ["collections", key]) => {
            collwrites::write_single(st, lib, req, body, key)
        }
        ("DELETE", ["tags"]) => collwrites::delete_tags(st.libs.get_mut(&lib).unwrap(), req),
        ("POST", ["collections", key, "items"]) => {
            writes::add_to_collection(st.libs.get_mut(&lib).unwrap(), body, key)
        }
        (_, ["items" | "collections", _] | ["items" | "collections" | "tags"]) => {
            Answer::text(405, "Method not allowed")
        }
        _ => Answer::text(501, "The emulator does not implement this write"),
    }
}
