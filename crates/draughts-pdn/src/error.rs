//! Errors.

use std::fmt;
use std::io;

use draughts_core::{Color, FenError, MoveError};

/// A game that could not be read, with where it went wrong.
///
/// The reader has already skipped the rest of that game when it hands this back; the next call
/// reads the next game (except after an I/O error, after which the reader stops).
#[derive(Debug, thiserror::Error)]
pub struct PdnError {
    /// 1-based number of the game in the input (every game counts, good or bad).
    pub game: usize,
    /// 1-based line where the problem starts.
    pub line: usize,
    /// What is wrong.
    #[source]
    pub kind: PdnErrorKind,
}

impl fmt::Display for PdnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            PdnErrorKind::Move { number, side, error } => write!(
                f,
                "game {}, move {number} ({}), line {}: {error}",
                self.game,
                side.name(),
                self.line
            ),
            kind => write!(f, "game {}, line {}: {kind}", self.game, self.line),
        }
    }
}

/// What went wrong with a game.
#[derive(Debug, thiserror::Error)]
pub enum PdnErrorKind {
    /// The input could not be read. The reader stops after this.
    #[error("read error: {0}")]
    Io(#[from] io::Error),
    /// A tag that is not `[Name "value"]`.
    #[error("malformed tag: {0}")]
    BadTag(String),
    /// A tag value whose closing `"` is missing before the end of the line.
    #[error("tag `{0}`: the value has no closing `\"` on its line")]
    UnterminatedTag(String),
    /// A `{` comment that is not closed before the end of the input or before a line that is a
    /// tag (`[Name "..."`), which is taken as the start of the next game.
    #[error("comment opened here is not closed with `}}`")]
    UnterminatedComment,
    /// A word of move text longer than any legal token.
    #[error("token `{0}...` is longer than {max} bytes", max = crate::MAX_TOKEN)]
    TokenTooLong(String),
    /// A `GameType` other than international draughts.
    #[error("game type `{0}` is not international draughts (\"20\" or \"20,W,10,10,N2,0\")")]
    GameType(String),
    /// A `FEN` tag that is not a valid position.
    #[error("{0}")]
    Fen(#[from] FenError),
    /// A move that cannot be parsed, is illegal or is ambiguous in the position reached.
    #[error("move {number} ({side}): {error}", side = side.name())]
    Move {
        /// The move number, as numbered in the text (or counted from the start when the text
        /// has no numbers).
        number: u32,
        /// The side that was to move.
        side: Color,
        /// The underlying error; it holds the text and the position's FEN.
        #[source]
        error: MoveError,
    },
}

/// A move in a [`crate::PdnGame`] that is not legal where it is played (only possible for games
/// built by hand; the reader never produces one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("ply {ply}: {mv} is not a legal move in {fen}")]
pub struct ReplayError {
    /// 0-based index of the move in the game.
    pub ply: usize,
    /// The move in Hub notation.
    pub mv: String,
    /// The position it was played in.
    pub fen: String,
}
