//! The ranking's tests: fusion and grouping, the keyword shortcut, the exact and cached
//! semantic scans, passages.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::HashMap;

use super::fuse::*;
use super::keyword::*;
use super::passage::*;
use super::query::*;
use super::semantic::*;
use crate::encoder::Encoder;
use crate::store::Index;
use crate::vcache::VectorCache;
use proptest::prelude::*;
use std::collections::HashSet;

fn cands(v: &[(i64, u8)]) -> Vec<Candidate> {
    v.iter()
        .enumerate()
        .map(|(i, &(id, item))| Candidate {
            chunk_id: id,
            item_key: format!("ITEM{item}"),
            score: 100.0 - i as f64,
        })
        .collect()
}

/// An index of `n` items whose titles and abstracts draw from ten words: `w0` and `w1`
/// in every one, `w2` in about half, the others rarer (deterministic per `seed`).
fn word_index(dir: &std::path::Path, n: usize, seed: u64) -> Index {
    use crate::store::{Document, LibraryId};
    let mut index = Index::open(dir, &LibraryId::User).unwrap();
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        let mut x = seed | 1;
        for i in 0..n {
            let mut words = vec!["w0".to_string()];
            for w in 1..10u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Word w is in about 1/w of the texts, 1..4 times.
                if x.is_multiple_of(w) {
                    for _ in 0..1 + x % 4 {
                        words.push(format!("w{w}"));
                    }
                }
            }
            // Title and abstract alike: the words are in (nearly) every chunk.
            let meta = crate::chunk::ItemMeta {
                title: words.join(" "),
                abstract_note: format!("{} A{i}", words.join(" ")),
                item_type: "journalArticle".into(),
                year: Some(1990 + (i % 30) as i32),
                ..Default::default()
            };
            // One in seven is in the trash.
            b.upsert(&Document::item(&format!("K{i:05}"), 1, meta, i % 7 == 3))
                .unwrap();
        }
        b.commit().unwrap();
    }
    index
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Ranking the best rows first and filtering them after gives exactly what
    /// filtering every match first gives, for loose filters (the trash) and tight ones.
    #[test]
    fn filtering_the_best_rows_equals_filtering_every_match(
        seed in 1u64..1_000,
        words in proptest::collection::vec(0u64..10, 1..4),
        candidates in 1usize..60,
        years in proptest::option::of((1990i32..2020, 0i32..30)),
        include_trashed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = word_index(dir.path(), 150, seed);
        let filters = Filters {
            include_trashed,
            year_from: years.map(|(from, _)| from),
            year_to: years.map(|(from, span)| from + span / 4),
            ..Default::default()
        };
        let (cond, params) = filter_sql(&filters);
        let expr = words.iter().map(|w| format!("\"w{w}\"")).collect::<Vec<_>>().join(" OR ");
        let ids = |v: Vec<Candidate>| v.into_iter().map(|c| c.chunk_id).collect::<Vec<_>>();
        prop_assert_eq!(
            ids(index.keyword_query(&expr, &cond, &params, candidates).unwrap()),
            ids(index.keyword_query_joined(&expr, &cond, &params, candidates).unwrap())
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// A keyword query split by rowid into parts, each part's best merged, answers the
    /// same chunks with the same scores in the same order as one query over all rows, with
    /// filters loose and tight (each part is scored with the whole table's statistics).
    #[test]
    fn keyword_parts_merged_equal_one_query(
        seed in 1u64..1_000,
        words in proptest::collection::vec(0u64..10, 1..4),
        candidates in 1usize..60,
        parts in 1usize..5,
        years in proptest::option::of((1990i32..2020, 0i32..30)),
        include_trashed in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = word_index(dir.path(), 150, seed);
        let filters = Filters {
            include_trashed,
            year_from: years.map(|(from, _)| from),
            year_to: years.map(|(from, span)| from + span / 4),
            ..Default::default()
        };
        let (cond, params) = filter_sql(&filters);
        let expr = words.iter().map(|w| format!("\"w{w}\"")).collect::<Vec<_>>().join(" OR ");
        let last: i64 = index
            .conn
            .query_row("SELECT max(id) FROM chunks_fts_docsize", [], |r| r.get(0))
            .unwrap();
        let found: Vec<Vec<Candidate>> = split_rowids(last, parts)
            .into_iter()
            .map(|rows| index.keyword_query_in(&expr, &cond, &params, candidates, rows).unwrap())
            .collect();
        let seen = |v: Vec<Candidate>| {
            v.into_iter().map(|c| (c.chunk_id, c.score.to_bits())).collect::<Vec<_>>()
        };
        prop_assert_eq!(
            seen(merge_parts(found, candidates)),
            seen(index.keyword_query(&expr, &cond, &params, candidates).unwrap())
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    /// A whole search with its keyword signal split in parts (on threads of their own,
    /// beside the semantic signal) answers exactly what it answers unsplit: the same hits,
    /// scores, ranks and passages, in keyword and hybrid mode, with and without filters.
    /// The split is FTS5's (`Index::search`); the server's search (`search_cached`, BM25 in
    /// memory, unsplit) answers the same again.
    #[test]
    fn a_search_split_in_parts_answers_as_one(
        seed in 1u64..1_000,
        words in proptest::collection::vec(0u64..10, 1..4),
        parts in 2usize..5,
        hybrid in any::<bool>(),
        years in proptest::option::of((1990i32..2020, 0i32..30)),
    ) {
        use super::search::SPLIT_FOR_TEST;
        let dir = tempfile::tempdir().unwrap();
        let mut index = word_index(dir.path(), 300, seed);
        let enc = RandomEncoder(16);
        index.updater().unwrap().embed_pending(&enc, 64, usize::MAX).unwrap();
        let mut query = SearchQuery::new(
            &words.iter().map(|w| format!("w{w}")).collect::<Vec<_>>().join(" "),
        );
        query.mode = if hybrid { Mode::Hybrid } else { Mode::Keyword };
        query.filters.year_from = years.map(|(from, _)| from);
        query.filters.year_to = years.map(|(from, span)| from + span / 4);
        let cache = VectorCache::default();
        SPLIT_FOR_TEST.with(|c| c.set(Some((u64::MAX, 1))));
        let one = index.search(Some(&enc), &query).unwrap();
        SPLIT_FOR_TEST.with(|c| c.set(Some((0, parts))));
        let split = index.search(Some(&enc), &query).unwrap();
        let in_memory = index.search_cached(Some(&enc), &query, &cache).unwrap();
        SPLIT_FOR_TEST.with(|c| c.set(None));
        prop_assert_eq!(one.semantic_used, hybrid);
        // A narrow year range may hold no item with the words: then all three are empty.
        prop_assert_eq!(&split, &one);
        prop_assert_eq!(in_memory, one);
    }
}

#[test]
fn rowid_parts_cover_every_rowid_once() {
    for last in [1i64, 2, 7, 100, 1_000_003] {
        for parts in 1..6 {
            let ranges: Vec<(i64, i64)> = split_rowids(last, parts).into_iter().flatten().collect();
            assert_eq!(ranges.len(), parts);
            assert_eq!(ranges[0].0, i64::MIN);
            assert_eq!(ranges[parts - 1].1, i64::MAX);
            for w in ranges.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0, "{last} in {parts}: {ranges:?}");
                assert!(w[0].0 <= w[0].1);
            }
        }
    }
}

#[test]
fn words_in_most_rows_are_found_by_the_vocabulary() {
    let dir = tempfile::tempdir().unwrap();
    let index = word_index(dir.path(), 200, 7);
    let rows = index.keyword_rows().unwrap();
    assert_eq!(rows, 200, "one row per item");
    index.words_view().unwrap();
    assert!(index.in_most_rows("\"w0\"", rows).unwrap());
    assert!(!index.in_most_rows("\"w9\"", rows).unwrap());
    assert!(!index.in_most_rows("\"nowhere\"", 0).unwrap());
    // Case folds as the tokenizer folds it; other pieces are never looked up.
    assert!(index.in_most_rows("\"W1\"", rows).unwrap());
    assert!(!index.in_most_rows("\"w0 w1\"", 1).unwrap());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    /// Leaving out the words in most rows changes neither which chunks come first nor
    /// their order, but among chunks whose full BM25 differs by what those words add
    /// (≤ 1e-5: their IDF is 1e-6).
    #[test]
    fn leaving_out_common_words_keeps_the_ranking(
        seed in 1u64..1_000,
        words in proptest::collection::vec(0u64..10, 1..5),
        candidates in 1usize..80,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let index = word_index(dir.path(), 120, seed);
        let pieces: Vec<String> = words.iter().map(|w| format!("\"w{w}\"")).collect();
        let pruned = index.keyword_candidates(&pieces, "1", &[], candidates).unwrap();
        let full = index.keyword_query(&pieces.join(" OR "), "1", &[], candidates).unwrap();
        prop_assert_eq!(pruned.len(), full.len());
        let score: HashMap<i64, f64> = index
            .conn
            .prepare(&format!("SELECT rowid, {BM25} FROM chunks_fts WHERE chunks_fts MATCH ?1"))
            .unwrap()
            .query_map([pieces.join(" OR ")], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        const EPS: f64 = 1e-5;
        for (p, f) in pruned.iter().zip(&full) {
            prop_assert!((score[&p.chunk_id] - score[&f.chunk_id]).abs() <= EPS,
                "{} {} vs {} {}", p.chunk_id, score[&p.chunk_id], f.chunk_id, score[&f.chunk_id]);
        }
    }
}

#[test]
fn first_in_both_scores_one() {
    let k = cands(&[(1, 1), (2, 2)]);
    let s = cands(&[(1, 1), (3, 3)]);
    for fusion in [
        FUSION,
        Fusion::Rrf {
            k: 60.0,
            keyword: 1.0,
            semantic: 1.0,
        },
    ] {
        let items = fuse_items(&k, &s, (true, true), fusion);
        assert_eq!(items[0].item_key, "ITEM1");
        assert!((items[0].score - 1.0).abs() < 1e-12, "{fusion:?}");
        let g = group(items, fuse(&k, &s, 2));
        assert_eq!(g[0].item_key, "ITEM1");
        assert_eq!(g[0].chunks[0].chunk_id, 1);
        assert_eq!((g[0].keyword_rank, g[0].semantic_rank), (Some(1), Some(1)));
        let third = g.iter().find(|g| g.item_key == "ITEM3").unwrap();
        assert_eq!((third.keyword_rank, third.semantic_rank), (None, Some(2)));
    }
}

/// An item found first by words through its title and first by meaning through its
/// abstract is first by both: fused as an item, not as two chunks found once each (which
/// put an item whose one chunk is second in both above it).
#[test]
fn items_are_fused_not_their_chunks() {
    // Item 1: chunk 10 (title) first by words, chunk 11 (abstract) first by meaning.
    // Item 2: chunk 20 second in both.
    let k = cands(&[(10, 1), (20, 2), (30, 3)]);
    let s = cands(&[(11, 1), (20, 2), (40, 4)]);
    for fusion in [
        FUSION,
        Fusion::Rrf {
            k: 60.0,
            keyword: 1.0,
            semantic: 1.0,
        },
    ] {
        let items = fuse_items(&k, &s, (true, true), fusion);
        let order: Vec<&str> = items.iter().map(|i| i.item_key.as_str()).collect();
        assert_eq!(order[..2], ["ITEM1", "ITEM2"], "{fusion:?}");
        assert!((items[0].score - 1.0).abs() < 1e-12);
        assert_eq!(
            (items[0].keyword_rank, items[0].semantic_rank),
            (Some(1), Some(1))
        );
        // Its passages: both chunks, the one first by words first (ties by chunk id).
        let g = group(items, fuse(&k, &s, 2));
        let ids: Vec<i64> = g[0].chunks.iter().map(|c| c.chunk_id).collect();
        assert_eq!(ids, [10, 11]);
    }
    // By chunks, the second item came first.
    let by_chunk = fuse(&k, &s, 2);
    assert_eq!(by_chunk[0].item_key, "ITEM2");
    // One signal only: its order, with 1 for its first.
    let items = fuse_items(&k, &[], (true, false), FUSION);
    let order: Vec<&str> = items.iter().map(|i| i.item_key.as_str()).collect();
    assert_eq!(order, ["ITEM1", "ITEM2", "ITEM3"]);
    assert!((items[0].score - 1.0).abs() < 1e-12);
}

#[test]
fn blob_dot_is_the_dot_product() {
    for n in [0usize, 1, 7, 8, 9, 384, 389] {
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
        let b: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 1.0)).collect();
        let blob = crate::blob::vector_blob(&b);
        let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((blob_dot(&a, &blob).unwrap() - want).abs() < 1e-3, "{n}");
    }
    assert_eq!(blob_dot(&[1.0], &[0, 0]), None);
}

#[test]
fn window_centres_on_the_word() {
    let text = format!("{} Gödel numbering {}", "a ".repeat(400), "b ".repeat(400));
    let (at, w) = window(&text, &query_terms("godel"), 100);
    assert!(w.contains("Gödel"), "{w}");
    assert!(w.chars().count() <= 100);
    let chars: Vec<char> = text.chars().collect();
    assert_eq!(
        chars[at..at + w.chars().count()].iter().collect::<String>(),
        w
    );
}

/// Each text a pseudo-random unit vector (seeded by the text): vectors with no
/// structure, the hardest case for choosing candidates by int8 scores.
struct RandomEncoder(usize);

impl Encoder for RandomEncoder {
    fn identity(&self) -> crate::encoder::ModelIdentity {
        crate::encoder::ModelIdentity {
            id: "random".into(),
            revision: "1".into(),
            file_hashes: Vec::new(),
            dims: self.0,
        }
    }
    fn dims(&self) -> usize {
        self.0
    }
    fn encode(
        &self,
        texts: &[&str],
    ) -> std::result::Result<Vec<Vec<f32>>, crate::encoder::EncodeError> {
        Ok(texts
            .iter()
            .map(|t| {
                let mut seed = t.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
                });
                let v: Vec<f32> = (0..self.0)
                    .map(|_| {
                        seed = seed
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        (seed >> 33) as f32 / (1u64 << 31) as f32 - 0.5
                    })
                    .collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / norm).collect()
            })
            .collect())
    }
}

#[test]
fn the_int8_copy_gives_the_exact_candidates() {
    use crate::store::{Document, LibraryId};
    use crate::ItemMeta;
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
    let enc = RandomEncoder(384);
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        for i in 0..600 {
            let meta = ItemMeta {
                title: format!("title {i}"),
                year: Some(1950 + i % 70),
                item_type: "book".into(),
                abstract_note: format!("abstract number {i}"),
                ..ItemMeta::default()
            };
            b.upsert(&Document::item(&format!("ITEM{i:04}"), 1, meta, i % 9 == 0))
                .unwrap();
        }
        b.commit().unwrap();
        up.embed_pending(&enc, 64, usize::MAX).unwrap();
    }
    let (chunks_total, chunks_with_vectors) = index.counts().unwrap();
    assert!(chunks_with_vectors > 1000, "{chunks_with_vectors}");
    let coverage = Coverage {
        chunks_total,
        chunks_with_vectors,
    };
    let cache = VectorCache::default();
    let filters = [
        Filters::default(),
        Filters {
            include_trashed: true,
            ..Filters::default()
        },
        Filters {
            year_from: Some(1990),
            year_to: Some(2000),
            ..Filters::default()
        },
    ];
    for (n, f) in filters.iter().enumerate() {
        let (cond, filter_params) = filter_sql(f);
        for candidates in [1, 10, 50, 200] {
            let scan = Scan {
                cond: &cond,
                filter_params: &filter_params,
                candidates,
            };
            for query in 0..20 {
                let text = format!("query {query}");
                let exact = index.semantic_candidates(&enc, &text, &scan, None).unwrap();
                let cached = index
                    .semantic_candidates(&enc, &text, &scan, Some((&cache, coverage)))
                    .unwrap();
                assert_eq!(cached, exact, "filters {n}, {candidates}, {text}");
                assert!(!exact.is_empty());
            }
        }
    }
    assert_eq!(cache.vectors() as u64, chunks_with_vectors);
}

proptest! {
    #[test]
    fn fusion_and_grouping_keep_best_and_never_repeat(
        k in proptest::collection::vec((0i64..60, 0u8..12), 0..80),
        s in proptest::collection::vec((0i64..60, 0u8..12), 0..80),
        rrf in any::<bool>(),
    ) {
        // A chunk belongs to one item whatever list it is in.
        let fix = |v: Vec<(i64, u8)>| v.into_iter().map(|(id, _)| (id, (id % 12) as u8)).collect::<Vec<_>>();
        let (k, s) = (cands(&fix(k)), cands(&fix(s)));
        let fusion = if rrf { Fusion::Rrf { k: 60.0, keyword: 1.0, semantic: 0.7 } } else { FUSION };
        let items = fuse_items(&k, &s, (true, true), fusion);
        let fused = fuse(&k, &s, 2);
        let groups = group(items.clone(), fused.clone());
        let mut seen = HashSet::new();
        for g in &groups {
            prop_assert!(seen.insert(g.item_key.clone()), "item twice");
            prop_assert!((0.0..=1.0).contains(&g.score));
            // The group's chunks are the item's fused chunks, best first.
            let mine: Vec<i64> = fused.iter().filter(|f| f.item_key == g.item_key).map(|f| f.chunk_id).collect();
            prop_assert_eq!(g.chunks.iter().map(|c| c.chunk_id).collect::<Vec<_>>(), mine);
        }
        for w in groups.windows(2) {
            prop_assert!(w[0].score >= w[1].score);
        }
        // Every candidate item is in a group, in the fused items' order.
        let all: HashSet<_> = k.iter().chain(&s).map(|c| c.item_key.clone()).collect();
        prop_assert_eq!(all, seen);
        prop_assert_eq!(
            groups.iter().map(|g| g.item_key.clone()).collect::<Vec<_>>(),
            items.iter().map(|i| i.item_key.clone()).collect::<Vec<_>>()
        );
    }
}

/// [`RandomEncoder`] with a query prompt: a query's vector is that of `prompt` + the query,
/// as a model with `prompts.query` gives it.
struct PromptedEncoder {
    inner: RandomEncoder,
    prompt: String,
}

impl Encoder for PromptedEncoder {
    fn identity(&self) -> crate::encoder::ModelIdentity {
        self.inner.identity()
    }
    fn dims(&self) -> usize {
        self.inner.dims()
    }
    fn encode(
        &self,
        texts: &[&str],
    ) -> std::result::Result<Vec<Vec<f32>>, crate::encoder::EncodeError> {
        self.inner.encode(texts)
    }
    fn encode_query(
        &self,
        text: &str,
    ) -> std::result::Result<Vec<f32>, crate::encoder::EncodeError> {
        let prompted = format!("{}{text}", self.prompt);
        Ok(self.inner.encode(&[&prompted])?.remove(0))
    }
}

#[test]
fn a_search_by_meaning_embeds_the_query_with_the_models_query_prompt() {
    use crate::store::{Document, LibraryId};
    use crate::ItemMeta;
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
    let plain = RandomEncoder(64);
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        for i in 0..50 {
            let meta = ItemMeta {
                title: format!("title {i}"),
                item_type: "book".into(),
                ..ItemMeta::default()
            };
            b.upsert(&Document::item(&format!("ITEM{i:04}"), 1, meta, false))
                .unwrap();
        }
        b.commit().unwrap();
        up.embed_pending(&plain, 64, usize::MAX).unwrap();
    }
    // A chunk's text split in two: its head is the model's query prompt, its tail the
    // query. Prompted, the query is that chunk's own vector; bare, it is no chunk's.
    let (chunk, text): (i64, String) = index
        .conn
        .query_row(
            "SELECT c.id, c.text FROM chunks c JOIN documents d ON d.id = c.doc_id
             WHERE d.key = 'ITEM0017' ORDER BY c.id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let cut = text.len() - 2;
    let (prompt, query) = (text[..cut].to_string(), &text[cut..]);
    let enc = PromptedEncoder {
        inner: plain,
        prompt,
    };
    let (cond, filter_params) = filter_sql(&Filters::default());
    let scan = Scan {
        cond: &cond,
        filter_params: &filter_params,
        candidates: 5,
    };
    let found = index.semantic_candidates(&enc, query, &scan, None).unwrap();
    assert_eq!(found[0].chunk_id, chunk, "{text:?}: {found:?}");
    assert!((found[0].score - 1.0).abs() < 1e-3, "{found:?}");
}
