//! Library-wide tag changes (`zotero_manage_tags`): rename a tag or delete it on every item
//! that carries it.
//!
//! The items are found with the item search's `tag` filter over the whole library
//! (`/items`: child notes, attachments and annotations too; `includeTrashed=1`;
//! `format=versions`, which has no page limit). That filter compares names
//! case-insensitively (`Zotero_Tags::getIDs(…, true)` in `Zotero_Items::search`), so it
//! finds a superset; reading the items (50 a request) keeps those carrying the exact name.
//!
//! A rename goes through the edit engine (`edit.rs`): each item is rewritten with the
//! version it was read at, 50 a `POST`, and merged with what Zotero changed meanwhile (Zotero
//! has no rename endpoint). A delete is one `DELETE /tags?tag=…` checked against the library
//! version the items were counted at (`TagsController`: `If-Unmodified-Since-Version`
//! required, `412` when the library changed since); Zotero removes the tag of either type
//! from every item and gives each of them a new version (`ClassicDataObjects::delete`,
//! `Zotero_Items::updateVersions`).

use hyper::header::HeaderValue;
use std::collections::BTreeMap;
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::edit::{Edit, EditOutcome, EditProgress, EditStatus, ObjectKind};
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::items::literal_tag;
use crate::library::ObjectKey;
use crate::response::{encode_query, next_start_from_link, parse_json, unexpected};
use crate::write::MAX_VERSION_RETRIES;

/// What to do with the tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TagChange {
    /// Rename it to this (trimmed) name.
    Rename(String),
    Delete,
}

/// Why Zotero cannot be asked about this tag name, if it cannot: the item search splits a
/// filter on `||` between spaces (`getSearchParamValues`: `/\s+\|\|\s+/`; `DELETE /tags`
/// splits on ` || `), and reads a leading `\-` as an escaped `-` with no way to escape the
/// backslash itself.
pub fn unsearchable(tag: &str) -> Option<&'static str> {
    let tag = tag.trim();
    let spaced_or = tag.match_indices("||").any(|(at, _)| {
        let before = tag.get(..at).and_then(|s| s.chars().next_back());
        let after = tag.get(at + 2..).and_then(|s| s.chars().next());
        before.is_some_and(char::is_whitespace) && after.is_some_and(char::is_whitespace)
    });
    if spaced_or {
        Some(
            "contains '||' between spaces, which Zotero's web API reads as OR between two \
             tags: it cannot find or delete this tag by name; rename or delete it in the \
             Zotero app",
        )
    } else if tag.starts_with("\\-") {
        Some(
            "starts with '\\-', which Zotero's web API reads as an escaped '-': it cannot find \
             this tag by name; rename or delete it in the Zotero app",
        )
    } else {
        None
    }
}

/// The items a tag change would touch, read just now.
#[derive(Debug, Clone)]
pub struct TagPlan {
    /// The tag, trimmed as Zotero stores tags.
    pub tag: String,
    pub change: TagChange,
    /// The library's version when the items were found.
    pub library_version: u64,
    /// Each item carrying the tag (exactly, of either type), trashed ones included: what
    /// the change would do to it (`WouldChange`, with its tags before → after).
    pub carriers: Vec<EditOutcome>,
}

/// A deleted tag: the items that carried it, each `Changed`.
#[derive(Debug, Clone)]
pub struct TagDeletion {
    pub carriers: Vec<EditOutcome>,
}

impl TagChange {
    fn edit(&self, tag: &str, key: ObjectKey) -> Edit {
        let mut e = Edit::new(key);
        match self {
            TagChange::Rename(to) => e.tags.rename.push((tag.to_string(), to.clone())),
            TagChange::Delete => e.tags.remove.push(tag.to_string()),
        }
        e
    }
}

impl Library<'_> {
    /// Every item the `tag` filter finds (any case), trashed ones and child items included,
    /// and the library version of the answer.
    async fn items_tagged(
        &self,
        tag: &str,
        cancel: &CancellationToken,
    ) -> Result<(Vec<ObjectKey>, u64), ZoteroError> {
        let filter = literal_tag(tag);
        let mut keys = Vec::new();
        let mut version = None;
        let mut start = 0u64;
        let mut restarts = 0;
        loop {
            let start_text = start.to_string();
            let mut query = vec![
                ("tag", filter.as_str()),
                ("includeTrashed", "1"),
                ("format", "versions"),
            ];
            if start > 0 {
                query.push(("start", &start_text));
            }
            let req = ApiRequest::get(format!("/items?{}", encode_query(&query))).fresh();
            let resp = self.send(&req, cancel).await?;
            if resp.status != 200 {
                return Err(unexpected(&resp, &format!("find the items tagged '{tag}'")));
            }
            let page: BTreeMap<String, u64> = parse_json(&resp)?;
            let page_version = resp
                .header("last-modified-version")
                .and_then(|v| v.trim().parse::<u64>().ok());
            // Pages read at different versions are not one listing: start again.
            if version.is_some() && page_version != version {
                restarts += 1;
                if restarts >= MAX_VERSION_RETRIES {
                    return Err(ZoteroError::KeptChanging {
                        what: "the library".into(),
                        attempts: MAX_VERSION_RETRIES,
                    });
                }
                keys.clear();
                version = None;
                start = 0;
                continue;
            }
            version = page_version;
            keys.extend(page.keys().filter_map(|k| ObjectKey::parse(k).ok()));
            match resp.header("link").and_then(next_start_from_link) {
                Some(next) if next > start && !page.is_empty() => start = next,
                _ => break,
            }
        }
        let version = version.ok_or_else(|| ZoteroError::BadResponse {
            reason: "the item listing had no Last-Modified-Version".into(),
            status: 200,
        })?;
        Ok((keys, version))
    }

    /// Finds the items carrying `tag` (exactly) and what `change` would do to each, writing
    /// nothing. Refused when the key may not write here.
    pub async fn plan_tag_change(
        &self,
        tag: &str,
        change: TagChange,
        cancel: &CancellationToken,
    ) -> Result<TagPlan, ZoteroError> {
        self.require_write(false, cancel).await?;
        let tag = tag.trim().to_string();
        let (keys, library_version) = self.items_tagged(&tag, cancel).await?;
        let edits: Vec<Edit> = keys.into_iter().map(|k| change.edit(&tag, k)).collect();
        let outcomes = self
            .edit_objects(ObjectKind::Item, edits, true, cancel, None)
            .await?;
        let carriers = outcomes
            .into_iter()
            .filter(|o| o.status == EditStatus::WouldChange)
            .collect();
        Ok(TagPlan {
            tag,
            change,
            library_version,
            carriers,
        })
    }

    /// Renames the tag on the plan's items: each rewritten with the version it is read at
    /// now, 50 a request, merged with changes made in Zotero meanwhile; an item that no
    /// longer carries the tag is left alone (`Unchanged`). One outcome per item.
    pub async fn rename_tag(
        &self,
        plan: &TagPlan,
        cancel: &CancellationToken,
        progress: Option<EditProgress<'_>>,
    ) -> Result<Vec<EditOutcome>, ZoteroError> {
        let edits: Vec<Edit> = plan
            .carriers
            .iter()
            .map(|o| plan.change.edit(&plan.tag, o.key.clone()))
            .collect();
        self.edit_objects(ObjectKind::Item, edits, false, cancel, progress)
            .await
    }

    /// Deletes the tag (`DELETE /tags`) if the library is still as the plan read it; when it
    /// changed, the items are found again and the delete is sent with the new version.
    /// Nothing is sent for a tag no item carries. Once sent, a delete is not abandoned on
    /// cancellation: its answer (or a read after a lost one) says what happened.
    pub async fn delete_tag(
        &self,
        plan: TagPlan,
        cancel: &CancellationToken,
    ) -> Result<TagDeletion, ZoteroError> {
        let mut plan = plan;
        // The carriers when a delete of ours may have landed without our seeing its answer.
        let mut sent_unseen: Option<Vec<EditOutcome>> = None;
        for _ in 0..MAX_VERSION_RETRIES {
            if plan.carriers.is_empty() {
                return Ok(TagDeletion {
                    carriers: sent_unseen.unwrap_or_default(),
                });
            }
            if cancel.is_cancelled() {
                return Err(ZoteroError::Cancelled);
            }
            let query = encode_query(&[("tag", plan.tag.as_str())]);
            let req = ApiRequest::delete(format!("/tags?{query}"))
                .header(
                    "if-unmodified-since-version",
                    HeaderValue::from(plan.library_version),
                )
                // A repeat of a delete that landed meets a newer library version (412), and
                // the items are read again.
                .repeatable(true);
            let uncancelled = CancellationToken::new();
            match self.send(&req, &uncancelled).await {
                Ok(resp) if resp.status == 204 => {
                    let version = resp
                        .header("last-modified-version")
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    return Ok(TagDeletion {
                        carriers: changed(plan.carriers, version),
                    });
                }
                Ok(resp) if resp.status == 412 => {
                    if resp.retries > 0 {
                        sent_unseen = Some(changed(plan.carriers.clone(), None));
                    }
                    tracing::info!(
                        "the library changed since the tag's items were read; reading them again"
                    );
                }
                Ok(resp) => {
                    return Err(unexpected(&resp, &format!("delete the tag '{}'", plan.tag)))
                }
                Err(e @ (ZoteroError::Network { .. } | ZoteroError::Timeout { .. })) => {
                    tracing::info!(error = %e, "the tag delete's answer was lost; reading the items again");
                    sent_unseen = Some(changed(plan.carriers.clone(), None));
                }
                Err(e) => return Err(e),
            }
            // After a delete that may have landed, the read must finish to say so.
            let reading = if sent_unseen.is_some() {
                &uncancelled
            } else {
                cancel
            };
            let again = match self
                .plan_tag_change(&plan.tag, TagChange::Delete, reading)
                .await
            {
                Ok(p) => p,
                Err(e) if sent_unseen.is_some() => {
                    return Err(ZoteroError::Status {
                        message: format!(
                            "the answer to deleting the tag '{}' was lost and reading the items again failed too ({e}): it may or may not have been deleted; list the tag with zotero_list_tags to see",
                            plan.tag
                        ),
                        answer: Default::default(),
                    })
                }
                Err(e) => return Err(e),
            };
            if !again.carriers.is_empty() {
                // Still there: an unseen delete did not land (it is all or nothing).
                sent_unseen = None;
            }
            plan = again;
        }
        Err(ZoteroError::KeptChanging {
            what: "the library".into(),
            attempts: MAX_VERSION_RETRIES,
        })
    }
}

/// The planned outcomes as done: each item changed, at `version` (the library's new one,
/// which Zotero gives each of them) when known.
fn changed(carriers: Vec<EditOutcome>, version: Option<u64>) -> Vec<EditOutcome> {
    carriers
        .into_iter()
        .map(|o| EditOutcome {
            status: EditStatus::Changed,
            version,
            data: None,
            ..o
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_web_api_cannot_filter_by_are_told_apart() {
        assert!(unsearchable("a || b").is_some());
        assert!(unsearchable("a\t||  b").is_some());
        assert!(unsearchable("  \\-x").is_some());
        assert!(unsearchable("a||b").is_none());
        assert!(unsearchable("a ||b").is_none());
        assert!(unsearchable("-x").is_none());
        assert!(unsearchable("||").is_none());
    }
}
