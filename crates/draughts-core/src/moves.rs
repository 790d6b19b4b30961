//! Moves and move lists.

use std::fmt;

use smallvec::SmallVec;

use crate::{Bitboard, Square};

/// A move: the piece on `from` goes to `to`, taking every piece in `captured`.
///
/// Two capture paths with the same from, to and captured set are the same move (FMJD), so this
/// triple is the identity of a move; `flags` only caches facts about it. A capture may end on its
/// own start square (`from == to`). The landing path is recovered from the position when notation
/// needs it, see [`crate::Position::landing_paths`].
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Move {
    captured: Bitboard,
    from: Square,
    to: Square,
    flags: u8,
}

impl Move {
    const PROMOTES: u8 = 1;
    const BY_KING: u8 = 2;

    #[inline]
    pub(crate) const fn new(from: Square, to: Square, captured: Bitboard, by_king: bool, promotes: bool) -> Move {
        let mut flags = 0;
        if by_king {
            flags |= Move::BY_KING;
        }
        if promotes {
            flags |= Move::PROMOTES;
        }
        Move { captured, from, to, flags }
    }

    /// The square the moving piece starts on.
    #[inline]
    pub const fn from(self) -> Square {
        self.from
    }

    /// The square the moving piece ends on.
    #[inline]
    pub const fn to(self) -> Square {
        self.to
    }

    /// The pieces taken (empty for a quiet move).
    #[inline]
    pub const fn captured(self) -> Bitboard {
        self.captured
    }

    /// Whether the move takes at least one piece.
    #[inline]
    pub const fn is_capture(self) -> bool {
        self.captured.any()
    }

    /// Whether a man is crowned by this move.
    #[inline]
    pub const fn promotes(self) -> bool {
        self.flags & Move::PROMOTES != 0
    }

    /// Whether the moving piece is a king (before the move).
    #[inline]
    pub const fn is_king_move(self) -> bool {
        self.flags & Move::BY_KING != 0
    }

    /// Whether the move can never be undone by later moves (a man move or a capture). Draw-rule
    /// counters and repetition windows restart after such a move.
    #[inline]
    pub const fn is_irreversible(self) -> bool {
        !self.is_king_move() || self.is_capture()
    }

    /// The same move seen from the other side of the board (squares n -> 51 - n).
    pub fn flipped(self) -> Move {
        Move {
            captured: self.captured.squares().map(Square::flip).collect(),
            from: self.from.flip(),
            to: self.to.flip(),
            flags: self.flags,
        }
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move({})", self.to_hub())
    }
}

impl fmt::Display for Move {
    /// Hub notation: `32-28`, or `28x19x23` (from, to, every captured square ascending). It names
    /// a move without a position; PDN notation needs the position ([`crate::Position::to_pdn`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_capture() {
            write!(f, "{}x{}", self.from, self.to)?;
            for sq in self.captured {
                write!(f, "x{sq}")?;
            }
            Ok(())
        } else {
            write!(f, "{}-{}", self.from, self.to)
        }
    }
}

impl Move {
    /// Hub notation, see the `Display` impl.
    pub fn to_hub(self) -> String {
        self.to_string()
    }
}

/// A list of moves, stored inline.
///
/// The start position has 9 moves and middle games rarely exceed 40; positions with many kings can
/// exceed the inline capacity of 64, and then the list spills to the heap, so no position is ever
/// too large. (A bound that holds for every position is hard to prove for captures: kings landing on
/// any empty square multiply the distinct moves.)
pub type MoveList = SmallVec<[Move; 64]>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size() {
        assert_eq!(std::mem::size_of::<Move>(), 16);
    }

    #[test]
    fn hub_text() {
        let s = |n| Square::new(n).unwrap();
        let quiet = Move::new(s(32), s(28), Bitboard::EMPTY, false, false);
        assert_eq!(quiet.to_hub(), "32-28");
        let cap = Move::new(s(28), s(19), Bitboard::from_square(s(23)), false, false);
        assert_eq!(cap.to_hub(), "28x19x23");
        let multi = Move::new(
            s(41),
            s(43),
            [38, 9, 19, 12].into_iter().map(s).collect(),
            true,
            false,
        );
        assert_eq!(multi.to_hub(), "41x43x9x12x19x38");
    }
}
