//! The CPU-bound part of a check, metered and cancellable: it runs on a blocking thread
//! (`tokio::task::spawn_blocking`, so the runtime's few threads keep serving other calls),
//! counts the bytes its scans read (what the tests hold linear in the draft's size) and
//! stops between steps once the call is cancelled.

use std::cell::Cell;

use tokio_util::sync::CancellationToken;
use zotero_api::ZoteroError;

use crate::error::ToolError;

/// The meter of one piece of CPU-bound work.
pub struct Work {
    cancel: CancellationToken,
    steps: Cell<u64>,
    /// The steps after which the work cancels itself (tests: a cancellation mid-way).
    cancel_at: u64,
}

impl Work {
    pub fn new(cancel: CancellationToken) -> Work {
        Work {
            cancel,
            steps: Cell::new(0),
            cancel_at: u64::MAX,
        }
    }

    /// Work cancelled once it has counted `steps`.
    #[cfg(test)]
    pub fn cancelled_after(steps: u64) -> Work {
        Work {
            cancel_at: steps,
            ..Work::unlimited()
        }
    }

    /// Work that is never cancelled (the pure parsers' own entry points, tests).
    pub fn unlimited() -> Work {
        Work::new(CancellationToken::new())
    }

    /// Counts `n` steps (bytes read); `false` once the call is cancelled: the caller stops.
    pub fn go(&self, n: usize) -> bool {
        self.steps.set(self.steps.get().saturating_add(n as u64));
        if self.steps.get() >= self.cancel_at {
            self.cancel.cancel();
        }
        !self.cancel.is_cancelled()
    }

    /// The steps counted so far.
    pub fn steps(&self) -> u64 {
        self.steps.get()
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// Runs `f` on a blocking thread with a meter observing `cancel`; a cancelled call answers
/// the cancellation (whatever `f` got done is dropped).
pub async fn blocking<T, F>(cancel: &CancellationToken, f: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce(&Work) -> T + Send + 'static,
{
    let token = cancel.clone();
    let job = tokio::task::spawn_blocking(move || {
        let work = Work::new(token);
        let out = f(&work);
        tracing::debug!(
            steps = work.steps(),
            cancelled = work.cancelled(),
            "manuscript check: a step done"
        );
        (out, work.cancelled())
    });
    match job.await {
        Ok((_, true)) => Err(ZoteroError::Cancelled.into()),
        Ok((out, false)) => Ok(out),
        Err(e) => Err(ToolError::internal(format!(
            "the manuscript check stopped: {e}"
        ))),
    }
}
