//! Squares 1..=50.

use std::fmt;
use std::str::FromStr;

/// One of the 50 playable squares, numbered 1..=50 as in every draughts book and file format.
///
/// Stored as its bit index in the ghost-bit layout (see [`crate::bitboard`]), so turning a square
/// into a bitboard is a single shift.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl Square {
    /// Square `n` (1..=50), or `None` outside that range.
    #[inline]
    pub const fn new(n: u8) -> Option<Square> {
        if n >= 1 && n <= 50 {
            let i = n - 1;
            Some(Square(i + i / 10))
        } else {
            None
        }
    }

    /// The square at bit `bit`; the caller guarantees it is a playable bit.
    #[inline]
    pub(crate) const fn from_bit_unchecked(bit: u8) -> Square {
        debug_assert!(bit < 55 && bit % 11 != 10);
        Square(bit)
    }

    /// The square at bit `bit`, or `None` for a ghost or out-of-range bit.
    #[inline]
    pub const fn from_bit(bit: u8) -> Option<Square> {
        if bit < 55 && bit % 11 != 10 {
            Some(Square(bit))
        } else {
            None
        }
    }

    /// The square's number, 1..=50.
    #[inline]
    pub const fn number(self) -> u8 {
        self.0 - self.0 / 11 + 1
    }

    /// Zero-based index 0..=49 (number - 1), handy for arrays.
    #[inline]
    pub const fn index(self) -> usize {
        (self.number() - 1) as usize
    }

    /// The bit index in the ghost-bit layout.
    #[inline]
    pub const fn bit(self) -> u8 {
        self.0
    }

    /// Row 0..=9, row 0 holding squares 1..=5 (Black's back rank).
    #[inline]
    pub const fn row(self) -> u8 {
        (self.number() - 1) / 5
    }

    /// Column 0..=9 from White's left; dark squares have `row + col` odd.
    #[inline]
    pub const fn col(self) -> u8 {
        let i = self.number() - 1;
        let row = i / 5;
        2 * (i % 5) + if row % 2 == 0 { 1 } else { 0 }
    }

    /// The square at (row, col), or `None` for a light square or off the board.
    #[inline]
    pub const fn from_row_col(row: u8, col: u8) -> Option<Square> {
        if row >= 10 || col >= 10 || (row + col) % 2 == 0 {
            None
        } else {
            Square::new(row * 5 + col / 2 + 1)
        }
    }

    /// The square seen from the other side of the board (180 degree rotation): n -> 51 - n.
    #[inline]
    pub const fn flip(self) -> Square {
        match Square::new(51 - self.number()) {
            Some(sq) => sq,
            None => self,
        }
    }

    /// All 50 squares in ascending order.
    pub fn all() -> impl Iterator<Item = Square> {
        (1..=50).map(|n| Square::new(n).expect("1..=50 are squares"))
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Square({})", self.number())
    }
}

/// A square number that is not 1..=50 or not a number at all.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a square number (1 to 50)")]
pub struct ParseSquareError(pub String);

impl FromStr for Square {
    type Err = ParseSquareError;
    fn from_str(s: &str) -> Result<Square, ParseSquareError> {
        if s.is_empty() || s.len() > 2 || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ParseSquareError(s.to_owned()));
        }
        s.parse::<u8>()
            .ok()
            .and_then(Square::new)
            .ok_or_else(|| ParseSquareError(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_trip() {
        for n in 1..=50 {
            let sq = Square::new(n).unwrap();
            assert_eq!(sq.number(), n);
            assert_eq!(Square::from_bit(sq.bit()), Some(sq));
            assert_eq!(Square::from_row_col(sq.row(), sq.col()), Some(sq));
            assert_eq!(sq.flip().flip(), sq);
        }
        assert_eq!(Square::new(0), None);
        assert_eq!(Square::new(51), None);
        assert_eq!(Square::from_bit(10), None);
        assert_eq!(Square::from_bit(55), None);
    }

    #[test]
    fn geometry() {
        let s = |n| Square::new(n).unwrap();
        assert_eq!((s(1).row(), s(1).col()), (0, 1));
        assert_eq!((s(6).row(), s(6).col()), (1, 0));
        assert_eq!((s(46).row(), s(46).col()), (9, 0));
        assert_eq!((s(50).row(), s(50).col()), (9, 8));
        assert_eq!(s(1).flip(), s(50));
        assert_eq!(s(28).flip(), s(23));
    }

    #[test]
    fn parse() {
        assert_eq!("7".parse::<Square>(), Ok(Square::new(7).unwrap()));
        assert!("0".parse::<Square>().is_err());
        assert!("51".parse::<Square>().is_err());
        assert!("+5".parse::<Square>().is_err());
        assert!("".parse::<Square>().is_err());
        assert!("007".parse::<Square>().is_err());
    }

    #[test]
    fn size() {
        assert_eq!(std::mem::size_of::<Square>(), 1);
        assert_eq!(std::mem::size_of::<Option<Square>>(), 2);
    }
}
