//! `meta.parsedDate` from a free-form `date` field, close to Zotero's `strToDate`: ISO-like
//! `YYYY-MM-DD`, US `MM/DD/YYYY` (day first when the first number exceeds 12), English month
//! names (`Sept 18, 2012`, `18 September 2012`), or a bare year. `None` when no year is found
//! (`n.d.`). Precision follows the input: `2012`, `2012-09`, `2012-09-18`.

use super::util::{is_iso8601, is_sql_date, iso8601};

const MONTHS: [&str; 12] = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
];

#[derive(Debug, PartialEq)]
enum Tok {
    Num(String),
    Word(String),
    Sep(char),
}

fn tokens(s: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, out: &mut Vec<Tok>| {
        if cur.is_empty() {
            return;
        }
        let t = std::mem::take(cur);
        if t.bytes().all(|b| b.is_ascii_digit()) {
            out.push(Tok::Num(t));
        } else {
            out.push(Tok::Word(t.to_lowercase()));
        }
    };
    for c in s.chars() {
        let same_kind = cur
            .chars()
            .last()
            .is_none_or(|l| l.is_ascii_digit() == c.is_ascii_digit());
        if c.is_alphanumeric() && same_kind {
            cur.push(c);
        } else if c.is_alphanumeric() {
            flush(&mut cur, &mut out);
            cur.push(c);
        } else {
            flush(&mut cur, &mut out);
            out.push(Tok::Sep(c));
        }
    }
    flush(&mut cur, &mut out);
    out
}

fn fmt(y: u32, m: Option<u32>, d: Option<u32>) -> String {
    match (
        m.filter(|m| (1..=12).contains(m)),
        d.filter(|d| (1..=31).contains(d)),
    ) {
        (Some(m), Some(d)) => format!("{y:04}-{m:02}-{d:02}"),
        (Some(m), None) => format!("{y:04}-{m:02}"),
        _ => format!("{y:04}"),
    }
}

/// The parsed date, or `None` without a recognisable year.
pub(crate) fn parse_date(s: &str) -> Option<String> {
    let toks = tokens(s.trim());
    let nums: Vec<(usize, u32, usize)> = toks
        .iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Tok::Num(n) => n.parse().ok().map(|v| (i, v, n.len())),
            _ => None,
        })
        .collect();
    let is_date_sep = |i: usize| matches!(toks.get(i), Some(Tok::Sep('-' | '/' | '.')));
    // YYYY-MM[-DD]
    for (i, v, len) in &nums {
        if *len == 4 && is_date_sep(i + 1) {
            if let Some(Tok::Num(m)) = toks.get(i + 2) {
                let m: u32 = m.parse().ok()?;
                let d = match (is_date_sep(i + 3), toks.get(i + 4)) {
                    (true, Some(Tok::Num(d))) => d.parse().ok(),
                    _ => None,
                };
                return Some(fmt(*v, Some(m), d));
            }
        }
    }
    // MM/DD/YYYY or DD.MM.YYYY
    for (i, v, len) in &nums {
        if *len <= 2 && is_date_sep(i + 1) && is_date_sep(i + 3) {
            if let (Some(Tok::Num(b)), Some(Tok::Num(y))) = (toks.get(i + 2), toks.get(i + 4)) {
                if y.len() == 4 {
                    let (b, y): (u32, u32) = (b.parse().ok()?, y.parse().ok()?);
                    let (m, d) = if *v > 12 { (b, *v) } else { (*v, b) };
                    return Some(fmt(y, Some(m), Some(d)));
                }
            }
        }
    }
    let year = nums.iter().find(|(_, _, len)| *len == 4)?;
    let month = toks.iter().enumerate().find_map(|(i, t)| match t {
        Tok::Word(w) if w.len() >= 3 => MONTHS
            .iter()
            .position(|m| w.starts_with(m))
            .map(|m| (i, m as u32 + 1)),
        _ => None,
    });
    let Some((mi, m)) = month else {
        return Some(fmt(year.1, None, None));
    };
    // A day: a 1-2 digit number next to the month name (either side).
    let day = nums
        .iter()
        .filter(|(_, _, len)| *len <= 2)
        .find(|(i, _, _)| i.abs_diff(mi) <= 2)
        .map(|(_, v, _)| *v);
    Some(fmt(year.1, Some(m), day))
}

/// An ISO 8601 timestamp (`Z` or a `±hh[:]mm` offset) as UTC `YYYY-MM-DDThh:mm:ssZ`.
pub(crate) fn parse_iso8601(s: &str) -> Option<String> {
    if s.len() < 20 || !is_sql_date(&s[..10]) || &s[10..11] != "T" {
        return None;
    }
    if is_iso8601(s) {
        return Some(s.to_string());
    }
    let time = s.get(11..19)?;
    let off = s.get(19..)?.replace(':', "");
    let (sign, digits) = match off.as_bytes().first()? {
        b'+' => (1i64, &off[1..]),
        b'-' => (-1i64, &off[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let parts: Vec<i64> = time.split(':').map(|p| p.parse().unwrap_or(-1)).collect();
    if parts.len() != 3 || parts.iter().any(|p| *p < 0) {
        return None;
    }
    let (y, m, d): (i64, i64, i64) = (
        s[..4].parse().ok()?,
        s[5..7].parse().ok()?,
        s[8..10].parse().ok()?,
    );
    let offset =
        sign * (digits[..2].parse::<i64>().ok()? * 3600 + digits[2..].parse::<i64>().ok()? * 60);
    let days = days_from_civil(y, m, d);
    let secs = days * 86_400 + parts[0] * 3600 + parts[1] * 60 + parts[2] - offset;
    Some(iso8601(secs.max(0) as u64))
}

fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
