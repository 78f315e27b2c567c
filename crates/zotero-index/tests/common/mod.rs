//! A small library to index, shared by the integration tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use zotero_index::{Document, Index, ItemMeta, LibraryId, SynonymEncoder};

pub fn meta(title: &str, year: i32, item_type: &str) -> ItemMeta {
    ItemMeta {
        title: title.to_string(),
        creators: "Doe, Jane".to_string(),
        year: Some(year),
        item_type: item_type.to_string(),
        ..ItemMeta::default()
    }
}

/// Items about different things; none shares a word with "insomnia and memory".
pub fn library() -> Vec<Document> {
    let mut sleep = meta(
        "Sleep deprivation impairs recall in adults",
        2019,
        "journalArticle",
    );
    sleep.tags = vec!["sleep".into(), "cognition".into()];
    sleep.collections = vec!["COLLAAAA".into()];
    let mut cars = meta("A history of the automobile", 2001, "book");
    cars.tags = vec!["history".into()];
    let mut cancer = meta("Tumour growth in mice", 2015, "journalArticle");
    cancer.collections = vec!["COLLAAAA".into(), "COLLBBBB".into()];
    cancer.tags = vec!["cognition".into()];
    vec![
        Document::item("SLEEP001", 1, sleep, false),
        Document::item("CARS0001", 2, cars, false),
        Document::item("CANCER01", 3, cancer, false),
        Document::item(
            "GODEL001",
            4,
            meta(
                "Über formal unentscheidbare Sätze: Gödel",
                1931,
                "journalArticle",
            ),
            false,
        ),
        Document::item(
            "CJK00001",
            5,
            meta("深層学習による画像認識", 2020, "thesis"),
            false,
        ),
        Document::item(
            "MULLER01",
            6,
            meta("Muller on neural networks", 2018, "journalArticle"),
            false,
        ),
        Document::item(
            "TRASH001",
            7,
            meta("Garbage collection in trash bins", 2010, "report"),
            true,
        ),
        Document::note(
            "NOTE0001",
            Some("CARS0001"),
            8,
            "# Reading notes\n\nThe Model T changed **everything** about roads.",
            ItemMeta::default(),
            false,
        ),
        Document::annotation(
            "ANNO0001",
            "ATTACH01",
            "CANCER01",
            9,
            "mice developed large masses",
            "compare with rats",
            false,
        ),
        Document::fulltext(
            "ATTACH01",
            "CANCER01",
            10,
            &format!(
                "{}The carcinoma spread quickly. {}",
                "Introduction text. ".repeat(80),
                "More text. ".repeat(80)
            ),
        ),
    ]
}

pub fn open(dir: &Path) -> Index {
    Index::open(dir, &LibraryId::User).unwrap()
}

/// An index of [`library`], with the stand-in's vectors.
pub fn filled(dir: &Path) -> Index {
    let mut index = open(dir);
    {
        let mut up = index.updater().unwrap();
        let mut batch = up.batch().unwrap();
        for d in library() {
            batch.upsert(&d).unwrap();
        }
        batch.set_sync_version("items", 42).unwrap();
        batch.commit().unwrap();
        up.embed_pending(&SynonymEncoder::default(), 4, usize::MAX)
            .unwrap();
    }
    index
}
