//! File names and content types: validating what a caller gives, sanitizing what a server
//! or a URL suggests, `Content-Disposition`, and guessing a type from an extension.

use super::error::SourceError;
use super::weburl::percent_decode_bytes;

/// The longest file name accepted, in bytes (the usual file-system limit).
pub const MAX_FILENAME_BYTES: usize = 255;

/// The fallback content type.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// Control characters, and the invisible format characters that can disguise a name: zero
/// widths and direction marks (U+200B–U+200F), embeddings and overrides (U+202A–U+202E,
/// "invoice\u{202E}fdp.exe" shows as "invoiceexe.pdf"), isolates (U+2066–U+2069), and the
/// byte order mark (U+FEFF).
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2066}'..='\u{2069}'
                | '\u{FEFF}'
        )
}

/// Checks a caller-given file name: surrounding whitespace is trimmed; a path, `.`/`..`,
/// control or invisible format characters (see `is_hidden`), an empty name or one over 255
/// bytes are refused.
pub fn validate_filename(name: &str, field: &'static str) -> Result<String, SourceError> {
    let invalid = |reason: &str| SourceError::InvalidFilename {
        field,
        reason: reason.to_string(),
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(invalid("it is empty; give a name such as paper.pdf"));
    }
    if name == "." || name == ".." {
        return Err(invalid(
            "'.' and '..' are not file names; give a name such as paper.pdf",
        ));
    }
    if name.contains(['/', '\\']) {
        return Err(invalid(
            "it contains '/' or '\\'; give only the file's name, such as paper.pdf, not a path",
        ));
    }
    if name.chars().any(is_hidden) {
        return Err(invalid(
            "it contains control or invisible formatting characters (such as a line break or a right-to-left override)",
        ));
    }
    if name.len() > MAX_FILENAME_BYTES {
        return Err(SourceError::InvalidFilename {
            field,
            reason: format!(
                "it is {} bytes long; the limit is {MAX_FILENAME_BYTES}",
                name.len()
            ),
        });
    }
    Ok(name.to_string())
}

/// Makes a usable file name out of a name suggested by a server or a URL: only the last
/// path component is kept, control and invisible format characters (see `is_hidden`)
/// become `_`, surrounding whitespace goes,
/// and a name over 255 bytes is shortened keeping its extension. `None` when nothing
/// usable is left.
pub fn sanitize_filename(raw: &str) -> Option<String> {
    let last = raw.rsplit(['/', '\\']).next().unwrap_or(raw);
    let cleaned: String = last
        .chars()
        .map(|c| if is_hidden(c) { '_' } else { c })
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        return None;
    }
    Some(shorten(cleaned))
}

fn shorten(name: &str) -> String {
    if name.len() <= MAX_FILENAME_BYTES {
        return name.to_string();
    }
    let ext = match name.rfind('.') {
        Some(i) if i > 0 && name.len() - i <= 16 => name.get(i..).unwrap_or(""),
        _ => "",
    };
    let mut stem_end = MAX_FILENAME_BYTES - ext.len();
    while !name.is_char_boundary(stem_end) {
        stem_end -= 1;
    }
    format!("{}{ext}", name.get(..stem_end).unwrap_or(""))
}

/// The file name a `Content-Disposition` value suggests: `filename*` (RFC 8187, UTF-8 or
/// ISO-8859-1) over `filename`; sanitized.
pub fn content_disposition_filename(value: &[u8]) -> Option<String> {
    let text = match std::str::from_utf8(value) {
        Ok(s) => s.to_string(),
        Err(_) => latin1(value),
    };
    let params = split_params(&text);
    let extended = params
        .iter()
        .find(|(name, _)| name == "filename*")
        .and_then(|(_, v)| decode_ext_value(v))
        .and_then(|v| sanitize_filename(&v));
    extended.or_else(|| {
        params
            .iter()
            .find(|(name, _)| name == "filename")
            .and_then(|(_, v)| sanitize_filename(v))
    })
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// `name=value` parameters after the disposition type; quoted values unquoted.
fn split_params(text: &str) -> Vec<(String, String)> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut in_quotes = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_quotes {
            current.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_quotes = false;
            }
        } else if c == ';' {
            parts.push(std::mem::take(&mut current));
        } else {
            if c == '"' {
                in_quotes = true;
            }
            current.push(c);
        }
    }
    parts.push(current);
    parts
        .into_iter()
        .filter_map(|part| {
            let (name, value) = part.split_once('=')?;
            Some((name.trim().to_ascii_lowercase(), unquote(value.trim())))
        })
        .collect()
}

fn unquote(value: &str) -> String {
    let Some(inner) = value.strip_prefix('"') else {
        return value.to_string();
    };
    let inner = inner.strip_suffix('"').unwrap_or(inner);
    let mut out = String::with_capacity(inner.len());
    let mut escaped = false;
    for c in inner.chars() {
        if escaped {
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else {
            out.push(c);
        }
    }
    out
}

/// RFC 8187 `charset'language'percent-encoded`.
fn decode_ext_value(value: &str) -> Option<String> {
    let (charset, rest) = value.split_once('\'')?;
    let (_language, encoded) = rest.split_once('\'')?;
    let bytes = percent_decode_bytes(encoded);
    match charset.trim().to_ascii_lowercase().as_str() {
        "iso-8859-1" | "latin1" => Some(latin1(&bytes)),
        _ => Some(String::from_utf8_lossy(&bytes).into_owned()),
    }
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// The media type of a `Content-Type` value (parameters dropped, lowercased), if it has
/// the shape `type/subtype`.
pub fn media_type(value: &str) -> Option<String> {
    let essence = value.split(';').next().unwrap_or("").trim();
    let (ty, sub) = essence.split_once('/')?;
    (is_token(ty) && is_token(sub)).then(|| essence.to_ascii_lowercase())
}

/// Checks a caller-given content type; keeps only the media type (`text/plain; charset=x`
/// becomes `text/plain`: Zotero stores the charset apart).
pub fn validate_content_type(value: &str) -> Result<String, SourceError> {
    media_type(value).ok_or_else(|| SourceError::InvalidContentType {
        value: value.to_string(),
    })
}

/// Content types that say nothing about the content: the file name's extension knows better.
pub fn is_generic(media_type: &str) -> bool {
    matches!(
        media_type,
        "application/octet-stream"
            | "binary/octet-stream"
            | "application/binary"
            | "application/unknown"
            | "application/x-download"
            | "application/force-download"
            | "application/download"
    )
}

/// The content type a file name's extension suggests.
pub fn guess_from_name(name: &str) -> Option<String> {
    mime_guess::from_path(name).first_raw().map(str::to_string)
}

/// An extension for a content type, only when it maps back to the same type.
pub fn extension_for(media_type: &str) -> Option<&'static str> {
    mime_guess::get_mime_extensions_str(media_type)?
        .iter()
        .copied()
        .find(|ext| mime_guess::from_ext(ext).first_raw() == Some(media_type))
}

/// Whether a file name has an extension (`paper.pdf` does, `download` and `.bashrc` do not).
pub fn has_extension(name: &str) -> bool {
    name.rfind('.').is_some_and(|i| i > 0 && i + 1 < name.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caller_file_names_are_checked() {
        assert_eq!(
            validate_filename("  paper.pdf ", "filename").unwrap(),
            "paper.pdf"
        );
        assert_eq!(
            validate_filename("Über é.pdf", "filename").unwrap(),
            "Über é.pdf"
        );
        for (bad, why) in [
            ("", "empty"),
            ("   ", "empty"),
            (".", "'.'"),
            ("..", "'.'"),
            ("a/b.pdf", "'/'"),
            ("../etc/passwd", "'/'"),
            ("a\\b.pdf", "'/'"),
            ("a\nb.pdf", "control"),
            ("a\0b", "control"),
        ] {
            let err = validate_filename(bad, "filename").unwrap_err();
            assert!(err.to_string().contains(why), "{bad:?}: {err}");
            assert_eq!(err.field(), Some("filename"));
        }
        let long = "a".repeat(256);
        assert!(validate_filename(&long, "filename")
            .unwrap_err()
            .to_string()
            .contains("256 bytes"));
        assert!(validate_filename(&"a".repeat(255), "filename").is_ok());
    }

    #[test]
    fn suggested_file_names_are_sanitized() {
        assert_eq!(sanitize_filename("paper.pdf").as_deref(), Some("paper.pdf"));
        assert_eq!(
            sanitize_filename("../../etc/passwd").as_deref(),
            Some("passwd")
        );
        assert_eq!(sanitize_filename("C:\\x\\y.pdf").as_deref(), Some("y.pdf"));
        assert_eq!(sanitize_filename("a\tb\r.pdf").as_deref(), Some("a_b_.pdf"));
        assert_eq!(sanitize_filename(" x ").as_deref(), Some("x"));
        for bad in ["", " ", ".", "..", "a/", "a/..", "/"] {
            assert_eq!(sanitize_filename(bad), None, "{bad:?}");
        }
        let long = format!("{}.pdf", "é".repeat(200));
        let short = sanitize_filename(&long).unwrap();
        assert!(
            short.len() <= MAX_FILENAME_BYTES && short.ends_with("é.pdf"),
            "{short}"
        );
        let long = "x".repeat(300);
        assert_eq!(sanitize_filename(&long).unwrap().len(), 255);
    }

    #[test]
    fn invisible_format_characters_do_not_survive() {
        for c in [
            '\u{200B}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{202A}', '\u{202E}', '\u{2066}',
            '\u{2069}', '\u{FEFF}',
        ] {
            let name = format!("invoice{c}fdp.exe");
            assert_eq!(
                sanitize_filename(&name).as_deref(),
                Some("invoice_fdp.exe"),
                "{c:?}"
            );
            let err = validate_filename(&name, "filename").unwrap_err();
            assert!(err.to_string().contains("invisible"), "{c:?}: {err}");
            assert_eq!(err.field(), Some("filename"));
        }
        // Ordinary non-ASCII letters, and characters next to the ranges, stay.
        for ok in [
            "Über é.pdf",
            "a\u{2010}b.pdf",
            "a\u{202F}b.pdf",
            "a\u{2070}b.pdf",
        ] {
            assert_eq!(sanitize_filename(ok).as_deref(), Some(ok));
            assert_eq!(validate_filename(ok, "filename").unwrap(), ok);
        }
        let cd = |s: &str| content_disposition_filename(s.as_bytes());
        assert_eq!(
            cd("attachment; filename=\"invoice\u{202E}fdp.exe\"").as_deref(),
            Some("invoice_fdp.exe")
        );
        assert_eq!(
            cd("attachment; filename*=UTF-8''invoice%E2%80%AEfdp.exe").as_deref(),
            Some("invoice_fdp.exe")
        );
        assert_eq!(
            cd("attachment; filename*=UTF-8''%EF%BB%BFpaper.pdf").as_deref(),
            Some("_paper.pdf")
        );
    }

    #[test]
    fn content_disposition_is_read() {
        let cd = |s: &str| content_disposition_filename(s.as_bytes());
        assert_eq!(
            cd("attachment; filename=\"paper.pdf\"").as_deref(),
            Some("paper.pdf")
        );
        assert_eq!(
            cd("attachment; filename=paper.pdf").as_deref(),
            Some("paper.pdf")
        );
        assert_eq!(
            cd("inline;filename=\"a \\\"q\\\" ; b.pdf\"").as_deref(),
            Some("a \"q\" ; b.pdf")
        );
        assert_eq!(
            cd("attachment; filename=\"fallback.pdf\"; filename*=UTF-8''%C3%BCber%20all.pdf")
                .as_deref(),
            Some("über all.pdf")
        );
        assert_eq!(
            cd("attachment; FILENAME*=utf-8'en'x%2Fy.pdf; filename=z.pdf").as_deref(),
            Some("y.pdf")
        );
        assert_eq!(
            cd("attachment; filename*=iso-8859-1''%E9t%E9.pdf").as_deref(),
            Some("été.pdf")
        );
        assert_eq!(
            cd("attachment; filename=\"../../evil.sh\"").as_deref(),
            Some("evil.sh")
        );
        assert_eq!(cd("attachment; filename=\"..\"").as_deref(), None);
        assert_eq!(cd("attachment").as_deref(), None);
        assert_eq!(cd("inline; name=\"x.pdf\"").as_deref(), None);
        // Raw UTF-8 and raw ISO-8859-1 bytes in a plain filename.
        assert_eq!(
            content_disposition_filename("attachment; filename=\"é.pdf\"".as_bytes()).as_deref(),
            Some("é.pdf")
        );
        assert_eq!(
            content_disposition_filename(b"attachment; filename=\"\xe9.pdf\"").as_deref(),
            Some("é.pdf")
        );
    }

    #[test]
    fn content_types_are_checked_and_guessed() {
        assert_eq!(
            validate_content_type("application/pdf").unwrap(),
            "application/pdf"
        );
        assert_eq!(
            validate_content_type("Text/HTML; charset=UTF-8").unwrap(),
            "text/html"
        );
        assert_eq!(
            validate_content_type(
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
            )
            .unwrap(),
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        );
        for bad in [
            "pdf",
            "",
            "/",
            "application/",
            "/pdf",
            "a b/c",
            "application/pdf/x",
            "ä/b",
        ] {
            let err = validate_content_type(bad).unwrap_err();
            assert_eq!(err.field(), Some("content_type"), "{bad}");
        }
        assert_eq!(guess_from_name("x.PDF").as_deref(), Some("application/pdf"));
        assert_eq!(
            guess_from_name("x.epub").as_deref(),
            Some("application/epub+zip")
        );
        assert_eq!(guess_from_name("download"), None);
        assert_eq!(extension_for("application/pdf"), Some("pdf"));
        assert_eq!(extension_for("application/x-nothing-known"), None);
        assert!(
            has_extension("a.pdf")
                && !has_extension("download")
                && !has_extension(".bashrc")
                && !has_extension("a.")
        );
        assert!(is_generic("application/octet-stream") && !is_generic("application/pdf"));
    }
}
