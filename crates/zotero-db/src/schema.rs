//! The database's schema version, checked against the versions this reader knows, and the
//! names of item types, fields and creator types as the database itself holds them (Zotero
//! fills them from its bundled global schema at start-up, numbering them its own way: IDs
//! are only ever mapped to names here, never assumed).

use std::collections::HashMap;
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use crate::error::DbError;

/// The 'userdata' schema versions of released Zotero versions (the first line of
/// zotero/zotero `resource/schema/userdata.sql` at each release tag).
pub const KNOWN_USERDATA_VERSIONS: &[(i64, &str)] = &[
    (123, "Zotero 7 and 8"),
    (125, "Zotero 9"),
    (129, "Zotero 10"),
];

/// The newest 'userdata' version this reader understands; a newer one may have moved what it
/// reads, and gets an error rather than a wrong answer.
pub const NEWEST_USERDATA_VERSION: i64 = 129;

/// The oldest 'userdata' version read (Zotero 7's betas: annotations and retractions are in).
pub const OLDEST_USERDATA_VERSION: i64 = 120;

/// The schema version a database declares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaVersion {
    pub userdata: i64,
    /// The Zotero release that version belongs to, when it is a released one.
    pub release: Option<&'static str>,
}

impl std::fmt::Display for SchemaVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.release {
            Some(r) => write!(f, "{} ({r})", self.userdata),
            None => write!(f, "{}", self.userdata),
        }
    }
}

/// Reads and checks the version; `path` names the original file in errors.
pub(crate) fn check_version(conn: &Connection, path: &Path) -> Result<SchemaVersion, DbError> {
    let not_zotero = |reason: String| DbError::NotZotero {
        path: path.to_path_buf(),
        reason,
    };
    let has_version: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'version'",
            [],
            |r| r.get(0),
        )
        .optional()
        .map_err(|e| DbError::unreadable(path, e))?;
    if has_version.is_none() {
        return Err(not_zotero("it has no 'version' table".into()));
    }
    let userdata: Option<i64> = conn
        .query_row(
            "SELECT version FROM version WHERE schema = 'userdata'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let Some(userdata) = userdata else {
        return Err(not_zotero(
            "its 'version' table names no userdata schema".into(),
        ));
    };
    if userdata > NEWEST_USERDATA_VERSION {
        return Err(DbError::NewerSchema {
            found: userdata,
            known: NEWEST_USERDATA_VERSION,
        });
    }
    if userdata < OLDEST_USERDATA_VERSION {
        return Err(DbError::OlderSchema {
            found: userdata,
            oldest: OLDEST_USERDATA_VERSION,
        });
    }
    let release = KNOWN_USERDATA_VERSIONS
        .iter()
        .find(|(v, _)| *v == userdata)
        .map(|(_, r)| *r);
    Ok(SchemaVersion { userdata, release })
}

/// Item types, fields and creator types by ID, read from the database.
#[derive(Debug, Default)]
pub(crate) struct Names {
    pub item_types: HashMap<i64, String>,
    pub fields: HashMap<i64, String>,
    pub creator_types: HashMap<i64, String>,
    /// `(itemTypeID, fieldID)` → the base field's name (`proceedingsTitle` → `publicationTitle`).
    pub base: HashMap<(i64, i64), String>,
    /// Each item type's fields in Zotero's display order (`itemTypeFields.orderIndex`).
    pub type_fields: HashMap<i64, Vec<i64>>,
}

fn id_names(conn: &Connection, sql: &str) -> rusqlite::Result<HashMap<i64, String>> {
    let mut stmt = conn.prepare(sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
    rows.collect()
}

impl Names {
    /// The `*Combined` tables (built-in and custom, as Zotero fills them at start-up), else
    /// the built-in tables alone.
    pub(crate) fn read(conn: &Connection) -> rusqlite::Result<Self> {
        let mut item_types = id_names(conn, "SELECT itemTypeID, typeName FROM itemTypes")?;
        item_types.extend(id_names(
            conn,
            "SELECT itemTypeID, typeName FROM itemTypesCombined",
        )?);
        let mut fields = id_names(conn, "SELECT fieldID, fieldName FROM fields")?;
        fields.extend(id_names(
            conn,
            "SELECT fieldID, fieldName FROM fieldsCombined",
        )?);
        let creator_types = id_names(conn, "SELECT creatorTypeID, creatorType FROM creatorTypes")?;
        let mut base = HashMap::new();
        let mut stmt =
            conn.prepare("SELECT itemTypeID, fieldID, baseFieldID FROM baseFieldMappings")?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })?;
        for row in rows {
            let (t, f, b) = row?;
            if let Some(name) = fields.get(&b) {
                base.insert((t, f), name.clone());
            }
        }
        let mut type_fields: HashMap<i64, Vec<i64>> = HashMap::new();
        let mut stmt = conn.prepare(
            "SELECT itemTypeID, fieldID FROM itemTypeFields ORDER BY itemTypeID, orderIndex",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (t, f) = row?;
            type_fields.entry(t).or_default().push(f);
        }
        Ok(Self {
            item_types,
            fields,
            creator_types,
            base,
            type_fields,
        })
    }

    /// The field's base field name, or its own name.
    pub(crate) fn base_name(&self, item_type: i64, field: i64) -> Option<&str> {
        self.base
            .get(&(item_type, field))
            .or_else(|| self.fields.get(&field))
            .map(String::as_str)
    }
}
