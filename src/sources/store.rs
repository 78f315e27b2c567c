//! Where a prepared file's bytes are (the caller's file, an unlinked temp file, memory) and
//! the verified stream that reads them back for an upload attempt.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::Stream;
use md5::{Digest, Md5};

use super::local;

pub(crate) type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, io::Error>> + Send>>;

/// The chunk size used when a caller asks for 0.
pub const DEFAULT_CHUNK: usize = 256 * 1024;
const MAX_CHUNK: usize = 16 * 1024 * 1024;

#[derive(Clone)]
pub(crate) enum Storage {
    /// The caller's file, opened again for every stream.
    Path(Arc<PathBuf>),
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

/// The error a stream ends with when the bytes are no longer those that were hashed.
#[derive(Debug, thiserror::Error)]
#[error("{field} changed after it was hashed: {reason}")]
pub struct SourceChanged {
    pub field: &'static str,
    pub reason: &'static str,
}

pub(crate) fn lowercase_hex(digest: &[u8]) -> String {
    use std::fmt::Write;
    digest.iter().fold(String::with_capacity(32), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

pub(crate) fn stream(
    storage: &Storage,
    size: u64,
    md5: &str,
    field: &'static str,
    chunk: usize,
) -> ByteStream {
    let chunk = match chunk {
        0 => DEFAULT_CHUNK,
        n => n.min(MAX_CHUNK),
    };
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
    Path(Arc<PathBuf>),
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

    fn changed(&self, reason: &'static str) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            SourceChanged {
                field: self.field,
                reason,
            },
        )
    }

    fn open(&mut self) -> io::Result<Arc<File>> {
        if let Some(f) = &self.file {
            return Ok(f.clone());
        }
        let file = match &self.source {
            Source::Handle(f) => f.clone(),
            Source::Path(path) => {
                let file = local::open_regular(path)?;
                if file.metadata()?.len() != self.size {
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
            let digest = lowercase_hex(&self.hasher.clone().finalize());
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

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buf, offset)
}

#[cfg(windows)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    std::os::windows::fs::FileExt::seek_read(file, buf, offset)
}

#[cfg(unix)]
pub(crate) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
}

#[cfg(windows)]
pub(crate) fn write_all_at(file: &File, mut buf: &[u8], mut offset: u64) -> io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(file, buf, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                buf = buf.get(n..).unwrap_or(&[]);
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    #[cfg(windows)]
    // FILE_FLAG_DELETE_ON_CLOSE: Windows cannot unlink an open file.
    std::os::windows::fs::OpenOptionsExt::custom_flags(&mut options, 0x0400_0000);
    let file = options.open(&path)?;
    #[cfg(not(windows))]
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
        lowercase_hex(&Md5::digest(data))
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
        assert_eq!(md5_hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(lowercase_hex(&[0, 1, 0xab]), "0001ab");
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
        assert!(collect(stream(&empty, 0, &md5_hex(b""), "f", 0))
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
    async fn a_wrong_hash_ends_the_stream_with_source_changed_before_the_last_chunk() {
        let file = create_spool(&std::env::temp_dir()).unwrap();
        write_all_at(&file, b"abcdef", 0).unwrap();
        let storage = Storage::Spool(Arc::new(file));
        let mut s = stream(&storage, 6, &md5_hex(b"abcdeX"), "file_url", 4);
        assert_eq!(
            s.next().await.unwrap().unwrap(),
            Bytes::from_static(b"abcd")
        );
        let err = s.next().await.unwrap().unwrap_err();
        let changed = err
            .get_ref()
            .unwrap()
            .downcast_ref::<SourceChanged>()
            .unwrap();
        assert_eq!(changed.field, "file_url");
        assert!(s.next().await.is_none());
    }
}
