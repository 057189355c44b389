//! Reading the program's stdout one bounded line at a time.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// The longest line the bridge reads from a program, in bytes, without its newline: 64 KiB,
/// the arena's own limit on a bot's message (`Limits.max_message_bytes`). A decision is
/// well under 200 bytes.
pub const MAX_LINE_BYTES: usize = 65536;

/// One line from the program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line of text, without its line ending (`\n` or `\r\n`).
    Text(String),
    /// A line over [`MAX_LINE_BYTES`]: its length in bytes (it was read to its end and
    /// dropped).
    TooLong(usize),
    /// A line that is not UTF-8: its length in bytes.
    NotUtf8(usize),
}

/// Reads lines of at most `max` bytes, never holding more than `max` bytes of one line.
pub(crate) struct LineReader<R> {
    reader: R,
    max: usize,
    /// The line read so far (its first `max + 1` bytes).
    buffer: Vec<u8>,
    /// The length of the line read so far, in bytes.
    length: usize,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// Reads `reader` in lines of at most `max` bytes.
    pub(crate) fn new(reader: R, max: usize) -> LineReader<R> {
        LineReader {
            reader,
            max,
            buffer: Vec::new(),
            length: 0,
        }
    }

    /// The next line; `None` at the end of the stream (a last line without a newline
    /// counts as a line). Cancel safe: a line read in part is kept for the next call.
    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                if self.length == 0 {
                    return Ok(None);
                }
                return Ok(Some(self.finish()));
            }
            let (chunk, ended) = match available.iter().position(|&b| b == b'\n') {
                Some(end) => (&available[..end], Some(end + 1)),
                None => (available, None),
            };
            self.length += chunk.len();
            if self.length <= self.max + 1 {
                // One byte over the limit may be the `\r` of a `\r\n`.
                self.buffer.extend_from_slice(chunk);
            }
            let consumed = ended.unwrap_or(available.len());
            self.reader.consume(consumed);
            if ended.is_some() {
                return Ok(Some(self.finish()));
            }
        }
    }

    /// The line read so far; the next one starts empty.
    fn finish(&mut self) -> Line {
        let mut length = std::mem::take(&mut self.length);
        if self.buffer.last() == Some(&b'\r') && length <= self.max + 1 {
            self.buffer.pop();
            length -= 1;
        }
        if length > self.max {
            self.buffer.clear();
            return Line::TooLong(length);
        }
        match String::from_utf8(std::mem::take(&mut self.buffer)) {
            Ok(text) => Line::Text(text),
            Err(_) => Line::NotUtf8(length),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        // A small buffer, so that lines span several reads.
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(3, input), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn lines_end_at_newlines_and_long_ones_are_measured_not_kept() {
        let text = |s: &str| Line::Text(s.to_owned());
        assert_eq!(
            lines(b"ab\r\ncdef\n\nlast", 4).await,
            vec![text("ab"), text("cdef"), text(""), text("last")]
        );
        assert_eq!(
            lines(b"abcde\nabcd\r\nabcde\r\n", 4).await,
            vec![Line::TooLong(5), text("abcd"), Line::TooLong(6)]
        );
        assert_eq!(
            lines(b"\xff\xfe\nok\n", 4).await,
            vec![Line::NotUtf8(2), text("ok")]
        );
        assert_eq!(
            lines(&vec![b'x'; 100_000], MAX_LINE_BYTES).await,
            vec![Line::TooLong(100_000)]
        );
    }

    #[tokio::test]
    async fn a_read_cancelled_mid_line_loses_nothing() {
        let (mut program, stdout) = tokio::io::duplex(64);
        let mut reader = LineReader::new(tokio::io::BufReader::new(stdout), 8);
        use tokio::io::AsyncWriteExt;
        program.write_all(b"ab").await.unwrap();
        // The read is cancelled while the line is half there, as when an arena message
        // wins the bridge's select.
        let cancelled =
            tokio::time::timeout(std::time::Duration::from_millis(20), reader.next_line());
        assert!(cancelled.await.is_err());
        program.write_all(b"c\nd\n").await.unwrap();
        let text = |s: &str| Some(Line::Text(s.to_owned()));
        assert_eq!(reader.next_line().await.unwrap(), text("abc"));
        assert_eq!(reader.next_line().await.unwrap(), text("d"));
    }
}
