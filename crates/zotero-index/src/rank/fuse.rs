//! Fusing the keyword and semantic candidate lists: items ranked by both signals at the
//! item (document) level ([`fuse_items`]), and each item's chunks ordered by reciprocal
//! rank ([`fuse`]) to choose its passages ([`group`]).

use std::cmp::Ordering;
use std::collections::HashMap;

/// The reciprocal rank fusion constant of Cormack et al. (2009), for ordering an item's
/// chunks.
pub const RRF_K: f64 = 60.0;

/// A chunk (or an item's keyword row) a signal found, in that signal's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub chunk_id: i64,
    pub item_key: String,
    /// The signal's score: BM25 (≥ 0) or cosine; higher is better.
    pub score: f64,
}

/// A chunk after fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused {
    pub chunk_id: i64,
    pub item_key: String,
    /// In [0, 1].
    pub score: f64,
    pub keyword_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
}

/// Fuses two ranked chunk lists by reciprocal rank; `signals` is how many lists were
/// searched (1 or 2), which sets the best possible score. Best first; a chunk appearing
/// twice in a list counts at its first place.
pub fn fuse(keyword: &[Candidate], semantic: &[Candidate], signals: usize) -> Vec<Fused> {
    let best = signals.max(1) as f64 / (RRF_K + 1.0);
    let mut by_chunk: HashMap<i64, Fused> = HashMap::new();
    for (list, is_keyword) in [(keyword, true), (semantic, false)] {
        for (i, c) in list.iter().enumerate() {
            let f = by_chunk.entry(c.chunk_id).or_insert_with(|| Fused {
                chunk_id: c.chunk_id,
                item_key: c.item_key.clone(),
                score: 0.0,
                keyword_rank: None,
                semantic_rank: None,
            });
            let rank = if is_keyword {
                &mut f.keyword_rank
            } else {
                &mut f.semantic_rank
            };
            if rank.is_none() {
                *rank = Some(i + 1);
                f.score += 1.0 / (RRF_K + (i + 1) as f64);
            }
        }
    }
    let mut out: Vec<Fused> = by_chunk
        .into_values()
        .map(|mut f| {
            f.score = (f.score / best).clamp(0.0, 1.0);
            f
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then(a.chunk_id.cmp(&b.chunk_id))
    });
    out
}

/// How the keyword and semantic lists of items are fused.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fusion {
    /// Weighted reciprocal rank: Σ weight / (k + the item's rank in the signal).
    Rrf { k: f64, keyword: f64, semantic: f64 },
    /// A convex combination of the signals' scores, each divided by its best for the query
    /// (an item a signal did not find counts 0 there): `keyword` × BM25 / best BM25 +
    /// (1 − `keyword`) × cosine / best cosine.
    Convex { keyword: f64 },
}

/// An item after fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct FusedItem {
    pub item_key: String,
    /// In [0, 1]: 1 is first by every signal used.
    pub score: f64,
    /// The item's place among items in each signal's list (from 1).
    pub keyword_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
}

/// Each item's rank among items and best score in one signal's list (best first).
fn item_best(list: &[Candidate]) -> HashMap<&str, (usize, f64)> {
    let mut best = HashMap::new();
    for c in list {
        let next = best.len() + 1;
        best.entry(c.item_key.as_str()).or_insert((next, c.score));
    }
    best
}

/// `score` mapped to [0, 1] as a share of the best score of `list`: the scale starts at
/// each signal's least possible useful score (0: BM25 of no word, cosine of nothing in
/// common, which the scan drops), not at the list's last, so that an item's normalized
/// score does not depend on how many candidates were read (the limit).
fn by_max(list: &[Candidate]) -> impl Fn(f64) -> f64 {
    let hi = list.iter().map(|c| c.score).fold(0.0, f64::max);
    move |score: f64| {
        if hi > 0.0 {
            (score / hi).clamp(0.0, 1.0)
        } else {
            1.0
        }
    }
}

/// Ranks the items of both lists by `fusion`: one entry per item, best first (ties by item
/// key). `used` says which signals were searched (keyword, semantic): the best possible
/// score over them is 1. An item counts by its best chunk in each list.
pub fn fuse_items(
    keyword: &[Candidate],
    semantic: &[Candidate],
    used: (bool, bool),
    fusion: Fusion,
) -> Vec<FusedItem> {
    let (kw, sem) = (item_best(keyword), item_best(semantic));
    let (kw_norm, sem_norm) = (by_max(keyword), by_max(semantic));
    let mut keys: Vec<&str> = kw.keys().chain(sem.keys()).copied().collect();
    keys.sort_unstable();
    keys.dedup();
    let weight = |on: bool, w: f64| if on { w.max(0.0) } else { 0.0 };
    let mut out: Vec<FusedItem> = keys
        .into_iter()
        .map(|key| {
            let k = kw.get(key).copied();
            let s = sem.get(key).copied();
            let score = match fusion {
                Fusion::Rrf {
                    k: rrf_k,
                    keyword: wk,
                    semantic: ws,
                } => {
                    let (wk, ws) = (weight(used.0, wk), weight(used.1, ws));
                    let part = |w: f64, r: Option<(usize, f64)>| {
                        r.map_or(0.0, |(rank, _)| w / (rrf_k + rank as f64))
                    };
                    let best = (wk + ws) / (rrf_k + 1.0);
                    if best > 0.0 {
                        (part(wk, k) + part(ws, s)) / best
                    } else {
                        0.0
                    }
                }
                Fusion::Convex { keyword: a } => {
                    let a = a.clamp(0.0, 1.0);
                    let (wk, ws) = (weight(used.0, a), weight(used.1, 1.0 - a));
                    let part = |w: f64, r: Option<(usize, f64)>, norm: &dyn Fn(f64) -> f64| {
                        r.map_or(0.0, |(_, score)| w * norm(score))
                    };
                    if wk + ws > 0.0 {
                        (part(wk, k, &kw_norm) + part(ws, s, &sem_norm)) / (wk + ws)
                    } else {
                        0.0
                    }
                }
            };
            FusedItem {
                item_key: key.to_string(),
                score: score.clamp(0.0, 1.0),
                keyword_rank: k.map(|(r, _)| r),
                semantic_rank: s.map(|(r, _)| r),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.item_key.cmp(&b.item_key))
    });
    out
}

/// The chunks of one item after fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub item_key: String,
    /// The item's fused score.
    pub score: f64,
    /// The item's place among items in each signal's list.
    pub keyword_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// Its chunks found, best first.
    pub chunks: Vec<Fused>,
}

/// The `items` in their order, each with its chunks of `fused` (best first); an item with
/// no chunk there is left out.
pub fn group(items: Vec<FusedItem>, fused: Vec<Fused>) -> Vec<Group> {
    let mut chunks: HashMap<String, Vec<Fused>> = HashMap::new();
    // `fused` is best first, so each item's chunks stay in that order.
    for f in fused {
        chunks.entry(f.item_key.clone()).or_default().push(f);
    }
    items
        .into_iter()
        .filter_map(|it| {
            let chunks = chunks.remove(&it.item_key)?;
            Some(Group {
                item_key: it.item_key,
                score: it.score,
                keyword_rank: it.keyword_rank,
                semantic_rank: it.semantic_rank,
                chunks,
            })
        })
        .collect()
}
