//! The rules of international draughts (10x10, FMJD) as small, fast, `Copy` types.
//!
//! - [`Bitboard`], [`Square`]: board sets in a ghost-bit layout where the four diagonal steps are
//!   constant shifts (the layout is drawn in [`bitboard`]).
//! - [`Position`]: men and kings of both colours and the side to move; exact legal move generation
//!   under every FMJD capture rule; copy-make [`Position::play`].
//! - [`Move`]: from, to and the captured set. Two capture paths with the same from, to and captured
//!   set are one move. The landing path is not stored (it would triple the size of a move); it is
//!   recovered from the position when notation needs it ([`Position::landing_paths`]).
//! - [`Rules`]: the knobs other systems differ on (promotion during a capture; which draw rules
//!   apply), as data with named presets.
//! - [`Game`]: history, incremental Zobrist hash, draw-rule counters, result and undo.
//! - [`fen`], [`notation`]: FEN, the 51-character Hub position, PDN and Hub move text. Text is parsed
//!   without a position and resolved against one.
//! - [`perft`]: move-path enumeration with bulk counting, single-threaded and parallel.
//!
//! This crate does no I/O.

pub mod bitboard;
pub mod fen;
mod game;
mod movegen;
mod moves;
pub mod notation;
pub mod perft;
mod position;
mod rules;
mod square;
pub mod zobrist;

pub use bitboard::{Bitboard, Direction};
pub use fen::FenError;
pub use game::{Counters, DrawCount, DrawReason, Game, IllegalMove, Outcome, WinReason};
pub use moves::{Move, MoveList};
pub use notation::{MoveError, MoveText};
pub use position::{Color, Piece, Position, PositionError, Role};
pub use rules::{DrawRules, Rules, UnknownRules};
pub use square::{ParseSquareError, Square};
