//! A fake S3 bucket for file uploads: `POST {BUCKET_PATH}` takes a browser-style form upload
//! (policy, signature, `Content-MD5`, `content-length-range`) and answers like S3 does (201
//! with a `PostResponse`, or an XML `<Error>`); `GET {BUCKET_PATH}{key}` serves a stored
//! object. No Zotero key is involved.

use md5::{Digest, Md5};
use serde_json::Value;

use super::storage::S3Object;
use super::storage::BUCKET_PATH;
use super::util::{hex, unix_now, xml_escape};
use super::{Answer, Recorded, State};

const BUCKET: &str = "zotero-uploads";

fn xml(status: u16, body: String) -> Answer {
    let doc = format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{body}");
    Answer::raw(status, doc.into_bytes(), "application/xml")
}

/// An S3 `<Error>` document; `extra` is more elements (already XML).
fn s3_error(status: u16, code: &str, message: &str, extra: &str) -> Answer {
    let id = super::util::random_hex32();
    xml(
        status,
        format!(
            "<Error><Code>{code}</Code><Message>{}</Message>{extra}<RequestId>{}</RequestId>\
             <HostId>{id}</HostId></Error>",
            xml_escape(message),
            id[..16].to_uppercase()
        ),
    )
}

fn policy_failed(detail: &str) -> Answer {
    s3_error(
        403,
        "AccessDenied",
        &format!("Invalid according to Policy: {detail}"),
        "",
    )
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// The form fields before the file, and the file's bytes.
type Form<'a> = (Vec<(String, String)>, Option<&'a [u8]>);

fn parse_multipart<'a>(body: &'a [u8], boundary: &str) -> Option<Form<'a>> {
    let delim = format!("--{boundary}");
    let delim_crlf = format!("\r\n--{boundary}");
    let mut pos = if body.starts_with(delim.as_bytes()) {
        delim.len()
    } else {
        find(body, delim_crlf.as_bytes(), 0)? + delim_crlf.len()
    };
    let mut fields = Vec::new();
    loop {
        let rest = body.get(pos..)?;
        if rest.starts_with(b"--") {
            return Some((fields, None));
        }
        if !rest.starts_with(b"\r\n") {
            return None;
        }
        let head_start = pos + 2;
        let head_end = find(body, b"\r\n\r\n", head_start)?;
        let head = String::from_utf8_lossy(&body[head_start..head_end]).into_owned();
        let name = head
            .split("\r\n")
            .find(|l| l.to_ascii_lowercase().starts_with("content-disposition:"))
            .and_then(|l| l.split(';').find_map(|p| p.trim().strip_prefix("name=")))
            .map(|n| n.trim_matches('"').to_string())?;
        let content_start = head_end + 4;
        if name == "file" {
            // The file is the last part; S3 ignores anything after it.
            let end = body
                .windows(delim_crlf.len())
                .rposition(|w| w == delim_crlf.as_bytes())
                .filter(|e| *e >= content_start)?;
            let tail = &body[end + delim_crlf.len()..];
            if !tail.starts_with(b"--") {
                return None;
            }
            return Some((fields, Some(&body[content_start..end])));
        }
        let end = find(body, delim_crlf.as_bytes(), content_start)?;
        let value = String::from_utf8(body[content_start..end].to_vec()).ok()?;
        fields.push((name, value));
        pos = end + delim_crlf.len();
    }
}

/// `POST {BUCKET_PATH}`
pub(crate) fn post_object(st: &mut State, base: &str, req: &Recorded, body: &[u8]) -> Answer {
    if req
        .header("authorization")
        .is_some_and(|a| !a.starts_with("AWS"))
    {
        return s3_error(400, "InvalidArgument", "Unsupported Authorization Type", "");
    }
    let ct = req.header("content-type").unwrap_or("");
    let boundary = ct
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"').to_string());
    let Some(boundary) =
        boundary.filter(|_| ct.to_ascii_lowercase().starts_with("multipart/form-data"))
    else {
        return s3_error(
            412,
            "PreconditionFailed",
            "At least one of the pre-conditions you specified did not hold",
            "<Condition>Bucket POST must be of the enclosure-type multipart/form-data</Condition>",
        );
    };
    let Some(len) = req.header("content-length") else {
        return s3_error(
            411,
            "MissingContentLength",
            "You must provide the Content-Length HTTP header.",
            "",
        );
    };
    if len.trim().parse::<usize>().ok() != Some(body.len()) {
        return s3_error(
            400,
            "IncompleteBody",
            "You did not provide the number of bytes specified by the Content-Length HTTP header",
            "",
        );
    }
    let Some((fields, file)) = parse_multipart(body, &boundary) else {
        return s3_error(
            400,
            "MalformedPOSTRequest",
            "The body of your POST request is not well-formed multipart/form-data.",
            "",
        );
    };
    let Some(file) = file else {
        return s3_error(
            400,
            "InvalidArgument",
            "POST requires exactly one file upload per request.",
            "<ArgumentName>file</ArgumentName><ArgumentValue>0</ArgumentValue>",
        );
    };
    let field = |k: &str| {
        fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    };
    let (Some(policy_b64), Some(signature)) = (field("policy"), field("x-amz-signature")) else {
        return s3_error(403, "AccessDenied", "Access Denied", "");
    };
    if st.files.sign(policy_b64) != signature {
        return s3_error(
            403,
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided. \
             Check your key and signing method.",
            "",
        );
    }
    use base64::Engine;
    let policy: Value = base64::engine::general_purpose::STANDARD
        .decode(policy_b64)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    if let Some(r) = check_policy(&policy, &fields, file.len() as u64) {
        return r;
    }
    let key = field("key").unwrap_or("").to_string();
    let content_md5 = field("Content-MD5").unwrap_or("").to_string();
    let calculated = Md5::digest(file);
    let expected = base64::engine::general_purpose::STANDARD
        .decode(&content_md5)
        .ok()
        .filter(|d| d.len() == 16);
    let Some(expected) = expected else {
        return s3_error(
            400,
            "InvalidDigest",
            "The Content-MD5 you specified was invalid.",
            "",
        );
    };
    if expected.as_slice() != calculated.as_slice() {
        let calc = base64::engine::general_purpose::STANDARD.encode(calculated);
        return s3_error(
            400,
            "BadDigest",
            "The Content-MD5 you specified did not match what we received.",
            &format!(
                "<ExpectedDigest>{}</ExpectedDigest><CalculatedDigest>{calc}</CalculatedDigest>",
                xml_escape(&content_md5)
            ),
        );
    }
    let etag = hex(&calculated);
    let bytes = st.files.keep_bytes.then(|| file.to_vec());
    st.files.s3.insert(key.clone(), S3Object { bytes });
    let location = format!("{base}{BUCKET_PATH}{key}");
    xml(
        201,
        format!(
            "<PostResponse><Location>{}</Location><Bucket>{BUCKET}</Bucket><Key>{}</Key>\
             <ETag>\"{etag}\"</ETag></PostResponse>",
            xml_escape(&location),
            xml_escape(&key)
        ),
    )
    .header("ETag", format!("\"{etag}\""))
    .header("Location", location)
}

/// The policy's expiration and conditions against the form; `Some` is the error answer.
fn check_policy(policy: &Value, fields: &[(String, String)], size: u64) -> Option<Answer> {
    let exp = policy["expiration"].as_str().unwrap_or("");
    if expired(exp) {
        return Some(policy_failed("Policy expired."));
    }
    let conds = policy["conditions"].as_array().cloned().unwrap_or_default();
    let mut allowed: Vec<String> = vec!["policy".into(), "x-amz-signature".into(), "file".into()];
    for c in &conds {
        if let Some(obj) = c.as_object() {
            for (k, v) in obj {
                allowed.push(k.to_ascii_lowercase());
                let want = v.as_str().unwrap_or("");
                let got = if k == "bucket" {
                    Some(BUCKET)
                } else {
                    fields
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(k))
                        .map(|(_, v)| v.as_str())
                };
                if got != Some(want) {
                    return Some(policy_failed(&format!(
                        "Policy Condition failed: [\"eq\", \"${k}\", \"{want}\"]"
                    )));
                }
            }
        } else if c[0] == "content-length-range" {
            let (min, max) = (
                c[1].as_u64().unwrap_or(0),
                c[2].as_u64().unwrap_or(u64::MAX),
            );
            if size > max {
                return Some(s3_error(
                    400,
                    "EntityTooLarge",
                    "Your proposed upload exceeds the maximum allowed size",
                    &format!(
                        "<ProposedSize>{size}</ProposedSize><MaxSizeAllowed>{max}</MaxSizeAllowed>"
                    ),
                ));
            }
            if size < min {
                return Some(s3_error(
                    400,
                    "EntityTooSmall",
                    "Your proposed upload is smaller than the minimum allowed size",
                    &format!(
                        "<ProposedSize>{size}</ProposedSize><MinSizeAllowed>{min}</MinSizeAllowed>"
                    ),
                ));
            }
        }
    }
    let extra: Vec<&str> = fields
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| {
            let l = n.to_ascii_lowercase();
            !allowed.contains(&l) && !l.starts_with("x-ignore-")
        })
        .collect();
    if !extra.is_empty() {
        return Some(policy_failed(&format!(
            "Extra input fields: {}",
            extra.join(", ")
        )));
    }
    None
}

/// `Y-m-dTG:i:sZ` in the past?
fn expired(exp: &str) -> bool {
    let Some((date, time)) = exp.trim_end_matches('Z').split_once('T') else {
        return true;
    };
    let mut hms = time.split(':').map(|p| p.parse::<u64>().unwrap_or(0));
    let (h, m, s) = (
        hms.next().unwrap_or(0),
        hms.next().unwrap_or(0),
        hms.next().unwrap_or(0),
    );
    let iso = format!("{date}T{h:02}:{m:02}:{s:02}Z");
    iso < super::util::iso8601(unix_now())
}

/// `GET {BUCKET_PATH}{key}`
pub(crate) fn get_object(st: &State, req: &Recorded, key: &str) -> Answer {
    let obj = st.files.s3.get(key);
    let Some(bytes) = obj.and_then(|o| o.bytes.clone()) else {
        return s3_error(
            404,
            "NoSuchKey",
            "The specified key does not exist.",
            &format!("<Key>{}</Key>", xml_escape(key)),
        );
    };
    let content_type = req
        .query
        .iter()
        .find(|(k, _)| k == "response-content-type")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "binary/octet-stream".into());
    let etag = format!("\"{}\"", hex(&Md5::digest(&bytes)));
    Answer::raw(200, bytes, &content_type).header("ETag", etag)
}
