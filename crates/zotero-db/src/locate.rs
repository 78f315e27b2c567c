//! Finding the Zotero data directory: the folder the user named (`ZOTERO_DATA_DIR`), else the
//! `extensions.zotero.dataDir` a Zotero profile's `prefs.js` names, else the default
//! `~/Zotero`. Values come from the caller (configuration is read once, at start).

use std::path::{Path, PathBuf};

use crate::error::DbError;

/// Where the data directory came from, for `check` to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataDirSource {
    /// `ZOTERO_DATA_DIR`.
    Configured,
    /// `extensions.zotero.dataDir` in this `prefs.js`.
    Prefs(PathBuf),
    /// The platform default.
    Default,
}

/// The folders holding Zotero profiles (each profile holds a `prefs.js`), per platform, as
/// Zotero's `Zotero.Profile.getDefaultProfileDir` places them.
fn profile_roots(home: &Path, appdata: Option<&Path>) -> Vec<PathBuf> {
    let mut roots = vec![
        home.join(".zotero").join("zotero"),
        home.join("Library")
            .join("Application Support")
            .join("Zotero")
            .join("Profiles"),
    ];
    if let Some(appdata) = appdata {
        roots.push(appdata.join("Zotero").join("Zotero").join("Profiles"));
    }
    roots
}

/// The default data directories, in the order they are tried.
pub fn default_data_dirs(home: &Path) -> Vec<PathBuf> {
    vec![home.join("Zotero")]
}

/// The `extensions.zotero.dataDir` of a `prefs.js` text, when custom data directories are
/// on (`extensions.zotero.useDataDir`, which Zotero sets with it; absent counts as on).
fn prefs_data_dir(prefs: &str) -> Option<PathBuf> {
    let value_of = |name: &str| {
        prefs.lines().find_map(|line| {
            let rest = line.trim().strip_prefix("user_pref(")?.strip_suffix(");")?;
            let (key, value) = rest.split_once(',')?;
            (key.trim().trim_matches('"') == name).then(|| value.trim().to_string())
        })
    };
    if value_of("extensions.zotero.useDataDir").as_deref() == Some("false") {
        return None;
    }
    let raw = value_of("extensions.zotero.dataDir")?;
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    // prefs.js escapes backslashes (Windows paths) and quotes.
    let path = inner.replace("\\\\", "\\").replace("\\\"", "\"");
    (!path.is_empty()).then(|| PathBuf::from(path))
}

/// The data directory: `configured` when set, else the one a profile's `prefs.js` names,
/// else `~/Zotero`; each must hold `zotero.sqlite`.
pub fn find_data_dir(
    configured: Option<&Path>,
    home: Option<&Path>,
    appdata: Option<&Path>,
) -> Result<(PathBuf, DataDirSource), DbError> {
    if let Some(dir) = configured {
        let db = dir.join("zotero.sqlite");
        if !db.is_file() {
            return Err(DbError::NotFound { path: db });
        }
        return Ok((dir.to_path_buf(), DataDirSource::Configured));
    }
    let Some(home) = home else {
        return Err(DbError::NotFound {
            path: PathBuf::from("~/Zotero/zotero.sqlite"),
        });
    };
    for root in profile_roots(home, appdata) {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut profiles: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        profiles.sort();
        for profile in profiles {
            let prefs = profile.join("prefs.js");
            let Ok(text) = std::fs::read_to_string(&prefs) else {
                continue;
            };
            if let Some(dir) = prefs_data_dir(&text) {
                if dir.join("zotero.sqlite").is_file() {
                    return Ok((dir, DataDirSource::Prefs(prefs)));
                }
            }
        }
    }
    for dir in default_data_dirs(home) {
        if dir.join("zotero.sqlite").is_file() {
            return Ok((dir, DataDirSource::Default));
        }
    }
    Err(DbError::NotFound {
        path: home.join("Zotero").join("zotero.sqlite"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefs_js_data_dir_is_read_with_escapes() {
        let prefs = "// Mozilla User Preferences\n\
            user_pref(\"extensions.zotero.dataDir\", \"C:\\\\Users\\\\ada\\\\Zot\");\n\
            user_pref(\"extensions.zotero.useDataDir\", true);\n";
        assert_eq!(
            prefs_data_dir(prefs),
            Some(PathBuf::from("C:\\Users\\ada\\Zot"))
        );
        let off = "user_pref(\"extensions.zotero.dataDir\", \"/x\");\nuser_pref(\"extensions.zotero.useDataDir\", false);";
        assert_eq!(prefs_data_dir(off), None);
    }

    #[test]
    fn configured_then_prefs_then_default() {
        let home = tempfile::tempdir().unwrap();
        // No database anywhere: the error names where it looked.
        let err = find_data_dir(None, Some(home.path()), None).unwrap_err();
        assert!(err.to_string().contains("ZOTERO_DATA_DIR"), "{err}");

        std::fs::create_dir_all(home.path().join("Zotero")).unwrap();
        std::fs::write(home.path().join("Zotero/zotero.sqlite"), b"").unwrap();
        let (dir, source) = find_data_dir(None, Some(home.path()), None).unwrap();
        assert_eq!(
            (dir, source),
            (home.path().join("Zotero"), DataDirSource::Default)
        );

        let custom = home.path().join("elsewhere");
        std::fs::create_dir_all(&custom).unwrap();
        std::fs::write(custom.join("zotero.sqlite"), b"").unwrap();
        let profile = home.path().join(".zotero/zotero/abcd.default");
        std::fs::create_dir_all(&profile).unwrap();
        std::fs::write(
            profile.join("prefs.js"),
            format!(
                "user_pref(\"extensions.zotero.dataDir\", \"{}\");\n",
                custom.display()
            ),
        )
        .unwrap();
        let (dir, source) = find_data_dir(None, Some(home.path()), None).unwrap();
        assert_eq!(dir, custom);
        assert_eq!(source, DataDirSource::Prefs(profile.join("prefs.js")));

        let (dir, source) = find_data_dir(Some(&custom), None, None).unwrap();
        assert_eq!((dir, source), (custom.clone(), DataDirSource::Configured));
        let missing = home.path().join("nothing");
        assert!(matches!(
            find_data_dir(Some(&missing), None, None),
            Err(DbError::NotFound { .. })
        ));
    }
}
