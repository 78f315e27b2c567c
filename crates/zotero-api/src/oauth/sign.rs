//! OAuth 1.0a request signing (RFC 5849 §3.4–3.6) with HMAC-SHA1, the only method zotero.org
//! offers: the parameters normalized and percent-encoded, the signature base string, the
//! signature (ring's HMAC), and the `Authorization: OAuth …` header that carries them.

use base64::Engine;
use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// RFC 5849 §3.6: every byte but the unreserved ones (`ALPHA`, `DIGIT`, `-`, `.`, `_`, `~`)
/// is escaped, with upper-case hex.
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A string percent-encoded as RFC 5849 §3.6 says (UTF-8 first).
pub fn encode(s: &str) -> String {
    utf8_percent_encode(s, NOT_UNRESERVED).to_string()
}

/// A form-encoded component decoded (`+` is a space, §3.4.1.3.1).
fn form_decode(s: &str) -> String {
    percent_decode_str(&s.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

/// The pairs of an `application/x-www-form-urlencoded` string (a query or a form body),
/// decoded; a name without `=` has an empty value.
pub fn form_pairs(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (form_decode(k), form_decode(v)),
            None => (form_decode(p), String::new()),
        })
        .collect()
}

/// The base string URI of §3.4.1.2 and the query's pairs: scheme and host in lower case, the
/// default port left out, no query or fragment.
fn base_uri(url: &str) -> (String, Vec<(String, String)>) {
    let url = url.split('#').next().unwrap_or_default();
    let (url, query) = url.split_once('?').unwrap_or((url, ""));
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let scheme = scheme.to_ascii_lowercase();
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, "/"),
    };
    let mut authority = authority.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => Some(":80"),
        "https" => Some(":443"),
        _ => None,
    };
    if let Some(port) = default_port {
        if let Some(host) = authority.strip_suffix(port) {
            authority = host.to_string();
        }
    }
    (format!("{scheme}://{authority}{path}"), form_pairs(query))
}

/// The signature base string of §3.4.1: method, base string URI, and every parameter (the
/// URL's query, a form body's, the `oauth_*` protocol parameters but `oauth_signature`),
/// each encoded, sorted by name then value, joined.
pub fn base_string(method: &str, url: &str, params: &[(String, String)]) -> String {
    let (uri, query) = base_uri(url);
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .chain(params)
        .filter(|(k, _)| k != "oauth_signature")
        .map(|(k, v)| (encode(k), encode(v)))
        .collect();
    pairs.sort();
    let normalized = pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&");
    format!(
        "{}&{}&{}",
        method.to_ascii_uppercase(),
        encode(&uri),
        encode(&normalized)
    )
}

/// The HMAC-SHA1 signature of §3.4.2, base64: the key is the client secret and the token
/// secret (empty before there is a token), each encoded, joined by `&`.
pub fn hmac_sha1(base_string: &str, client_secret: &str, token_secret: &str) -> String {
    let key_bytes = format!("{}&{}", encode(client_secret), encode(token_secret));
    let key = ring::hmac::Key::new(
        ring::hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
        key_bytes.as_bytes(),
    );
    let tag = ring::hmac::sign(&key, base_string.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(tag.as_ref())
}

/// What one signed request says about itself: its client, its token (with the token's
/// secret, which is never sent), and the other `oauth_*` parameters (`oauth_callback`,
/// `oauth_verifier`).
pub struct Signing<'a> {
    pub client_key: &'a str,
    pub client_secret: &'a str,
    pub token: Option<(&'a str, &'a str)>,
    pub extra: &'a [(&'a str, &'a str)],
    /// Unique per request (a replayed nonce is refused).
    pub nonce: &'a str,
    /// Seconds since the Unix epoch.
    pub timestamp: u64,
}

impl Signing<'_> {
    /// The protocol parameters of §3.1, signed for `method` on `url` (whose query, if any,
    /// is signed too; a request of this module carries no form body).
    pub fn params(&self, method: &str, url: &str) -> Vec<(String, String)> {
        let mut params: Vec<(String, String)> = vec![
            ("oauth_consumer_key".into(), self.client_key.into()),
            ("oauth_nonce".into(), self.nonce.into()),
            ("oauth_signature_method".into(), "HMAC-SHA1".into()),
            ("oauth_timestamp".into(), self.timestamp.to_string()),
            ("oauth_version".into(), "1.0".into()),
        ];
        if let Some((token, _)) = self.token {
            params.push(("oauth_token".into(), token.into()));
        }
        params.extend(
            self.extra
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let base = base_string(method, url, &params);
        let token_secret = self.token.map(|(_, s)| s).unwrap_or_default();
        let signature = hmac_sha1(&base, self.client_secret, token_secret);
        params.push(("oauth_signature".into(), signature));
        params
    }

    /// The `Authorization` header of §3.5.1 for `method` on `url`.
    pub fn header(&self, method: &str, url: &str) -> String {
        let fields = self
            .params(method, url)
            .iter()
            .map(|(k, v)| format!("{}=\"{}\"", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join(", ");
        format!("OAuth {fields}")
    }
}

/// A fresh nonce: 32 random letters and digits.
pub fn nonce() -> String {
    use rand::distr::{Alphanumeric, SampleString};
    Alphanumeric.sample_string(&mut rand::rng(), 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn encoding_follows_section_3_6() {
        assert_eq!(encode("abcABC123-._~"), "abcABC123-._~");
        assert_eq!(encode("a b+c/d=e&f*"), "a%20b%2Bc%2Fd%3De%26f%2A");
        assert_eq!(encode("é"), "%C3%A9");
        assert_eq!(encode("%"), "%25");
    }

    /// RFC 5849 §3.4.1.1: the example request and its base string, exactly.
    #[test]
    fn the_rfc_base_string_example() {
        let mut params = pairs(&[
            ("oauth_consumer_key", "9djdj82h48djs9d2"),
            ("oauth_token", "kkk9d7dh3k39sjv7"),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "137131201"),
            ("oauth_nonce", "7d8f3e4a"),
            ("oauth_signature", "ignored"),
        ]);
        params.extend(form_pairs("c2&a3=2+q"));
        let base = base_string(
            "POST",
            "http://EXAMPLE.COM:80/request?b5=%3D%253D&a3=a&c%40=&a2=r%20b",
            &params,
        );
        assert_eq!(
            base,
            "POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q\
             %26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_\
             key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_m\
             ethod%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk\
             9d7dh3k39sjv7"
        );
    }

    /// RFC 5849 §1.2: the token request (signed with the temporary credentials' secret)
    /// and the resource request; and OAuth Core 1.0 Appendix A.5.
    #[test]
    fn known_signatures() {
        let token = pairs(&[
            ("oauth_consumer_key", "dpf43f3p2l4k3l03"),
            ("oauth_token", "hh5s93j4hdidpola"),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "137131201"),
            ("oauth_nonce", "walatlh"),
            ("oauth_verifier", "hfdp7dh39dks9884"),
        ]);
        let base = base_string("POST", "https://photos.example.net/token", &token);
        assert_eq!(
            hmac_sha1(&base, "kd94hf93k423kf44", "hdhd0244k9j7ao03"),
            "gKgrFCywp7rO0OXSjdot/IHF7IU="
        );
        let photos = pairs(&[
            ("oauth_consumer_key", "dpf43f3p2l4k3l03"),
            ("oauth_token", "nnch734d00sl2jdk"),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "137131202"),
            ("oauth_nonce", "chapoH"),
        ]);
        let url = "http://photos.example.net/photos?file=vacation.jpg&size=original";
        let base = base_string("GET", url, &photos);
        assert_eq!(
            hmac_sha1(&base, "kd94hf93k423kf44", "pfkkdhi9sl3r4s00"),
            "MdpQcU8iPSUjWoN/UDMsK2sui9I="
        );
        let mut a5 = photos.clone();
        a5.retain(|(k, _)| k != "oauth_timestamp" && k != "oauth_nonce");
        a5.extend(pairs(&[
            ("oauth_timestamp", "1191242096"),
            ("oauth_nonce", "kllo9940pd9333jh"),
            ("oauth_version", "1.0"),
        ]));
        let base = base_string("GET", url, &a5);
        assert_eq!(
            hmac_sha1(&base, "kd94hf93k423kf44", "pfkkdhi9sl3r4s00"),
            "tR3+Ty81lMeYAr/Fid0kMTYa/WM="
        );
    }

    #[test]
    fn the_header_carries_every_parameter_signed() {
        let s = Signing {
            client_key: "ck",
            client_secret: "cs",
            token: Some(("tok", "secret-never-sent")),
            extra: &[("oauth_verifier", "v 1")],
            nonce: "n",
            timestamp: 7,
        };
        let params = s.params("POST", "https://www.zotero.org/oauth/access");
        let sig = params
            .iter()
            .find(|(k, _)| k == "oauth_signature")
            .map(|(_, v)| v.clone())
            .unwrap();
        let base = base_string("POST", "https://www.zotero.org/oauth/access", &params);
        assert_eq!(hmac_sha1(&base, "cs", "secret-never-sent"), sig);
        let header = s.header("POST", "https://www.zotero.org/oauth/access");
        assert!(
            header.starts_with("OAuth oauth_consumer_key=\"ck\", "),
            "{header}"
        );
        assert!(header.contains("oauth_verifier=\"v%201\""), "{header}");
        assert!(header.contains("oauth_token=\"tok\""), "{header}");
        assert!(!header.contains("secret-never-sent"), "{header}");
        assert_ne!(nonce(), nonce());
    }
}
