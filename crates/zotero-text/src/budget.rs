//! The wall-time bound of one extraction, checked cooperatively inside every loop that can
//! grow with the input (pages, operators, glyphs, zip entries, DOM nodes).

use std::cell::Cell;
use std::time::Instant;

use crate::document::{Limits, TextError};

/// The deadline and the limits of one extraction.
pub(crate) struct Budget {
    pub(crate) limits: Limits,
    deadline: Instant,
    /// Checks of the clock are cheap but not free: only one call in `STRIDE` reads it.
    ticks: Cell<u32>,
    /// Bytes of content streams and forms decoded so far, all pages together.
    decoded: Cell<usize>,
    /// Glyphs read so far, all pages together.
    glyphs: Cell<usize>,
}

const STRIDE: u32 = 256;

impl Budget {
    pub(crate) fn new(limits: &Limits) -> Self {
        let now = Instant::now();
        Self {
            limits: limits.clone(),
            deadline: now.checked_add(limits.max_duration).unwrap_or(now),
            ticks: Cell::new(0),
            decoded: Cell::new(0),
            glyphs: Cell::new(0),
        }
    }

    /// Fails once the wall time is spent; reads the clock on one call in `STRIDE`.
    pub(crate) fn tick(&self) -> Result<(), TextError> {
        let n = self.ticks.get().wrapping_add(1);
        self.ticks.set(n);
        if n.is_multiple_of(STRIDE) {
            self.check()
        } else {
            Ok(())
        }
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Fails once the wall time is spent.
    pub(crate) fn check(&self) -> Result<(), TextError> {
        if Instant::now() > self.deadline {
            Err(TextError::TimedOut {
                seconds: self.limits.max_duration.as_secs(),
            })
        } else {
            Ok(())
        }
    }

    /// Fails when `pages` is over the page limit.
    pub(crate) fn pages(&self, pages: usize) -> Result<(), TextError> {
        if pages > self.limits.max_pages {
            Err(TextError::TooManyPages {
                pages,
                limit: self.limits.max_pages,
            })
        } else {
            Ok(())
        }
    }

    /// The bytes content may still decode to, all pages together.
    pub(crate) fn decoded_room(&self) -> usize {
        self.limits
            .max_total_decoded_bytes
            .saturating_sub(self.decoded.get())
    }

    /// Counts `bytes` of decoded content; fails past the document's total.
    pub(crate) fn decoded(&self, bytes: usize) -> Result<(), TextError> {
        let total = self.decoded.get().saturating_add(bytes);
        self.decoded.set(total);
        if total > self.limits.max_total_decoded_bytes {
            Err(TextError::ContentTooLarge {
                limit: self.limits.max_total_decoded_bytes,
            })
        } else {
            Ok(())
        }
    }

    /// Counts a page's `glyphs`; fails past the document's total.
    pub(crate) fn glyphs(&self, glyphs: usize) -> Result<(), TextError> {
        let total = self.glyphs.get().saturating_add(glyphs);
        self.glyphs.set(total);
        if total > self.limits.max_glyphs {
            Err(TextError::TooMuchText {
                limit: self.limits.max_glyphs,
            })
        } else {
            Ok(())
        }
    }
}
