//! How zotero.org checks an OAuth 1.0a request (RFC 5849 §3.2–3.6), written apart from the
//! client's signing on purpose: the protocol parameters from the `Authorization` header, the
//! query and a form body (a parameter twice is refused), the signature base string rebuilt
//! from the request as received (the `Host` header, the path as sent), and HMAC-SHA1 made
//! here from SHA-1 (RFC 2104), not with the client's library.

use base64::Engine;
use sha1::{Digest, Sha1};

use crate::Recorded;

/// RFC 5849 §3.6.
pub(crate) fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-decoding (`+` is a space in forms and queries, not in the header).
pub(crate) fn decode(s: &str, plus_is_space: bool) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(v) => {
                        out.push(v);
                        i += 3;
                        continue;
                    }
                    Err(_) => out.push(b'%'),
                }
            }
            b'+' if plus_is_space => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The pairs of a form-encoded string.
pub(crate) fn form(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k, true), decode(v, true))
        })
        .collect()
}

/// HMAC-SHA1 (RFC 2104) over SHA-1's 64-byte block.
pub(crate) fn hmac_sha1(key: &[u8], message: &[u8]) -> [u8; 20] {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..20].copy_from_slice(&Sha1::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha1::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha1::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// The signature zotero.org expects for `base` (base64 of HMAC-SHA1 keyed by the client
/// secret and the token secret).
pub(crate) fn signature(base: &str, client_secret: &str, token_secret: &str) -> String {
    let key = format!("{}&{}", encode(client_secret), encode(token_secret));
    base64::engine::general_purpose::STANDARD.encode(hmac_sha1(key.as_bytes(), base.as_bytes()))
}

/// §3.4.1: method, `scheme://host/path` (host from the `Host` header, lower case, without
/// a default port), and every parameter but the signature, encoded, sorted, joined.
pub(crate) fn base_string(
    method: &str,
    host: &str,
    path: &str,
    params: &[(String, String)],
) -> String {
    let host = host.to_ascii_lowercase();
    let host = host.strip_suffix(":80").unwrap_or(&host);
    let mut pairs: Vec<(String, String)> = params
        .iter()
        .filter(|(k, _)| k != "oauth_signature")
        .map(|(k, v)| (encode(k), encode(v)))
        .collect();
    pairs.sort();
    let joined: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "{}&{}&{}",
        method.to_ascii_uppercase(),
        encode(&format!("http://{host}{path}")),
        encode(&joined.join("&"))
    )
}

/// The `oauth_*` parameters of an `Authorization: OAuth …` header (`realm` left out).
fn header_params(value: &str) -> Option<Vec<(String, String)>> {
    let value = value.trim();
    let scheme = value.get(..6)?;
    if !scheme.eq_ignore_ascii_case("oauth ") {
        return None;
    }
    let mut out = Vec::new();
    for field in value.get(6..)?.split(',') {
        let (k, v) = field.trim().split_once('=')?;
        let v = v.trim().strip_prefix('"')?.strip_suffix('"')?;
        if k.trim() != "realm" {
            out.push((decode(k.trim(), false), decode(v, false)));
        }
    }
    Some(out)
}

/// Every parameter of a request, as §3.4.1.3 collects them: the header's protocol
/// parameters, the query, and a form-encoded body.
pub(crate) fn request_params(req: &Recorded, body: &[u8]) -> Vec<(String, String)> {
    let mut params: Vec<(String, String)> = req
        .header("authorization")
        .and_then(header_params)
        .unwrap_or_default();
    params.extend(req.query.iter().cloned());
    let form_body = req
        .header("content-type")
        .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"));
    if form_body {
        params.extend(form(&String::from_utf8_lossy(body)));
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    /// RFC 2202 §3: HMAC-SHA1 test cases 1, 2, 6 (a key longer than the block).
    #[test]
    fn hmac_sha1_matches_rfc_2202() {
        assert_eq!(
            hex(&hmac_sha1(&[0x0b; 20], b"Hi There")),
            "b617318655057264e28bc0b6fb378c8ef146be00"
        );
        assert_eq!(
            hex(&hmac_sha1(b"Jefe", b"what do ya want for nothing?")),
            "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
        );
        assert_eq!(
            hex(&hmac_sha1(
                &[0xaa; 80],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "aa4ae5e15272d00e95705637ce8a3b55ed402112"
        );
    }

    /// RFC 5849 §1.2: the token request, signed with the temporary credentials' secret; a
    /// changed parameter, secret or method gives another signature.
    #[test]
    fn the_rfc_token_request_checks_and_a_tampered_one_does_not() {
        let params: Vec<(String, String)> = [
            ("oauth_consumer_key", "dpf43f3p2l4k3l03"),
            ("oauth_token", "hh5s93j4hdidpola"),
            ("oauth_signature_method", "HMAC-SHA1"),
            ("oauth_timestamp", "137131201"),
            ("oauth_nonce", "walatlh"),
            ("oauth_verifier", "hfdp7dh39dks9884"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        // `https` in the RFC; the emulator serves plain HTTP, so its base string says
        // `http`: compare the signature of the RFC's own base string.
        let base = base_string("POST", "photos.example.net", "/token", &params)
            .replacen("http%3A", "https%3A", 1);
        let good = "gKgrFCywp7rO0OXSjdot/IHF7IU=";
        assert_eq!(
            signature(&base, "kd94hf93k423kf44", "hdhd0244k9j7ao03"),
            good
        );
        assert_ne!(signature(&base, "kd94hf93k423kf44", "other"), good);
        let mut tampered = params.clone();
        tampered[5].1 = "hfdp7dh39dks9885".into();
        let base = base_string("POST", "photos.example.net", "/token", &tampered)
            .replacen("http%3A", "https%3A", 1);
        assert_ne!(
            signature(&base, "kd94hf93k423kf44", "hdhd0244k9j7ao03"),
            good
        );
        assert_ne!(
            base_string("GET", "photos.example.net", "/token", &params),
            base_string("POST", "photos.example.net", "/token", &params)
        );
    }

    #[test]
    fn header_parameters_are_read_and_decoded() {
        let p = header_params(r#"OAuth realm="x", oauth_token="a%20b", oauth_nonce="n""#).unwrap();
        assert_eq!(
            p,
            [
                ("oauth_token".to_string(), "a b".to_string()),
                ("oauth_nonce".to_string(), "n".to_string())
            ]
        );
        assert!(header_params("Bearer abc").is_none());
        assert_eq!(decode("a%2Bb+c", true), "a+b c");
        assert_eq!(encode("a b+~"), "a%20b%2B~");
    }
}
