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
            PdnErrorKind::GameTypeMove { game_type, number, side, error } => write!(
                f,
                "game {}, move {number} ({}), line {}: {error} (the game type is `{game_type}`, not the standard \
                 `20,W,10,10,N2,0`: its moves may be numbered another way)",
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
    /// A NUL byte, which no PDN text holds: the input is probably a binary file (UTF-16 text is
    /// recognised and decoded, so it is not that).
    #[error("NUL byte (byte {offset} of the input): is this a binary file?")]
    NulByte {
        /// 0-based byte offset in the input (in the decoded text for UTF-16 input).
        offset: u64,
    },
    /// A `(` still open when the game ends: everything after it, to the end of the game, would
    /// be read as part of the variation.
    #[error(
        "the variation opened here with `(` is still open where the game ends (line {end}): the main line after \
         it would be lost"
    )]
    UnclosedVariation {
        /// 1-based line where the game ends.
        end: usize,
    },
    /// A set-up in the move text that is not `/FEN "..."/`.
    #[error("set-up in the move text: {0}")]
    BadSetUp(String),
    /// A word of move text that starts with a result and goes on with the next game's move text
    /// (`2-01.`): the games are not separated.
    #[error("`{text}` is not a move: it looks like the result `{result}` glued to the next game's move text")]
    GluedResult {
        /// The word.
        text: String,
        /// The result at its start.
        result: String,
    },
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
    /// A move that does not replay in a game whose `GameType` is international draughts with
    /// unusual extra fields (`20,W,10,10,N1,0`): the text may number the board another way.
    #[error("move {number} ({side}): {error} (game type `{game_type}`)", side = side.name())]
    GameTypeMove {
        /// The `GameType` value.
        game_type: Box<str>,
        /// The move number.
        number: u32,
        /// The side that was to move.
        side: Color,
        /// The underlying error.
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
