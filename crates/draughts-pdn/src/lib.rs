//! Streaming PDN (Portable Draughts Notation, PDN 3.0 as used by the FMJD) for international
//! draughts: a reader that goes through a file of any size game by game, and a writer.
//!
//! Two levels, as in shakmaty's `pgn-reader`:
//!
//! - [`RawReader`] splits the text into games and tokens and hands them to a [`Visitor`]: tags,
//!   move numbers, move text (not checked), annotations, comments, variations, the result. It
//!   never looks at the rules.
//! - [`Reader`] is a visitor-driven reader that resolves every move against the position
//!   (`draughts_core::MoveText::parse_pdn` then `resolve`) and yields [`PdnGame`]s. A game that
//!   cannot be read (a bad tag, an illegal move, a bad FEN, an unterminated comment, a game type
//!   that is not international draughts) comes back as a [`PdnError`] naming the game, the line
//!   and, for moves, the move number and side; the reader then goes on with the next game.
//!
//! The reader accepts what the programs that exchange PDN write: squares padded to two columns
//! (`1- 7`), set-ups in the move text (`/FEN "..."/`), `?` as the side to move, UTF-16 and
//! Windows-1252 text. Where it had to assume something (a quiet move written `38x33`, a short
//! capture `3x35` that only one path lets the game go on from, PlayOK's `GameType`), the game
//! carries typed [`PdnWarning`]s in [`PdnGame::warnings`]; [`check`] collects them.
//!
//! [`write_game`] and [`Writer`] write games back (seven-tag roster, `GameType`, `SetUp`/`FEN`
//! for set-up positions, numbered move text wrapped at 80 columns, draughts-style results).
//! [`check`] reads a whole file and summarises it for `draughts pdn check`.
//!
//! ```
//! use draughts_pdn::{GameResult, Reader};
//!
//! let text = "[White \"Sijbrands\"]\n[Black \"Baba Sy\"]\n\n1. 32-28 19-23 2. 28x19 14x23 1-1\n";
//! let mut reader = Reader::new(text.as_bytes());
//! let game = reader.next_game().unwrap().unwrap();
//! assert_eq!(game.white(), Some("Sijbrands"));
//! assert_eq!(game.moves.len(), 4);
//! assert_eq!(game.result, GameResult::Draw);
//! assert!(reader.next_game().is_none());
//! ```
//!
//! The library does no printing; text comes back in errors and summaries.

mod check;
mod error;
mod game;
mod raw;
mod result;
mod source;
mod warning;
mod writer;

pub use check::{check, CheckSummary, MAX_KEPT_ERRORS, MAX_KEPT_WARNINGS};
pub use error::{PdnError, PdnErrorKind, ReplayError};
pub use game::{PdnGame, Reader, SEVEN_TAG_ROSTER};
pub use raw::{Nag, RawReader, Skip, Visitor, MAX_COMMENT, MAX_TAG_NAME, MAX_TAG_VALUE, MAX_TOKEN};
pub use result::{GameResult, ParseResultError};
pub use warning::{PdnWarning, PdnWarningKind};
pub use writer::{game_to_string, write_game, WriteError, Writer};
