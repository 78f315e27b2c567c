//! A bigger copy of an index for latency benches: `grow_index SRC DST_DIR CHUNKS` copies the
//! index file SRC to `DST_DIR/user.sqlite` and repeats its documents under new keys
//! (`<key>R<n>`) until it holds at least CHUNKS chunks, with the same texts and vectors.
//!
//! The copies are written by the index's own [`Batch::upsert`] (so the keyword rows are what
//! an update writes) and their vectors copied from the originals, chunk for chunk. It runs on
//! the SQLite the crate bundles: the index's FTS5 table needs 3.43 or newer
//! (`contentless_delete`), which system SQLites often are not. Prints the chunk count.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rusqlite::{params, Connection};
use zotero_index::{Chunk, DocKind, Document, Index, ItemMeta, LibraryId, Matched, PageRef};

/// One source document with its chunks (ids in order) and their vectors.
struct Source {
    doc: Document,
    chunk_ids: Vec<i64>,
}

fn kind(s: &str) -> DocKind {
    match s {
        "item" => DocKind::Item,
        "note" => DocKind::Note,
        "annotation" => DocKind::Annotation,
        _ => DocKind::Fulltext,
    }
}

/// A `\x1f`-separated and -enclosed list as stored, back to its values.
fn list(s: &str) -> Vec<String> {
    s.split('\u{1f}')
        .filter(|v| !v.is_empty())
        .map(str::to_string)
        .collect()
}

fn read_sources(conn: &Connection) -> Vec<Source> {
    let mut docs = conn
        .prepare(
            "SELECT id, key, kind, item_key, parent_key, version, title, creators, year,
                    item_type, collections, tags, deleted FROM documents ORDER BY id",
        )
        .unwrap();
    let mut chunks = conn
        .prepare(
            "SELECT id, matched, text, start_char, end_char, page_index, page_label FROM chunks
             WHERE doc_id = ?1 ORDER BY id",
        )
        .unwrap();
    let rows: Vec<(i64, Document)> = docs
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                Document {
                    key: r.get(1)?,
                    kind: kind(&r.get::<_, String>(2)?),
                    item_key: r.get(3)?,
                    parent_key: r.get(4)?,
                    version: r.get::<_, i64>(5)?.max(0) as u64,
                    meta: ItemMeta {
                        title: r.get(6)?,
                        creators: r.get(7)?,
                        year: r.get(8)?,
                        item_type: r.get(9)?,
                        collections: list(&r.get::<_, String>(10)?),
                        tags: list(&r.get::<_, String>(11)?),
                        ..ItemMeta::default()
                    },
                    deleted: r.get(12)?,
                    chunks: Vec::new(),
                },
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    rows.into_iter()
        .map(|(id, mut doc)| {
            let mut chunk_ids = Vec::new();
            let found = chunks
                .query_map([id], |r| {
                    let span = match (r.get::<_, Option<i64>>(3)?, r.get::<_, Option<i64>>(4)?) {
                        (Some(s), Some(e)) => Some((s.max(0) as u64, e.max(0) as u64)),
                        _ => None,
                    };
                    Ok((
                        r.get::<_, i64>(0)?,
                        Chunk {
                            matched: Matched::parse(&r.get::<_, String>(1)?)
                                .unwrap_or(Matched::Fulltext),
                            text: r.get(2)?,
                            span,
                            page: match (r.get::<_, Option<u32>>(5)?, r.get(6)?) {
                                (Some(index), Some(label)) => Some(PageRef { index, label }),
                                _ => None,
                            },
                        },
                    ))
                })
                .unwrap();
            for c in found {
                let (cid, chunk) = c.unwrap();
                chunk_ids.push(cid);
                doc.chunks.push(chunk);
            }
            Source { doc, chunk_ids }
        })
        .collect()
}

fn renamed(doc: &Document, suffix: &str) -> Document {
    let mut d = doc.clone();
    d.key = format!("{}{suffix}", doc.key);
    d.item_key = format!("{}{suffix}", doc.item_key);
    d.parent_key = doc.parent_key.as_ref().map(|p| format!("{p}{suffix}"));
    d
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: grow_index SRC_FILE DST_DIR CHUNKS");
        std::process::exit(2);
    }
    let (src, dst_dir) = (Path::new(&args[1]), Path::new(&args[2]));
    let want: usize = args[3].parse().expect("CHUNKS is a number");
    std::fs::create_dir_all(dst_dir).unwrap();
    std::fs::set_permissions(dst_dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    let dst = dst_dir.join("user.sqlite");
    if dst.exists() {
        std::fs::remove_file(&dst).unwrap();
    }
    let source = Connection::open(src).unwrap();
    source
        .execute("VACUUM INTO ?1", [dst.to_str().expect("a UTF-8 path")])
        .unwrap();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(0o600)).unwrap();
    let sources = read_sources(&source);
    let have: usize = sources.iter().map(|s| s.chunk_ids.len()).sum();
    let copies = want.div_ceil(have.max(1)).max(1);

    let mut index = Index::open(dst_dir, &LibraryId::User).unwrap();
    {
        let mut updater = index.updater().unwrap();
        for r in 1..copies {
            let mut batch = updater.batch().unwrap();
            for s in &sources {
                batch.upsert(&renamed(&s.doc, &format!("R{r}"))).unwrap();
            }
            batch.commit().unwrap();
        }
    }
    drop(index);

    let mut conn = Connection::open(&dst).unwrap();
    let tx = conn.transaction().unwrap();
    {
        let mut vector = source
            .prepare("SELECT vector FROM vectors WHERE chunk_id = ?1")
            .unwrap();
        let mut new_ids = tx
            .prepare(
                "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.doc_id
                 WHERE d.key = ?1 AND d.kind = ?2 ORDER BY c.id",
            )
            .unwrap();
        let mut put = tx
            .prepare("INSERT INTO vectors (chunk_id, doc_id, vector) SELECT id, doc_id, ?2 FROM chunks WHERE id = ?1")
            .unwrap();
        let mut mark = tx
            .prepare("UPDATE chunks SET embedded = 1 WHERE id = ?1")
            .unwrap();
        for s in &sources {
            let vectors: Vec<Option<Vec<u8>>> = s
                .chunk_ids
                .iter()
                .map(|id| vector.query_row([id], |r| r.get::<_, Vec<u8>>(0)).ok())
                .collect();
            for r in 1..copies {
                let key = format!("{}R{r}", s.doc.key);
                let ids: Vec<i64> = new_ids
                    .query_map(params![key, s.doc.kind.as_str()], |r| r.get(0))
                    .unwrap()
                    .collect::<rusqlite::Result<_>>()
                    .unwrap();
                for (id, v) in ids.iter().zip(&vectors) {
                    if let Some(v) = v {
                        put.execute(params![id, v]).unwrap();
                        mark.execute([id]).unwrap();
                    }
                }
            }
        }
    }
    tx.commit().unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let (chunks, vectors): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM vectors)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    println!("{chunks} chunks, {vectors} with vectors");
}
