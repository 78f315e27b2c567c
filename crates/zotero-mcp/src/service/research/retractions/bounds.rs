//! The bounds of a check's texts. Zotero's flags are stored as Retraction Watch's data came
//! (`retractedItems.data`), with no bound: one reason of 5,000 characters or a 20 KB DOI
//! would make a single item's status pass the answer's budget, which a page always keeps at
//! least one of. So every text of a status is cut to its bound here, and a status whose
//! notices still pass [`MAX_STATUS_CHARS`] keeps its gravest notices and first reasons; each
//! status remembers what was cut ([`Cuts`]) for the answer to say so.

use super::{Notice, RetractionStatus};
use crate::budget::json_chars;

/// The most characters of a DOI (the item's or a notice's); real DOIs are far shorter.
pub const MAX_DOI_CHARS: usize = 200;
/// The most characters of a notice's URL, of one reason, and of a status's `reason`.
pub const MAX_TEXT_CHARS: usize = 500;
/// The most characters of a date, a kind, a source.
pub const MAX_LABEL_CHARS: usize = 60;
/// The most characters one status takes as JSON: three fit in a page of the read budget.
pub const MAX_STATUS_CHARS: usize = 6_000;

/// What bounding a status cut: texts shortened, notices or reasons left out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cuts {
    pub texts: u64,
    pub left_out: u64,
}

impl Cuts {
    pub fn add(&mut self, other: Cuts) {
        self.texts += other.texts;
        self.left_out += other.left_out;
    }
}

/// Cuts `s` to `max` characters, its last one "…"; whether it was cut.
fn cut(s: &mut String, max: usize) -> bool {
    match s.char_indices().nth(max.saturating_sub(1)) {
        Some((at, _)) if s.chars().count() > max => {
            s.truncate(at);
            s.push('…');
            true
        }
        _ => false,
    }
}

fn cut_opt(s: &mut Option<String>, max: usize, cuts: &mut Cuts) {
    if let Some(s) = s {
        cuts.texts += u64::from(cut(s, max));
    }
}

fn bound_notice(n: &mut Notice, cuts: &mut Cuts) {
    cuts.texts += u64::from(cut(&mut n.kind, MAX_LABEL_CHARS));
    cuts.texts += u64::from(cut(&mut n.source, MAX_LABEL_CHARS));
    cut_opt(&mut n.doi, MAX_DOI_CHARS, cuts);
    cut_opt(&mut n.url, MAX_TEXT_CHARS, cuts);
    cut_opt(&mut n.date, MAX_LABEL_CHARS, cuts);
    for r in &mut n.reasons {
        cuts.texts += u64::from(cut(r, MAX_TEXT_CHARS));
    }
}

impl RetractionStatus {
    /// Every text cut to its bound, then the least grave notices (and the last reasons)
    /// left out while the status passes [`MAX_STATUS_CHARS`]; what was cut is added to
    /// `self.cut`. Bounding again cuts nothing more.
    pub fn bound(&mut self) {
        let mut cuts = Cuts::default();
        cuts.texts += u64::from(cut(&mut self.title, super::MAX_TITLE_CHARS + 1));
        cut_opt(&mut self.doi, MAX_DOI_CHARS, &mut cuts);
        cut_opt(&mut self.reason, MAX_TEXT_CHARS, &mut cuts);
        for n in self.notices.iter_mut().chain(self.notice_for.iter_mut()) {
            bound_notice(n, &mut cuts);
        }
        while json_chars(self) > MAX_STATUS_CHARS {
            // What the item's own notices say matters most: what it is a notice for goes
            // first (one stays when it has nothing else), then the last reasons and notices
            // (the least grave); one notice and one reason stay (each bounded, they fit).
            if self.notice_for.len() > usize::from(self.notices.is_empty()) {
                self.notice_for.pop();
            } else if let Some(last) = self.notices.last_mut().filter(|n| n.reasons.len() > 1) {
                last.reasons.pop();
            } else if self.notices.len() > 1 {
                self.notices.pop();
            } else {
                break;
            }
            cuts.left_out += 1;
        }
        self.cut.add(cuts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::research::retractions::RetractionState;

    fn notice(reasons: usize, len: usize) -> Notice {
        Notice {
            kind: "retraction".into(),
            source: "zotero".into(),
            doi: Some(format!("10.5555/{}", "d".repeat(len))),
            url: Some(format!("https://example.org/{}", "u".repeat(len))),
            date: Some("2020-06-01".into()),
            reasons: (0..reasons).map(|_| "r".repeat(len)).collect(),
        }
    }

    #[test]
    fn texts_are_cut_and_a_status_fits_its_bound() {
        let mut s = RetractionStatus {
            item_key: "ABCD2345".into(),
            title: "t".repeat(121),
            doi: Some("d".repeat(20_000)),
            status: RetractionState::Retracted,
            notices: vec![notice(10, 5_000), notice(10, 5_000)],
            notice_for: Vec::new(),
            reason: None,
            cut: Cuts::default(),
        };
        s.bound();
        assert!(json_chars(&s) <= MAX_STATUS_CHARS, "{}", json_chars(&s));
        assert_eq!(s.doi.as_ref().unwrap().chars().count(), MAX_DOI_CHARS);
        assert!(s.doi.as_ref().unwrap().ends_with('…'));
        assert_eq!(s.notices.len(), 1);
        let n = &s.notices[0];
        assert!(!n.reasons.is_empty());
        assert_eq!(n.reasons[0].chars().count(), MAX_TEXT_CHARS);
        // The item's DOI, and each notice's DOI, URL and ten reasons.
        assert_eq!(s.cut.texts, 1 + 2 * 12, "{:?}", s.cut);
        assert!(s.cut.left_out > 10, "{:?}", s.cut);
        // Bounded already: nothing more is cut.
        let before = (json_chars(&s), s.cut);
        s.bound();
        assert_eq!((json_chars(&s), s.cut), before);
        // Short texts are left as they are.
        let mut short = String::from("10.5555/x");
        assert!(!cut(&mut short, MAX_DOI_CHARS));
        assert_eq!(short, "10.5555/x");
    }
}
