//! Collection listings beyond the seed's page of every collection: the top level, the
//! subcollections of one, and the whole tree (or one branch of it) nested, in one call and
//! bounded: at most [`TREE_MAX`] collections, and for a branch at most
//! [`BRANCH_MAX_REQUESTS`] requests.

use std::collections::{HashMap, HashSet, VecDeque};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::client::Library;
use crate::error::ZoteroError;
use crate::http::ApiRequest;
use crate::items::no_collection;
use crate::library::ObjectKey;
use crate::model::{Collection, WireObject};
use crate::response::{parse_page, Page};
use crate::routing::Backend;

/// The most collections a tree holds: about 120 bytes each in an answer, so a full tree
/// stays near 60 KB.
pub const TREE_MAX: usize = 500;
/// The most requests one branch (a tree under a collection) may cost: one per
/// collection that has subcollections, and per page of them.
pub const BRANCH_MAX_REQUESTS: usize = 25;
/// Collections per request when reading a tree (Zotero's largest page).
const TREE_PAGE: usize = 100;

/// Which collections a page lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectionScope {
    /// Every collection, nested ones too (the seed's listing).
    All,
    /// Top-level collections only.
    Top,
    /// The subcollections of one collection (one level).
    Children(ObjectKey),
}

/// A collection with its subcollections.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNode {
    pub collection: Collection,
    /// By name.
    pub children: Vec<TreeNode>,
}

/// A tree of collections, or a branch of one.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionTree {
    /// Top-level collections (or those right under the branch's collection), by name. When
    /// the tree was cut, a collection whose parent was not read is here too, with its
    /// `parent_key`.
    pub roots: Vec<TreeNode>,
    /// Collections in `roots` and below.
    pub count: u64,
    /// Set when the tree was cut: at least this many collections were left out.
    pub omitted: Option<u64>,
}

impl Library<'_> {
    /// A page of collections in `scope`: top-level and subcollections by name, all of
    /// them in Zotero's default order (as the seed's listing).
    pub async fn collections_in(
        &self,
        scope: &CollectionScope,
        limit: u32,
        start: u64,
        cancel: &CancellationToken,
    ) -> Result<Page<Collection>, ZoteroError> {
        let page = self.collection_page(scope, limit, start, cancel).await?;
        Ok(Page {
            items: page.items.into_iter().map(|(c, _)| c).collect(),
            total: page.total,
            next_start: page.next_start,
        })
    }

    /// A page of collections with each one's number of subcollections, when Zotero says.
    async fn collection_page(
        &self,
        scope: &CollectionScope,
        limit: u32,
        start: u64,
        cancel: &CancellationToken,
    ) -> Result<Page<(Collection, Option<u64>)>, ZoteroError> {
        let (path, sort) = match scope {
            CollectionScope::All => ("/collections".to_string(), ""),
            CollectionScope::Top => ("/collections/top".to_string(), "&sort=title"),
            CollectionScope::Children(k) => {
                (format!("/collections/{k}/collections"), "&sort=title")
            }
        };
        let req = ApiRequest::get(format!(
            "{path}?format=json{sort}&limit={limit}&start={start}"
        ));
        let mut resp = self.send(&req, cancel).await?;
        if let CollectionScope::Children(k) = scope {
            // The web API answers 404 for an unknown collection; the desktop app throws
            // (a bare 500), also for one it has not synced yet: the web API tells then,
            // when there is one, else the desktop is asked for the collection.
            if resp.status >= 500 && self.route(&req)? == Backend::Local {
                if self.client.has_web() {
                    resp = self.send(&req.clone().fresh(), cancel).await?;
                } else if !self.collection_exists(k, cancel).await? {
                    return Err(no_collection(k));
                }
            }
            if resp.status == 404 {
                return Err(no_collection(k));
            }
        }
        parse_page(&resp, "list collections", |w| {
            let subcollections = w.meta.get("numCollections").and_then(Value::as_u64);
            (w.to_collection(), subcollections)
        })
    }

    /// Every collection of the library nested (or, with `root`, the collections under it),
    /// siblings by name, bounded by [`TREE_MAX`].
    pub async fn collection_tree(
        &self,
        root: Option<&ObjectKey>,
        cancel: &CancellationToken,
    ) -> Result<CollectionTree, ZoteroError> {
        match root {
            None => self.whole_tree(cancel).await,
            Some(root) => self.branch(root, cancel).await,
        }
    }

    /// The whole tree from pages of every collection, oldest first: a parent is usually
    /// older than its subcollections, so a cut tree keeps its upper levels.
    async fn whole_tree(&self, cancel: &CancellationToken) -> Result<CollectionTree, ZoteroError> {
        let mut read: Vec<Collection> = Vec::new();
        let mut start = 0;
        let total = loop {
            let req = ApiRequest::get(format!(
                "/collections?format=json&sort=dateAdded&direction=asc&limit={TREE_PAGE}&start={start}"
            ));
            let resp = self.send(&req, cancel).await?;
            let page = parse_page(&resp, "list collections", WireObject::to_collection)?;
            let room = TREE_MAX.saturating_sub(read.len());
            read.extend(page.items.into_iter().take(room));
            match page.next_start {
                Some(next) if next > start && read.len() < TREE_MAX => start = next,
                _ => break page.total,
            }
        };
        let count = read.len() as u64;
        let omitted = (total > count).then(|| total - count);
        let roots = nest(read, None);
        Ok(CollectionTree {
            roots,
            count,
            omitted,
        })
    }

    /// The collections under `root`, level by level through `…/collections/{key}/collections`
    /// (only for collections that have subcollections).
    async fn branch(
        &self,
        root: &ObjectKey,
        cancel: &CancellationToken,
    ) -> Result<CollectionTree, ZoteroError> {
        let mut read: Vec<Collection> = Vec::new();
        let mut queue: VecDeque<(ObjectKey, Option<u64>)> = VecDeque::from([(root.clone(), None)]);
        let mut seen: HashSet<ObjectKey> = HashSet::from([root.clone()]);
        let mut requests = 0;
        let mut omitted: u64 = 0;
        let mut cut = false;
        while let Some((key, expected)) = queue.pop_front() {
            let mut start = 0;
            loop {
                if requests == BRANCH_MAX_REQUESTS || read.len() >= TREE_MAX {
                    cut = true;
                    // What Zotero said this collection holds, less what was read of it.
                    let got = start;
                    omitted += expected.map_or(1, |n| n.saturating_sub(got).max(1));
                    break;
                }
                let scope = CollectionScope::Children(key.clone());
                let limit = TREE_PAGE.min(TREE_MAX - read.len()) as u32;
                let page = self.collection_page(&scope, limit, start, cancel).await?;
                requests += 1;
                for (c, subcollections) in page.items {
                    let Ok(k) = ObjectKey::parse(&c.collection_key) else {
                        continue;
                    };
                    if subcollections != Some(0) && seen.insert(k.clone()) {
                        queue.push_back((k, subcollections));
                    }
                    read.push(c);
                }
                match page.next_start {
                    Some(next) if next > start => start = next,
                    _ => break,
                }
            }
        }
        let count = read.len() as u64;
        let roots = nest(read, Some(root.as_str()));
        Ok(CollectionTree {
            roots,
            count,
            omitted: cut.then_some(omitted),
        })
    }
}

/// Nests collections under their parents, siblings by name. The roots are the collections
/// under `root` (the top level for `None`), and any whose parent is not among them.
fn nest(collections: Vec<Collection>, root: Option<&str>) -> Vec<TreeNode> {
    let keys: HashSet<String> = collections
        .iter()
        .map(|c| c.collection_key.clone())
        .collect();
    let mut by_parent: HashMap<Option<String>, Vec<Collection>> = HashMap::new();
    for c in collections {
        let parent = c
            .parent_key
            .clone()
            .filter(|p| keys.contains(p) && Some(p.as_str()) != root);
        by_parent.entry(parent).or_default().push(c);
    }
    let mut placed = HashSet::new();
    let top = by_parent.remove(&None).unwrap_or_default();
    let mut roots = place(top, &mut by_parent, &mut placed);
    // What is left hangs from a cycle (data Zotero should never hold): shown at the top
    // rather than lost.
    while let Some(parent) = by_parent.keys().min().cloned() {
        let level = by_parent.remove(&parent).unwrap_or_default();
        roots.extend(place(level, &mut by_parent, &mut placed));
    }
    roots
}

/// One level, by name, each with the levels below it.
fn place(
    mut level: Vec<Collection>,
    by_parent: &mut HashMap<Option<String>, Vec<Collection>>,
    placed: &mut HashSet<String>,
) -> Vec<TreeNode> {
    level.sort_by(|a, b| {
        a.name
            .to_lowercase()
            .cmp(&b.name.to_lowercase())
            .then_with(|| a.collection_key.cmp(&b.collection_key))
    });
    let mut nodes = Vec::with_capacity(level.len());
    for c in level {
        // A collection is placed once, whatever the data says.
        if !placed.insert(c.collection_key.clone()) {
            continue;
        }
        let below = by_parent
            .remove(&Some(c.collection_key.clone()))
            .unwrap_or_default();
        nodes.push(TreeNode {
            children: place(below, by_parent, placed),
            collection: c,
        });
    }
    nodes
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
            num_items: None,
            in_trash: false,
        }
    }

    fn shape(nodes: &[TreeNode]) -> String {
        nodes
            .iter()
            .map(|n| {
                if n.children.is_empty() {
                    n.collection.name.clone()
                } else {
                    format!("{}({})", n.collection.name, shape(&n.children))
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn collections_nest_by_parent_and_sort_by_name() {
        let all = vec![
            c("K1", "zeta", None),
            c("K2", "Alpha", None),
            c("K3", "beta", Some("K2")),
            c("K4", "Aardvark", Some("K2")),
            c("K5", "deep", Some("K3")),
            // Its parent was not read: it stays, at the top.
            c("K6", "orphan", Some("GONE")),
        ];
        assert_eq!(
            shape(&nest(all.clone(), None)),
            "Alpha(Aardvark beta(deep)) orphan zeta"
        );
        // Under K2: its children are the roots.
        let under: Vec<Collection> = all
            .into_iter()
            .filter(|c| ["K3", "K4", "K5"].contains(&c.collection_key.as_str()))
            .collect();
        assert_eq!(shape(&nest(under, Some("K2"))), "Aardvark beta(deep)");
    }

    #[test]
    fn a_cycle_does_not_loop() {
        let all = vec![c("K1", "a", Some("K2")), c("K2", "b", Some("K1"))];
        // Nothing is lost, and nothing hangs.
        assert_eq!(shape(&nest(all, None)), "b(a)");
    }
}
