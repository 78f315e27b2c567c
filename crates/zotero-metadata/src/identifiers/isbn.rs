//! ISBN-10 and ISBN-13, their labels and check digits; kept as the ISBN-13.

use std::fmt;
use std::hash::Hash;

use super::{is_hyphen, label, strip_prefix_ci, IdentifierError, IdentifierKind};

pub(super) const EXPECTED_ISBN: &str =
    "an ISBN-10 or an ISBN-13 starting 978 or 979, hyphens and spaces \
     allowed, such as 978-0-306-40615-7 or 0-306-40615-2";

/// An ISBN, kept as its ISBN-13 (an ISBN-10 becomes the 978-prefixed ISBN-13 it is part of).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Isbn {
    /// 13 ASCII digits.
    isbn13: String,
}

impl Isbn {
    /// The 13 digits of the ISBN-13, without hyphens: `9780306406157`.
    pub fn canonical(&self) -> &str {
        &self.isbn13
    }

    /// Same as [`Isbn::canonical`].
    pub fn isbn13(&self) -> &str {
        &self.isbn13
    }

    /// The ISBN-10 (`0306406152`, check digit possibly `X`) for a 978 ISBN; `None` for 979
    /// ones, which have no ISBN-10.
    pub fn isbn10(&self) -> Option<String> {
        let nine = self.isbn13.strip_prefix("978")?.get(..9)?;
        let digits: Vec<u32> = nine.chars().filter_map(|c| c.to_digit(10)).collect();
        let check = isbn10_check(&digits)?;
        Some(format!("{nine}{check}"))
    }
}

/// The ISBN-13 digits, which [`parse`] reads back.
impl fmt::Display for Isbn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.isbn13)
    }
}

/// What follows `ISBN`, `ISBN-10`, `ISBN-13`, `ISBN10`, `ISBN13` and `:` or a space.
pub(super) fn isbn_label(s: &str) -> Option<&str> {
    let rest = strip_prefix_ci(s, "isbn")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest);
    let rest = rest
        .strip_prefix("10")
        .or_else(|| rest.strip_prefix("13"))
        .unwrap_or(rest);
    label(rest, "")
}

/// ISBN-10 or ISBN-13, hyphens and spaces anywhere, check digit verified.
pub(super) fn parse_isbn(s: &str, shown: &str) -> Result<Isbn, IdentifierError> {
    let malformed = |problem: String| IdentifierError::Malformed {
        kind: IdentifierKind::Isbn,
        input: shown.to_string(),
        problem,
        expected: EXPECTED_ISBN,
    };
    let chars: Vec<char> = s
        .chars()
        .filter(|c| !is_hyphen(*c) && !c.is_whitespace())
        .collect();
    let (last, body) = chars
        .split_last()
        .ok_or_else(|| malformed("there is no number".to_string()))?;
    let mut digits = Vec::with_capacity(13);
    for c in body {
        match c.to_digit(10) {
            Some(d) => digits.push(d),
            None => {
                return Err(malformed(
                    "it has a character that is not a digit, a hyphen or a space".to_string(),
                ))
            }
        }
    }
    let check_given = last.to_ascii_uppercase();
    match chars.len() {
        10 => {
            if !check_given.is_ascii_digit() && check_given != 'X' {
                return Err(malformed("an ISBN-10 ends in a digit or X".to_string()));
            }
            let expected = isbn10_check(&digits)
                .ok_or_else(|| malformed("it has no check digit".to_string()))?;
            if expected != check_given {
                return Err(IdentifierError::IsbnCheckDigit {
                    input: shown.to_string(),
                    length: 10,
                    expected,
                    got: check_given,
                });
            }
            let mut isbn13: Vec<u32> = vec![9, 7, 8];
            isbn13.extend_from_slice(&digits);
            let check13 = isbn13_check(&isbn13);
            let mut text: String = isbn13
                .iter()
                .filter_map(|d| char::from_digit(*d, 10))
                .collect();
            text.push(check13);
            Ok(Isbn { isbn13: text })
        }
        13 => {
            if !check_given.is_ascii_digit() {
                return Err(malformed("an ISBN-13 ends in a digit".to_string()));
            }
            if !(digits.starts_with(&[9, 7, 8]) || digits.starts_with(&[9, 7, 9])) {
                return Err(malformed("an ISBN-13 starts with 978 or 979".to_string()));
            }
            let expected = isbn13_check(&digits);
            if expected != check_given {
                return Err(IdentifierError::IsbnCheckDigit {
                    input: shown.to_string(),
                    length: 13,
                    expected,
                    got: check_given,
                });
            }
            let mut text: String = digits
                .iter()
                .filter_map(|d| char::from_digit(*d, 10))
                .collect();
            text.push(check_given);
            Ok(Isbn { isbn13: text })
        }
        n => Err(malformed(format!(
            "it has {n} digits; an ISBN has 10 or 13"
        ))),
    }
}

/// The check character of an ISBN-10 from its first nine digits: weights 10 down to 2, the
/// sum plus the check a multiple of 11, 10 written `X`.
pub(super) fn isbn10_check(nine: &[u32]) -> Option<char> {
    if nine.len() != 9 {
        return None;
    }
    let sum: u32 = nine.iter().zip((2..=10).rev()).map(|(d, w)| d * w).sum();
    match (11 - sum % 11) % 11 {
        10 => Some('X'),
        check => char::from_digit(check, 10),
    }
}

/// The check digit of an ISBN-13 from its first twelve digits: weights 1 and 3 alternating,
/// the sum plus the check a multiple of 10.
pub(super) fn isbn13_check(twelve: &[u32]) -> char {
    let sum: u32 = twelve
        .iter()
        .zip([1, 3].iter().cycle())
        .map(|(d, w)| d * w)
        .sum();
    char::from_digit((10 - sum % 10) % 10, 10).unwrap_or('0')
}
