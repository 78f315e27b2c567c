//! Local sources: a file on the server's disk (`file_path`), hashed by streaming and never
//! held in memory, and inline base64 (`file_bytes_base64`), decoded into memory after its
//! size is checked from the encoded length.

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;
use bytes::Bytes;
use md5::{Digest, Md5};
use tokio_util::sync::CancellationToken;

use super::error::SourceError;

/// Read buffer for hashing a file.
const HASH_BUF: usize = 256 * 1024;

/// What hashing a file found.
#[derive(Debug)]
pub(crate) struct HashedFile {
    pub size: u64,
    pub md5: String,
    pub mtime_ms: u64,
    /// The file that was hashed; every later open must find this one at its path.
    pub id: FileId,
}

/// A file's identity: the device and inode it lives on. The same path naming another
/// identity names another file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(meta: &Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// A `file_path` that passed the path policy: its resolved path and the file hashed there.
#[derive(Debug)]
pub(crate) struct CheckedFile {
    pub path: PathBuf,
    pub id: FileId,
}

/// Why `open_checked` did not open a file.
#[derive(Debug)]
pub(crate) enum OpenError {
    Io(io::Error),
    /// What the path names is not a regular file (what it is, for the message).
    NotRegular(&'static str),
    /// The path names another file than the one checked, or reaches it through a symlink
    /// that was not there when it was resolved: something was swapped in.
    Replaced,
}

/// Why a file that changed under the check is refused.
const REPLACED: &str = "it was replaced or moved while it was being opened; call again";

/// Opens the resolved (symlink-free) `path` for reading if it is a regular file, without
/// blocking on a FIFO, and makes sure the file opened is the one that was checked: the same
/// identity as the path's metadata before opening (and as `expected`, the file hashed
/// earlier), still reached by the same symlink-free path after opening. A path swapped for
/// a symlink between the check and the open (the last name, or a directory on the way) is
/// refused rather than followed.
pub(crate) fn open_checked(
    path: &Path,
    expected: Option<FileId>,
) -> Result<(File, Metadata), OpenError> {
    let meta = std::fs::metadata(path).map_err(OpenError::Io)?;
    if let Some(kind) = not_regular(&meta) {
        return Err(OpenError::NotRegular(kind));
    }
    let id = FileId::of(&meta);
    if expected.is_some_and(|e| e != id) {
        return Err(OpenError::Replaced);
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    // Opening a FIFO for reading blocks until a writer appears; with O_NONBLOCK it returns
    // at once (and the FIFO is then refused). Regular files ignore the flag. O_NOFOLLOW: the
    // last name of a resolved path is no symlink, so one there now was swapped in.
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NONBLOCK | libc::O_NOFOLLOW,
    );
    let file = options.open(path).map_err(|e| match e.raw_os_error() {
        Some(libc::ELOOP) => OpenError::Replaced,
        _ => OpenError::Io(e),
    })?;
    let opened = file.metadata().map_err(OpenError::Io)?;
    if let Some(kind) = not_regular(&opened) {
        return Err(OpenError::NotRegular(kind));
    }
    if FileId::of(&opened) != id || std::fs::canonicalize(path).ok().as_deref() != Some(path) {
        return Err(OpenError::Replaced);
    }
    Ok((file, opened))
}

/// What a non-regular file is, for the error message.
fn not_regular(meta: &Metadata) -> Option<&'static str> {
    let ft = meta.file_type();
    if ft.is_file() {
        return None;
    }
    if ft.is_dir() {
        return Some("a directory");
    }
    use std::os::unix::fs::FileTypeExt;
    if ft.is_fifo() {
        return Some("a FIFO (named pipe)");
    }
    if ft.is_socket() {
        return Some("a socket");
    }
    if ft.is_block_device() {
        return Some("a block device");
    }
    if ft.is_char_device() {
        return Some("a character device");
    }
    Some("not a regular file")
}

/// Reads the resolved `path` whole when it is a regular file of at most `max_bytes` (checked
/// on the file opened, and again while reading, as a file may grow meanwhile).
pub(crate) fn read_bounded(
    path: &Path,
    max_bytes: u64,
    field: &'static str,
) -> Result<crate::LocalRead, SourceError> {
    let meta = std::fs::metadata(path).map_err(|e| path_error(&e, path, field))?;
    if let Some(kind) = not_regular(&meta) {
        return Err(SourceError::NotARegularFile { field, kind });
    }
    let (file, opened) = open_checked(path, Some(FileId::of(&meta))).map_err(|e| match e {
        OpenError::Io(e) => path_error(&e, path, field),
        OpenError::NotRegular(kind) => SourceError::NotARegularFile { field, kind },
        OpenError::Replaced => SourceError::Unreadable {
            field,
            reason: REPLACED.into(),
        },
    })?;
    if opened.len() > max_bytes {
        return Ok(crate::LocalRead::TooLarge { size: opened.len() });
    }
    let mut bytes = Vec::new();
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| path_error(&e, path, field))?;
    if bytes.len() as u64 > max_bytes {
        return Ok(crate::LocalRead::TooLarge {
            size: bytes.len() as u64,
        });
    }
    Ok(crate::LocalRead::Bytes(bytes))
}

pub(crate) fn path_error(e: &io::Error, path: &Path, field: &'static str) -> SourceError {
    match e.kind() {
        io::ErrorKind::NotFound => SourceError::PathNotFound {
            field,
            hint: if path.starts_with("~") {
                "; '~' is not expanded, give the full path"
            } else {
                ""
            },
        },
        io::ErrorKind::PermissionDenied => SourceError::PathPermissionDenied { field },
        io::ErrorKind::NotADirectory => SourceError::Unreadable {
            field,
            reason: "a part of the path is not a directory".into(),
        },
        _ => SourceError::Unreadable {
            field,
            reason: e.to_string(),
        },
    }
}

pub(crate) fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

pub(crate) fn now_ms() -> u64 {
    millis(SystemTime::now())
}

/// Checks and hashes the resolved `path` (blocking: run it on a blocking thread). The size
/// limit is checked from the metadata before the file is opened, and again while reading.
/// The bytes read must be as many as the metadata says: every upload attempt sends and
/// checks exactly that many, so a file that reports another size (`/proc`, `/sys`) or grows
/// or shrinks while it is hashed is refused now, before anything is written.
pub(crate) fn hash_path(
    path: &Path,
    max_bytes: u64,
    field: &'static str,
    cancel: &CancellationToken,
) -> Result<HashedFile, SourceError> {
    let meta = std::fs::metadata(path).map_err(|e| path_error(&e, path, field))?;
    if let Some(kind) = not_regular(&meta) {
        return Err(SourceError::NotARegularFile { field, kind });
    }
    if meta.len() > max_bytes {
        return Err(SourceError::TooLarge {
            field,
            size: Some(meta.len()),
            max_bytes,
        });
    }
    let (mut file, meta) = open_checked(path, Some(FileId::of(&meta))).map_err(|e| match e {
        OpenError::Io(e) => path_error(&e, path, field),
        OpenError::NotRegular(kind) => SourceError::NotARegularFile { field, kind },
        OpenError::Replaced => SourceError::Unreadable {
            field,
            reason: REPLACED.into(),
        },
    })?;
    if meta.len() > max_bytes {
        return Err(SourceError::TooLarge {
            field,
            size: Some(meta.len()),
            max_bytes,
        });
    }
    let mtime_ms = meta.modified().map(millis).unwrap_or_else(|_| now_ms());

    let mut hasher = Md5::new();
    let mut size: u64 = 0;
    let mut buf = vec![0u8; HASH_BUF];
    loop {
        if cancel.is_cancelled() {
            return Err(SourceError::Cancelled);
        }
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(path_error(&e, path, field)),
        };
        let data = buf.get(..n).unwrap_or(&[]);
        size += n as u64;
        if size > max_bytes {
            return Err(SourceError::TooLarge {
                field,
                size: None,
                max_bytes,
            });
        }
        hasher.update(data);
    }
    if size != meta.len() {
        return Err(SourceError::Unreadable {
            field,
            reason: format!(
                "the file reports {} bytes but {size} were read; it is changing or is not a regular file",
                meta.len()
            ),
        });
    }
    Ok(HashedFile {
        size,
        md5: format!("{:x}", hasher.finalize()),
        mtime_ms,
        id: FileId::of(&meta),
    })
}

/// Decoded base64, and the media type of a `data:` URL when the caller sent one.
pub(crate) struct Decoded {
    pub bytes: Bytes,
    pub data_url_type: Option<String>,
}

/// Shows the size, never the content.
impl std::fmt::Debug for Decoded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Decoded({} bytes, {:?})",
            self.bytes.len(),
            self.data_url_type
        )
    }
}

/// The exact decoded size of valid base64 (whitespace and `=` not counted); for invalid
/// input an upper bound, which is all the limit check needs.
pub(crate) fn decoded_len(encoded: &str) -> u64 {
    let significant = encoded
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .count() as u64;
    significant / 4 * 3 + (significant % 4) * 3 / 4
}

/// Decodes `file_bytes_base64`: standard or URL-safe alphabet, padded or not, line breaks
/// and other whitespace ignored, an optional `data:<type>;base64,` prefix. The size limit
/// is checked from the encoded length before anything is decoded.
pub(crate) fn decode_base64(
    data: &str,
    max_bytes: u64,
    field: &'static str,
) -> Result<Decoded, SourceError> {
    let invalid = |reason: String| SourceError::InvalidBase64 { field, reason };
    let (payload, data_url_type) = split_data_url(data).map_err(|r| invalid(r.into()))?;
    let size = decoded_len(payload);
    if size > max_bytes {
        return Err(SourceError::TooLarge {
            field,
            size: Some(size),
            max_bytes,
        });
    }
    let cleaned: std::borrow::Cow<'_, str> = if payload.bytes().any(|b| b.is_ascii_whitespace()) {
        payload
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect::<String>()
            .into()
    } else {
        payload.into()
    };
    let has_std = cleaned.contains(['+', '/']);
    let has_url = cleaned.contains(['-', '_']);
    if has_std && has_url {
        return Err(invalid(
            "it mixes the standard (+ /) and URL-safe (- _) alphabets; use one of them".into(),
        ));
    }
    let alphabet = if has_url {
        &base64::alphabet::URL_SAFE
    } else {
        &base64::alphabet::STANDARD
    };
    let engine = GeneralPurpose::new(
        alphabet,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let bytes = engine
        .decode(cleaned.as_bytes())
        .map_err(|e| invalid(describe(&e, cleaned.len())))?;
    Ok(Decoded {
        bytes: Bytes::from(bytes),
        data_url_type,
    })
}

fn describe(e: &base64::DecodeError, len: usize) -> String {
    use base64::DecodeError as D;
    match e {
        D::InvalidByte(at, b'=') => format!(
            "'=' at position {at} (whitespace not counted): padding may only come at the very end"
        ),
        D::InvalidByte(at, b) => format!(
            "{} at position {at} (whitespace not counted) is not a base64 character; \
             send only A-Z a-z 0-9 + / (or - _) and = padding",
            printable(*b)
        ),
        D::InvalidLength(_) => format!(
            "its length ({len} characters without whitespace) is not possible for base64; \
             the text looks truncated"
        ),
        D::InvalidLastSymbol(at, b) => format!(
            "the last character {} at position {at} is not possible there; the text looks truncated or altered",
            printable(*b)
        ),
        D::InvalidPadding => {
            "the '=' padding is wrong: at most two '=' may end the text".to_string()
        }
    }
}

fn printable(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", char::from(b))
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// `data:<type>[;params];base64,<payload>` → payload and media type; other text unchanged.
fn split_data_url(data: &str) -> Result<(&str, Option<String>), &'static str> {
    let trimmed = data.trim_start();
    let is_data_url = trimmed
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("data:"));
    if !is_data_url {
        return Ok((data, None));
    }
    let rest = trimmed.get(5..).unwrap_or("");
    let Some((meta, payload)) = rest.split_once(',') else {
        return Err("it starts like a data: URL but has no ',' before the data");
    };
    let mut parts = meta.split(';');
    let media = parts.next().unwrap_or("");
    if !parts.any(|p| p.trim().eq_ignore_ascii_case("base64")) {
        return Err("only base64 data: URLs (data:<type>;base64,...) are accepted");
    }
    Ok((payload, super::names::media_type(media)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Blame;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
    use proptest::prelude::*;

    const F: &str = "file_bytes_base64";

    #[test]
    fn a_file_whose_size_is_not_what_it_reports_is_refused() {
        // stat says 0 bytes for files under /proc, which still read as text.
        let Ok(status) = std::fs::canonicalize("/proc/self/status") else {
            return; // no procfs here
        };
        assert_eq!(std::fs::metadata(&status).unwrap().len(), 0);
        let err = hash_path(&status, 1 << 20, "file_path", &CancellationToken::new()).unwrap_err();
        assert!(matches!(err, SourceError::Unreadable { .. }), "{err:?}");
        assert_eq!(err.field(), Some("file_path"));
        let text = err.to_string();
        assert!(
            text.starts_with("file_path could not be read: the file reports 0 bytes but "),
            "{text}"
        );
        assert!(
            text.ends_with("were read; it is changing or is not a regular file"),
            "{text}"
        );
        assert_eq!(err.blame(), Blame::Input);
    }

    #[test]
    fn padding_variants_and_whitespace_decode() {
        for (input, want) in [
            ("", &b""[..]),
            ("YQ==", b"a"),
            ("YQ", b"a"),
            ("YQ=", b"a"),
            ("YWI=", b"ab"),
            ("YWI", b"ab"),
            ("YWJj", b"abc"),
            ("YW\nJj\r\n", b"abc"),
            ("  Y W J j  ", b"abc"),
            ("+/+/", &[0xfb, 0xff, 0xbf]),
            ("-_-_", &[0xfb, 0xff, 0xbf]),
            ("data:application/pdf;base64,JVBERi0=", b"%PDF-"),
        ] {
            let got = decode_base64(input, 1000, F).unwrap_or_else(|e| panic!("{input:?}: {e}"));
            assert_eq!(&got.bytes[..], want, "{input:?}");
        }
        let d = decode_base64("DATA:Application/PDF;name=x;base64,JVBERi0", 100, F).unwrap();
        assert_eq!(d.data_url_type.as_deref(), Some("application/pdf"));
    }

    #[test]
    fn bad_base64_says_what_is_wrong() {
        for (input, why) in [
            ("YQ=x", "padding may only come"),
            ("Y!==", "'!' at position 1"),
            ("Y", "truncated"),
            ("YWJjZ", "truncated"),
            ("+-ab", "mixes"),
            ("YQ===", "padding"),
            ("data:text/plain,hello", "only base64 data: URLs"),
            ("data:abc", "no ','"),
        ] {
            let err = decode_base64(input, 1000, F).unwrap_err();
            assert_eq!(err.field(), Some(F));
            assert!(err.to_string().contains(why), "{input:?}: {err}");
        }
    }

    #[test]
    fn the_limit_is_checked_before_decoding() {
        // 8 characters decode to 6 bytes: over a limit of 5, even though the text is not
        // valid base64 (it is never decoded).
        let err = decode_base64("!!!!!!!!", 5, F).unwrap_err();
        match err {
            SourceError::TooLarge {
                size: Some(6),
                max_bytes: 5,
                ..
            } => {}
            other => panic!("{other}"),
        }
        assert!(decode_base64("YWJjZGU=", 5, F).is_ok()); // exactly 5 bytes
        assert!(matches!(
            decode_base64("YWJjZGVm", 5, F),
            Err(SourceError::TooLarge { size: Some(6), .. })
        ));
        // Whitespace and padding do not count.
        assert!(decode_base64("YW Jj\nZG U=\n\n", 5, F).is_ok());
    }

    proptest! {
        #[test]
        fn decoded_len_is_exact_for_valid_base64(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            let padded = STANDARD.encode(&data);
            let bare = URL_SAFE_NO_PAD.encode(&data);
            prop_assert_eq!(decoded_len(&padded), data.len() as u64);
            prop_assert_eq!(decoded_len(&bare), data.len() as u64);
            let wrapped: String = padded.as_bytes().chunks(76).map(|c| format!("{}\r\n", String::from_utf8_lossy(c))).collect();
            prop_assert_eq!(&decode_base64(&wrapped, 1000, F).unwrap().bytes[..], &data[..]);
            prop_assert_eq!(&decode_base64(&bare, 1000, F).unwrap().bytes[..], &data[..]);
        }
    }
}
