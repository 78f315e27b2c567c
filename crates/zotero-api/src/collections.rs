//! Collection membership: find a collection by key or by name (over every page), and add an
//! item to it by PATCHing the item's `collections`, checked against the item's version
//! (removing goes through the edit engine, `edit.rs`).

use hyper::header::HeaderValue;
use hyper::Method;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::error::ZoteroError;
use super::http::ApiRequest;
use super::model::{Collection, WireObject};
use super::write::MAX_VERSION_RETRIES;
use crate::client::Library;
use crate::library::ObjectKey;
use crate::response::{all_pages, unexpected};

/// Which collection the caller means.
#[derive(Debug, Clone)]
pub enum CollectionRef {
    Key(ObjectKey),
    Name(String),
}

#[derive(Debug, Clone)]
pub struct Membership {
    pub collection_key: String,
    /// The item was in the collection before this call wrote anything, so nothing was
    /// written. `false` when this call added it, also when the answer to its write was lost
    /// and reading the item back showed the membership.
    pub already_member: bool,
}

impl Library<'_> {
    /// Adds an item to a collection by PATCHing the item's `collections`, checked against
    /// the item's version; a member already is left alone.
    pub async fn add_to_collection(
        &self,
        item_key: &ObjectKey,
        target: &CollectionRef,
        cancel: &CancellationToken,
    ) -> Result<Membership, ZoteroError> {
        self.require_write(false, cancel).await?;
        let collection_key = self.resolve_collection(target, cancel).await?;
        // Set once a PATCH of ours may have landed without our seeing its answer: from then
        // on, a membership the item shows is this call's doing, not a prior state.
        let mut maybe_written = false;
        for _ in 0..MAX_VERSION_RETRIES {
            let Some(wire) = self.fetch_item(item_key, cancel).await? else {
                return Err(ZoteroError::NotFound {
                    message: format!("no item with key {item_key} in this library"),
                });
            };
            if is_member(&wire, &collection_key) {
                return Ok(Membership {
                    collection_key,
                    already_member: !maybe_written,
                });
            }
            let mut collections: Vec<Value> = wire
                .data
                .get("collections")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            collections.push(Value::from(collection_key.clone()));
            let body = serde_json::to_vec(&json!({ "collections": collections })).map_err(|e| {
                ZoteroError::InvalidRequest {
                    reason: e.to_string(),
                }
            })?;
            let req = ApiRequest::with_body(
                Method::PATCH,
                format!("/items/{item_key}"),
                "application/json",
                body,
            )
            .header(
                "if-unmodified-since-version",
                HeaderValue::from(wire.version()),
            )
            // Safe to repeat: a repeat after a lost answer meets a newer version (412), and
            // the next read shows the membership.
            .repeatable(true);
            let resp = match self.send(&req, cancel).await {
                Ok(resp) => resp,
                Err(cause @ (ZoteroError::Network { .. } | ZoteroError::Timeout { .. })) => {
                    // Every answer was lost, but the first attempt may have landed: the
                    // item says what happened.
                    return match self.fetch_item(item_key, cancel).await {
                        Ok(Some(wire)) if is_member(&wire, &collection_key) => Ok(Membership {
                            collection_key,
                            already_member: false,
                        }),
                        _ => Err(cause),
                    };
                }
                Err(e) => return Err(e),
            };
            match resp.status {
                204 => {
                    return Ok(Membership {
                        collection_key,
                        already_member: false,
                    })
                }
                412 => {
                    // A 412 to a repeat may be our own earlier attempt having landed.
                    maybe_written |= resp.retries > 0;
                    tracing::info!("item changed since it was read; reading it again");
                }
                _ => {
                    return Err(unexpected(
                        &resp,
                        &format!("add item {item_key} to collection {collection_key}"),
                    ))
                }
            }
        }
        Err(ZoteroError::KeptChanging {
            what: format!("item {item_key}"),
            attempts: MAX_VERSION_RETRIES,
        })
    }

    /// The key of the collection `target` means, as the library is now: a key that exists,
    /// or the one collection with that name (case-insensitive, exact; several or none is an
    /// error naming them, or the closest names).
    pub async fn resolve_collection(
        &self,
        target: &CollectionRef,
        cancel: &CancellationToken,
    ) -> Result<String, ZoteroError> {
        match target {
            CollectionRef::Key(key) => {
                self.collection(key, cancel).await?;
                Ok(key.to_string())
            }
            CollectionRef::Name(name) => self.collection_by_name(name, cancel).await,
        }
    }

    async fn collection(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Collection, ZoteroError> {
        // The collection decides what is written: as it is now, not a lagging copy.
        let req = ApiRequest::get(format!("/collections/{key}")).fresh();
        let resp = self.send(&req, cancel).await?;
        match resp.status {
            200 => Ok(crate::response::parse_json::<WireObject>(&resp)?.to_collection()),
            404 => Err(ZoteroError::NotFound {
                message: format!(
                    "no collection with key {key} in this library; list them with zotero_list_collections"
                ),
            }),
            _ => Err(unexpected(&resp, &format!("read collection {key}"))),
        }
    }

    /// Every collection of the library as it is now (a name decides what is written), all
    /// pages.
    async fn all_collections(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<Collection>, ZoteroError> {
        all_pages(|start| self.collections_page(100, start, true, cancel)).await
    }

    /// The key of the one collection with this name (case-insensitive, exact).
    async fn collection_by_name(
        &self,
        name: &str,
        cancel: &CancellationToken,
    ) -> Result<String, ZoteroError> {
        let all = self.all_collections(cancel).await?;
        let wanted = name.trim().to_lowercase();
        let mut matches: Vec<Collection> = all
            .iter()
            .filter(|c| c.name.trim().to_lowercase() == wanted)
            .cloned()
            .collect();
        match matches.len() {
            1 => Ok(matches.remove(0).collection_key),
            0 => {
                // The suggestion grows with the library (every name is compared): it runs on
                // a blocking thread, so a big library never stalls other requests.
                let closest = tokio::task::spawn_blocking(move || closest_names(&wanted, &all))
                    .await
                    .unwrap_or_default();
                Err(ZoteroError::CollectionNotFound {
                    name: name.to_string(),
                    closest,
                })
            }
            _ => Err(ZoteroError::AmbiguousCollection {
                name: name.to_string(),
                candidates: matches,
            }),
        }
    }
}

/// How many leading characters of two names the edit distance compares: enough to rank
/// suggestions, and it keeps each comparison at most `DISTANCE_CHARS`² steps.
const DISTANCE_CHARS: usize = 64;

/// The first [`DISTANCE_CHARS`] characters of `s`.
fn head(s: &str) -> &str {
    match s.char_indices().nth(DISTANCE_CHARS) {
        Some((at, _)) => s.get(..at).unwrap_or(s),
        None => s,
    }
}

/// Whether the item lists the collection among its `collections`.
fn is_member(item: &WireObject, collection_key: &str) -> bool {
    item.data
        .get("collections")
        .and_then(Value::as_array)
        .is_some_and(|c| c.iter().any(|k| k.as_str() == Some(collection_key)))
}

/// Up to three collection names closest to `wanted` (lower case): names containing it
/// first, then by edit distance over their first characters. Linear in the number of
/// collections, bounded per collection.
fn closest_names(wanted: &str, all: &[Collection]) -> Vec<String> {
    let mut scored: Vec<(usize, &str)> = all
        .iter()
        .map(|c| {
            let lower = c.name.to_lowercase();
            let contains = lower.contains(wanted) || wanted.contains(lower.as_str());
            let distance = edit_distance(head(wanted), head(&lower));
            (if contains { 0 } else { 1 + distance }, c.name.as_str())
        })
        .collect();
    scored.sort();
    let mut out: Vec<String> = Vec::new();
    for (_, name) in scored {
        if !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = Vec::with_capacity(b.len() + 1);
        cur.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let sub = prev.get(j).copied().unwrap_or(0) + usize::from(ca != *cb);
            let del = prev.get(j + 1).copied().unwrap_or(0) + 1;
            let ins = cur.get(j).copied().unwrap_or(0) + 1;
            cur.push(sub.min(del).min(ins));
        }
        prev = cur;
    }
    prev.last().copied().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_names_prefer_containment_then_distance() {
        let c = |name: &str| Collection {
            collection_key: "AAAAAAAA".into(),
            name: name.into(),
            parent_key: None,
            version: 1,
            num_items: None,
            in_trash: false,
        };
        let all = [
            c("Transformers"),
            c("Reading List"),
            c("Reinforcement"),
            c("Biology"),
        ];
        assert_eq!(
            closest_names("reading", &all),
            vec!["Reading List", "Biology", "Reinforcement"]
        );
        assert_eq!(closest_names("transfomers", &all)[0], "Transformers");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
