//! `locate` on documents built here glyph by glyph: every expected rectangle is computed from
//! the glyph boxes the test laid out.

use super::*;
use crate::document::{DocumentKind, Glyph};

/// Each character is 5 points wide; a space advances without a glyph.
const W: f64 = 5.0;

/// A page laid out line by line, like an extractor would answer it.
struct Builder {
    page: Page,
}

impl Builder {
    fn new(index: u32, label: &str) -> Self {
        Builder {
            page: Page {
                index,
                label: label.into(),
                status: PageStatus::Text,
                text: String::new(),
                glyphs: Vec::new(),
                view_box: [0.0, 0.0, 612.0, 792.0],
                rotation: 0,
            },
        }
    }

    /// A new line (a line break before it unless it is the first) at `x`, baseline box
    /// `y..y+h`.
    fn line(mut self, text: &str, x: f64, y: f64, h: f64) -> Self {
        if !self.page.text.is_empty() {
            self.page.text.push('\n');
        }
        self.put(text, x, y, h);
        self
    }

    /// A line whose text continues the previous one with nothing between (a line-end
    /// hyphenation the extractor joined).
    fn joined(mut self, text: &str, x: f64, y: f64, h: f64) -> Self {
        self.put(text, x, y, h);
        self
    }

    /// `glyph` is one box producing several characters (a ligature).
    fn put(&mut self, text: &str, x: f64, y: f64, h: f64) {
        let mut x = x;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let start = self.page.text.len() as u32;
            self.page.text.push(c);
            if c == ' ' {
                x += W;
                continue;
            }
            // `{fi}` written as "\u{1}fi": one glyph for two characters.
            if c == '\u{1}' {
                self.page.text.pop();
                let a = chars.next().expect("ligature");
                let b = chars.next().expect("ligature");
                self.page.text.push(a);
                self.page.text.push(b);
            }
            let end = self.page.text.len() as u32;
            self.page.glyphs.push(Glyph {
                start,
                end,
                rect: [x, y, x + W, y + h],
            });
            x += W;
        }
    }

    fn build(self) -> Page {
        self.page
    }
}

fn doc(pages: Vec<Page>) -> Document {
    Document {
        kind: DocumentKind::Pdf,
        pages,
    }
}

#[test]
fn one_line_gets_one_rect_from_its_first_to_its_last_glyph() {
    let d = doc(vec![Builder::new(0, "1")
        .line("alpha beta gamma", 100.0, 700.0, 10.0)
        .build()]);
    let l = locate(&d, "beta gamma", None).expect("found");
    // 'b' is the 7th character (x = 100 + 6*5), 'a' of gamma the 16th (ends at 100 + 16*5).
    assert_eq!(l.rects, vec![[130.0, 700.0, 180.0, 710.0]]);
    assert_eq!(l.text, "beta gamma");
    assert_eq!((l.start, l.end), (6, 16));
    assert_eq!(l.page_label, "1");
    // glyph 5 ('b'; spaces have none), 792 - 710 = 82 points from the top.
    assert_eq!(l.sort_index, "00000|000005|00082");
}

#[test]
fn a_line_is_as_tall_as_its_tallest_glyph() {
    let mut p = Builder::new(0, "1")
        .line("small Big", 100.0, 700.0, 10.0)
        .build();
    // The 'B' of Big rises above the line.
    p.glyphs[5].rect[3] = 714.0;
    let l = locate(&doc(vec![p]), "small", None).expect("found");
    assert_eq!(l.rects, vec![[100.0, 700.0, 125.0, 714.0]]);
}

#[test]
fn a_hyphenated_quote_finds_the_joined_word_across_two_lines() {
    let d = doc(vec![Builder::new(0, "1")
        .line("we study hyphen", 50.0, 700.0, 10.0)
        .joined("ation of words", 50.0, 686.0, 10.0)
        .build()]);
    let l = locate(&d, "study hyphen-\nation   of", None).expect("found");
    assert_eq!(l.text, "study hyphenation of");
    assert_eq!(
        l.rects,
        vec![
            // "study hyphen": x 50+3*5 .. 50+15*5
            [65.0, 700.0, 125.0, 710.0],
            // "ation of": x 50 .. 50+8*5
            [50.0, 686.0, 90.0, 696.0],
        ]
    );
    // The joined text without the hyphen finds it too.
    let again = locate(&d, "STUDY HYPHENATION OF", None).expect("found");
    assert_eq!(again.rects, l.rects);
}

#[test]
fn ligatures_and_quote_styles_match_either_way() {
    let d = doc(vec![Builder::new(0, "1")
        .line("the \u{1}first “curly” one", 100.0, 500.0, 12.0)
        .build()]);
    let l = locate(&d, "the \u{FB01}rst \"curly\"", None).expect("found");
    // t h e _ {fi} r s t _ “ c u r l y ”: the "fi" glyph is one box, so the quote is 15
    // boxes and a space wide, up to the closing quote mark's box.
    assert_eq!(l.rects, vec![[100.0, 500.0, 180.0, 512.0]]);
    // A quote starting inside the ligature takes the whole glyph.
    let inside = locate(&d, "irst", None).expect("found");
    assert_eq!(inside.rects, vec![[120.0, 500.0, 140.0, 512.0]]);
}

#[test]
fn a_quote_across_two_columns_gets_one_rect_in_each() {
    let d = doc(vec![Builder::new(0, "1")
        .line("left column top", 50.0, 700.0, 10.0)
        .line("left column end", 50.0, 100.0, 10.0)
        .line("right column top", 320.0, 700.0, 10.0)
        .line("right column end", 320.0, 100.0, 10.0)
        .build()]);
    let l = locate(&d, "column end right column", None).expect("found");
    assert_eq!(
        l.rects,
        vec![[75.0, 100.0, 125.0, 110.0], [320.0, 700.0, 380.0, 710.0]]
    );
    // Zotero's sort index takes the rect reaching furthest right (x2 = 380, the second),
    // and the first glyph touching it: "right" starts after 26 glyphs.
    assert_eq!(l.sort_index, "00000|000026|00082");
}

#[test]
fn twice_without_a_page_is_ambiguous_and_a_page_says_which() {
    let d = doc(vec![
        Builder::new(0, "iv")
            .line("the same words", 100.0, 700.0, 10.0)
            .build(),
        Builder::new(1, "1")
            .line("and the same words", 100.0, 600.0, 10.0)
            .build(),
    ]);
    match locate(&d, "same words", None) {
        Err(LocateError::Ambiguous { places }) => {
            let labels: Vec<&str> = places.iter().map(|p| p.page_label.as_str()).collect();
            assert_eq!(labels, vec!["iv", "1"]);
        }
        other => panic!("expected ambiguous, got {other:?}"),
    }
    // A label wins over a page number: "1" is the page labelled 1 (index 1).
    assert_eq!(
        locate(&d, "same words", Some("1"))
            .expect("found")
            .page_index,
        1
    );
    assert_eq!(
        locate(&d, "same words", Some("iv"))
            .expect("found")
            .page_index,
        0
    );
    // A number that is no label is the 1-based page number.
    assert_eq!(
        locate(&d, "same words", Some("2"))
            .expect("found")
            .page_index,
        1
    );
    assert_eq!(
        locate(&d, "same words", Some("9")),
        Err(LocateError::NoSuchPage {
            hint: "9".into(),
            pages: 2
        })
    );
    // Twice on one page is ambiguous even with the page.
    let twice = doc(vec![Builder::new(0, "1")
        .line("echo echo", 100.0, 700.0, 10.0)
        .build()]);
    assert!(matches!(
        locate(&twice, "echo", Some("1")),
        Err(LocateError::Ambiguous { places }) if places.len() == 2
    ));
}

#[test]
fn not_found_answers_the_closest_passages_most_similar_first() {
    let d = doc(vec![
        Builder::new(0, "1")
            .line("nothing to see here at all", 100.0, 700.0, 10.0)
            .build(),
        Builder::new(1, "2")
            .line("the results suggest a strong effect", 100.0, 700.0, 10.0)
            .build(),
    ]);
    match locate(&d, "the results show a strong effect", None) {
        Err(LocateError::NotFound { hint, closest }) => {
            assert_eq!(hint, None);
            let first = closest.first().expect("a passage");
            assert_eq!(first.page_label, "2");
            assert!(
                first.similarity > 0.5 && first.similarity < 1.0,
                "{first:?}"
            );
            assert!(
                first.excerpt.contains("results suggest a strong"),
                "{first:?}"
            );
            assert!(closest
                .windows(2)
                .all(|w| w[0].similarity >= w[1].similarity));
        }
        other => panic!("expected not found, got {other:?}"),
    }
    // With a page: not searched elsewhere, but the closest passages still come from all.
    match locate(&d, "the results suggest", Some("1")) {
        Err(LocateError::NotFound { hint, closest }) => {
            assert_eq!(hint.as_deref(), Some("1"));
            assert_eq!(closest.first().map(|n| n.similarity), Some(1.0));
        }
        other => panic!("expected not found, got {other:?}"),
    }
    assert_eq!(locate(&d, " - \n ", None), Err(LocateError::EmptyQuote));
}

#[test]
fn pages_without_glyphs_or_text_are_refused_or_skipped() {
    let mut no_boxes = Builder::new(0, "1")
        .line("text without boxes", 0.0, 0.0, 1.0)
        .build();
    no_boxes.glyphs.clear();
    assert_eq!(
        locate(&doc(vec![no_boxes]), "without", None),
        Err(LocateError::NoGlyphs { label: "1".into() })
    );
    let mut scan = Builder::new(0, "1").line("ghost", 0.0, 0.0, 1.0).build();
    scan.status = PageStatus::NoTextLayer;
    assert!(matches!(
        locate(&doc(vec![scan]), "ghost", None),
        Err(LocateError::NotFound { .. })
    ));
}

#[test]
fn notes_sit_at_the_passage_top_right_or_the_page_centre() {
    let p = Builder::new(3, "4")
        .line("alpha beta", 100.0, 700.0, 10.0)
        .build();
    let d = doc(vec![p.clone()]);
    let l = locate(&d, "beta", None).expect("found");
    let (rect, sort) = note_rect(&p, Some(&l));
    assert_eq!(rect, [128.0, 688.0, 150.0, 710.0]);
    assert_eq!(sort, "00003|000005|00082");
    let (rect, sort) = note_rect(&p, None);
    assert_eq!(rect, [295.0, 385.0, 317.0, 407.0]);
    // The nearest glyph to the centre is the last one; 792 - 407 = 385.
    assert_eq!(sort, "00003|000008|00385");
}
