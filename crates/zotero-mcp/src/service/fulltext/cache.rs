//! Extracted documents kept on disk, one JSON file per attachment state (library, key, md5,
//! item version), in `<index dir>/file-text/`: a second read of the same file neither
//! downloads nor extracts it again. Bounded in total size, least recently used out (a hit
//! touches the file's time). An entry that cannot be read back (corrupt, another format, for
//! another attachment) is removed and the document extracted again. Nothing is logged of a
//! document's text.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use zotero_text::{Document, DocumentKind, Glyph, Page, PageStatus};

/// The format of an entry; another one is ignored.
const FORMAT: u32 = 1;

/// Which attachment state an entry is for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheKey {
    pub library: String,
    pub key: String,
    /// The item's `md5`, when it has one.
    pub md5: Option<String>,
    pub version: u64,
}

impl CacheKey {
    fn file_name(&self) -> String {
        // Library and key are `[a-z0-9:]` and `[A-Z0-9]`; an md5 is hex: a safe name.
        let safe = |s: &str| -> String {
            s.chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect()
        };
        format!(
            "{}-{}-{}-{}.json",
            safe(&self.library),
            safe(&self.key),
            safe(self.md5.as_deref().unwrap_or("nomd5")),
            self.version
        )
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    key: CacheKey,
    kind: String,
    pages: Vec<StoredPage>,
}

#[derive(Serialize, Deserialize)]
struct StoredPage {
    index: u32,
    label: String,
    status: String,
    text: String,
    /// `[start, end, x1, y1, x2, y2]` per glyph.
    glyphs: Vec<(u32, u32, f64, f64, f64, f64)>,
    view_box: [f64; 4],
    rotation: u16,
}

fn kind_name(k: DocumentKind) -> &'static str {
    match k {
        DocumentKind::Pdf => "pdf",
        DocumentKind::Epub => "epub",
        DocumentKind::Html => "html",
        DocumentKind::Text => "text",
    }
}

fn kind_of(name: &str) -> Option<DocumentKind> {
    Some(match name {
        "pdf" => DocumentKind::Pdf,
        "epub" => DocumentKind::Epub,
        "html" => DocumentKind::Html,
        "text" => DocumentKind::Text,
        _ => return None,
    })
}

pub fn status_name(s: PageStatus) -> &'static str {
    match s {
        PageStatus::Text => "text",
        PageStatus::NoTextLayer => "no_text_layer",
        PageStatus::Encrypted => "encrypted",
        PageStatus::Damaged => "damaged",
    }
}

fn status_of(name: &str) -> Option<PageStatus> {
    Some(match name {
        "text" => PageStatus::Text,
        "no_text_layer" => PageStatus::NoTextLayer,
        "encrypted" => PageStatus::Encrypted,
        "damaged" => PageStatus::Damaged,
        _ => return None,
    })
}

impl Entry {
    fn of(key: &CacheKey, doc: &Document) -> Self {
        Entry {
            format: FORMAT,
            key: key.clone(),
            kind: kind_name(doc.kind).to_string(),
            pages: doc
                .pages
                .iter()
                .map(|p| StoredPage {
                    index: p.index,
                    label: p.label.clone(),
                    status: status_name(p.status).to_string(),
                    text: p.text.clone(),
                    glyphs: p
                        .glyphs
                        .iter()
                        .map(|g| (g.start, g.end, g.rect[0], g.rect[1], g.rect[2], g.rect[3]))
                        .collect(),
                    view_box: p.view_box,
                    rotation: p.rotation,
                })
                .collect(),
        }
    }

    fn into_document(self, key: &CacheKey) -> Option<Document> {
        if self.format != FORMAT || &self.key != key {
            return None;
        }
        let mut pages = Vec::with_capacity(self.pages.len());
        for p in self.pages {
            let len = p.text.len() as u32;
            let glyphs = p
                .glyphs
                .into_iter()
                .map(|(start, end, x1, y1, x2, y2)| {
                    (start <= end && end <= len).then_some(Glyph {
                        start,
                        end,
                        rect: [x1, y1, x2, y2],
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            pages.push(Page {
                index: p.index,
                label: p.label,
                status: status_of(&p.status)?,
                text: p.text,
                glyphs,
                view_box: p.view_box,
                rotation: p.rotation,
            });
        }
        Some(Document {
            kind: kind_of(&self.kind)?,
            pages,
        })
    }
}

/// The cache directory and its bound.
#[derive(Debug, Clone)]
pub struct DocCache {
    dir: PathBuf,
    max_bytes: u64,
}

impl DocCache {
    pub fn new(index_dir: &Path, max_bytes: u64) -> Self {
        Self {
            dir: index_dir.join("file-text"),
            max_bytes,
        }
    }

    /// The document cached for `key`, if a readable entry is there.
    pub fn get(&self, key: &CacheKey) -> Option<Document> {
        let path = self.dir.join(key.file_name());
        let bytes = std::fs::read(&path).ok()?;
        let doc = serde_json::from_slice::<Entry>(&bytes)
            .ok()
            .and_then(|e| e.into_document(key));
        match &doc {
            // Recently used: eviction goes by this time.
            Some(_) => {
                if let Ok(f) = std::fs::File::options().append(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
            }
            None => {
                tracing::warn!("an unreadable entry of the file-text cache was removed");
                let _ = std::fs::remove_file(&path);
            }
        }
        doc
    }

    /// Keeps `doc` for `key` (written whole, then renamed into place), then removes the
    /// least recently used entries past the bound. Failing to cache is not an error.
    pub fn put(&self, key: &CacheKey, doc: &Document) {
        let Ok(bytes) = serde_json::to_vec(&Entry::of(key, doc)) else {
            return;
        };
        if bytes.len() as u64 > self.max_bytes || std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let path = self.dir.join(key.file_name());
        let tmp = self
            .dir
            .join(format!(".{}.{}.tmp", key.file_name(), std::process::id()));
        if std::fs::write(&tmp, &bytes).is_err() || std::fs::rename(&tmp, &path).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        self.evict();
    }

    /// Removes the oldest entries until the rest fit the bound.
    fn evict(&self) {
        let Ok(read) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = read
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort_by_key(|e| e.0);
        for (_, len, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total = total.saturating_sub(len);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Document {
        Document {
            kind: DocumentKind::Pdf,
            pages: vec![Page {
                index: 0,
                label: "iv".into(),
                status: PageStatus::Text,
                text: text.into(),
                glyphs: vec![Glyph {
                    start: 0,
                    end: 1,
                    rect: [1.0, 2.0, 3.0, 4.5],
                }],
                view_box: [0.0, 0.0, 612.0, 792.0],
                rotation: 90,
            }],
        }
    }

    fn key(k: &str) -> CacheKey {
        CacheKey {
            library: "user".into(),
            key: k.into(),
            md5: Some("abc".into()),
            version: 3,
        }
    }

    #[test]
    fn round_trips_ignores_corrupt_entries_and_evicts_the_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let entry_len = serde_json::to_vec(&Entry::of(&key("AAAA2222"), &doc("x")))
            .unwrap()
            .len() as u64;
        let cache = DocCache::new(dir.path(), entry_len * 2 + 10);
        cache.put(&key("AAAA2222"), &doc("x"));
        assert_eq!(cache.get(&key("AAAA2222")), Some(doc("x")));
        // Another state of the attachment is another entry.
        let mut other = key("AAAA2222");
        other.version = 4;
        assert_eq!(cache.get(&other), None);

        // A corrupt entry is not used, and is removed.
        let path = dir
            .path()
            .join("file-text")
            .join(key("AAAA2222").file_name());
        std::fs::write(&path, b"{not json").unwrap();
        assert_eq!(cache.get(&key("AAAA2222")), None);
        assert!(!path.exists());
        // An entry for another key under this name is not used either.
        std::fs::write(
            &path,
            serde_json::to_vec(&Entry::of(&key("BBBB3333"), &doc("x"))).unwrap(),
        )
        .unwrap();
        assert_eq!(cache.get(&key("AAAA2222")), None);

        // Three entries where two fit: the least recently used goes.
        cache.put(&key("CCCC4444"), &doc("x"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache.put(&key("DDDD5555"), &doc("x"));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(cache.get(&key("CCCC4444")).is_some());
        std::thread::sleep(std::time::Duration::from_millis(20));
        cache.put(&key("EEEE6666"), &doc("x"));
        assert!(cache.get(&key("DDDD5555")).is_none());
        assert!(cache.get(&key("CCCC4444")).is_some());
        assert!(cache.get(&key("EEEE6666")).is_some());
    }
}
