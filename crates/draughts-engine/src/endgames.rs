//! Endgame databases in the search ([`Endgames`], from `draughts-egtb`).
//!
//! - **Inside the tree**, a node of at most the databases' piece count takes the database's value
//!   as its score: `TB_WIN - ply` for a win (a nearer database win scores higher), its negation
//!   for a loss, 0 for a draw. Capture positions are stored, so any node can be probed.
//! - **At the root** in the databases, only the moves that keep the value are searched (for a
//!   win, the moves to a position the opponent loses; for a draw, the moves to a draw), and
//!   inside that search only positions of less material (a capture or a promotion since the root)
//!   are probed: every root move keeps the value, so the search is free to look for the line that
//!   makes progress, and conversions score as database wins.
//! - **Draw rules.** The databases know only the move rules. Where a counting rule could decide
//!   the game, nothing is probed and the search plays on with its own counters: in FMJD's
//!   lone-king endings (one king against up to three pieces with a king: the 16- and 5-move
//!   rules), and when any counter is within [`RULE_MARGIN`] plies of its end.

use std::path::Path;
use std::sync::Arc;

use draughts_core::{Color, Game};
use draughts_egtb::{TableError, Tablebase, Wdl};

/// A database win at ply `n` scores `TB_WIN - n` (above every evaluation, below every mate).
pub const TB_WIN: i32 = 20_000;

/// No probe when a counting draw rule is this many plies or fewer from its end.
pub const RULE_MARGIN: i32 = 20;

/// A directory of endgame tables as the engine uses it. Compared by identity.
#[derive(Clone, Debug)]
pub struct Endgames {
    tb: Arc<Tablebase>,
    pieces: u32,
}

impl Endgames {
    /// The tables of `tb`; probes go up to its largest complete piece count.
    pub fn new(tb: Arc<Tablebase>) -> Endgames {
        let pieces = tb.max_pieces();
        Endgames { tb, pieces }
    }

    /// The tables in `dir` (headers checked now, contents on first use).
    pub fn open(dir: &Path) -> Result<Endgames, TableError> {
        Ok(Endgames::new(Arc::new(Tablebase::open(dir)?)))
    }

    /// The tables.
    pub fn tablebase(&self) -> &Tablebase {
        &self.tb
    }

    /// The largest piece count probed (every material up to it is present).
    pub fn pieces(&self) -> u32 {
        self.pieces
    }

    /// The database value of the game's position for the side to move, where the search would
    /// trust it: within the piece count, both sides with pieces, not in a lone-king ending the
    /// rules count, and no counting rule within [`RULE_MARGIN`] plies of its end. What self-play
    /// adjudicates by.
    pub fn value_in_game(&self, game: &Game) -> Option<Wdl> {
        let pos = game.position();
        let both = pos.pieces(Color::White).any() && pos.pieces(Color::Black).any();
        if pos.piece_count() > self.pieces || !both {
            return None;
        }
        let d = &game.rules().draw;
        if (d.three_vs_one_plies.is_some() || d.two_vs_one_plies.is_some()) && crate::search::ending(pos) != 0 {
            return None;
        }
        let c = game.counters();
        let left = |limit: Option<u16>, n: u16| limit.map_or(i32::MAX, |l| l as i32 - n as i32);
        if left(d.no_progress_plies, c.no_progress).min(left(d.no_capture_plies, c.no_capture)) <= RULE_MARGIN {
            return None;
        }
        self.tb.probe(pos).ok()
    }
}

impl PartialEq for Endgames {
    fn eq(&self, other: &Endgames) -> bool {
        Arc::ptr_eq(&self.tb, &other.tb)
    }
}

impl Eq for Endgames {}
