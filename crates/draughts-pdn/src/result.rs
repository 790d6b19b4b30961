//! Game results.

use std::fmt;
use std::str::FromStr;

use draughts_core::{Color, Outcome};

/// The result of a game, as written at the end of its move text and in its `Result` tag.
///
/// Draughts files write results with two points for a win (`2-0`, `0-2`, `1-1`); chess-style
/// results (`1-0`, `0-1`, `1/2-1/2`) are common too. Both read as the same value; the writer uses
/// the draughts convention.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// White won: `2-0` or `1-0`.
    WhiteWins,
    /// Black won: `0-2` or `0-1`.
    BlackWins,
    /// Drawn: `1-1` or `1/2-1/2`.
    Draw,
    /// Both sides lost (for example both forfeited): `0-0`.
    BothLose,
    /// Unknown, unfinished or not given: `*`.
    Unknown,
}

impl GameResult {
    /// Every result, in a fixed order.
    pub const ALL: [GameResult; 5] =
        [GameResult::WhiteWins, GameResult::BlackWins, GameResult::Draw, GameResult::BothLose, GameResult::Unknown];

    /// Reads a result token in either convention; `None` if `token` is not a result.
    pub fn from_token(token: &str) -> Option<GameResult> {
        Some(match token {
            "2-0" | "1-0" => GameResult::WhiteWins,
            "0-2" | "0-1" => GameResult::BlackWins,
            "1-1" | "1/2-1/2" => GameResult::Draw,
            "0-0" => GameResult::BothLose,
            "*" => GameResult::Unknown,
            _ => return None,
        })
    }

    /// The token in the draughts convention: `2-0`, `0-2`, `1-1`, `0-0` or `*`.
    pub const fn to_pdn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "2-0",
            GameResult::BlackWins => "0-2",
            GameResult::Draw => "1-1",
            GameResult::BothLose => "0-0",
            GameResult::Unknown => "*",
        }
    }

    /// The winner, if one side won.
    pub const fn winner(self) -> Option<Color> {
        match self {
            GameResult::WhiteWins => Some(Color::White),
            GameResult::BlackWins => Some(Color::Black),
            _ => None,
        }
    }
}

impl From<Outcome> for GameResult {
    fn from(outcome: Outcome) -> GameResult {
        match outcome {
            Outcome::Win { winner: Color::White, .. } => GameResult::WhiteWins,
            Outcome::Win { winner: Color::Black, .. } => GameResult::BlackWins,
            Outcome::Draw(_) => GameResult::Draw,
        }
    }
}

impl fmt::Display for GameResult {
    /// The draughts-convention token, see [`GameResult::to_pdn`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.to_pdn())
    }
}

/// A text that is not a result token.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a result (2-0 0-2 1-1 0-0 1-0 0-1 1/2-1/2 *)")]
pub struct ParseResultError(pub String);

impl FromStr for GameResult {
    type Err = ParseResultError;
    fn from_str(s: &str) -> Result<GameResult, ParseResultError> {
        GameResult::from_token(s.trim()).ok_or_else(|| ParseResultError(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_conventions() {
        let pairs = [
            ("2-0", "1-0", GameResult::WhiteWins),
            ("0-2", "0-1", GameResult::BlackWins),
            ("1-1", "1/2-1/2", GameResult::Draw),
        ];
        for (draughts, chess, r) in pairs {
            assert_eq!(GameResult::from_token(draughts), Some(r));
            assert_eq!(GameResult::from_token(chess), Some(r));
            assert_eq!(r.to_pdn(), draughts);
        }
        for r in GameResult::ALL {
            assert_eq!(r.to_string().parse::<GameResult>(), Ok(r));
        }
        for bad in ["", "2-1", "1/2", "**", "32-28"] {
            assert_eq!(GameResult::from_token(bad), None, "{bad}");
        }
    }
}
