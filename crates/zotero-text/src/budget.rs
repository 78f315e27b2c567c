//! The wall-time bound of one extraction, checked cooperatively inside every loop that can
//! grow with the input (pages, operators, glyphs, zip entries, DOM nodes).

use std::time::Instant;

use crate::document::{Limits, TextError};

/// The deadline and the limits of one extraction.
pub(crate) struct Budget {
    pub(crate) limits: Limits,
    deadline: Instant,
    /// Checks of the clock are cheap but not free: only one call in `STRIDE` reads it.
    ticks: std::cell::Cell<u32>,
}

const STRIDE: u32 = 256;

impl Budget {
    pub(crate) fn new(limits: &Limits) -> Self {
        let now = Instant::now();
        Self {
            limits: limits.clone(),
            deadline: now.checked_add(limits.max_duration).unwrap_or(now),
            ticks: std::cell::Cell::new(0),
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
}
