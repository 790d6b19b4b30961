//! Colours, pieces and the position.

use std::fmt;
use std::ops::Not;

use crate::{Bitboard, Move, Square};

/// A side.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Moves first; men start on 31..=50 and move toward square 1.
    White,
    /// Men start on 1..=20 and move toward square 50.
    Black,
}

impl Color {
    /// `W` or `B`, as in FEN.
    pub const fn letter(self) -> char {
        match self {
            Color::White => 'W',
            Color::Black => 'B',
        }
    }

    /// Lower-case name.
    pub const fn name(self) -> &'static str {
        match self {
            Color::White => "white",
            Color::Black => "black",
        }
    }

    /// The row where this colour's men are crowned.
    #[inline]
    pub const fn promotion_row(self) -> Bitboard {
        match self {
            Color::White => Bitboard::WHITE_PROMOTION,
            Color::Black => Bitboard::BLACK_PROMOTION,
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline]
    fn not(self) -> Color {
        match self {
            Color::White => Color::Black,
            Color::Black => Color::White,
        }
    }
}

/// Man or king.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Moves one step forward, captures forward and backward.
    Man,
    /// Flies any distance along a diagonal, for moves and captures.
    King,
}

/// A coloured piece.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    /// Whose piece.
    pub color: Color,
    /// Man or king.
    pub role: Role,
}

/// Why a set of pieces is not a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Two pieces on one square.
    #[error("square {0} holds two pieces")]
    Overlap(Square),
    /// A man standing on the row where it would have been crowned.
    #[error("{color} man on square {square}, its promotion row (it would be a king)", color = .color.name())]
    ManOnPromotionRow {
        /// The man's colour.
        color: Color,
        /// Where it stands.
        square: Square,
    },
}

/// A position: where the men and kings of both sides stand, and whose turn it is.
///
/// Draw-rule counters and history live in [`crate::Game`]; a `Position` is only the board and is
/// cheap to copy (32 bytes), which is what search and perft want.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Position {
    white: Bitboard,
    black: Bitboard,
    kings: Bitboard,
    side: Color,
}

impl Position {
    /// The start position: White men on 31..=50, Black men on 1..=20, White to move.
    pub fn start() -> Position {
        let range = |a, b| (a..=b).map(|n| Square::new(n).expect("valid")).collect::<Bitboard>();
        Position { white: range(31, 50), black: range(1, 20), kings: Bitboard::EMPTY, side: Color::White }
    }

    /// An empty board with `side` to move.
    pub const fn empty(side: Color) -> Position {
        Position { white: Bitboard::EMPTY, black: Bitboard::EMPTY, kings: Bitboard::EMPTY, side }
    }

    /// Builds a position from the four piece sets, checking that no square holds two pieces and
    /// that no man stands on its own promotion row.
    pub fn from_pieces(
        white_men: Bitboard,
        white_kings: Bitboard,
        black_men: Bitboard,
        black_kings: Bitboard,
        side: Color,
    ) -> Result<Position, PositionError> {
        let sets = [white_men, white_kings, black_men, black_kings];
        let mut seen = Bitboard::EMPTY;
        for set in sets {
            let set = set & Bitboard::ALL;
            if let Some(sq) = (seen & set).first() {
                return Err(PositionError::Overlap(sq));
            }
            seen |= set;
        }
        if let Some(square) = (white_men & Bitboard::WHITE_PROMOTION).first() {
            return Err(PositionError::ManOnPromotionRow { color: Color::White, square });
        }
        if let Some(square) = (black_men & Bitboard::BLACK_PROMOTION).first() {
            return Err(PositionError::ManOnPromotionRow { color: Color::Black, square });
        }
        let all = Bitboard::ALL;
        Ok(Position {
            white: (white_men | white_kings) & all,
            black: (black_men | black_kings) & all,
            kings: (white_kings | black_kings) & all,
            side,
        })
    }

    /// The side to move.
    #[inline]
    pub const fn side_to_move(&self) -> Color {
        self.side
    }

    /// All pieces of `color`.
    #[inline]
    pub const fn pieces(&self, color: Color) -> Bitboard {
        match color {
            Color::White => self.white,
            Color::Black => self.black,
        }
    }

    /// The men of `color`.
    #[inline]
    pub fn men(&self, color: Color) -> Bitboard {
        self.pieces(color) & !self.kings
    }

    /// The kings of `color`.
    #[inline]
    pub fn kings(&self, color: Color) -> Bitboard {
        self.pieces(color) & self.kings
    }

    /// All kings of both sides.
    #[inline]
    pub const fn all_kings(&self) -> Bitboard {
        self.kings
    }

    /// Every occupied square.
    #[inline]
    pub const fn occupied(&self) -> Bitboard {
        Bitboard(self.white.0 | self.black.0)
    }

    /// Every empty playable square.
    #[inline]
    pub fn empty_squares(&self) -> Bitboard {
        !self.occupied()
    }

    /// The piece on `sq`, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        let color = if self.white.contains(sq) {
            Color::White
        } else if self.black.contains(sq) {
            Color::Black
        } else {
            return None;
        };
        let role = if self.kings.contains(sq) { Role::King } else { Role::Man };
        Some(Piece { color, role })
    }

    /// The same position with `side` to move.
    pub const fn with_side_to_move(mut self, side: Color) -> Position {
        self.side = side;
        self
    }

    /// The position seen from the other side: the board turned 180 degrees and the colours
    /// swapped. Move generation commutes with this map (a property the tests check), which is
    /// what lets the network see every position from the side to move.
    pub fn flipped(&self) -> Position {
        // Square n -> 51 - n is bit b -> 53 - b in the ghost-bit layout (rows of 11 bits are
        // symmetric about the middle), so the turn is a bit reversal of the 54 used bits.
        let flip = |b: Bitboard| Bitboard(b.0.reverse_bits() >> 10);
        Position {
            white: flip(self.black),
            black: flip(self.white),
            kings: flip(self.kings),
            side: !self.side,
        }
    }

    /// The position after `mv`, which must be legal here (debug builds check what they cheaply
    /// can). Copy-make: the original is unchanged.
    #[inline]
    pub fn play(&self, mv: &Move) -> Position {
        let from = Bitboard::from_square(mv.from());
        let to = Bitboard::from_square(mv.to());
        debug_assert!(self.pieces(self.side).intersects(from), "no own piece on {}", mv.from());
        debug_assert!((mv.captured() & !self.pieces(!self.side)).is_empty());
        let mut next = *self;
        let (own, opp) = match self.side {
            Color::White => (&mut next.white, &mut next.black),
            Color::Black => (&mut next.black, &mut next.white),
        };
        // `from` and `to` may be the same square (a capture that comes back), so clear first.
        *own = (*own & !from) | to;
        *opp &= !mv.captured();
        let mut kings = self.kings & !mv.captured();
        if kings.intersects(from) {
            kings = (kings & !from) | to;
        } else if mv.promotes() {
            kings |= to;
        }
        next.kings = kings;
        next.side = !self.side;
        next
    }

    /// The position after a quiet man move given as single-bit masks (perft's fast path).
    #[inline]
    pub(crate) fn play_quiet_man(&self, from: u64, to: u64, promotes: bool) -> Position {
        let mut next = *self;
        match self.side {
            Color::White => next.white.0 ^= from | to,
            Color::Black => next.black.0 ^= from | to,
        }
        if promotes {
            next.kings.0 |= to;
        }
        next.side = !self.side;
        next
    }

    /// Total number of pieces on the board.
    #[inline]
    pub const fn piece_count(&self) -> u32 {
        self.occupied().count()
    }
}

impl Default for Position {
    fn default() -> Position {
        Position::start()
    }
}

impl fmt::Debug for Position {
    /// Draws the board (White's men `w`, kings `W`; Black's `b`, `B`), square 1 at the top left.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Position({})", self.to_fen())?;
        for row in 0..10u8 {
            for col in 0..10u8 {
                let c = match Square::from_row_col(row, col) {
                    None => ' ',
                    Some(sq) => match self.piece_at(sq) {
                        None => '.',
                        Some(Piece { color: Color::White, role: Role::Man }) => 'w',
                        Some(Piece { color: Color::White, role: Role::King }) => 'W',
                        Some(Piece { color: Color::Black, role: Role::Man }) => 'b',
                        Some(Piece { color: Color::Black, role: Role::King }) => 'B',
                    },
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

impl fmt::Display for Position {
    /// The FEN of the position.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_fen())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size() {
        assert_eq!(std::mem::size_of::<Position>(), 32);
    }

    #[test]
    fn start() {
        let p = Position::start();
        assert_eq!(p.pieces(Color::White).count(), 20);
        assert_eq!(p.pieces(Color::Black).count(), 20);
        assert_eq!(p.side_to_move(), Color::White);
        assert_eq!(p.flipped(), p.with_side_to_move(Color::Black));
    }

    #[test]
    fn flipping_turns_every_square_to_51_minus_its_number() {
        for sq in Square::all() {
            let b = Bitboard::from_square(sq);
            let p = Position::from_pieces(Bitboard::EMPTY, b, Bitboard::EMPTY, Bitboard::EMPTY, Color::White).unwrap();
            let f = p.flipped();
            assert_eq!(f.kings(Color::Black), Bitboard::from_square(sq.flip()), "square {sq}");
            assert!(f.pieces(Color::White).is_empty());
            assert_eq!(f.side_to_move(), Color::Black);
        }
    }

    #[test]
    fn validation() {
        let s = |n| Bitboard::from_square(Square::new(n).unwrap());
        let e = Bitboard::EMPTY;
        assert_eq!(
            Position::from_pieces(s(3), e, e, e, Color::White),
            Err(PositionError::ManOnPromotionRow { color: Color::White, square: Square::new(3).unwrap() })
        );
        assert_eq!(
            Position::from_pieces(s(20), e, e, s(20), Color::White),
            Err(PositionError::Overlap(Square::new(20).unwrap()))
        );
        assert!(Position::from_pieces(e, s(3), s(3).shift(crate::Direction::DownLeft), e, Color::Black).is_ok());
    }
}
