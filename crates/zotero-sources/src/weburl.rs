//! The `http://` / `https://` URLs a fetch may follow: parsing a caller's URL into an
//! `http::Uri`, resolving a redirect's `Location` against the current URL (RFC 3986 §5.2),
//! and percent-decoding.

use hyper::Uri;

/// Why a URL cannot be fetched, said so that the caller can give another.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UrlRefusal {
    #[error("it is empty")]
    Empty,
    #[error("it must be an absolute URL starting with http:// or https://")]
    NotAbsolute,
    #[error("only http:// and https:// URLs can be fetched, not {0}://")]
    Scheme(String),
    #[error("URLs with a user name or password are not accepted; give a URL that needs no login")]
    Credentials,
    #[error("it has no host")]
    NoHost,
    #[error("internationalized host names must be written in their ASCII (xn--…) form")]
    NonAsciiHost,
    #[error("it is not a valid URL ({0})")]
    Invalid(hyper::http::uri::InvalidUri),
}

/// Parses an absolute `http://` or `https://` URL. The fragment is dropped, spaces and
/// non-ASCII characters in the path and query are percent-encoded; a user name or password,
/// another scheme, or a non-ASCII host is refused with a reason for the caller.
pub(crate) fn parse(input: &str) -> Result<Uri, UrlRefusal> {
    let input = input.trim();
    if input.is_empty() {
        return Err(UrlRefusal::Empty);
    }
    let input = input.split('#').next().unwrap_or(input);
    let Some((scheme, rest)) = input.split_once("://") else {
        return Err(UrlRefusal::NotAbsolute);
    };
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(UrlRefusal::Scheme(scheme));
    }
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    if authority.contains('@') {
        return Err(UrlRefusal::Credentials);
    }
    if authority.is_empty() || authority.starts_with(':') {
        return Err(UrlRefusal::NoHost);
    }
    if !authority.is_ascii() {
        return Err(UrlRefusal::NonAsciiHost);
    }
    let mut url = String::with_capacity(input.len() + 16);
    url.push_str(&scheme);
    url.push_str("://");
    url.push_str(&authority.to_ascii_lowercase());
    if tail.is_empty() || tail.starts_with('?') {
        url.push('/');
    }
    encode_into(tail, &mut url);
    let uri: Uri = url.parse().map_err(UrlRefusal::Invalid)?;
    match uri.host() {
        Some(h) if !h.is_empty() => Ok(uri),
        _ => Err(UrlRefusal::NoHost),
    }
}

/// Percent-encodes what `http::Uri` would refuse in a path or query.
fn encode_into(s: &str, out: &mut String) {
    for b in s.bytes() {
        let keep = b.is_ascii_graphic()
            && !matches!(
                b,
                b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
            );
        if keep {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
}

/// Resolves a `Location` header against the URL that answered with it.
pub(crate) fn resolve(base: &Uri, location: &str) -> Result<Uri, UrlRefusal> {
    let location = location.trim();
    let scheme = base.scheme_str().unwrap_or("http");
    let authority = base.authority().map(|a| a.as_str()).unwrap_or("");
    if has_scheme(location) {
        return parse(location);
    }
    if let Some(rest) = location.strip_prefix("//") {
        return parse(&format!("{scheme}://{rest}"));
    }
    let base_path = base.path();
    let location = location.split('#').next().unwrap_or(location);
    let (path, query) = match location.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (location, None),
    };
    let merged = if path.is_empty() {
        base_path.to_string()
    } else if path.starts_with('/') {
        path.to_string()
    } else {
        match base_path.rfind('/') {
            Some(i) => format!("{}{path}", base_path.get(..=i).unwrap_or("/")),
            None => format!("/{path}"),
        }
    };
    let query = match (query, path.is_empty()) {
        (Some(q), _) => Some(q.to_string()),
        (None, true) => base.query().map(str::to_string),
        (None, false) => None,
    };
    let mut url = format!("{scheme}://{authority}{}", remove_dot_segments(&merged));
    if let Some(q) = query {
        url.push('?');
        url.push_str(&q);
    }
    parse(&url)
}

fn has_scheme(s: &str) -> bool {
    match s.split_once(':') {
        Some((scheme, _)) => {
            let mut chars = scheme.chars();
            chars.next().is_some_and(|c| c.is_ascii_alphabetic())
                && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }
        None => false,
    }
}

/// RFC 3986 §5.2.4, on an absolute path.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    let mut trailing_slash = false;
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "." => trailing_slash = i == last,
            ".." => {
                out.pop();
                trailing_slash = i == last;
            }
            s => {
                out.push(s);
                trailing_slash = false;
            }
        }
    }
    let mut result = String::with_capacity(path.len());
    for seg in &out {
        result.push('/');
        result.push_str(seg);
    }
    if trailing_slash || result.is_empty() {
        result.push('/');
    }
    result
}

/// Decodes `%XX` escapes; anything else (a lone `%` included) is kept as it is. Bytes that
/// are not UTF-8 become U+FFFD.
pub(crate) fn percent_decode(s: &str) -> String {
    String::from_utf8_lossy(&percent_decode_bytes(s)).into_owned()
}

pub(crate) fn percent_decode_bytes(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let hex = bytes
                .get(i + 1)
                .and_then(|&h| hex_val(h))
                .zip(bytes.get(i + 2).and_then(|&l| hex_val(l)));
            if let Some((h, l)) = hex {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(b);
        i += 1;
    }
    out
}

fn hex_val(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// The host of a URL for messages and logs (never the path or query).
pub(crate) fn host_of(uri: &Uri) -> String {
    uri.host().unwrap_or("").to_string()
}

/// A URL for error details: scheme, host, port and path, without the query (which may carry
/// a signature or a token). The fragment is already gone: `parse` drops it.
pub(crate) fn without_query(uri: &Uri) -> String {
    format!(
        "{}://{}{}",
        uri.scheme_str().unwrap_or("http"),
        uri.authority().map(|a| a.as_str()).unwrap_or(""),
        uri.path()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_urls_parse() {
        let u = parse("HTTPS://Example.ORG/a b/é?q=1 2#frag").unwrap();
        assert_eq!(u.to_string(), "https://example.org/a%20b/%C3%A9?q=1%202");
        assert_eq!(
            parse("http://example.org").unwrap().to_string(),
            "http://example.org/"
        );
        assert_eq!(
            parse("http://example.org?x=1").unwrap().to_string(),
            "http://example.org/?x=1"
        );
        assert_eq!(parse("http://[::1]:8080/x").unwrap().host(), Some("[::1]"));
    }

    #[test]
    fn bad_urls_say_why() {
        for (url, why) in [
            ("", "empty"),
            ("example.org/x.pdf", "absolute"),
            ("ftp://example.org/x", "only http"),
            ("file:///etc/passwd", "only http"),
            ("file://localhost/etc/passwd", "only http"),
            ("https://user:pw@example.org/", "user name"),
            ("https://@example.org/", "user name"),
            ("https:///x", "no host"),
            ("https://:80/x", "no host"),
            ("https://bücher.de/", "xn--"),
        ] {
            let err = parse(url).unwrap_err();
            assert!(err.to_string().contains(why), "{url}: {err}");
        }
    }

    #[test]
    fn locations_resolve_like_rfc_3986() {
        let base = parse("http://a/b/c/d;p?q").unwrap();
        for (loc, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g/"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("/./g", "http://a/g"),
            ("g.", "http://a/b/c/g."),
            ("https://other.org/x", "https://other.org/x"),
        ] {
            assert_eq!(resolve(&base, loc).unwrap().to_string(), want, "{loc}");
        }
        assert!(resolve(&base, "ftp://x/y").is_err());
        assert!(resolve(&base, "javascript:alert(1)").is_err());
    }

    #[test]
    fn urls_for_errors_leave_the_query_out() {
        for (url, want) in [
            (
                "https://cdn.example.org:8443/f/x.pdf?X-Amz-Signature=abc&t=1#frag",
                "https://cdn.example.org:8443/f/x.pdf",
            ),
            ("http://example.org?token=1", "http://example.org/"),
            ("http://[::1]:8080/a%20b", "http://[::1]:8080/a%20b"),
        ] {
            assert_eq!(without_query(&parse(url).unwrap()), want, "{url}");
        }
    }

    #[test]
    fn percent_decoding_keeps_what_is_not_an_escape() {
        assert_eq!(percent_decode("a%20b%C3%A9%zz%4"), "a bé%zz%4");
        assert_eq!(percent_decode("%FF"), "\u{FFFD}");
    }
}
