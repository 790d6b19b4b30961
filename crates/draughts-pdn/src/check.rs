//! Whole-file checking, for `draughts pdn check`.

use std::fmt;
use std::io::BufRead;

use draughts_core::Rules;

use crate::{PdnError, PdnWarning, Reader};

/// How many errors a [`CheckSummary`] keeps (it counts them all).
pub const MAX_KEPT_ERRORS: usize = 1000;
/// How many warnings a [`CheckSummary`] keeps (it counts them all).
pub const MAX_KEPT_WARNINGS: usize = 1000;

/// What [`check`] found.
#[derive(Debug, Default)]
pub struct CheckSummary {
    /// Games read, good or bad.
    pub games_read: usize,
    /// Games read without error.
    pub games_ok: usize,
    /// Moves in the good games.
    pub moves: usize,
    /// Games that failed.
    pub games_failed: usize,
    /// The errors, in file order: the first [`MAX_KEPT_ERRORS`] of them.
    pub errors: Vec<PdnError>,
    /// Warnings in the good games (a game with warnings is still good).
    pub warning_count: usize,
    /// The warnings, in file order: the first [`MAX_KEPT_WARNINGS`] of them.
    pub warnings: Vec<PdnWarning>,
}

impl CheckSummary {
    /// Whether every game was read without error.
    pub fn is_ok(&self) -> bool {
        self.games_failed == 0
    }
}

impl fmt::Display for CheckSummary {
    /// One line: `12 games read, 11 ok, 1 failed, 834 moves`, and `, 3 warnings` when there are
    /// any.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} games read, {} ok, {} failed, {} moves",
            self.games_read, self.games_ok, self.games_failed, self.moves
        )?;
        match self.warning_count {
            0 => Ok(()),
            1 => f.write_str(", 1 warning"),
            n => write!(f, ", {n} warnings"),
        }
    }
}

/// Reads every game of `input` under `rules`, replaying every move, and sums up.
pub fn check<R: BufRead>(input: R, rules: &Rules) -> CheckSummary {
    let mut summary = CheckSummary::default();
    for game in Reader::with_rules(input, *rules) {
        summary.games_read += 1;
        match game {
            Ok(game) => {
                summary.games_ok += 1;
                summary.moves += game.moves.len();
                summary.warning_count += game.warnings.len();
                let room = MAX_KEPT_WARNINGS - summary.warnings.len();
                summary.warnings.extend(game.warnings.into_iter().take(room));
            }
            Err(e) => {
                summary.games_failed += 1;
                if summary.errors.len() < MAX_KEPT_ERRORS {
                    summary.errors.push(e);
                }
            }
        }
    }
    summary
}
