//! 64-bit board sets with one "ghost" bit after every ten squares.
//!
//! # Layout
//!
//! Square `n` (1..=50, numbered as in every draughts book: square 1 is on Black's side, White's men
//! start on 31..=50 and move toward lower numbers) has index `i = n - 1` and bit `i + i / 10`.
//! Every pair of rows therefore takes 11 bits, and bits 10, 21, 32 and 43 are ghosts that never hold
//! a piece:
//!
//! ```text
//!   row 0:    .  0  .  1  .  2  .  3  .  4        squares  1..5
//!   row 1:    5  .  6  .  7  .  8  .  9  .        squares  6..10     ghost bit 10
//!   row 2:    . 11  . 12  . 13  . 14  . 15        squares 11..15
//!   row 3:   16  . 17  . 18  . 19  . 20  .        squares 16..20     ghost bit 21
//!   ...
//!   row 9:   49  . 50  . 51  . 52  . 53  .        squares 46..50     (bits 55..63 unused)
//! ```
//!
//! With this layout the four diagonal steps are the same constant shifts from every square:
//! -6 (up-left, toward square 1's side), -5 (up-right), +5 (down-left), +6 (down-right). A step off
//! the left or right edge lands on a ghost bit and a step off the top or bottom leaves the 50 real
//! bits, so masking with [`Bitboard::ALL`] after a shift removes every step that leaves the board.

use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

use crate::Square;

/// A set of squares, one bit per square in the ghost-bit layout described in the module docs.
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct Bitboard(pub u64);

/// The four diagonal directions as bit shifts (see the module docs).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Toward square 1's side and the lower-numbered files: -6.
    UpLeft,
    /// Toward square 1's side and the higher-numbered files: -5.
    UpRight,
    /// Toward square 50's side and the lower-numbered files: +5.
    DownLeft,
    /// Toward square 50's side and the higher-numbered files: +6.
    DownRight,
}

impl Direction {
    /// All four directions.
    pub const ALL: [Direction; 4] = [
        Direction::UpLeft,
        Direction::UpRight,
        Direction::DownLeft,
        Direction::DownRight,
    ];

    /// The signed bit offset of one step in this direction.
    #[inline]
    pub const fn offset(self) -> i32 {
        match self {
            Direction::UpLeft => -6,
            Direction::UpRight => -5,
            Direction::DownLeft => 5,
            Direction::DownRight => 6,
        }
    }

    /// The opposite direction.
    #[inline]
    pub const fn reverse(self) -> Direction {
        match self {
            Direction::UpLeft => Direction::DownRight,
            Direction::UpRight => Direction::DownLeft,
            Direction::DownLeft => Direction::UpRight,
            Direction::DownRight => Direction::UpLeft,
        }
    }
}

impl Bitboard {
    /// The empty set.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// All 50 playable squares (no ghost bits, nothing above bit 54).
    pub const ALL: Bitboard = Bitboard(0x003F_F7FE_FFDF_FBFF);
    /// The ghost bits 10, 21, 32 and 43.
    pub const GHOSTS: Bitboard = Bitboard((1 << 10) | (1 << 21) | (1 << 32) | (1 << 43));
    /// Squares 1..=5: where White's men are crowned.
    pub const WHITE_PROMOTION: Bitboard = Bitboard(0x1F);
    /// Squares 46..=50: where Black's men are crowned.
    pub const BLACK_PROMOTION: Bitboard = Bitboard(0x1F << 49);

    /// The set holding just `sq`.
    #[inline]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(1 << sq.bit())
    }

    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set is not empty.
    #[inline]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// Number of squares in the set.
    #[inline]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether `sq` is in the set.
    #[inline]
    pub const fn contains(self, sq: Square) -> bool {
        self.0 & (1 << sq.bit()) != 0
    }

    /// Whether the two sets share a square.
    #[inline]
    pub const fn intersects(self, other: Bitboard) -> bool {
        self.0 & other.0 != 0
    }

    /// The set with `sq` added.
    #[inline]
    pub const fn with(self, sq: Square) -> Bitboard {
        Bitboard(self.0 | (1 << sq.bit()))
    }

    /// The set with `sq` removed.
    #[inline]
    pub const fn without(self, sq: Square) -> Bitboard {
        Bitboard(self.0 & !(1 << sq.bit()))
    }

    /// Every square one step away in direction `dir`, dropping steps that leave the board.
    #[inline]
    pub const fn shift(self, dir: Direction) -> Bitboard {
        let off = dir.offset();
        let moved = if off > 0 { self.0 << off } else { self.0 >> -off };
        Bitboard(moved & Bitboard::ALL.0)
    }

    /// The lowest square in the set, if any.
    #[inline]
    pub fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(Square::from_bit_unchecked(self.0.trailing_zeros() as u8))
        }
    }

    /// Removes and returns the lowest square.
    #[inline]
    pub fn pop(&mut self) -> Option<Square> {
        let sq = self.first()?;
        self.0 &= self.0 - 1;
        Some(sq)
    }

    /// Iterates over the squares in ascending order.
    #[inline]
    pub fn squares(self) -> Squares {
        Squares(self)
    }
}

/// Iterator over the squares of a [`Bitboard`], ascending.
#[derive(Clone, Debug)]
pub struct Squares(Bitboard);

impl Iterator for Squares {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        self.0.pop()
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Squares {}

impl IntoIterator for Bitboard {
    type Item = Square;
    type IntoIter = Squares;
    fn into_iter(self) -> Squares {
        Squares(self)
    }
}

impl FromIterator<Square> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Square>>(iter: I) -> Self {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}

macro_rules! bitop {
    ($tr:ident, $f:ident, $atr:ident, $af:ident, $op:tt) => {
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $f(self, rhs: Bitboard) -> Bitboard {
                Bitboard(self.0 $op rhs.0)
            }
        }
        impl $atr for Bitboard {
            #[inline]
            fn $af(&mut self, rhs: Bitboard) {
                self.0 = self.0 $op rhs.0;
            }
        }
    };
}
bitop!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bitop!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bitop!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    /// The complement within the 50 playable squares.
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0 & Bitboard::ALL.0)
    }
}

impl fmt::Debug for Bitboard {
    /// Draws the board, square 1 at the top, `x` for members and `.` for other dark squares.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Bitboard({:#x})", self.0)?;
        for row in 0..10u8 {
            for col in 0..10u8 {
                let c = match Square::from_row_col(row, col) {
                    Some(sq) if self.contains(sq) => 'x',
                    Some(_) => '.',
                    None => ' ',
                };
                write!(f, "{c}")?;
                if col < 9 {
                    write!(f, " ")?;
                }
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_mask_matches_squares() {
        let all: Bitboard = Square::all().collect();
        assert_eq!(all, Bitboard::ALL);
        assert_eq!(Bitboard::ALL.count(), 50);
        assert!(!Bitboard::ALL.intersects(Bitboard::GHOSTS));
        assert_eq!(Bitboard::ALL.0 >> 55, 0);
    }

    #[test]
    fn promotion_rows() {
        let white: Bitboard = (1..=5).map(|n| Square::new(n).unwrap()).collect();
        let black: Bitboard = (46..=50).map(|n| Square::new(n).unwrap()).collect();
        assert_eq!(white, Bitboard::WHITE_PROMOTION);
        assert_eq!(black, Bitboard::BLACK_PROMOTION);
    }

    #[test]
    fn shifts_follow_the_diagonals() {
        // Every shift result must be a real diagonal neighbour computed from rows and columns.
        for sq in Square::all() {
            for dir in Direction::ALL {
                let (dr, dc) = match dir {
                    Direction::UpLeft => (-1, -1),
                    Direction::UpRight => (-1, 1),
                    Direction::DownLeft => (1, -1),
                    Direction::DownRight => (1, 1),
                };
                let (r, c) = (sq.row() as i32 + dr, sq.col() as i32 + dc);
                let expected = if (0..10).contains(&r) && (0..10).contains(&c) {
                    Square::from_row_col(r as u8, c as u8).map(Bitboard::from_square)
                } else {
                    None
                }
                .unwrap_or(Bitboard::EMPTY);
                assert_eq!(Bitboard::from_square(sq).shift(dir), expected, "{sq} {dir:?}");
            }
        }
    }

    #[test]
    fn ghost_and_outside_bits_never_survive_a_shift() {
        for dir in Direction::ALL {
            assert_eq!(Bitboard(u64::MAX).shift(dir).0 & !Bitboard::ALL.0, 0);
        }
    }

    #[test]
    fn debug_draws_the_board() {
        let s = format!("{:?}", Bitboard::from_square(Square::new(1).unwrap()));
        let second_line = s.lines().nth(1).unwrap();
        assert_eq!(second_line, "  x   .   .   .   .");
    }
}
