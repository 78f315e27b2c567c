//! The in-memory copy of the vectors (`VectorCache`): the same answers as the exact scan,
//! and never a stale copy after the index changed.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use zotero_index::{
    Document, Encoder, Filters, Index, ItemMeta, LibraryId, Mode, SearchQuery, SynonymEncoder,
    VectorCache,
};

fn q(text: &str, mode: Mode) -> SearchQuery {
    SearchQuery::new(text).mode(mode)
}

fn keys(answer: &zotero_index::SearchAnswer) -> Vec<String> {
    answer.hits.iter().map(|h| h.item_key.clone()).collect()
}

/// Searches with and without the cache, checks both answer alike, gives the answer.
fn both(
    index: &Index,
    enc: &dyn Encoder,
    query: &SearchQuery,
    cache: &VectorCache,
) -> zotero_index::SearchAnswer {
    let exact = index.search(Some(enc), query).unwrap();
    let cached = index.search_cached(Some(enc), query, cache).unwrap();
    assert_eq!(cached, exact, "{query:?}");
    cached
}

/// More chunks than the int8 scan picks (4 × 200), hardly any about the queries below (a
/// word may share the stand-in's dimension of a query's by chance), added
/// before the documents that are: a stale copy would pick these (the lower chunk ids win
/// ties) and miss the chunks that changed, so a stale copy changes the answers.
fn fillers(b: &mut zotero_index::Batch<'_>) {
    for i in 0..500 {
        let meta = ItemMeta {
            title: format!("zq{i}"),
            abstract_note: format!("zr{i} zs{i}"),
            ..ItemMeta::default()
        };
        b.upsert(&Document::item(&format!("FILL{i:04}"), 1, meta, false))
            .unwrap();
    }
}

/// The fillers, then `docs`, with the stand-in's vectors.
fn build(index: &mut Index, docs: Vec<Document>) {
    let mut up = index.updater().unwrap();
    let mut b = up.batch().unwrap();
    fillers(&mut b);
    for d in docs {
        b.upsert(&d).unwrap();
    }
    b.commit().unwrap();
    up.embed_pending(&SynonymEncoder::default(), 64, usize::MAX)
        .unwrap();
}

/// Removes the items `removed` and writes `docs` in one commit, then gives every chunk
/// lacking one a vector of `enc`; answers how many got one.
fn write(index: &mut Index, enc: &SynonymEncoder, removed: &[&str], docs: &[Document]) -> usize {
    let mut up = index.updater().unwrap();
    let mut b = up.batch().unwrap();
    for key in removed {
        assert_eq!(b.delete_item(key).unwrap(), 1, "{key}");
    }
    for d in docs {
        b.upsert(d).unwrap();
    }
    b.commit().unwrap();
    up.embed_pending(enc, 8, usize::MAX).unwrap()
}

/// An item about the heart, at `version`.
fn heart_item(version: u64) -> Document {
    Document::item(
        "HEART001",
        version,
        common::meta("Myocardial infarction in the young", 2021, "journalArticle"),
        false,
    )
}

/// A cache that reads a stale copy again at once (not at most every 10 s).
fn reloading() -> VectorCache {
    VectorCache::new(
        zotero_index::vcache::DEFAULT_BUDGET_BYTES,
        std::time::Duration::ZERO,
    )
}

#[test]
fn nothing_is_loaded_before_a_search_by_meaning() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let enc = SynonymEncoder::default();
    let cache = VectorCache::default();
    assert_eq!(cache.bytes(), 0);
    // Words only: no vectors needed.
    both(&index, &enc, &q("automobile", Mode::Keyword), &cache);
    assert_eq!(cache.bytes(), 0);
    let a = both(
        &index,
        &enc,
        &q("insomnia and memory", Mode::Semantic),
        &cache,
    );
    assert_eq!(keys(&a)[0], "SLEEP001");
    let s = index.status().unwrap();
    assert_eq!(cache.vectors() as u64, s.chunks_with_vectors);
    assert!(cache.bytes() > 0);
    // Filters apply as in the exact scan.
    for filters in [
        Filters {
            include_trashed: true,
            ..Filters::default()
        },
        Filters {
            tags: vec!["cognition".into()],
            ..Filters::default()
        },
        Filters {
            year_from: Some(2016),
            ..Filters::default()
        },
    ] {
        let mut query = q("insomnia memory tumour automobile", Mode::Hybrid);
        query.filters = filters;
        both(&index, &enc, &query, &cache);
    }
}

#[test]
fn an_index_over_the_budget_is_scanned_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let enc = SynonymEncoder::default();
    let cache = VectorCache::with_budget(1000);
    let a = both(
        &index,
        &enc,
        &q("insomnia and memory", Mode::Semantic),
        &cache,
    );
    assert_eq!(keys(&a)[0], "SLEEP001");
    assert_eq!(cache.bytes(), 0);
}

#[test]
fn every_change_of_the_index_is_seen_by_the_next_search() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::open(dir.path());
    build(&mut index, common::library());
    assert!(index.status().unwrap().chunks_with_vectors > 1000);
    let enc = SynonymEncoder::default();
    let cache = reloading();
    let loaded = |index: &Index| {
        // The copy holds exactly the index's vectors.
        assert_eq!(
            cache.vectors() as u64,
            index.status().unwrap().chunks_with_vectors
        );
    };
    let heart = q("cardiac arrest", Mode::Semantic);
    assert!(!keys(&both(&index, &enc, &heart, &cache)).contains(&"HEART001".to_string()));
    loaded(&index);

    // New vectors.
    write(&mut index, &enc, &[], &[heart_item(11)]);
    assert!(keys(&both(&index, &enc, &heart, &cache)).contains(&"HEART001".to_string()));
    loaded(&index);

    // A document deleted (its vectors with it), as many chunks added for another item,
    // which get the same chunk ids (SQLite reuses the highest): neither the counts nor the
    // ids tell, only the vectors differ.
    let before = index.status().unwrap().chunks_with_vectors;
    let cancer = |version, trashed| {
        Document::item(
            "CANCER02",
            version,
            common::meta("Carcinoma in the old", 2022, "journalArticle"),
            trashed,
        )
    };
    write(&mut index, &enc, &["HEART001"], &[cancer(12, false)]);
    assert_eq!(index.status().unwrap().chunks_with_vectors, before);
    let a = both(&index, &enc, &heart, &cache);
    assert!(!keys(&a).contains(&"HEART001".to_string()));
    let a = both(&index, &enc, &q("neoplasm", Mode::Semantic), &cache);
    assert!(keys(&a).contains(&"CANCER02".to_string()), "{:?}", keys(&a));
    loaded(&index);

    // Moved to the trash: the same chunks and vectors, only the document's flag changed,
    // which the documents a filter allowed (kept with the copy) must follow.
    assert_eq!(write(&mut index, &enc, &[], &[cancer(13, true)]), 0);
    let a = both(&index, &enc, &q("neoplasm", Mode::Semantic), &cache);
    assert!(
        !keys(&a).contains(&"CANCER02".to_string()),
        "{:?}",
        keys(&a)
    );
    let mut trashed = q("neoplasm", Mode::Semantic);
    trashed.filters.include_trashed = true;
    let a = both(&index, &enc, &trashed, &cache);
    assert!(keys(&a).contains(&"CANCER02".to_string()), "{:?}", keys(&a));

    // Another model of the same dimensions: as many vectors, all different.
    let other = SynonymEncoder::new(384, &[&["cardiac arrest", "automobile"]]);
    {
        let mut up = index.updater().unwrap();
        up.reset_vectors(&other.identity()).unwrap();
        up.embed_pending(&other, 8, usize::MAX).unwrap();
    }
    assert_eq!(index.status().unwrap().chunks_with_vectors, before);
    let a = both(&index, &other, &heart, &cache);
    assert!(keys(&a).contains(&"CARS0001".to_string()));
    loaded(&index);
    // The old model is refused, cache or not.
    assert!(index.search_cached(Some(&enc), &heart, &cache).is_err());
}

#[test]
fn a_rebuilt_file_is_not_taken_for_the_old_one() {
    let dir = tempfile::tempdir().unwrap();
    let enc = SynonymEncoder::default();
    let cache = reloading();
    let sleep = q("insomnia", Mode::Semantic);
    let heart = q("myocardial infarction", Mode::Semantic);
    let count = {
        let mut index = common::open(dir.path());
        build(&mut index, common::library());
        assert!(keys(&both(&index, &enc, &sleep, &cache)).contains(&"SLEEP001".to_string()));
        both(&index, &enc, &heart, &cache);
        index.status().unwrap().chunks_with_vectors
    };
    // `update --full`: the file removed and made again, here with the same documents but
    // for one about something else, so that every count and chunk id is as before.
    let path = dir.path().join(LibraryId::User.file_name());
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
    let mut index = common::open(dir.path());
    let docs = common::library()
        .into_iter()
        .map(|d| {
            if d.key == "SLEEP001" {
                Document::item(
                    "HEART003",
                    d.version,
                    ItemMeta {
                        title: "Cardiac arrest among adults".into(),
                        ..d.meta
                    },
                    false,
                )
            } else {
                d
            }
        })
        .collect();
    build(&mut index, docs);
    assert_eq!(index.status().unwrap().chunks_with_vectors, count);
    let a = both(&index, &enc, &heart, &cache);
    assert!(keys(&a).contains(&"HEART003".to_string()));
    let a = both(&index, &enc, &sleep, &cache);
    assert!(!keys(&a).contains(&"SLEEP001".to_string()));
}

#[test]
fn searches_from_many_connections_share_one_copy() {
    let dir = tempfile::tempdir().unwrap();
    drop(common::filled(dir.path()));
    let enc = SynonymEncoder::default();
    let cache = VectorCache::default();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (dir, cache, enc) = (dir.path().to_path_buf(), cache.clone(), enc.clone());
            std::thread::spawn(move || {
                let index = Index::open(&dir, &LibraryId::User).unwrap();
                keys(&both(&index, &enc, &q("insomnia", Mode::Hybrid), &cache))
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap()[0], "SLEEP001");
    }
    let index = common::open(dir.path());
    assert_eq!(
        cache.vectors() as u64,
        index.status().unwrap().chunks_with_vectors
    );
}

#[test]
fn a_copy_read_moments_ago_is_not_read_again_at_each_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::open(dir.path());
    build(&mut index, common::library());
    let enc = SynonymEncoder::default();
    let cache = VectorCache::new(1 << 30, std::time::Duration::from_secs(3600));
    let heart = q("myocardial infarction", Mode::Semantic);
    both(&index, &enc, &heart, &cache);
    assert!(cache.vectors() > 0);
    write(&mut index, &enc, &[], &[heart_item(11)]);
    // The stale copy is dropped, not read again: the exact scan answers, and sees the change.
    let a = both(&index, &enc, &heart, &cache);
    assert!(keys(&a).contains(&"HEART001".to_string()));
    assert_eq!(cache.vectors(), 0);
}
