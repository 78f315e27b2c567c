//! The keyword signal scored in memory against FTS5's own queries: the same chunks, the same
//! scores to the bit, the same order, on random indexes through updates and deletions, with
//! and without filters, with the copy kept across those changes.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use proptest::prelude::*;

use super::*;
use crate::chunk::ItemMeta;
use crate::rank::{Candidate, Filters};
use crate::store::{fts_pieces, Document, Index, LibraryId};

/// Words drawn for texts and queries: some in most rows, some whose stems meet ("flows",
/// "flowing"), one with a diacritic, one that is a stop word.
const WORDS: &[&str] = &[
    "flow", "flows", "flowing", "heat", "transfer", "shell", "buckling", "w0", "w1", "w2", "w3",
    "Müller", "the", "wing",
];

fn text(seed: &mut u64, n: usize) -> String {
    let mut out = Vec::new();
    for _ in 0..n {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        // "flow" and "w0" in most texts, the others rarer.
        let w = match *seed % 5 {
            0 => "flow",
            1 => "w0",
            _ => WORDS[(*seed / 5) as usize % WORDS.len()],
        };
        out.push(w);
    }
    out.join(" ")
}

/// One round of writes: items (new or rewritten), notes, deletions.
fn write_round(index: &mut Index, seed: u64, round: u64) {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ round | 1;
    let mut up = index.updater().unwrap();
    let mut b = up.batch().unwrap();
    for i in 0..40u64 {
        let (title_len, abstract_len, body_len) = (
            1 + (x % 4) as usize,
            3 + (x % 30) as usize,
            5 + (x % 40) as usize,
        );
        let key = format!("K{:04}", (x >> 3) % 60);
        let meta = ItemMeta {
            title: text(&mut x, title_len),
            creators: text(&mut x, 1),
            abstract_note: text(&mut x, abstract_len),
            item_type: "journalArticle".into(),
            year: Some(1990 + (x % 30) as i32),
            ..Default::default()
        };
        match x % 6 {
            0 => {
                b.delete_item(&key).unwrap();
            }
            1 => {
                let body = text(&mut x, body_len);
                let note =
                    Document::note(&format!("N{round}x{i}"), Some(&key), 1, &body, meta, false);
                b.upsert(&note).unwrap();
            }
            _ => {
                b.upsert(&Document::item(&key, round + 1, meta, x % 7 == 3))
                    .unwrap();
            }
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    b.commit().unwrap();
}

fn seen(v: &[Candidate]) -> Vec<(i64, String, u64)> {
    v.iter()
        .map(|c| (c.chunk_id, c.item_key.clone(), c.score.to_bits()))
        .collect()
}

/// In memory and by FTS5, the full query and the one with common words left out.
fn check(index: &Index, cache: &KeywordCache, query: &str, filters: &Filters, candidates: usize) {
    let pieces = fts_pieces(query);
    let Some(tokens) = cache.tokens(&pieces).unwrap() else {
        panic!("{query:?}: words of one token each");
    };
    let (cond, params) = crate::rank::filter_sql(filters);
    let memory = index
        .keyword_in_memory(&pieces, &tokens, &cond, &params, candidates, cache)
        .unwrap()
        .expect("a keyword index read in memory");
    let fts = index
        .keyword_candidates(&pieces, &cond, &params, candidates)
        .unwrap();
    assert_eq!(
        seen(&memory),
        seen(&fts),
        "{query:?} {filters:?} {candidates}"
    );
    let memory = index
        .keyword_query_in_memory(&tokens, &cond, &params, candidates, cache)
        .unwrap()
        .expect("a keyword index read in memory");
    let fts = index
        .keyword_query(&pieces.join(" OR "), &cond, &params, candidates)
        .unwrap();
    assert_eq!(
        seen(&memory),
        seen(&fts),
        "{query:?} {filters:?} {candidates} (all words)"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn in_memory_bm25_equals_fts5(
        seed in 1u64..1_000_000,
        queries in proptest::collection::vec(proptest::collection::vec(0usize..14, 1..5), 1..4),
        candidates in 1usize..40,
        years in proptest::option::of((1990i32..2020, 0i32..30)),
        include_trashed in any::<bool>(),
        small in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
        // A small budget keeps few postings: they are read again, the same.
        let cache = KeywordCache::with_budget(if small { 4_000 } else { DEFAULT_BUDGET_BYTES });
        let filtered = Filters {
            include_trashed,
            year_from: years.map(|(from, _)| from),
            year_to: years.map(|(from, span)| from + span / 4),
            ..Default::default()
        };
        for round in 0..3 {
            write_round(&mut index, seed, round);
            for q in &queries {
                let text: Vec<&str> = q.iter().map(|&w| WORDS[w]).collect();
                for f in [&Filters::default(), &filtered] {
                    check(&index, &cache, &text.join(" "), f, candidates);
                }
            }
        }
    }
}

#[test]
fn a_write_by_another_program_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
    write_round(&mut index, 7, 0);
    let cache = KeywordCache::default();
    let all = Filters {
        include_trashed: true,
        ..Default::default()
    };
    check(&index, &cache, "heat transfer flow", &all, 30);
    // Rows taken out of the keyword index by a program that does not raise the data
    // generation: FTS5's own records change, so the copy is not used.
    let other = rusqlite::Connection::open(index.path()).unwrap();
    other
        .execute(
            "DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks_fts
             WHERE chunks_fts MATCH 'heat' ORDER BY rowid LIMIT 3)",
            [],
        )
        .unwrap();
    check(&index, &cache, "heat transfer flow", &all, 30);
}

#[test]
fn a_phrase_is_left_to_fts5() {
    let cache = KeywordCache::default();
    let pieces = fts_pieces("画像 flow");
    assert_eq!(cache.tokens(&pieces).unwrap(), None);
    let pieces = fts_pieces("Flowing MÜLLER");
    assert_eq!(
        cache.tokens(&pieces).unwrap(),
        Some(vec!["flow".to_string(), "muller".to_string()])
    );
}

#[test]
fn the_tokenizer_is_the_keyword_index_s() {
    assert!(crate::store::SCHEMA.contains(&format!("tokenize = '{TOKENIZE}'")));
    let weights: Vec<String> = load::COLUMNS
        .iter()
        .map(|(_, w)| format!("{w:.1}"))
        .collect();
    assert_eq!(
        crate::rank::BM25,
        format!("bm25(chunks_fts, {})", weights.join(", "))
    );
}

#[test]
fn the_budget_bounds_the_postings() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
    write_round(&mut index, 11, 0);
    let cache = KeywordCache::with_budget(3_000);
    let all = Filters::default();
    for q in ["heat", "shell buckling", "wing transfer", "w1 w2 w3"] {
        check(&index, &cache, q, &all, 10);
        assert!(cache.bytes() <= 3_000, "{}", cache.bytes());
    }
}

/// A term's postings are read by seeking the term in FTS5's index: the vocabulary table is
/// given the `term = ?` constraint (its plan's index number has FTS5_VOCAB_TERM_EQ, 0x100),
/// rather than scanning every term.
#[test]
fn postings_are_read_by_seeking_the_term() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = Index::open(dir.path(), &LibraryId::User).unwrap();
    write_round(&mut index, 3, 0);
    index.instances_view().unwrap();
    let plan: String = index
        .conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT doc, col FROM temp.chunks_instances WHERE term = ?1",
            ["flow"],
            |r| r.get(3),
        )
        .unwrap();
    let idx: u32 = plan
        .split("INDEX ")
        .nth(1)
        .and_then(|s| s.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{plan}"));
    assert_ne!(idx & 0x100, 0, "{plan}");
}
