//! The optional read cache: GET answers kept for a TTL, bounded in entries (least recently
//! used goes first), emptied by any write.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::response::ApiResponse;

pub struct ReadCache {
    ttl: Duration,
    max_entries: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    /// A counter, not a clock: it orders uses without a system call.
    tick: u64,
}

struct Entry {
    response: ApiResponse,
    stored: Instant,
    last_used: u64,
}

impl ReadCache {
    pub fn new(ttl: Duration, max_entries: usize) -> Self {
        Self {
            ttl,
            max_entries,
            inner: Mutex::new(Inner::default()),
        }
    }

    pub fn get(&self, key: &str) -> Option<ApiResponse> {
        let mut inner = zotero_net::lock(&self.inner);
        inner.tick += 1;
        let tick = inner.tick;
        let ttl = self.ttl;
        match inner.entries.get_mut(key) {
            Some(e) if e.stored.elapsed() < ttl => {
                e.last_used = tick;
                Some(e.response.clone())
            }
            Some(_) => {
                inner.entries.remove(key);
                None
            }
            None => None,
        }
    }

    pub fn put(&self, key: String, response: ApiResponse) {
        if self.max_entries == 0 || self.ttl.is_zero() {
            return;
        }
        let mut inner = zotero_net::lock(&self.inner);
        inner.tick += 1;
        let tick = inner.tick;
        if !inner.entries.contains_key(&key) && inner.entries.len() >= self.max_entries {
            let ttl = self.ttl;
            inner.entries.retain(|_, e| e.stored.elapsed() < ttl);
            if inner.entries.len() >= self.max_entries {
                let oldest = inner
                    .entries
                    .iter()
                    .min_by_key(|(_, e)| e.last_used)
                    .map(|(k, _)| k.clone());
                if let Some(k) = oldest {
                    inner.entries.remove(&k);
                }
            }
        }
        inner.entries.insert(
            key,
            Entry {
                response,
                stored: Instant::now(),
                last_used: tick,
            },
        );
    }

    pub fn clear(&self) {
        let mut inner = zotero_net::lock(&self.inner);
        inner.entries.clear();
    }

    pub fn len(&self) -> usize {
        let inner = zotero_net::lock(&self.inner);
        inner.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use hyper::HeaderMap;

    fn resp(body: &'static str) -> ApiResponse {
        ApiResponse {
            status: 200,
            headers: HeaderMap::new(),
            body: Bytes::from_static(body.as_bytes()),
            retries: 0,
        }
    }

    #[test]
    fn least_recently_used_goes_first() {
        let c = ReadCache::new(Duration::from_secs(60), 2);
        c.put("a".into(), resp("A"));
        c.put("b".into(), resp("B"));
        assert!(c.get("a").is_some()); // a is now more recent than b
        c.put("c".into(), resp("C"));
        assert!(c.get("b").is_none());
        assert_eq!(c.get("a").unwrap().body, "A");
        assert_eq!(c.get("c").unwrap().body, "C");
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn entries_expire_and_clear_empties() {
        let c = ReadCache::new(Duration::from_millis(30), 8);
        c.put("a".into(), resp("A"));
        assert!(c.get("a").is_some());
        std::thread::sleep(Duration::from_millis(50));
        assert!(c.get("a").is_none());
        c.put("b".into(), resp("B"));
        c.clear();
        assert!(c.is_empty());
    }
}
