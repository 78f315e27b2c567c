//! Zotero's own database as a read backend: `ZOTERO_DATA_DIR` (the folder holding
//! `zotero.sqlite` and `storage/`) turns it on; `ZOTERO_DATABASE=1` turns it on with the data
//! directory found as Zotero finds it (a profile's `prefs.js`, else `~/Zotero`).

use std::path::PathBuf;

use super::parse::parse_bool;
use super::ConfigError;

/// Where to look for the database; read once, here, and handed down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseConfig {
    /// `ZOTERO_DATA_DIR`.
    pub data_dir: Option<PathBuf>,
    /// `HOME` (`USERPROFILE` on Windows): the default data directory and the profiles.
    pub home: Option<PathBuf>,
    /// `APPDATA` (Windows profiles).
    pub appdata: Option<PathBuf>,
}

impl DatabaseConfig {
    /// `None` when the database is not used.
    pub(super) fn read(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Self>, ConfigError> {
        let data_dir = get("ZOTERO_DATA_DIR").map(PathBuf::from);
        let on = parse_bool(&get, "ZOTERO_DATABASE", data_dir.is_some())?;
        if !on {
            return Ok(None);
        }
        Ok(Some(Self {
            data_dir,
            home: get("HOME")
                .or_else(|| get("USERPROFILE"))
                .map(PathBuf::from),
            appdata: get("APPDATA").map(PathBuf::from),
        }))
    }

    /// Finds the data directory and opens its database (blocking: at start-up).
    pub fn open(&self) -> Result<zotero_db::ZoteroDb, zotero_db::DbError> {
        let (dir, _) = zotero_db::find_data_dir(
            self.data_dir.as_deref(),
            self.home.as_deref(),
            self.appdata.as_deref(),
        )?;
        zotero_db::ZoteroDb::open(&dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Result<Option<DatabaseConfig>, ConfigError> {
        let get = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        DatabaseConfig::read(&get)
    }

    #[test]
    fn the_data_dir_turns_it_on_and_zotero_database_finds_it() {
        assert_eq!(read(&[]).unwrap(), None);
        let on = read(&[("ZOTERO_DATA_DIR", "/data/Zotero"), ("HOME", "/home/ada")])
            .unwrap()
            .unwrap();
        assert_eq!(on.data_dir, Some(PathBuf::from("/data/Zotero")));
        assert_eq!(on.home, Some(PathBuf::from("/home/ada")));
        let found = read(&[("ZOTERO_DATABASE", "1"), ("USERPROFILE", "C:\\Users\\ada")])
            .unwrap()
            .unwrap();
        assert_eq!(found.data_dir, None);
        assert_eq!(found.home, Some(PathBuf::from("C:\\Users\\ada")));
        assert_eq!(
            read(&[("ZOTERO_DATA_DIR", "/d"), ("ZOTERO_DATABASE", "0")]).unwrap(),
            None
        );
        let e = read(&[("ZOTERO_DATABASE", "maybe")]).unwrap_err();
        assert_eq!(e.var, "ZOTERO_DATABASE");
    }

    #[test]
    fn a_data_dir_without_a_database_is_refused_naming_the_variable() {
        let dir = tempfile::tempdir().unwrap();
        let c = read(&[("ZOTERO_DATA_DIR", dir.path().to_str().unwrap())])
            .unwrap()
            .unwrap();
        let e = c.open().err().unwrap();
        assert!(e.to_string().contains("ZOTERO_DATA_DIR"), "{e}");
    }
}
