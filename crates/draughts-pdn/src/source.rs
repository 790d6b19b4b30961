//! A byte source with a small look-ahead window and line counting.

use std::io::{self, BufRead};

/// How much is copied from the inner reader at a time.
const CHUNK: usize = 64 * 1024;

/// Bytes from a [`BufRead`], read a chunk at a time into a window that never holds more than a
/// couple of chunks, so input of any size streams through in bounded memory.
#[derive(Debug)]
pub(crate) struct Source<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// 1-based line of the next byte.
    line: usize,
    /// Only blanks (space, tab, carriage return) since the last newline.
    line_start: bool,
}

/// Space, tab, carriage return, vertical tab or form feed (not newline).
#[inline]
pub(crate) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

impl<R: BufRead> Source<R> {
    pub(crate) fn new(inner: R) -> Source<R> {
        Source { inner, buf: Vec::with_capacity(CHUNK), pos: 0, eof: false, line: 1, line_start: true }
    }

    /// Makes at least `want` bytes available after `pos`, unless the input ends first.
    #[cold]
    fn fill(&mut self, want: usize) -> io::Result<()> {
        while self.buf.len() - self.pos < want && !self.eof {
            if self.pos > 0 && self.pos >= self.buf.len() / 2 {
                self.buf.drain(..self.pos);
                self.pos = 0;
            }
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                self.eof = true;
                break;
            }
            let n = chunk.len().min(CHUNK);
            self.buf.extend_from_slice(&chunk[..n]);
            self.inner.consume(n);
        }
        Ok(())
    }

    /// The byte `k` places ahead (0 = the next one), `None` at the end of the input. `k` stays
    /// small (a few hundred at most), which keeps the window bounded.
    #[inline]
    pub(crate) fn peek_at(&mut self, k: usize) -> io::Result<Option<u8>> {
        if self.pos + k >= self.buf.len() {
            self.fill(k + 1)?;
        }
        Ok(self.buf.get(self.pos + k).copied())
    }

    /// The next byte, `None` at the end of the input.
    #[inline]
    pub(crate) fn peek(&mut self) -> io::Result<Option<u8>> {
        self.peek_at(0)
    }

    /// Consumes the next byte, which the caller has peeked.
    #[inline]
    pub(crate) fn bump(&mut self) {
        if let Some(&b) = self.buf.get(self.pos) {
            self.pos += 1;
            if b == b'\n' {
                self.line += 1;
                self.line_start = true;
            } else if !is_blank(b) {
                self.line_start = false;
            }
        }
    }

    /// 1-based line of the next byte.
    #[inline]
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// Whether only blanks stand between the last newline (or the start) and the next byte.
    #[inline]
    pub(crate) fn at_line_start(&self) -> bool {
        self.line_start
    }

    /// Consumes bytes up to and including the next newline (or to the end of the input), keeping
    /// at most `keep` of them (without the newline) in `out`.
    pub(crate) fn take_line(&mut self, out: &mut Vec<u8>, keep: usize) -> io::Result<()> {
        while let Some(b) = self.peek()? {
            self.bump();
            if b == b'\n' {
                break;
            }
            if out.len() < keep {
                out.push(b);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out one byte per `fill_buf`, the worst case for the window logic.
    struct Trickle<'a>(&'a [u8]);

    impl io::Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(out.len()).min(1);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    impl BufRead for Trickle<'_> {
        fn fill_buf(&mut self) -> io::Result<&[u8]> {
            Ok(&self.0[..self.0.len().min(1)])
        }
        fn consume(&mut self, n: usize) {
            self.0 = &self.0[n..];
        }
    }

    #[test]
    fn peeks_ahead_and_counts_lines() {
        let text = b"ab\n  c\nd";
        let mut s = Source::new(Trickle(text));
        assert_eq!(s.peek_at(4).unwrap(), Some(b' '));
        assert_eq!(s.peek_at(8).unwrap(), None);
        let mut seen = Vec::new();
        while let Some(b) = s.peek().unwrap() {
            seen.push((b, s.line(), s.at_line_start()));
            s.bump();
        }
        assert_eq!(seen.iter().map(|t| t.0).collect::<Vec<u8>>(), text.to_vec());
        assert_eq!(seen[0], (b'a', 1, true));
        assert_eq!(seen[1], (b'b', 1, false));
        assert_eq!(seen[5], (b'c', 2, true));
        assert_eq!(seen[7], (b'd', 3, true));
    }

    #[test]
    fn window_stays_bounded() {
        let big = vec![b'x'; 10 * CHUNK];
        let mut s = Source::new(&big[..]);
        let mut n = 0;
        while s.peek_at(300).unwrap().is_some() || s.peek().unwrap().is_some() {
            s.bump();
            n += 1;
            assert!(s.buf.len() <= 3 * CHUNK);
        }
        assert_eq!(n, big.len());
    }
}
