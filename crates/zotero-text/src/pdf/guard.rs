//! lopdf's load, watched from inside: a filter lopdf calls on every object it reads checks
//! each object stream before lopdf decodes it (its members must start at distinct
//! top-level positions, or lopdf would parse one large object once per member), counts the
//! values read against the memory bound, reads the clock, and empties streams text never
//! needs (images, metadata, embedded files) so the loaded file does not hold them. lopdf's
//! filter is a plain function: its state lives in a thread-local for the load's duration
//! (lopdf is built without its `rayon` feature, so the load runs on this thread).

use std::cell::RefCell;
use std::collections::HashSet;
use std::time::Instant;

use lopdf::{Document, LoadOptions, Object, ObjectId, Stream};

use super::lex::{Kind, Lexer};
use super::scan::MAX_DEPTH;
use crate::document::TextError;

/// One load's bounds and what it has spent.
pub(crate) struct Guard {
    /// Values that may still be read (the scan counted those outside object streams).
    pub(crate) room: usize,
    pub(crate) limit: usize,
    /// The most bytes one object stream may decode to.
    pub(crate) decode_limit: usize,
    pub(crate) deadline: Instant,
    pub(crate) max_seconds: u64,
    /// Why the load must fail, once known (later objects are then dropped unread).
    failed: Option<TextError>,
    /// Numbers of the members of object streams checked and not yet seen.
    members: HashSet<u32>,
}

impl Guard {
    pub(crate) fn new(
        room: usize,
        limit: usize,
        decode_limit: usize,
        deadline: Instant,
        max_seconds: u64,
    ) -> Self {
        Self {
            room,
            limit,
            decode_limit,
            deadline,
            max_seconds,
            failed: None,
            members: HashSet::new(),
        }
    }
}

thread_local! {
    static GUARD: RefCell<Option<Guard>> = const { RefCell::new(None) };
}

/// `Document::load_mem_with_options` under `guard`; the guard's failure, if any, wins over
/// lopdf's answer.
pub(crate) fn load(
    bytes: &[u8],
    mut options: LoadOptions,
    guard: Guard,
) -> (lopdf::Result<Document>, Option<TextError>) {
    options.filter = Some(filter);
    GUARD.with_borrow_mut(|g| *g = Some(guard));
    let doc = Document::load_mem_with_options(bytes, options);
    let failed = GUARD.with_borrow_mut(|g| g.take().and_then(|g| g.failed));
    (doc, failed)
}

fn filter(id: ObjectId, obj: &mut Object) -> Option<(ObjectId, Object)> {
    GUARD.with_borrow_mut(|g| {
        let Some(g) = g.as_mut() else {
            return Some((id, obj.clone()));
        };
        if g.failed.is_some() {
            return None;
        }
        if Instant::now() > g.deadline {
            g.failed = Some(TextError::TimedOut {
                seconds: g.max_seconds,
            });
            return None;
        }
        if let Object::Stream(stream) = obj {
            if stream.dict.has_type(b"ObjStm") {
                match check_object_stream(stream, g) {
                    Check::Keep => {}
                    Check::Drop => return None,
                    Check::Fail(e) => {
                        g.failed = Some(e);
                        return None;
                    }
                }
            } else if unread(stream) {
                stream.content = Vec::new();
                // lopdf reads an empty stream again from the file unless it has no position.
                stream.start_position = None;
            }
        }
        // lopdf keeps a top-level object as the filter left it (the answer only says keep),
        // but an object stream's member as answered: only a member is copied (a large
        // top-level array copied would double its memory).
        if !matches!(obj, Object::Stream(_)) && g.members.remove(&id.0) {
            Some((id, obj.clone()))
        } else {
            Some((id, Object::Null))
        }
    })
}

/// Streams whose bytes text extraction never reads.
fn unread(stream: &Stream) -> bool {
    let name = |key: &[u8]| stream.dict.get(key).and_then(Object::as_name).ok();
    name(b"Subtype") == Some(b"Image".as_slice())
        || matches!(name(b"Type"), Some(b"Metadata" | b"EmbeddedFile" | b"XRef"))
}

enum Check {
    Keep,
    Drop,
    Fail(TextError),
}

/// Decodes an object stream (once: it is stored decoded for lopdf) and checks its members:
/// offsets increasing, each at a top-level value of its own, their values within the room.
fn check_object_stream(stream: &mut Stream, g: &mut Guard) -> Check {
    let content = match stream.get_plain_content_with_limit(g.decode_limit) {
        Ok(c) => c,
        Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
            return Check::Fail(TextError::DecodedTooLarge {
                limit: g.decode_limit,
            })
        }
        // lopdf fails to read it too, and skips it.
        Err(_) => return Check::Keep,
    };
    let first = stream
        .dict
        .get(b"First")
        .and_then(Object::as_i64)
        .ok()
        .and_then(|v| usize::try_from(v).ok());
    let Some((header, body)) =
        first.and_then(|f| (f <= content.len()).then(|| content.split_at(f)))
    else {
        return Check::Drop;
    };
    // As lopdf reads the header: comments run to the end of their line.
    let numbers: Option<Vec<usize>> = header
        .split(|b| matches!(b, b'\r' | b'\n'))
        .flat_map(|line| {
            line.split(|b| *b == b'%')
                .next()
                .unwrap_or_default()
                .split(|b| b.is_ascii_whitespace())
        })
        .filter(|w| !w.is_empty())
        .map(|w| std::str::from_utf8(w).ok()?.parse().ok())
        .collect();
    let Some(numbers) = numbers else {
        return Check::Drop;
    };
    let offsets: Vec<usize> = numbers
        .chunks_exact(2)
        .filter_map(|p| p.get(1).copied())
        .collect();
    if !offsets.windows(2).all(|w| matches!(w, [a, b] if a < b)) {
        return Check::Drop;
    }
    let mut lx = Lexer::new(body);
    let mut pending = offsets.iter().peekable();
    let (mut depth, mut values) = (0usize, offsets.len());
    while let Some(t) = lx.next_token() {
        values += 1;
        if depth == 0 {
            while pending.peek().is_some_and(|&&o| o <= t.start) {
                let o = pending.next().copied().unwrap_or_default();
                // A member starts at this value, after white space and comments at most.
                if !blank(body.get(o..t.start).unwrap_or_default()) {
                    return Check::Drop;
                }
            }
        }
        match t.kind {
            Kind::Open => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Check::Fail(TextError::Damaged {
                        reason: format!("its objects are nested more than {MAX_DEPTH} deep"),
                    });
                }
            }
            Kind::Close => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if pending.next().is_some() {
        return Check::Drop;
    }
    if values > g.room {
        return Check::Fail(TextError::TooManyObjects {
            values: g.limit.saturating_sub(g.room).saturating_add(values),
            limit: g.limit,
        });
    }
    g.room -= values;
    g.members.extend(
        numbers
            .chunks_exact(2)
            .filter_map(|p| p.first().and_then(|n| u32::try_from(*n).ok())),
    );
    stream.set_plain_content(content);
    Check::Keep
}

/// Whether `gap` holds only white space and comments.
fn blank(gap: &[u8]) -> bool {
    let mut comment = false;
    gap.iter().all(|&b| {
        if comment {
            comment = !matches!(b, b'\r' | b'\n');
            true
        } else if b == b'%' {
            comment = true;
            true
        } else {
            matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' | b'\0')
        }
    })
}
