//! Small helpers shared by the write, file and web modules: PHP-compatible parsing and
//! formatting (the real server is PHP), timestamps, random keys and form bodies.

use std::time::{SystemTime, UNIX_EPOCH};

use md5::{Digest, Md5};
use rand::Rng;

/// Characters of Zotero object keys (no 0, 1 or O).
pub(crate) const KEY_CHARS: &[u8] = b"23456789ABCDEFGHIJKLMNPQRSTUVWXYZ";

/// `Zotero_ID::isValidKey`: exactly 8 characters of [`KEY_CHARS`].
pub(crate) fn is_valid_key(k: &str) -> bool {
    k.len() == 8 && k.bytes().all(|b| KEY_CHARS.contains(&b))
}

/// A new random object key.
pub(crate) fn random_key() -> String {
    let mut rng = rand::rng();
    (0..8)
        .map(|_| KEY_CHARS[rng.random_range(0..KEY_CHARS.len())] as char)
        .collect()
}

/// 32 random lower-case hex digits (like PHP's `md5(uniqid())`).
pub(crate) fn random_hex32() -> String {
    format!("{:032x}", rand::rng().random::<u128>())
}

/// Lower-case hex MD5 of `bytes`.
pub(crate) fn md5_hex(bytes: &[u8]) -> String {
    hex(&Md5::digest(bytes))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Decodes 32 hex digits into 16 bytes.
pub(crate) fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// PHP's `is_numeric`: optional leading whitespace, sign, digits with an optional fraction
/// and exponent.
pub(crate) fn php_is_numeric(s: &str) -> bool {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let t = t
        .strip_suffix([' ', '\t', '\n', '\r', '\x0b', '\x0c'])
        .unwrap_or(t);
    let t = t.strip_prefix(['+', '-']).unwrap_or(t);
    if t.is_empty() || t.starts_with(['e', 'E']) {
        return false;
    }
    t.parse::<f64>().is_ok() && !t.contains(['i', 'I', 'n', 'N', 'x', 'X'])
}

/// PHP's `(int)` of a numeric string (truncating; 0 when not a number).
pub(crate) fn php_int(s: &str) -> i64 {
    s.trim().parse::<f64>().map(|f| f as i64).unwrap_or(0)
}

/// How PHP prints a float: no trailing `.0`.
pub(crate) fn php_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// PHP's `round($x, 1)`.
pub(crate) fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// PHP's `empty()` on a request parameter: missing, `""` or `"0"`.
pub(crate) fn php_empty(v: Option<&str>) -> bool {
    matches!(v, None | Some("") | Some("0"))
}

/// Seconds since the epoch.
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time.
pub(crate) fn iso8601(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// The current time as the API writes it.
pub(crate) fn iso_now() -> String {
    iso8601(unix_now())
}

/// `YYYY-MM-DD`
pub(crate) fn is_sql_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// `YYYY-MM-DD hh:mm:ss`
pub(crate) fn is_sql_datetime(s: &str) -> bool {
    s.len() == 19 && is_sql_date(&s[..10]) && s.as_bytes()[10] == b' ' && is_time(&s[11..])
}

fn is_time(t: &str) -> bool {
    let b = t.as_bytes();
    b.len() == 8
        && b[2] == b':'
        && b[5] == b':'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 2 || i == 5 || c.is_ascii_digit())
}

/// `YYYY-MM-DDThh:mm:ssZ` (what `Zotero_Date::isISO8601` accepts in practice).
pub(crate) fn is_iso8601(s: &str) -> bool {
    s.len() == 20
        && is_sql_date(&s[..10])
        && &s[10..11] == "T"
        && is_time(&s[11..19])
        && s.ends_with('Z')
}

/// An ISO 8601 timestamp from one of the accepted date-time forms.
pub(crate) fn to_iso(s: &str) -> String {
    if is_sql_datetime(s) {
        format!("{}T{}Z", &s[..10], &s[11..])
    } else {
        s.to_string()
    }
}

/// Parses an `application/x-www-form-urlencoded` body (`+` is a space).
pub(crate) fn parse_form(body: &[u8]) -> Vec<(String, String)> {
    let body = String::from_utf8_lossy(body).replace('+', " ");
    body.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("");
            if let Ok(v) = u8::from_str_radix(hex, 16) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Escapes text for an XML element.
pub(crate) fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// PHP's `htmlspecialchars($s, ENT_COMPAT)`, which the server applies to error messages.
pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
