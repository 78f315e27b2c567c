//! What every listing needs about every item, read once per snapshot and kept in memory:
//! the `items` rows, parents and children, the trash, the retractions, the text quick search
//! matches (titles, creator names, years) and the common sort keys. A listing then filters
//! 10,000 items in memory instead of asking SQLite for all of them on each request.

use std::collections::{HashMap, HashSet};

use rusqlite::Connection;
use serde_json::{json, Value};

use crate::schema::Names;
use crate::search_fold::fold_for_search;

/// The columns of `items` a listing filters, sorts and pages on.
#[derive(Debug, Clone)]
pub(crate) struct ItemRow {
    pub id: i64,
    pub type_id: i64,
    pub key: String,
    pub version: i64,
    pub date_added: String,
    pub date_modified: String,
    pub library: i64,
    /// The parent of a note, attachment or annotation.
    pub parent: Option<i64>,
    /// In the trash itself (`deletedItems`).
    pub deleted: bool,
}

/// What quick search matches in an item, folded as Zotero folds it for search
/// ([`fold_for_search`]).
#[derive(Debug, Default)]
struct SearchText {
    /// Titles and creator names, one per line: a search word holds no whitespace, so a
    /// match never spans two of them.
    text: String,
    /// The first four characters of each date field, when they are a year.
    years: Vec<[u8; 4]>,
}

#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Child → parent (notes, attachments, annotations).
    pub parent: HashMap<i64, i64>,
    pub trashed: HashSet<i64>,
    /// Item → (Zotero's stored JSON, flag).
    pub retracted: HashMap<i64, (String, i64)>,
    /// Parent → children, in item ID order.
    pub children: HashMap<i64, Vec<i64>>,
    /// Every item, in item ID order.
    items: Vec<ItemRow>,
    search: Vec<SearchText>,
    slot: HashMap<i64, usize>,
    /// Library → key → slot.
    by_key: HashMap<i64, HashMap<String, usize>>,
    /// Sort keys: lowercased title (a note's title for notes), first creator's last name,
    /// the stored date.
    pub title_sort: HashMap<i64, String>,
    pub creator_sort: HashMap<i64, String>,
    pub date_sort: HashMap<i64, String>,
}

/// The IDs of the fields whose base field is `base` (or which are `base` itself).
pub(crate) fn field_ids_with_base(names: &Names, base: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = names
        .fields
        .iter()
        .filter(|(_, n)| n.as_str() == base)
        .map(|(id, _)| *id)
        .collect();
    ids.extend(
        names
            .base
            .iter()
            .filter(|(_, b)| b.as_str() == base)
            .map(|((_, f), _)| *f),
    );
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// `(1,2,3)` for SQL (IDs are integers read from the database: nothing to escape).
pub(crate) fn in_list(ids: &[i64]) -> String {
    let list: Vec<String> = ids.iter().map(i64::to_string).collect();
    format!(
        "({})",
        if list.is_empty() {
            "NULL".to_string()
        } else {
            list.join(",")
        }
    )
}

/// A title as titles sort: leading quotes, brackets and other marks do not count.
fn title_sort_key(lower: &str) -> String {
    lower
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .to_string()
}

fn pairs(conn: &Connection, sql: &str) -> rusqlite::Result<Vec<(i64, String)>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, value_text(r.get(1)?))))?;
    rows.collect()
}

/// A field value as text: Zotero stores `itemDataValues.value` untyped, so a number may
/// come back as an integer or a real; anything else (a blob, NULL) reads as empty.
pub(crate) fn value_text(value: rusqlite::types::Value) -> String {
    match value {
        rusqlite::types::Value::Text(t) => t,
        rusqlite::types::Value::Integer(i) => i.to_string(),
        rusqlite::types::Value::Real(f) => f.to_string(),
        _ => String::new(),
    }
}

impl Index {
    pub(crate) fn read(conn: &Connection, names: &Names) -> rusqlite::Result<Self> {
        let mut index = Self::default();
        let mut stmt = conn.prepare(
            "SELECT itemID, itemTypeID, key, version, dateAdded, dateModified, libraryID \
             FROM items ORDER BY itemID",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ItemRow {
                id: r.get(0)?,
                type_id: r.get(1)?,
                key: r.get(2)?,
                version: r.get(3)?,
                date_added: r.get(4)?,
                date_modified: r.get(5)?,
                library: r.get(6)?,
                parent: None,
                deleted: false,
            })
        })?;
        for row in rows {
            let row = row?;
            let slot = index.items.len();
            index.slot.insert(row.id, slot);
            index
                .by_key
                .entry(row.library)
                .or_default()
                .insert(row.key.clone(), slot);
            index.items.push(row);
            index.search.push(SearchText::default());
        }
        for table in ["itemNotes", "itemAttachments", "itemAnnotations"] {
            let mut stmt = conn.prepare(&format!(
                "SELECT itemID, parentItemID FROM {table} WHERE parentItemID IS NOT NULL ORDER BY itemID"
            ))?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
            for row in rows {
                let (child, p) = row?;
                index.parent.insert(child, p);
                index.children.entry(p).or_default().push(child);
            }
        }
        for list in index.children.values_mut() {
            list.sort_unstable();
        }
        let mut stmt = conn.prepare("SELECT itemID FROM deletedItems")?;
        index.trashed = stmt
            .query_map([], |r| r.get::<_, i64>(0))?
            .collect::<rusqlite::Result<HashSet<_>>>()?;
        for row in &mut index.items {
            row.parent = index.parent.get(&row.id).copied();
            row.deleted = index.trashed.contains(&row.id);
        }
        let mut stmt = conn.prepare(
            "SELECT itemID, COALESCE(data, '{}'), COALESCE(flag, 0) FROM retractedItems",
        )?;
        index.retracted = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    (r.get::<_, String>(1)?, r.get::<_, i64>(2)?),
                ))
            })?
            .collect::<rusqlite::Result<HashMap<_, _>>>()?;
        index.read_search_text(conn, names)?;
        Ok(index)
    }

    fn read_search_text(&mut self, conn: &Connection, names: &Names) -> rusqlite::Result<()> {
        let values =
            "SELECT d.itemID, v.value FROM itemData d JOIN itemDataValues v USING (valueID) \
                      WHERE d.fieldID IN ";
        let titles = in_list(&field_ids_with_base(names, "title"));
        for (id, title) in pairs(conn, &format!("{values}{titles}"))? {
            self.add_text(id, &fold_for_search(&title));
            self.title_sort
                .insert(id, title_sort_key(&title.to_lowercase()));
        }
        let dates = in_list(&field_ids_with_base(names, "date"));
        for (id, date) in pairs(conn, &format!("{values}{dates}"))? {
            let year = date
                .as_bytes()
                .get(..4)
                .and_then(|b| <[u8; 4]>::try_from(b).ok())
                .filter(|y| y.iter().all(u8::is_ascii_digit));
            if let Some(year) = year {
                if let Some(s) = self.slot.get(&id).and_then(|s| self.search.get_mut(*s)) {
                    s.years.push(year);
                }
            }
            self.date_sort.insert(id, date);
        }
        let mut stmt = conn.prepare(
            "SELECT ic.itemID, ic.orderIndex, COALESCE(c.firstName, ''), COALESCE(c.lastName, '') \
             FROM itemCreators ic JOIN creators c USING (creatorID)",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        for row in rows {
            let (id, order, first, last) = row?;
            self.add_text(id, &fold_for_search(&first));
            self.add_text(id, &fold_for_search(&last));
            if order == 0 {
                self.creator_sort.insert(id, last.to_lowercase());
            }
        }
        for (id, title) in pairs(conn, "SELECT itemID, COALESCE(title, '') FROM itemNotes")? {
            self.title_sort
                .insert(id, title_sort_key(&title.to_lowercase()));
        }
        Ok(())
    }

    fn add_text(&mut self, id: i64, folded: &str) {
        if folded.is_empty() {
            return;
        }
        if let Some(s) = self.slot.get(&id).and_then(|s| self.search.get_mut(*s)) {
            if !s.text.is_empty() {
                s.text.push('\n');
            }
            s.text.push_str(folded);
        }
    }

    pub(crate) fn row(&self, id: i64) -> Option<&ItemRow> {
        self.slot.get(&id).and_then(|s| self.items.get(*s))
    }

    pub(crate) fn by_key(&self, library: i64, key: &str) -> Option<&ItemRow> {
        self.by_key
            .get(&library)
            .and_then(|keys| keys.get(key))
            .and_then(|s| self.items.get(*s))
    }

    /// The library's items, in item ID order.
    pub(crate) fn library_rows(&self, library: i64) -> impl Iterator<Item = &ItemRow> {
        self.items.iter().filter(move |row| row.library == library)
    }

    /// The library's items one quick-search word matches in titles, creator names and
    /// years (folded as Zotero folds them, anywhere in the text; a four-digit word also
    /// matches the year of a date field).
    pub(crate) fn quick_matches(&self, library: i64, word: &str) -> HashSet<i64> {
        let needle = fold_for_search(word);
        let year = <[u8; 4]>::try_from(word.as_bytes())
            .ok()
            .filter(|y| y.iter().all(u8::is_ascii_digit));
        self.items
            .iter()
            .zip(&self.search)
            .filter(|(row, s)| {
                row.library == library
                    && (s.text.contains(&needle) || year.is_some_and(|y| s.years.contains(&y)))
            })
            .map(|(row, _)| row.id)
            .collect()
    }

    /// The item at the top of the row's family (annotations sit two levels down: item →
    /// attachment → annotation).
    pub(crate) fn top_row<'a>(&'a self, row: &'a ItemRow) -> &'a ItemRow {
        let mut current = row;
        for _ in 0..3 {
            match current.parent.and_then(|p| self.row(p)) {
                Some(parent) => current = parent,
                None => break,
            }
        }
        current
    }

    /// In the trash itself, or a child of an item in the trash (the API counts both).
    pub(crate) fn row_in_trash(&self, row: &ItemRow) -> bool {
        row.deleted || row.parent.is_some_and(|p| self.trashed.contains(&p))
    }

    /// Children outside the trash (the API does not count children in the trash).
    pub(crate) fn num_children(&self, id: i64) -> u64 {
        self.children.get(&id).map_or(0, |c| {
            c.iter()
                .filter(|child| !self.trashed.contains(child))
                .count() as u64
        })
    }

    /// The retraction as Zotero stored it (`Zotero.Retractions._addEntry`), with `hidden`
    /// when the user chose to hide it (FLAG_HIDDEN).
    pub(crate) fn retraction(&self, id: i64) -> Option<Value> {
        let (data, flag) = self.retracted.get(&id)?;
        let mut value = serde_json::from_str::<Value>(data).unwrap_or_else(|_| json!({}));
        if let Some(o) = value.as_object_mut() {
            o.insert("hidden".into(), Value::Bool(*flag == 1));
        }
        Some(value)
    }
}
