//! Warnings: things the reader read past in a game that it still accepted.

use std::fmt;

use draughts_core::Color;

/// Something in a game that the reader accepted but that the text did not say cleanly: a move
/// written with the wrong separator, a short capture that only one path fits, a game type with
/// unusual extra fields... The game is good; the warning says what was assumed.
///
/// The reader never prints these: they are in [`crate::PdnGame::warnings`] and
/// [`crate::CheckSummary::warnings`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct PdnWarning {
    /// 1-based number of the game in the input.
    pub game: usize,
    /// 1-based line the warning is about.
    pub line: usize,
    /// What was assumed.
    pub kind: PdnWarningKind,
}

impl fmt::Display for PdnWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "game {}, line {}: {}", self.game, self.line, self.kind)
    }
}

/// What a [`PdnWarning`] is about.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PdnWarningKind {
    /// A quiet move written with `x` (`38x33` for 38-33) or a capture written with `-` (`23-32`
    /// for 23x32), read as the only legal move it fits.
    #[error(
        "move {number} ({side}): `{text}` is written as a {written}; read as {read_as}, the only legal move it fits",
        side = side.name(),
        written = if text.contains('-') { "quiet move" } else { "capture" }
    )]
    WrongSeparator {
        /// The move number.
        number: u32,
        /// The side that moved.
        side: Color,
        /// The move as written.
        text: String,
        /// The move read, in PDN.
        read_as: String,
    },
    /// A short capture (`3x35`) that two or more paths fit, of which only one lets the rest of
    /// the main line replay.
    #[error(
        "move {number} ({side}): `{text}` could be {chosen} or {others}; only {chosen} lets the rest of the game \
         replay",
        side = side.name(),
        others = others.join(" or ")
    )]
    AmbiguityResolved {
        /// The move number.
        number: u32,
        /// The side that moved.
        side: Color,
        /// The move as written.
        text: String,
        /// The path taken, in full.
        chosen: String,
        /// The paths that did not let the game replay, in full.
        others: Vec<String>,
    },
    /// A `GameType` of international draughts (`20`) with extra fields that are not the
    /// standard `W,10,10,N2,0` (PlayOK writes `20,W,10,10,N1,0`); the moves replay under the
    /// standard numbering.
    #[error(
        "game type `{0}` is not the standard `20` or `20,W,10,10,N2,0`; read as international draughts (the moves \
         replay under the standard numbering)"
    )]
    GameTypeVariant(String),
    /// A FEN whose side to move is `?` (PDN 3.0: unknown); the first move decided it.
    #[error("FEN `{fen}` leaves the side to move unknown (`?`): {} to move, {reason}", side.name())]
    UnknownSideToMove {
        /// The FEN as written.
        fen: String,
        /// The side taken.
        side: Color,
        /// Why: "the first move is theirs" or "no move to tell".
        reason: &'static str,
    },
    /// A set-up in the move text (`/FEN "..."/`) after moves, at a position the moves did not
    /// reach: the game starts again from it and the moves before it are dropped.
    #[error(
        "set-up position in the move text after {dropped} moves, not the position they reach: the game is read \
         from the set-up, the {dropped} moves before it are dropped"
    )]
    SetUpMidGame {
        /// The moves dropped.
        dropped: usize,
    },
    /// A `)` with no `(` open; ignored.
    #[error("`)` closes no variation; ignored")]
    StrayClose,
    /// The game's first tag is on the line where the previous game ended (`2-0[Event "..."]`).
    #[error("tag `{0}` starts on the line where the previous game ends: read as the start of a new game")]
    GluedToPrevious(String),
    /// A game of tags only: no moves, no result token.
    #[error("no move text: the game has tags only")]
    NoMoveText,
}
