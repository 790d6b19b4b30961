//! Zobrist hashing of positions.
//!
//! Keys come from a fixed SplitMix64 stream, so hashes are the same in every build and on every
//! machine (they can be stored in files).

use crate::{Bitboard, Color, Move, Position};

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

/// Keys indexed by [white man, white king, black man, black king][bit 0..64].
const fn make_keys() -> [[u64; 64]; 4] {
    let mut keys = [[0u64; 64]; 4];
    let mut state = 0x5EED_D1A6_0000_0001u64;
    let mut k = 0;
    while k < 4 {
        let mut b = 0;
        while b < 64 {
            let (s, z) = splitmix(state);
            state = s;
            keys[k][b] = z;
            b += 1;
        }
        k += 1;
    }
    keys
}

static KEYS: [[u64; 64]; 4] = make_keys();

/// Xor-ed in when Black is to move.
pub const BLACK_TO_MOVE: u64 = splitmix(0xB1AC_0000_0000_0001).1;

#[inline]
fn kind(color: Color, king: bool) -> usize {
    (match color {
        Color::White => 0,
        Color::Black => 2,
    }) + king as usize
}

#[inline]
fn set_hash(set: Bitboard, keys: &[u64; 64]) -> u64 {
    set.squares().fold(0, |h, sq| h ^ keys[sq.bit() as usize])
}

impl Position {
    /// The Zobrist hash, computed from scratch.
    pub fn hash(&self) -> u64 {
        let mut h = 0;
        for color in [Color::White, Color::Black] {
            h ^= set_hash(self.men(color), &KEYS[kind(color, false)]);
            h ^= set_hash(self.kings(color), &KEYS[kind(color, true)]);
        }
        if self.side_to_move() == Color::Black {
            h ^= BLACK_TO_MOVE;
        }
        h
    }

    /// What `mv` changes in the hash: `self.play(&mv).hash() == self.hash() ^ self.hash_delta(&mv)`.
    #[inline]
    pub fn hash_delta(&self, mv: &Move) -> u64 {
        let us = self.side_to_move();
        let from_king = self.all_kings().contains(mv.from());
        let to_king = from_king || mv.promotes();
        let mut h = BLACK_TO_MOVE
            ^ KEYS[kind(us, from_king)][mv.from().bit() as usize]
            ^ KEYS[kind(us, to_king)][mv.to().bit() as usize];
        if mv.is_capture() {
            let them = !us;
            h ^= set_hash(mv.captured() & !self.all_kings(), &KEYS[kind(them, false)]);
            h ^= set_hash(mv.captured() & self.all_kings(), &KEYS[kind(them, true)]);
        }
        h
    }
}
