//! Reading what is kept from the file: the key of its keyword index's state, the rows'
//! lengths and totals ([`Stats`]), a term's postings, FTS5's records decoded as FTS5
//! decodes them.

use rusqlite::OptionalExtension;

use crate::error::Result;
use crate::store::Index;

/// FTS5's BM25 constants (`fts5Bm25Function`).
pub(crate) const K1: f64 = 1.2;
pub(crate) const B: f64 = 0.75;

/// The keyword index's columns, in order, and the weight `bm25()` is given for each
/// (`rank::keyword::BM25`).
pub(crate) const COLUMNS: [(&str, f64); 3] = [("title", 2.0), ("meta", 1.0), ("body", 1.0)];

/// FTS5's rowids of its averages and structure records in `chunks_fts_data`.
const AVERAGES_ROWID: i64 = 1;
const STRUCTURE_ROWID: i64 = 10;

/// What a copy of an index's keyword statistics and postings is valid for (see the
/// notes of [`crate::kwcache`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KeywordKey {
    file: (u64, u64),
    generation: Option<String>,
    averages: Vec<u8>,
    structure: Vec<u8>,
}

/// Every keyword row's share of BM25's denominator, and the table's statistics.
#[derive(Debug)]
pub(crate) struct Stats {
    pub(crate) key: KeywordKey,
    /// Rows ever inserted, as FTS5's averages record counts them (`xRowCount`).
    pub(crate) n_row: i64,
    /// The rowids of the rows there now (`chunks_fts_docsize`), ascending.
    pub(crate) rowids: Vec<i64>,
    /// Per row (as `rowids`): `k1 · (1 − b + b · D / avgdl)`, D its tokens in all columns.
    pub(crate) norm: Vec<f64>,
}

/// The rows holding one term: each row's place in [`Stats::rowids`], ascending, and the
/// term's frequency there, each instance counting its column's weight.
#[derive(Debug, Default)]
pub(crate) struct Postings {
    pub(crate) slots: Vec<u32>,
    pub(crate) freqs: Vec<f64>,
}

impl Stats {
    pub(crate) fn len(&self) -> usize {
        self.rowids.len()
    }

    pub(crate) fn bytes(&self) -> usize {
        self.rowids.len() * (8 + 8) + self.key.averages.len() + self.key.structure.len()
    }

    /// The place of `rowid` in [`Stats::rowids`].
    pub(crate) fn slot(&self, rowid: i64) -> Option<u32> {
        self.rowids
            .binary_search(&rowid)
            .ok()
            .and_then(|s| u32::try_from(s).ok())
    }
}

impl Postings {
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn bytes(&self) -> usize {
        self.slots.len() * 4 + self.freqs.len() * 8
    }
}

/// SQLite's variable-length integer (FTS5's `sqlite3Fts5GetVarint`): 7 bits a byte, the
/// most significant first, the ninth byte all 8; the value and the bytes read.
pub(crate) fn varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for i in 0..8 {
        let b = *buf.get(i)?;
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    let b = *buf.get(8)?;
    Some(((v << 8) | u64::from(b), 9))
}

/// A row's length in tokens from its `docsize` record, summed over the columns as
/// `xColumnSize(-1)` sums them (C `int`s); `None` where FTS5 finds the record corrupt.
fn row_tokens(sz: &[u8]) -> Option<i32> {
    let mut at = 0;
    let mut n: i32 = 0;
    for _ in 0..COLUMNS.len() {
        let (v, read) = varint(sz.get(at..)?)?;
        at += read;
        n = n.wrapping_add(v as u32 as i32);
    }
    (at == sz.len()).then_some(n)
}

/// (rows, tokens in all columns) from FTS5's averages record, as
/// `sqlite3Fts5IndexGetAverages` reads it (missing sizes are 0).
fn totals(rec: &[u8]) -> (i64, i64) {
    let Some((rows, mut at)) = varint(rec) else {
        return (0, 0);
    };
    let mut tokens: i64 = 0;
    for _ in 0..COLUMNS.len() {
        let Some((v, read)) = rec.get(at..).and_then(varint) else {
            break;
        };
        at += read;
        tokens = tokens.wrapping_add(v as i64);
    }
    (rows as i64, tokens)
}

impl Index {
    /// The key of the keyword index's state now; `None` when the file cannot be told
    /// from another (its inode unknown). Read inside the search's read transaction.
    pub(crate) fn keyword_key(&self) -> Result<Option<KeywordKey>> {
        let Some(file) = self.file_id else {
            return Ok(None);
        };
        let record = |id: i64| -> Result<Vec<u8>> {
            Ok(self
                .conn
                .prepare_cached("SELECT block FROM chunks_fts_data WHERE id = ?1")?
                .query_row([id], |r| r.get::<_, Vec<u8>>(0))
                .optional()?
                .unwrap_or_default())
        };
        Ok(Some(KeywordKey {
            file,
            generation: self.meta("data_generation")?,
            averages: record(AVERAGES_ROWID)?,
            structure: record(STRUCTURE_ROWID)?,
        }))
    }

    /// Every row's length and the totals, for `key` (read in the same transaction);
    /// `None` when a record is not as FTS5 writes it (FTS5 answers that, as corrupt).
    pub(crate) fn keyword_stats(&self, key: KeywordKey) -> Result<Option<Stats>> {
        let (n_row, n_token) = totals(&key.averages);
        let avgdl = n_token as f64 / n_row as f64;
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, sz FROM chunks_fts_docsize ORDER BY id")?;
        let mut rows = stmt.query([])?;
        let (mut rowids, mut norm) = (Vec::new(), Vec::new());
        while let Some(r) = rows.next()? {
            let sz: Vec<u8> = r.get(1)?;
            let Some(tokens) = row_tokens(&sz) else {
                return Ok(None);
            };
            rowids.push(r.get::<_, i64>(0)?);
            // As fts5Bm25Function computes it: (1 - b + b * D / avgdl), times k1.
            let d = f64::from(tokens);
            norm.push(K1 * (1.0 - B + B * d / avgdl));
        }
        Ok(Some(Stats {
            key,
            n_row,
            rowids,
            norm,
        }))
    }

    /// Makes `temp.chunks_instances`: each instance of each term of the keyword index
    /// (`fts5vocab` of type instance), for this connection only.
    pub(crate) fn instances_view(&self) -> Result<()> {
        self.conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_instances
             USING fts5vocab(main, chunks_fts, instance)",
        )?;
        Ok(())
    }

    /// The postings of `term` in the state `stats` was read in (the same transaction):
    /// per row, the sum of the weights of the columns of its instances, summed in FTS5's
    /// order (column, then offset). `None` when a row is not among `stats`' rows. Needs
    /// [`Index::instances_view`].
    pub(crate) fn keyword_postings(&self, stats: &Stats, term: &str) -> Result<Option<Postings>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT doc, col FROM temp.chunks_instances WHERE term = ?1")?;
        let mut rows = stmt.query([term])?;
        let mut out = Postings::default();
        let mut last: Option<i64> = None;
        let mut sorted = true;
        while let Some(r) = rows.next()? {
            let doc: i64 = r.get(0)?;
            let col: String = r.get(1)?;
            let Some(&(_, w)) = COLUMNS.iter().find(|(c, _)| *c == col) else {
                return Ok(None);
            };
            if last == Some(doc) {
                if let Some(f) = out.freqs.last_mut() {
                    *f += w;
                }
                continue;
            }
            let Some(slot) = stats.slot(doc) else {
                return Ok(None);
            };
            sorted &= out.slots.last().is_none_or(|&s| s < slot);
            last = Some(doc);
            out.slots.push(slot);
            out.freqs.push(w);
        }
        if !sorted {
            // FTS5 gives a term's rows in rowid order; were they not, the same row's
            // instances apart would be merged here.
            let mut pairs: Vec<(u32, f64)> = out.slots.into_iter().zip(out.freqs).collect();
            pairs.sort_by_key(|p| p.0);
            let mut merged: Vec<(u32, f64)> = Vec::with_capacity(pairs.len());
            for (s, f) in pairs {
                match merged.last_mut() {
                    Some(m) if m.0 == s => m.1 += f,
                    _ => merged.push((s, f)),
                }
            }
            out = Postings {
                slots: merged.iter().map(|p| p.0).collect(),
                freqs: merged.iter().map(|p| p.1).collect(),
            };
        }
        Ok(Some(out))
    }

    /// How many rows hold `term` (FTS5's vocabulary of rows; the whole list of the term
    /// is read, not kept). Needs [`Index::words_view`].
    pub(crate) fn term_rows(&self, term: &str) -> Result<u64> {
        let doc: Option<i64> = self
            .conn
            .prepare_cached("SELECT doc FROM temp.chunks_words WHERE term = ?1")?
            .query_row([term], |r| r.get(0))
            .optional()?;
        Ok(doc.unwrap_or(0).max(0) as u64)
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

    #[test]
    fn varints_decode_as_sqlite_writes_them() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81]), None);
        assert_eq!(row_tokens(&[1, 2, 3]), Some(6));
        assert_eq!(row_tokens(&[1, 2]), None, "a column missing");
        assert_eq!(row_tokens(&[1, 2, 3, 4]), None, "a byte too many");
        assert_eq!(totals(&[10, 1, 0x81, 0x00, 3]), (10, 132));
        assert_eq!(totals(&[]), (0, 0));
    }
}
