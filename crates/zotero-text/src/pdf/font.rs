//! A font as the text extractor needs it: how a string splits into character codes, each
//! code's advance width and its Unicode text, and the vertical extent of a glyph box. Built
//! from the font dictionary (`/Widths`, `/W`, `/ToUnicode`, `/Encoding`, `/FontDescriptor`);
//! the font programs themselves are never read.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use lopdf::{Dictionary, Document, Encoding, Object};

use super::obj::{num, resolve};

/// The most bytes an embedded font program may decode to (a CJK TrueType font is ~20 MB).
const MAX_PROGRAM: usize = 32 << 20;
use super::std14;

/// One font of a page, ready to map codes.
pub(crate) struct Font {
    /// Type0 (composite) fonts take two bytes per code; simple fonts one.
    two_byte: bool,
    /// Simple fonts: width per code in glyph units (1/1000 em unless Type 3).
    simple_widths: [f64; 256],
    /// Composite fonts: `/W` as ranges keyed by their first code.
    cid_widths: BTreeMap<u32, (u32, f64)>,
    default_width: f64,
    /// Glyph units to text space: 0.001, or a Type 3 font's `/FontMatrix` scale.
    pub(crate) scale: f64,
    /// Top and bottom of a glyph box, in em (ascent > 0 > descent).
    pub(crate) ascent: f64,
    pub(crate) descent: f64,
    /// Simple fonts: the text of each code, computed once.
    simple_text: Vec<String>,
    /// Composite fonts: the `/ToUnicode` map, read per code (and cached).
    to_unicode: Option<Encoding<'static>>,
    cid_text: RefCell<HashMap<u32, String>>,
    /// Composite TrueType fonts with `Identity-H`/`-V`: the program's glyph → character map
    /// (its `cmap` read backwards), for codes `/ToUnicode` does not map (or when there is none).
    glyph_text: HashMap<u16, char>,
    /// Their `/CIDToGIDMap` as a stream (two bytes per CID); `None` is the identity.
    cid_to_gid: Option<Vec<u8>>,
}

impl Font {
    /// The font of `dict`; `limit` bounds a `/ToUnicode` stream's decoded size.
    pub(crate) fn load(
        doc: &Document,
        dict: &Dictionary,
        limit: usize,
    ) -> Result<Font, lopdf::Error> {
        let subtype = dict
            .get(b"Subtype")
            .and_then(Object::as_name)
            .unwrap_or(b"");
        let two_byte = subtype == b"Type0";
        let descendant = if two_byte {
            dict.get(b"DescendantFonts")
                .ok()
                .and_then(|o| resolve(doc, o).as_array().ok())
                .and_then(|a| a.first())
                .and_then(|o| resolve(doc, o).as_dict().ok())
        } else {
            None
        };
        let descriptor = descendant
            .unwrap_or(dict)
            .get(b"FontDescriptor")
            .ok()
            .and_then(|o| resolve(doc, o).as_dict().ok());
        let get_desc = |key: &[u8]| {
            descriptor
                .and_then(|d| d.get(key).ok())
                .and_then(|o| num(doc, o))
        };
        let (ascent, descent) = extent(get_desc(b"Ascent"), get_desc(b"Descent"));
        let scale = if subtype == b"Type3" {
            dict.get(b"FontMatrix")
                .ok()
                .and_then(|o| resolve(doc, o).as_array().ok())
                .and_then(|a| a.first())
                .and_then(|o| num(doc, o))
                .filter(|s| s.is_finite() && *s != 0.0)
                .map_or(0.001, f64::abs)
        } else {
            0.001
        };
        let base_font = dict
            .get(b"BaseFont")
            .and_then(Object::as_name)
            .unwrap_or(b"");
        let missing = get_desc(b"MissingWidth").unwrap_or(0.0);
        let mut font = Font {
            two_byte,
            simple_widths: [missing; 256],
            cid_widths: BTreeMap::new(),
            default_width: 1000.0,
            scale,
            ascent,
            descent,
            simple_text: Vec::new(),
            to_unicode: None,
            cid_text: RefCell::new(HashMap::new()),
            glyph_text: HashMap::new(),
            cid_to_gid: None,
        };
        if let Some(desc) = descendant {
            font.default_width = desc
                .get(b"DW")
                .ok()
                .and_then(|o| num(doc, o))
                .unwrap_or(1000.0);
            if let Ok(w) = desc.get(b"W") {
                font.cid_widths = cid_widths(doc, resolve(doc, w));
            }
            font.truetype_glyphs(doc, dict, desc, descriptor, limit);
        }
        font.read_text(doc, dict, descriptor, limit)?;
        if descendant.is_none() {
            // After the text: a standard font's widths go by the character each code shows.
            font.simple_widths(doc, dict, base_font, missing);
        }
        Ok(font)
    }

    /// The text of codes: `/ToUnicode`, else the encoding (the dictionary's, or an embedded
    /// Type 1 program's own).
    fn read_text(
        &mut self,
        doc: &Document,
        dict: &Dictionary,
        descriptor: Option<&Dictionary>,
        limit: usize,
    ) -> Result<(), lopdf::Error> {
        let to_unicode = if dict.has(b"ToUnicode") {
            with_encoding(doc, dict, b"Encoding", limit, |enc| match enc {
                Encoding::UnicodeMapEncoding(map) => Some(Encoding::UnicodeMapEncoding(map)),
                _ => None,
            })?
            .flatten()
        } else {
            None
        };
        if self.two_byte {
            self.to_unicode = to_unicode;
        } else {
            let table = |e: &Encoding<'_>| {
                (0..=255u8)
                    .map(|b| decode(Some(e), &[b]))
                    .collect::<Vec<_>>()
            };
            let unicode = to_unicode.as_ref().map(table);
            let builtin = descriptor.and_then(|d| builtin_encoding(doc, dict, d, limit));
            let base = with_encoding(
                doc,
                builtin.as_ref().unwrap_or(dict),
                b"ToUnicode",
                limit,
                |enc| table(&enc),
            )?;
            self.simple_text = (0..256)
                .map(|i| {
                    let pick = |t: &Option<Vec<String>>| {
                        t.as_ref()
                            .and_then(|t| t.get(i))
                            .filter(|s| !s.is_empty())
                            .cloned()
                    };
                    pick(&unicode).or_else(|| pick(&base)).unwrap_or_default()
                })
                .collect();
        }
        Ok(())
    }

    /// A composite TrueType font's glyph → character map, from its embedded program's
    /// `cmap`, when its codes are CIDs (`Identity-H`/`-V`).
    fn truetype_glyphs(
        &mut self,
        doc: &Document,
        dict: &Dictionary,
        descendant: &Dictionary,
        descriptor: Option<&Dictionary>,
        limit: usize,
    ) {
        fn name<'a>(doc: &'a Document, d: &'a Dictionary, key: &[u8]) -> Option<&'a Object> {
            d.get(key).ok().map(|o| resolve(doc, o))
        }
        let identity = matches!(
            name(doc, dict, b"Encoding").and_then(|o| o.as_name().ok()),
            Some(b"Identity-H" | b"Identity-V")
        );
        let truetype = descendant.get(b"Subtype").and_then(Object::as_name).ok()
            == Some(b"CIDFontType2".as_slice());
        if !identity || !truetype {
            return;
        }
        let stream = |o: Option<&Object>| {
            o.and_then(|o| o.as_stream().ok())
                .and_then(|s| s.get_plain_content_with_limit(limit.min(MAX_PROGRAM)).ok())
        };
        let Some(program) = stream(descriptor.and_then(|d| name(doc, d, b"FontFile2"))) else {
            return;
        };
        self.glyph_text = super::truetype::glyph_chars(&program);
        self.cid_to_gid = stream(name(doc, descendant, b"CIDToGIDMap"));
    }

    fn simple_widths(&mut self, doc: &Document, dict: &Dictionary, base_font: &[u8], missing: f64) {
        let first = dict
            .get(b"FirstChar")
            .ok()
            .and_then(|o| num(doc, o))
            .unwrap_or(0.0);
        let widths = dict
            .get(b"Widths")
            .ok()
            .and_then(|o| resolve(doc, o).as_array().ok());
        match widths {
            Some(widths) if (0.0..256.0).contains(&first) => {
                let first = first as usize;
                for (slot, w) in self.simple_widths.iter_mut().skip(first).zip(widths) {
                    *slot = num(doc, w).unwrap_or(missing);
                }
            }
            _ => {
                for (code, slot) in self.simple_widths.iter_mut().enumerate() {
                    let mut chars = self.simple_text.get(code).map(|t| t.chars());
                    let one = chars
                        .as_mut()
                        .and_then(Iterator::next)
                        .filter(|_| chars.as_mut().is_some_and(|c| c.next().is_none()));
                    *slot = std14::width(base_font, code, one);
                }
            }
        }
    }

    /// Splits `bytes` into codes: (code, its bytes).
    pub(crate) fn codes<'b>(&self, bytes: &'b [u8]) -> impl Iterator<Item = (u32, &'b [u8])> + 'b {
        let step = if self.two_byte { 2 } else { 1 };
        bytes
            .chunks(step)
            .map(|c| (c.iter().fold(0u32, |acc, b| (acc << 8) | u32::from(*b)), c))
    }

    /// The advance width of `code`, in glyph units.
    pub(crate) fn width(&self, code: u32) -> f64 {
        if self.two_byte {
            match self.cid_widths.range(..=code).next_back() {
                Some((_, (last, w))) if code <= *last => *w,
                _ => self.default_width,
            }
        } else {
            self.simple_widths
                .get(code as usize)
                .copied()
                .unwrap_or(0.0)
        }
    }

    /// Whether `code` is the single-byte space that word spacing (`Tw`) applies to.
    pub(crate) fn is_word_space(&self, code_bytes: &[u8]) -> bool {
        code_bytes == [32]
    }

    /// The text of `code`, or an empty string when the font does not say.
    pub(crate) fn text(&self, code: u32, code_bytes: &[u8]) -> String {
        if !self.two_byte {
            return self
                .simple_text
                .get(code as usize)
                .cloned()
                .unwrap_or_default();
        }
        let mut cache = self.cid_text.borrow_mut();
        if let Some(text) = cache.get(&code) {
            return text.clone();
        }
        let mut text = decode(self.to_unicode.as_ref(), code_bytes);
        if text.is_empty() {
            text = self.glyph_char(code).map(String::from).unwrap_or_default();
        }
        if cache.len() < 65_536 {
            cache.insert(code, text.clone());
        }
        text
    }
}

impl Font {
    /// The character of CID `code` through the program's glyphs (see `truetype_glyphs`).
    fn glyph_char(&self, code: u32) -> Option<char> {
        let gid = match &self.cid_to_gid {
            None => u16::try_from(code).ok()?,
            Some(map) => {
                let at = usize::try_from(code).ok()?.checked_mul(2)?;
                u16::from_be_bytes(map.get(at..at + 2)?.try_into().ok()?)
            }
        };
        let c = *self.glyph_text.get(&gid)?;
        (!c.is_control()).then_some(c)
    }
}

/// The text of one code in `enc`; control characters and U+FFFD are no text.
fn decode(enc: Option<&Encoding<'_>>, bytes: &[u8]) -> String {
    let text = enc
        .and_then(|e| e.bytes_to_string(bytes).ok())
        .unwrap_or_default();
    if text.contains('\u{fffd}') {
        return String::new();
    }
    text.chars()
        .filter_map(|c| match c {
            '\t' => Some(' '),
            c if c.is_control() => None,
            c => Some(c),
        })
        .collect()
}

/// Calls `f` with the font's encoding as lopdf reads it with `key` removed from the
/// dictionary (lopdf prefers `/Encoding` over `/ToUnicode`; we want each on its own). Only a
/// decompression bomb is an error; an encoding lopdf cannot read is `None`.
fn with_encoding<T>(
    doc: &Document,
    dict: &Dictionary,
    key: &[u8],
    limit: usize,
    f: impl FnOnce(Encoding<'_>) -> T,
) -> Result<Option<T>, lopdf::Error> {
    let mut dict = dict.clone();
    dict.remove(key);
    match dict.get_font_encoding_with_limit(doc, limit) {
        Ok(enc) => Ok(Some(f(enc))),
        Err(err @ lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
            Err(err)
        }
        Err(_) => Ok(None),
    }
}

/// The font dictionary with the embedded Type 1 program's own encoding made explicit (as
/// `/Differences`, the dictionary's own differences applied after), when the dictionary
/// names no base encoding: TeX's math fonts (CMSY, CMMI…) map codes only there, so the
/// standard encoding would turn `∈` into `2`. Only the program's clear-text part is read.
fn builtin_encoding(
    doc: &Document,
    dict: &Dictionary,
    descriptor: &Dictionary,
    limit: usize,
) -> Option<Dictionary> {
    let encoding = dict.get(b"Encoding").ok().map(|o| resolve(doc, o));
    let own: Vec<Object> = match encoding {
        None => Vec::new(),
        Some(Object::Dictionary(d)) if !d.has(b"BaseEncoding") => d
            .get(b"Differences")
            .ok()
            .and_then(|o| resolve(doc, o).as_array().ok())
            .cloned()
            .unwrap_or_default(),
        Some(_) => return None,
    };
    let program = descriptor
        .get(b"FontFile")
        .ok()
        .map(|o| resolve(doc, o))?
        .as_stream()
        .ok()?;
    let bytes = program
        .get_plain_content_with_limit(limit.min(8 << 20))
        .ok()?;
    let clear = bytes
        .windows(5)
        .position(|w| w == b"eexec")
        .and_then(|end| bytes.get(..end))
        .unwrap_or(&bytes);
    let text = String::from_utf8_lossy(clear);
    let mut differences = Vec::new();
    let mut words = text.split_whitespace();
    while let Some(word) = words.next() {
        if word != "dup" {
            continue;
        }
        let (Some(code), Some(name), Some("put")) = (words.next(), words.next(), words.next())
        else {
            continue;
        };
        if let (Ok(code), Some(name)) = (code.parse::<u8>(), name.strip_prefix('/')) {
            differences.push(Object::Integer(i64::from(code)));
            differences.push(Object::Name(name.as_bytes().to_vec()));
        }
    }
    if differences.is_empty() {
        return None;
    }
    differences.extend(own);
    let mut enc = Dictionary::new();
    enc.set("Differences", Object::Array(differences));
    let mut dict = dict.clone();
    dict.set("Encoding", Object::Dictionary(enc));
    Some(dict)
}

/// Ascent and descent in em, defaulted and clamped so a bad descriptor cannot make a box
/// absurd.
fn extent(ascent: Option<f64>, descent: Option<f64>) -> (f64, f64) {
    let a = ascent
        .filter(|a| *a > 0.0)
        .map_or(0.8, |a| (a / 1000.0).clamp(0.5, 1.2));
    let d = descent
        .filter(|d| *d < 0.0)
        .map_or(-0.2, |d| (d / 1000.0).clamp(-0.5, 0.0));
    (a, d)
}

/// A composite font's `/W`: `c [w1 w2 …]` and `cfirst clast w` entries.
fn cid_widths(doc: &Document, w: &Object) -> BTreeMap<u32, (u32, f64)> {
    let mut out = BTreeMap::new();
    let Ok(items) = w.as_array() else { return out };
    let mut i = items.iter();
    while let Some(first) = i.next() {
        let Some(first) = num(doc, first).filter(|f| *f >= 0.0) else {
            break;
        };
        let first = first as u32;
        match i.next().map(|o| resolve(doc, o)) {
            Some(Object::Array(ws)) => {
                for (k, w) in ws.iter().enumerate() {
                    let code = first.saturating_add(k as u32);
                    out.insert(code, (code, num(doc, w).unwrap_or(0.0)));
                }
            }
            Some(last) => {
                let last = num(doc, last).unwrap_or(0.0).max(0.0) as u32;
                let width = i.next().and_then(|o| num(doc, o)).unwrap_or(0.0);
                out.insert(first, (last.max(first), width));
            }
            None => break,
        }
    }
    out
}
