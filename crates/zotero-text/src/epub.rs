//! EPUB: a zip (read with bounded entry count, sizes and total inflated bytes), its
//! package file found through `META-INF/container.xml`, and one page per spine item in
//! spine order, the text of each XHTML chapter. Labels are the item's number (page-list
//! navigation is not read).

use std::collections::HashMap;
use std::io::{Cursor, Read};

use zip::ZipArchive;

use crate::budget::Budget;
use crate::document::{Page, PageStatus, TextError};

/// Entries in the archive at most: a real book has hundreds.
const MAX_ENTRIES: usize = 20_000;

pub(crate) fn extract(bytes: &[u8], budget: &Budget) -> Result<Vec<Page>, TextError> {
    let mut zip = ZipArchive::new(Cursor::new(bytes)).map_err(damaged)?;
    if zip.len() > MAX_ENTRIES {
        return Err(TextError::TooManyPages {
            pages: zip.len(),
            limit: MAX_ENTRIES,
        });
    }
    let mut reader = Reader {
        zip: &mut zip,
        inflated: 0,
        budget,
    };
    let container = reader.read("META-INF/container.xml")?;
    let opf_path = crate::html::elements(&container, &["rootfile"], 1, budget)?
        .into_iter()
        .find_map(|(_, attrs)| attr(&attrs, "full-path"))
        .ok_or_else(|| TextError::Damaged {
            reason: "META-INF/container.xml names no package file".to_owned(),
        })?;
    let opf = reader.read(&opf_path)?;
    let base = opf_path.rsplit_once('/').map_or("", |(dir, _)| dir);
    let spine = spine(&opf, base, budget)?;
    if spine.is_empty() {
        return Err(TextError::Damaged {
            reason: "the package file's spine lists no readable item".to_owned(),
        });
    }
    budget.pages(spine.len())?;
    let mut pages = Vec::with_capacity(spine.len());
    for (index, path) in spine.iter().enumerate() {
        budget.check()?;
        let (status, text) = match reader.read(path) {
            Ok(chapter) => (PageStatus::Text, crate::html::text(&chapter, budget)?),
            Err(TextError::Damaged { .. }) => (PageStatus::Damaged, String::new()),
            Err(other) => return Err(other),
        };
        pages.push(Page {
            index: index as u32,
            label: (index + 1).to_string(),
            status,
            text,
            glyphs: Vec::new(),
            view_box: [0.0; 4],
            rotation: 0,
        });
    }
    Ok(pages)
}

fn damaged(err: zip::result::ZipError) -> TextError {
    TextError::Damaged {
        reason: format!("not a readable EPUB (zip): {err}"),
    }
}

fn attr(attrs: &[(String, String)], name: &str) -> Option<String> {
    attrs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
}

/// The archive paths of the spine's items, in order. Manifest and spine together may list
/// at most `MAX_ENTRIES` + the page limit elements (a book has hundreds): past that the
/// file is refused, before any is joined.
fn spine(opf: &[u8], base: &str, budget: &Budget) -> Result<Vec<String>, TextError> {
    let limit = MAX_ENTRIES + budget.limits.max_pages;
    let elements = crate::html::elements(opf, &["item", "itemref"], limit, budget)?;
    if elements.len() > limit {
        let spine = elements.iter().filter(|(tag, _)| tag == "itemref").count();
        return Err(TextError::TooManyPages {
            pages: spine.max(elements.len() - MAX_ENTRIES),
            limit: budget.limits.max_pages,
        });
    }
    let manifest: HashMap<String, String> = elements
        .iter()
        .filter(|(tag, _)| tag == "item")
        .filter_map(|(_, attrs)| Some((attr(attrs, "id")?, attr(attrs, "href")?)))
        .collect();
    let spine: Vec<String> = elements
        .iter()
        .filter(|(tag, _)| tag == "itemref")
        .filter_map(|(_, attrs)| attr(attrs, "idref"))
        .filter_map(|idref| manifest.get(&idref).map(|href| join(base, href)))
        .collect();
    budget.pages(spine.len())?;
    Ok(spine)
}

/// `href` (percent-encoded, relative to the package file's folder) as an archive path.
fn join(base: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or(href);
    let href = percent_decode(href);
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in href.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads entries, charging their inflated size against the decoded limit.
struct Reader<'z, 'a, 'b> {
    zip: &'z mut ZipArchive<Cursor<&'a [u8]>>,
    inflated: usize,
    budget: &'b Budget,
}

impl Reader<'_, '_, '_> {
    fn read(&mut self, path: &str) -> Result<Vec<u8>, TextError> {
        let limit = self.budget.limits.max_decoded_bytes;
        let entry = self.zip.by_name(path).map_err(|e| TextError::Damaged {
            reason: format!("the EPUB has no readable {path}: {e}"),
        })?;
        let room = limit.saturating_sub(self.inflated);
        let mut out = Vec::new();
        // Read one byte past the room: reaching it means the entry is too large, whatever
        // its header claims.
        entry
            .take(room as u64 + 1)
            .read_to_end(&mut out)
            .map_err(|e| TextError::Damaged {
                reason: format!("the EPUB's {path} could not be inflated: {e}"),
            })?;
        if out.len() > room {
            return Err(TextError::DecodedTooLarge { limit });
        }
        self.inflated += out.len();
        Ok(out)
    }
}
