//! One page of a text made of pieces (section headers, attachments' full texts), taken as
//! the pieces go by: only the page is kept, offsets count Unicode characters (`char`s), and
//! a page never splits a character.

use std::ops::Range;

/// Where a page starts and how large it may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// The first character of the page in the whole text.
    pub offset: u64,
    /// The most characters a page holds (at least one is taken, whatever the value).
    pub max_chars: u64,
    /// The most UTF-8 bytes a page holds, so that text in scripts of several bytes per
    /// character does not make a page larger than asked; the first character of a page is
    /// taken whatever its size, so that every page moves forward.
    pub max_bytes: usize,
}

/// Collects one page while the whole text is pushed through it, piece after piece.
#[derive(Debug)]
pub struct Pager {
    page: PageRequest,
    /// Characters of the whole text pushed so far.
    pos: u64,
    text: String,
    taken: u64,
    /// Where the next page starts, once the page is full and more text came.
    next: Option<u64>,
}

/// A finished page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paged {
    pub text: String,
    /// Where the next page starts; `None` when this page reaches the end.
    pub next_offset: Option<u64>,
    /// Characters in the whole text.
    pub total_chars: u64,
}

impl Pager {
    pub fn new(page: PageRequest) -> Self {
        Self {
            page,
            pos: 0,
            text: String::new(),
            taken: 0,
            next: None,
        }
    }

    /// Characters pushed so far: where the next piece starts in the whole text.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Pushes the next piece of the whole text; the part of it inside the page joins the
    /// page. Answers where the piece lies in the whole text.
    pub fn push(&mut self, piece: &str) -> Range<u64> {
        let start = self.pos;
        let mut rest = piece;
        if self.next.is_none() {
            // Skip what lies before the page.
            if self.pos < self.page.offset {
                let skip = self.page.offset - self.pos;
                match usize::try_from(skip)
                    .ok()
                    .and_then(|n| rest.char_indices().nth(n))
                {
                    Some((at, _)) => {
                        rest = rest.get(at..).unwrap_or_default();
                        self.pos = self.page.offset;
                    }
                    None => {
                        self.pos += rest.chars().count() as u64;
                        return start..self.pos;
                    }
                }
            }
            let (bytes, chars) = self.fits(rest);
            let (taken, left) = rest.split_at_checked(bytes).unwrap_or((rest, ""));
            self.text.push_str(taken);
            self.taken += chars;
            self.pos += chars;
            if !left.is_empty() {
                self.next = Some(self.pos);
            }
            rest = left;
        }
        self.pos += rest.chars().count() as u64;
        start..self.pos
    }

    /// How much of the start of `s` still fits in the page: (bytes, characters).
    fn fits(&self, s: &str) -> (usize, u64) {
        let mut bytes = 0;
        let mut chars = 0;
        for c in s.chars() {
            let room = self.taken + chars < self.page.max_chars
                && self.text.len() + bytes + c.len_utf8() <= self.page.max_bytes;
            let first = self.taken + chars == 0;
            if !room && !first {
                break;
            }
            bytes += c.len_utf8();
            chars += 1;
        }
        (bytes, chars)
    }

    pub fn finish(self) -> Paged {
        Paged {
            text: self.text,
            next_offset: self.next,
            total_chars: self.pos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(
        offset: u64,
        max_chars: u64,
        max_bytes: usize,
        pieces: &[&str],
    ) -> (Paged, Vec<Range<u64>>) {
        let mut p = Pager::new(PageRequest {
            offset,
            max_chars,
            max_bytes,
        });
        let ranges = pieces.iter().map(|s| p.push(s)).collect();
        (p.finish(), ranges)
    }

    #[test]
    fn a_page_spans_pieces_and_says_where_the_next_starts() {
        let (p, ranges) = page(3, 4, 100, &["abcde", "", "fgh", "ij"]);
        assert_eq!(p.text, "defg");
        assert_eq!(p.next_offset, Some(7));
        assert_eq!(p.total_chars, 10);
        assert_eq!(ranges, vec![0..5, 5..5, 5..8, 8..10]);
    }

    #[test]
    fn the_last_page_has_no_next_offset_even_when_exactly_full() {
        let (p, _) = page(6, 4, 100, &["abcde", "fghij"]);
        assert_eq!((p.text.as_str(), p.next_offset), ("ghij", None));
        let (p, _) = page(0, 10, 100, &["abcde", "fghij"]);
        assert_eq!((p.text.as_str(), p.next_offset), ("abcdefghij", None));
        // Full at the end of a piece, with more to come.
        let (p, _) = page(0, 5, 100, &["abcde", "fghij"]);
        assert_eq!((p.text.as_str(), p.next_offset), ("abcde", Some(5)));
    }

    #[test]
    fn offsets_count_characters_and_never_split_one() {
        let (p, _) = page(1, 2, 100, &["é🙂漢a"]);
        assert_eq!(
            (p.text.as_str(), p.next_offset, p.total_chars),
            ("🙂漢", Some(3), 4)
        );
        // The byte bound stops before a character that would not fit…
        let (p, _) = page(0, 10, 5, &["é🙂漢"]);
        assert_eq!((p.text.as_str(), p.next_offset), ("é", Some(1)));
        // …but a page always takes its first character, so paging moves on.
        let (p, _) = page(1, 10, 1, &["é🙂漢"]);
        assert_eq!((p.text.as_str(), p.next_offset), ("🙂", Some(2)));
    }

    #[test]
    fn a_page_past_the_end_is_empty() {
        let (p, _) = page(20, 5, 100, &["abc", "de"]);
        assert_eq!(
            (p.text.as_str(), p.next_offset, p.total_chars),
            ("", None, 5)
        );
        let (p, _) = page(0, 5, 100, &[]);
        assert_eq!(
            (p.text.as_str(), p.next_offset, p.total_chars),
            ("", None, 0)
        );
    }
}
