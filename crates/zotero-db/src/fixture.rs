//! Test support: builds a Zotero data directory (`zotero.sqlite` + `storage/`) the way Zotero
//! fills one, from our own SQL text (`fixtures/schema.sql`, which names the upstream file of
//! each table) and the part of Zotero's global schema the fixture's items use. Nothing here
//! is Zotero's code: each step names the Zotero function whose effect it reproduces.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

/// Our DDL (see the file's header for where each table comes from).
pub const SCHEMA_SQL: &str = include_str!("../fixtures/schema.sql");

/// The 'userdata' version Zotero 10.0.0's userdata.sql declares on its first line.
pub const USERDATA_VERSION: i64 = 129;

type TypeSpec = (
    &'static str,
    &'static [(&'static str, Option<&'static str>)],
    &'static [(&'static str, bool)],
);

/// The item types the fixture uses, with (a subset of) their fields and base fields, and
/// their creator types (primary first), as zotero/zotero-schema's `schema.json` (version 41)
/// lists them under `itemTypes[]`. Only the fields the fixture or the reader needs are kept.
const GLOBAL_SCHEMA: &[TypeSpec] = &[
    ("annotation", &[], &[]),
    (
        "attachment",
        &[("title", None), ("accessDate", None), ("url", None)],
        &[],
    ),
    (
        "book",
        &[
            ("title", None),
            ("abstractNote", None),
            ("series", None),
            ("edition", None),
            ("date", None),
            ("publisher", None),
            ("place", None),
            ("numPages", None),
            ("ISBN", None),
            ("DOI", None),
            ("url", None),
            ("language", None),
            ("extra", None),
        ],
        &[
            ("author", true),
            ("contributor", false),
            ("editor", false),
            ("translator", false),
            ("seriesEditor", false),
        ],
    ),
    (
        "bookSection",
        &[
            ("title", None),
            ("abstractNote", None),
            ("bookTitle", Some("publicationTitle")),
            ("date", None),
            ("publisher", None),
            ("place", None),
            ("pages", None),
            ("ISBN", None),
            ("DOI", None),
            ("url", None),
            ("extra", None),
        ],
        &[
            ("author", true),
            ("contributor", false),
            ("editor", false),
            ("bookAuthor", false),
            ("translator", false),
            ("seriesEditor", false),
        ],
    ),
    (
        "conferencePaper",
        &[
            ("title", None),
            ("abstractNote", None),
            ("proceedingsTitle", Some("publicationTitle")),
            ("conferenceName", None),
            ("publisher", None),
            ("date", None),
            ("pages", None),
            ("DOI", None),
            ("url", None),
            ("extra", None),
        ],
        &[
            ("author", true),
            ("contributor", false),
            ("editor", false),
            ("translator", false),
            ("seriesEditor", false),
        ],
    ),
    (
        "journalArticle",
        &[
            ("title", None),
            ("abstractNote", None),
            ("publicationTitle", None),
            ("date", None),
            ("volume", None),
            ("issue", None),
            ("pages", None),
            ("journalAbbreviation", None),
            ("DOI", None),
            ("url", None),
            ("PMID", None),
            ("ISSN", None),
            ("language", None),
            ("extra", None),
        ],
        &[
            ("author", true),
            ("contributor", false),
            ("editor", false),
            ("translator", false),
            ("reviewedAuthor", false),
        ],
    ),
    ("note", &[], &[]),
    (
        "thesis",
        &[
            ("title", None),
            ("abstractNote", None),
            ("thesisType", Some("type")),
            ("university", Some("publisher")),
            ("place", None),
            ("date", None),
            ("numPages", None),
            ("url", None),
            ("extra", None),
        ],
        &[("author", true), ("contributor", false)],
    ),
];

pub type Result<T> = std::result::Result<T, rusqlite::Error>;

/// A Zotero data directory under construction.
pub struct Builder {
    pub dir: PathBuf,
    pub conn: Connection,
}

/// One creator: `(creatorType, firstName, lastName)`; no first name is a single-field name
/// (`fieldMode` 1, the name in `lastName`).
pub type CreatorSpec<'a> = (&'a str, Option<&'a str>, &'a str);

/// An annotation as the fixture writes it.
pub struct AnnotationSpec<'a> {
    pub key: &'a str,
    /// Zotero's `ANNOTATION_TYPE_*` (xpcom/annotations.js): 1 highlight, 2 note, 3 image,
    /// 4 ink, 5 underline, 6 text.
    pub kind: i64,
    pub text: Option<&'a str>,
    pub comment: Option<&'a str>,
    pub color: &'a str,
    pub page_label: &'a str,
    pub sort_index: &'a str,
}

impl Builder {
    /// `dir/zotero.sqlite` made as `_initializeSchema()` makes it: page size, encoding, the
    /// tables, the global schema, the versions, then the user library (libraryID 1).
    pub fn create(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir.join("storage"))
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        let conn = Connection::open(dir.join("zotero.sqlite"))?;
        // synchronous=OFF: a test fixture need not survive a power cut, and builds faster.
        conn.execute_batch(
            "PRAGMA page_size = 4096; PRAGMA encoding = 'UTF-8'; PRAGMA synchronous = OFF;",
        )?;
        conn.execute_batch(SCHEMA_SQL)?;
        let b = Self {
            dir: dir.to_path_buf(),
            conn,
        };
        b.fill_global_schema()?;
        for (schema, version) in [
            ("system", 32),
            ("userdata", USERDATA_VERSION),
            ("triggers", 18),
            ("compatibility", 9),
            ("globalSchema", 41),
        ] {
            b.conn.execute(
                "REPLACE INTO version (schema, version) VALUES (?1, ?2)",
                params![schema, version],
            )?;
        }
        b.conn.execute(
            "INSERT INTO libraries (libraryID, type, editable, filesEditable, version) \
             VALUES (1, 'user', 1, 1, 40)",
            [],
        )?;
        Ok(b)
    }

    /// What `_updateGlobalSchema()` does on a fresh database: new fields and creator types
    /// get IDs in order of first appearance, item types in list order, then
    /// `itemTypeFields`, `baseFieldMappings`, `itemTypeCreatorTypes` are rebuilt (and the
    /// `*Combined` tables filled, as `Zotero.ItemTypes/ItemFields` do at start-up). Our IDs
    /// start at odd offsets, as an old profile's would: the reader must join by name.
    fn fill_global_schema(&self) -> Result<()> {
        let c = &self.conn;
        let mut next_field = 70;
        let mut next_creator = 20;
        for (type_index, (item_type, fields, creators)) in GLOBAL_SCHEMA.iter().enumerate() {
            let type_id = 40 - i64::try_from(type_index).unwrap_or(0);
            c.execute(
                "INSERT INTO itemTypes VALUES (?1, ?2, NULL, 1)",
                params![type_id, item_type],
            )?;
            c.execute(
                "INSERT INTO itemTypesCombined VALUES (?1, ?2, 1, 0)",
                params![type_id, item_type],
            )?;
            for (order, (field, base)) in fields.iter().enumerate() {
                let field_id = self.field_id(field, &mut next_field)?;
                c.execute(
                    "INSERT INTO itemTypeFields VALUES (?1, ?2, 0, ?3)",
                    params![type_id, field_id, order as i64],
                )?;
                if let Some(base) = base {
                    let base_id = self.field_id(base, &mut next_field)?;
                    c.execute(
                        "INSERT INTO baseFieldMappings VALUES (?1, ?2, ?3)",
                        params![type_id, base_id, field_id],
                    )?;
                }
            }
            for (creator, primary) in creators.iter() {
                let id: Option<i64> = c
                    .query_row(
                        "SELECT creatorTypeID FROM creatorTypes WHERE creatorType = ?1",
                        [creator],
                        |r| r.get(0),
                    )
                    .optional()?;
                let id = match id {
                    Some(id) => id,
                    None => {
                        next_creator += 1;
                        c.execute(
                            "INSERT INTO creatorTypes VALUES (?1, ?2)",
                            params![next_creator, creator],
                        )?;
                        next_creator
                    }
                };
                c.execute(
                    "INSERT INTO itemTypeCreatorTypes VALUES (?1, ?2, ?3)",
                    params![type_id, id, i64::from(*primary)],
                )?;
            }
        }
        c.execute_batch(
            "INSERT INTO fieldsCombined SELECT fieldID, fieldName, NULL, fieldFormatID, 0 FROM fields;",
        )?;
        Ok(())
    }

    fn field_id(&self, name: &str, next: &mut i64) -> Result<i64> {
        let id: Option<i64> = self
            .conn
            .query_row(
                "SELECT fieldID FROM fields WHERE fieldName = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()?;
        if let Some(id) = id {
            return Ok(id);
        }
        *next += 3;
        self.conn.execute(
            "INSERT INTO fields VALUES (?1, ?2, NULL)",
            params![*next, name],
        )?;
        Ok(*next)
    }

    fn id_of(&self, sql: &str, name: &str) -> Result<i64> {
        self.conn.query_row(sql, [name], |r| r.get(0))
    }

    /// A group library (`Zotero.Group` save: a `libraries` row of type 'group', then `groups`).
    pub fn group(&self, group_id: i64, name: &str) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO libraries (type, editable, filesEditable, version) VALUES ('group', 1, 1, 7)",
            [],
        )?;
        let library_id = self.conn.last_insert_rowid();
        self.conn.execute(
            "INSERT INTO groups VALUES (?1, ?2, ?3, '', 7)",
            params![group_id, library_id, name],
        )?;
        Ok(library_id)
    }

    /// An item with its fields (by field name), creators in order and tags (`Item._saveData`:
    /// `items`, `itemData` over `itemDataValues`, `itemCreators` over `creators`, `itemTags`).
    pub fn item(
        &self,
        library: i64,
        key: &str,
        item_type: &str,
        fields: &[(&str, &str)],
        creators: &[CreatorSpec<'_>],
        tags: &[&str],
    ) -> Result<i64> {
        let type_id = self.id_of(
            "SELECT itemTypeID FROM itemTypes WHERE typeName = ?1",
            item_type,
        )?;
        let n: i64 = self
            .conn
            .query_row("SELECT COUNT(*) FROM items", [], |r| r.get(0))?;
        let stamp = format!("2024-01-{:02} 10:{:02}:00", 1 + n % 28, n % 60);
        self.conn.execute(
            "INSERT INTO items (itemTypeID, dateAdded, dateModified, clientDateModified, libraryID, key, version, synced) \
             VALUES (?1, ?2, ?2, ?2, ?3, ?4, ?5, 1)",
            params![type_id, stamp, library, key, 10 + n],
        )?;
        let item_id = self.conn.last_insert_rowid();
        for (field, value) in fields {
            self.set_field(item_id, field, value)?;
        }
        for (order, (ctype, first, last)) in creators.iter().enumerate() {
            let mode = i64::from(first.is_none());
            let first = first.unwrap_or_default();
            self.conn.execute(
                "INSERT OR IGNORE INTO creators (firstName, lastName, fieldMode) VALUES (?1, ?2, ?3)",
                params![first, last, mode],
            )?;
            let creator_id: i64 = self.conn.query_row(
                "SELECT creatorID FROM creators WHERE firstName = ?1 AND lastName = ?2 AND fieldMode = ?3",
                params![first, last, mode],
                |r| r.get(0),
            )?;
            let ctype_id = self.id_of(
                "SELECT creatorTypeID FROM creatorTypes WHERE creatorType = ?1",
                ctype,
            )?;
            self.conn.execute(
                "INSERT INTO itemCreators VALUES (?1, ?2, ?3, ?4)",
                params![item_id, creator_id, ctype_id, order as i64],
            )?;
        }
        for tag in tags {
            let (name, kind) = match tag.strip_prefix("auto:") {
                Some(t) => (t, 1),
                None => (*tag, 0),
            };
            self.conn
                .execute("INSERT OR IGNORE INTO tags (name) VALUES (?1)", [name])?;
            let tag_id = self.id_of("SELECT tagID FROM tags WHERE name = ?1", name)?;
            self.conn.execute(
                "INSERT INTO itemTags VALUES (?1, ?2, ?3)",
                params![item_id, tag_id, kind],
            )?;
        }
        Ok(item_id)
    }

    /// One field value, shared through `itemDataValues` as Zotero shares it.
    pub fn set_field(&self, item_id: i64, field: &str, value: &str) -> Result<()> {
        let field_id = self.id_of("SELECT fieldID FROM fields WHERE fieldName = ?1", field)?;
        self.conn.execute(
            "INSERT OR IGNORE INTO itemDataValues (value) VALUES (?1)",
            [value],
        )?;
        let value_id = self.id_of("SELECT valueID FROM itemDataValues WHERE value = ?1", value)?;
        self.conn.execute(
            "INSERT INTO itemData VALUES (?1, ?2, ?3)",
            params![item_id, field_id, value_id],
        )?;
        Ok(())
    }

    /// A note (standalone when `parent` is `None`): an item of type note plus `itemNotes`.
    pub fn note(&self, library: i64, key: &str, parent: Option<i64>, html: &str) -> Result<i64> {
        let id = self.item(library, key, "note", &[], &[], &[])?;
        // Zotero's note title (`Zotero.Utilities.Item.noteToTitle`): the first line of text.
        let mut text = String::new();
        let mut in_tag = false;
        for c in html.chars() {
            match c {
                '<' => in_tag = true,
                '>' => {
                    in_tag = false;
                    text.push('\n');
                }
                c if !in_tag => text.push(c),
                _ => {}
            }
        }
        let title: String = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .chars()
            .take(80)
            .collect();
        self.conn.execute(
            "INSERT INTO itemNotes VALUES (?1, ?2, ?3, ?4)",
            params![id, parent, html, title],
        )?;
        Ok(id)
    }

    /// A stored file attachment (`linkMode` 0, imported file, `path` 'storage:<name>') with,
    /// when given, its cached full text in `storage/<KEY>/.zotero-ft-cache` and its
    /// `fulltextItems` row (`Zotero.FullText.indexItems`).
    pub fn attachment(
        &self,
        library: i64,
        key: &str,
        parent: Option<i64>,
        title: &str,
        filename: &str,
        fulltext: Option<(&str, i64)>,
    ) -> Result<i64> {
        let id = self.item(library, key, "attachment", &[("title", title)], &[], &[])?;
        self.conn.execute(
            "INSERT INTO itemAttachments (itemID, parentItemID, linkMode, contentType, path, storageModTime, storageHash) \
             VALUES (?1, ?2, 0, 'application/pdf', ?3, 1700000000000, 'd41d8cd98f00b204e9800998ecf8427e')",
            params![id, parent, format!("storage:{filename}")],
        )?;
        let folder = self.dir.join("storage").join(key);
        let io = |e: std::io::Error| rusqlite::Error::ToSqlConversionFailure(Box::new(e));
        std::fs::create_dir_all(&folder).map_err(io)?;
        std::fs::write(folder.join(filename), b"%PDF-1.4 fixture").map_err(io)?;
        if let Some((text, pages)) = fulltext {
            std::fs::write(folder.join(".zotero-ft-cache"), text).map_err(io)?;
            self.conn.execute(
                "INSERT INTO fulltextItems (itemID, indexedPages, totalPages, version, synced) VALUES (?1, ?2, ?2, 3, 1)",
                params![id, pages],
            )?;
        }
        Ok(id)
    }

    /// An annotation on a PDF attachment (`Item._saveData` for annotations: `itemAnnotations`).
    pub fn annotation(&self, library: i64, parent: i64, a: &AnnotationSpec<'_>) -> Result<i64> {
        let id = self.item(library, a.key, "annotation", &[], &[], &[])?;
        self.conn.execute(
            "INSERT INTO itemAnnotations (itemID, parentItemID, type, text, comment, color, pageLabel, sortIndex, position, isExternal) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0)",
            params![
                id,
                parent,
                a.kind,
                a.text,
                a.comment,
                a.color,
                a.page_label,
                a.sort_index,
                r#"{"pageIndex":0,"rects":[[10,10,100,20]]}"#
            ],
        )?;
        Ok(id)
    }

    pub fn collection(
        &self,
        library: i64,
        key: &str,
        name: &str,
        parent: Option<i64>,
    ) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO collections (collectionName, parentCollectionID, libraryID, key, version, synced) \
             VALUES (?1, ?2, ?3, ?4, 5, 1)",
            params![name, parent, library, key],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    pub fn file(&self, collection: i64, item: i64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO collectionItems (collectionID, itemID) VALUES (?1, ?2)",
            params![collection, item],
        )?;
        Ok(())
    }

    /// Moves an item to the trash (`Item.deleted = true`: a `deletedItems` row).
    pub fn trash(&self, item: i64) -> Result<()> {
        self.conn.execute(
            "INSERT INTO deletedItems (itemID, dateDeleted) VALUES (?1, '2024-03-01 09:00:00')",
            [item],
        )?;
        Ok(())
    }

    /// Flags an item retracted as `Zotero.Retractions._addEntry` stores it: the Retraction
    /// Watch entry as JSON (`date`, `reasons`, `urls`, and the retraction notice's `doi` or
    /// `pmid`), `flag` 0 (FLAG_NORMAL).
    pub fn retract(&self, item: i64, data: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO retractedItems (itemID, data, flag) VALUES (?1, ?2, 0)",
            params![item, data],
        )?;
        Ok(())
    }
}

/// The keys of the standard fixture, for tests.
pub mod keys {
    pub const ARTICLE: &str = "ART00001";
    pub const BOOK: &str = "BOOK0001";
    pub const SECTION: &str = "SECT0001";
    pub const PAPER: &str = "CONF0001";
    pub const THESIS: &str = "THES0001";
    pub const RETRACTED: &str = "RETR0001";
    pub const TRASHED: &str = "TRSH0001";
    pub const NOTE: &str = "NOTE0001";
    pub const STANDALONE_NOTE: &str = "NOTE0002";
    pub const PDF: &str = "PDF00001";
    pub const HIGHLIGHT: &str = "ANNO0001";
    pub const COMMENT: &str = "ANNO0002";
    pub const TOP_COLLECTION: &str = "COLL0001";
    pub const SUB_COLLECTION: &str = "COLL0002";
    pub const GROUP_A: u64 = 4001;
    pub const GROUP_B: u64 = 4002;
    pub const GROUP_ITEM: &str = "GRPA0001";
}

/// The full text cached for the fixture's PDF.
pub const PDF_TEXT: &str = "Photosynthesis in cyanobacteria. The chlorophyll fluorescence \
    was measured under varying light. Results show a quantum yield of 0.8.";

/// The standard fixture: five item types, creators in order, tags, nested collections,
/// notes, a PDF with annotations and cached full text, a trashed item, a retracted item,
/// two group libraries.
pub fn standard(dir: &Path) -> Result<Builder> {
    use keys::*;
    let b = Builder::create(dir)?;
    let art = b.item(
        1,
        ARTICLE,
        "journalArticle",
        &[
            ("title", "Photosynthesis in cyanobacteria"),
            ("publicationTitle", "Journal of Plant Science"),
            ("date", "2017-12-00 December 2017"),
            ("volume", "12"),
            ("pages", "1-20"),
            ("DOI", "10.1234/jps.2017.1"),
            ("abstractNote", "We measure light."),
        ],
        &[
            ("author", Some("Ada"), "Lovelace"),
            ("author", Some("Charles"), "Babbage"),
            ("editor", None, "Royal Society"),
        ],
        &["biology", "auto:light"],
    )?;
    let book = b.item(
        1,
        BOOK,
        "book",
        &[
            ("title", "The Structure of Scientific Revolutions"),
            ("publisher", "University of Chicago Press"),
            ("date", "1962-00-00 1962"),
            ("ISBN", "9780226458083"),
        ],
        &[("author", Some("Thomas"), "Kuhn")],
        &["philosophy"],
    )?;
    let section = b.item(
        1,
        SECTION,
        "bookSection",
        &[
            ("title", "Normal science"),
            ("bookTitle", "The Structure of Scientific Revolutions"),
            ("pages", "23-34"),
            ("date", "1962-00-00 1962"),
        ],
        &[
            ("author", Some("Thomas"), "Kuhn"),
            ("bookAuthor", Some("Thomas"), "Kuhn"),
        ],
        &[],
    )?;
    let paper = b.item(
        1,
        PAPER,
        "conferencePaper",
        &[
            ("title", "Attention is all you need"),
            (
                "proceedingsTitle",
                "Advances in Neural Information Processing Systems",
            ),
            ("conferenceName", "NeurIPS 2017"),
            ("date", "2017-00-00 2017"),
        ],
        &[
            ("author", Some("Ashish"), "Vaswani"),
            ("author", Some("Noam"), "Shazeer"),
        ],
        &["machine learning"],
    )?;
    let thesis = b.item(
        1,
        THESIS,
        "thesis",
        &[
            ("title", "On quantum yields"),
            ("university", "University of Oxford"),
            ("thesisType", "PhD thesis"),
            ("date", "2020-05-00 May 2020"),
        ],
        &[("author", Some("Grace"), "Hopper")],
        &["biology"],
    )?;
    let retracted = b.item(
        1,
        RETRACTED,
        "journalArticle",
        &[
            ("title", "A fabricated result"),
            ("DOI", "10.5555/fake.2019"),
            ("date", "2019-03-00 March 2019"),
        ],
        &[("author", Some("Jan"), "Schön")],
        &[],
    )?;
    b.retract(
        retracted,
        r#"{"date":"2020-06-01","reasons":["Falsification/Fabrication of Data"],"urls":["https://retractionwatch.com/notice/1"],"doi":"10.5555/retraction.2020"}"#,
    )?;
    let trashed = b.item(
        1,
        TRASHED,
        "book",
        &[("title", "A discarded draft")],
        &[("author", Some("Ada"), "Lovelace")],
        &[],
    )?;
    b.trash(trashed)?;
    b.note(
        1,
        NOTE,
        Some(art),
        "<p>Read this twice: the methods matter.</p>",
    )?;
    b.note(
        1,
        STANDALONE_NOTE,
        None,
        "<h1>Reading list</h1><p>Kuhn first.</p>",
    )?;
    let pdf = b.attachment(
        1,
        PDF,
        Some(art),
        "Full Text PDF",
        "lovelace2017.pdf",
        Some((PDF_TEXT, 2)),
    )?;
    b.annotation(
        1,
        pdf,
        &AnnotationSpec {
            key: COMMENT,
            kind: 1,
            text: Some("quantum yield of 0.8"),
            comment: Some("Key number"),
            color: "#ff6666",
            page_label: "2",
            sort_index: "00001|000200|00100",
        },
    )?;
    b.annotation(
        1,
        pdf,
        &AnnotationSpec {
            key: HIGHLIGHT,
            kind: 1,
            text: Some("chlorophyll fluorescence"),
            comment: None,
            color: "#ffd400",
            page_label: "1",
            sort_index: "00000|000100|00050",
        },
    )?;
    let top = b.collection(1, TOP_COLLECTION, "Science", None)?;
    let sub = b.collection(1, SUB_COLLECTION, "Biology", Some(top))?;
    b.file(top, book)?;
    b.file(top, section)?;
    b.file(sub, art)?;
    b.file(sub, thesis)?;
    b.file(sub, retracted)?;
    let _ = paper;
    let ga = b.group(GROUP_A as i64, "Lab group")?;
    let gb = b.group(GROUP_B as i64, "Reading club")?;
    b.item(
        ga,
        GROUP_ITEM,
        "journalArticle",
        &[("title", "Shared protocol"), ("date", "2021-00-00 2021")],
        &[("author", Some("Rosalind"), "Franklin")],
        &["lab"],
    )?;
    b.item(
        gb,
        "GRPB0001",
        "book",
        &[("title", "Club book")],
        &[("author", Some("Mary"), "Shelley")],
        &[],
    )?;
    Ok(b)
}

/// A library of `n` generated items for benchmarks: journal articles with three authors,
/// a tag each from a small set, one collection per 100 items.
pub fn generated(dir: &Path, n: usize) -> Result<Builder> {
    let b = Builder::create(dir)?;
    b.conn.execute_batch("BEGIN")?;
    let mut collection = 0;
    for i in 0..n {
        if i % 100 == 0 {
            collection = b.collection(1, &format!("C{i:07}"), &format!("Collection {i}"), None)?;
        }
        let title = format!("Study {i} of topic {} in field {}", i % 97, i % 13);
        let year = format!("{}-00-00 {}", 1950 + i % 75, 1950 + i % 75);
        let tag = format!("tag{}", i % 50);
        let last = format!("Author{}", i % 1000);
        let id = b.item(
            1,
            &format!("K{i:07}"),
            "journalArticle",
            &[
                ("title", &title),
                ("date", &year),
                ("publicationTitle", "Generated Journal"),
            ],
            &[
                ("author", Some("First"), &last),
                ("author", Some("Second"), "Coauthor"),
                ("author", Some("Third"), &format!("Writer{}", i % 300)),
            ],
            &[&tag],
        )?;
        b.file(collection, id)?;
    }
    b.conn.execute_batch("COMMIT")?;
    Ok(b)
}

/// Where a builder's database is.
pub fn db_path(dir: &Path) -> PathBuf {
    dir.join("zotero.sqlite")
}
