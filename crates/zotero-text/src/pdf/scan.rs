//! The whole file read once, linearly, before lopdf loads it: lopdf's load cannot be stopped
//! part way, and some inputs make it recurse, allocate or parse far more than the file's
//! size. The scan refuses what no real file does (objects nested deeper than
//! [`MAX_DEPTH`], more values than [`MAX_VALUES`], stream lengths that name large objects)
//! and says when the file's cross-references cannot be trusted to name distinct objects
//! (then the file is loaded by scanning for its objects instead, each parsed once).

use std::collections::{HashMap, HashSet};

use lopdf::content::Content;
use lopdf::{Object, Stream};

use super::lex::{find, Kind, Lexer, Token};
use crate::budget::Budget;
use crate::document::TextError;

/// Brackets open at once in an object (lopdf stops at 100 itself; real files use ~10).
pub(crate) const MAX_DEPTH: usize = 100;
/// Values (numbers, names, strings, brackets, cross-reference entries) outside streams,
/// object streams' included: each becomes one of lopdf's objects (120 bytes, more in a
/// dictionary, twice while an array grows), so this bounds the memory of a loaded file
/// (~200 MB measured for one array of a million numbers).
pub(crate) const MAX_VALUES: usize = 1_000_000;

/// What the scan found.
pub(crate) struct Scan {
    /// Values outside streams.
    pub(crate) values: usize,
    /// The cross-reference data names offsets that are not distinct top-level objects
    /// (several entries at one object, entries inside strings or streams), or a stream's
    /// `/Length` names an object inside an object stream: lopdf would parse some objects
    /// many times, or decode an object stream the load's checks never saw.
    pub(crate) reconstruct: bool,
}

/// Where the scan is inside the current object.
#[derive(Default)]
struct Object_ {
    number: u32,
    start: usize,
    /// The span of the object's dictionary (a stream's), when it is one.
    dict: Option<(usize, usize)>,
    dict_open: Option<usize>,
    xref_stream: bool,
}

#[derive(Default)]
struct State {
    values: usize,
    depth: usize,
    /// Offsets of `N G obj` markers at the top level.
    markers: HashSet<usize>,
    /// Each object's span, the last definition kept (as an update replaces it).
    spans: HashMap<u32, usize>,
    object: Option<Object_>,
    /// Object numbers named by a `/Length N G R`.
    length_refs: Vec<u32>,
    /// In-use cross-reference entries: (object number, offset).
    entries: Vec<(u32, usize)>,
    /// Cross-reference streams: (dictionary span, data span).
    xref_streams: Vec<((usize, usize), (usize, usize))>,
    /// The last three tokens with the depth they were read at.
    last: [Option<(Token, usize)>; 3],
}

pub(crate) fn scan(bytes: &[u8], budget: &Budget) -> Result<Scan, TextError> {
    let mut lx = Lexer::new(bytes);
    let mut st = State::default();
    while let Some(t) = lx.next_token() {
        st.values += 1;
        if st.values.is_multiple_of(4096) {
            budget.check()?;
            if st.values > MAX_VALUES {
                return Err(TextError::TooManyObjects {
                    values: st.values,
                    limit: MAX_VALUES,
                });
            }
        }
        st.token(&mut lx, bytes, t)?;
        st.last = [st.last[1], st.last[2], Some((t, st.depth))];
    }
    if st.values > MAX_VALUES {
        return Err(TextError::TooManyObjects {
            values: st.values,
            limit: MAX_VALUES,
        });
    }
    let mut reconstruct = false;
    for (dict, data) in std::mem::take(&mut st.xref_streams) {
        budget.check()?;
        match xref_stream_entries(bytes, dict, data, budget.limits.max_decoded_bytes) {
            Some(entries) => st.entries.extend(entries),
            None => reconstruct = true,
        }
    }
    reconstruct |= !st.entries_trusted(bytes);
    let mut named = 0usize;
    for n in &st.length_refs {
        match st.spans.get(n) {
            Some(len) => named = named.saturating_add(*len),
            None => reconstruct = true,
        }
    }
    // Each `/Length N G R` makes lopdf parse object N again: together no more than the file.
    if named > bytes.len().saturating_mul(2).saturating_add(1 << 20) {
        return Err(TextError::Damaged {
            reason: "its streams' lengths name large objects, not numbers".to_owned(),
        });
    }
    Ok(Scan {
        values: st.values,
        reconstruct,
    })
}

impl State {
    fn token(&mut self, lx: &mut Lexer<'_>, bytes: &[u8], t: Token) -> Result<(), TextError> {
        match t.kind {
            Kind::Open => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    // Bytes outside any object are junk lopdf does not parse.
                    if self.object.is_none() {
                        self.depth = MAX_DEPTH;
                    } else {
                        return Err(TextError::Damaged {
                            reason: format!("its objects are nested more than {MAX_DEPTH} deep"),
                        });
                    }
                }
                if let Some(o) = self.object.as_mut() {
                    if self.depth == 1 && o.dict.is_none() {
                        o.dict_open = Some(t.start);
                    }
                }
            }
            Kind::Close => {
                if let Some(o) = self.object.as_mut() {
                    if self.depth == 1 && o.dict.is_none() {
                        o.dict = o.dict_open.map(|s| (s, t.end));
                    }
                }
                self.depth = self.depth.saturating_sub(1);
            }
            Kind::Name if self.depth == 1 => {
                let after_type = self.last[2].is_some_and(|(p, d)| {
                    d == 1 && p.kind == Kind::Name && name_is(lx.text(&p), b"Type")
                });
                if after_type && name_is(lx.text(&t), b"XRef") {
                    if let Some(o) = self.object.as_mut() {
                        o.xref_stream = true;
                    }
                }
            }
            Kind::Keyword => self.keyword(lx, bytes, t),
            _ => {}
        }
        Ok(())
    }

    fn keyword(&mut self, lx: &mut Lexer<'_>, bytes: &[u8], t: Token) {
        match lx.text(&t) {
            b"obj" => {
                // Objects are self-contained: whatever a broken one left open ends here.
                self.depth = 0;
                if let [_, Some((n, _)), Some((g, _))] = self.last {
                    if let (Kind::Integer(number), Kind::Integer(_)) = (n.kind, g.kind) {
                        self.markers.insert(n.start);
                        self.object = Some(Object_ {
                            number: u32::try_from(number).unwrap_or(u32::MAX),
                            start: n.start,
                            ..Object_::default()
                        });
                    }
                }
            }
            b"endobj" => {
                self.depth = 0;
                if let Some(o) = self.object.take() {
                    self.spans.insert(o.number, t.end.saturating_sub(o.start));
                }
            }
            b"stream" => {
                let mut start = t.end;
                if bytes.get(start) == Some(&b'\r') {
                    start += 1;
                }
                if bytes.get(start) == Some(&b'\n') {
                    start += 1;
                }
                let end = find(bytes, b"endstream", start).unwrap_or(bytes.len());
                lx.seek(end);
                if let Some(o) = self.object.as_ref().filter(|o| o.xref_stream) {
                    if let Some(dict) = o.dict {
                        self.xref_streams.push((dict, (start, end)));
                    }
                }
            }
            b"R" => {
                if let [Some((k, 1)), Some((n, 1)), Some((_, 1))] = self.last {
                    if k.kind == Kind::Name && name_is(lx.text(&k), b"Length") {
                        if let Kind::Integer(number) = n.kind {
                            self.length_refs
                                .push(u32::try_from(number).unwrap_or(u32::MAX));
                        }
                    }
                }
            }
            b"xref" if self.depth == 0 => self.xref_table(lx),
            _ => {}
        }
    }

    /// A classic cross-reference section: subsections of `first count` then 20-byte
    /// entries `offset generation n|f`; the in-use ones are kept.
    fn xref_table(&mut self, lx: &mut Lexer<'_>) {
        loop {
            let save = lx.pos;
            let (Some(a), Some(b)) = (lx.next_token(), lx.next_token()) else {
                lx.seek(save);
                return;
            };
            let (Kind::Integer(first), Kind::Integer(count)) = (a.kind, b.kind) else {
                lx.seek(save);
                return;
            };
            for i in 0..count {
                let save = lx.pos;
                let (Some(o), Some(_), Some(k)) =
                    (lx.next_token(), lx.next_token(), lx.next_token())
                else {
                    lx.seek(save);
                    return;
                };
                let Kind::Integer(offset) = o.kind else {
                    lx.seek(save);
                    return;
                };
                self.values += 1;
                if lx.text(&k) == b"n" {
                    let number = u32::try_from(first.saturating_add(i)).unwrap_or(u32::MAX);
                    self.entries
                        .push((number, usize::try_from(offset).unwrap_or(usize::MAX)));
                }
            }
        }
    }

    /// Whether every in-use entry names a top-level object of its own.
    fn entries_trusted(&self, bytes: &[u8]) -> bool {
        let mut owner: HashMap<usize, u32> = HashMap::with_capacity(self.entries.len());
        self.entries.iter().all(|&(number, offset)| {
            let at = skip_space(bytes, offset);
            self.markers.contains(&at) && *owner.entry(at).or_insert(number) == number
        })
    }
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0'))
    {
        at += 1;
    }
    at
}

/// Whether the name token `raw` (with its slash, `#xx` escapes allowed) is `want`.
pub(crate) fn name_is(raw: &[u8], want: &[u8]) -> bool {
    let raw = raw.strip_prefix(b"/").unwrap_or(raw);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        let hex = raw
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'#', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out == want
}

/// The in-use entries of a cross-reference stream, decoded with lopdf's filters; `None`
/// when it cannot be read.
fn xref_stream_entries(
    bytes: &[u8],
    dict: (usize, usize),
    data: (usize, usize),
    limit: usize,
) -> Option<Vec<(u32, usize)>> {
    // The dictionary read by lopdf's content parser, as the operand of a dummy operator.
    let mut text = bytes.get(dict.0..dict.1)?.to_vec();
    text.extend_from_slice(b" x");
    let op = Content::decode_iter(&text).next()?.ok()?;
    let Some(Object::Dictionary(dict)) = op.operands.into_iter().next() else {
        return None;
    };
    let raw = bytes.get(data.0..data.1)?;
    let raw = raw.strip_suffix(b"\n").unwrap_or(raw);
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    let ints = |key: &[u8]| -> Option<Vec<u64>> {
        dict.get(key)
            .ok()?
            .as_array()
            .ok()?
            .iter()
            .map(|o| o.as_i64().ok().and_then(|v| u64::try_from(v).ok()))
            .collect()
    };
    let w = ints(b"W")?;
    let size = dict.get(b"Size").ok()?.as_i64().ok()?;
    let index = ints(b"Index").unwrap_or_else(|| vec![0, u64::try_from(size).unwrap_or(0)]);
    let stream = Stream {
        dict: dict.clone(),
        content: raw.to_vec(),
        allows_compression: true,
        start_position: None,
    };
    let decoded = stream.get_plain_content_with_limit(limit).ok()?;
    let [w0, w1, w2] = w.as_slice() else {
        return None;
    };
    let [kind_w, offset_w, rest_w] =
        [*w0, *w1, *w2].map(|w| usize::try_from(w).unwrap_or(usize::MAX));
    if kind_w > 8 || offset_w > 8 || rest_w > 8 {
        return None;
    }
    let row = kind_w + offset_w + rest_w;
    let mut rows = decoded.chunks_exact(row.max(1));
    let mut out = Vec::new();
    for pair in index.chunks_exact(2) {
        let [first, count] = pair else { continue };
        for i in 0..*count {
            let Some(entry) = rows.next() else {
                return Some(out);
            };
            let (kind, rest) = entry.split_at(kind_w.min(entry.len()));
            let (offset, _) = rest.split_at(offset_w.min(rest.len()));
            let kind = if kind.is_empty() { 1 } else { be(kind) };
            if kind == 1 {
                let number = u32::try_from(first.saturating_add(i)).unwrap_or(u32::MAX);
                out.push((number, usize::try_from(be(offset)).unwrap_or(usize::MAX)));
            }
        }
    }
    Some(out)
}

/// A big-endian unsigned integer.
fn be(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0u64, |v, b| v.wrapping_shl(8) | u64::from(*b))
}
