//! Numbering the positions of one material (White to move) from 0 to `size - 1`.
//!
//! The index is a mixed-radix number of four combination ranks:
//!
//! ```text
//! index = ((white_men * C(45, bm) + black_men) * C(E, wk) + white_kings) * C(E - wk, bk) + black_kings
//! ```
//!
//! - White men stand on squares 6..=50 (a man is never on its own crowning row) and Black men on
//!   1..=45: each side's men are ranked among their own 45 squares. The two sets may overlap: those
//!   indices are not positions ([`Indexer::position`] says `None`) and are stored as draws. Of the
//!   5-piece indices fewer than 3% are such holes; in exchange the men need no shared placement.
//! - Kings are ranked among the `E = 50 - men` squares left by the men (White's first, then Black's
//!   among the rest), so kings never collide with anything.
//!
//! Each rank is the colex rank of the set: `sum C(c_i, i + 1)` over its sorted elements `c_i`.

#[cfg(test)]
use draughts_core::Square;
use draughts_core::{Bitboard, Color, Position};

use crate::Material;

/// Binomial coefficients `C(n, k)` for `n <= 50`, `k <= 50`.
struct Binomials([[u64; 51]; 51]);

const fn binomials() -> Binomials {
    let mut t = [[0u64; 51]; 51];
    let mut n = 0;
    while n <= 50 {
        t[n][0] = 1;
        let mut k = 1;
        while k <= n {
            t[n][k] = t[n - 1][k - 1] + if k < n { t[n - 1][k] } else { 0 };
            k += 1;
        }
        n += 1;
    }
    Binomials(t)
}

static C: Binomials = binomials();

#[inline]
fn choose(n: u32, k: u32) -> u64 {
    if k > n {
        0
    } else {
        C.0[n as usize][k as usize]
    }
}

/// The bit of square number `n` (1..=50) in the ghost-bit layout.
#[inline]
const fn bit_of(n: u32) -> u64 {
    let i = n - 1;
    1u64 << (i + i / 10)
}

/// The square number (1..=50) of a single-bit mask.
#[inline]
fn number_of(bit: u64) -> u32 {
    let b = bit.trailing_zeros();
    b - b / 11 + 1
}

/// The colex rank of a set given as ascending domain positions.
#[inline]
fn rank(elements: impl Iterator<Item = u32>) -> u64 {
    elements.enumerate().map(|(i, c)| choose(c, i as u32 + 1)).sum()
}

/// The `k` domain positions (ascending) of colex rank `r`, written to `out[..k]`.
#[inline]
fn unrank(mut r: u64, k: u32, n: u32, out: &mut [u32]) {
    let mut hi = n;
    for i in (1..=k).rev() {
        // The largest c < hi with C(c, i) <= r.
        let mut c = hi - 1;
        while choose(c, i) > r {
            c -= 1;
        }
        r -= choose(c, i);
        out[i as usize - 1] = c;
        hi = c;
    }
}

/// Numbers the positions of one material with White to move.
#[derive(Clone, Debug)]
pub struct Indexer {
    material: Material,
    /// `C(45, wm)`, `C(45, bm)`, `C(E, wk)`, `C(E - wk, bk)`.
    radix: [u64; 4],
    size: u64,
}

impl Indexer {
    /// The indexer of `material` (at most 20 men a side; in practice a handful of pieces).
    pub fn new(material: Material) -> Indexer {
        let (wm, wk, bm, bk) = (material.white_men as u32, material.white_kings as u32, material.black_men as u32, material.black_kings as u32);
        let e = 50 - wm - bm;
        let radix = [choose(45, wm), choose(45, bm), choose(e, wk), choose(e.saturating_sub(wk), bk)];
        let size = radix.iter().product();
        Indexer { material, radix, size }
    }

    /// The material.
    pub fn material(&self) -> Material {
        self.material
    }

    /// How many indices (positions and holes).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The index of `pos`, which must have White to move and this material (debug builds check).
    pub fn index(&self, pos: &Position) -> u64 {
        debug_assert_eq!(pos.side_to_move(), Color::White);
        debug_assert_eq!(Material::of(pos), self.material);
        let bits = |b: Bitboard| b.0;
        let wm = bits(pos.men(Color::White));
        let bm = bits(pos.men(Color::Black));
        let wk = bits(pos.kings(Color::White));
        let bk = bits(pos.kings(Color::Black));
        let r_wm = rank(Ones(wm).map(|b| number_of(b) - 6));
        let r_bm = rank(Ones(bm).map(|b| number_of(b) - 1));
        // A king's place among the squares the men leave: its number less the men before it.
        let men = wm | bm;
        let r_wk = rank(Ones(wk).map(|b| number_of(b) - 1 - (men & (b - 1)).count_ones()));
        let taken = men | wk;
        let r_bk = rank(Ones(bk).map(|b| number_of(b) - 1 - (taken & (b - 1)).count_ones()));
        ((r_wm * self.radix[1] + r_bm) * self.radix[2] + r_wk) * self.radix[3] + r_bk
    }

    /// The position of `index` with White to move, or `None` for a hole (men of both sides on one
    /// square). Panics if `index >= size`.
    pub fn position(&self, index: u64) -> Option<Position> {
        assert!(index < self.size, "index {index} outside {} ({} positions)", self.material, self.size);
        let m = self.material;
        let r_bk = index % self.radix[3];
        let rest = index / self.radix[3];
        let r_wk = rest % self.radix[2];
        let rest = rest / self.radix[2];
        let r_bm = rest % self.radix[1];
        let r_wm = rest / self.radix[1];
        let mut buf = [0u32; 50];
        let mut wm = 0u64;
        unrank(r_wm, m.white_men as u32, 45, &mut buf);
        for &c in &buf[..m.white_men as usize] {
            wm |= bit_of(c + 6);
        }
        let mut bm = 0u64;
        unrank(r_bm, m.black_men as u32, 45, &mut buf);
        for &c in &buf[..m.black_men as usize] {
            bm |= bit_of(c + 1);
        }
        if wm & bm != 0 {
            return None;
        }
        let free = |taken: u64, out: &mut [u32; 50]| {
            let mut n = 0;
            for sq in 1..=50 {
                if taken & bit_of(sq) == 0 {
                    out[n] = sq;
                    n += 1;
                }
            }
            n as u32
        };
        let mut squares = [0u32; 50];
        let e = free(wm | bm, &mut squares);
        let mut wk = 0u64;
        unrank(r_wk, m.white_kings as u32, e, &mut buf);
        for &c in &buf[..m.white_kings as usize] {
            wk |= bit_of(squares[c as usize]);
        }
        let e = free(wm | bm | wk, &mut squares);
        let mut bk = 0u64;
        unrank(r_bk, m.black_kings as u32, e, &mut buf);
        for &c in &buf[..m.black_kings as usize] {
            bk |= bit_of(squares[c as usize]);
        }
        Some(
            Position::from_pieces(Bitboard(wm), Bitboard(wk), Bitboard(bm), Bitboard(bk), Color::White)
                .expect("the index places every piece on its own legal square"),
        )
    }
}

/// The single-bit masks of a word, lowest first.
struct Ones(u64);

impl Iterator for Ones {
    type Item = u64;
    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0 & self.0.wrapping_neg();
        self.0 ^= b;
        Some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square(n: u32) -> Square {
        Square::new(n as u8).expect("a square number 1..=50")
    }

    #[test]
    fn bits_and_numbers_agree_with_the_core() {
        for n in 1..=50 {
            assert_eq!(bit_of(n), Bitboard::from_square(square(n)).0);
            assert_eq!(number_of(bit_of(n)), n);
        }
    }

    #[test]
    fn every_index_round_trips_and_holes_are_only_overlaps() {
        for m in Material::all_up_to(3) {
            let ix = Indexer::new(m);
            let mut positions = 0u64;
            for i in 0..ix.size() {
                if let Some(p) = ix.position(i) {
                    assert_eq!(Material::of(&p), m);
                    assert_eq!(ix.index(&p), i, "{m} {p}");
                    positions += 1;
                }
            }
            assert_eq!(positions, count_positions(m), "{m}");
        }
    }

    /// The number of positions of a material, counted without the indexer: men of each side on
    /// their 45 squares, overlapping in `j` squares (inclusion-exclusion), kings on what is left.
    pub(crate) fn count_positions(m: Material) -> u64 {
        let (wm, wk, bm, bk) = (m.white_men as u32, m.white_kings as u32, m.black_men as u32, m.black_kings as u32);
        // Men: white on 6..=50, black on 1..=45, no square shared. The 40 middle squares are open to
        // both, 1..=5 only to black, 46..=50 only to white.
        let mut men = 0u64;
        for wb in 0..=wm.min(5) {
            for bt in 0..=bm.min(5) {
                let (w_mid, b_mid) = (wm - wb, bm - bt);
                if w_mid + b_mid > 40 {
                    continue;
                }
                men += choose(5, wb) * choose(5, bt) * choose(40, w_mid) * choose(40 - w_mid, b_mid);
            }
        }
        let e = 50 - wm - bm;
        men * choose(e, wk) * choose(e - wk, bk)
    }
}
