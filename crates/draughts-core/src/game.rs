//! A game: positions, history, draw-rule counters and the result.

use std::fmt;

use crate::{Color, Move, MoveList, Position, Rules};

/// Draw-rule counters. They are part of the game state (two games with the same position and
/// different counters are different states) and reach the network's input.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// Plies since the last capture or man move (only kings moved).
    pub no_progress: u16,
    /// Plies since the last capture.
    pub no_capture: u16,
    /// Plies played since the current lone-king ending (one king against three pieces, or
    /// against at most two, with at least one king) arose; 0 outside such an ending.
    pub endgame: u16,
}

/// A lone-king ending in which the FMJD 16-move or 5-move rule counts.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
enum Ending {
    ThreeVsOne,
    TwoVsOne,
}

fn ending(pos: &Position) -> Option<Ending> {
    let lone = |c: Color| pos.pieces(c).count() == 1 && pos.kings(c).count() == 1;
    for c in [Color::White, Color::Black] {
        if lone(c) {
            let other = !c;
            let n = pos.pieces(other).count();
            if pos.kings(other).any() {
                if n == 3 {
                    return Some(Ending::ThreeVsOne);
                } else if n <= 2 {
                    return Some(Ending::TwoVsOne);
                }
            }
        }
    }
    None
}

/// How a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// One side won.
    Win {
        /// The winner.
        winner: Color,
        /// Why the loser lost.
        reason: WinReason,
    },
    /// Drawn by a draw rule.
    Draw(DrawReason),
}

/// Why the side to move lost.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum WinReason {
    /// It has no pieces left.
    NoPieces,
    /// It has pieces but none can move.
    NoMoves,
}

/// Which draw rule ended the game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum DrawReason {
    /// The same position with the same side to move occurred the set number of times.
    Repetition,
    /// Only kings moved, without capture, for the set number of plies.
    NoProgress,
    /// No capture for the set number of plies.
    NoCapture,
    /// The 16-move rule: one king against three pieces including a king.
    ThreeVsOne,
    /// The 5-move rule: one king against at most two pieces including a king.
    TwoVsOne,
}

impl DrawReason {
    /// A short name: `repetition`, `25-move rule`, `no capture`, `16-move rule`, `5-move rule`.
    pub fn name(self) -> &'static str {
        match self {
            DrawReason::Repetition => "repetition",
            DrawReason::NoProgress => "25-move rule",
            DrawReason::NoCapture => "no capture",
            DrawReason::ThreeVsOne => "16-move rule",
            DrawReason::TwoVsOne => "5-move rule",
        }
    }
}

/// A draw rule that is counting in a game: how far it has got and where it ends the game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DrawCount {
    /// The rule.
    pub rule: DrawReason,
    /// Plies counted so far (for repetition: how often the current position has occurred).
    pub count: u16,
    /// The count at which the rule draws the game.
    pub limit: u16,
}

impl DrawCount {
    /// Plies (for repetition: occurrences) left before the rule draws the game.
    pub fn left(&self) -> u16 {
        self.limit.saturating_sub(self.count)
    }
}

impl Outcome {
    /// The score for White: 1 for a win, 0.5 for a draw, 0 for a loss.
    pub fn white_score(&self) -> f64 {
        match self {
            Outcome::Win { winner: Color::White, .. } => 1.0,
            Outcome::Win { winner: Color::Black, .. } => 0.0,
            Outcome::Draw(_) => 0.5,
        }
    }

    /// The PDN result tag: `2-0`, `0-2` or `1-1` (the draughts convention; `1-0` style results
    /// are read too).
    pub fn pdn_result(&self) -> &'static str {
        match self {
            Outcome::Win { winner: Color::White, .. } => "2-0",
            Outcome::Win { winner: Color::Black, .. } => "0-2",
            Outcome::Draw(_) => "1-1",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Win { winner, reason } => {
                let why = match reason {
                    WinReason::NoPieces => "no pieces left",
                    WinReason::NoMoves => "no legal move",
                };
                write!(f, "{} wins ({} has {why})", winner.name(), (!*winner).name())
            }
            Outcome::Draw(reason) => f.write_str(match reason {
                DrawReason::Repetition => "draw by repetition",
                DrawReason::NoProgress => "draw: only king moves without capture",
                DrawReason::NoCapture => "draw: no capture",
                DrawReason::ThreeVsOne => "draw by the 16-move rule",
                DrawReason::TwoVsOne => "draw by the 5-move rule",
            }),
        }
    }
}

/// A move that is not legal in the game's current position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{mv} is not legal in {fen}")]
pub struct IllegalMove {
    /// The move, in Hub notation.
    pub mv: String,
    /// The position's FEN.
    pub fen: String,
}

#[derive(Copy, Clone, Debug)]
struct Ply {
    mv: Move,
    before: Position,
    counters: Counters,
    hash: u64,
}

/// A game: a start position, the moves played, the draw-rule counters and the incremental
/// Zobrist hash, under a set of [`Rules`].
#[derive(Clone, Debug)]
pub struct Game {
    rules: Rules,
    start: Position,
    start_counters: Counters,
    position: Position,
    counters: Counters,
    hash: u64,
    history: Vec<Ply>,
}

impl Default for Game {
    fn default() -> Game {
        Game::new(Rules::FMJD)
    }
}

impl Game {
    /// A game from the start position.
    pub fn new(rules: Rules) -> Game {
        Game::from_position(Position::start(), rules)
    }

    /// A game from `start`, with zero counters.
    pub fn from_position(start: Position, rules: Rules) -> Game {
        Game::with_counters(start, Counters::default(), rules)
    }

    /// A game from `start` with known counters (for example from a training record).
    pub fn with_counters(start: Position, counters: Counters, rules: Rules) -> Game {
        Game {
            rules,
            start,
            start_counters: counters,
            position: start,
            counters,
            hash: start.hash(),
            history: Vec::new(),
        }
    }

    /// The rules the game is played under.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The start position.
    pub fn start_position(&self) -> &Position {
        &self.start
    }

    /// The counters at the start position.
    pub fn start_counters(&self) -> Counters {
        self.start_counters
    }

    /// The current draw-rule counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The Zobrist hash of the current position, kept incrementally.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Plies played since the start position.
    pub fn ply(&self) -> usize {
        self.history.len()
    }

    /// The moves played, in order.
    pub fn moves(&self) -> impl ExactSizeIterator<Item = Move> + '_ {
        self.history.iter().map(|p| p.mv)
    }

    /// The position before ply `i` (0 = start) together with the move played there.
    pub fn plies(&self) -> impl ExactSizeIterator<Item = (&Position, Move)> + '_ {
        self.history.iter().map(|p| (&p.before, p.mv))
    }

    /// The legal moves in the current position under the game's rules.
    pub fn legal_moves(&self) -> MoveList {
        self.position.legal_moves_with(&self.rules)
    }

    /// Plays `mv` after checking that it is legal.
    pub fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        if !self.legal_moves().contains(&mv) {
            return Err(IllegalMove { mv: mv.to_hub(), fen: self.position.to_fen() });
        }
        self.play_unchecked(mv);
        Ok(())
    }

    /// Plays `mv`, which the caller guarantees is legal (it came from [`Game::legal_moves`]).
    pub fn play_unchecked(&mut self, mv: Move) {
        debug_assert!(self.legal_moves().contains(&mv), "illegal {mv:?} in {:?}", self.position);
        let before = self.position;
        let next = before.play(&mv);
        self.history.push(Ply { mv, before, counters: self.counters, hash: self.hash });
        self.hash ^= before.hash_delta(&mv);
        let c = &mut self.counters;
        c.no_capture = if mv.is_capture() { 0 } else { c.no_capture.saturating_add(1) };
        c.no_progress = if mv.is_irreversible() { 0 } else { c.no_progress.saturating_add(1) };
        let (old, new) = (ending(&before), ending(&next));
        c.endgame = if new.is_some() && new == old { c.endgame.saturating_add(1) } else { 0 };
        self.position = next;
    }

    /// Takes back the last move, returning it.
    pub fn undo(&mut self) -> Option<Move> {
        let ply = self.history.pop()?;
        self.position = ply.before;
        self.counters = ply.counters;
        self.hash = ply.hash;
        Some(ply.mv)
    }

    /// How many times the current position (same side to move) has occurred, this one included.
    pub fn repetition_count(&self) -> u32 {
        // A repetition needs no capture and no man move in between, so only the last
        // `no_progress` plies can hold an earlier occurrence; the side to move matches every
        // second ply.
        let window = (self.counters.no_progress as usize).min(self.history.len());
        let n = self.history.len();
        let mut count = 1;
        let mut back = 2;
        while back <= window {
            let ply = &self.history[n - back];
            if ply.hash == self.hash && ply.before == self.position {
                count += 1;
            }
            back += 2;
        }
        count
    }

    /// The result, if the game is over: a side to move with no legal move loses; otherwise the
    /// active draw rules are checked.
    pub fn outcome(&self) -> Option<Outcome> {
        let pos = &self.position;
        let us = pos.side_to_move();
        if pos.pieces(us).is_empty() {
            return Some(Outcome::Win { winner: !us, reason: WinReason::NoPieces });
        }
        if pos.count_legal_moves_with(self.rules.promote_during_capture) == 0 {
            return Some(Outcome::Win { winner: !us, reason: WinReason::NoMoves });
        }
        self.draw_reason().map(Outcome::Draw)
    }

    /// The draw rules of the game's rules that are counting now, each with its count and limit:
    /// repetition once the current position has occurred before, the no-progress rule once only
    /// kings have moved since the last capture or man move, the no-capture rule once a move
    /// without capture was played, and the lone-king rules from the moment their ending arises.
    pub fn draw_counts(&self) -> Vec<DrawCount> {
        let d = &self.rules.draw;
        let c = &self.counters;
        let mut out = Vec::new();
        let mut push = |rule, count: u16, limit: Option<u16>, counting: bool| {
            if let Some(limit) = limit.filter(|_| counting) {
                out.push(DrawCount { rule, count, limit });
            }
        };
        let reps = self.repetition_count().min(u16::MAX as u32) as u16;
        push(DrawReason::Repetition, reps, d.repetition.map(u16::from), reps >= 2);
        push(DrawReason::NoProgress, c.no_progress, d.no_progress_plies, c.no_progress > 0);
        push(DrawReason::NoCapture, c.no_capture, d.no_capture_plies, c.no_capture > 0);
        match ending(&self.position) {
            Some(Ending::ThreeVsOne) => push(DrawReason::ThreeVsOne, c.endgame, d.three_vs_one_plies, true),
            Some(Ending::TwoVsOne) => push(DrawReason::TwoVsOne, c.endgame, d.two_vs_one_plies, true),
            None => {}
        }
        out
    }

    /// The draw rule that applies to the current state, if any (does not look for wins).
    pub fn draw_reason(&self) -> Option<DrawReason> {
        let d = &self.rules.draw;
        let c = &self.counters;
        if let Some(n) = d.repetition {
            if self.repetition_count() >= n as u32 {
                return Some(DrawReason::Repetition);
            }
        }
        if d.no_progress_plies.is_some_and(|n| c.no_progress >= n) {
            return Some(DrawReason::NoProgress);
        }
        if d.no_capture_plies.is_some_and(|n| c.no_capture >= n) {
            return Some(DrawReason::NoCapture);
        }
        match ending(&self.position) {
            Some(Ending::ThreeVsOne) if d.three_vs_one_plies.is_some_and(|n| c.endgame >= n) => {
                Some(DrawReason::ThreeVsOne)
            }
            Some(Ending::TwoVsOne) if d.two_vs_one_plies.is_some_and(|n| c.endgame >= n) => {
                Some(DrawReason::TwoVsOne)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(game: &mut Game, text: &str) {
        for t in text.split_whitespace() {
            let mv = game.position().parse_pdn_move(t).unwrap();
            game.play(mv).unwrap();
        }
    }

    #[test]
    fn threefold_repetition() {
        let fen = "W:WK50:BK1,3";
        let mut g = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
        assert_eq!(g.repetition_count(), 1);
        play(&mut g, "50-44 1-7 44-50 7-1");
        assert_eq!(g.repetition_count(), 2);
        assert_eq!(g.outcome(), None);
        play(&mut g, "50-44 1-7 44-50 7-1");
        assert_eq!(g.repetition_count(), 3);
        assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::Repetition)));
        g.undo();
        assert_eq!(g.outcome(), None);
        // A man move in between breaks the chain.
        let mut g = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
        play(&mut g, "50-44 1-7 44-50 3-9 50-44 7-1 44-50 1-7 50-44 7-1");
        assert_eq!(g.repetition_count(), 2);
        // Without a repetition rule the same moves do not end the game.
        let mut g = Game::from_position(Position::from_fen(fen).unwrap(), Rules::NO_CAPTURE_25);
        play(&mut g, "50-44 1-7 44-50 7-1 50-44 1-7 44-50 7-1");
        assert_eq!(g.outcome(), None);
    }

    #[test]
    fn draw_counts_say_how_far_each_counting_rule_is() {
        let count = |g: &Game, rule| g.draw_counts().into_iter().find(|d| d.rule == rule).map(|d| (d.count, d.limit, d.left()));
        // The start: nothing counts.
        assert!(Game::new(Rules::FMJD).draw_counts().is_empty());
        // King against king and man: the 5-move rule from the first ply, the 25-move rule once
        // only kings have moved, repetition once the position comes back.
        let mut g = Game::from_position(Position::from_fen("W:WK50:BK1,3").unwrap(), Rules::FMJD);
        assert_eq!(count(&g, DrawReason::TwoVsOne), Some((0, 10, 10)));
        assert_eq!(count(&g, DrawReason::NoProgress), None);
        play(&mut g, "50-44 1-7 44-50 7-1");
        assert_eq!(count(&g, DrawReason::TwoVsOne), Some((4, 10, 6)));
        assert_eq!(count(&g, DrawReason::NoProgress), Some((4, 50, 46)));
        assert_eq!(count(&g, DrawReason::Repetition), Some((2, 3, 1)));
        assert_eq!(count(&g, DrawReason::NoCapture), None, "FMJD has no no-capture rule");
        // A man move restarts the no-progress count and breaks the repetition chain.
        play(&mut g, "50-44 3-9");
        assert_eq!(count(&g, DrawReason::NoProgress), None);
        assert_eq!(count(&g, DrawReason::Repetition), None);
        assert_eq!(count(&g, DrawReason::TwoVsOne), Some((6, 10, 4)));
        // The no-capture preset counts every ply without capture.
        let mut g = Game::new(Rules::NO_CAPTURE_25);
        play(&mut g, "32-28 19-23");
        let d = g.draw_counts();
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].rule, d[0].count), (DrawReason::NoCapture, 2));
        assert_eq!(d[0].left(), d[0].limit - 2);
    }

    fn without_repetition(rules: Rules) -> Rules {
        Rules { draw: crate::DrawRules { repetition: None, ..rules.draw }, ..rules }
    }

    #[test]
    fn five_move_rule() {
        // One king against king and man: 5 moves each after the ending arises. A man move does
        // not restart the count.
        let rules = without_repetition(Rules::FMJD);
        let mut g = Game::from_position(Position::from_fen("W:WK50:BK1,3").unwrap(), rules);
        play(&mut g, "50-44 1-7 44-50 7-1 50-44 1-7 44-50 3-9");
        assert_eq!(g.counters().no_progress, 0);
        assert_eq!(g.counters().endgame, 8);
        play(&mut g, "50-44");
        assert_eq!(g.outcome(), None);
        play(&mut g, "7-1");
        assert_eq!(g.counters().endgame, 10);
        assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::TwoVsOne)));
    }

    #[test]
    fn sixteen_move_rule_and_no_progress() {
        // Three kings against one: 16 moves each.
        let rules = without_repetition(Rules::FMJD);
        let mut g = Game::from_position(Position::from_fen("W:WK50,K46,K49:BK1").unwrap(), rules);
        for i in 0..32 {
            assert_eq!(g.outcome(), None, "ply {i}");
            let t = if i % 4 == 0 { "50-44" } else if i % 4 == 2 { "44-50" } else if i % 4 == 1 { "1-7" } else { "7-1" };
            play(&mut g, t);
        }
        assert_eq!(g.counters().endgame, 32);
        assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::ThreeVsOne)));
        // Four kings against one: no ending rule; only kings moved, so 25 moves each draw.
        let mut g = Game::from_position(Position::from_fen("W:WK50,K46,K49,K48:BK1").unwrap(), rules);
        for i in 0..50 {
            assert_eq!(g.outcome(), None, "ply {i}");
            let t = if i % 4 == 0 { "50-44" } else if i % 4 == 2 { "44-50" } else if i % 4 == 1 { "1-7" } else { "7-1" };
            play(&mut g, t);
        }
        assert_eq!(g.counters().endgame, 0);
        assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::NoProgress)));
        // The no-capture-25 preset draws the same way, counting only captures.
        let mut g = Game::from_position(Position::from_fen("W:WK50,K46,K49,K48:BK1").unwrap(), Rules::NO_CAPTURE_25);
        for _ in 0..12 {
            play(&mut g, "50-44 1-7 44-50 7-1");
        }
        play(&mut g, "50-44");
        assert_eq!(g.outcome(), None);
        play(&mut g, "1-7");
        assert_eq!(g.outcome(), Some(Outcome::Draw(DrawReason::NoCapture)));
    }

    #[test]
    fn no_pieces_and_no_moves() {
        let mut g = Game::from_position(Position::from_fen("W:W28:B23").unwrap(), Rules::FMJD);
        play(&mut g, "28x19");
        assert_eq!(g.outcome(), Some(Outcome::Win { winner: Color::White, reason: WinReason::NoPieces }));
        // Black man on 45 is blocked by the white man on 50 and cannot take it: no move.
        let g = Game::from_position(Position::from_fen("B:W50:B45").unwrap(), Rules::FMJD);
        assert_eq!(g.outcome(), Some(Outcome::Win { winner: Color::White, reason: WinReason::NoMoves }));
    }

    #[test]
    fn undo_restores_everything() {
        let mut g = Game::new(Rules::FMJD);
        play(&mut g, "32-28 19-23 28x19 14x23");
        let (pos, hash, counters) = (*g.position(), g.hash(), g.counters());
        play(&mut g, "37-32");
        assert_eq!(g.undo().map(|m| m.to_hub()), Some("37-32".to_owned()));
        assert_eq!((*g.position(), g.hash(), g.counters()), (pos, hash, counters));
        while g.undo().is_some() {}
        assert_eq!(*g.position(), Position::start());
        assert_eq!(g.hash(), Position::start().hash());
    }
}
