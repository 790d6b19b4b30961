//! Iterative deepening principal-variation search.
//!
//! - Negamax, fail-soft, principal-variation search with aspiration windows around the previous
//!   iteration's score.
//! - Captures are forced in draughts (when one exists every legal move is a capture), so the
//!   horizon is a quiet position: at depth 0 or less the search goes on through captures, with
//!   no stand-pat, and returns the static evaluation only when the side to move has no capture.
//! - Move ordering: the transposition-table move, then captures (more kings taken first), then
//!   quiet promotions, two killer moves per ply and the history heuristic.
//! - Late quiet moves are searched one ply shallower (and re-searched at full depth when they
//!   beat alpha), except moves that let the opponent capture: those are the sacrifices every
//!   combination starts with, and they get the full depth.
//! - ProbCut at non-PV nodes of depth 3 or more without a capture to make, and the other
//!   techniques of [`SearchOptions`], each switched by name (off unless a match showed a gain).
//! - Draws inside the search: repetition (a position met again since the last irreversible move:
//!   twice inside the search tree, or as often as the rules say counting the game's earlier
//!   moves), and every draw-rule counter of [`Rules`], kept per node as the game keeps them. A
//!   side with no legal move has lost; wins and losses are scored by distance, so the engine
//!   takes the fastest win and the slowest loss.
//! - The transposition table ignores the draw-rule counters (as every engine does); to keep that
//!   sound enough, nodes whose counters could reach a limit within their depth neither take
//!   cutoffs from the table nor store scores in it.
//! - Threads (`SearchOptions::threads`, Lazy SMP): helper threads search the same root, every
//!   other one a ply deeper, sharing only the transposition table, which carries what each finds
//!   to the others; the main thread's result is the search's. One thread is the plain search.
//! - Nodes are counted the usual way: every call of the search function, leaves included. The
//!   search allocates nothing per node: move lists are [`MoveList`]s on the stack and the
//!   per-ply tables are allocated once per engine.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use draughts_core::{Bitboard, Color, Game, Move, MoveList, Outcome, Position, Rules};
use draughts_egtb::Wdl;
use draughts_nnue::{Network, Precision};
use smallvec::SmallVec;

use crate::endgames::{Endgames, RULE_MARGIN, TB_WIN};
use crate::eval::{Evaluator, Weights};
use crate::evaluation::{one_step_moves, Evaluation, HandMade, Learned};
use crate::limits::{Limits, Stability, TimePlan};
use crate::options::SearchOptions;
use crate::tt::{Bound, TranspositionTable, TtError, TtMove};

/// The score of a won position, less the plies to the win: a side to move with no legal move
/// scores `-MATE`, and a win in `n` plies scores `MATE - n`.
pub const MATE: i32 = 30_000;
/// Scores at least this far from zero are forced wins or losses.
pub const MATE_BOUND: i32 = MATE - 1_000;
const INF: i32 = MATE + 1;
/// The deepest ply the search reaches (captures beyond the horizon included).
pub const MAX_PLY: usize = 128;
/// The deepest iteration.
pub const MAX_DEPTH: u32 = 100;

/// Plies to a forced result: `Some(n)` when the side to move wins in `n` plies, `Some(-n)`
/// when it loses in `n` plies, `None` for an ordinary score.
pub fn mate_distance(score: i32) -> Option<i32> {
    if score >= MATE_BOUND {
        Some(MATE - score)
    } else if score <= -MATE_BOUND {
        Some(-(MATE + score))
    } else {
        None
    }
}

/// Engine settings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Transposition table size in MiB (at least 1).
    pub tt_mib: usize,
    /// Weights of the hand-made evaluation (used when `network` is `None`).
    pub weights: Weights,
    /// A learned evaluation: the sparse network replaces the hand-made evaluation.
    pub network: Option<Arc<Network>>,
    /// The search's optional techniques.
    pub options: SearchOptions,
    /// Endgame databases probed in the search (see [`Endgames`]).
    pub egtb: Option<Endgames>,
}

impl Default for EngineConfig {
    /// 16 MiB, the hand-made evaluation with its default weights.
    fn default() -> EngineConfig {
        EngineConfig { tt_mib: 16, weights: Weights::default(), network: None, options: SearchOptions::default(), egtb: None }
    }
}

impl EngineConfig {
    /// The default engine with the learned evaluation of `network` (and the search options of
    /// a network, [`SearchOptions::NETWORK`]).
    pub fn learned(network: Arc<Network>) -> EngineConfig {
        EngineConfig { network: Some(network), options: SearchOptions::NETWORK, ..EngineConfig::default() }
    }
}

/// Progress after each completed iteration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchInfo {
    /// Depth of the iteration.
    pub depth: u32,
    /// Deepest ply reached (captures beyond the horizon included).
    pub seldepth: u32,
    /// Score in centi-men from the side to move's point of view (see [`MATE`]).
    pub score: i32,
    /// Nodes so far.
    pub nodes: u64,
    /// Nodes per second so far.
    pub nps: u64,
    /// Time so far.
    pub time: Duration,
    /// Permille of the transposition table filled by this search (sampled).
    pub hashfull: u32,
    /// Principal variation.
    pub pv: Vec<Move>,
    /// Positions whose value came from the endgame databases so far.
    pub tbhits: u64,
}

/// What a search found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The move to play; `None` only when the game is over.
    pub best: Option<Move>,
    /// Score in centi-men from the side to move's point of view (see [`MATE`]); in a finished
    /// game, 0 for a draw and `-MATE` when the side to move has lost.
    pub score: i32,
    /// The last completed iteration (0 when none completed or the game is over).
    pub depth: u32,
    /// Deepest ply reached.
    pub seldepth: u32,
    /// Nodes searched (calls of the search function).
    pub nodes: u64,
    /// Principal variation, starting with `best`.
    pub pv: Vec<Move>,
    /// Time taken.
    pub time: Duration,
    /// Positions whose value came from the endgame databases.
    pub tbhits: u64,
}

/// The alpha-beta engine. It keeps its transposition table and history between searches of a
/// game; see [`Engine::search`] for when they are reset.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    evaluator: Evaluator,
    /// The learned evaluation's per-ply state, when the config has a network.
    learned: Option<Learned>,
    tt: TranspositionTable,
    tables: Tables,
    /// What each helper thread keeps between searches (`threads - 1` of them, made when a search
    /// first asks for them).
    helpers: Vec<Helper>,
}

/// A helper thread's own state: its per-search tables and its evaluation's per-ply state.
#[derive(Debug)]
struct Helper {
    tables: Tables,
    learned: Option<Learned>,
}

/// Which thread of a search a [`run`] is.
#[derive(Copy, Clone)]
struct Thread<'a> {
    /// 0 for the main thread.
    id: usize,
    /// Every thread's nodes, added 1024 at a time, when the search has more than one thread.
    shared_nodes: Option<&'a AtomicU64>,
}

impl Thread<'_> {
    const MAIN: Thread<'static> = Thread { id: 0, shared_nodes: None };
}

/// Per-search tables, allocated once and reused (the search itself allocates nothing).
struct Tables {
    /// Two quiet moves per ply as [`quiet_code`]s (0: none).
    killers: Vec<[u16; 2]>,
    /// Indexed by side, from bit, to bit.
    history: Vec<i32>,
    /// The `cont_history` option's table, indexed by side, the to bit of the opponent's last
    /// move, from bit, to bit (empty until a search asks for it).
    cont: Vec<i32>,
    /// The `corr_history` option's tables (empty until a search asks for them): by side to
    /// move and colour, an average correction of the static score in 1/[`CORR_GRAIN`] centi-men
    /// for each hashed configuration of that colour's men.
    corr: Vec<i32>,
    /// Triangular principal-variation table, one line per ply.
    pv: Vec<Vec<Move>>,
    /// Hashes of the game's positions since the last irreversible move, then of the search path.
    hashes: Vec<u64>,
}

impl std::fmt::Debug for Tables {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tables").field("plies", &self.killers.len()).finish_non_exhaustive()
    }
}

impl Tables {
    fn new() -> Tables {
        Tables {
            killers: vec![[0; 2]; MAX_PLY + 2],
            history: vec![0; 2 * 64 * 64],
            cont: Vec::new(),
            corr: Vec::new(),
            pv: (0..MAX_PLY + 2).map(|_| Vec::with_capacity(MAX_PLY + 2)).collect(),
            hashes: Vec::new(),
        }
    }
}

const HASH_KEY: i32 = i32::MAX;
const CAPTURE_KEY: i32 = 1 << 24;
const PROMOTION_KEY: i32 = 3 << 20;
const KILLER_KEY: i32 = 2 << 20;
const HISTORY_MAX: i32 = (1 << 20) - 1;
/// Squares 6..=10 and 41..=45: a man there may promote with a quiet move.
const BEFORE_WHITE_PROMOTION: Bitboard = Bitboard(0x1F << 5);
const BEFORE_BLACK_PROMOTION: Bitboard = Bitboard(0x1F << 44);
/// Beyond this score ProbCut is not tried (wins and losses are scored exactly).
const PROBCUT_SCORE_LIMIT: i32 = 5_000;
/// The depth of the nodes below a quiescence extension (`qs_threat`, `qs_promotions`): far below
/// any depth a capture sequence reaches from 0, so that each line gets at most one extension.
const QS_LAST: i32 = -1000;
/// [`Searcher::excluded`] when no move is left out.
const NO_EXCLUSION: u8 = u8::MAX;
/// No static score at this ply (`improving`).
const NO_STATIC: i32 = i32::MIN;
/// The least depth of a singular-extension test (`singular`).
const SINGULAR_DEPTH: i32 = 6;

/// Draw-rule counters of a node, kept as [`Game`] keeps them.
#[derive(Copy, Clone, Debug)]
struct Ctr {
    no_progress: u16,
    no_capture: u16,
    endgame: u16,
    /// 0: no lone-king ending, 1: one king against three pieces, 2: against at most two.
    ending: u8,
}

/// The lone-king ending of `pos`, as `draughts_core::Game` classifies it.
#[inline]
pub(crate) fn ending(pos: &Position) -> u8 {
    let lone = |c: Color| pos.pieces(c).count() == 1 && pos.kings(c).count() == 1;
    for c in [Color::White, Color::Black] {
        if lone(c) && pos.kings(!c).any() {
            let n = pos.pieces(!c).count();
            if n == 3 {
                return 1;
            } else if n <= 2 {
                return 2;
            }
        }
    }
    0
}

/// Scores from here up are mates or database wins, which count plies from the root: the table
/// stores them from the node instead.
const PLY_SCORE_BOUND: i32 = TB_WIN - MAX_PLY as i32;

#[inline]
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= PLY_SCORE_BOUND {
        score + ply as i32
    } else if score <= -PLY_SCORE_BOUND {
        score - ply as i32
    } else {
        score
    }
}

#[inline]
fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= PLY_SCORE_BOUND {
        score - ply as i32
    } else if score <= -PLY_SCORE_BOUND {
        score + ply as i32
    } else {
        score
    }
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Engine {
    /// An engine with a transposition table of `config.tt_mib` MiB.
    pub fn new(config: EngineConfig) -> Result<Engine, TtError> {
        let tt = TranspositionTable::new(config.tt_mib)?;
        let learned = config.network.clone().map(Learned::new);
        Ok(Engine { evaluator: Evaluator::new(&config.weights), learned, config, tt, tables: Tables::new(), helpers: Vec::new() })
    }

    /// The settings.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Changes the search options (the table and what it learnt are kept).
    pub fn set_options(&mut self, options: SearchOptions) {
        self.config.options = options;
    }

    /// Forgets everything learnt in earlier searches (transposition table, history).
    pub fn new_game(&mut self) {
        self.tt.clear();
        self.tables = Tables::new();
        self.helpers.iter_mut().for_each(|h| h.tables = Tables::new());
    }

    /// Searches the current position of `game` within `limits`, or until `stop` is set, calling
    /// `on_iteration` after each completed iteration.
    ///
    /// The game's earlier moves count for repetitions and its counters for the draw rules. In a
    /// finished game the result has no move. Otherwise it always has one, even when a limit
    /// stops the search before its first iteration completes.
    ///
    /// When `limits` has no time limit ([`Limits::is_deterministic`]) the search starts from a
    /// clean state (entries of earlier searches are invisible, history is cleared), so the
    /// result depends only on the game, the limits and the weights: the same move, score and
    /// node count every time. Time-limited searches keep what earlier searches learnt.
    pub fn search(
        &mut self,
        game: &Game,
        limits: &Limits,
        stop: &AtomicBool,
        on_iteration: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let opts = self.config.options;
        let precision = if opts.quantised { Precision::Int8 } else { Precision::Float };
        let helpers = (opts.threads.max(1) - 1) as usize;
        while self.helpers.len() < helpers {
            let learned = self.config.network.clone().map(Learned::new);
            self.helpers.push(Helper { tables: Tables::new(), learned });
        }
        self.tt.new_search(limits.is_deterministic() && helpers == 0);
        let Engine { tt, tables, evaluator, learned, config, helpers: helper_state } = self;
        let (tt, evaluator, egtb) = (&*tt, &*evaluator, config.egtb.as_ref());
        if let Some(l) = learned.as_mut() {
            l.set_precision(precision);
        }
        let mut main = |thread: Thread<'_>, on_iteration: &mut dyn FnMut(&SearchInfo)| match learned {
            Some(l) => run(tt, tables, l, opts, egtb, game, limits, stop, thread, on_iteration),
            None => run(tt, tables, HandMade(evaluator), opts, egtb, game, limits, stop, thread, on_iteration),
        };
        if helpers == 0 || game.outcome().is_some() {
            return main(Thread::MAIN, on_iteration);
        }
        // Lazy SMP: the helpers search until the main thread is done, without a time limit of
        // their own, and count their nodes into the same total.
        let done = AtomicBool::new(false);
        let shared_nodes = AtomicU64::new(0);
        let helper_limits = Limits { movetime: None, clock: None, noise: None, ..*limits };
        std::thread::scope(|scope| {
            let handles: Vec<_> = helper_state[..helpers]
                .iter_mut()
                .enumerate()
                .map(|(i, h)| {
                    let (done, shared_nodes, helper_limits) = (&done, &shared_nodes, &helper_limits);
                    scope.spawn(move || {
                        let thread = Thread { id: i + 1, shared_nodes: Some(shared_nodes) };
                        let noop = &mut |_: &SearchInfo| {};
                        let r = match h.learned.as_mut() {
                            Some(l) => {
                                l.set_precision(precision);
                                run(tt, &mut h.tables, l, opts, egtb, game, helper_limits, done, thread, noop)
                            }
                            None => run(tt, &mut h.tables, HandMade(evaluator), opts, egtb, game, helper_limits, done, thread, noop),
                        };
                        r
                    })
                })
                .collect();
            let mut result = main(Thread { id: 0, shared_nodes: Some(&shared_nodes) }, on_iteration);
            done.store(true, Ordering::Relaxed);
            for h in handles {
                let r = h.join().expect("a search thread panicked");
                result.nodes += r.nodes;
                result.tbhits += r.tbhits;
                result.seldepth = result.seldepth.max(r.seldepth);
            }
            result
        })
    }

    /// The score of the evaluation in use for `pos` (side to move's view, centi-men), without
    /// search.
    pub fn static_eval(&mut self, pos: &Position) -> i32 {
        match &mut self.learned {
            Some(l) => {
                l.set_precision(if self.config.options.quantised { Precision::Int8 } else { Precision::Float });
                l.evaluate_position(pos)
            }
            None => self.evaluator.evaluate(pos),
        }
    }
}

/// The body of [`Engine::search`] for one evaluation.
#[allow(clippy::too_many_arguments)]
fn run<E: Evaluation>(
    tt: &TranspositionTable,
    tables: &mut Tables,
    ev: E,
    opts: SearchOptions,
    egtb: Option<&Endgames>,
    game: &Game,
    limits: &Limits,
    stop: &AtomicBool,
    thread: Thread<'_>,
    on_iteration: &mut dyn FnMut(&SearchInfo),
) -> SearchResult {
    {
        let start = Instant::now();
        let pos = *game.position();
        if let Some(outcome) = game.outcome() {
            let score = match outcome {
                Outcome::Win { .. } => -MATE,
                Outcome::Draw(_) => 0,
            };
            return SearchResult {
                best: None,
                score,
                depth: 0,
                seldepth: 0,
                nodes: 0,
                pv: Vec::new(),
                time: start.elapsed(),
                tbhits: 0,
            };
        }

        let deterministic = limits.is_deterministic() && thread.shared_nodes.is_none();
        tables.killers.fill([0; 2]);
        if opts.cont_history && tables.cont.is_empty() {
            tables.cont = vec![0; CONT_SIZE];
        }
        if opts.corr_history && tables.corr.is_empty() {
            tables.corr = vec![0; 4 << CORR_BITS];
        }
        if deterministic {
            tables.history.fill(0);
            tables.cont.fill(0);
            tables.corr.fill(0);
        } else {
            tables.history.iter_mut().for_each(|h| *h /= 2);
            tables.cont.iter_mut().for_each(|h| *h /= 2);
        }
        // Positions since the last irreversible move can repeat; earlier ones cannot.
        let counters = game.counters();
        let window = (counters.no_progress as usize).min(game.ply());
        tables.hashes.clear();
        tables.hashes.extend(game.plies().skip(game.ply() - window).map(|(p, _)| p.hash()));
        let root_index = tables.hashes.len();
        tables.hashes.resize(root_index + MAX_PLY + 2, 0);

        let rules = *game.rules();
        let plan = TimePlan::new(limits).map(|mut p| {
            // At a fixed time per move (no clock to save time for), the whole move time.
            if opts.full_time && limits.clock.is_none() {
                p.soft = p.hard;
            }
            p
        });
        let mut s = Searcher {
            tt,
            t: tables,
            ev,
            rules,
            promote: rules.promote_during_capture,
            track_endings: rules.draw.three_vs_one_plies.is_some() || rules.draw.two_vs_one_plies.is_some(),
            stop,
            node_limit: limits.nodes.unwrap_or(u64::MAX).max(1),
            start,
            hard: plan.map(|p| p.hard),
            nodes: 0,
            aborted: false,
            seldepth: 0,
            root: root_index,
            limits: {
                let d = &rules.draw;
                let l = |x: Option<u16>| x.map_or(1 << 20, i32::from);
                [l(d.no_progress_plies), l(d.no_capture_plies), l(d.three_vs_one_plies), l(d.two_vs_one_plies)]
            },
            iter_best: None,
            opts,
            in_probcut: false,
            excluded: [NO_EXCLUSION; MAX_PLY + 2],
            prev_to: [0; MAX_PLY + 2],
            static_score: [NO_STATIC; MAX_PLY + 2],
            egtb,
            egtb_root: None,
            tb_hits: 0,
            shared_nodes: thread.shared_nodes,
            policy: Vec::new(),
        };
        let ctr = Ctr {
            no_progress: counters.no_progress,
            no_capture: counters.no_capture,
            endgame: counters.endgame,
            ending: ending(&pos),
        };
        let hash = game.hash();
        let mut root_moves: Vec<Move> = game.legal_moves().into_vec();
        // In the databases: only the moves that keep the root's value.
        if let Some(v) = s.egtb_value(&pos, &ctr, s.plies_to_rule(&ctr)) {
            if v != Wdl::Loss {
                let tb = s.egtb.expect("a value came from the databases").tablebase();
                let keep: Vec<Move> =
                    root_moves.iter().copied().filter(|m| tb.probe(&pos.play(m)).ok().map(Wdl::flip) == Some(v)).collect();
                if !keep.is_empty() {
                    root_moves = keep;
                }
            }
            let men = pos.piece_count() - pos.all_kings().count();
            s.egtb_root = Some((pos.piece_count(), men));
        }
        let mut root_scores = vec![-INF; root_moves.len()];
        // With noise: the root moves and their scores as the last completed iteration left them
        // (an unfinished iteration leaves some scores from the new depth and some from the old).
        let mut done_root: Option<(Vec<Move>, Vec<i32>)> = None;
        let noise = limits.noise;
        let max_depth = limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);

        // Until an iteration completes: the first legal move with the static evaluation.
        let mut best = root_moves[0];
        s.ev.set_root(&pos);
        let mut score = s.ev.evaluate(0, &pos).0;
        let mut pv = vec![best];
        let mut done_depth = 0;
        let mut stability = Stability::default();

        // Every other helper thread searches a ply deeper than the main thread's iteration.
        let skew = (thread.id % 2) as i32;
        for iteration in 1..=max_depth as i32 - skew {
            let depth = iteration + skew;
            s.iter_best = None;
            let mut delta = s.opts.aspiration;
            let aspire = noise.is_none() && depth >= 4 && score.abs() < MATE_BOUND;
            let (mut alpha, mut beta) = if aspire { (score - delta, score + delta) } else { (-INF, INF) };
            let iter_score = loop {
                let margin = noise.map(|n| n.margin.max(0));
                let v = s.root(&pos, hash, ctr, depth, alpha, beta, &mut root_moves, &mut root_scores, margin);
                if s.aborted {
                    break v;
                }
                if v <= alpha && alpha > -INF {
                    alpha = (v - delta).max(-INF);
                } else if v >= beta && beta < INF {
                    beta = (v + delta).min(INF);
                } else {
                    break v;
                }
                delta *= 2;
                if delta > 400 {
                    (alpha, beta) = (-INF, INF);
                }
            };
            if s.aborted {
                // A move that beat the previous best in the unfinished iteration is trusted.
                if let Some((m, sc, line)) = s.iter_best.take() {
                    if noise.is_none() {
                        (best, score, pv) = (m, sc, line);
                    }
                }
                break;
            }
            done_depth = depth as u32;
            if done_depth > 1 {
                let changed = root_moves[0] != best;
                stability.instability = stability.instability / 2.0 + changed as u8 as f64;
                stability.same_best = if changed { 0 } else { stability.same_best + 1 };
                stability.drop = (score - iter_score).max(0);
            }
            stability.depth = done_depth;
            if noise.is_some() {
                done_root = Some((root_moves.clone(), root_scores.clone()));
            }
            score = iter_score;
            best = root_moves[0];
            pv = s.t.pv[0].clone();
            if pv.first() != Some(&best) {
                pv = vec![best];
            }
            let time = start.elapsed();
            let nodes = s.shared_nodes.map_or(s.nodes, |n| n.load(Ordering::Relaxed).max(s.nodes));
            on_iteration(&SearchInfo {
                depth: done_depth,
                seldepth: s.seldepth as u32,
                score,
                nodes,
                nps: nps(nodes, time),
                time,
                hashfull: s.tt.hashfull(),
                pv: pv.clone(),
                tbhits: s.tb_hits,
            });
            if let Some(plan) = plan {
                let soft = if opts.time_policy { plan.soft_after(&stability) } else { plan.soft };
                if time >= soft || root_moves.len() == 1 {
                    break;
                }
            }
            if mate_distance(score).is_some_and(|n| n.unsigned_abs() + 2 <= done_depth) {
                break;
            }
        }

        if let (Some(noise), Some((root_moves, root_scores))) = (noise, &done_root) {
            {
                let top = root_scores.iter().copied().max().unwrap_or(score);
                let margin = if top.abs() >= MATE_BOUND { 0 } else { noise.margin.max(0) };
                let near: SmallVec<[usize; 64]> =
                    (0..root_moves.len()).filter(|&i| root_scores[i] >= top - margin).collect();
                let pick = splitmix64(noise.seed ^ hash ^ splitmix64(game.ply() as u64)) as usize % near.len().max(1);
                if let Some(&i) = near.get(pick) {
                    (best, score, pv) = (root_moves[i], root_scores[i], vec![root_moves[i]]);
                }
            }
        }

        SearchResult {
            best: Some(best),
            score,
            depth: done_depth,
            seldepth: s.seldepth as u32,
            nodes: s.nodes,
            pv,
            time: start.elapsed(),
            tbhits: s.tb_hits,
        }
    }
}

/// The search score of a database value at `ply`: a nearer win scores higher.
#[inline]
fn wdl_score(v: Wdl, ply: usize) -> i32 {
    match v {
        Wdl::Win => TB_WIN - ply as i32,
        Wdl::Draw => 0,
        Wdl::Loss => -TB_WIN + ply as i32,
    }
}

fn nps(nodes: u64, time: Duration) -> u64 {
    let us = time.as_micros().max(1);
    (nodes as u128 * 1_000_000 / us) as u64
}

struct Searcher<'a, E> {
    tt: &'a TranspositionTable,
    t: &'a mut Tables,
    ev: E,
    rules: Rules,
    promote: bool,
    track_endings: bool,
    stop: &'a AtomicBool,
    node_limit: u64,
    start: Instant,
    hard: Option<Duration>,
    nodes: u64,
    aborted: bool,
    seldepth: usize,
    /// Index of the root position in `t.hashes`.
    root: usize,
    /// The counter limits of the rules (no progress, no capture, three against one, two
    /// against one), a large number for rules that do not apply.
    limits: [i32; 4],
    /// The best root move of the current iteration so far, its score and line.
    iter_best: Option<(Move, i32, Vec<Move>)>,
    opts: SearchOptions,
    /// Inside ProbCut's reduced search (no ProbCut there).
    in_probcut: bool,
    /// Per ply, the index of the move a singular-extension search leaves out ([`NO_EXCLUSION`]:
    /// none).
    excluded: [u8; MAX_PLY + 2],
    /// Per ply, the to bit of the move that led to it (for `cont_history`; ply 0 has none).
    prev_to: [u8; MAX_PLY + 2],
    /// Per ply, the static score of the node on the current line (`improving`; [`NO_STATIC`]:
    /// not computed there).
    static_score: [i32; MAX_PLY + 2],
    /// Endgame databases, if any.
    egtb: Option<&'a Endgames>,
    /// When the root is in the databases: its pieces and men (only less material is probed).
    egtb_root: Option<(u32, u32)>,
    /// Database probes answered.
    tb_hits: u64,
    /// With more than one thread: every thread's nodes (see [`Thread`]); `node_limit` applies to it.
    shared_nodes: Option<&'a AtomicU64>,
    /// `policy_order`: the policy over the moves of the node being ordered.
    policy: Vec<f32>,
}

impl<E: Evaluation> Searcher<'_, E> {
    /// Counts a node and decides whether to stop. Time and the stop flag are looked at every
    /// 1024 nodes; the node limit at every node, so that node-limited searches are exact (with
    /// threads, every 1024 nodes against all threads' count).
    #[inline(always)]
    fn tick(&mut self) -> bool {
        self.nodes += 1;
        if self.nodes & 1023 == 0 {
            if self.stop.load(Ordering::Relaxed) {
                self.aborted = true;
            }
            if let Some(hard) = self.hard {
                if self.start.elapsed() >= hard {
                    self.aborted = true;
                }
            }
            if let Some(shared) = self.shared_nodes {
                if shared.fetch_add(1024, Ordering::Relaxed) + 1024 >= self.node_limit {
                    self.aborted = true;
                }
            }
        }
        if self.nodes >= self.node_limit {
            self.aborted = true;
        }
        self.aborted
    }

    #[inline(always)]
    fn next_ctr(&self, c: Ctr, mv: &Move, child: &Position) -> Ctr {
        let e = if self.track_endings { ending(child) } else { 0 };
        Ctr {
            no_progress: if mv.is_irreversible() { 0 } else { c.no_progress.saturating_add(1) },
            no_capture: if mv.is_capture() { 0 } else { c.no_capture.saturating_add(1) },
            endgame: if e != 0 && e == c.ending { c.endgame.saturating_add(1) } else { 0 },
            ending: e,
        }
    }

    /// Plies until a counter rule could end the game (large when none applies).
    #[inline(always)]
    fn plies_to_rule(&self, c: &Ctr) -> i32 {
        let [np, nc, three, two] = self.limits;
        let mut r = (np - c.no_progress as i32).min(nc - c.no_capture as i32);
        match c.ending {
            1 => r = r.min(three - c.endgame as i32),
            2 => r = r.min(two - c.endgame as i32),
            _ => {}
        }
        r
    }

    /// The score when a draw rule ends the game at this node (not the root).
    #[inline]
    fn rule_result(&self, pos: &Position, hash: u64, c: &Ctr, left: i32, ply: usize) -> Option<i32> {
        if let Some(n) = self.rules.draw.repetition {
            // The same position with the same side to move recurs at the earliest four plies
            // later, and only while no irreversible move was played.
            let idx = self.root + ply;
            let window = (c.no_progress as usize).min(idx);
            let mut back = 4;
            let mut count = 1u32;
            while back <= window {
                let j = idx - back;
                if self.t.hashes[j] == hash {
                    // Inside the tree one repetition is enough: the side that chose it can
                    // repeat again.
                    count += 1;
                    if j > self.root || count >= n as u32 {
                        return Some(0);
                    }
                }
                back += 2;
            }
        }
        if left <= 0 {
            // A side with no legal move loses even when a counter has run out.
            return Some(if pos.count_legal_moves_with(self.promote) > 0 { 0 } else { -MATE + ply as i32 });
        }
        None
    }

    /// The database score of `pos` at `ply`, when the databases hold it and no counting draw
    /// rule could decide the game first (see [`Endgames`]).
    #[inline]
    fn probe_egtb(&mut self, pos: &Position, c: &Ctr, left: i32, ply: usize) -> Option<i32> {
        self.egtb_value(pos, c, left).map(|v| wdl_score(v, ply))
    }

    /// The database value behind [`Searcher::probe_egtb`].
    #[inline]
    fn egtb_value(&mut self, pos: &Position, c: &Ctr, left: i32) -> Option<Wdl> {
        let eg = self.egtb?;
        let pieces = pos.piece_count();
        // (A side without pieces has lost: the search scores that as a mate.)
        let both = pos.pieces(Color::White).any() && pos.pieces(Color::Black).any();
        if pieces > eg.pieces() || c.ending != 0 || left <= RULE_MARGIN || !both {
            return None;
        }
        if let Some((root_pieces, root_men)) = self.egtb_root {
            if pieces == root_pieces && pieces - pos.all_kings().count() == root_men {
                return None;
            }
        }
        let v = eg.tablebase().probe(pos).ok()?;
        self.tb_hits += 1;
        Some(v)
    }

    #[allow(clippy::too_many_arguments)]
    fn root(
        &mut self,
        pos: &Position,
        hash: u64,
        c: Ctr,
        depth: i32,
        mut alpha: i32,
        beta: i32,
        moves: &mut [Move],
        scores: &mut [i32],
        margin: Option<i32>,
    ) -> i32 {
        // With a margin (a seeded choice among the near-best moves follows), every move within
        // `margin` of the best gets an exact score and the others a bound below it: the first
        // move with the full window, each other one first with a null window at the best score
        // so far less the margin, and again with the window open upwards when it reaches it.
        let exact_all = margin.is_some();
        if self.tick() {
            return 0;
        }
        self.t.pv[0].clear();
        self.t.hashes[self.root] = hash;
        let mut best = -INF;
        let mut best_i = None;
        for i in 0..moves.len() {
            let mv = moves[i];
            let ch = hash ^ pos.hash_delta(&mv);
            self.tt.prefetch(ch);
            let child = pos.play(&mv);
            self.ev.make(0, pos, &mv);
            self.prev_to[1] = mv.to().bit();
            let cc = self.next_ctr(c, &mv, &child);
            let score = if let Some(m) = margin {
                if i == 0 || best <= -MATE_BOUND {
                    -self.search(&child, ch, cc, depth - 1, -INF, INF, 1, true, false)
                } else {
                    let floor = best - m;
                    let v = -self.search(&child, ch, cc, depth - 1, -floor, -floor + 1, 1, false, true);
                    if v >= floor && !self.aborted {
                        -self.search(&child, ch, cc, depth - 1, -INF, -floor + 1, 1, true, false)
                    } else {
                        v
                    }
                }
            } else if i == 0 {
                -self.search(&child, ch, cc, depth - 1, -beta, -alpha, 1, true, false)
            } else {
                let v = -self.search(&child, ch, cc, depth - 1, -alpha - 1, -alpha, 1, false, true);
                if v > alpha && v < beta && !self.aborted {
                    -self.search(&child, ch, cc, depth - 1, -beta, -alpha, 1, true, false)
                } else {
                    v
                }
            };
            if self.aborted {
                break;
            }
            scores[i] = score;
            if score > best {
                best = score;
                if exact_all || score > alpha {
                    best_i = Some(i);
                    self.set_pv(0, mv);
                    self.iter_best = Some((mv, score, self.t.pv[0].clone()));
                    if !exact_all {
                        alpha = score;
                        if alpha >= beta {
                            break;
                        }
                    }
                }
            }
        }
        if let Some(b) = best_i {
            // Best move first; the others keep their order.
            moves[..=b].rotate_right(1);
            scores[..=b].rotate_right(1);
        }
        best
    }

    #[inline]
    fn set_pv(&mut self, ply: usize, mv: Move) {
        let (head, tail) = self.t.pv.split_at_mut(ply + 1);
        let line = &mut head[ply];
        line.clear();
        line.push(mv);
        line.extend_from_slice(&tail[0]);
    }

    /// The alpha-beta search of `pos` to `depth`. `pv_node`: searched with an open window;
    /// `cut`: an expected cut node (non-PV, reached by a reduced or zero-window search of a late
    /// move, or as the first move of an expected all node), which `lmr_cut`, `iir_cut` and
    /// `singular_negative` treat differently.
    #[allow(clippy::too_many_arguments)]
    fn search(
        &mut self,
        pos: &Position,
        hash: u64,
        c: Ctr,
        depth: i32,
        mut alpha: i32,
        mut beta: i32,
        ply: usize,
        pv_node: bool,
        cut: bool,
    ) -> i32 {
        if self.tick() {
            return 0;
        }
        self.t.pv[ply].clear();
        self.t.hashes[self.root + ply] = hash;
        self.seldepth = self.seldepth.max(ply);

        let left = self.plies_to_rule(&c);
        if let Some(v) = self.rule_result(pos, hash, &c, left, ply) {
            return v;
        }
        // Mate-distance pruning: no line from here beats a win at this ply.
        alpha = alpha.max(-MATE + ply as i32);
        beta = beta.min(MATE - ply as i32 - 1);
        if alpha >= beta {
            return alpha;
        }
        if self.egtb.is_some() {
            if let Some(v) = self.probe_egtb(pos, &c, left, ply) {
                return v;
            }
        }

        // Beyond the horizon only captures are searched. (Above it, move generation finds out
        // whether there is a capture, so it is not asked twice.) A quiet horizon node may get one
        // extension per line: a one-ply search when the opponent threatens a capture
        // (`qs_threat`), or its promotions (`qs_promotions`) and exchange offers (`qs_exchanges`)
        // after the stand-pat.
        let mut threat = false;
        if depth <= 0 || ply >= MAX_PLY - 1 {
            let capture = pos.has_capture();
            if !capture || ply >= MAX_PLY - 1 {
                let extend = !capture && depth > QS_LAST && ply < MAX_PLY - 2;
                threat = extend && self.opts.qs_threat && pos.with_side_to_move(!pos.side_to_move()).has_capture();
                if !threat {
                    if self.opts.lazy_eval && !capture {
                        if let Some(v) = lazy_bound(&self.opts, pos, alpha, beta, extend, ply) {
                            return v;
                        }
                    }
                    let (v, mobility) = self.ev.evaluate_hashed(ply, pos, hash);
                    // No capture and no one-step move: no legal move at all.
                    if mobility == 0 && !capture {
                        return -MATE + ply as i32;
                    }
                    let v = if self.opts.corr_history { v + self.correction(pos) } else { v };
                    let v = if self.opts.drawish { drawish(pos, v) } else { v };
                    if extend && v < beta {
                        let (promotions, exchanges) = quiet_extensions(&self.opts, pos);
                        if promotions || exchanges {
                            return self.quiet_extensions(pos, hash, c, v, alpha, beta, ply, promotions, exchanges);
                        }
                    }
                    return v;
                }
            }
        }

        let sensitive = left <= depth.max(0) + 4;
        // Inside a singular-extension test, the move this node leaves out: the table neither
        // answers nor keeps a result that lacks it.
        let excluded = self.excluded[ply];
        let mut tt_move = None;
        let mut tt_hit = None;
        if depth >= 1 {
            if let Some(hit) = self.tt.probe(hash) {
                tt_move = hit.mv;
                tt_hit = Some(hit);
                if !pv_node && !sensitive && excluded == NO_EXCLUSION && hit.depth >= depth {
                    let v = score_from_tt(hit.score, ply);
                    match hit.bound {
                        Bound::Exact => return v,
                        Bound::Lower if v >= beta => return v,
                        Bound::Upper if v <= alpha => return v,
                        _ => {}
                    }
                }
            }
        }

        // Internal iterative reduction: without a move from the table, one ply shallower.
        let depth = if self.opts.iir && depth >= SearchOptions::IIR_DEPTH && tt_move.is_none() && excluded == NO_EXCLUSION {
            // `iir_cut`: two plies at an expected cut node.
            depth - 1 - (self.opts.iir_cut && cut) as i32
        } else {
            depth
        };

        let mut moves = MoveList::new();
        pos.generate_moves(self.promote, &mut moves);
        if moves.is_empty() {
            return -MATE + ply as i32;
        }
        // When one capture exists, every legal move is a capture.
        let capture = moves[0].is_capture();
        // `improving`: the static score of a quiet non-PV node near the horizon, kept for the
        // node two plies down (its grandchild), which compares its own with it. Written at every
        // node that searches moves, before any child is searched, so the entry two plies up is
        // always that of the current line.
        let improving = if self.opts.improving && self.opts.lmp {
            // A singular test searches this node's position again at this ply: it keeps the
            // entry of the node it tests.
            let here = if excluded != NO_EXCLUSION {
                self.static_score[ply]
            } else if !pv_node && !capture && (1..=SearchOptions::LMP_DEPTH).contains(&depth) {
                self.ev.evaluate_hashed(ply, pos, hash).0
            } else {
                NO_STATIC
            };
            self.static_score[ply] = here;
            let before = if ply >= 2 { self.static_score[ply - 2] } else { NO_STATIC };
            here == NO_STATIC || before == NO_STATIC || here > before
        } else {
            true
        };
        // The child of the table's move, most likely the first searched: its entry is loaded
        // while the moves are ordered (and ProbCut and singular tests run).
        let first_child = match tt_move {
            Some(t) if (t.index as usize) < moves.len() => {
                let i = t.index as usize;
                let ch = hash ^ pos.hash_delta(&moves[i]);
                self.prefetch_child(ch, depth - 1);
                (i, ch)
            }
            _ => (usize::MAX, 0),
        };
        // Reverse futility pruning: near the horizon, a quiet node whose static score clears
        // beta by a margin growing with depth is worth its static score. Not when the opponent
        // threatens a capture (the static score then misses the shot).
        if self.opts.rfp
            && !pv_node
            && !capture
            && depth <= SearchOptions::RFP_DEPTH
            && !sensitive
            && excluded == NO_EXCLUSION
            && beta.abs() < PROBCUT_SCORE_LIMIT
            && !pos.with_side_to_move(!pos.side_to_move()).has_capture()
        {
            let v = self.ev.evaluate_hashed(ply, pos, hash).0;
            if v - self.opts.rfp_margin * depth >= beta {
                return v;
            }
        }
        // ProbCut: a shallow search that clears beta by a margin growing with depth cuts the
        // node (no ProbCut inside it). Not with a capture to make: the node is then inside a
        // forced line, where a combination's sacrifices look lost to a shallow search.
        let probcut = self.opts.probcut && !capture && !pv_node && !self.in_probcut && excluded == NO_EXCLUSION;
        if probcut && depth >= 3 && !sensitive && beta.abs() < PROBCUT_SCORE_LIMIT {
            let rbeta = beta + self.opts.probcut_margin * depth;
            self.in_probcut = true;
            let v = self.search(pos, hash, c, (depth * 2 / 5).max(1), rbeta - 1, rbeta, ply, false, cut);
            self.in_probcut = false;
            if self.aborted {
                return 0;
            }
            if v >= rbeta {
                return v;
            }
            self.t.pv[ply].clear();
        }

        // Singular extension: at a PV node (with `singular_all`, at any node deep enough), the
        // table's move is searched one ply deeper when the other moves, at half the depth, all
        // fail low against its score less a margin. At a non-PV node, other moves that reach
        // beta even without it cut the node (multi-cut).
        let mut singular = NO_EXCLUSION;
        // `singular_negative`: the table's move, when the test finds other moves as good, one ply
        // shallower.
        let mut shallower = NO_EXCLUSION;
        let singular_depth = if pv_node {
            SINGULAR_DEPTH
        } else if self.opts.singular_all && !self.in_probcut {
            self.opts.singular_all_depth
        } else {
            i32::MAX
        };
        if self.opts.singular && depth >= singular_depth && moves.len() > 1 && ply < MAX_PLY / 2 && !sensitive && excluded == NO_EXCLUSION {
            if let (Some(hit), Some(m)) = (tt_hit, tt_move) {
                let v = score_from_tt(hit.score, ply);
                let i = m.index as usize;
                let valid = i < moves.len() && moves[i].from().bit() == m.from && moves[i].to().bit() == m.to;
                if valid && hit.depth >= depth - 3 && matches!(hit.bound, Bound::Lower | Bound::Exact) && v.abs() < PLY_SCORE_BOUND {
                    let sbeta = v - self.opts.singular_margin * depth;
                    self.excluded[ply] = m.index;
                    let s = self.search(pos, hash, c, (depth - 1) / 2, sbeta - 1, sbeta, ply, false, cut);
                    self.excluded[ply] = NO_EXCLUSION;
                    if self.aborted {
                        return 0;
                    }
                    self.t.pv[ply].clear();
                    if s < sbeta {
                        singular = m.index;
                    } else if !pv_node && sbeta >= beta {
                        return sbeta;
                    } else if self.opts.singular_negative && (v >= beta || cut) {
                        shallower = m.index;
                    }
                }
            }
        }

        // The children's depth: below a threat extension, quiescence without extensions; one
        // more ply for a forced reply (`single_reply`).
        let nd = if threat {
            QS_LAST
        } else if self.opts.single_reply && moves.len() == 1 && depth >= 1 && ply < MAX_PLY / 2 {
            depth
        } else {
            depth - 1
        };

        let side = (pos.side_to_move() == Color::Black) as usize;
        let killers = self.t.killers[ply];
        // `cont_history`: the row of the opponent's last move (none at the root).
        let cont = (self.opts.cont_history && ply > 0).then(|| cont_row(side, self.prev_to[ply]));
        let moves: &[Move] = &moves;
        // `policy_order`: quiet moves by the network's policy instead of their history.
        let by_policy = self.opts.policy_order
            && !capture
            && depth >= self.opts.policy_depth
            && moves.len() > 1
            && self.ev.policy(ply, pos, moves, &mut self.policy);
        // Each move's ordering key and index packed into one number, so that one sort orders
        // them: higher key first, then generation order (the codes are distinct, so the
        // unstable sort is deterministic).
        let mut order: SmallVec<[i64; 64]> = SmallVec::new();
        let (mut top, mut top_i) = (i64::MIN, 0);
        for (i, mv) in moves.iter().enumerate() {
            let is_tt =
                tt_move.is_some_and(|t| t.index as usize == i && t.from == mv.from().bit() && t.to == mv.to().bit());
            let key = if is_tt {
                HASH_KEY
            } else if capture {
                CAPTURE_KEY + 1000 * (mv.captured() & pos.all_kings()).count() as i32 + 100 * mv.promotes() as i32
            } else if mv.promotes() {
                PROMOTION_KEY
            } else {
                let q = quiet_code(mv);
                if q == killers[0] {
                    KILLER_KEY + 1
                } else if q == killers[1] {
                    KILLER_KEY
                } else if by_policy {
                    (self.policy[i] * HISTORY_MAX as f32) as i32
                } else {
                    self.t.history[history_index(side, mv)] + cont.map_or(0, |row| self.t.cont[row | quiet_cell(mv)])
                }
            };
            let code = encode(key, i);
            if code > top {
                (top, top_i) = (code, i);
            }
            order.push(code);
        }
        // The best move first; the rest are sorted only when it does not cut off.
        order.swap(0, top_i);

        let lmp = self.opts.lmp
            && !pv_node
            && !capture
            && !threat
            && (1..=SearchOptions::LMP_DEPTH).contains(&depth)
            && !sensitive
            && beta.abs() < PROBCUT_SCORE_LIMIT
            && !pos.with_side_to_move(!pos.side_to_move()).has_capture();
        // The quiet moves searched before `lmp` prunes: half as many at a node not improving.
        let lmp_after = self.opts.lmp_moves + depth * depth;
        let lmp_after = if improving { lmp_after } else { lmp_after / 2 };
        // Futility pruning: near the horizon, a quiet node whose static score with a margin
        // does not reach alpha searches only its first move and those that may change the
        // material soon (killers, promotions, moves that give the opponent a capture).
        let futile = if self.opts.futility
            && !pv_node
            && !capture
            && !threat
            && (1..=SearchOptions::FUTILITY_DEPTH).contains(&depth)
            && !sensitive
            && excluded == NO_EXCLUSION
            && alpha.abs() < PROBCUT_SCORE_LIMIT
            && !pos.with_side_to_move(!pos.side_to_move()).has_capture()
        {
            let v = self.ev.evaluate_hashed(ply, pos, hash).0 + self.opts.futility_margin * depth;
            (v <= alpha).then_some(v)
        } else {
            None
        };
        let orig_alpha = alpha;
        let mut best = -INF;
        let mut best_i = usize::MAX;
        // The first move's child, prefetched when the moves were generated; then each next one.
        let mut next_child = first_child;
        for tried in 0..order.len() {
            if tried == 1 {
                sort_descending(&mut order[1..]);
            }
            let (k, i) = decode(order[tried]);
            // The singular move: one ply deeper; a table move found not alone: one shallower.
            let nd = nd + (i == singular as usize) as i32 - (i == shallower as usize) as i32;
            let mv = moves[i];
            let prefetched = next_child.0 == i;
            let ch = if prefetched { next_child.1 } else { hash ^ pos.hash_delta(&mv) };
            if !prefetched {
                self.prefetch_child(ch, nd);
            }
            // The next move's entry (the table's, or the evaluation's below the horizon) is
            // loaded while this one is searched (the moves after the first are sorted now).
            if tried >= 1 && tried + 1 < order.len() {
                let j = decode(order[tried + 1]).1;
                next_child = (j, hash ^ pos.hash_delta(&moves[j]));
                self.prefetch_child(next_child.1, nd);
            }
            if i == excluded as usize {
                continue;
            }
            let child = pos.play(&mv);
            // Late-move pruning: near the horizon, a late quiet move that neither is a killer nor
            // gives the opponent a capture is not searched.
            if lmp && tried as i32 >= lmp_after && k < KILLER_KEY && !child.has_capture() {
                continue;
            }
            if let Some(v) = futile {
                if tried > 0 && k < KILLER_KEY && !child.has_capture() {
                    best = best.max(v);
                    continue;
                }
            }
            self.ev.make(ply, pos, &mv);
            self.prev_to[ply + 1] = mv.to().bit();
            let cc = self.next_ctr(c, &mv, &child);
            let score = if tried == 0 {
                -self.search(&child, ch, cc, nd, -beta, -alpha, ply + 1, pv_node, !pv_node && !cut)
            } else {
                // Late quiet moves are reduced, unless they give the opponent a capture.
                let first = if !pv_node && self.opts.lmr_nonpv_moves > 0 { self.opts.lmr_nonpv_moves } else { self.opts.lmr_moves };
                let r = if !threat && tried as i32 >= first && !capture && k < KILLER_KEY {
                    self.reduction(depth, tried, pv_node, cut, k)
                } else {
                    0
                };
                let r = if r > 0 && child.has_capture() { 0 } else { r };
                let mut v = -self.search(&child, ch, cc, nd - r, -alpha - 1, -alpha, ply + 1, false, r > 0 || !cut);
                if v > alpha && r > 0 && !self.aborted {
                    v = -self.search(&child, ch, cc, nd, -alpha - 1, -alpha, ply + 1, false, !cut);
                }
                if v > alpha && v < beta && pv_node && !self.aborted {
                    v = -self.search(&child, ch, cc, nd, -beta, -alpha, ply + 1, true, false);
                }
                v
            };
            if self.aborted {
                return 0;
            }
            if score > best {
                best = score;
                if score > alpha {
                    best_i = i;
                    alpha = score;
                    if pv_node {
                        self.set_pv(ply, mv);
                    }
                    if score >= beta {
                        if !capture && depth >= 1 {
                            self.reward_quiet(side, ply, depth, moves, &order[..tried], mv, cont);
                        }
                        break;
                    }
                }
            }
        }

        if excluded != NO_EXCLUSION {
            // A singular-extension test: its result lacks a move, so the table does not keep it.
            return best.max(alpha);
        }
        // Correction history: a quiet node's result, where its bound says which side of the
        // static score it lies on, teaches the tables what the static score missed.
        if self.opts.corr_history && depth >= 1 && !capture && !sensitive && best.abs() < PROBCUT_SCORE_LIMIT {
            let raw = self.ev.evaluate_hashed(ply, pos, hash).0;
            let trusted = if best >= beta {
                best > raw
            } else if best <= orig_alpha {
                best < raw
            } else {
                true
            };
            if trusted {
                self.update_correction(pos, depth, best - raw);
            }
        }
        if depth >= 1 {
            let bound = if sensitive {
                Bound::None
            } else if best >= beta {
                Bound::Lower
            } else if best > orig_alpha {
                Bound::Exact
            } else {
                Bound::Upper
            };
            let mv = (best_i < 255).then(|| TtMove {
                index: best_i as u8,
                from: moves[best_i].from().bit(),
                to: moves[best_i].to().bit(),
            });
            self.tt.store(hash, score_to_tt(best, ply), depth, bound, mv);
        }
        best
    }

    /// Prefetches what the search of a child of key `hash` at depth `depth` reads first.
    #[inline(always)]
    fn prefetch_child(&self, hash: u64, depth: i32) {
        if depth >= 1 {
            self.tt.prefetch(hash);
        } else {
            self.ev.prefetch(hash);
        }
    }

    /// What the `corr_history` tables add to the static score of `pos` (centi-men, the side to
    /// move's point of view): the mean of its two colours' entries.
    #[inline]
    fn correction(&self, pos: &Position) -> i32 {
        let [w, b] = corr_indices(pos);
        (self.t.corr[w] + self.t.corr[b]) / (2 * CORR_GRAIN)
    }

    /// Blends `diff` (a node's search score less its raw static score), found at `depth`,
    /// into both entries of `pos`: deeper results weigh more.
    fn update_correction(&mut self, pos: &Position, depth: i32, diff: i32) {
        for i in corr_indices(pos) {
            self.t.corr[i] = corr_blend(self.t.corr[i], diff, depth);
        }
    }

    /// Plies by which late quiet move number `tried` (from 0), of ordering key `key` (its history), is reduced at `depth`.
    #[inline(always)]
    fn reduction(&self, depth: i32, tried: usize, pv_node: bool, cut: bool, key: i32) -> i32 {
        let r = self.base_reduction(depth, tried, pv_node);
        // `lmr_history`: a move with a negative history (its ordering key) one ply more;
        // `lmr_cut`: one ply more at an expected cut node.
        r + (self.opts.lmr_history && r > 0 && !pv_node && key < 0) as i32 + (self.opts.lmr_cut && r > 0 && cut) as i32
    }

    #[inline(always)]
    fn base_reduction(&self, depth: i32, tried: usize, pv_node: bool) -> i32 {
        if self.opts.lmr_log {
            if depth < 3 {
                0
            } else {
                (log_reduction(depth, tried) - pv_node as i32).max(1)
            }
        } else if self.opts.lmr_early {
            if depth < 2 {
                0
            } else {
                1 + !pv_node as i32
            }
        } else if depth < 3 {
            0
        } else {
            1 + (tried >= 8 && depth >= 5 && !pv_node) as i32
        }
    }

    /// A quiet horizon node whose stand-pat `stand` is below `beta`: the moves that promote a
    /// man (with `promotions`) and those that give the opponent a capture (with `exchanges`) are
    /// searched (then captures only), the others are worth the stand-pat.
    #[allow(clippy::too_many_arguments)]
    fn quiet_extensions(
        &mut self,
        pos: &Position,
        hash: u64,
        c: Ctr,
        stand: i32,
        mut alpha: i32,
        beta: i32,
        ply: usize,
        promotions: bool,
        exchanges: bool,
    ) -> i32 {
        let mut moves = MoveList::new();
        pos.generate_moves(self.promote, &mut moves);
        let mut best = stand;
        alpha = alpha.max(stand);
        for mv in moves.iter() {
            // A move is played only when it promotes or may offer an exchange.
            let promoting = promotions && mv.promotes();
            if !promoting && !exchanges {
                continue;
            }
            let child = pos.play(mv);
            if !promoting && !child.has_capture() {
                continue;
            }
            self.ev.make(ply, pos, mv);
            self.prev_to[ply + 1] = mv.to().bit();
            let ch = hash ^ pos.hash_delta(mv);
            let cc = self.next_ctr(c, mv, &child);
            let v = -self.search(&child, ch, cc, QS_LAST, -beta, -alpha, ply + 1, false, false);
            if self.aborted {
                return 0;
            }
            if v > best {
                best = v;
                alpha = alpha.max(v);
                if v >= beta {
                    break;
                }
            }
        }
        best
    }

    /// A quiet move caused a cutoff: make it a killer, raise its history and lower the history
    /// of the quiet moves tried before it (`before`, as order codes); the same in the
    /// `cont_history` row `cont`, if any.
    #[allow(clippy::too_many_arguments)]
    fn reward_quiet(&mut self, side: usize, ply: usize, depth: i32, moves: &[Move], before: &[i64], mv: Move, cont: Option<usize>) {
        if !mv.promotes() {
            let k = &mut self.t.killers[ply];
            if k[0] != quiet_code(&mv) {
                k[1] = k[0];
                k[0] = quiet_code(&mv);
            }
        }
        let bonus = (depth * depth * 16).min(HISTORY_MAX / 4);
        for (m, b) in before.iter().map(|&code| (&moves[decode(code).1], -bonus)).chain([(&mv, bonus)]) {
            history_update(&mut self.t.history[history_index(side, m)], b);
            if let Some(row) = cont {
                history_update(&mut self.t.cont[row | quiet_cell(m)], b);
            }
        }
    }
}

/// The `drawish` option: a static score shrunk where the material is known to draw often: by 8
/// when the side ahead has at most three pieces against a king, by 2 when both sides have kings,
/// the same number of them, and men within one (Scan's scaling).
fn drawish(pos: &Position, v: i32) -> i32 {
    let us = pos.side_to_move();
    let (ahead, behind) = if v >= 0 { (us, !us) } else { (!us, us) };
    let kings = |c: Color| pos.kings(c).count() as i32;
    let men = |c: Color| pos.men(c).count() as i32;
    if kings(behind) > 0 && kings(ahead) + men(ahead) <= 3 {
        v / 8
    } else if kings(behind) > 0 && kings(ahead) == kings(behind) && (men(ahead) - men(behind)).abs() <= 1 {
        v / 2
    } else {
        v
    }
}

/// Which quiet moves a quiet horizon node searches after its stand-pat: its promotions (with
/// `qs_promotions`, when a man is one step from the crowning row) and its exchange offers (with
/// `qs_exchanges`, when no king is on the board, as in Scan).
#[inline]
fn quiet_extensions(opts: &SearchOptions, pos: &Position) -> (bool, bool) {
    let us = pos.side_to_move();
    (opts.qs_promotions && (pos.men(us) & promotion_row(us)).any(), opts.qs_exchanges && pos.all_kings().is_empty())
}

/// `lazy_eval` at a quiet horizon node: the bound (beta or alpha) that the material alone
/// clears by `lazy_margin`, or `None` when the static evaluation is needed. A node without a
/// move is still lost. `extend`: the node may search its promotions and exchange offers
/// (`qs_promotions`, `qs_exchanges`).
#[inline]
fn lazy_bound(opts: &SearchOptions, pos: &Position, alpha: i32, beta: i32, extend: bool, ply: usize) -> Option<i32> {
    let us = pos.side_to_move();
    let kings = |c: Color| pos.kings(c).count() as i32;
    let men = |c: Color| pos.men(c).count() as i32;
    if opts.drawish && kings(us) + kings(!us) > 0 {
        return None;
    }
    let material = 100 * (men(us) - men(!us)) + 300 * (kings(us) - kings(!us));
    let v = if material >= beta + opts.lazy_margin {
        beta
    } else if material <= alpha - opts.lazy_margin && !(extend && quiet_extensions(opts, pos) != (false, false)) {
        alpha
    } else {
        return None;
    };
    Some(if one_step_moves(pos) == 0 { -MATE + ply as i32 } else { v })
}

/// The squares from which a man of `color` promotes with one step.
fn promotion_row(color: Color) -> Bitboard {
    match color {
        Color::White => BEFORE_WHITE_PROMOTION,
        Color::Black => BEFORE_BLACK_PROMOTION,
    }
}

/// Insertion sort, highest first: the lists are short and often nearly sorted.
#[inline]
fn sort_descending(v: &mut [i64]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] < x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// Packs an ordering key and a move index: higher keys sort higher, and on equal keys the
/// lower index does.
#[inline(always)]
fn encode(key: i32, index: usize) -> i64 {
    ((key as i64) << 16) | (0xFFFF - (index as i64 & 0xFFFF))
}

#[inline(always)]
fn decode(code: i64) -> (i32, usize) {
    ((code >> 16) as i32, 0xFFFF - (code & 0xFFFF) as usize)
}

/// A quiet move is named by its from and to squares alone: bits 8..16 and 0..8, never 0.
#[inline(always)]
fn quiet_code(mv: &Move) -> u16 {
    ((mv.from().bit() as u16) << 8) | mv.to().bit() as u16 | 0x8000
}

#[inline(always)]
/// Moves a history value towards `HISTORY_MAX * sign(b)` by `b`, less the part it already has
/// ("gravity"), so it stays within `±HISTORY_MAX`. The product is taken in i64: `h * |b|` reaches
/// 2^38 from depth 12 on (it overflowed i32: a panic with overflow checks, wrapped values in
/// release).
fn history_update(h: &mut i32, b: i32) {
    *h += b - (*h as i64 * b.abs() as i64 / HISTORY_MAX as i64) as i32;
}

fn history_index(side: usize, mv: &Move) -> usize {
    (side << 12) | quiet_cell(mv)
}

/// A move's from and to bits as an index below 4096.
#[inline(always)]
fn quiet_cell(mv: &Move) -> usize {
    ((mv.from().bit() as usize) << 6) | mv.to().bit() as usize
}

/// The `cont_history` table's size: side, the opponent's last to bit, from bit, to bit.
const CONT_SIZE: usize = 2 * 64 * 64 * 64;

/// Entries of one `corr_history` table (by side to move and colour), as a power of two.
const CORR_BITS: u32 = 14;
/// A `corr_history` entry's units: 1/16 centi-man.
const CORR_GRAIN: i32 = 16;
/// The largest difference (centi-men) one result teaches the `corr_history` tables.
const CORR_MAX: i32 = 200;
/// A result's weight in an entry is `min(depth + 1, CORR_MAX_WEIGHT) / CORR_WEIGHT_SCALE`.
const CORR_MAX_WEIGHT: i32 = 16;
const CORR_WEIGHT_SCALE: i32 = 256;

/// A `corr_history` entry `e` after a result `diff` centi-men from the static score at `depth`.
#[inline]
fn corr_blend(e: i32, diff: i32, depth: i32) -> i32 {
    let target = diff.clamp(-CORR_MAX, CORR_MAX) * CORR_GRAIN;
    let w = (depth + 1).min(CORR_MAX_WEIGHT);
    (e * (CORR_WEIGHT_SCALE - w) + target * w) / CORR_WEIGHT_SCALE
}

/// The two `corr_history` entries of `pos`: its side to move's, for White's men and Black's.
#[inline]
fn corr_indices(pos: &Position) -> [usize; 2] {
    let stm = pos.side_to_move();
    [corr_index(stm, Color::White, pos), corr_index(stm, Color::Black, pos)]
}

/// The `corr_history` entry of `pos` for `color`'s men, with `stm` to move.
#[inline]
fn corr_index(stm: Color, color: Color, pos: &Position) -> usize {
    let table = 2 * (stm == Color::Black) as usize + (color == Color::Black) as usize;
    (table << CORR_BITS) | (splitmix64(pos.men(color).0) >> (64 - CORR_BITS)) as usize
}

/// The first index of the `cont_history` row for `side` to move after the opponent's move to `prev_to`.
#[inline(always)]
fn cont_row(side: usize, prev_to: u8) -> usize {
    (side << 18) | ((prev_to as usize) << 12)
}

/// `lmr_log`'s reduction of the move tried `tried`-th (from 0) at `depth`:
/// `round(ln(depth) x ln(tried + 1) / 2)`, from a table.
fn log_reduction(depth: i32, tried: usize) -> i32 {
    const N: usize = 64;
    static TABLE: std::sync::OnceLock<[[u8; N]; N]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        std::array::from_fn(|d| std::array::from_fn(|t| ((d.max(1) as f64).ln() * ((t + 1) as f64).ln() / 2.0).round() as u8))
    });
    table[(depth.max(0) as usize).min(N - 1)][tried.min(N - 1)] as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_stays_in_range_at_the_deepest_bonus() {
        // The largest bonus (depth MAX_DEPTH) on values at the bounds: no overflow, no escape.
        let bonus = ((MAX_DEPTH * MAX_DEPTH * 16) as i32).min(HISTORY_MAX / 4);
        for start in [HISTORY_MAX, -HISTORY_MAX, 0, HISTORY_MAX / 2] {
            for b in [bonus, -bonus] {
                let mut h = start;
                for _ in 0..1000 {
                    history_update(&mut h, b);
                    assert!(h.abs() <= HISTORY_MAX, "{start} {b}: {h}");
                }
                assert!((h - HISTORY_MAX * b.signum()).abs() < HISTORY_MAX / 100, "{start} {b}: {h}");
            }
        }
    }

    #[test]
    fn correction_entries_average_what_searches_found() {
        // Repeated results move an entry to their difference (in grains), deeper ones faster,
        // and a difference beyond the limit teaches only the limit. (Integer division stalls an
        // entry within CORR_WEIGHT_SCALE / weight grains of its target; depth 3 weighs 4.)
        let settle = |diff: i32, depth: i32, n: usize| (0..n).fold(0, |e, _| corr_blend(e, diff, depth));
        assert!((settle(40, 3, 2000) - 40 * CORR_GRAIN).abs() <= CORR_WEIGHT_SCALE / 4);
        assert!(settle(40, 12, 20) > settle(40, 1, 20));
        assert!(settle(-5000, 20, 2000) >= -CORR_MAX * CORR_GRAIN && settle(-5000, 20, 2000) < -(CORR_MAX - 2) * CORR_GRAIN);
        assert_eq!(corr_blend(0, 0, 5), 0);
        // Each side to move and colour has a table of its own; a colour's entry sees only its
        // own men.
        let a = Position::from_fen("W:W31-50:B1-20").unwrap();
        let b = Position::from_fen("W:W31-50:B1-19,21").unwrap();
        let black = Position::from_fen("B:W31-50:B1-20").unwrap();
        assert_eq!(corr_index(Color::White, Color::White, &a), corr_index(Color::White, Color::White, &b));
        assert_ne!(corr_index(Color::White, Color::Black, &a), corr_index(Color::White, Color::Black, &b));
        let tables: std::collections::HashSet<usize> = [
            corr_index(Color::White, Color::White, &a),
            corr_index(Color::White, Color::Black, &a),
            corr_index(Color::Black, Color::White, &black),
            corr_index(Color::Black, Color::Black, &black),
        ]
        .iter()
        .map(|i| i >> CORR_BITS)
        .collect();
        assert_eq!(tables.len(), 4);
    }

    #[test]
    fn lazy_bounds_come_from_material_beyond_the_window() {
        let opts = SearchOptions { lazy_eval: true, lazy_margin: 200, ..SearchOptions::BASELINE };
        let lazy = |o: &SearchOptions, fen: &str, alpha: i32, beta: i32, extend: bool| {
            lazy_bound(o, &Position::from_fen(fen).unwrap(), alpha, beta, extend, 7)
        };
        // Three men up: beta; three down: alpha; two up against a window at +50: no bound.
        assert_eq!(lazy(&opts, "W:W31-50:B1-17", -10, 10, false), Some(10));
        assert_eq!(lazy(&opts, "B:W31-50:B1-17", -10, 10, false), Some(-10));
        assert_eq!(lazy(&opts, "W:W31-50:B1-18", 40, 50, false), None);
        assert_eq!(lazy(&opts, "W:W31-50:B1-18", -160, -150, false), Some(-150));
        // Ten men against five, but no move: lost, whatever the material.
        assert_eq!(lazy(&opts, "W:W6-15:B1-5", -10, 10, false), Some(-MATE + 7));
        // A king counts three men.
        assert_eq!(lazy(&opts, "W:WK46,31-40:B1-11", -10, 10, false), None);
        assert_eq!(lazy(&opts, "W:WK46,31-40:B1-10", -10, 10, false), Some(10));
        // `drawish` would shrink a score with kings: no bound there.
        let drawish = SearchOptions { drawish: true, ..opts };
        assert_eq!(lazy(&drawish, "W:WK46,31-40:B1-10", -10, 10, false), None);
        assert_eq!(lazy(&drawish, "W:W31-50:B1-17", -10, 10, false), Some(10));
        // Behind, with a man to promote and `qs_promotions`: the promotions are searched.
        let promotions = SearchOptions { qs_promotions: true, ..opts };
        assert_eq!(lazy(&promotions, "W:W8:B31-40", -10, 10, true), None);
        assert_eq!(lazy(&promotions, "W:W8:B31-40", -10, 10, false), Some(-10));
        assert_eq!(lazy(&promotions, "W:W18:B31-40", -10, 10, true), Some(-10));
        // Behind, no king on the board and `qs_exchanges`: the exchange offers are searched.
        let exchanges = SearchOptions { qs_exchanges: true, ..opts };
        assert_eq!(lazy(&exchanges, "W:W18:B31-40", -10, 10, true), None);
        assert_eq!(lazy(&exchanges, "W:WK18:B21-40", -10, 10, true), Some(-10));
        assert_eq!(lazy(&exchanges, "W:W31-50:B1-17", -10, 10, true), Some(10));
    }

    #[test]
    fn drawish_material_is_scaled() {
        let d = |fen: &str, v: i32| drawish(&Position::from_fen(fen).unwrap(), v);
        // Three pieces against a lone king: a draw in most positions.
        assert_eq!(d("W:WK1,12,23:BK50", 240), 30);
        assert_eq!(d("B:WK1,12,23:BK50", -240), -30);
        // Kings on both sides, equal, men within one.
        assert_eq!(d("W:WK1,12:BK50", 100), 12);
        assert_eq!(d("W:WK1,12,13,14:BK50,40,41", 100), 50);
        // No king behind, or more men: unchanged.
        assert_eq!(d("W:W31-50:B1-20", 37), 37);
        assert_eq!(d("W:WK1,12,13,14,15:BK50,40", 300), 300);
    }

    #[test]
    fn rows_before_promotion() {
        let squares = |b: Bitboard| b.squares().map(|s| s.number()).collect::<Vec<_>>();
        assert_eq!(squares(BEFORE_WHITE_PROMOTION), vec![6, 7, 8, 9, 10]);
        assert_eq!(squares(BEFORE_BLACK_PROMOTION), vec![41, 42, 43, 44, 45]);
    }

    #[test]
    fn mate_distances() {
        assert_eq!(mate_distance(MATE - 3), Some(3));
        assert_eq!(mate_distance(-MATE + 4), Some(-4));
        assert_eq!(mate_distance(250), None);
        assert_eq!(mate_distance(-MATE_BOUND + 1), None);
        for ply in [0, 1, 7, 100] {
            for s in [MATE - 9, -MATE + 12, 0, -37] {
                assert_eq!(score_from_tt(score_to_tt(s, ply), ply), s);
            }
        }
    }

    #[test]
    fn move_order_codes() {
        let mut v: Vec<i64> =
            [(5, 0), (HASH_KEY, 3), (5, 1), (-7, 2), (KILLER_KEY, 4)].iter().map(|&(k, i)| encode(k, i)).collect();
        sort_descending(&mut v);
        let order: Vec<(i32, usize)> = v.into_iter().map(decode).collect();
        // Higher key first; equal keys in generation order.
        assert_eq!(order, vec![(HASH_KEY, 3), (KILLER_KEY, 4), (5, 0), (5, 1), (-7, 2)]);
    }

    #[test]
    fn endings_match_the_rules() {
        let e = |fen: &str| ending(&Position::from_fen(fen).unwrap());
        assert_eq!(e("W:WK1:BK50"), 2);
        assert_eq!(e("W:WK1,12:BK50"), 2);
        assert_eq!(e("W:WK1:B30,K50,40"), 1);
        assert_eq!(e("W:WK1:B30,20,40"), 0);
        assert_eq!(e("W:W31:BK50,40"), 0);
        assert_eq!(e("W:WK1,K2,K3,K4:BK50"), 0);
    }

    #[test]
    fn engine_config_errors() {
        let err = Engine::new(EngineConfig { tt_mib: 0, ..EngineConfig::default() }).unwrap_err();
        assert!(err.to_string().contains("at least 1 MiB"), "{err}");
    }
}
