//! Writing collections: create one exactly once and never beside a sibling of the same name,
//! rename or move one through the edit engine (a change made in Zotero meanwhile is merged,
//! or named with both values), and delete one with its subcollections, version-checked.
//!
//! What the Web API does (zotero/dataserver): `GET /collections` (and `/top`,
//! `/{key}/collections`) lists collections in Zotero's trash too, with `deleted: true` in
//! their data (`Zotero_Collections::search` has no trash condition); `DELETE
//! /collections/{key}` removes the collection for good, not to the trash, and its
//! subcollections with it (`ON DELETE CASCADE`); the items stay, minus the membership.

use std::collections::HashSet;

use hyper::header::HeaderValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::edit::{Edit, EditOutcome, EditStatus, ObjectKind};
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::library::ObjectKey;
use crate::model::Collection;
use crate::response::{all_pages, parse_json, parse_page, unexpected};
use crate::write::MAX_VERSION_RETRIES;

/// Whether two collection names are the same for a person: trimmed, in any case.
pub fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim(), b.trim());
    a == b || a.to_lowercase() == b.to_lowercase()
}

/// Every collection of a library as read at one moment, trashed ones included.
#[derive(Debug, Clone, Default)]
pub struct CollectionSet {
    all: Vec<Collection>,
}

impl CollectionSet {
    pub fn new(all: Vec<Collection>) -> Self {
        Self { all }
    }

    pub fn get(&self, key: &str) -> Option<&Collection> {
        self.all.iter().find(|c| c.collection_key == key)
    }

    /// The collections right under `parent` (the top level for `None`).
    pub fn children<'a>(&'a self, parent: Option<&'a str>) -> impl Iterator<Item = &'a Collection> {
        self.all
            .iter()
            .filter(move |c| c.parent_key.as_deref() == parent)
    }

    /// Everything below `key`: its subcollections, theirs, …, breadth first, each once
    /// (a cycle, which Zotero should never have, ends the walk).
    pub fn descendants<'a>(&'a self, key: &'a str) -> Vec<&'a Collection> {
        let mut seen: HashSet<&str> = HashSet::from([key]);
        let mut out: Vec<&Collection> = Vec::new();
        let mut next = 0;
        let mut level: Vec<&str> = vec![key];
        while let Some(parent) = level.get(next).copied() {
            next += 1;
            for c in self.children(Some(parent)) {
                if seen.insert(c.collection_key.as_str()) {
                    out.push(c);
                    level.push(c.collection_key.as_str());
                }
            }
        }
        out
    }
}

/// Collections among `siblings` named `name` (trimmed, any case), other than `except`:
/// (those in use, those in Zotero's trash). The one spelled exactly alike comes first, then
/// the oldest version.
pub fn namesakes<'a>(
    siblings: impl IntoIterator<Item = &'a Collection>,
    name: &str,
    except: Option<&str>,
) -> (Vec<&'a Collection>, Vec<&'a Collection>) {
    let mut found: Vec<&Collection> = siblings
        .into_iter()
        .filter(|c| same_name(&c.name, name) && Some(c.collection_key.as_str()) != except)
        .collect();
    found.sort_by_key(|c| (c.name.trim() != name.trim(), c.version));
    found.into_iter().partition(|c| !c.in_trash)
}

/// Why a collection write was refused before anything was written.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// No collection with this key (the one to change).
    NotFound(String),
    /// No collection with the key given as the parent.
    ParentNotFound(String),
    /// The parent given is in Zotero's trash.
    ParentInTrash(Collection),
    /// A move under the collection itself.
    IntoItself,
    /// A move under one of the collection's own subcollections.
    IntoDescendant(Collection),
    /// A sibling at the destination already has the name.
    NameTaken(Collection),
}

/// What a create did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    Created,
    /// A sibling had the name already: it is the answer, nothing was written.
    AlreadyExisted,
    /// Dry run: it would be created.
    WouldCreate,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CollectionCreate {
    pub status: Created,
    /// The collection created, or the sibling found (`None` when it would be created).
    pub collection: Option<Collection>,
    /// Siblings of the same name in Zotero's trash: not reused.
    pub in_trash: Vec<Collection>,
}

/// A rename and/or a move.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectionChange {
    pub name: Option<String>,
    /// `Some(None)`: to the top level.
    pub parent: Option<Option<ObjectKey>>,
}

/// A collection to delete, as read just before.
#[derive(Debug, Clone, PartialEq)]
pub struct DeletePlan {
    pub key: ObjectKey,
    /// With the version the delete is checked against.
    pub collection: Collection,
    /// Everything below it, deleted with it.
    pub subcollections: Vec<Collection>,
}

impl DeletePlan {
    fn of(key: &ObjectKey, all: &CollectionSet) -> Option<Self> {
        all.get(key.as_str()).map(|c| DeletePlan {
            key: key.clone(),
            collection: c.clone(),
            subcollections: all.descendants(key.as_str()).into_iter().cloned().collect(),
        })
    }

    /// Items filed in the collection and its subcollections, by Zotero's counts (an item
    /// filed in two of them counts twice; items in the trash do not count).
    pub fn items_filed(&self) -> u64 {
        std::iter::once(&self.collection)
            .chain(&self.subcollections)
            .filter_map(|c| c.num_items)
            .sum()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CollectionDeleted {
    /// What was deleted, as read just before the delete that landed.
    pub plan: DeletePlan,
    /// Deleted by someone else after it was read: this call wrote nothing.
    pub already_gone: bool,
}

impl Library<'_> {
    /// Every collection of the library as it is now (trashed ones too), all pages.
    pub async fn collections_now(
        &self,
        cancel: &CancellationToken,
    ) -> Result<CollectionSet, ZoteroError> {
        let all = all_pages(|start| self.collections_page(100, start, true, cancel)).await?;
        Ok(CollectionSet::new(all))
    }

    /// The collections right under `parent` (the top level for `None`) as they are now,
    /// trashed ones too, all pages.
    async fn siblings_now(
        &self,
        parent: Option<&ObjectKey>,
        cancel: &CancellationToken,
    ) -> Result<Vec<Collection>, ZoteroError> {
        let path = match parent {
            Some(p) => format!("/collections/{p}/collections"),
            None => "/collections/top".to_string(),
        };
        all_pages(|start| {
            let req =
                ApiRequest::get(format!("{path}?format=json&limit=100&start={start}")).fresh();
            async move {
                let resp = self.send(&req, cancel).await?;
                parse_page(&resp, "list collections", |w| w.to_collection())
            }
        })
        .await
    }

    /// One collection as it is now, `None` when there is none with the key.
    pub async fn collection_now(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Option<Collection>, ZoteroError> {
        Ok(self
            .fetch_object(ObjectKind::Collection, key, cancel)
            .await?
            .map(|w| w.to_collection()))
    }

    /// Creates a collection named `name` (trimmed) under `parent` (top level for `None`),
    /// exactly once; a sibling of the same name in any case that is not in the trash is
    /// answered instead. With `dry_run`, says what it would do.
    pub async fn create_collection(
        &self,
        name: &str,
        parent: Option<&ObjectKey>,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> Result<Result<CollectionCreate, Refusal>, ZoteroError> {
        self.require_write(false, cancel).await?;
        let name = name.trim();
        if let Some(p) = parent {
            match self.collection_now(p, cancel).await? {
                None => return Ok(Err(Refusal::ParentNotFound(p.to_string()))),
                Some(c) if c.in_trash => return Ok(Err(Refusal::ParentInTrash(c))),
                Some(_) => {}
            }
        }
        let siblings = self.siblings_now(parent, cancel).await?;
        let (in_use, trashed) = namesakes(&siblings, name, None);
        let in_trash: Vec<Collection> = trashed.into_iter().cloned().collect();
        if let Some(existing) = in_use.first() {
            return Ok(Ok(CollectionCreate {
                status: Created::AlreadyExisted,
                collection: Some((*existing).clone()),
                in_trash,
            }));
        }
        if dry_run {
            return Ok(Ok(CollectionCreate {
                status: Created::WouldCreate,
                collection: None,
                in_trash,
            }));
        }
        let mut object = Map::new();
        object.insert("name".into(), Value::from(name));
        object.insert(
            "parentCollection".into(),
            parent.map_or(Value::Bool(false), |p| Value::from(p.as_str())),
        );
        let wire = self
            .create_object_of(ObjectKind::Collection, object, cancel)
            .await?;
        Ok(Ok(CollectionCreate {
            status: Created::Created,
            collection: Some(wire.to_collection()),
            in_trash,
        }))
    }

    /// Renames and/or moves a collection through the edit engine (version-checked, merged
    /// with changes made in Zotero meanwhile). Refused before writing: a move under itself
    /// or its own subcollection or under a collection in the trash, and a name a sibling at
    /// the destination has (in any case, trashed siblings aside).
    pub async fn update_collection(
        &self,
        key: &ObjectKey,
        change: &CollectionChange,
        dry_run: bool,
        cancel: &CancellationToken,
    ) -> Result<Result<EditOutcome, Refusal>, ZoteroError> {
        self.require_write(false, cancel).await?;
        let all = self.collections_now(cancel).await?;
        if let Err(refusal) = check_change(&all, key, change) {
            return Ok(Err(refusal));
        }
        let mut edit = Edit::new(key.clone());
        if let Some(name) = &change.name {
            edit.set.insert("name".into(), Value::from(name.trim()));
        }
        if let Some(parent) = &change.parent {
            let value = parent
                .as_ref()
                .map_or(Value::Bool(false), |p| Value::from(p.as_str()));
            edit.set.insert("parentCollection".into(), value);
        }
        let outcome = self
            .edit_objects(ObjectKind::Collection, vec![edit], dry_run, cancel, None)
            .await?
            .pop();
        Ok(Ok(outcome.unwrap_or_else(|| EditOutcome {
            key: key.clone(),
            status: EditStatus::NotAttempted,
            version: None,
            changes: Vec::new(),
            data: None,
        })))
    }

    /// The collection to delete and everything below it, as they are now; `None` when
    /// there is no collection with the key.
    pub async fn plan_collection_delete(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<Option<DeletePlan>, ZoteroError> {
        self.require_write(false, cancel).await?;
        let all = self.collections_now(cancel).await?;
        Ok(DeletePlan::of(key, &all))
    }

    /// Whether Zotero's delete log has a collection deleted under this key (any time).
    pub async fn collection_was_deleted(
        &self,
        key: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<bool, ZoteroError> {
        let req = ApiRequest::get("/deleted?since=0").fresh();
        let resp = self.send(&req, cancel).await?;
        if resp.status != 200 {
            return Err(unexpected(&resp, "read the delete log"));
        }
        let log: Value = parse_json(&resp)?;
        Ok(log
            .get("collections")
            .and_then(Value::as_array)
            .is_some_and(|keys| keys.iter().any(|k| k.as_str() == Some(key.as_str()))))
    }

    /// Deletes the planned collection (and, as Zotero does, everything below it) with
    /// `If-Unmodified-Since-Version`, read again first (the plan may be as old as the user's
    /// answer to a question). On `412` the collection is read again and deleted at its new
    /// version: a rename or a move made meanwhile does not keep it, and subcollections added
    /// meanwhile go with it (the answer lists them). An answer that was lost is settled by
    /// reading the collection again.
    pub async fn delete_collection(
        &self,
        mut plan: DeletePlan,
        cancel: &CancellationToken,
    ) -> Result<CollectionDeleted, ZoteroError> {
        let key = plan.key.clone();
        match DeletePlan::of(&key, &self.collections_now(cancel).await?) {
            Some(now) => plan = now,
            None => {
                return Ok(CollectionDeleted {
                    plan,
                    already_gone: true,
                })
            }
        }
        // Set once a DELETE of ours may have landed without our seeing its answer.
        let mut maybe_landed = false;
        for _ in 0..MAX_VERSION_RETRIES {
            let req = ApiRequest::delete(format!("/collections/{key}"))
                .header(
                    "if-unmodified-since-version",
                    HeaderValue::from(plan.collection.version),
                )
                // Safe to repeat: a repeat of a delete that landed meets 412 (the collection
                // is gone), and the collection is read again.
                .repeatable(true);
            let resp = match self.send(&req, cancel).await {
                Ok(resp) => resp,
                // Refused before anything was deleted.
                Err(e) if e.nothing_written() => return Err(e),
                // Lost, cancelled or refused after a repeat: the collection says what
                // happened (read even when the call was cancelled).
                Err(cause) => {
                    return match self.collection_now(&key, &CancellationToken::new()).await {
                        Ok(None) => Ok(CollectionDeleted {
                            plan,
                            already_gone: false,
                        }),
                        Ok(Some(_)) => Err(cause),
                        Err(e) => Err(ZoteroError::Status {
                            message: format!(
                                "could not tell whether collection {key} was deleted: {cause}; reading it afterwards failed too: {e}. List collections before trying again"
                            ),
                            answer: Default::default(),
                        }),
                    };
                }
            };
            maybe_landed |= resp.retries > 0;
            match resp.status {
                204 => {
                    return Ok(CollectionDeleted {
                        plan,
                        already_gone: false,
                    })
                }
                404 => {
                    return Ok(CollectionDeleted {
                        plan,
                        already_gone: !maybe_landed,
                    })
                }
                412 => {
                    tracing::info!("collection changed since it was read; reading it again");
                    let all = self.collections_now(&CancellationToken::new()).await?;
                    match DeletePlan::of(&key, &all) {
                        Some(now) => plan = now,
                        None => {
                            return Ok(CollectionDeleted {
                                plan,
                                already_gone: !maybe_landed,
                            })
                        }
                    }
                    if cancel.is_cancelled() {
                        return Err(ZoteroError::Cancelled);
                    }
                }
                _ => return Err(unexpected(&resp, &format!("delete collection {key}"))),
            }
        }
        Err(ZoteroError::KeptChanging {
            what: format!("collection {key}"),
            attempts: MAX_VERSION_RETRIES,
        })
    }
}

/// Whether `change` may be made to collection `key` in `all` (see
/// [`Library::update_collection`]).
pub fn check_change(
    all: &CollectionSet,
    key: &ObjectKey,
    change: &CollectionChange,
) -> Result<(), Refusal> {
    let Some(me) = all.get(key.as_str()) else {
        return Err(Refusal::NotFound(key.to_string()));
    };
    let destination: Option<String> = match &change.parent {
        Some(Some(p)) => {
            if p == key {
                return Err(Refusal::IntoItself);
            }
            let Some(parent) = all.get(p.as_str()) else {
                return Err(Refusal::ParentNotFound(p.to_string()));
            };
            if all
                .descendants(key.as_str())
                .iter()
                .any(|d| d.collection_key == p.as_str())
            {
                return Err(Refusal::IntoDescendant(parent.clone()));
            }
            if parent.in_trash {
                return Err(Refusal::ParentInTrash(parent.clone()));
            }
            Some(p.to_string())
        }
        Some(None) => None,
        None => me.parent_key.clone(),
    };
    let name = change.name.as_deref().unwrap_or(&me.name);
    let (in_use, _) = namesakes(
        all.children(destination.as_deref()),
        name,
        Some(key.as_str()),
    );
    match in_use.first() {
        Some(sibling) => Err(Refusal::NameTaken((*sibling).clone())),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(key: &str, name: &str, parent: Option<&str>) -> Collection {
        Collection {
            collection_key: key.into(),
            name: name.into(),
            parent_key: parent.map(str::to_string),
            version: 1,
            num_items: Some(2),
            in_trash: false,
        }
    }

    fn key(k: &str) -> ObjectKey {
        ObjectKey::parse(k).unwrap()
    }

    fn library() -> CollectionSet {
        let mut trashed = c("TRASHED2", "Old", None);
        trashed.in_trash = true;
        CollectionSet::new(vec![
            c("TPRAAAA2", "Reading", None),
            c("SUBAAAA2", "Papers", Some("TPRAAAA2")),
            c("SUBBBBB2", "Notes", Some("TPRAAAA2")),
            c("DEEPAAA2", "Deep", Some("SUBAAAA2")),
            c("THRAAAA2", "Other", None),
            c("THSUBAA2", "papers", Some("THRAAAA2")),
            trashed,
        ])
    }

    #[test]
    fn names_compare_trimmed_in_any_case() {
        assert!(same_name(" Reading List ", "reading list"));
        assert!(same_name("Ärzte", "ärzte"));
        assert!(!same_name("Reading", "Readings"));
        let all = library();
        let (in_use, trashed) = namesakes(all.children(None), "OLD", None);
        assert!(in_use.is_empty());
        assert_eq!(trashed[0].collection_key, "TRASHED2");
        let (in_use, _) = namesakes(all.children(None), "reading", Some("TPRAAAA2"));
        assert!(in_use.is_empty(), "a collection is not its own namesake");
    }

    #[test]
    fn descendants_are_every_level_below() {
        let all = library();
        let keys: Vec<&str> = all
            .descendants("TPRAAAA2")
            .iter()
            .map(|c| c.collection_key.as_str())
            .collect();
        assert_eq!(keys, ["SUBAAAA2", "SUBBBBB2", "DEEPAAA2"]);
        assert!(all.descendants("DEEPAAA2").is_empty());
        let plan = DeletePlan::of(&key("TPRAAAA2"), &all).unwrap();
        assert_eq!(plan.items_filed(), 8);
        // A cycle (never made by Zotero) ends the walk.
        let cyc = CollectionSet::new(vec![
            c("AAAAAAA2", "a", Some("BBBBBBB2")),
            c("BBBBBBB2", "b", Some("AAAAAAA2")),
        ]);
        assert_eq!(cyc.descendants("AAAAAAA2").len(), 1);
    }

    #[test]
    fn moves_into_itself_or_below_and_taken_names_are_refused() {
        let all = library();
        let top = key("TPRAAAA2");
        let move_to = |p: &str| CollectionChange {
            name: None,
            parent: Some(Some(key(p))),
        };
        assert_eq!(
            check_change(&all, &top, &move_to("TPRAAAA2")),
            Err(Refusal::IntoItself)
        );
        assert!(matches!(
            check_change(&all, &top, &move_to("DEEPAAA2")),
            Err(Refusal::IntoDescendant(c)) if c.collection_key == "DEEPAAA2"
        ));
        assert!(matches!(
            check_change(&all, &top, &move_to("TRASHED2")),
            Err(Refusal::ParentInTrash(_))
        ));
        assert_eq!(
            check_change(&all, &top, &move_to("ZZZZZZZ2")),
            Err(Refusal::ParentNotFound("ZZZZZZZ2".into()))
        );
        assert_eq!(
            check_change(&all, &key("NNNNNNN2"), &move_to("TPRAAAA2")),
            Err(Refusal::NotFound("NNNNNNN2".into()))
        );
        // Moving "Papers" beside "papers" is a duplicate name; elsewhere it is fine.
        assert!(matches!(
            check_change(&all, &key("SUBAAAA2"), &move_to("THRAAAA2")),
            Err(Refusal::NameTaken(c)) if c.collection_key == "THSUBAA2"
        ));
        assert_eq!(
            check_change(
                &all,
                &key("SUBAAAA2"),
                &CollectionChange {
                    name: None,
                    parent: Some(None)
                }
            ),
            Ok(())
        );
        // Renaming to a sibling's name, in any case; to its own name in another case is fine;
        // a name only a trashed sibling has is free.
        let rename = |n: &str| CollectionChange {
            name: Some(n.into()),
            parent: None,
        };
        assert!(matches!(
            check_change(&all, &key("SUBBBBB2"), &rename(" PAPERS ")),
            Err(Refusal::NameTaken(c)) if c.collection_key == "SUBAAAA2"
        ));
        assert_eq!(
            check_change(&all, &key("SUBAAAA2"), &rename("PAPERS")),
            Ok(())
        );
        assert_eq!(check_change(&all, &key("THRAAAA2"), &rename("old")), Ok(()));
    }
}
