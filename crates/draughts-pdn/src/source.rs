//! A byte source with a small look-ahead window and line counting.

use std::io::{self, BufRead};

/// How much is copied from the inner reader at a time.
const CHUNK: usize = 64 * 1024;

/// Bytes from a [`BufRead`], read a chunk at a time into a window that never holds more than a
/// couple of chunks, so input of any size streams through in bounded memory. UTF-16 input, once
/// recognised ([`Source::decode_utf16`]), is turned into UTF-8 as it is read.
#[derive(Debug)]
pub(crate) struct Source<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    /// Bytes dropped from the front of `buf` so far: `base + pos` is the offset of the next byte.
    base: u64,
    eof: bool,
    /// Set for UTF-16 input.
    utf16: Option<Utf16>,
    /// 1-based line of the next byte.
    line: usize,
    /// Only blanks (space, tab, carriage return) since the last newline.
    line_start: bool,
}

/// Space, tab, carriage return, vertical tab or form feed (not newline).
#[inline]
pub(crate) const fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

impl<R: BufRead> Source<R> {
    pub(crate) fn new(inner: R) -> Source<R> {
        Source {
            inner,
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            base: 0,
            eof: false,
            utf16: None,
            line: 1,
            line_start: true,
        }
    }

    /// From here on, reads the input as UTF-16 (little-endian if `little`), handing out its
    /// UTF-8 encoding. The bytes already in the window are decoded again.
    pub(crate) fn decode_utf16(&mut self, little: bool) {
        let mut dec = Utf16 { little, odd: None, high: None };
        let raw = self.buf.split_off(self.pos);
        self.buf.clear();
        self.base = 0;
        self.pos = 0;
        dec.decode(&raw, &mut self.buf);
        if self.eof {
            dec.finish(&mut self.buf);
        }
        self.utf16 = Some(dec);
    }

    /// Makes at least `want` bytes available after `pos`, unless the input ends first.
    #[cold]
    fn fill(&mut self, want: usize) -> io::Result<()> {
        while self.buf.len() - self.pos < want && !self.eof {
            if self.pos > 0 && self.pos >= self.buf.len() / 2 {
                self.buf.drain(..self.pos);
                self.base += self.pos as u64;
                self.pos = 0;
            }
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                self.eof = true;
                if let Some(dec) = &mut self.utf16 {
                    dec.finish(&mut self.buf);
                }
                break;
            }
            let n = chunk.len().min(CHUNK);
            match &mut self.utf16 {
                None => self.buf.extend_from_slice(&chunk[..n]),
                Some(dec) => dec.decode(&chunk[..n], &mut self.buf),
            }
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

    /// Consumes `n` bytes that the caller has peeked, as if they were not there (a byte-order
    /// mark): the line and whether it is at its start do not change.
    pub(crate) fn skip(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.buf.len());
    }

    /// 1-based line of the next byte.
    #[inline]
    pub(crate) fn line(&self) -> usize {
        self.line
    }

    /// 0-based offset of the next byte in the input (in the decoded text for UTF-16 input).
    pub(crate) fn offset(&self) -> u64 {
        self.base + self.pos as u64
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

/// A UTF-16 decoder that takes its input in pieces of any length.
#[derive(Debug)]
struct Utf16 {
    little: bool,
    /// The first byte of a code unit whose second byte has not come yet.
    odd: Option<u8>,
    /// A high surrogate waiting for its low half.
    high: Option<u16>,
}

impl Utf16 {
    fn decode(&mut self, mut bytes: &[u8], out: &mut Vec<u8>) {
        if let (Some(a), Some(&b)) = (self.odd, bytes.first()) {
            self.odd = None;
            bytes = &bytes[1..];
            self.unit(a, b, out);
        }
        let mut pairs = bytes.chunks_exact(2);
        for pair in &mut pairs {
            self.unit(pair[0], pair[1], out);
        }
        if let [last] = pairs.remainder() {
            self.odd = Some(*last);
        }
    }

    fn unit(&mut self, a: u8, b: u8, out: &mut Vec<u8>) {
        let unit = if self.little { u16::from_le_bytes([a, b]) } else { u16::from_be_bytes([a, b]) };
        let c = match (self.high.take(), unit) {
            (None, 0xd800..=0xdbff) => {
                self.high = Some(unit);
                return;
            }
            (Some(high), 0xdc00..=0xdfff) => {
                char::from_u32(0x10000 + ((u32::from(high) - 0xd800) << 10) + (u32::from(unit) - 0xdc00))
                    .unwrap_or(char::REPLACEMENT_CHARACTER)
            }
            (Some(_), _) => {
                // A high surrogate without its low half, then this unit on its own.
                push_char(char::REPLACEMENT_CHARACTER, out);
                return self.unit(a, b, out);
            }
            (None, _) => char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER),
        };
        push_char(c, out);
    }

    /// The input is over: a half-finished character becomes U+FFFD.
    fn finish(&mut self, out: &mut Vec<u8>) {
        if self.odd.take().is_some() || self.high.take().is_some() {
            push_char(char::REPLACEMENT_CHARACTER, out);
        }
    }
}

fn push_char(c: char, out: &mut Vec<u8>) {
    let mut tmp = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
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
    fn utf16_both_orders_any_split() {
        let text = "[White \"Émile 𝄞\"]\n1. 32-28 *\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        for (bytes, little) in [(le, true), (be, false)] {
            let mut s = Source::new(Trickle(&bytes));
            // Start decoding after a look at the first bytes, as the reader does.
            assert!(s.peek_at(3).unwrap().is_some());
            s.decode_utf16(little);
            let mut out = Vec::new();
            while let Some(b) = s.peek().unwrap() {
                out.push(b);
                s.bump();
            }
            assert_eq!(String::from_utf8(out).unwrap(), text);
            assert_eq!(s.line(), 3);
        }
        // A lone surrogate and a trailing odd byte become U+FFFD.
        let mut s = Source::new(&[0x00, 0xd8, 0x41, 0x00, 0x42][..]);
        s.decode_utf16(true);
        let mut out = Vec::new();
        while let Some(b) = s.peek().unwrap() {
            out.push(b);
            s.bump();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "\u{fffd}A\u{fffd}");
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
