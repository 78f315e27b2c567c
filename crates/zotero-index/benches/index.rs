//! Speed on a synthetic library of 10,000 items (stand-in encoder): insert, vectors, file
//! size, keyword and semantic query times (p50, p99), by the exact scan of the vector table
//! and with the in-memory int8 copy (`VectorCache`), and the copy's size. A plain binary (`harness = false`) that prints
//! figures: `cargo bench -p zotero-index --bench index`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::Instant;

use zotero_index::{
    Document, Encoder, Index, ItemMeta, LibraryId, Mode, SearchQuery, SynonymEncoder, VectorCache,
};

struct Words(u64);

impl Words {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    /// `n` words from a vocabulary of 20,000 made-up ones (a few frequent, most rare).
    fn text(&mut self, n: usize) -> String {
        (0..n)
            .map(|i| {
                let r = self.next();
                let w = (r % 20_000) * (r % 7 + 1) / 7;
                let sep = if i % 17 == 16 { ". " } else { " " };
                format!("w{w}{sep}")
            })
            .collect()
    }
}

fn main() {
    const ITEMS: usize = 10_000;
    const WITH_FULLTEXT: usize = 2_000;
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
    let enc = SynonymEncoder::new(384, zotero_index::encoder::DEFAULT_SYNONYMS);
    let mut words = Words(7);

    let t = Instant::now();
    {
        let mut up = index.updater().unwrap();
        for start in (0..ITEMS).step_by(500) {
            let mut b = up.batch().unwrap();
            for i in start..start + 500 {
                let key = format!("ITEM{i:04}");
                let meta = ItemMeta {
                    title: words.text(10),
                    creators: words.text(3),
                    year: Some(1950 + (i % 75) as i32),
                    item_type: "journalArticle".into(),
                    venue: words.text(3),
                    abstract_note: words.text(150),
                    collections: vec![format!("COLL{:04}", i % 20)],
                    tags: vec![format!("tag{}", i % 50)],
                };
                b.upsert(&Document::item(&key, 1, meta, false)).unwrap();
                b.upsert(&Document::note(
                    &format!("NOTE{i:04}"),
                    Some(&key),
                    1,
                    &words.text(60),
                    ItemMeta::default(),
                    false,
                ))
                .unwrap();
                if i < WITH_FULLTEXT {
                    b.upsert(&Document::fulltext(
                        &format!("ATT{i:05}"),
                        &key,
                        1,
                        &words.text(5_000),
                    ))
                    .unwrap();
                }
            }
            b.set_sync_version("items", start as u64).unwrap();
            b.commit().unwrap();
        }
    }
    let insert = t.elapsed();
    let s = index.status().unwrap();
    println!(
        "insert: {ITEMS} items, {} documents, {} chunks in {insert:.2?} ({:.0} chunks/s); file {:.1} MB",
        s.documents,
        s.chunks,
        s.chunks as f64 / insert.as_secs_f64(),
        s.size_bytes as f64 / 1e6
    );

    let t = Instant::now();
    let n = index
        .updater()
        .unwrap()
        .embed_pending(&enc, 256, usize::MAX)
        .unwrap();
    let embed = t.elapsed();
    let s = index.status().unwrap();
    println!(
        "vectors: {n} of 384 dims written in {embed:.2?} (stand-in encoder); file {:.1} MB",
        s.size_bytes as f64 / 1e6
    );

    let queries: Vec<String> = (0..50)
        .map(|r| format!("w{} w{} insomnia", r * 13, r * 101))
        .collect();
    // Milliseconds of each query, and the hits found.
    let time = |run: &dyn Fn(&SearchQuery) -> usize, mode: Mode| {
        let mut ms = Vec::new();
        let mut hits = 0;
        for text in &queries {
            let q = SearchQuery::new(text).mode(mode);
            let t = Instant::now();
            hits += run(&q);
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
        (at(0.5), at(0.99), hits)
    };
    let exact = |q: &SearchQuery| index.search(Some(&enc), q).unwrap().hits.len();
    let cache = VectorCache::default();
    let cached = |q: &SearchQuery| {
        index
            .search_cached(Some(&enc), q, &cache)
            .unwrap()
            .hits
            .len()
    };
    let (p50, p99, hits) = time(&exact, Mode::Keyword);
    println!(
        "search Keyword: p50 {p50:.1} ms, p99 {p99:.1} ms ({hits} hits in {} queries)",
        queries.len()
    );
    let t = Instant::now();
    cached(&SearchQuery::new("w1 w2").mode(Mode::Semantic));
    println!(
        "vector cache: first search (loading) {:.1?}; {} vectors in {:.1} MB (f32 in SQLite: {:.1} MB)",
        t.elapsed(),
        cache.vectors(),
        cache.bytes() as f64 / 1e6,
        (cache.vectors() * enc.dims() * 4) as f64 / 1e6
    );
    for mode in [Mode::Semantic, Mode::Hybrid] {
        for (name, run) in [
            ("exact scan", &exact as &dyn Fn(&SearchQuery) -> usize),
            ("cached", &cached),
        ] {
            let (p50, p99, hits) = time(run, mode);
            println!(
                "search {mode:?}, {name}: p50 {p50:.1} ms, p99 {p99:.1} ms ({hits} hits in {} queries)",
                queries.len()
            );
        }
    }
    // Same answers (the stand-in's vectors are sparse: many ties, the hardest case).
    let differ = queries
        .iter()
        .filter(|text| {
            let q = SearchQuery::new(text).mode(Mode::Semantic);
            index.search(Some(&enc), &q).unwrap()
                != index.search_cached(Some(&enc), &q, &cache).unwrap()
        })
        .count();
    println!(
        "cached answers differing from exact ones: {differ} of {}",
        queries.len()
    );
}
