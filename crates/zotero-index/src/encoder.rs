//! The sentence encoder, as the index sees it: a trait, so that the index does not depend
//! on any model (the candle BERT encoder lives in its own crate), and a stand-in for tests
//! and benchmarks.

use std::fmt;

/// Which model made a vector. Vectors of two identities are never compared: the index
/// records the identity of its vectors and refuses another one until they are rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelIdentity {
    /// The model's name, e.g. `sentence-transformers/all-MiniLM-L6-v2`.
    pub id: String,
    /// The revision (commit) of the model's files.
    pub revision: String,
    /// (file name, hash) of each file the model was loaded from, in the encoder's order.
    pub file_hashes: Vec<(String, String)>,
    /// Length of each vector.
    pub dims: usize,
}

impl fmt::Display for ModelIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{} ({} dims", self.id, self.revision, self.dims)?;
        for (name, hash) in &self.file_hashes {
            write!(f, ", {name} {hash}")?;
        }
        write!(f, ")")
    }
}

/// An encoder failed; the message says why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct EncodeError(pub String);

/// Turns texts into vectors whose cosine similarity says how close their meanings are.
///
/// Contract: `encode` answers one vector per text, in order, each of `dims()` values and
/// L2-normalized (so the dot product is the cosine); a text with nothing to encode may
/// give the zero vector. `identity().dims == dims()`.
pub trait Encoder: Send + Sync {
    fn identity(&self) -> ModelIdentity;
    fn dims(&self) -> usize;
    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError>;

    /// A search query's vector: with the model's query prompt where it has one (as
    /// sentence-transformers' `encode_query`), else as [`Encoder::encode`] gives it.
    fn encode_query(&self, text: &str) -> Result<Vec<f32>, EncodeError> {
        Ok(self.encode(&[text])?.into_iter().next().unwrap_or_default())
    }
}

/// A STAND-IN for tests and benchmarks, not a model: no production use.
///
/// Each word (lowercased, common English function words dropped, a plural `s` removed) is
/// a "concept" hashed to one dimension, except that the words and phrases of a synonym
/// group share the group's dimension. So "sleep deprivation and recall" and "insomnia
/// impairs memory" are close although they share no word, which is what tests of search
/// by meaning need, deterministically and in microseconds.
#[derive(Debug, Clone)]
pub struct SynonymEncoder {
    dims: usize,
    groups: Vec<Vec<String>>,
}

/// The synonym groups of [`SynonymEncoder::default`].
pub const DEFAULT_SYNONYMS: &[&[&str]] = &[
    &[
        "insomnia",
        "sleep deprivation",
        "sleeplessness",
        "sleep loss",
    ],
    &["memory", "recall", "remembering", "retention"],
    &["car", "automobile", "vehicle"],
    &["heart attack", "myocardial infarction", "cardiac arrest"],
    &["cancer", "tumor", "tumour", "neoplasm", "carcinoma"],
    &["child", "children", "kid", "pediatric", "paediatric"],
    &["climate change", "global warming"],
    &["neural network", "deep learning", "connectionist model"],
];

const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "on", "in", "and", "or", "for", "to", "with", "by", "is", "are", "how",
    "what", "does", "do", "its", "it", "at", "as", "from", "that", "this", "be",
];

impl Default for SynonymEncoder {
    fn default() -> Self {
        Self::new(256, DEFAULT_SYNONYMS)
    }
}

impl SynonymEncoder {
    /// `dims` is at least 1; `groups` lists words or phrases (lowercase) of one meaning each.
    pub fn new(dims: usize, groups: &[&[&str]]) -> Self {
        Self {
            dims: dims.max(1),
            groups: groups
                .iter()
                .map(|g| g.iter().map(|w| w.to_lowercase()).collect())
                .collect(),
        }
    }

    fn concepts(&self, text: &str) -> Vec<String> {
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut out = Vec::new();
        let mut i = 0;
        while let Some(word) = words.get(i) {
            // The longest phrase of a group starting here (phrases are up to 3 words).
            let mut found = None;
            for len in (1..=3).rev() {
                let Some(phrase) = words.get(i..i + len) else {
                    continue;
                };
                let phrase = phrase.join(" ");
                if let Some(g) = self.groups.iter().position(|g| g.contains(&phrase)) {
                    found = Some((g, len));
                    break;
                }
            }
            if let Some((g, len)) = found {
                out.push(format!("group {g}"));
                i += len;
                continue;
            }
            i += 1;
            if STOPWORDS.contains(&word.as_str()) {
                continue;
            }
            let stem = match word.strip_suffix('s') {
                Some(s) if s.len() > 2 && !s.ends_with('s') => s,
                _ => word.as_str(),
            };
            out.push(stem.to_string());
        }
        out
    }

    fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dims];
        for concept in self.concepts(text) {
            let slot = (fnv1a(concept.as_bytes()) % self.dims as u64) as usize;
            if let Some(x) = v.get_mut(slot) {
                *x += 1.0;
            }
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Encoder for SynonymEncoder {
    fn identity(&self) -> ModelIdentity {
        ModelIdentity {
            id: "zotero-index/synonym-stand-in".to_string(),
            revision: format!("{} groups", self.groups.len()),
            file_hashes: Vec::new(),
            dims: self.dims,
        }
    }

    fn dims(&self) -> usize {
        self.dims
    }

    fn encode(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EncodeError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

#[cfg(test)]
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod tests {
    use super::*;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn synonyms_without_shared_words_are_close() {
        let e = SynonymEncoder::default();
        let v = e
            .encode(&[
                "effects of insomnia on memory",
                "Sleep deprivation impairs recall",
                "A history of the automobile",
            ])
            .unwrap();
        let near = dot(&v[0], &v[1]);
        let far = dot(&v[0], &v[2]);
        assert!(near > 0.5, "{near}");
        assert!(far < near, "{far} vs {near}");
    }

    #[test]
    fn vectors_are_normalized_or_zero() {
        let e = SynonymEncoder::default();
        for v in e
            .encode(&["", "the of", "cancer in children", "x"])
            .unwrap()
        {
            assert_eq!(v.len(), 256);
            let n: f32 = v.iter().map(|x| x * x).sum();
            assert!(n == 0.0 || (n - 1.0).abs() < 1e-5, "{n}");
        }
    }
}
