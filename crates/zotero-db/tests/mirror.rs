//! The fixture's mirror: a small library given as the web API's wire JSON, written into a
//! fresh database and read back through the database's own answers, section by section —
//! collections (a child listed before its parent, one in the trash), an item's fields, date,
//! creators, tags, version, dates, relations and collections, a trashed item, and a note, an
//! attachment and an annotation under it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use serde_json::{json, Value};
use zotero_db::fixture::Builder;
use zotero_db::{LibraryScope, ZoteroDb};

fn library() -> (Vec<Value>, Vec<Value>) {
    let collections = vec![
        json!({"key": "CHILD234", "version": 7, "data": {"key": "CHILD234", "name": "Child", "parentCollection": "PARENT23"}}),
        json!({"key": "PARENT23", "version": 5, "data": {"key": "PARENT23", "name": "Parent", "parentCollection": false}}),
        json!({"key": "GONE2345", "version": 6, "data": {"key": "GONE2345", "name": "Gone", "deleted": true}}),
    ];
    let items = vec![
        json!({
            "key": "ARTCL234", "version": 12,
            "meta": {"parsedDate": "2017-12"},
            "data": {
                "key": "ARTCL234", "version": 12, "itemType": "journalArticle",
                "title": "Photosynthesis", "date": "December 2017", "DOI": "10.1/x",
                "publicationTitle": "", "lastRead": 1700000000,
                "creators": [
                    {"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"},
                    {"creatorType": "editor", "name": "The Lab"}
                ],
                "tags": [{"tag": "plants"}, {"tag": "imported", "type": 1}],
                "collections": ["CHILD234"],
                "relations": {"dc:relation": ["http://zotero.org/users/1/items/OTHER234"]},
                "dateAdded": "2024-01-02T03:04:05Z", "dateModified": "2024-02-03T04:05:06Z"
            }
        }),
        json!({
            "key": "TRASH234", "version": 3,
            "data": {"key": "TRASH234", "itemType": "book", "title": "Old", "deleted": 1}
        }),
        json!({
            "key": "NOTE2345", "version": 4,
            "data": {"key": "NOTE2345", "itemType": "note", "parentItem": "ARTCL234", "note": "<p>Hi</p>"}
        }),
        json!({
            "key": "ATTCH234", "version": 8,
            "data": {
                "key": "ATTCH234", "itemType": "attachment", "parentItem": "ARTCL234",
                "linkMode": "imported_url", "title": "Full Text PDF", "url": "https://example.org/a.pdf",
                "contentType": "application/pdf", "charset": "", "filename": "a.pdf",
                "md5": "0123456789abcdef0123456789abcdef", "mtime": 1700000000000u64
            }
        }),
        json!({
            "key": "ANNOT234", "version": 9,
            "data": {
                "key": "ANNOT234", "itemType": "annotation", "parentItem": "ATTCH234",
                "annotationType": "highlight", "annotationText": "green leaves",
                "annotationComment": "key point", "annotationColor": "#ffd400",
                "annotationPageLabel": "3", "annotationSortIndex": "00002|000120|00300",
                "annotationPosition": {"pageIndex": 2, "rects": [[1, 2, 3, 4]]}
            }
        }),
    ];
    (items, collections)
}

fn mirrored() -> (tempfile::TempDir, ZoteroDb) {
    let dir = tempfile::tempdir().unwrap();
    let b = Builder::create(dir.path()).unwrap();
    let (items, collections) = library();
    b.mirror(1, &items, &collections).unwrap();
    drop(b);
    let db = ZoteroDb::open(dir.path()).unwrap();
    (dir, db)
}

fn get(db: &ZoteroDb, path: &str) -> Value {
    let a = db.answer(LibraryScope::User, path).unwrap();
    assert_eq!(a.status, 200, "{path}");
    serde_json::from_slice(&a.body).unwrap()
}

fn keys(v: &Value) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["key"].as_str().unwrap())
        .collect();
    k.sort_unstable();
    k
}

#[test]
fn collections_keep_their_tree_versions_and_trash() {
    let (_dir, db) = mirrored();
    let child = get(&db, "/collections/CHILD234");
    assert_eq!(child["data"]["name"], "Child");
    assert_eq!(child["data"]["parentCollection"], "PARENT23");
    assert_eq!(child["version"], 7);
    assert_eq!(keys(&get(&db, "/collections/top")), ["PARENT23"]);
    assert_eq!(
        keys(&get(&db, "/collections?includeTrashed=1")),
        ["CHILD234", "GONE2345", "PARENT23"]
    );
    assert_eq!(get(&db, "/collections/GONE2345")["data"]["deleted"], true);
}

#[test]
fn an_item_keeps_its_fields_creators_tags_relations_and_collections() {
    let (_dir, db) = mirrored();
    let item = get(&db, "/items/ARTCL234");
    let d = &item["data"];
    assert_eq!(item["version"], 12);
    assert_eq!(d["title"], "Photosynthesis");
    assert_eq!(d["DOI"], "10.1/x");
    assert_eq!(d["date"], "December 2017");
    assert_eq!(item["meta"]["parsedDate"], "2017-12");
    assert_eq!(d["publicationTitle"], "");
    assert!(d.get("lastRead").is_none());
    assert_eq!(
        d["creators"],
        json!([
            {"creatorType": "author", "firstName": "Ada", "lastName": "Lovelace"},
            {"creatorType": "editor", "name": "The Lab"}
        ])
    );
    let mut tags = d["tags"].as_array().unwrap().clone();
    tags.sort_by_key(|t| t["tag"].as_str().unwrap().to_string());
    assert_eq!(
        tags,
        [
            json!({"tag": "imported", "type": 1}),
            json!({"tag": "plants"})
        ]
    );
    assert_eq!(d["collections"], json!(["CHILD234"]));
    assert_eq!(
        d["relations"],
        json!({"dc:relation": "http://zotero.org/users/1/items/OTHER234"})
    );
    assert_eq!(d["dateAdded"], "2024-01-02T03:04:05Z");
    assert_eq!(d["dateModified"], "2024-02-03T04:05:06Z");
    assert_eq!(
        keys(&get(&db, "/collections/CHILD234/items/top")),
        ["ARTCL234"]
    );
}

#[test]
fn a_trashed_item_is_in_the_trash() {
    let (_dir, db) = mirrored();
    assert_eq!(keys(&get(&db, "/items/trash")), ["TRASH234"]);
    assert_eq!(get(&db, "/items/TRASH234")["data"]["deleted"], true);
}

#[test]
fn children_keep_their_note_file_and_annotation() {
    let (_dir, db) = mirrored();
    assert_eq!(
        keys(&get(&db, "/items/ARTCL234/children")),
        ["ATTCH234", "NOTE2345"]
    );
    let note = get(&db, "/items/NOTE2345")["data"].clone();
    assert_eq!(note["parentItem"], "ARTCL234");
    assert_eq!(note["note"], "<p>Hi</p>");
    let a = get(&db, "/items/ATTCH234")["data"].clone();
    assert_eq!(a["linkMode"], "imported_url");
    assert_eq!(a["contentType"], "application/pdf");
    assert_eq!(a["filename"], "a.pdf");
    assert_eq!(a["md5"], "0123456789abcdef0123456789abcdef");
    assert_eq!(a["mtime"], 1_700_000_000_000u64);
    assert_eq!(a["url"], "https://example.org/a.pdf");
    let n = get(&db, "/items/ANNOT234")["data"].clone();
    assert_eq!(n["parentItem"], "ATTCH234");
    assert_eq!(n["annotationType"], "highlight");
    assert_eq!(n["annotationText"], "green leaves");
    assert_eq!(n["annotationComment"], "key point");
    assert_eq!(n["annotationColor"], "#ffd400");
    assert_eq!(n["annotationPageLabel"], "3");
    assert_eq!(n["annotationSortIndex"], "00002|000120|00300");
}
