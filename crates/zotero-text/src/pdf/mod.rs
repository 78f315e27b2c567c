//! PDF: lopdf reads the objects (cross-reference repair, RC4/AES decryption with the empty
//! user password, bounded inflate); the page tree, labels, content interpreter and layout
//! are ours, so every glyph keeps its box and every loop its bounds.

mod font;
mod guard;
mod interp;
mod labels;
mod layout;
mod lex;
mod obj;
mod scan;
mod std14;
mod truetype;

use std::collections::HashSet;

use lopdf::{Dictionary, Document, LoadOptions, Object, ObjectId};

use crate::budget::Budget;
use crate::document::{Page, PageStatus, Rect, TextError};
use interp::{FontCache, Interp};
use obj::{rect, resolve, IDENTITY};

/// US Letter, for a page that names no box at all.
const DEFAULT_BOX: Rect = [0.0, 0.0, 612.0, 792.0];

/// Every page of the PDF in `bytes`.
pub(crate) fn extract(bytes: &[u8], budget: &Budget) -> Result<Vec<Page>, TextError> {
    let doc = load(bytes, budget)?;
    budget.check()?;
    let pages = page_tree(&doc, budget)?;
    if pages.is_empty() {
        return Err(TextError::Damaged {
            reason: "no page could be found".to_owned(),
        });
    }
    let labels = labels::labels(&doc, pages.len(), budget)?;
    let mut fonts = FontCache::new();
    let mut out = Vec::with_capacity(pages.len());
    for (index, (page, label)) in pages.iter().zip(labels).enumerate() {
        budget.check()?;
        out.push(read_page(&doc, page, index, label, &mut fonts, budget)?);
    }
    Ok(out)
}

/// The most bytes one object stream or cross-reference stream may decode to while the file
/// is loaded (real ones hold a few hundred objects: kilobytes).
const LOAD_DECODE_LIMIT: usize = 32 * 1024 * 1024;

/// The file loaded by lopdf, after the scan (see [`scan`]) and under the guard ([`guard`]).
/// A file whose page tree lopdf cannot reach is loaded again by scanning for its objects.
fn load(bytes: &[u8], budget: &Budget) -> Result<Document, TextError> {
    let scan = scan::scan(bytes, budget)?;
    let doc = load_with(bytes, budget, &scan, scan.reconstruct)?;
    if scan.reconstruct || page_tree_reachable(&doc) {
        return Ok(doc);
    }
    budget.check()?;
    load_with(bytes, budget, &scan, true)
}

fn load_with(
    bytes: &[u8],
    budget: &Budget,
    scan: &scan::Scan,
    reconstruct: bool,
) -> Result<Document, TextError> {
    let limit = budget.limits.max_decoded_bytes.min(LOAD_DECODE_LIMIT);
    let options = LoadOptions {
        max_decompressed_size: Some(limit),
        force_reconstruct: reconstruct,
        ..LoadOptions::default()
    };
    let guard = guard::Guard::new(
        scan::MAX_VALUES.saturating_sub(scan.values),
        scan::MAX_VALUES,
        limit,
        budget.deadline(),
        budget.limits.max_duration.as_secs(),
    );
    let (doc, failed) = guard::load(bytes, options, guard);
    if let Some(e) = failed {
        return Err(e);
    }
    match doc {
        // lopdf opens a file with the empty user password itself; one still encrypted
        // afterwards needs a password we do not have.
        Ok(doc) if doc.is_encrypted() => Err(TextError::Encrypted),
        Ok(doc) => Ok(doc),
        Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
            Err(TextError::DecodedTooLarge { limit })
        }
        Err(
            lopdf::Error::InvalidPassword
            | lopdf::Error::Decryption(_)
            | lopdf::Error::AlreadyEncrypted,
        ) => Err(TextError::Encrypted),
        Err(err) => Err(TextError::Damaged {
            reason: err.to_string(),
        }),
    }
}

/// Whether the catalog's `/Pages` is a dictionary (lopdf's own test before it rebuilds a
/// file; it does not rebuild a file loaded through a filter).
fn page_tree_reachable(doc: &Document) -> bool {
    doc.catalog()
        .ok()
        .and_then(|c| c.get(b"Pages").ok())
        .and_then(|p| p.as_reference().ok())
        .is_some_and(|id| doc.get_dictionary(id).is_ok())
}

/// A page and what it inherits from its ancestors.
#[derive(Clone, Default)]
struct PageRef<'d> {
    id: Option<ObjectId>,
    resources: Option<&'d Dictionary>,
    media: Option<Rect>,
    crop: Option<Rect>,
    rotate: i64,
}

/// The pages in order, each once: the tree from the catalog, walked without recursion, each
/// node at most once (a `/Kids` cycle is cut); a file whose tree is lost gives its page
/// objects in object order instead.
fn page_tree<'d>(doc: &'d Document, budget: &Budget) -> Result<Vec<PageRef<'d>>, TextError> {
    let mut pages = Vec::new();
    let mut seen: HashSet<ObjectId> = HashSet::new();
    let root = doc
        .catalog()
        .ok()
        .and_then(|c| c.get(b"Pages").ok())
        .and_then(|o| o.as_reference().ok());
    let mut stack: Vec<(ObjectId, PageRef<'d>)> = root
        .map(|id| (id, PageRef::default()))
        .into_iter()
        .collect();
    while let Some((id, inherited)) = stack.pop() {
        budget.tick()?;
        if !seen.insert(id) {
            continue;
        }
        let Ok(dict) = doc.get_dictionary(id) else {
            continue;
        };
        let node = inherit(doc, dict, inherited);
        match dict
            .get(b"Kids")
            .map(|o| resolve(doc, o))
            .and_then(Object::as_array)
        {
            Ok(kids)
                if dict.get(b"Type").and_then(Object::as_name).ok() != Some(b"Page".as_slice()) =>
            {
                for kid in kids.iter().rev() {
                    if let Ok(kid) = kid.as_reference() {
                        stack.push((kid, node.clone()));
                    }
                }
            }
            _ => {
                pages.push(PageRef {
                    id: Some(id),
                    ..node
                });
                budget.pages(pages.len())?;
            }
        }
    }
    if pages.is_empty() {
        for (id, object) in &doc.objects {
            budget.tick()?;
            if let Ok(dict) = object.as_dict() {
                if dict.get(b"Type").and_then(Object::as_name).ok() == Some(b"Page".as_slice()) {
                    pages.push(PageRef {
                        id: Some(*id),
                        ..inherit(doc, dict, PageRef::default())
                    });
                    budget.pages(pages.len())?;
                }
            }
        }
    }
    Ok(pages)
}

/// A node's own attributes over those it inherits.
fn inherit<'d>(doc: &'d Document, dict: &'d Dictionary, mut node: PageRef<'d>) -> PageRef<'d> {
    if let Some(r) = dict
        .get(b"Resources")
        .ok()
        .and_then(|o| resolve(doc, o).as_dict().ok())
    {
        node.resources = Some(r);
    }
    if let Some(b) = dict.get(b"MediaBox").ok().and_then(|o| rect(doc, o)) {
        node.media = Some(b);
    }
    if let Some(b) = dict.get(b"CropBox").ok().and_then(|o| rect(doc, o)) {
        node.crop = Some(b);
    }
    if let Some(r) = dict.get(b"Rotate").ok().and_then(|o| obj::num(doc, o)) {
        node.rotate = r as i64;
    }
    node
}

/// The page's content, decoded within `room` bytes. A single stream is decoded directly:
/// lopdf's concatenation would copy it once more (twice the memory of a large page).
fn page_content(doc: &Document, page: ObjectId, room: usize) -> lopdf::Result<Vec<u8>> {
    match doc.get_page_contents(page).as_slice() {
        [one] => match doc.get_object(*one).and_then(Object::as_stream) {
            Ok(stream) => stream
                .decompressed_content_with_limit(room)
                .or_else(|e| match e {
                    lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                        ..
                    }) => Err(e),
                    // As lopdf does: a stream that does not decode is read as it is.
                    _ if stream.content.len() <= room => Ok(stream.content.clone()),
                    _ => Err(lopdf::DecompressError::MemoryLimitExceeded { limit: room }.into()),
                }),
            Err(_) => Ok(Vec::new()),
        },
        _ => doc.get_page_content_with_limit(page, room),
    }
}

/// Whether every stream the page's `/Contents` names was found (a reference that leads
/// nowhere, or through too many references, makes the page damaged rather than empty).
fn contents_found(doc: &Document, page: ObjectId) -> bool {
    let ids = doc.get_page_contents(page);
    let named = doc
        .get_dictionary(page)
        .ok()
        .and_then(|d| d.get(b"Contents").ok())
        .is_some_and(|c| match c {
            Object::Reference(_) => true,
            Object::Array(a) => !a.is_empty(),
            _ => false,
        });
    if ids.is_empty() {
        return !named;
    }
    // A stream lopdf could not delimit (its /Length unresolvable) is left empty.
    ids.iter().all(|id| {
        doc.get_object(*id)
            .and_then(Object::as_stream)
            .is_ok_and(|s| {
                !s.content.is_empty()
                    || s.dict
                        .get(b"Length")
                        .and_then(|l| doc.dereference(l))
                        .and_then(|(_, l)| l.as_i64())
                        .ok()
                        == Some(0)
            })
    })
}

fn read_page(
    doc: &Document,
    page: &PageRef<'_>,
    index: usize,
    label: String,
    fonts: &mut FontCache,
    budget: &Budget,
) -> Result<Page, TextError> {
    let limit = budget.limits.max_decoded_bytes;
    // /Rotate is a multiple of 90, possibly negative; anything else is read as the nearest.
    let rotation = ((page.rotate.rem_euclid(360) + 45) / 90 % 4 * 90) as u16;
    let view_box = page.crop.or(page.media).unwrap_or(DEFAULT_BOX);
    let mut result = Page {
        index: index as u32,
        label,
        status: PageStatus::Damaged,
        text: String::new(),
        glyphs: Vec::new(),
        view_box,
        rotation,
    };
    let Some(id) = page.id else { return Ok(result) };
    let room = limit.min(budget.decoded_room());
    let content = match page_content(doc, id, room) {
        Ok(content) => content,
        Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
            return Err(interp::too_large(budget, limit))
        }
        Err(_) => return Ok(result),
    };
    budget.decoded(content.len())?;
    let mut interp = Interp::new(doc, budget, fonts, content.len());
    let whole = interp.run(&content, page.resources, IDENTITY)? && contents_found(doc, id);
    let (text, glyphs) = layout::layout(&interp.glyphs, rotation, budget)?;
    budget.glyphs(glyphs.len())?;
    result.status = if !whole {
        PageStatus::Damaged
    } else if text.is_empty() {
        PageStatus::NoTextLayer
    } else {
        PageStatus::Text
    };
    result.text = text;
    result.glyphs = glyphs;
    Ok(result)
}
