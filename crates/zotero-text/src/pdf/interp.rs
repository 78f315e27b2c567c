//! The content-stream interpreter: runs a page's operators (graphics state, text state,
//! text showing, form XObjects) and records every glyph with its text and its box in user
//! space. Nothing is drawn; fonts are read from their dictionaries only.

use std::collections::HashMap;
use std::rc::Rc;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Object, ObjectId};

use super::font::Font;
use super::lex::{content_prefix, CONTENT_BOUNDS};
use super::obj::{apply, matrix, matrix_obj, mul, operand, resolve, Matrix, IDENTITY};
use crate::budget::Budget;
use crate::document::{Rect, TextError};

/// Forms nested deeper than this are not entered (real files use a few levels).
const MAX_FORM_DEPTH: usize = 12;
/// `q` nested deeper than this is not saved (a hostile stream could push forever).
const MAX_SAVE_DEPTH: usize = 256;
/// Glyphs read from one page at most (a dense page has ~10,000); past it the page is cut.
const MAX_PAGE_GLYPHS: usize = 100_000;
/// Forms run on one page at most (a form drawing another a hundred times, twelve deep,
/// would run 100^12 times).
const MAX_FORM_RUNS: usize = 10_000;

/// One glyph as drawn: its text, its box, and where it sits on its baseline.
#[derive(Debug, Clone)]
pub(crate) struct RawGlyph {
    pub(crate) text: String,
    /// The box in user space (axis-aligned).
    pub(crate) rect: Rect,
    /// The origin on the baseline, in user space.
    pub(crate) origin: (f64, f64),
    /// The advance along the baseline, in user space.
    pub(crate) adv: (f64, f64),
    /// One em up from the baseline, in user space (its length is the font size on the page).
    pub(crate) up: (f64, f64),
}

/// Fonts already read, by the address of their dictionary (the document does not change
/// while a file is read, so the address is stable); `None` for a font that would not load.
pub(crate) type FontCache = HashMap<usize, Option<Rc<Font>>>;

#[derive(Clone)]
struct GState {
    ctm: Matrix,
    font: Option<Rc<Font>>,
    size: f64,
    tc: f64,
    tw: f64,
    th: f64,
    tl: f64,
    rise: f64,
}

/// Runs one page.
pub(crate) struct Interp<'d, 'b> {
    doc: &'d Document,
    budget: &'b Budget,
    fonts: &'b mut FontCache,
    pub(crate) glyphs: Vec<RawGlyph>,
    /// Bytes of form streams decoded for this page (charged against the decoded limit).
    decoded: usize,
    forms: Vec<ObjectId>,
    form_runs: usize,
    /// Set when a bound of the page was reached: the rest of its content is not read.
    cut: bool,
    tm: Matrix,
    tlm: Matrix,
}

impl<'d, 'b> Interp<'d, 'b> {
    pub(crate) fn new(
        doc: &'d Document,
        budget: &'b Budget,
        fonts: &'b mut FontCache,
        decoded: usize,
    ) -> Self {
        Self {
            doc,
            budget,
            fonts,
            glyphs: Vec::new(),
            decoded,
            forms: Vec::new(),
            form_runs: 0,
            cut: false,
            tm: IDENTITY,
            tlm: IDENTITY,
        }
    }

    /// Runs `content` with `resources` from `ctm`. A content stream that stops parsing part
    /// way, or that reaches a bound of the page (glyphs, forms, operands), answers `Ok(false)`
    /// (what was read before is kept).
    pub(crate) fn run(
        &mut self,
        content: &[u8],
        resources: Option<&'d Dictionary>,
        ctm: Matrix,
    ) -> Result<bool, TextError> {
        let gs = GState {
            ctm,
            font: None,
            size: 0.0,
            tc: 0.0,
            tw: 0.0,
            th: 1.0,
            tl: 0.0,
            rise: 0.0,
        };
        let whole = self.run_with(content, resources, gs)?;
        Ok(whole && !self.cut)
    }

    fn run_with(
        &mut self,
        content: &[u8],
        resources: Option<&'d Dictionary>,
        mut gs: GState,
    ) -> Result<bool, TextError> {
        let mut stack: Vec<GState> = Vec::new();
        // lopdf's parser collects an operator's operands, and recurses into arrays: the
        // stream is cut before a run of operands it would collect too many of.
        let (content, mut whole) = match content_prefix(content, &CONTENT_BOUNDS) {
            Some(cut) => (content.get(..cut).unwrap_or_default(), false),
            None => (content, true),
        };
        for op in Content::decode_iter(content) {
            self.budget.tick()?;
            if self.cut {
                whole = false;
                break;
            }
            let Ok(op) = op else {
                whole = false;
                break;
            };
            let args = op.operands.as_slice();
            let n = |i: usize| args.get(i).and_then(operand).unwrap_or(0.0);
            match op.operator.as_str() {
                "q" if stack.len() < MAX_SAVE_DEPTH => stack.push(gs.clone()),
                "Q" => {
                    if let Some(saved) = stack.pop() {
                        gs = saved;
                    }
                }
                "cm" => {
                    if let Some(m) = matrix(args) {
                        gs.ctm = mul(&m, &gs.ctm);
                    }
                }
                "BT" => {
                    self.tm = IDENTITY;
                    self.tlm = IDENTITY;
                }
                "Tf" => {
                    gs.size = n(1);
                    gs.font = args
                        .first()
                        .and_then(|o| o.as_name().ok())
                        .and_then(|name| self.font(resources, name));
                }
                "Td" => self.td(n(0), n(1)),
                "TD" => {
                    gs.tl = -n(1);
                    self.td(n(0), n(1));
                }
                "Tm" => {
                    if let Some(m) = matrix(args) {
                        self.tm = m;
                        self.tlm = m;
                    }
                }
                "T*" => self.td(0.0, -gs.tl),
                "Tc" => gs.tc = n(0),
                "Tw" => gs.tw = n(0),
                "Tz" => gs.th = n(0) / 100.0,
                "TL" => gs.tl = n(0),
                "Ts" => gs.rise = n(0),
                "Tj" => self.show_obj(&gs, args.first())?,
                "'" => {
                    self.td(0.0, -gs.tl);
                    self.show_obj(&gs, args.first())?;
                }
                "\"" => {
                    gs.tw = n(0);
                    gs.tc = n(1);
                    self.td(0.0, -gs.tl);
                    self.show_obj(&gs, args.get(2))?;
                }
                "TJ" => {
                    if let Some(Object::Array(items)) = args.first() {
                        for item in items {
                            match item {
                                Object::String(bytes, _) => self.show(&gs, bytes)?,
                                other => {
                                    let adj = operand(other).unwrap_or(0.0);
                                    self.advance(-adj / 1000.0 * gs.size * gs.th);
                                }
                            }
                        }
                    }
                }
                "Do" => {
                    if let Some(name) = args.first().and_then(|o| o.as_name().ok()) {
                        self.form(resources, name, &gs)?;
                    }
                }
                _ => {}
            }
        }
        Ok(whole)
    }

    fn td(&mut self, tx: f64, ty: f64) {
        self.tlm = mul(&[1.0, 0.0, 0.0, 1.0, tx, ty], &self.tlm);
        self.tm = self.tlm;
    }

    fn advance(&mut self, tx: f64) {
        self.tm = mul(&[1.0, 0.0, 0.0, 1.0, tx, 0.0], &self.tm);
    }

    fn show_obj(&mut self, gs: &GState, obj: Option<&Object>) -> Result<(), TextError> {
        match obj {
            Some(Object::String(bytes, _)) => self.show(gs, bytes),
            _ => Ok(()),
        }
    }

    /// Shows a string: one glyph per code, each placed by the text rendering matrix.
    fn show(&mut self, gs: &GState, bytes: &[u8]) -> Result<(), TextError> {
        let Some(font) = gs.font.clone() else {
            return Ok(());
        };
        for (code, code_bytes) in font.codes(bytes) {
            self.budget.tick()?;
            if self.glyphs.len() >= MAX_PAGE_GLYPHS {
                self.cut = true;
                return Ok(());
            }
            let w0 = font.width(code) * font.scale;
            let trm = mul(
                &mul(
                    &[gs.size * gs.th, 0.0, 0.0, gs.size, 0.0, gs.rise],
                    &self.tm,
                ),
                &gs.ctm,
            );
            let text = font.text(code, code_bytes);
            if !text.is_empty() {
                self.glyphs.push(place(&trm, w0, &font, text));
            }
            let spacing = gs.tc
                + if font.is_word_space(code_bytes) {
                    gs.tw
                } else {
                    0.0
                };
            self.advance((w0 * gs.size + spacing) * gs.th);
        }
        Ok(())
    }

    fn font(&mut self, resources: Option<&'d Dictionary>, name: &[u8]) -> Option<Rc<Font>> {
        let fonts = resolve(self.doc, resources?.get(b"Font").ok()?)
            .as_dict()
            .ok()?;
        let dict = resolve(self.doc, fonts.get(name).ok()?).as_dict().ok()?;
        let key = dict as *const Dictionary as usize;
        if let Some(font) = self.fonts.get(&key) {
            return font.clone();
        }
        let font = Font::load(self.doc, dict, self.budget.limits.max_decoded_bytes)
            .ok()
            .map(Rc::new);
        self.fonts.insert(key, font.clone());
        // A font may decode a large /ToUnicode: read the clock after each, not one in 256.
        if self.budget.check().is_err() {
            self.cut = true;
        }
        font
    }

    /// Runs a form XObject; images and unknown kinds are skipped; a form already being run
    /// (a cycle) or nested too deep is skipped.
    fn form(
        &mut self,
        resources: Option<&'d Dictionary>,
        name: &[u8],
        gs: &GState,
    ) -> Result<(), TextError> {
        let doc = self.doc;
        let Some(Ok(Object::Reference(id))) = resources
            .and_then(|r| r.get(b"XObject").ok())
            .and_then(|x| resolve(doc, x).as_dict().ok())
            .map(|x| x.get(name))
        else {
            return Ok(());
        };
        let id = *id;
        if self.forms.contains(&id) || self.forms.len() >= MAX_FORM_DEPTH {
            return Ok(());
        }
        self.form_runs += 1;
        if self.form_runs > MAX_FORM_RUNS {
            self.cut = true;
            return Ok(());
        }
        let Ok(stream) = doc.get_object(id).and_then(Object::as_stream) else {
            return Ok(());
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return Ok(());
        }
        let limit = self.budget.limits.max_decoded_bytes;
        let room = limit
            .saturating_sub(self.decoded)
            .min(self.budget.decoded_room());
        let content = match stream.get_plain_content_with_limit(room) {
            Ok(c) => c,
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                ..
            })) => {
                return Err(too_large(self.budget, limit.saturating_sub(self.decoded)));
            }
            Err(_) => return Ok(()),
        };
        self.decoded = self.decoded.saturating_add(content.len());
        self.budget.decoded(content.len())?;
        let m = stream
            .dict
            .get(b"Matrix")
            .ok()
            .and_then(|o| matrix_obj(doc, o))
            .unwrap_or(IDENTITY);
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|o| resolve(doc, o).as_dict().ok());
        let mut inner = gs.clone();
        inner.ctm = mul(&m, &gs.ctm);
        let (tm, tlm) = (self.tm, self.tlm);
        self.forms.push(id);
        let result = self.run_with(&content, own.or(resources), inner);
        self.forms.pop();
        self.tm = tm;
        self.tlm = tlm;
        result.map(|_| ())
    }
}

/// The error for content over `room` bytes: the page's own limit, or the document's total
/// when that was the smaller.
pub(crate) fn too_large(budget: &Budget, room: usize) -> TextError {
    if budget.decoded_room() < room {
        TextError::ContentTooLarge {
            limit: budget.limits.max_total_decoded_bytes,
        }
    } else {
        TextError::DecodedTooLarge {
            limit: budget.limits.max_decoded_bytes,
        }
    }
}

/// A glyph of advance `w0` (text space, em) under the text rendering matrix `trm`.
fn place(trm: &Matrix, w0: f64, font: &Font, text: String) -> RawGlyph {
    let origin = apply(trm, 0.0, 0.0);
    let corners = [
        apply(trm, 0.0, font.descent),
        apply(trm, w0, font.descent),
        apply(trm, w0, font.ascent),
        apply(trm, 0.0, font.ascent),
    ];
    let (mut x1, mut y1, mut x2, mut y2) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for (x, y) in corners {
        x1 = x1.min(x);
        y1 = y1.min(y);
        x2 = x2.max(x);
        y2 = y2.max(y);
    }
    let end = apply(trm, w0, 0.0);
    let top = apply(trm, 0.0, 1.0);
    RawGlyph {
        text,
        rect: [x1, y1, x2, y2],
        origin,
        adv: (end.0 - origin.0, end.1 - origin.1),
        up: (top.0 - origin.0, top.1 - origin.1),
    }
}
