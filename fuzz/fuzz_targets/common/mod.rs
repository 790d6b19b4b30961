//! Helpers shared by the fuzz targets: positions decoded from bytes, an in-memory stream, and a
//! scratch directory. Included by each target with `#[path = "common/mod.rs"] mod common;`.
#![allow(dead_code)]

use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::OnceLock;

use draughts_core::{Bitboard, Color, Position, Rules, Square};

/// Most pieces a decoded position takes from the input (later bytes are ignored).
pub const MAX_PIECE_BYTES: usize = 40;

/// A position from any bytes, always valid: byte 0 is the side to move (bit 0), each later byte
/// puts one piece, `square = (b & 63) % 50 + 1`, kind `b >> 6` (0 white man, 1 white king,
/// 2 black man, 3 black king); a later byte on the same square replaces the piece; a man on
/// its own promotion row becomes a king.
pub fn position_from_bytes(bytes: &[u8]) -> Position {
    let side = match bytes.first() {
        Some(b) if b & 1 == 1 => Color::Black,
        _ => Color::White,
    };
    let mut kind: [Option<u8>; 50] = [None; 50];
    for &b in bytes.iter().skip(1).take(MAX_PIECE_BYTES) {
        kind[((b & 63) % 50) as usize] = Some(b >> 6);
    }
    let mut sets = [Bitboard::EMPTY; 4];
    for (i, k) in kind.iter().enumerate() {
        let Some(k) = *k else { continue };
        let sq = Square::new(i as u8 + 1).expect("1..=50");
        let bb = Bitboard::from_square(sq);
        let k = match k {
            0 if (bb & Color::White.promotion_row()).any() => 1,
            2 if (bb & Color::Black.promotion_row()).any() => 3,
            k => k,
        };
        sets[k as usize] |= bb;
    }
    Position::from_pieces(sets[0], sets[1], sets[2], sets[3], side).expect("built to be valid")
}

/// The position named by `spec`: a FEN if it is one, otherwise [`position_from_bytes`]. A
/// leading `!` selects the promote-in-capture rules (the only rule knob that changes which
/// moves are legal); otherwise FMJD.
pub fn position_and_rules(spec: &[u8]) -> (Position, Rules) {
    let (rules, spec) = match spec.strip_prefix(b"!") {
        Some(rest) => (Rules::PROMOTE_IN_CAPTURE, rest),
        None => (Rules::FMJD, spec),
    };
    let pos = std::str::from_utf8(spec)
        .ok()
        .and_then(|t| Position::from_fen(t).ok())
        .unwrap_or_else(|| position_from_bytes(spec));
    (pos, rules)
}

/// Splits at the first `\n`: (before, after). No newline: (everything, empty).
pub fn split_line(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == b'\n') {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

/// A stream that reads from a fixed buffer `chunk` bytes at a time (to exercise reassembly) and
/// throws away what is written.
#[derive(Debug)]
pub struct Script<'a> {
    pub input: &'a [u8],
    pub chunk: usize,
    pub written: usize,
}

impl<'a> Script<'a> {
    pub fn new(input: &'a [u8], chunk: usize) -> Script<'a> {
        Script { input, chunk: chunk.max(1), written: 0 }
    }
}

impl Read for Script<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(self.chunk).min(self.input.len());
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Ok(n)
    }
}

impl Write for Script<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.written += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl draughts_protocol::dxp::Transport for Script<'_> {}

/// A directory of this process for scratch files (removed by nobody: it is small and under the
/// system's temporary directory).
pub fn scratch_dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("draughts-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch directory");
        dir
    })
}
