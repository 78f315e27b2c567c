//! The test's view of one library's stored state ([`Emulator::library`]), and the shortcuts
//! for the user library the tests had before there were groups.

use serde_json::Value;

use super::libs::{Lib, LibraryId};
use super::storage::StoredFile;
use super::stored::FullText;
use super::Emulator;

/// One library of a running emulator, as stored (the web API's current state, whatever the
/// local API's lag).
pub struct LibraryView<'a> {
    emu: &'a Emulator,
    id: LibraryId,
}

impl LibraryView<'_> {
    pub(crate) fn with<T>(&self, f: impl FnOnce(&Lib) -> T) -> T {
        let st = self.emu.state.lock().unwrap();
        let lib = st
            .libs
            .get(&self.id)
            .unwrap_or_else(|| panic!("no library {:?}", self.id));
        f(lib)
    }

    pub(crate) fn with_mut<T>(&self, f: impl FnOnce(&mut Lib) -> T) -> T {
        let mut st = self.emu.state.lock().unwrap();
        let lib = st
            .libs
            .get_mut(&self.id)
            .unwrap_or_else(|| panic!("no library {:?}", self.id));
        f(lib)
    }

    pub fn id(&self) -> LibraryId {
        self.id
    }

    /// The library version.
    pub fn version(&self) -> u64 {
        self.with(|l| l.version)
    }

    /// The stored JSON of an item (as kept, before derived `meta`/`links` are filled in).
    pub fn item(&self, key: &str) -> Option<Value> {
        self.with(|l| l.item_index(key).map(|i| l.items[i].clone()))
    }

    /// Every stored item, in creation order.
    pub fn items(&self) -> Vec<Value> {
        self.with(|l| l.items.clone())
    }

    /// The stored JSON of a collection (trashed ones too; derived `meta` not filled in).
    pub fn collection(&self, key: &str) -> Option<Value> {
        self.with(|l| l.collections.iter().find(|c| c["key"] == key).cloned())
    }

    /// Every stored collection, in creation order.
    pub fn collections(&self) -> Vec<Value> {
        self.with(|l| l.collections.clone())
    }

    /// The stored children of an item (notes, attachments, annotations).
    pub fn children(&self, parent_key: &str) -> Vec<Value> {
        self.with(|l| {
            l.items
                .iter()
                .filter(|i| i["data"]["parentItem"] == parent_key)
                .cloned()
                .collect()
        })
    }

    /// How many items the library holds (trashed ones included).
    pub fn count_items(&self) -> usize {
        self.with(|l| l.items.len())
    }

    /// The file stored for an attachment, if it has one.
    pub fn file(&self, key: &str) -> Option<StoredFile> {
        self.emu.state.lock().unwrap().stored_file(self.id, key)
    }

    /// Adds a collection (`name`, under `parent`) as another client would: the library's
    /// version goes up and is the collection's.
    pub fn add_collection(&self, key: &str, name: &str, parent: Option<&str>) {
        let mut st = self.emu.state.lock().unwrap();
        let lib = st.libs.get_mut(&self.id).expect("no such library");
        lib.version += 1;
        let v = lib.version;
        let parent = parent.map_or(serde_json::json!(false), |p| serde_json::json!(p));
        lib.collections.push(serde_json::json!({
            "key": key, "version": v,
            "data": {"key": key, "version": v, "name": name, "parentCollection": parent,
                     "relations": {}}
        }));
    }

    /// Sets the full text of an attachment, all of it indexed (a PDF as one page of one),
    /// as [`LibraryView::set_fulltext_of`] does.
    pub fn set_fulltext(&self, item_key: &str, text: &str) {
        let pdf = self
            .item(item_key)
            .is_some_and(|i| i["data"]["contentType"] == "application/pdf");
        let ft = if pdf {
            FullText::pdf(text, 1, 1)
        } else {
            FullText::document(text)
        };
        self.set_fulltext_of(item_key, ft);
    }
}

impl Emulator {
    /// One library's stored state (panics on use if the emulator has no such library).
    pub fn library(&self, id: LibraryId) -> LibraryView<'_> {
        LibraryView { emu: self, id }
    }

    /// Every library: the user's first, then the groups by id.
    pub fn libraries(&self) -> Vec<LibraryId> {
        self.state.lock().unwrap().libs.keys().copied().collect()
    }

    /// Sets the full text of an attachment of the user library, all of it indexed.
    pub fn set_fulltext(&self, item_key: &str, text: &str) {
        self.library(LibraryId::USER).set_fulltext(item_key, text);
    }

    /// The current version of the user library.
    pub fn library_version(&self) -> u64 {
        self.library(LibraryId::USER).version()
    }

    /// The stored JSON of an item of the user library.
    pub fn item(&self, key: &str) -> Option<Value> {
        self.library(LibraryId::USER).item(key)
    }

    /// Every stored item of the user library, in creation order.
    pub fn items(&self) -> Vec<Value> {
        self.library(LibraryId::USER).items()
    }

    /// The stored JSON of a collection of the user library.
    pub fn collection(&self, key: &str) -> Option<Value> {
        self.library(LibraryId::USER).collection(key)
    }

    /// Every stored collection of the user library, in creation order.
    pub fn collections(&self) -> Vec<Value> {
        self.library(LibraryId::USER).collections()
    }

    /// The stored children of an item of the user library.
    pub fn children(&self, parent_key: &str) -> Vec<Value> {
        self.library(LibraryId::USER).children(parent_key)
    }

    /// How many items the user library holds (trashed ones included).
    pub fn count_items(&self) -> usize {
        self.library(LibraryId::USER).count_items()
    }
}
