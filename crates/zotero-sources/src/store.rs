//! Where a prepared file's bytes are (the caller's file, an unlinked temp file, memory) and
//! the verified stream that reads them back for an upload attempt.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use md5::{Digest, Md5};

use super::local::{self, CheckedFile, OpenError};
use zotero_net::ByteStream;

/// The size of the chunks `PreparedFile::stream` hands out.
pub(crate) const CHUNK: usize = 256 * 1024;

pub(crate) enum Storage {
    /// The caller's file, opened again for every stream (and checked to be the same file).
    Path(Arc<CheckedFile>),
    /// A download spooled to an unlinked temp file; read with positional reads, so that
    /// streams never share a file offset.
    Spool(Arc<File>),
    Memory(Bytes),
}

impl Storage {
    pub fn kind(&self) -> &'static str {
        match self {
            Storage::Path(_) => "path",
            Storage::Spool(_) => "temp file",
            Storage::Memory(_) => "memory",
        }
    }
}

/// The bytes of `storage`, in chunks of `chunk` bytes (`CHUNK` outside tests); from a file
/// checked against `size` and `md5` as they are read (see `Reader::step`).
pub(crate) fn stream(
    storage: &Storage,
    size: u64,
    md5: &str,
    field: &'static str,
    chunk: usize,
) -> ByteStream {
    // A chunk of 0 bytes would never get anywhere.
    let chunk = chunk.max(1);
    match storage {
        Storage::Memory(bytes) => {
            let bytes = bytes.clone();
            let len = bytes.len();
            let pieces = (0..len)
                .step_by(chunk)
                .map(move |start| Ok(bytes.slice(start..len.min(start + chunk))));
            Box::pin(futures_util::stream::iter(pieces.collect::<Vec<_>>()))
        }
        Storage::Path(path) => file_stream(Reader::new(
            Source::Path(path.clone()),
            size,
            md5,
            field,
            chunk,
        )),
        Storage::Spool(file) => file_stream(Reader::new(
            Source::Handle(file.clone()),
            size,
            md5,
            field,
            chunk,
        )),
    }
}

enum Source {
    Path(Arc<CheckedFile>),
    Handle(Arc<File>),
}

struct Reader {
    source: Source,
    file: Option<Arc<File>>,
    pos: u64,
    size: u64,
    chunk: usize,
    hasher: Md5,
    expected_md5: String,
    field: &'static str,
    done: bool,
}

impl Reader {
    fn new(source: Source, size: u64, md5: &str, field: &'static str, chunk: usize) -> Self {
        Self {
            source,
            file: None,
            pos: 0,
            size,
            chunk,
            hasher: Md5::new(),
            expected_md5: md5.to_string(),
            field,
            done: false,
        }
    }

    /// The error a stream ends with when the bytes are no longer those that were hashed;
    /// it reaches the caller as the upload's error message.
    fn changed(&self, reason: &str) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{} changed after it was hashed: {reason}; nothing was stored, call again to upload the current content",
                self.field
            ),
        )
    }

    fn open(&mut self) -> io::Result<Arc<File>> {
        if let Some(f) = &self.file {
            return Ok(f.clone());
        }
        let file = match &self.source {
            Source::Handle(f) => f.clone(),
            Source::Path(checked) => {
                let (file, meta) = match local::open_checked(&checked.path, Some(checked.id)) {
                    Ok(opened) => opened,
                    Err(OpenError::Io(e)) => return Err(e),
                    Err(OpenError::NotRegular(_) | OpenError::Replaced) => {
                        return Err(self.changed("it was replaced by another file"))
                    }
                };
                if meta.len() != self.size {
                    return Err(self.changed("its size is different"));
                }
                Arc::new(file)
            }
        };
        self.file = Some(file.clone());
        Ok(file)
    }

    /// The next chunk. The last chunk is only handed out once the end of the file and the
    /// MD5 of everything read are checked, so a changed file is never sent in full.
    fn step(&mut self) -> io::Result<Option<Bytes>> {
        let file = self.open()?;
        let remaining = self.size.saturating_sub(self.pos);
        let want = usize::try_from(remaining)
            .unwrap_or(usize::MAX)
            .min(self.chunk);
        let mut buf = vec![0u8; want];
        let got = read_full_at(&file, &mut buf, self.pos)?;
        if got < want {
            return Err(self.changed("it is shorter than when it was hashed"));
        }
        self.hasher.update(&buf);
        self.pos += want as u64;
        if self.pos >= self.size {
            let mut probe = [0u8; 1];
            if read_full_at(&file, &mut probe, self.pos)? > 0 {
                return Err(self.changed("it is longer than when it was hashed"));
            }
            let digest = format!("{:x}", self.hasher.clone().finalize());
            if digest != self.expected_md5 {
                return Err(self.changed("its content is different (MD5 mismatch)"));
            }
            self.done = true;
            if buf.is_empty() {
                return Ok(None);
            }
        }
        Ok(Some(Bytes::from(buf)))
    }
}

fn file_stream(reader: Reader) -> ByteStream {
    Box::pin(futures_util::stream::unfold(
        Some(reader),
        |state| async move {
            let mut reader = state?;
            if reader.done {
                return None;
            }
            let joined = tokio::task::spawn_blocking(move || {
                let item = reader.step();
                (reader, item)
            })
            .await;
            match joined {
                Ok((reader, Ok(Some(bytes)))) => Some((Ok(bytes), Some(reader))),
                Ok((_, Ok(None))) => None,
                Ok((_, Err(e))) => Some((Err(e), None)),
                Err(e) => Some((
                    Err(io::Error::other(format!("read task failed: {e}"))),
                    None,
                )),
            }
        },
    ))
}

/// Reads until `buf` is full or the file ends; the number of bytes read.
pub(crate) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let Some(rest) = buf.get_mut(filled..) else {
            break;
        };
        match read_at(file, rest, offset + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

/// Creates a temp file in `dir` under a random name, and unlinks it at once: the open
/// handle is the only way to it, and it vanishes when the last handle closes.
pub(crate) fn create_spool(dir: &Path) -> io::Result<File> {
    let name = format!(
        ".zotero-mcp-{:016x}{:016x}.part",
        rand::random::<u64>(),
        rand::random::<u64>()
    );
    let path = dir.join(name);
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create_new(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

static MEMORY_FALLBACK_WARNED: AtomicBool = AtomicBool::new(false);

/// Logs once per process that downloads are held in memory.
pub(crate) fn warn_memory_fallback(err: &io::Error) {
    if !MEMORY_FALLBACK_WARNED.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            error = %err,
            "the temp directory (TMPDIR) cannot be used for downloads; holding them in memory instead (at most ZOTERO_UPLOAD_MAX_BYTES each)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    fn md5_hex(data: &[u8]) -> String {
        format!("{:x}", Md5::digest(data))
    }

    async fn collect(mut s: ByteStream) -> Result<Vec<u8>, io::Error> {
        let mut out = Vec::new();
        while let Some(item) = s.next().await {
            out.extend_from_slice(&item?);
        }
        Ok(out)
    }

    #[test]
    fn hex_is_lowercase_and_padded() {
        // The bytes 0x00, 0x04 and 0x09 of this digest keep their leading zero.
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5_hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
    }

    #[tokio::test]
    async fn memory_streams_in_chunks() {
        let data = Bytes::from(vec![7u8; 10]);
        let storage = Storage::Memory(data.clone());
        let chunks: Vec<_> = stream(&storage, 10, &md5_hex(&data), "f", 4)
            .map(|c| c.unwrap().len())
            .collect()
            .await;
        assert_eq!(chunks, vec![4, 4, 2]);
        let empty = Storage::Memory(Bytes::new());
        assert!(collect(stream(&empty, 0, &md5_hex(b""), "f", CHUNK))
            .await
            .unwrap()
            .is_empty());
    }

    #[tokio::test]
    async fn spool_is_unlinked_and_streams_twice() {
        // A directory of its own: other tests create files in the shared temp dir.
        let dir =
            std::env::temp_dir().join(format!("zotero-mcp-spool-{:016x}", rand::random::<u64>()));
        std::fs::create_dir(&dir).unwrap();
        let file = create_spool(&dir).unwrap();
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "unlinked at once"
        );
        let data = b"hello spool".to_vec();
        write_all_at(&file, &data, 0).unwrap();
        let storage = Storage::Spool(Arc::new(file));
        for chunk in [1, 3, 100] {
            let got = collect(stream(
                &storage,
                data.len() as u64,
                &md5_hex(&data),
                "f",
                chunk,
            ))
            .await
            .unwrap();
            assert_eq!(got, data);
        }
        // Two streams at once do not disturb each other (positional reads).
        let a = stream(&storage, data.len() as u64, &md5_hex(&data), "f", 2);
        let b = stream(&storage, data.len() as u64, &md5_hex(&data), "f", 3);
        let (a, b) = tokio::join!(collect(a), collect(b));
        assert_eq!(a.unwrap(), data);
        assert_eq!(b.unwrap(), data);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[tokio::test]
    async fn a_wrong_hash_ends_the_stream_with_an_error_before_the_last_chunk() {
        let file = create_spool(&std::env::temp_dir()).unwrap();
        write_all_at(&file, b"abcdef", 0).unwrap();
        let storage = Storage::Spool(Arc::new(file));
        let mut s = stream(&storage, 6, &md5_hex(b"abcdeX"), "file_url", 4);
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            Bytes::from_static(b"abcd")
        );
        let err = s.next().await.unwrap().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        let text = err.to_string();
        assert!(
            text.starts_with("file_url changed after it was hashed"),
            "{text}"
        );
        assert!(text.contains("MD5 mismatch"), "{text}");
        assert!(text.contains("nothing was stored"), "{text}");
        assert!(s.next().await.is_none());
    }
}
