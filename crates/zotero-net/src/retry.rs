//! The one retry loop of the process, and what it is made of: exponential backoff with
//! jitter, `Retry-After` (seconds or an HTTP-date), the `Backoff` gate (one per service), and
//! sleeps that end when the call is cancelled.

use std::future::Future;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use hyper::HeaderMap;
use rand::Rng;
use tokio_util::sync::CancellationToken;

/// How requests that are safe to repeat are retried.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Total number of attempts for one request (the first one included).
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// A server-requested wait (`Retry-After`, `Backoff`) longer than this is not slept
    /// through: the request fails at once.
    pub max_wait: Duration,
}

impl RetryPolicy {
    /// The jittered delay before attempt `attempt + 1`.
    pub fn delay(&self, attempt: u32) -> Duration {
        backoff_delay(
            attempt,
            self.base_delay,
            self.max_delay,
            rand::rng().random_range(0.5..=1.0),
        )
    }
}

/// The call was cancelled by the client while waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// Sleeps for `d`, or less when the call is cancelled.
pub async fn sleep(d: Duration, cancel: &CancellationToken) -> Result<(), Cancelled> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Cancelled),
        _ = tokio::time::sleep(d) => Ok(()),
    }
}

/// Whole seconds, rounded up.
pub fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The delay before attempt `attempt + 1`: `base * 2^(attempt-1)`, capped at `max`, scaled by
/// `jitter` (0.5..=1.0) so that many clients do not retry in step.
pub fn backoff_delay(attempt: u32, base: Duration, max: Duration, jitter: f64) -> Duration {
    let exp = base.as_secs_f64() * 2f64.powi(attempt.saturating_sub(1).min(30) as i32);
    Duration::from_secs_f64(exp.min(max.as_secs_f64()) * jitter.clamp(0.0, 1.0))
}

/// `Retry-After` as delta-seconds or as an HTTP-date (relative to `now`).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `Backoff: N` from any answer holds back every later request through the same gate for N
/// seconds (a service asks this when it is overloaded, even on a 200).
#[derive(Debug, Default)]
pub struct Gate {
    until: Mutex<Option<Instant>>,
}

impl Gate {
    /// Notes a `Backoff` header, if the answer has one; answers the seconds asked for.
    pub fn note(&self, headers: &HeaderMap) -> Option<f64> {
        let secs = headers
            .get("backoff")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)?;
        let until = Instant::now() + Duration::from_secs_f64(secs.min(86_400.0));
        let mut gate = crate::sync::lock(&self.until);
        if gate.is_none_or(|g| g < until) {
            *gate = Some(until);
        }
        Some(secs)
    }

    /// How long a request must still wait.
    pub fn remaining(&self) -> Duration {
        let until = *crate::sync::lock(&self.until);
        until.map_or(Duration::ZERO, |u| {
            u.saturating_duration_since(Instant::now())
        })
    }
}

/// What one attempt came to.
pub enum Attempt<T, E> {
    /// An answer to hand back as it is.
    Answer(T),
    /// An answer that says "try again" (429, 5xx); `retry_after` is the wait it asked for.
    Retryable {
        answer: T,
        retry_after: Option<Duration>,
    },
    /// No answer (network, timeout): tried again while attempts remain.
    Failed(E),
    /// A failure that another attempt cannot mend (the body's own source failed).
    Fatal(E),
}

impl<T, E> Attempt<T, E> {
    /// An answer judged by its status: 429 and 5xx say "try again" (after the wait their
    /// `Retry-After` asked for, when they sent one); anything else is handed back.
    pub fn judge(status: u16, retry_after: Option<Duration>, answer: T) -> Self {
        if status == 429 || status >= 500 {
            Attempt::Retryable {
                answer,
                retry_after,
            }
        } else {
            Attempt::Answer(answer)
        }
    }
}

/// Why the loop gave up without an answer to hand back.
#[derive(Debug)]
pub enum RetryError<T, E> {
    /// The last attempt's failure.
    Failed(E),
    Cancelled,
    /// The service asked for a wait longer than `max_wait` (through `Retry-After`, or the
    /// `Backoff` gate when `answer` is `None`); nothing was sent after that.
    WaitTooLong {
        wait: Duration,
        answer: Option<T>,
    },
}

/// Where a request goes and whether it may be sent more than once.
pub struct Retry<'a> {
    pub policy: &'a RetryPolicy,
    /// `Backoff` gate to wait on before each attempt, if the service has one.
    pub gate: Option<&'a Gate>,
    /// Safe to send again: a GET, or a write protected against doing the same thing twice.
    pub repeatable: bool,
    pub cancel: &'a CancellationToken,
}

impl Retry<'_> {
    /// Runs `attempt(n)` (n = 1, 2, …) until it gives an answer or the policy gives up;
    /// returns the answer and how many times it was sent again before it.
    pub async fn run<T, E, F, Fut>(&self, mut attempt: F) -> Result<(T, u32), RetryError<T, E>>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Attempt<T, E>>,
    {
        let mut n: u32 = 0;
        loop {
            n += 1;
            if let Some(gate) = self.gate {
                let wait = gate.remaining();
                if wait > self.policy.max_wait {
                    return Err(RetryError::WaitTooLong { wait, answer: None });
                }
                if !wait.is_zero() {
                    tracing::info!(
                        wait_ms = wait.as_millis() as u64,
                        "holding back for Backoff"
                    );
                    self.pause(wait).await?;
                }
            }
            let may_retry = self.repeatable && n < self.policy.max_attempts;
            let outcome = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Err(RetryError::Cancelled),
                outcome = attempt(n) => outcome,
            };
            match outcome {
                Attempt::Answer(answer) => return Ok((answer, n - 1)),
                Attempt::Retryable {
                    answer,
                    retry_after,
                } => match retry_after {
                    Some(wait) if wait > self.policy.max_wait => {
                        return Err(RetryError::WaitTooLong {
                            wait,
                            answer: Some(answer),
                        })
                    }
                    Some(wait) if may_retry => self.pause(wait).await?,
                    None if may_retry => self.pause(self.policy.delay(n)).await?,
                    _ => return Ok((answer, n - 1)),
                },
                Attempt::Failed(e) if may_retry => {
                    drop(e);
                    self.pause(self.policy.delay(n)).await?;
                }
                Attempt::Failed(e) | Attempt::Fatal(e) => return Err(RetryError::Failed(e)),
            }
        }
    }

    async fn pause<T, E>(&self, d: Duration) -> Result<(), RetryError<T, E>> {
        sleep(d, self.cancel)
            .await
            .map_err(|Cancelled| RetryError::Cancelled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn policy(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(2),
            max_wait: Duration::from_secs(5),
        }
    }

    #[test]
    fn backoff_grows_and_is_capped() {
        let base = Duration::from_millis(500);
        let max = Duration::from_secs(4);
        assert_eq!(backoff_delay(1, base, max, 1.0), Duration::from_millis(500));
        assert_eq!(backoff_delay(2, base, max, 1.0), Duration::from_secs(1));
        assert_eq!(backoff_delay(3, base, max, 1.0), Duration::from_secs(2));
        assert_eq!(backoff_delay(10, base, max, 1.0), Duration::from_secs(4));
        assert_eq!(backoff_delay(3, base, max, 0.5), Duration::from_secs(1));
        assert_eq!(backoff_delay(u32::MAX, base, max, 1.0), max);
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("120"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(120)));
        let date = httpdate::fmt_http_date(now + Duration::from_secs(90));
        h.insert("retry-after", HeaderValue::from_str(&date).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(90)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(90));
        h.insert("retry-after", HeaderValue::from_str(&past).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::ZERO));
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
    }

    #[tokio::test]
    async fn failures_are_retried_only_when_repeatable_and_attempts_remain() {
        let cancel = CancellationToken::new();
        for (repeatable, max, want_calls) in [(true, 3, 3), (false, 3, 1), (true, 1, 1)] {
            let p = policy(max);
            let mut calls = 0;
            let r: Result<((), u32), RetryError<(), &str>> = Retry {
                policy: &p,
                gate: None,
                repeatable,
                cancel: &cancel,
            }
            .run(|_| {
                calls += 1;
                async { Attempt::Failed("down") }
            })
            .await;
            assert!(matches!(r, Err(RetryError::Failed("down"))));
            assert_eq!(calls, want_calls, "repeatable={repeatable} max={max}");
        }
    }

    #[test]
    fn answers_are_judged_by_status() {
        let wait = Some(Duration::from_secs(7));
        for (status, retry) in [
            (429, true),
            (500, true),
            (503, true),
            (200, false),
            (404, false),
        ] {
            match Attempt::<u16, ()>::judge(status, wait, status) {
                Attempt::Retryable {
                    answer,
                    retry_after,
                } => {
                    assert!(retry, "{status}");
                    assert_eq!(
                        (answer, retry_after),
                        (status, Some(Duration::from_secs(7)))
                    );
                }
                Attempt::Answer(answer) => assert!(!retry && answer == status, "{status}"),
                _ => panic!("{status}"),
            }
        }
    }

    #[tokio::test]
    async fn a_retryable_answer_is_tried_again_then_handed_back() {
        let cancel = CancellationToken::new();
        let p = policy(3);
        let r: Result<(u32, u32), RetryError<u32, ()>> = Retry {
            policy: &p,
            gate: None,
            repeatable: true,
            cancel: &cancel,
        }
        .run(|n| async move {
            Attempt::Retryable {
                answer: n,
                retry_after: Some(Duration::ZERO),
            }
        })
        .await;
        // The third answer is handed back as it is, with two retries before it.
        assert_eq!(r.unwrap(), (3, 2));
    }

    #[tokio::test]
    async fn fatal_failures_and_long_waits_stop_at_once() {
        let cancel = CancellationToken::new();
        let p = policy(5);
        let retry = Retry {
            policy: &p,
            gate: None,
            repeatable: true,
            cancel: &cancel,
        };
        let mut calls = 0;
        let r: Result<((), u32), RetryError<(), &str>> = retry
            .run(|_| {
                calls += 1;
                async { Attempt::Fatal("file changed") }
            })
            .await;
        assert!(matches!(r, Err(RetryError::Failed("file changed"))));
        assert_eq!(calls, 1);
        let r: Result<(u8, u32), RetryError<u8, ()>> = retry
            .run(|_| async {
                Attempt::Retryable {
                    answer: 7,
                    retry_after: Some(Duration::from_secs(60)),
                }
            })
            .await;
        match r {
            Err(RetryError::WaitTooLong { wait, answer }) => {
                assert_eq!((wait, answer), (Duration::from_secs(60), Some(7)));
            }
            _ => panic!("expected WaitTooLong"),
        }
    }

    #[tokio::test]
    async fn the_backoff_gate_holds_requests_and_refuses_long_waits() {
        let gate = Gate::default();
        let mut h = HeaderMap::new();
        h.insert("backoff", HeaderValue::from_static("3600"));
        assert_eq!(gate.note(&h), Some(3600.0));
        assert!(gate.remaining() > Duration::from_secs(3500));
        let cancel = CancellationToken::new();
        let p = policy(3);
        let mut calls = 0;
        let r: Result<((), u32), RetryError<(), ()>> = Retry {
            policy: &p,
            gate: Some(&gate),
            repeatable: true,
            cancel: &cancel,
        }
        .run(|_| {
            calls += 1;
            async { Attempt::Answer(()) }
        })
        .await;
        assert!(matches!(
            r,
            Err(RetryError::WaitTooLong { answer: None, .. })
        ));
        assert_eq!(calls, 0, "nothing is sent while the gate is shut");
    }

    #[tokio::test]
    async fn cancellation_ends_a_wait() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let p = RetryPolicy {
            base_delay: Duration::from_secs(60),
            max_delay: Duration::from_secs(60),
            ..policy(3)
        };
        let r: Result<((), u32), RetryError<(), ()>> = Retry {
            policy: &p,
            gate: None,
            repeatable: true,
            cancel: &cancel,
        }
        .run(|_| async { Attempt::Failed(()) })
        .await;
        assert!(matches!(r, Err(RetryError::Cancelled)));
    }
}
