//! An exact evaluator for tiny endgames, for tests: solves the position by exhaustive search.

use std::collections::HashMap;
use std::sync::Mutex;

use draughts_core::{Color, Counters, DrawRules, Move, MoveList, Position, Rules};

use crate::evaluator::{EvalError, EvalRequest, Evaluation, Evaluator, Material};

/// Which policy [`ExactEndgame`] returns for a solved position.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum ExactPolicy {
    /// All mass spread evenly over the moves that reach the position's value (the winning moves
    /// of a won position, the drawing moves of a drawn one, every move of a lost one).
    #[default]
    Best,
    /// Uniform over all legal moves: the search has to find the good moves from the values alone.
    Uniform,
    /// `Best` with weight `w`, `Uniform` with weight `1 - w`: a policy that points the right way
    /// without deciding alone.
    Blend(f32),
}

/// The game-theoretic value of a position for the side to move, within a horizon.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Solved {
    /// The side to move loses.
    Loss = -1,
    /// Neither side can force a win within the horizon (a draw by the rules, or undecided).
    Draw = 0,
    /// The side to move wins.
    Win = 1,
}

impl Solved {
    fn negate(self) -> Solved {
        match self {
            Solved::Loss => Solved::Win,
            Solved::Draw => Solved::Draw,
            Solved::Win => Solved::Loss,
        }
    }

    /// `[1,0,0]`, `[0,1,0]` or `[0,0,1]`.
    pub fn wdl(self) -> [f32; 3] {
        match self {
            Solved::Win => [1.0, 0.0, 0.0],
            Solved::Draw => [0.0, 1.0, 0.0],
            Solved::Loss => [0.0, 0.0, 1.0],
        }
    }
}

/// Memo key: the position and the counters that can still matter within the horizon.
type Key = (Position, [u16; 3]);

/// What the memo knows about a state.
#[derive(Clone, Copy, Debug)]
enum Known {
    /// Won or lost for the side to move, proven by a search of this many plies; the result
    /// holds for every horizon at least as long.
    Decided(Solved, u16),
    /// Not decided by a search of this many plies; a draw for every horizon up to it.
    Undecided(u16),
}

/// A cheap hasher for memo keys (the default SipHash dominates the solver's time in debug
/// builds). Keys are not attacker-controlled.
#[derive(Default)]
struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(23) ^ x).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u16(&mut self, x: u16) {
        self.write_u64(x as u64);
    }
    fn write_u8(&mut self, x: u8) {
        self.write_u64(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.write_u64(x as u64);
    }
}

type Memo = HashMap<Key, Known, std::hash::BuildHasherDefault<FastHasher>>;

/// Solves positions with at most `max_pieces` pieces by a depth-limited exhaustive search with
/// memoisation, under the counter-based draw rules of `rules` (the 25-move rule, the 16- and
/// 5-move rules, no-capture limits). Positions with more pieces get the [`Material`] evaluation.
///
/// Limits, by design (it is a test oracle, not an endgame database):
/// - the answer is exact when the game is decided within `max_plies` plies; a position that no
///   side can win within the horizon is called a draw;
/// - the repetition rule is not applied: an evaluator sees no game history, and repetition inside
///   the horizon would make the memo unsound. A threefold repetition needs at least eight plies,
///   so horizons under eight plies from a fresh position are unaffected.
#[derive(Debug)]
pub struct ExactEndgame {
    rules: Rules,
    max_pieces: u32,
    max_plies: u16,
    policy: ExactPolicy,
    fallback: Material,
    memo: Mutex<Memo>,
}

/// Entries kept before the memo is cleared (about 60 bytes each).
const MEMO_LIMIT: usize = 4_000_000;

impl ExactEndgame {
    /// A solver under `rules` for positions with at most 4 pieces, horizon 12 plies, policy
    /// concentrated on the best moves.
    pub fn new(rules: Rules) -> ExactEndgame {
        ExactEndgame {
            rules,
            max_pieces: 4,
            max_plies: 12,
            policy: ExactPolicy::Best,
            fallback: Material::default(),
            memo: Mutex::new(Memo::default()),
        }
    }

    /// The same solver with another horizon in plies.
    pub fn with_max_plies(mut self, plies: u16) -> ExactEndgame {
        self.max_plies = plies;
        self
    }

    /// The same solver for positions with at most `n` pieces.
    pub fn with_max_pieces(mut self, n: u32) -> ExactEndgame {
        self.max_pieces = n;
        self
    }

    /// The same solver with another policy.
    pub fn with_policy(mut self, policy: ExactPolicy) -> ExactEndgame {
        self.policy = policy;
        self
    }

    /// The value of `position` with `counters` for the side to move, and the value of each legal
    /// move for the side that plays it (in legal-move order), or `None` when the position has more
    /// than `max_pieces` pieces.
    pub fn solve(&self, position: &Position, counters: Counters) -> Option<(Solved, Vec<(Move, Solved)>)> {
        if position.piece_count() > self.max_pieces {
            return None;
        }
        let mut memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        if memo.len() > MEMO_LIMIT {
            memo.clear();
        }
        let rules = self.solver_rules();
        let root = State { pos: *position, c: counters };
        let mut children = Vec::new();
        let mut moves = MoveList::new();
        position.generate_moves(rules.promote_during_capture, &mut moves);
        if moves.is_empty() || root.is_draw(&rules) {
            let v = if moves.is_empty() { Solved::Loss } else { Solved::Draw };
            return Some((v, children));
        }
        let mut best = Solved::Loss;
        for mv in moves {
            let next = root.play(&mv);
            let v = negamax(&next, &rules, self.max_plies.saturating_sub(1), self.max_plies, &mut memo).negate();
            best = best.max(v);
            children.push((mv, v));
        }
        Some((best, children))
    }

    fn solver_rules(&self) -> Rules {
        Rules { draw: DrawRules { repetition: None, ..self.rules.draw }, ..self.rules }
    }

    fn evaluate_one(&self, req: &EvalRequest) -> Evaluation {
        let Some((value, children)) = self.solve(&req.position, req.counters) else {
            return self.fallback.evaluate_one(req);
        };
        let n = req.moves.len();
        let policy = match self.policy {
            ExactPolicy::Uniform => vec![1.0 / n as f32; n],
            ExactPolicy::Best | ExactPolicy::Blend(_) => {
                // `solve` lists the moves in legal-move order, which is the request's order when
                // the request came from the same rules; look moves up to be safe.
                let best: Vec<bool> = req
                    .moves
                    .iter()
                    .map(|m| children.iter().any(|(c, v)| c == m && *v == value))
                    .collect();
                let k = best.iter().filter(|b| **b).count();
                let w = match self.policy {
                    ExactPolicy::Blend(w) if (0.0..=1.0).contains(&w) => w,
                    ExactPolicy::Blend(_) => 0.0,
                    _ => 1.0,
                };
                let uniform = (1.0 - w) / n as f32;
                if k == 0 {
                    vec![1.0 / n as f32; n]
                } else {
                    best.iter().map(|&b| uniform + if b { w / k as f32 } else { 0.0 }).collect()
                }
            }
        };
        Evaluation { policy, wdl: value.wdl(), moves_left: None }
    }
}

impl Evaluator for ExactEndgame {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        Ok(batch.iter().map(|r| self.evaluate_one(r)).collect())
    }
}

/// Replaces a counter that cannot reach its limit within `horizon` plies by a sentinel, so that
/// states that differ only in such counters share a memo entry.
fn relevant(counter: u16, limit: Option<u16>, horizon: u16) -> u16 {
    match limit {
        Some(l) if counter.saturating_add(horizon) >= l => counter,
        _ => u16::MAX,
    }
}

fn key(s: &State, rules: &Rules, horizon: u16) -> Key {
    let d = &rules.draw;
    let c = s.c;
    let ending = match (d.three_vs_one_plies, d.two_vs_one_plies) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    (
        s.pos,
        [
            relevant(c.no_progress, d.no_progress_plies, horizon),
            relevant(c.no_capture, d.no_capture_plies, horizon),
            relevant(c.endgame, ending, horizon),
        ],
    )
}

/// A lone-king ending in which the 16-move (`ThreeVsOne`) or 5-move (`TwoVsOne`) rule counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    ThreeVsOne,
    TwoVsOne,
}

/// The same classification as `draughts_core::Game` (one lone king against three pieces, or
/// against at most two, with at least one king). The solver keeps its own lean state instead of
/// a `Game`, whose history and checks cost more than the solving; a test compares the two.
fn ending(pos: &Position) -> Option<Ending> {
    for c in [Color::White, Color::Black] {
        if pos.pieces(c).count() == 1 && pos.kings(c).count() == 1 && pos.kings(!c).any() {
            match pos.pieces(!c).count() {
                3 => return Some(Ending::ThreeVsOne),
                0..=2 => return Some(Ending::TwoVsOne),
                _ => {}
            }
        }
    }
    None
}

/// Position and draw-rule counters: the state the solver searches (no history: the repetition
/// rule is not applied).
#[derive(Clone, Copy, Debug)]
struct State {
    pos: Position,
    c: Counters,
}

impl State {
    /// The counters are updated as `Game::play_unchecked` does.
    fn play(&self, mv: &Move) -> State {
        let next = self.pos.play(mv);
        let c = &self.c;
        let (old, new) = (ending(&self.pos), ending(&next));
        State {
            pos: next,
            c: Counters {
                no_capture: if mv.is_capture() { 0 } else { c.no_capture.saturating_add(1) },
                no_progress: if mv.is_irreversible() { 0 } else { c.no_progress.saturating_add(1) },
                endgame: if new.is_some() && new == old { c.endgame.saturating_add(1) } else { 0 },
            },
        }
    }

    /// Whether a counter-based draw rule ends the game here (`Game::draw_reason` without the
    /// repetition rule).
    fn is_draw(&self, rules: &Rules) -> bool {
        let d = &rules.draw;
        let c = &self.c;
        if d.no_progress_plies.is_some_and(|n| c.no_progress >= n) || d.no_capture_plies.is_some_and(|n| c.no_capture >= n) {
            return true;
        }
        match ending(&self.pos) {
            Some(Ending::ThreeVsOne) => d.three_vs_one_plies.is_some_and(|n| c.endgame >= n),
            Some(Ending::TwoVsOne) => d.two_vs_one_plies.is_some_and(|n| c.endgame >= n),
            None => false,
        }
    }
}

/// The value for the side to move with `depth` plies left, under the counter-based draw rules.
/// `horizon` bounds every `depth` the memo is used with.
///
/// Wins and losses are monotone in the depth (a forced win within k plies is one within any
/// longer horizon), and "undecided within k" holds for every shorter horizon: that is what lets
/// one memo entry serve searches of different depths.
fn negamax(s: &State, rules: &Rules, depth: u16, horizon: u16, memo: &mut Memo) -> Solved {
    let mut moves = MoveList::new();
    s.pos.generate_moves(rules.promote_during_capture, &mut moves);
    if moves.is_empty() {
        return Solved::Loss;
    }
    if depth == 0 || s.is_draw(rules) {
        return Solved::Draw;
    }
    let k = key(s, rules, horizon);
    match memo.get(&k) {
        Some(&Known::Decided(v, d)) if d <= depth => return v,
        Some(&Known::Undecided(d)) if d >= depth => return Solved::Draw,
        _ => {}
    }
    let mut best = Solved::Loss;
    for mv in &moves {
        let v = negamax(&s.play(mv), rules, depth - 1, horizon, memo).negate();
        best = best.max(v);
        if best == Solved::Win {
            break;
        }
    }
    let known = if best == Solved::Draw { Known::Undecided(depth) } else { Known::Decided(best, depth) };
    memo.insert(k, known);
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn solve(fen: &str, plies: u16) -> Solved {
        let e = ExactEndgame::new(Rules::FMJD).with_max_plies(plies);
        e.solve(&Position::from_fen(fen).unwrap(), Counters::default()).unwrap().0
    }

    #[test]
    fn basic_values() {
        // White takes the last black man.
        assert_eq!(solve("W:W28:B23", 2), Solved::Win);
        // Black to move has no move.
        assert_eq!(solve("B:W50:B45", 2), Solved::Loss);
        // Black to move must take 28 and lose its man? 23x32, then White has nothing: Black wins.
        assert_eq!(solve("B:W28:B23", 2), Solved::Win);
        // Horizon 0 below the root: no decision, a draw.
        assert_eq!(solve("W:W46:B5", 2), Solved::Draw);
    }

    #[test]
    fn five_move_rule_draws() {
        // One king against king and man with the 5-move count at 9 plies: every move draws.
        let e = ExactEndgame::new(Rules::FMJD);
        let pos = Position::from_fen("W:WK50:BK1,3").unwrap();
        let c = Counters { endgame: 9, ..Counters::default() };
        let (v, children) = e.solve(&pos, c).unwrap();
        assert_eq!(v, Solved::Draw);
        assert!(children.iter().all(|(_, v)| *v == Solved::Draw));
    }

    #[test]
    fn lean_state_matches_game() {
        use draughts_core::Game;
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let rules = Rules { draw: DrawRules { repetition: None, ..Rules::FMJD.draw }, ..Rules::FMJD };
        let starts = ["W:WK46,K50:BK1,5", "W:WK46,K50,K48:BK1", "W:W28,K50:BK3,12", "W:W31-50:B1-20"];
        let mut draws = 0;
        for i in 0..60 {
            let start = Position::from_fen(starts[i % starts.len()]).unwrap();
            let mut g = Game::from_position(start, rules);
            let mut s = State { pos: start, c: Counters::default() };
            for _ in 0..200 {
                assert_eq!((g.position(), g.counters()), (&s.pos, s.c));
                assert_eq!(g.draw_reason().is_some(), s.is_draw(&rules));
                if g.outcome().is_some() {
                    draws += g.draw_reason().is_some() as u32;
                    break;
                }
                let moves = g.legal_moves();
                let mv = moves[rng.gen_range(0..moves.len())];
                g.play_unchecked(mv);
                s = s.play(&mv);
            }
        }
        assert!(draws >= 5, "{draws}");
    }

    #[test]
    fn too_many_pieces_fall_back() {
        let e = ExactEndgame::new(Rules::FMJD);
        assert!(e.solve(&Position::start(), Counters::default()).is_none());
        let req = EvalRequest::new(Position::start(), &Rules::FMJD);
        let out = e.evaluate(&[req]).unwrap();
        assert_eq!(out[0].wdl, Evaluation::wdl_from_value(0.0));
    }
}
