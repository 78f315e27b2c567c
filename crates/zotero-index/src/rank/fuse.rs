//! Reciprocal rank fusion of the keyword and semantic candidate lists, then one group per
//! item (its best chunks).

use std::cmp::Ordering;
use std::collections::HashMap;

use super::query::RRF_K;

/// A chunk a signal found, in that signal's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub chunk_id: i64,
    pub item_key: String,
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

/// The chunks of one item after fusion.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    pub item_key: String,
    /// Its best chunk's score.
    pub score: f64,
    /// The item's place among items in each signal's list.
    pub keyword_rank: Option<usize>,
    pub semantic_rank: Option<usize>,
    /// All its chunks, best first.
    pub chunks: Vec<Fused>,
}

fn item_ranks(list: &[Candidate]) -> HashMap<&str, usize> {
    let mut ranks = HashMap::new();
    for c in list {
        let next = ranks.len() + 1;
        ranks.entry(c.item_key.as_str()).or_insert(next);
    }
    ranks
}

/// Groups fused chunks by item: one group per item, best first (ties by item key).
pub fn group(fused: Vec<Fused>, keyword: &[Candidate], semantic: &[Candidate]) -> Vec<Group> {
    let (kw, sem) = (item_ranks(keyword), item_ranks(semantic));
    let mut groups: Vec<Group> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    // `fused` is best first, so each group's first chunk is its best.
    for f in fused {
        match at.get(&f.item_key).and_then(|&i| groups.get_mut(i)) {
            Some(g) => g.chunks.push(f),
            None => {
                at.insert(f.item_key.clone(), groups.len());
                groups.push(Group {
                    item_key: f.item_key.clone(),
                    score: f.score,
                    keyword_rank: kw.get(f.item_key.as_str()).copied(),
                    semantic_rank: sem.get(f.item_key.as_str()).copied(),
                    chunks: vec![f],
                });
            }
        }
    }
    for g in &mut groups {
        g.score = g.chunks.iter().map(|c| c.score).fold(0.0, f64::max);
    }
    groups.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.item_key.cmp(&b.item_key))
    });
    groups
}
