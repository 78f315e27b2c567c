//! The largest library: everything a library can hold a lot of, at once, built in code (no
//! fixture file): 10,000 items, 250 nested collections, thousands of tags, an item with a
//! huge abstract, 1,500 creators and 3,000 tags, megabytes of full text, long notes and
//! thousands of annotations on one PDF. Tests of answer budgets call every reading tool on
//! it; the keys and the query they need are the constants below.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::library::{creator_summary, Library, TITLE_WORDS};
use super::stored::FullText;

/// Regular items of the plain kind (short records, two tags each).
pub const PLAIN_ITEMS: usize = 10_000;
/// Items whose titles hold [`QUERY`], each with a long abstract, 200 creators and 300 tags:
/// more than one answer can hold on one page of a search or listing.
pub const LARGE_ITEMS: usize = 30;
/// Collections: 10 at the top, 4 under each, 5 under each of those.
pub const COLLECTIONS: usize = 250;
/// Distinct tags of the plain items.
pub const TAG_POOL: usize = 4_000;
/// The item with the most of everything (the most recently modified of the library).
pub const HEAVY_ITEM: &str = "HEAVY222";
/// Its PDF: megabytes of full text and [`ANNOTATIONS`] annotations.
pub const HEAVY_PDF: &str = "HEAVYPDF";
/// Its HTML snapshot: a megabyte of full text.
pub const HEAVY_SNAPSHOT: &str = "HEAVYHTM";
/// Its longest note (hundreds of thousands of characters).
pub const HEAVY_NOTE: &str = "HEAVYNTE";
/// A word of the titles of the heavy and large items (a quick search finds them all).
pub const QUERY: &str = "budget";
/// Annotations on [`HEAVY_PDF`].
pub const ANNOTATIONS: usize = 2_000;
/// Notes under [`HEAVY_ITEM`] (one of them [`HEAVY_NOTE`]).
pub const NOTES: usize = 40;
/// Characters of [`HEAVY_PDF`]'s full text.
pub const PDF_TEXT_CHARS: usize = 2_000_000;
/// Characters of [`HEAVY_ITEM`]'s abstract (Zotero's field limit is 65,535 bytes).
pub const HEAVY_ABSTRACT_CHARS: usize = 60_000;
/// Creators of [`HEAVY_ITEM`].
pub const HEAVY_CREATORS: usize = 1_500;
/// Tags of [`HEAVY_ITEM`].
pub const HEAVY_TAGS: usize = 3_000;

/// Characters of Zotero object keys (no 0, 1, I or O).
const KEY_CHARS: &[u8] = b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ";

/// The `n`th key of a kind: `prefix` then `n` in base 32, so kinds never collide.
fn key(prefix: char, n: usize) -> String {
    let mut digits = [b'2'; 7];
    let mut rest = n;
    for d in digits.iter_mut().rev() {
        *d = KEY_CHARS[rest % KEY_CHARS.len()];
        rest /= KEY_CHARS.len();
    }
    let mut k = String::with_capacity(8);
    k.push(prefix);
    k.extend(digits.iter().map(|b| *b as char));
    k
}

/// About `chars` characters of prose made of the title words, with quotes, backslashes,
/// tabs and line breaks (which JSON escapes) and a little non-ASCII; deterministic per `seed`.
fn prose(chars: usize, seed: usize) -> String {
    let extras = [
        "\"quoted\"",
        "back\\slash",
        "tab\there",
        "naïve",
        "Zürich",
        "—",
        "α-β",
    ];
    let mut out = String::with_capacity(chars + 16);
    let mut count = 0;
    let mut i = seed;
    while count < chars {
        i = i
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let pick = i >> 33;
        let word = if pick.is_multiple_of(11) {
            extras[pick % extras.len()]
        } else {
            TITLE_WORDS[pick % TITLE_WORDS.len()]
        };
        let sep = match pick % 23 {
            0 => '\n',
            1 => '.',
            _ => ' ',
        };
        for c in word.chars().chain(std::iter::once(sep)) {
            if count == chars {
                break;
            }
            out.push(c);
            count += 1;
        }
    }
    out
}

fn item(key: &str, version: u64, data: Value) -> Value {
    let mut meta = json!({});
    let summary = creator_summary(&data["creators"]);
    if !summary.is_empty() {
        meta["creatorSummary"] = json!(summary);
    }
    if let Some(date) = data["date"].as_str().filter(|d| !d.is_empty()) {
        meta["parsedDate"] = json!(date);
    }
    super::library::wrap("items", key, version, meta, data)
}

fn creators(n: usize, seed: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let s = seed + i;
            json!({"creatorType": "author",
                   "firstName": format!("{} {}", TITLE_WORDS[s % 20], TITLE_WORDS[(s / 20) % 20]),
                   "lastName": format!("Author-{s:05} von {}", TITLE_WORDS[(s * 7) % 20])})
        })
        .collect()
}

fn tag_name(n: usize) -> String {
    format!(
        "topic {n:04}: {} {} {}",
        TITLE_WORDS[n % 20],
        TITLE_WORDS[(n / 20) % 20],
        TITLE_WORDS[(n * 3) % 20]
    )
}

/// The collection keys, parents first.
fn collections() -> Vec<Value> {
    let mut out = Vec::with_capacity(COLLECTIONS);
    let mut add = |n: usize, parent: Option<&str>, name: String| {
        let k = key('C', n);
        let parent = parent.map_or(json!(false), |p| json!(p));
        let data = json!({"key": k, "version": 1, "name": name,
                          "parentCollection": parent, "relations": {}});
        out.push(super::library::wrap("collections", &k, 1, json!({}), data));
        k
    };
    let mut n = 0;
    for top in 0..10 {
        let t = add(n, None, format!("Area {top}: {}", prose(120, n)));
        n += 1;
        for mid in 0..4 {
            let m = add(n, Some(&t), format!("Topic {top}.{mid}: {}", prose(200, n)));
            n += 1;
            for low in 0..5 {
                // Some names at Zotero's limit of 255 characters.
                let len = if low == 4 { 240 } else { 60 };
                add(
                    n,
                    Some(&m),
                    format!("Thread {top}.{mid}.{low}: {}", prose(len, n)),
                );
                n += 1;
            }
        }
    }
    out
}

fn date(n: usize) -> String {
    format!(
        "20{:02}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        10 + n / 1_000_000 % 13,
        1 + n / 40_000 % 12,
        1 + n / 1_440 % 28,
        n / 60 % 24,
        n % 60,
        n % 59
    )
}

impl Library {
    /// The largest library (see the module's constants): built in well under a second.
    pub fn largest() -> Library {
        let colls = collections();
        let coll_keys: Vec<String> = colls
            .iter()
            .filter_map(|c| c["key"].as_str().map(str::to_string))
            .collect();
        let coll_of = |n: usize| coll_keys.get(n % coll_keys.len()).cloned();
        let mut items = Vec::with_capacity(PLAIN_ITEMS + LARGE_ITEMS + ANNOTATIONS + NOTES + 3);
        for i in 0..PLAIN_ITEMS {
            let k = key('T', i);
            let title = format!(
                "{} {} {} {}",
                TITLE_WORDS[i % 20],
                TITLE_WORDS[(i / 20) % 20],
                TITLE_WORDS[(i / 400) % 20],
                i
            );
            let data = json!({
                "key": k, "version": i + 1, "itemType": "journalArticle", "title": title,
                "creators": creators(1 + i % 3, i), "abstractNote": prose(200, i),
                "date": format!("{}", 1950 + i % 75), "publicationTitle": "Journal of Many Items",
                "DOI": format!("10.5555/many.{i}"), "url": "", "extra": "",
                "tags": [{"tag": tag_name(i % TAG_POOL)}, {"tag": tag_name((i * 7 + 1) % TAG_POOL)}],
                "collections": coll_of(i).into_iter().collect::<Vec<_>>(), "relations": {},
                "dateAdded": date(i), "dateModified": date(i),
            });
            items.push(item(&k, i as u64 + 1, data));
        }
        let base = PLAIN_ITEMS as u64;
        for i in 0..LARGE_ITEMS {
            let k = key('L', i);
            let data = json!({
                "key": k, "version": base + 1 + i as u64, "itemType": "journalArticle",
                "title": format!("A {QUERY} study {i}: {}", prose(300, i)),
                "creators": creators(200, 1000 + i * 200), "abstractNote": prose(5_000, i),
                "date": "2025-06-01", "publicationTitle": prose(200, i + 7),
                "DOI": format!("10.5555/large.{i}"), "url": format!("https://example.org/{i}"),
                "extra": prose(1_000, i + 3),
                "tags": (0..300).map(|t| json!({"tag": tag_name(TAG_POOL + i * 300 + t)})).collect::<Vec<_>>(),
                "collections": (0..20).filter_map(|c| coll_of(i + c * 11)).collect::<Vec<_>>(),
                "relations": {},
                "dateAdded": format!("2026-01-01T00:{i:02}:00Z"),
                "dateModified": format!("2026-01-01T00:{i:02}:00Z"),
            });
            items.push(item(&k, base + 1 + i as u64, data));
        }
        let v = base + LARGE_ITEMS as u64 + 1;
        let relations: Vec<String> = (0..200)
            .map(|n| format!("http://zotero.org/users/475425/items/{}", key('T', n)))
            .collect();
        let heavy = json!({
            "key": HEAVY_ITEM, "version": v, "itemType": "journalArticle",
            "title": format!("The {QUERY} of everything: {}", prose(1_000, 1)),
            "creators": creators(HEAVY_CREATORS, 50_000),
            "abstractNote": prose(HEAVY_ABSTRACT_CHARS, 2),
            "date": "2026-01-15", "publicationTitle": prose(500, 3), "volume": "12",
            "DOI": "10.5555/heavy", "url": "https://example.org/heavy",
            "extra": prose(20_000, 4),
            "tags": (0..HEAVY_TAGS).map(|t| json!({"tag": format!("{} #{t}", prose(60, t))})).collect::<Vec<_>>(),
            "collections": coll_keys, "relations": {"dc:relation": relations},
            "dateAdded": "2026-02-01T00:00:00Z", "dateModified": "2026-02-01T00:00:00Z",
        });
        items.push(item(HEAVY_ITEM, v, heavy));
        let attachment = |k: &str, title: &str, ct: &str, file: &str| {
            json!({
                "key": k, "version": v, "parentItem": HEAVY_ITEM, "itemType": "attachment",
                "linkMode": "imported_file", "title": title, "accessDate": "", "url": "",
                "note": "", "contentType": ct, "charset": "", "filename": file,
                "md5": "0123456789abcdef0123456789abcdef", "mtime": 1_767_225_600_000u64,
                "tags": [], "relations": {},
                "dateAdded": "2026-02-01T00:00:00Z", "dateModified": "2026-02-01T00:00:00Z",
            })
        };
        items.push(item(
            HEAVY_PDF,
            v,
            attachment(HEAVY_PDF, "Full Text PDF", "application/pdf", "heavy.pdf"),
        ));
        items.push(item(
            HEAVY_SNAPSHOT,
            v,
            attachment(HEAVY_SNAPSHOT, "Snapshot", "text/html", "heavy.html"),
        ));
        for n in 0..NOTES {
            let k = if n == 0 {
                HEAVY_NOTE.to_string()
            } else {
                key('N', n)
            };
            let paragraphs = if n == 0 { 400 } else { 25 };
            let body: String = (0..paragraphs)
                .map(|p| format!("<p>{}</p>", prose(1_000, n * 1_000 + p)))
                .collect();
            let note =
                format!("<div data-schema-version=\"9\"><h1>Long note {n}</h1>{body}</div>",);
            let data = json!({
                "key": k, "version": v, "parentItem": HEAVY_ITEM, "itemType": "note",
                "note": note, "tags": [{"tag": tag_name(n)}], "relations": {},
                "dateAdded": format!("2026-02-01T01:{n:02}:00Z"),
                "dateModified": format!("2026-02-01T01:{n:02}:00Z"),
            });
            items.push(item(&k, v, data));
        }
        let colors = ["#ffd400", "#ff6666", "#5fb236", "#2ea8e5", "#a28ae5"];
        for n in 0..ANNOTATIONS {
            let k = key('A', n);
            let page = n / 10;
            let data = json!({
                "key": k, "version": v, "parentItem": HEAVY_PDF, "itemType": "annotation",
                "annotationType": "highlight", "annotationText": prose(600, n),
                "annotationComment": prose(400, n + 1), "annotationColor": colors[n % 5],
                "annotationPageLabel": format!("{}", page + 1),
                "annotationSortIndex": format!("{page:05}|{:06}|{:05}", n % 10 * 100, n % 10 * 50),
                "annotationPosition": format!("{{\"pageIndex\":{page},\"rects\":[[60.0,500.0,280.0,510.0]]}}"),
                "tags": [{"tag": tag_name(n % 50)}, {"tag": tag_name(n % 7 + 100)}],
                "relations": {},
                "dateAdded": "2026-02-01T02:00:00Z", "dateModified": "2026-02-01T02:00:00Z",
            });
            items.push(item(&k, v, data));
        }
        let mut fulltext = BTreeMap::new();
        let mut pdf = FullText::pdf(&prose(PDF_TEXT_CHARS, 5), 800, 800);
        pdf.version = v;
        fulltext.insert(HEAVY_PDF.to_string(), pdf);
        let mut html = FullText::document(&prose(PDF_TEXT_CHARS / 2, 6));
        html.version = v;
        fulltext.insert(HEAVY_SNAPSHOT.to_string(), html);
        Library {
            items,
            collections: colls,
            version: v,
            fulltext,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_library_has_what_it_says() {
        let lib = Library::largest();
        let of_type = |t: &str| {
            lib.items
                .iter()
                .filter(|i| i["data"]["itemType"] == t)
                .count()
        };
        assert_eq!(of_type("journalArticle"), PLAIN_ITEMS + LARGE_ITEMS + 1);
        assert_eq!(of_type("annotation"), ANNOTATIONS);
        assert_eq!(of_type("note"), NOTES);
        assert_eq!(lib.collections.len(), COLLECTIONS);
        let mut keys: Vec<&str> = lib.items.iter().filter_map(|i| i["key"].as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), lib.items.len(), "keys are unique");
        assert!(keys
            .iter()
            .all(|k| k.len() == 8 && k.bytes().all(|b| KEY_CHARS.contains(&b))));
        let heavy = lib.items.iter().find(|i| i["key"] == HEAVY_ITEM).unwrap();
        assert_eq!(
            heavy["data"]["abstractNote"]
                .as_str()
                .unwrap()
                .chars()
                .count(),
            HEAVY_ABSTRACT_CHARS
        );
        assert_eq!(
            lib.fulltext[HEAVY_PDF].content.chars().count(),
            PDF_TEXT_CHARS
        );
        let nested = lib
            .collections
            .iter()
            .filter(|c| c["data"]["parentCollection"].is_string())
            .count();
        assert_eq!(nested, 240);
    }
}
