//! Upload progress as the caller hears it.

use std::sync::Arc;

/// Called with (bytes of the file sent so far, file size) as the upload goes.
pub type ProgressFn = Arc<dyn Fn(u64, u64) + Send + Sync>;

/// Upload progress for the caller: bytes of the file sent, reported in steps of 1% (at
/// least 256 KiB), only ever growing (retries included), and the total exactly once.
pub(crate) struct Progress {
    report: Option<ProgressFn>,
    total: u64,
    step: u64,
    /// The last figure reported; `None` before the first.
    last: std::sync::Mutex<Option<u64>>,
}

impl Progress {
    pub(crate) fn new(report: Option<ProgressFn>, total: u64) -> Self {
        Self {
            report,
            total,
            step: (total / 100).max(256 * 1024),
            last: std::sync::Mutex::new(None),
        }
    }

    /// `sent` bytes of the file are on their way.
    pub(crate) fn sent(&self, sent: u64) {
        let Some(report) = &self.report else { return };
        let mut last = zotero_net::lock(&self.last);
        let due = match *last {
            None => sent >= self.step || sent == self.total,
            Some(l) => sent > l && (sent - l >= self.step || sent == self.total),
        };
        if due {
            *last = Some(sent);
            report(sent, self.total);
        }
    }

    /// The file is stored (sent now, or found already there).
    pub(crate) fn done(&self) {
        self.sent(self.total);
    }
}
