//! Reading stdin one line (one JSON-RPC message) at a time without ever holding more than the
//! largest message allowed: a longer line is discarded as it streams past, keeping only a
//! bounded head and tail to look for its `id` in.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::id_scan::{self, HEAD_BYTES, TAIL_BYTES};

const MIB: u64 = 1024 * 1024;

/// rmcp's own stdio limit: what another rmcp server accepts is accepted here too.
const MIN_MESSAGE_BYTES: u64 = 16 * MIB;

/// Room for the rest of a `tools/call` around its base64 file: method, file name, metadata.
const MESSAGE_SLACK_BYTES: u64 = MIB;

/// The largest message (one line, without its newline) the server reads.
///
/// A file to upload can arrive inside a `tools/call` as base64, so the largest upload
/// (`ZOTERO_UPLOAD_MAX_BYTES`) must fit as base64 (4 characters per 3 bytes, the last group
/// padded) with [`MESSAGE_SLACK_BYTES`] for the JSON around it; and never less than rmcp's
/// 16 MiB. The default 50 MiB upload gives 70,953,644 bytes.
pub fn max_message_bytes(upload_max_bytes: u64) -> usize {
    let base64 = upload_max_bytes.div_ceil(3).saturating_mul(4);
    let needed = base64
        .saturating_add(MESSAGE_SLACK_BYTES)
        .max(MIN_MESSAGE_BYTES);
    usize::try_from(needed).unwrap_or(usize::MAX)
}

/// One line of input.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A whole line (the last one may lack its newline), without the newline.
    Message(Vec<u8>),
    /// A line longer than the limit, discarded: its length, and the `id` found in its head
    /// or tail, if any.
    Oversized {
        len: usize,
        id: Option<serde_json::Value>,
    },
}

/// Splits a byte stream into lines of at most `max` bytes.
pub struct LineReader<R> {
    read: R,
    max: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(read: R, max: usize) -> Self {
        LineReader { read, max }
    }

    /// The next line, or `None` at the end of the input.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        let mut line = Vec::new();
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                // A last line without its newline is still a message.
                return Ok((!line.is_empty()).then_some(Line::Message(line)));
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let chunk = available.get(..newline.unwrap_or(available.len()));
            let chunk = chunk.unwrap_or_default();
            let consumed = newline.map_or(available.len(), |at| at + 1);
            if line.len().saturating_add(chunk.len()) > self.max {
                // Keep the head and the tail seen so far, and let the rest go.
                let mut len = line.len().saturating_add(chunk.len());
                let mut tail = Vec::with_capacity(2 * TAIL_BYTES);
                keep_tail(&mut tail, &line);
                keep_tail(&mut tail, chunk);
                let room = HEAD_BYTES.saturating_sub(line.len());
                line.extend_from_slice(chunk.get(..room).unwrap_or(chunk));
                line.truncate(HEAD_BYTES);
                line.shrink_to_fit();
                self.read.consume(consumed);
                if newline.is_none() {
                    len = len.saturating_add(self.discard_rest(&mut tail).await?);
                }
                let id = id_scan::id_in_head(&line).or_else(|| id_scan::id_in_tail(&tail));
                return Ok(Some(Line::Oversized { len, id }));
            }
            grow_within(&mut line, chunk.len(), self.max);
            line.extend_from_slice(chunk);
            self.read.consume(consumed);
            if newline.is_some() {
                return Ok(Some(Line::Message(line)));
            }
        }
    }

    /// Consumes the rest of an oversized line, keeping only its last bytes; returns how many
    /// bytes it had.
    async fn discard_rest(&mut self, tail: &mut Vec<u8>) -> std::io::Result<usize> {
        let mut len = 0usize;
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(len);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let chunk = available.get(..newline.unwrap_or(available.len()));
            let chunk = chunk.unwrap_or_default();
            keep_tail(tail, chunk);
            len = len.saturating_add(chunk.len());
            let consumed = newline.map_or(available.len(), |at| at + 1);
            self.read.consume(consumed);
            if newline.is_some() {
                return Ok(len);
            }
        }
    }
}

/// Reserves room for `extra` more bytes, doubling as usual but never past `max`, so a line at
/// the limit does not cost twice the limit.
fn grow_within(line: &mut Vec<u8>, extra: usize, max: usize) {
    let needed = line.len().saturating_add(extra);
    if needed > line.capacity() {
        let target = line.capacity().saturating_mul(2).max(needed).min(max);
        line.reserve_exact(target.saturating_sub(line.len()));
    }
}

/// Appends `bytes`, keeping at least the last [`TAIL_BYTES`] and at most twice that.
fn keep_tail(tail: &mut Vec<u8>, bytes: &[u8]) {
    let bytes = bytes
        .get(bytes.len().saturating_sub(TAIL_BYTES)..)
        .unwrap_or(bytes);
    tail.extend_from_slice(bytes);
    if tail.len() > 2 * TAIL_BYTES {
        tail.drain(..tail.len() - TAIL_BYTES);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    async fn lines(input: &[u8], max: usize, buffer: usize) -> Vec<Line> {
        let read = tokio::io::BufReader::with_capacity(buffer, input);
        let mut reader = LineReader::new(read, max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    #[test]
    fn the_limit_fits_the_base64_of_the_largest_upload() {
        assert_eq!(max_message_bytes(52_428_800), 69_905_068 + 1_048_576);
        assert_eq!(max_message_bytes(0), 16 * 1024 * 1024);
        assert_eq!(max_message_bytes(1), 16 * 1024 * 1024);
        assert_eq!(max_message_bytes(15 * 1024 * 1024), 21 * 1024 * 1024);
        assert_eq!(max_message_bytes(u64::MAX), usize::MAX);
    }

    #[tokio::test]
    async fn a_line_at_the_limit_is_read_and_one_byte_more_is_not() {
        for buffer in [1, 3, 64] {
            let input = b"12345\n123456\n1234\n";
            let got = lines(input, 5, buffer).await;
            assert_eq!(
                got,
                vec![
                    Line::Message(b"12345".to_vec()),
                    Line::Oversized { len: 6, id: None },
                    Line::Message(b"1234".to_vec()),
                ],
                "buffer {buffer}"
            );
        }
    }

    #[tokio::test]
    async fn the_last_line_needs_no_newline_and_blank_lines_are_lines() {
        let got = lines(b"\n{}\n{\"a\":1}", 100, 4).await;
        assert_eq!(
            got,
            vec![
                Line::Message(vec![]),
                Line::Message(b"{}".to_vec()),
                Line::Message(b"{\"a\":1}".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn an_oversized_line_is_discarded_and_its_id_found_at_either_end() {
        let big = "x".repeat(100_000);
        let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"params\":\"{big}\"}}\n");
        let tail = format!("{{\"params\":\"{big}\",\"id\":\"t\"}}\n");
        let input = format!("{head}{tail}{{}}\n");
        for buffer in [7, 8192] {
            let got = lines(input.as_bytes(), 1000, buffer).await;
            assert_eq!(
                got,
                vec![
                    Line::Oversized {
                        len: head.len() - 1,
                        id: Some(json!(7))
                    },
                    Line::Oversized {
                        len: tail.len() - 1,
                        id: Some(json!("t"))
                    },
                    Line::Message(b"{}".to_vec()),
                ],
                "buffer {buffer}"
            );
        }
    }

    #[tokio::test]
    async fn an_id_split_between_what_was_kept_and_the_last_chunk_is_found() {
        // The line goes over the limit only with its last byte, read in a chunk of its own.
        let line = format!("{{\"params\":\"{}\",\"id\":42}}", "x".repeat(980));
        let max = line.len() - 1;
        let input = format!("{line}\n");
        let got = lines(input.as_bytes(), max, max).await;
        assert_eq!(
            got,
            vec![Line::Oversized {
                len: line.len(),
                id: Some(json!(42))
            }]
        );
    }

    #[test]
    fn the_tail_keeps_the_last_bytes_within_twice_its_size() {
        let mut tail = Vec::new();
        for i in 0..10_000u32 {
            keep_tail(&mut tail, &i.to_be_bytes());
            assert!(tail.len() <= 2 * TAIL_BYTES);
        }
        assert!(tail.ends_with(&9_999u32.to_be_bytes()));
        assert!(tail.len() >= TAIL_BYTES);
    }
}
