#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use zotero_index::{
    Document, Encoder, Filters, IndexError, ItemMeta, Matched, Mode, SearchQuery, SynonymEncoder,
};

fn keys(answer: &zotero_index::SearchAnswer) -> Vec<&str> {
    answer.hits.iter().map(|h| h.item_key.as_str()).collect()
}

fn q(text: &str, mode: Mode) -> SearchQuery {
    SearchQuery::new(text).mode(mode)
}

#[test]
fn meaning_finds_what_words_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let enc = SynonymEncoder::default();
    let query = "insomnia and memory";

    let kw = index.search(Some(&enc), &q(query, Mode::Keyword)).unwrap();
    assert!(!keys(&kw).contains(&"SLEEP001"), "{:?}", keys(&kw));
    assert!(!kw.semantic_used);

    for mode in [Mode::Semantic, Mode::Hybrid] {
        let a = index.search(Some(&enc), &q(query, mode)).unwrap();
        assert_eq!(keys(&a).first(), Some(&"SLEEP001"), "{mode:?}");
        let hit = &a.hits[0];
        assert!(a.semantic_used);
        assert_eq!(hit.keyword_rank, None);
        assert_eq!(hit.semantic_rank, Some(1));
        assert!(hit.matched.contains(&Matched::Title));
        assert!(hit.score > 0.0 && hit.score <= 1.0);
    }
}

#[test]
fn exact_title_words_rank_first_in_hybrid() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let enc = SynonymEncoder::default();
    let a = index
        .search(Some(&enc), &SearchQuery::new("history of the automobile"))
        .unwrap();
    assert_eq!(keys(&a)[0], "CARS0001");
    let hit = &a.hits[0];
    assert_eq!(hit.keyword_rank, Some(1));
    assert_eq!(hit.semantic_rank, Some(1));
    assert!((hit.score - 1.0).abs() < 1e-9, "{}", hit.score);
    assert_eq!(hit.title, "A history of the automobile");
    assert_eq!(hit.passages[0].matched, Matched::Title);
    // Scores sorted, items once.
    for w in a.hits.windows(2) {
        assert!(w[0].score >= w[1].score);
        assert_ne!(w[0].item_key, w[1].item_key);
    }
}

#[test]
fn children_answer_for_their_item_with_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let a = index.search(None, &SearchQuery::new("carcinoma")).unwrap();
    assert_eq!(keys(&a), ["CANCER01"]);
    let p = &a.hits[0].passages[0];
    assert_eq!(p.matched, Matched::Fulltext);
    assert_eq!(p.doc_key, "ATTACH01");
    assert!(p.text.contains("carcinoma"), "{}", p.text);
    assert!(p.text.chars().count() <= 400);
    // The offset is where the passage is in the attachment's text, in characters.
    let source = format!(
        "{}The carcinoma spread quickly. {}",
        "Introduction text. ".repeat(80),
        "More text. ".repeat(80)
    );
    let at = p.fulltext_offset.unwrap() as usize;
    let again: String = source
        .chars()
        .skip(at)
        .take(p.text.chars().count())
        .collect();
    assert_eq!(again, p.text);

    let a = index
        .search(None, &SearchQuery::new("Model T roads"))
        .unwrap();
    assert_eq!(keys(&a)[0], "CARS0001");
    assert!(a.hits[0].matched.contains(&Matched::Note));
    let a = index.search(None, &SearchQuery::new("rats")).unwrap();
    assert_eq!(a.hits[0].matched, [Matched::Annotation]);
}

#[test]
fn cjk_and_diacritics() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let find = |text: &str| {
        let a = index.search(None, &q(text, Mode::Keyword)).unwrap();
        keys(&a).into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(find("画像認識"), ["CJK00001"]);
    assert_eq!(find("学習"), ["CJK00001"]);
    assert_eq!(find("認"), ["CJK00001"]);
    assert!(
        find("認画").is_empty(),
        "a CJK query is a phrase, not a bag of characters"
    );
    assert_eq!(find("Godel"), ["GODEL001"]);
    assert_eq!(find("gödel"), ["GODEL001"]);
    assert_eq!(find("uber satze"), ["GODEL001"]);
    assert_eq!(find("Müller"), ["MULLER01"]);
    assert_eq!(find("MULLER"), ["MULLER01"]);
    assert_eq!(find("Mu\u{308}ller"), ["MULLER01"], "a decomposed ü");
}

#[test]
fn filters_and_trash() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let enc = SynonymEncoder::default();
    let search = |text: &str, filters: Filters| {
        let mut query = q(text, Mode::Keyword);
        query.filters = filters;
        let a = index.search(Some(&enc), &query).unwrap();
        let mut k: Vec<String> = keys(&a).into_iter().map(str::to_string).collect();
        k.sort();
        k
    };
    // "Doe" is every item's creator.
    let all = search("Doe", Filters::default());
    assert_eq!(all.len(), 6, "{all:?}");
    assert!(!all.contains(&"TRASH001".to_string()));
    let with_trash = search(
        "Doe",
        Filters {
            include_trashed: true,
            ..Filters::default()
        },
    );
    assert!(with_trash.contains(&"TRASH001".to_string()));
    assert_eq!(
        search(
            "Doe",
            Filters {
                item_type: Some("book".into()),
                ..Filters::default()
            }
        ),
        ["CARS0001"]
    );
    assert_eq!(
        search(
            "Doe",
            Filters {
                collection_key: Some("COLLAAAA".into()),
                ..Filters::default()
            }
        ),
        ["CANCER01", "SLEEP001"]
    );
    assert_eq!(
        search(
            "Doe",
            Filters {
                tags: vec!["cognition".into(), "sleep".into()],
                ..Filters::default()
            }
        ),
        ["SLEEP001"]
    );
    assert_eq!(
        search(
            "Doe",
            Filters {
                year_from: Some(2015),
                year_to: Some(2019),
                ..Filters::default()
            }
        ),
        ["CANCER01", "MULLER01", "SLEEP001"]
    );
    // Children follow their item's metadata.
    assert_eq!(
        search(
            "rats carcinoma",
            Filters {
                item_type: Some("book".into()),
                ..Filters::default()
            }
        ),
        Vec::<String>::new()
    );
}

#[test]
fn limit_and_coverage() {
    let dir = tempfile::tempdir().unwrap();
    let index = common::filled(dir.path());
    let mut query = q("Doe", Mode::Keyword);
    query.limit = 2;
    let a = index.search(None, &query).unwrap();
    assert_eq!(a.hits.len(), 2);
    assert!(a.coverage.chunks_total > 0);
    assert_eq!(a.coverage.chunks_total, a.coverage.chunks_with_vectors);
}

#[test]
fn without_a_model_search_is_by_words_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::open(dir.path());
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        for d in common::library() {
            b.upsert(&d).unwrap();
        }
        b.commit().unwrap();
    }
    let enc = SynonymEncoder::default();
    // An encoder but no vectors yet: hybrid falls back, semantic refuses.
    let a = index
        .search(Some(&enc), &SearchQuery::new("automobile"))
        .unwrap();
    assert!(!a.semantic_used);
    assert!(a.semantic_note.as_deref().unwrap().contains("no vectors"));
    assert_eq!(keys(&a), ["CARS0001"]);
    assert_eq!(a.coverage.chunks_with_vectors, 0);
    let err = index
        .search(Some(&enc), &q("automobile", Mode::Semantic))
        .unwrap_err();
    assert!(matches!(err, IndexError::NoSemantic { .. }), "{err}");
    // No encoder at all.
    let a = index.search(None, &SearchQuery::new("automobile")).unwrap();
    assert!(a
        .semantic_note
        .as_deref()
        .unwrap()
        .contains("no sentence model"));
}

#[test]
fn vectors_come_in_priority_order_and_partially() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::open(dir.path());
    let mut up = index.updater().unwrap();
    let mut b = up.batch().unwrap();
    for d in common::library() {
        b.upsert(&d).unwrap();
    }
    b.commit().unwrap();
    let pending = up.pending_vectors(1000).unwrap();
    let prio: Vec<i64> = pending.iter().map(|p| p.matched.priority()).collect();
    let mut sorted = prio.clone();
    sorted.sort();
    assert_eq!(prio, sorted);
    assert_eq!(pending.last().unwrap().matched, Matched::Fulltext);
    let enc = SynonymEncoder::default();
    assert_eq!(up.embed_pending(&enc, 3, 5).unwrap(), 5);
    drop(up);
    let s = index.status().unwrap();
    assert_eq!(s.chunks_with_vectors, 5);
    assert_eq!(s.model, Some(enc.identity()));
}

#[test]
fn reupsert_replaces_and_delete_removes() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::filled(dir.path());
    let before = index.status().unwrap();
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        let mut meta = common::meta("Bicycles of Amsterdam", 2001, "book");
        meta.tags = vec!["history".into()];
        b.upsert(&Document::item("CARS0001", 11, meta, false))
            .unwrap();
        b.commit().unwrap();
    }
    let find = |index: &zotero_index::Index, t: &str| {
        keys(&index.search(None, &q(t, Mode::Keyword)).unwrap())
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(find(&index, "automobile").is_empty());
    assert_eq!(find(&index, "Amsterdam"), ["CARS0001"]);
    // The unchanged metadata chunk kept its vector, the new title lacks one.
    let s = index.status().unwrap();
    assert_eq!(s.chunks, before.chunks);
    assert_eq!(s.chunks_with_vectors, before.chunks_with_vectors - 1);

    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        assert_eq!(b.delete("NOTE0001").unwrap(), 1);
        b.commit().unwrap();
    }
    assert!(find(&index, "roads").is_empty());
    assert_eq!(find(&index, "Amsterdam"), ["CARS0001"]);
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        // The item, its annotation (child of its attachment) and the attachment's text.
        assert_eq!(b.delete_item("CANCER01").unwrap(), 3);
        b.commit().unwrap();
    }
    assert!(find(&index, "carcinoma").is_empty());
    assert!(find(&index, "rats").is_empty());
    assert!(find(&index, "Tumour").is_empty());
    let s = index.status().unwrap();
    assert_eq!(s.items, before.items - 1);
}

#[test]
fn uncommitted_batch_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::filled(dir.path());
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        b.upsert(&Document::item(
            "NEW00001",
            1,
            common::meta("Zeppelins", 1930, "book"),
            false,
        ))
        .unwrap();
        b.delete_item("CARS0001").unwrap();
        b.set_sync_version("items", 99).unwrap();
        // Dropped: as if the process had been killed.
    }
    assert!(index
        .search(None, &q("Zeppelins", Mode::Keyword))
        .unwrap()
        .hits
        .is_empty());
    assert_eq!(
        keys(&index.search(None, &q("automobile", Mode::Keyword)).unwrap()),
        ["CARS0001"]
    );
    assert_eq!(index.sync_version("items").unwrap(), Some(42));
}

#[test]
fn another_model_needs_a_reset() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::filled(dir.path());
    let other = SynonymEncoder::new(64, &[&["insomnia", "sleep deprivation"]]);
    let err = index.check_model(&other.identity()).unwrap_err();
    assert!(matches!(err, IndexError::ModelMismatch { .. }));
    assert!(err.to_string().contains("update-db --full"), "{err}");
    // Searching with it never mixes: hybrid by words, semantic refused.
    let a = index
        .search(Some(&other), &SearchQuery::new("automobile"))
        .unwrap();
    assert!(!a.semantic_used);
    assert!(index
        .search(Some(&other), &q("automobile", Mode::Semantic))
        .is_err());
    {
        let mut up = index.updater().unwrap();
        assert!(matches!(
            up.embed_pending(&other, 10, usize::MAX),
            Err(IndexError::ModelMismatch { .. })
        ));
        up.reset_vectors(&other.identity()).unwrap();
        assert_eq!(up.index().status().unwrap().chunks_with_vectors, 0);
        up.embed_pending(&other, 10, usize::MAX).unwrap();
    }
    let s = index.status().unwrap();
    assert_eq!(s.model, Some(other.identity()));
    assert_eq!(s.chunks_with_vectors, s.chunks);
    let a = index
        .search(Some(&other), &q("insomnia", Mode::Semantic))
        .unwrap();
    assert_eq!(keys(&a)[0], "SLEEP001");
}

#[test]
fn status_reports_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::filled(dir.path());
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        b.set_sync_version("fulltext", 40).unwrap();
        b.set_fulltext_included(true).unwrap();
        b.commit().unwrap();
    }
    let s = index.status().unwrap();
    assert_eq!(s.items, 7);
    assert_eq!(s.documents, 10);
    assert_eq!(s.library_version, Some(40));
    assert_eq!(
        s.sync_versions,
        [("fulltext".to_string(), 40), ("items".to_string(), 42)]
    );
    assert!(s.last_update.is_some());
    assert!(s.fulltext_included);
    assert!(s.size_bytes > 0);
    assert_eq!(s.model.unwrap().id, "zotero-index/synonym-stand-in");
    let _ = ItemMeta::default();
}

#[test]
fn chinese_and_japanese_titles() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = common::open(dir.path());
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        for (key, title) in [
            ("ZH000001", "基于深度学习的自然语言处理"),
            ("JA000001", "深層学習による画像認識"),
            ("JA000002", "日本語の形態素解析とカタカナ語"),
            ("MIXED001", "BERTによる文書分類 (document classification)"),
        ] {
            b.upsert(&Document::item(
                key,
                1,
                common::meta(title, 2020, "journalArticle"),
                false,
            ))
            .unwrap();
        }
        b.commit().unwrap();
    }
    let find = |t: &str| {
        let mut k: Vec<String> = index
            .search(None, &q(t, Mode::Keyword))
            .unwrap()
            .hits
            .into_iter()
            .map(|h| h.item_key)
            .collect();
        k.sort();
        k
    };
    assert_eq!(find("自然语言"), ["ZH000001"]);
    assert_eq!(find("画像認識"), ["JA000001"]);
    assert_eq!(find("深度学习"), ["ZH000001"]);
    // A shared character finds both; the phrase only its title.
    assert_eq!(find("学"), ["JA000001", "ZH000001"]);
    assert_eq!(find("カタカナ"), ["JA000002"]);
    assert_eq!(find("文書分類"), ["MIXED001"]);
    assert_eq!(find("classification"), ["MIXED001"]);
    assert_eq!(find("bert"), ["MIXED001"]);
}

/// An index of `docs` (title, abstract) as items, with the stand-in's vectors.
fn items(dir: &std::path::Path, docs: &[(&str, &str, &str)]) -> zotero_index::Index {
    let mut index = common::open(dir);
    {
        let mut up = index.updater().unwrap();
        let mut b = up.batch().unwrap();
        for (key, title, abstract_note) in docs {
            let meta = ItemMeta {
                title: title.to_string(),
                abstract_note: abstract_note.to_string(),
                item_type: "journalArticle".into(),
                ..ItemMeta::default()
            };
            b.upsert(&Document::item(key, 1, meta, false)).unwrap();
        }
        b.commit().unwrap();
        up.embed_pending(&SynonymEncoder::default(), 16, usize::MAX)
            .unwrap();
    }
    index
}

#[test]
fn words_match_by_their_stems_with_diacritics_folded() {
    let dir = tempfile::tempdir().unwrap();
    let index = items(
        dir.path(),
        &[
            ("RETRACT1", "Papers retracted in 2020", ""),
            ("THEOREM1", "A theorem of Gödel", "Incompleteness."),
            ("OTHER001", "Unrelated title", "Nothing to see."),
        ],
    );
    let find = |text: &str| {
        let a = index.search(None, &q(text, Mode::Keyword)).unwrap();
        keys(&a).into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    assert_eq!(find("retraction"), ["RETRACT1"]);
    assert_eq!(find("retracting"), ["RETRACT1"]);
    // Stemmed and folded together: "théorèmes" is "theorem", "Goedel" is not "Gödel".
    assert_eq!(find("théorèmes"), ["THEOREM1"]);
    assert_eq!(find("GÖDEL"), ["THEOREM1"]);
    // The passage is centred on the word found by its stem, and says what matched.
    let a = index.search(None, &q("retraction", Mode::Keyword)).unwrap();
    assert_eq!(a.hits[0].matched, [Matched::Title]);
    assert_eq!(a.hits[0].passages[0].text, "Papers retracted in 2020");
}

/// The keyword index folds as Zotero 10 folds for search (`zotero_db::fold_for_search`):
/// the letters FTS5's `remove_diacritics` leaves alone (ø, ß, ł, æ, þ), ligatures, and the
/// same answer from FTS5 and from the in-memory BM25.
#[test]
fn words_fold_as_zotero_folds_them_for_search() {
    let dir = tempfile::tempdir().unwrap();
    let index = items(
        dir.path(),
        &[
            (
                "SOREN001",
                "Søren on the Straße",
                "Łukasiewicz, Ærø and Þórr.",
            ),
            ("FILE0001", "The ﬁle of Erdős", ""),
            ("OTHER001", "Unrelated title", "Nothing to see."),
        ],
    );
    let cache = zotero_index::VectorCache::default();
    for text in ["soren", "strasse", "lukasiewicz", "aero", "thorr", "STRAẞE"] {
        let fts = index.search(None, &q(text, Mode::Keyword)).unwrap();
        assert_eq!(keys(&fts), ["SOREN001"], "{text}");
        let mem = index
            .search_cached(None, &q(text, Mode::Keyword), &cache)
            .unwrap();
        assert_eq!(keys(&mem), ["SOREN001"], "{text} in memory");
        assert_eq!(fts.hits[0].score, mem.hits[0].score, "{text}");
    }
    for text in ["file erdos", "ﬁle", "ERDŐS"] {
        let fts = index.search(None, &q(text, Mode::Keyword)).unwrap();
        assert_eq!(keys(&fts), ["FILE0001"], "{text}");
    }
}

#[test]
fn stop_words_do_not_rank_unless_alone() {
    let dir = tempfile::tempdir().unwrap();
    let index = items(
        dir.path(),
        &[
            (
                "STOPS001",
                "To be or not to be",
                "That is the question of it all.",
            ),
            ("SLEEP001", "Sleep in mice", "Mice sleep more."),
        ],
    );
    let find = |text: &str| {
        let a = index.search(None, &q(text, Mode::Keyword)).unwrap();
        keys(&a).into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    // "the", "of", "it" would find the first item by its many stop words.
    assert_eq!(find("the effect of it on sleep"), ["SLEEP001"]);
    // A query of stop words alone still finds them.
    assert_eq!(find("to be or not"), ["STOPS001"]);
}

#[test]
fn an_item_is_scored_by_its_title_and_abstract_together() {
    let dir = tempfile::tempdir().unwrap();
    // Long abstracts of one length: each is cut into chunks, the first item's none holding
    // both query words; the length normalization is the same for all.
    let filler = "The measurements were repeated across several cohorts. ".repeat(12);
    let both = format!("{filler} The hippocampus replays the day to the hippocampus. {filler}");
    let hippo = format!("{filler} Cells and layers of the cortex, seen in detail. {filler}");
    let mut docs = vec![
        ("BOTH0001", "Sleep and memory consolidation", both.as_str()),
        ("HIPPO001", "Hippocampus anatomy", hippo.as_str()),
        ("SLEEP001", "Sleep", filler.as_str()),
        ("SLEEP002", "Sleep", filler.as_str()),
    ];
    let others: Vec<String> = (0..8).map(|i| format!("OTHER{i:03}")).collect();
    for k in &others {
        docs.push((k, "Cohorts", filler.as_str()));
    }
    let index = items(dir.path(), &docs);
    assert!(
        index.status().unwrap().chunks > 2 * 12,
        "the abstracts are cut in chunks"
    );
    let a = index
        .search(None, &q("sleep hippocampus", Mode::Keyword))
        .unwrap();
    // By its best chunk alone, the short title "Hippocampus anatomy" (a rare word) came
    // first; as a document, the item with both words does.
    assert_eq!(keys(&a)[..2], ["BOTH0001", "HIPPO001"]);
    let hit = &a.hits[0];
    assert_eq!(hit.keyword_rank, Some(1));
    assert!(hit.matched.contains(&Matched::Title) && hit.matched.contains(&Matched::Abstract));
    assert!(hit.passages.iter().any(|p| p.text.contains("hippocampus")));
}
