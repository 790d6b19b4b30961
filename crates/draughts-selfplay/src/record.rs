//! Training records: what self-play keeps of each searched position, and of each game.
//!
//! Positions are stored compactly and re-encoded into network inputs at training time, so the
//! input encoding can change without regenerating data. Moves are stored as (from, to, captured
//! set) by square number: that triple is a move's identity under the FMJD rules, so it does not
//! depend on the order in which moves are generated nor on the engine's bit layout.

use std::fmt;

use draughts_core::{Bitboard, Color, Counters, DrawReason, Move, Outcome, Position, Rules, Square, WinReason};
use draughts_pdn::GameResult;

use crate::codec::{DecodeError, Put, Reader};

/// A move as stored in a record: from, to and the captured squares.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct MoveKey {
    /// The square the moving piece starts on.
    pub from: Square,
    /// The square it ends on.
    pub to: Square,
    /// The pieces taken (empty for a quiet move).
    pub captured: Bitboard,
}

impl From<Move> for MoveKey {
    fn from(mv: Move) -> MoveKey {
        MoveKey { from: mv.from(), to: mv.to(), captured: mv.captured() }
    }
}

impl MoveKey {
    /// Whether `mv` is this move.
    pub fn matches(&self, mv: &Move) -> bool {
        mv.from() == self.from && mv.to() == self.to && mv.captured() == self.captured
    }
}

impl fmt::Display for MoveKey {
    /// Hub notation, as [`Move`] writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.captured.any() {
            write!(f, "{}x{}", self.from, self.to)?;
            for sq in self.captured {
                write!(f, "x{sq}")?;
            }
            Ok(())
        } else {
            write!(f, "{}-{}", self.from, self.to)
        }
    }
}

/// One entry of a sparse policy target: a move and its probability, quantised to 16 bits.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct PolicyEntry {
    /// The move.
    pub mv: MoveKey,
    /// The probability times 65535. The weights of a record sum to exactly 65535.
    pub weight: u16,
}

impl PolicyEntry {
    /// The probability, in [0, 1].
    pub fn prob(&self) -> f32 {
        self.weight as f32 / POLICY_SCALE as f32
    }
}

/// The sum of a record's policy weights.
pub const POLICY_SCALE: u32 = u16::MAX as u32;

/// Quantises a policy (non-negative weights, any positive total) to entries whose weights sum
/// to exactly [`POLICY_SCALE`] (largest-remainder rounding). A policy with no positive finite
/// weight becomes uniform.
pub fn quantise_policy(policy: &[(Move, f32)]) -> Vec<PolicyEntry> {
    let n = policy.len();
    if n == 0 {
        return Vec::new();
    }
    let clean = |p: f32| if p.is_finite() && p > 0.0 { p as f64 } else { 0.0 };
    let total: f64 = policy.iter().map(|&(_, p)| clean(p)).sum();
    let exact: Vec<f64> = if total > 0.0 {
        policy.iter().map(|&(_, p)| clean(p) / total * POLICY_SCALE as f64).collect()
    } else {
        vec![POLICY_SCALE as f64 / n as f64; n]
    };
    let mut weights: Vec<u32> = exact.iter().map(|x| x.floor() as u32).collect();
    let assigned: u32 = weights.iter().sum();
    // Hand the rounding remainder out by largest fractional part (first index on ties).
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| (exact[b] - exact[b].floor()).total_cmp(&(exact[a] - exact[a].floor())).then(a.cmp(&b)));
    for &i in order.iter().cycle().take(POLICY_SCALE.saturating_sub(assigned) as usize) {
        weights[i] += 1;
    }
    policy
        .iter()
        .zip(weights)
        .map(|(&(mv, _), w)| PolicyEntry { mv: mv.into(), weight: w.min(POLICY_SCALE) as u16 })
        .collect()
}

/// A game result from one side's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Wdl {
    /// The side won.
    Win,
    /// Drawn (by a rule, or adjudicated).
    Draw,
    /// The side lost (or resigned).
    Loss,
}

impl Wdl {
    /// One-hot `[win, draw, loss]`.
    pub fn one_hot(self) -> [f32; 3] {
        match self {
            Wdl::Win => [1.0, 0.0, 0.0],
            Wdl::Draw => [0.0, 1.0, 0.0],
            Wdl::Loss => [0.0, 0.0, 1.0],
        }
    }

    /// The result for `side` of a game won by `winner` (`None`: drawn).
    pub fn for_side(winner: Option<Color>, side: Color) -> Wdl {
        match winner {
            None => Wdl::Draw,
            Some(w) if w == side => Wdl::Win,
            Some(_) => Wdl::Loss,
        }
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(c: u8) -> Option<Wdl> {
        [Wdl::Win, Wdl::Draw, Wdl::Loss].get(c as usize).copied()
    }
}

/// Facts about a record, as bits.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RecordFlags(pub u8);

impl RecordFlags {
    /// The position got the full search budget (a policy training target). Clear: a fast search
    /// (recorded only with `record_fast_searches`).
    pub const FULL_SEARCH: RecordFlags = RecordFlags(1);
    /// The game was a resignation playthrough (resignation disabled).
    pub const PLAYTHROUGH: RecordFlags = RecordFlags(2);
    /// In a playthrough game, the position comes at or after the ply where a side would have
    /// resigned (trainers may weigh such positions down).
    pub const PAST_RESIGNATION: RecordFlags = RecordFlags(4);
    /// The game was adjudicated a draw at `max_plies`.
    pub const MAX_PLIES: RecordFlags = RecordFlags(8);
    /// The game ended by resignation.
    pub const RESIGNED: RecordFlags = RecordFlags(16);
    /// The position is quiet: the side to move has no capture (shard format 2). These are the
    /// only positions an alpha-beta search evaluates.
    pub const QUIET: RecordFlags = RecordFlags(32);
    /// Every bit the format defines.
    pub const ALL: RecordFlags = RecordFlags(63);

    /// Whether every bit of `other` is set.
    pub fn contains(self, other: RecordFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// `self` with the bits of `other` set as `on` says.
    pub fn with(self, other: RecordFlags, on: bool) -> RecordFlags {
        RecordFlags(if on { self.0 | other.0 } else { self.0 & !other.0 })
    }
}

/// One searched position with its training targets.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingRecord {
    /// The position (board and side to move).
    pub position: Position,
    /// The draw-rule counters of the game state.
    pub counters: Counters,
    /// How many times the position had occurred in the game, this time included.
    pub repetitions: u8,
    /// Plies played in the game before this position (random opening plies included).
    pub ply: u16,
    /// Plies from this position to the end of the game.
    pub moves_left: u16,
    /// The search's policy target over the legal moves.
    pub policy: Vec<PolicyEntry>,
    /// The game's final result for the side to move.
    pub result: Wdl,
    /// The search's root win/draw/loss estimate for the side to move.
    pub root_wdl: [f32; 3],
    /// Flags, see [`RecordFlags`].
    pub flags: RecordFlags,
}

/// A record whose policy names a move that is not legal in its position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("policy move {mv} is not legal in {fen}")]
pub struct NotLegal {
    /// The move, in Hub notation.
    pub mv: String,
    /// The record's position.
    pub fen: String,
}

impl TrainingRecord {
    /// The search's root value, `win - loss` for the side to move.
    pub fn root_value(&self) -> f32 {
        self.root_wdl[0] - self.root_wdl[2]
    }

    /// The policy target resolved against the position's legal moves under `rules`: every entry
    /// must name a legal move.
    pub fn policy_moves(&self, rules: &Rules) -> Result<Vec<(Move, f32)>, NotLegal> {
        let legal = self.position.legal_moves_with(rules);
        self.policy
            .iter()
            .map(|e| match legal.iter().find(|m| e.mv.matches(m)) {
                Some(m) => Ok((*m, e.prob())),
                None => Err(NotLegal { mv: e.mv.to_string(), fen: self.position.to_fen() }),
            })
            .collect()
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        let p = &self.position;
        out.put_u64(canonical(p.pieces(Color::White)));
        out.put_u64(canonical(p.pieces(Color::Black)));
        out.put_u64(canonical(p.all_kings()));
        out.put_u8(color_code(p.side_to_move()));
        out.put_u8(self.repetitions);
        out.put_u16(self.counters.no_progress);
        out.put_u16(self.counters.no_capture);
        out.put_u16(self.counters.endgame);
        out.put_u16(self.ply);
        out.put_u16(self.moves_left);
        out.put_u8(self.result.code());
        out.put_u8(self.flags.0);
        for x in self.root_wdl {
            out.put_f32(x);
        }
        // Invariant: a position has far fewer than 65536 legal moves; longer lists are cut.
        let n = self.policy.len().min(u16::MAX as usize);
        out.put_u16(n as u16);
        for e in &self.policy[..n] {
            let capture = e.mv.captured.any();
            out.put_u8(e.mv.from.number() | if capture { CAPTURE_BIT } else { 0 });
            out.put_u8(e.mv.to.number());
            out.put_u16(e.weight);
            if capture {
                out.put_u64(canonical(e.mv.captured));
            }
        }
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<TrainingRecord, DecodeError> {
        let at = r.offset();
        let white = bitboard(r)?;
        let black = bitboard(r)?;
        let kings = bitboard(r)?;
        let side_at = r.offset();
        let side = match r.u8()? {
            0 => Color::White,
            1 => Color::Black,
            c => return r.invalid(side_at, format!("side to move {c} (0 white, 1 black)")),
        };
        if kings.0 & !(white.0 | black.0) != 0 {
            return r.invalid(at, "a king on an empty square");
        }
        let position = match Position::from_pieces(white & !kings, white & kings, black & !kings, black & kings, side) {
            Ok(p) => p,
            Err(e) => return r.invalid(at, format!("bad position: {e}")),
        };
        let repetitions = r.u8()?;
        let counters = Counters { no_progress: r.u16()?, no_capture: r.u16()?, endgame: r.u16()? };
        let ply = r.u16()?;
        let moves_left = r.u16()?;
        let result_at = r.offset();
        let result = match Wdl::from_code(r.u8()?) {
            Some(w) => w,
            None => return r.invalid(result_at, "a result code other than 0, 1, 2"),
        };
        let flags_at = r.offset();
        let flags = RecordFlags(r.u8()?);
        if flags.0 & !RecordFlags::ALL.0 != 0 {
            return r.invalid(flags_at, format!("unknown record flags {:#04x}", flags.0));
        }
        let root_wdl = [r.f32()?, r.f32()?, r.f32()?];
        let n = r.u16()? as usize;
        let policy_at = r.offset();
        let mut policy = Vec::with_capacity(n.min(r.remaining() / 4));
        let mut sum = 0u32;
        for _ in 0..n {
            let sq_at = r.offset();
            let f = r.u8()?;
            let t = r.u8()?;
            let weight = r.u16()?;
            let (Some(from), Some(to)) = (Square::new(f & !CAPTURE_BIT), Square::new(t)) else {
                return r.invalid(sq_at, format!("move squares {} and {t} (squares are 1..=50)", f & !CAPTURE_BIT));
            };
            let captured = if f & CAPTURE_BIT != 0 { bitboard(r)? } else { Bitboard::EMPTY };
            sum += weight as u32;
            policy.push(PolicyEntry { mv: MoveKey { from, to, captured }, weight });
        }
        if n > 0 && sum != POLICY_SCALE {
            return r.invalid(policy_at, format!("policy weights sum to {sum}, not {POLICY_SCALE}"));
        }
        Ok(TrainingRecord { position, counters, repetitions, ply, moves_left, policy, result, root_wdl, flags })
    }
}

/// Set on the `from` byte of a policy entry when a captured-set field follows.
const CAPTURE_BIT: u8 = 0x80;

/// A bitboard in the file's layout: bit `n - 1` for square `n` (independent of the engine's
/// internal layout).
fn canonical(b: Bitboard) -> u64 {
    b.squares().fold(0, |acc, sq| acc | 1 << (sq.number() - 1))
}

fn bitboard(r: &mut Reader<'_>) -> Result<Bitboard, DecodeError> {
    let at = r.offset();
    let bits = r.u64()?;
    if bits >> 50 != 0 {
        return r.invalid(at, format!("bitboard {bits:#x} has bits beyond square 50"));
    }
    // Invariant: every bit below 50 names square bit + 1, which exists.
    Ok((0..50).filter(|i| bits >> i & 1 != 0).filter_map(|i| Square::new(i as u8 + 1)).collect())
}

fn color_code(c: Color) -> u8 {
    match c {
        Color::White => 0,
        Color::Black => 1,
    }
}

fn color_from(c: u8) -> Option<Color> {
    match c {
        0 => Some(Color::White),
        1 => Some(Color::Black),
        _ => None,
    }
}

/// How a self-play game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum GameEnd {
    /// By the rules: a side could not move, or a draw rule applied.
    Rules(Outcome),
    /// A side resigned.
    Resigned {
        /// The side that resigned.
        loser: Color,
    },
    /// Adjudicated a draw at `max_plies`.
    MaxPlies,
    /// Adjudicated by the endgame databases when the game reached them.
    Egtb {
        /// The winner; `None` for a draw.
        winner: Option<Color>,
    },
}

impl GameEnd {
    /// The winner; `None` for a draw.
    pub fn winner(&self) -> Option<Color> {
        match *self {
            GameEnd::Rules(Outcome::Win { winner, .. }) => Some(winner),
            GameEnd::Resigned { loser } => Some(!loser),
            GameEnd::Egtb { winner } => winner,
            GameEnd::Rules(Outcome::Draw(_)) | GameEnd::MaxPlies => None,
        }
    }

    /// The PDN result.
    pub fn pdn_result(&self) -> GameResult {
        match self.winner() {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }

    /// The score for White: 1, 0.5 or 0.
    pub fn white_score(&self) -> f64 {
        match self.winner() {
            Some(Color::White) => 1.0,
            Some(Color::Black) => 0.0,
            None => 0.5,
        }
    }

    fn encode(&self) -> (u8, u8) {
        match *self {
            GameEnd::Rules(Outcome::Win { winner, reason }) => {
                (if reason == WinReason::NoPieces { 0 } else { 1 }, color_code(winner))
            }
            GameEnd::Rules(Outcome::Draw(reason)) => {
                let i = DRAW_REASONS.iter().position(|r| *r == reason).unwrap_or(0);
                (2 + i as u8, 0)
            }
            GameEnd::Resigned { loser } => (7, color_code(loser)),
            GameEnd::MaxPlies => (8, 0),
            // (Codes 9 and 10 came with endgame tables; shards without them read as before.)
            GameEnd::Egtb { winner: Some(c) } => (9, color_code(c)),
            GameEnd::Egtb { winner: None } => (10, 0),
        }
    }

    fn decode(code: u8, color: u8) -> Option<GameEnd> {
        Some(match code {
            0 | 1 => GameEnd::Rules(Outcome::Win {
                winner: color_from(color)?,
                reason: if code == 0 { WinReason::NoPieces } else { WinReason::NoMoves },
            }),
            2..=6 => GameEnd::Rules(Outcome::Draw(DRAW_REASONS[code as usize - 2])),
            7 => GameEnd::Resigned { loser: color_from(color)? },
            8 => GameEnd::MaxPlies,
            9 => GameEnd::Egtb { winner: Some(color_from(color)?) },
            10 => GameEnd::Egtb { winner: None },
            _ => return None,
        })
    }
}

const DRAW_REASONS: [DrawReason; 5] =
    [DrawReason::Repetition, DrawReason::NoProgress, DrawReason::NoCapture, DrawReason::ThreeVsOne, DrawReason::TwoVsOne];

impl fmt::Display for GameEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GameEnd::Rules(o) => write!(f, "{o}"),
            GameEnd::Resigned { loser } => write!(f, "{} resigned", loser.name()),
            GameEnd::MaxPlies => f.write_str("draw adjudicated at the ply limit"),
            GameEnd::Egtb { winner: Some(c) } => write!(f, "{} wins by the endgame tables", c.name()),
            GameEnd::Egtb { winner: None } => f.write_str("draw by the endgame tables"),
        }
    }
}

/// Where a side resigned, or would have resigned in a playthrough game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct ResignPoint {
    /// The ply (plies played before the position where the decision was taken).
    pub ply: u16,
    /// The side that resigned, or would have.
    pub loser: Color,
}

/// What a shard keeps of each game (its records follow in the shard's record list).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct GameSummary {
    /// The game's index in its run (its seed derives from this and the master seed).
    pub index: u64,
    /// The game's seed.
    pub seed: u64,
    /// Plies played, random opening plies included.
    pub plies: u16,
    /// Random opening plies at the start.
    pub opening_plies: u16,
    /// Records the game contributed (consecutive in the shard, in game order).
    pub records: u32,
    /// How the game ended.
    pub end: GameEnd,
    /// Resignation was disabled for this game.
    pub playthrough: bool,
    /// Where a side resigned (resigned games) or would have (playthrough games).
    pub resign: Option<ResignPoint>,
}

impl GameSummary {
    /// For a playthrough game that would have resigned: whether resigning would have been right
    /// (the side that would have resigned went on to lose). `None` otherwise.
    pub fn resign_correct(&self) -> Option<bool> {
        let r = self.resign.filter(|_| self.playthrough)?;
        Some(self.end.winner() == Some(!r.loser))
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) {
        out.put_u64(self.index);
        out.put_u64(self.seed);
        out.put_u16(self.plies);
        out.put_u16(self.opening_plies);
        out.put_u32(self.records);
        let (code, color) = self.end.encode();
        out.put_u8(code);
        out.put_u8(color);
        out.put_u8(self.playthrough as u8 | (self.resign.is_some() as u8) << 1);
        let r = self.resign.unwrap_or(ResignPoint { ply: 0, loser: Color::White });
        out.put_u16(r.ply);
        out.put_u8(color_code(r.loser));
    }

    pub(crate) fn decode(r: &mut Reader<'_>) -> Result<GameSummary, DecodeError> {
        let index = r.u64()?;
        let seed = r.u64()?;
        let plies = r.u16()?;
        let opening_plies = r.u16()?;
        let records = r.u32()?;
        let end_at = r.offset();
        let (code, color) = (r.u8()?, r.u8()?);
        let Some(end) = GameEnd::decode(code, color) else {
            return r.invalid(end_at, format!("game end code {code} with colour {color}"));
        };
        let flags_at = r.offset();
        let flags = r.u8()?;
        if flags & !3 != 0 {
            return r.invalid(flags_at, format!("unknown game flags {flags:#04x}"));
        }
        let ply = r.u16()?;
        let loser_at = r.offset();
        let Some(loser) = color_from(r.u8()?) else {
            return r.invalid(loser_at, "a colour other than 0 or 1");
        };
        let resign = (flags & 2 != 0).then_some(ResignPoint { ply, loser });
        Ok(GameSummary { index, seed, plies, opening_plies, records, end, playthrough: flags & 1 != 0, resign })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantised_policy_sums_exactly() {
        let pos = Position::start();
        let moves = pos.legal_moves_with(&Rules::FMJD);
        let cases: Vec<Vec<f32>> = vec![
            vec![1.0 / 9.0; 9],
            vec![0.5, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            (1..=9).map(|i| i as f32 * 0.013).collect(),
            vec![0.0; 9],
            vec![f32::NAN, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        ];
        for probs in cases {
            let policy: Vec<(Move, f32)> = moves.iter().copied().zip(probs.iter().copied()).collect();
            let q = quantise_policy(&policy);
            assert_eq!(q.iter().map(|e| e.weight as u32).sum::<u32>(), POLICY_SCALE, "{probs:?}");
            let total: f32 = probs.iter().filter(|p| p.is_finite()).sum();
            for (e, &(mv, p)) in q.iter().zip(&policy) {
                assert!(e.mv.matches(&mv));
                let want = if total > 0.0 { if p.is_finite() { p / total } else { 0.0 } } else { 1.0 / 9.0 };
                assert!((e.prob() - want).abs() < 2.0 / POLICY_SCALE as f32, "{} vs {want}", e.prob());
            }
        }
        assert!(quantise_policy(&[]).is_empty());
    }

    #[test]
    fn canonical_bitboards_are_square_numbers() {
        let b: Bitboard = [1, 11, 50].into_iter().filter_map(Square::new).collect();
        assert_eq!(canonical(b), 1 | 1 << 10 | 1 << 49);
        let mut buf = Vec::new();
        buf.put_u64(canonical(b));
        assert_eq!(bitboard(&mut Reader::new(&buf, 0)), Ok(b));
        let mut buf = Vec::new();
        buf.put_u64(1 << 50);
        assert!(matches!(bitboard(&mut Reader::new(&buf, 0)), Err(DecodeError::Invalid { .. })));
    }

    #[test]
    fn game_end_codes_round_trip() {
        let mut ends = vec![
            GameEnd::MaxPlies,
            GameEnd::Resigned { loser: Color::Black },
            GameEnd::Egtb { winner: Some(Color::White) },
            GameEnd::Egtb { winner: Some(Color::Black) },
            GameEnd::Egtb { winner: None },
        ];
        for winner in [Color::White, Color::Black] {
            for reason in [WinReason::NoPieces, WinReason::NoMoves] {
                ends.push(GameEnd::Rules(Outcome::Win { winner, reason }));
            }
        }
        ends.extend(DRAW_REASONS.iter().map(|r| GameEnd::Rules(Outcome::Draw(*r))));
        for end in ends {
            let (c, k) = end.encode();
            assert_eq!(GameEnd::decode(c, k), Some(end));
        }
        assert_eq!(GameEnd::decode(11, 0), None);
        assert_eq!(GameEnd::decode(9, 2), None);
    }
}
