//! The tree search: one engine, two root policies (PUCT and Gumbel), resumable so that a caller
//! can drive many searches and batch their leaves into one evaluator call.

use draughts_core::{Game, Move, MoveList, Outcome, Position};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::{Algorithm, Budget, ConfigError, MctsConfig, SearchKind};
use crate::evaluator::{EvalError, EvalRequest, Evaluation, Evaluator};
use crate::noise;
use crate::tree::{NodeState, Proof, Tree, NONE, ROOT};

/// Identifies a pending evaluation of one [`Search`]; hand it back with the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    node: u32,
    epoch: u32,
}

/// What a search wants next.
// `Eval` is the common variant and carries the request inline (its move list is a stack array);
// boxing it would allocate once per leaf for the benefit of the rare `Wait` and `Done`.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Step {
    /// Evaluate `request` and hand the answer back with [`Search::provide`]. Call `step` again:
    /// the search may have more leaves to hand out (up to `max_in_flight`).
    Eval {
        /// Names this leaf in [`Search::provide`].
        ticket: Ticket,
        /// The position to evaluate.
        request: EvalRequest,
    },
    /// Nothing more can be done until the outstanding evaluations come back.
    Wait,
    /// The budget is spent and nothing is outstanding: read [`Search::outcome`].
    Done,
}

/// What went wrong in a search.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The root position is terminal.
    #[error("the game is over ({0}); there is nothing to search")]
    GameOver(Outcome),
    /// A new search or a move was requested while evaluations are outstanding.
    #[error("{0} evaluations are still outstanding; provide them before starting a search or playing a move")]
    Busy(u32),
    /// [`Search::provide`] got a ticket that names no pending leaf of this search.
    #[error("{0:?} names no pending evaluation of this search (stale after a move or an abort?)")]
    UnknownTicket(Ticket),
    /// The evaluator's answer does not fit the request; the search run was aborted.
    #[error("bad evaluation of {fen}: {reason}")]
    BadEvaluation {
        /// The position that was evaluated.
        fen: String,
        /// What is wrong with the answer.
        reason: String,
    },
    /// The evaluator returned a different number of answers than positions.
    #[error("the evaluator returned {got} evaluations for {want} positions")]
    EvalCount {
        /// Evaluations returned.
        got: usize,
        /// Positions sent.
        want: usize,
    },
    /// The evaluator failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// [`Search::advance`] got a move that is not legal at the root.
    #[error("{mv} is not legal in {fen}")]
    IllegalMove {
        /// The move, in Hub notation.
        mv: String,
        /// The root position.
        fen: String,
    },
    /// [`Search::outcome`] before the root was ever evaluated.
    #[error("the root has not been evaluated yet; run a search first")]
    NotSearched,
    /// Injected Gumbel noise of the wrong length.
    #[error("the Gumbel noise has {got} entries but the root has {want} legal moves")]
    NoiseLength {
        /// Entries given.
        got: usize,
        /// Legal moves at the root.
        want: usize,
    },
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// [`search_many`] was given no budget.
    #[error("no simulation budget given")]
    NoBudget,
}

/// Statistics of one root move.
#[derive(Clone, Debug, PartialEq)]
pub struct ChildStats {
    /// The move.
    pub mv: Move,
    /// The evaluator's prior (before any noise).
    pub prior: f32,
    /// Completed visits of the move's subtree.
    pub visits: u32,
    /// Mean value (`win - loss`) for the side to move at the root, if visited.
    pub q: Option<f32>,
}

/// The result of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    /// The move the search recommends: the most visited move (PUCT), or the sequential-halving
    /// winner by `g + logits + sigma(completed Q)` (Gumbel; with Gumbel noise on, this move is
    /// already a sample and should be played as is).
    pub best: Move,
    /// The policy training target over every legal move, in legal-move order, summing to 1: the
    /// visit distribution (PUCT) or the improved policy `softmax(logits + sigma(completed Q))`
    /// (Gumbel).
    pub policy_target: Vec<(Move, f32)>,
    /// The search's value of the root, `win - loss` for the side to move. PUCT: the mean
    /// backed-up value. Gumbel: the value of the improved policy, `sum_a pi'(a) * completed Q(a)`
    /// (the visit mean would be dragged down by the visits sequential halving spends on weak
    /// moves by design).
    pub root_value: f32,
    /// Win, draw and loss probabilities at the root, computed the same way; `w - l = root_value`.
    pub root_wdl: [f32; 3],
    /// Completed visits of the root, reused ones and its own evaluation included.
    pub visits: u32,
    /// Simulations completed by this search (reused visits not included).
    pub simulations: u32,
    /// Full or fast search (playout-cap randomisation).
    pub kind: SearchKind,
    /// The root policy used.
    pub algorithm: Algorithm,
    /// Per-move statistics, in legal-move order.
    pub children: Vec<ChildStats>,
}

impl SearchOutcome {
    /// Picks a move: `best` when `temperature` is 0 (or below), otherwise a sample from the
    /// policy target raised to `1 / temperature`. For a Gumbel search `best` already is a sample,
    /// so temperature 0 is the usual choice there.
    pub fn pick_move<R: Rng + ?Sized>(&self, temperature: f32, rng: &mut R) -> Move {
        if temperature.is_nan() || temperature <= 0.0 || self.policy_target.len() < 2 {
            return self.best;
        }
        // Work in logs so that small temperatures do not underflow.
        let logs: Vec<f64> = self
            .policy_target
            .iter()
            .map(|&(_, p)| if p > 0.0 { (p as f64).ln() / temperature as f64 } else { f64::NEG_INFINITY })
            .collect();
        let max = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !max.is_finite() {
            return self.best;
        }
        let weights: Vec<f64> = logs.iter().map(|l| (l - max).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut x = rng.gen::<f64>() * total;
        for (w, (mv, _)) in weights.iter().zip(&self.policy_target) {
            if x < *w {
                return *mv;
            }
            x -= w;
        }
        self.best
    }
}

/// Per-child numbers the selection formulas need.
#[derive(Clone, Copy, Debug)]
struct ChildView {
    prior: f32,
    /// Visits, in-flight ones included when selecting.
    n: f32,
    /// Mean value for the parent's side to move; meaningful only when `n > 0`. In-flight visits
    /// count as losses (virtual loss).
    q: f32,
    /// Mean draw probability; meaningful only when `n > 0`.
    d: f32,
}

/// Sequential halving state of a Gumbel root.
#[derive(Clone, Debug)]
struct GumbelRoot {
    /// Gumbel noise per root edge.
    noise: Vec<f32>,
    /// `ln(prior)` per root edge.
    logits: Vec<f32>,
    /// Edge offsets still considered, best first.
    remaining: Vec<usize>,
    /// `ceil(log2(m))`.
    log2m: u32,
    /// Simulations of the current phase.
    phase_len: u32,
    /// Simulations of the current phase handed out so far.
    phase_issued: u32,
}

/// One search in progress (or finished, kept for [`Search::outcome`]).
#[derive(Clone, Debug)]
struct Run {
    budget: Budget,
    /// Simulations started: sent to the evaluator or backed up from a terminal node.
    issued: u32,
    /// Simulations backed up.
    completed: u32,
    /// Leaves waiting for the evaluator, the root included.
    in_flight: u32,
    /// Root noise and schedule set up (after the root is expanded).
    prepared: bool,
    /// PUCT: the root priors used for selection (with Dirichlet noise in full searches).
    root_priors: Vec<f32>,
    gumbel: Option<GumbelRoot>,
}

/// Runs one search in each of `searches` (with `budgets[i]`, or the last budget given for the
/// rest) and evaluates the leaves of all of them together: one evaluator call per round, each
/// round taking up to `max_in_flight` leaves from every search. The outcomes are the same as
/// running each search alone with [`Search::search`].
///
/// On an error every search is aborted (their trees keep the completed simulations).
pub fn search_many<E: Evaluator + ?Sized>(
    searches: &mut [Search],
    budgets: &[Budget],
    evaluator: &E,
) -> Result<Vec<SearchOutcome>, SearchError> {
    let abort_all = |searches: &mut [Search]| searches.iter_mut().for_each(Search::abort);
    let Some(&last) = budgets.last() else {
        return Err(SearchError::NoBudget);
    };
    for (i, s) in searches.iter_mut().enumerate() {
        if let Err(e) = s.start(budgets.get(i).copied().unwrap_or(last)) {
            abort_all(searches);
            return Err(e);
        }
    }
    let mut requests = Vec::new();
    let mut owners = Vec::new();
    loop {
        for (i, s) in searches.iter_mut().enumerate() {
            while let Step::Eval { ticket, request } = s.step() {
                requests.push(request);
                owners.push((i, ticket));
            }
        }
        if requests.is_empty() {
            break;
        }
        let evals = match evaluator.evaluate(&requests) {
            Ok(e) if e.len() == requests.len() => e,
            Ok(e) => {
                abort_all(searches);
                return Err(SearchError::EvalCount { got: e.len(), want: requests.len() });
            }
            Err(e) => {
                abort_all(searches);
                return Err(e.into());
            }
        };
        for ((i, ticket), eval) in owners.drain(..).zip(evals) {
            if let Err(e) = searches[i].provide(ticket, eval) {
                abort_all(searches);
                return Err(e);
            }
        }
        requests.clear();
    }
    searches.iter().map(Search::outcome).collect()
}

#[allow(clippy::large_enum_variant)] // Built once per simulation and consumed at once.
enum Leaf {
    Terminal(usize),
    Eval(usize, EvalRequest),
    Collision,
}

/// A Monte-Carlo tree search over one game.
///
/// Drive it with [`Search::search`] (single caller; batches up to `max_in_flight` leaves), or
/// with [`Search::start`], [`Search::step`] and [`Search::provide`] to batch the leaves of many
/// searches into one evaluator call. The result depends only on the search's own seed and the
/// evaluations it receives, never on how the caller batches.
#[derive(Clone, Debug)]
pub struct Search {
    config: MctsConfig,
    game: Game,
    tree: Tree,
    rng: ChaCha8Rng,
    run: Option<Run>,
    /// Changes whenever node indices do (a move is played), so stale tickets are refused.
    epoch: u32,
    gumbel_override: Option<Vec<f32>>,
    views: Vec<ChildView>,
    probs: Vec<f32>,
}

/// The exact value of a terminal state for its side to move, `(win - loss, draw)`. Mirrors
/// [`Game::outcome`] (a side without legal moves, or without pieces, loses; then the draw rules),
/// reusing the move list the caller already generated.
fn terminal_value(game: &Game, moves: &MoveList) -> Option<(f32, f32)> {
    if moves.is_empty() {
        Some((-1.0, 0.0))
    } else if game.draw_reason().is_some() {
        Some((0.0, 1.0))
    } else {
        None
    }
}

fn logit(p: f32) -> f32 {
    p.max(f32::MIN_POSITIVE).ln()
}

/// `sigma(q)` of the paper with `q` in [-1, 1] rescaled to [0, 1] by the known bounds.
fn sigma(cfg: &MctsConfig, q: f32, max_n: f32) -> f32 {
    (cfg.c_visit + max_n) * cfg.c_scale * (q + 1.0) * 0.5
}

/// The mixed value approximation of the paper (eq. 33): the node's own value blended with the
/// prior-weighted mean Q of the visited children.
fn v_mix(raw: f32, views: &[ChildView]) -> f32 {
    mixed(raw, views, |v| v.q)
}

/// Eq. 33 for any per-child statistic `f` (the value, or the draw probability).
fn mixed(raw: f32, views: &[ChildView], f: impl Fn(&ChildView) -> f32) -> f32 {
    let sum_n: f32 = views.iter().map(|v| v.n).sum();
    if sum_n <= 0.0 {
        return raw;
    }
    let (mut sum_p, mut sum_pf) = (0.0f32, 0.0f32);
    for v in views.iter().filter(|v| v.n > 0.0) {
        let p = v.prior.max(f32::MIN_POSITIVE);
        sum_p += p;
        sum_pf += p * f(v);
    }
    (raw + sum_n * sum_pf / sum_p) / (1.0 + sum_n)
}

/// Q for visited children, `v_mix` for the others.
fn completed_q(raw: f32, views: &[ChildView]) -> impl Iterator<Item = f32> + '_ {
    let mix = v_mix(raw, views);
    views.iter().map(move |v| if v.n > 0.0 { v.q } else { mix })
}

fn max_n(views: &[ChildView]) -> f32 {
    views.iter().map(|v| v.n).fold(0.0, f32::max)
}

/// The improved policy `softmax(logits + sigma(completed Q))` into `out`, computed as
/// `prior * exp(sigma - max sigma)` normalised: the same distribution without a logarithm per
/// child (this runs at every interior visit of the Gumbel search). The prior is clamped as
/// [`logit`] clamps it, so a child with a zero prior keeps the weight it had there.
fn improved_policy(cfg: &MctsConfig, raw: f32, views: &[ChildView], out: &mut Vec<f32>) {
    let mn = max_n(views);
    out.clear();
    out.extend(completed_q(raw, views).map(|q| sigma(cfg, q, mn)));
    let max = out.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut total = 0.0;
    for (x, v) in out.iter_mut().zip(views) {
        *x = v.prior.max(f32::MIN_POSITIVE) * (*x - max).exp();
        total += *x;
    }
    for x in out.iter_mut() {
        *x /= total;
    }
}

/// Index of the largest score; the first one on ties.
fn argmax(scores: impl Iterator<Item = f32>) -> usize {
    let mut best = (0, f32::NEG_INFINITY);
    for (i, s) in scores.enumerate() {
        if s > best.1 {
            best = (i, s);
        }
    }
    best.0
}

/// Visits per considered action in a phase of sequential halving with `remaining` actions:
/// `max(1, floor(n / (ceil(log2 m) * remaining)))`, or all of `n` when only one action is
/// considered.
fn phase_visits(n: u32, log2m: u32, remaining: usize) -> u32 {
    if remaining <= 1 || log2m == 0 {
        n
    } else {
        (n / (log2m * remaining as u32)).max(1)
    }
}

impl Search {
    /// A search for the game's current position. The game's history is kept for the repetition
    /// rule.
    pub fn new(game: Game, config: MctsConfig) -> Result<Search, SearchError> {
        config.validate()?;
        Ok(Search {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            config,
            game,
            tree: Tree::new(),
            run: None,
            epoch: 0,
            gumbel_override: None,
            views: Vec::new(),
            probs: Vec::new(),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &MctsConfig {
        &self.config
    }

    /// The game at the root.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Restarts the random number generator from `seed` (for example a game pool giving each
    /// game its own stream).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// Nodes in the tree (for memory accounting).
    pub fn tree_nodes(&self) -> usize {
        self.tree.nodes.len()
    }

    /// Completed visits of the root (reused ones included).
    pub fn root_visits(&self) -> u32 {
        self.tree.nodes[ROOT].visits
    }

    /// Evaluations handed out and not yet provided.
    pub fn in_flight(&self) -> u32 {
        self.run.as_ref().map_or(0, |r| r.in_flight)
    }

    /// Replaces the root Gumbel noise of the next search by `noise` (one entry per legal move,
    /// in legal-move order). For tests and for reproducing a logged search.
    pub fn set_gumbel_noise(&mut self, noise: Vec<f32>) -> Result<(), SearchError> {
        let want = self.game.legal_moves().len();
        if noise.len() != want {
            return Err(SearchError::NoiseLength { got: noise.len(), want });
        }
        self.gumbel_override = Some(noise);
        Ok(())
    }

    /// Begins a search of `budget` simulations on top of whatever the tree already holds.
    pub fn start(&mut self, budget: Budget) -> Result<(), SearchError> {
        if let Some(outcome) = self.game.outcome() {
            return Err(SearchError::GameOver(outcome));
        }
        let busy = self.in_flight();
        if busy > 0 {
            return Err(SearchError::Busy(busy));
        }
        self.run = Some(Run {
            budget,
            issued: 0,
            completed: 0,
            in_flight: 0,
            prepared: false,
            root_priors: Vec::new(),
            gumbel: None,
        });
        Ok(())
    }

    /// Runs a whole search with `evaluator`, handing it up to `max_in_flight` leaves per call.
    pub fn search<E: Evaluator + ?Sized>(&mut self, evaluator: &E, budget: Budget) -> Result<SearchOutcome, SearchError> {
        self.start(budget)?;
        let mut tickets = Vec::new();
        let mut requests = Vec::new();
        loop {
            let done = loop {
                match self.step() {
                    Step::Eval { ticket, request } => {
                        tickets.push(ticket);
                        requests.push(request);
                    }
                    Step::Wait => break false,
                    Step::Done => break true,
                }
            };
            if requests.is_empty() {
                if done {
                    break;
                }
                // `Wait` with nothing handed out: evaluations from before this call are pending.
                return Err(SearchError::Busy(self.in_flight()));
            }
            let evals = match evaluator.evaluate(&requests) {
                Ok(e) => e,
                Err(e) => {
                    self.abort();
                    return Err(e.into());
                }
            };
            if evals.len() != requests.len() {
                self.abort();
                return Err(SearchError::EvalCount { got: evals.len(), want: requests.len() });
            }
            for (ticket, eval) in tickets.drain(..).zip(evals) {
                if let Err(e) = self.provide(ticket, eval) {
                    self.abort();
                    return Err(e);
                }
            }
            requests.clear();
        }
        self.outcome()
    }

    /// Abandons the current search: outstanding tickets become invalid, their leaves go back to
    /// unevaluated, and the statistics of completed simulations stay.
    pub fn abort(&mut self) {
        for n in &mut self.tree.nodes {
            n.in_flight = 0;
            if n.state == NodeState::Pending {
                n.state = NodeState::New;
            }
        }
        self.run = None;
        self.epoch = self.epoch.wrapping_add(1);
    }

    /// Advances the search by one unit of work: hands out a leaf to evaluate, or says to wait or
    /// that the search is done. Simulations that end in a terminal node are backed up inside.
    pub fn step(&mut self) -> Step {
        let Some(mut run) = self.run.take() else {
            return Step::Done;
        };
        let step = self.step_run(&mut run);
        self.run = Some(run);
        step
    }

    fn step_run(&mut self, run: &mut Run) -> Step {
        match self.tree.nodes[ROOT].state {
            NodeState::New => return self.request_root(run),
            NodeState::Pending => return Step::Wait,
            NodeState::Terminal => return Step::Done,
            NodeState::Expanded => {}
        }
        if !run.prepared {
            self.prepare(run);
        }
        loop {
            // A proven root needs no more simulations: its result is known.
            if run.issued >= run.budget.simulations || self.tree.nodes[ROOT].proof != Proof::Unknown {
                return if run.in_flight > 0 { Step::Wait } else { Step::Done };
            }
            if run.in_flight >= self.config.max_in_flight {
                return Step::Wait;
            }
            let root_edge = match self.config.algorithm {
                Algorithm::Puct => {
                    self.fill_views(ROOT, true);
                    puct_select(&self.config, &self.tree, ROOT, Some(&run.root_priors), &self.views)
                }
                Algorithm::Gumbel => {
                    // Invariant: `prepare` set up the Gumbel root for a Gumbel search.
                    let g = run.gumbel.as_mut().expect("prepared Gumbel root");
                    if g.remaining.is_empty() {
                        // Nothing to consider (a zero budget); unreachable with issued < n.
                        return Step::Done;
                    }
                    if g.phase_issued >= g.phase_len {
                        if run.in_flight > 0 {
                            return Step::Wait;
                        }
                        self.halve(run);
                        continue;
                    }
                    let g = run.gumbel.as_ref().expect("prepared Gumbel root");
                    g.remaining[g.phase_issued as usize % g.remaining.len()]
                }
            };
            match self.descend(root_edge) {
                Leaf::Collision => return Step::Wait,
                Leaf::Terminal(node) => {
                    let (v, d) = self.tree.nodes[node].leaf_value();
                    self.backup(node, v as f64, d as f64);
                    run.issued += 1;
                    run.completed += 1;
                    if let Some(g) = run.gumbel.as_mut() {
                        g.phase_issued += 1;
                    }
                }
                Leaf::Eval(node, request) => {
                    self.add_in_flight(node);
                    run.issued += 1;
                    run.in_flight += 1;
                    if let Some(g) = run.gumbel.as_mut() {
                        g.phase_issued += 1;
                    }
                    return Step::Eval { ticket: Ticket { node: node as u32, epoch: self.epoch }, request };
                }
            }
        }
    }

    fn request_root(&mut self, run: &mut Run) -> Step {
        let moves = self.game.legal_moves();
        if self.tree.nodes[ROOT].num_edges == 0 {
            self.tree.add_edges(ROOT, &moves);
        }
        let request = EvalRequest {
            position: *self.game.position(),
            counters: self.game.counters(),
            repetitions: self.game.repetition_count(),
            moves,
        };
        let root = &mut self.tree.nodes[ROOT];
        root.state = NodeState::Pending;
        root.in_flight += 1;
        run.in_flight += 1;
        Step::Eval { ticket: Ticket { node: ROOT as u32, epoch: self.epoch }, request }
    }

    /// Sets up the root for this search: Dirichlet noise (PUCT, full searches) or Gumbel noise
    /// and the considered set (Gumbel).
    fn prepare(&mut self, run: &mut Run) {
        run.prepared = true;
        let priors: Vec<f32> = self.tree.edges_of(ROOT).iter().map(|e| e.prior).collect();
        let k = priors.len();
        match self.config.algorithm {
            Algorithm::Puct => {
                let eps = self.config.dirichlet_epsilon;
                run.root_priors = if run.budget.kind == SearchKind::Full && eps > 0.0 && k > 1 {
                    let noise = noise::dirichlet(&mut self.rng, self.config.dirichlet_alpha as f64, k);
                    priors.iter().zip(noise).map(|(p, n)| (1.0 - eps) * p + eps * n).collect()
                } else {
                    priors
                };
            }
            Algorithm::Gumbel => {
                let noise = match self.gumbel_override.take() {
                    Some(g) if g.len() == k => g,
                    _ if self.config.gumbel_scale > 0.0 => {
                        (0..k).map(|_| self.config.gumbel_scale * noise::gumbel(&mut self.rng)).collect()
                    }
                    _ => vec![0.0; k],
                };
                let logits: Vec<f32> = priors.iter().map(|&p| logit(p)).collect();
                let n = run.budget.simulations;
                let m = (self.config.gumbel_m as usize).min(k).min(n as usize);
                // Gumbel-top-k: the m largest g + logits, best first (stable on ties).
                let mut order: Vec<usize> = (0..k).collect();
                order.sort_by(|&a, &b| (noise[b] + logits[b]).total_cmp(&(noise[a] + logits[a])));
                order.truncate(m);
                let log2m = if m <= 1 { 0 } else { usize::BITS - (m - 1).leading_zeros() };
                let phase_len = phase_visits(n, log2m, m) * m as u32;
                run.gumbel =
                    Some(GumbelRoot { noise, logits, remaining: order, log2m, phase_len, phase_issued: 0 });
            }
        }
    }

    /// Ends a phase of sequential halving: keeps the better half (at least two) of the considered
    /// actions by `g + logits + sigma(q)` and sizes the next phase.
    fn halve(&mut self, run: &mut Run) {
        self.fill_views(ROOT, false);
        let raw = self.tree.nodes[ROOT].raw_value;
        let mn = max_n(&self.views);
        let q: Vec<f32> = completed_q(raw, &self.views).collect();
        // Invariant: only called for a prepared Gumbel run.
        let g = run.gumbel.as_mut().expect("prepared Gumbel root");
        let score = |a: usize| g.noise[a] + g.logits[a] + sigma(&self.config, q[a], mn);
        let mut ranked = g.remaining.clone();
        ranked.sort_by(|&a, &b| score(b).total_cmp(&score(a)));
        if ranked.len() > 2 {
            ranked.truncate((ranked.len() / 2).max(2));
        }
        g.phase_len = phase_visits(run.budget.simulations, g.log2m, ranked.len()) * ranked.len() as u32;
        g.phase_issued = 0;
        g.remaining = ranked;
    }

    /// Walks from the root through `root_edge` down to a leaf, playing the moves on the game and
    /// taking them back before returning.
    fn descend(&mut self, root_edge: usize) -> Leaf {
        let mut node = ROOT;
        let mut offset = root_edge;
        let mut plies = 0;
        let leaf = loop {
            let e = self.tree.nodes[node].first_edge as usize + offset;
            let edge = self.tree.edges[e];
            self.game.play_unchecked(edge.mv);
            plies += 1;
            let child = if edge.child == NONE {
                let c = self.tree.add_node(node);
                self.tree.edges[e].child = c;
                c as usize
            } else {
                edge.child as usize
            };
            node = child;
            if self.tree.nodes[node].proof != Proof::Unknown {
                // Its value is exact: nothing below it can change it.
                break Leaf::Terminal(node);
            }
            match self.tree.nodes[node].state {
                NodeState::Expanded => {
                    self.fill_views(node, true);
                    offset = match self.config.algorithm {
                        Algorithm::Puct => puct_select(&self.config, &self.tree, node, None, &self.views),
                        Algorithm::Gumbel => {
                            let raw = self.tree.nodes[node].raw_value;
                            gumbel_interior_select(&self.config, raw, &self.views, &mut self.probs)
                        }
                    };
                }
                NodeState::Terminal => break Leaf::Terminal(node),
                NodeState::Pending => break Leaf::Collision,
                NodeState::New => {
                    let moves = self.game.legal_moves();
                    if let Some((v, d)) = terminal_value(&self.game, &moves) {
                        let n = &mut self.tree.nodes[node];
                        n.state = NodeState::Terminal;
                        n.raw_value = v;
                        n.raw_draw = d;
                        if v < 0.0 {
                            n.proof = Proof::Loss;
                            self.propagate_proof(node);
                        }
                        break Leaf::Terminal(node);
                    }
                    if self.tree.nodes[node].num_edges == 0 {
                        self.tree.add_edges(node, &moves);
                    }
                    self.tree.nodes[node].state = NodeState::Pending;
                    let request = EvalRequest {
                        position: *self.game.position(),
                        counters: self.game.counters(),
                        repetitions: self.game.repetition_count(),
                        moves,
                    };
                    break Leaf::Eval(node, request);
                }
            }
        };
        for _ in 0..plies {
            self.game.undo();
        }
        leaf
    }

    /// Hands back the evaluation of the leaf named by `ticket`, and backs it up. A bad
    /// evaluation aborts the search run (see [`Search::abort`]) and is reported.
    pub fn provide(&mut self, ticket: Ticket, eval: Evaluation) -> Result<(), SearchError> {
        let node = ticket.node as usize;
        if self.run.is_none()
            || ticket.epoch != self.epoch
            || self.tree.nodes.get(node).map_or(true, |n| n.state != NodeState::Pending)
        {
            return Err(SearchError::UnknownTicket(ticket));
        }
        let (policy, v, d) = match self.check_evaluation(node, eval) {
            Ok(x) => x,
            Err(reason) => {
                let fen = self.node_position(node).to_fen();
                self.abort();
                return Err(SearchError::BadEvaluation { fen, reason });
            }
        };
        let range = self.tree.nodes[node].edge_range();
        for (e, p) in self.tree.edges[range].iter_mut().zip(policy) {
            e.prior = p;
        }
        let n = &mut self.tree.nodes[node];
        n.state = NodeState::Expanded;
        n.raw_value = v;
        n.raw_draw = d;
        let mut i = node;
        loop {
            let n = &mut self.tree.nodes[i];
            n.in_flight -= 1;
            if n.parent == NONE {
                break;
            }
            i = n.parent as usize;
        }
        // Invariant: checked `self.run.is_none()` above.
        let run = self.run.as_mut().expect("a run");
        run.in_flight -= 1;
        if node != ROOT {
            run.completed += 1;
        }
        self.backup(node, v as f64, d as f64);
        Ok(())
    }

    /// The normalised policy, value and draw probability of `eval`, or why it does not fit.
    fn check_evaluation(&self, node: usize, eval: Evaluation) -> Result<(Vec<f32>, f32, f32), String> {
        let want = self.tree.nodes[node].num_edges as usize;
        let mut policy = eval.policy;
        if policy.len() != want {
            return Err(format!("policy has {} entries for {want} legal moves", policy.len()));
        }
        if let Some((i, p)) = policy.iter().enumerate().find(|(_, p)| !p.is_finite() || **p < 0.0) {
            return Err(format!("policy entry {i} is {p}"));
        }
        let total: f32 = policy.iter().sum();
        if !total.is_finite() || total <= 0.0 {
            return Err(format!("policy sums to {total}"));
        }
        policy.iter_mut().for_each(|p| *p /= total);
        let wdl = eval.wdl;
        if wdl.iter().any(|x| !x.is_finite() || *x < 0.0) {
            return Err(format!("wdl {wdl:?} has a negative or non-finite entry"));
        }
        let s: f32 = wdl.iter().sum();
        if s <= 0.0 {
            return Err(format!("wdl {wdl:?} sums to {s}"));
        }
        Ok((policy, (wdl[0] - wdl[2]) / s, wdl[1] / s))
    }

    /// The position at `node`, replayed from the root (for error messages).
    fn node_position(&self, node: usize) -> Position {
        let mut moves = Vec::new();
        let mut i = node;
        while let Some(p) = Some(self.tree.nodes[i].parent).filter(|&p| p != NONE) {
            let p = p as usize;
            if let Some(e) = self.tree.edges_of(p).iter().find(|e| e.child as usize == i) {
                moves.push(e.mv);
            }
            i = p;
        }
        moves.iter().rev().fold(*self.game.position(), |pos, mv| pos.play(mv))
    }

    /// `node` was just proven: prove its ancestors where that follows. A child proven lost (for
    /// its side to move) makes its parent a proven win; a child proven won makes its parent a
    /// proven loss when every move of the parent leads to a proven win for the opponent.
    fn propagate_proof(&mut self, mut node: usize) {
        loop {
            let parent = self.tree.nodes[node].parent;
            if parent == NONE {
                return;
            }
            let p = parent as usize;
            let proof = match self.tree.nodes[node].proof {
                Proof::Loss => Proof::Win,
                Proof::Win => {
                    let all_lost = self.tree.edges_of(p).iter().all(|e| {
                        e.child != NONE && self.tree.nodes[e.child as usize].proof == Proof::Win
                    });
                    if !all_lost {
                        return;
                    }
                    Proof::Loss
                }
                Proof::Unknown => return,
            };
            if self.tree.nodes[p].proof == proof {
                return;
            }
            self.tree.nodes[p].proof = proof;
            node = p;
        }
    }

    fn add_in_flight(&mut self, mut node: usize) {
        loop {
            let n = &mut self.tree.nodes[node];
            n.in_flight += 1;
            if n.parent == NONE {
                break;
            }
            node = n.parent as usize;
        }
    }

    /// Adds value `v` (side to move at `node`) and draw probability `d` to `node` and its
    /// ancestors, negating `v` at each step up.
    fn backup(&mut self, mut node: usize, mut v: f64, d: f64) {
        loop {
            let n = &mut self.tree.nodes[node];
            n.visits += 1;
            n.value_sum += v;
            n.draw_sum += d;
            if n.parent == NONE {
                break;
            }
            node = n.parent as usize;
            v = -v;
        }
    }

    /// Fills `self.views` with the children of `node`; `in_flight` adds virtual losses.
    fn fill_views(&mut self, node: usize, in_flight: bool) {
        fill_views(&self.tree, node, in_flight, &mut self.views);
    }

    /// The result of the search so far.
    pub fn outcome(&self) -> Result<SearchOutcome, SearchError> {
        if let Some(o) = self.game.outcome() {
            return Err(SearchError::GameOver(o));
        }
        let root = &self.tree.nodes[ROOT];
        if root.state != NodeState::Expanded || root.visits == 0 {
            return Err(SearchError::NotSearched);
        }
        let mut views = Vec::new();
        fill_views(&self.tree, ROOT, false, &mut views);
        let views = &views;
        let edges = self.tree.edges_of(ROOT);
        let visits = root.visits;
        let mut v = (root.value_sum / visits as f64) as f32;
        let mut d = (root.draw_sum / visits as f64) as f32;
        let (best, target) = match self.config.algorithm {
            Algorithm::Puct => {
                let total: f32 = views.iter().map(|v| v.n).sum();
                let target: Vec<f32> = if total > 0.0 {
                    views.iter().map(|v| v.n / total).collect()
                } else {
                    views.iter().map(|v| v.prior).collect()
                };
                // Most visits; then the higher Q; then the higher prior.
                let key = |v: &ChildView| (v.n, if v.n > 0.0 { v.q } else { f32::NEG_INFINITY }, v.prior);
                let mut best = 0;
                for (i, v) in views.iter().enumerate() {
                    if key(v).partial_cmp(&key(&views[best])) == Some(std::cmp::Ordering::Greater) {
                        best = i;
                    }
                }
                (best, target)
            }
            Algorithm::Gumbel => {
                let mut target = Vec::new();
                improved_policy(&self.config, root.raw_value, views, &mut target);
                let mn = max_n(views);
                let q: Vec<f32> = completed_q(root.raw_value, views).collect();
                let gumbel = self.run.as_ref().and_then(|r| r.gumbel.as_ref());
                let score = |a: usize| {
                    let (g, l) = gumbel.map_or((0.0, logit(views[a].prior)), |g| (g.noise[a], g.logits[a]));
                    g + l + sigma(&self.config, q[a], mn)
                };
                let candidates: Vec<usize> = match gumbel {
                    Some(g) if !g.remaining.is_empty() => g.remaining.clone(),
                    _ => (0..views.len()).collect(),
                };
                let best = candidates[argmax(candidates.iter().map(|&a| score(a)))];
                // The value of the improved policy: sum_a pi'(a) * completed Q(a), and the same for
                // the draw probability. The visit average would be dragged down by the visits
                // that sequential halving spends on weak moves by design.
                let d_mix = mixed(root.raw_draw, views, |v| v.d);
                v = target.iter().zip(&q).map(|(p, q)| p * q).sum();
                d = target.iter().zip(views).map(|(p, c)| p * if c.n > 0.0 { c.d } else { d_mix }).sum();
                (best, target)
            }
        };
        // Proven results override the statistics: a move that wins by force is played (the one
        // proven with the fewest visits, most likely the shortest proof), a move that loses by
        // force only when every move does.
        let child_proof = |e: &crate::tree::Edge| {
            if e.child != NONE {
                self.tree.nodes[e.child as usize].proof
            } else {
                Proof::Unknown
            }
        };
        let mut best = best;
        let winning = (0..edges.len()).filter(|&i| child_proof(&edges[i]) == Proof::Loss).min_by_key(|&i| views[i].n as u32);
        if let Some(i) = winning {
            best = i;
        } else if child_proof(&edges[best]) == Proof::Win {
            if let Some(i) = (0..edges.len()).filter(|&i| child_proof(&edges[i]) != Proof::Win).max_by(|&a, &b| {
                (views[a].n, views[a].q).partial_cmp(&(views[b].n, views[b].q)).unwrap_or(std::cmp::Ordering::Equal)
            }) {
                best = i;
            }
        }
        match root.proof {
            Proof::Win => (v, d) = (1.0, 0.0),
            Proof::Loss => (v, d) = (-1.0, 0.0),
            Proof::Unknown => {}
        }
        let root_wdl = [((1.0 - d + v) * 0.5).max(0.0), d, ((1.0 - d - v) * 0.5).max(0.0)];
        let run = self.run.as_ref();
        Ok(SearchOutcome {
            best: edges[best].mv,
            policy_target: edges.iter().map(|e| e.mv).zip(target).collect(),
            root_value: v,
            root_wdl,
            visits,
            simulations: run.map_or(0, |r| r.completed),
            kind: run.map_or(SearchKind::Full, |r| r.budget.kind),
            algorithm: self.config.algorithm,
            children: edges
                .iter()
                .zip(views)
                .map(|(e, v)| ChildStats {
                    mv: e.mv,
                    prior: e.prior,
                    visits: v.n as u32,
                    q: (v.n > 0.0).then_some(v.q),
                })
                .collect(),
        })
    }

    /// Plays `mv` at the root. With `reuse_tree` the subtree of `mv` becomes the new tree (its
    /// visits count toward the next search); otherwise the tree starts afresh.
    pub fn advance(&mut self, mv: Move) -> Result<(), SearchError> {
        let busy = self.in_flight();
        if busy > 0 {
            return Err(SearchError::Busy(busy));
        }
        if !self.game.legal_moves().contains(&mv) {
            return Err(SearchError::IllegalMove { mv: mv.to_hub(), fen: self.game.position().to_fen() });
        }
        let child = self.tree.edges_of(ROOT).iter().find(|e| e.mv == mv).map_or(NONE, |e| e.child);
        self.game.play_unchecked(mv);
        self.tree = if self.config.reuse_tree && child != NONE { self.tree.subtree(child as usize) } else { Tree::new() };
        self.run = None;
        self.epoch = self.epoch.wrapping_add(1);
        Ok(())
    }
}

/// The children of `node` as the selection formulas see them; `in_flight` adds one virtual
/// loss per in-flight simulation.
fn fill_views(tree: &Tree, node: usize, in_flight: bool, out: &mut Vec<ChildView>) {
    out.clear();
    out.extend(tree.edges_of(node).iter().map(|e| {
        if e.child == NONE {
            return ChildView { prior: e.prior, n: 0.0, q: 0.0, d: 0.0 };
        }
        let c = &tree.nodes[e.child as usize];
        let pending = if in_flight { c.in_flight as f64 } else { 0.0 };
        let n = c.visits as f64 + pending;
        if n <= 0.0 {
            return ChildView { prior: e.prior, n: 0.0, q: 0.0, d: 0.0 };
        }
        // A proven child's value is exact.
        match c.proof {
            Proof::Win => return ChildView { prior: e.prior, n: n as f32, q: -1.0, d: 0.0 },
            Proof::Loss => return ChildView { prior: e.prior, n: n as f32, q: 1.0, d: 0.0 },
            Proof::Unknown => {}
        }
        // The parent's view is the negation of the child's; in-flight visits count as losses.
        let q = ((-c.value_sum - pending) / n) as f32;
        ChildView { prior: e.prior, n: n as f32, q, d: (c.draw_sum / n) as f32 }
    }));
}

/// PUCT: argmax of `Q + c * P * sqrt(sum N) / (1 + N)`, unvisited children valued by FPU.
/// `priors` replaces the edge priors (the noisy root priors).
fn puct_select(cfg: &MctsConfig, tree: &Tree, node: usize, priors: Option<&[f32]>, views: &[ChildView]) -> usize {
    let n = &tree.nodes[node];
    let prior = |i: usize| priors.map_or(views[i].prior, |p| p[i]);
    let sum_n: f32 = views.iter().map(|v| v.n).sum();
    let visited_policy: f32 = (0..views.len()).filter(|&i| views[i].n > 0.0).map(prior).sum();
    let parent_q = if n.visits > 0 { (n.value_sum / n.visits as f64) as f32 } else { 0.0 };
    let fpu = parent_q - cfg.fpu_reduction * visited_policy.sqrt();
    let c = cfg.c_puct + cfg.c_puct_factor * ((1.0 + sum_n + cfg.c_puct_base) / cfg.c_puct_base).ln();
    let explore = c * sum_n.max(1.0).sqrt();
    argmax(views.iter().enumerate().map(|(i, v)| {
        let q = if v.n > 0.0 { v.q } else { fpu };
        q + explore * prior(i) / (1.0 + v.n)
    }))
}

/// Gumbel interior selection (the paper's deterministic rule): argmax of
/// `pi_improved(a) - N(a) / (1 + sum N)`.
fn gumbel_interior_select(cfg: &MctsConfig, raw: f32, views: &[ChildView], probs: &mut Vec<f32>) -> usize {
    improved_policy(cfg, raw, views, probs);
    let sum_n: f32 = views.iter().map(|v| v.n).sum();
    argmax(probs.iter().zip(views).map(|(p, v)| p - v.n / (1.0 + sum_n)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use draughts_core::Rules;

    #[test]
    fn terminal_value_mirrors_game_outcome() {
        // Random playouts from the start and from a king ending; compare at every ply.
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let starts = [Position::start(), Position::from_fen("W:WK46,K50:BK1,5").unwrap()];
        let mut checked = 0;
        for (i, start) in starts.iter().cycle().take(40).enumerate() {
            let rules = if i % 3 == 0 { Rules::NO_CAPTURE_25 } else { Rules::FMJD };
            let mut g = Game::from_position(*start, rules);
            for _ in 0..300 {
                let moves = g.legal_moves();
                let mine = terminal_value(&g, &moves);
                let theirs = g.outcome();
                checked += 1;
                match theirs {
                    None => assert_eq!(mine, None),
                    Some(Outcome::Draw(_)) => assert_eq!(mine, Some((0.0, 1.0))),
                    Some(Outcome::Win { winner, .. }) => {
                        assert_ne!(winner, g.position().side_to_move());
                        assert_eq!(mine, Some((-1.0, 0.0)));
                    }
                }
                if theirs.is_some() {
                    break;
                }
                g.play_unchecked(moves[rng.gen_range(0..moves.len())]);
            }
        }
        assert!(checked > 1000);
    }

    #[test]
    fn phase_sizes() {
        // m = 4, n = 16: two phases of 2 x 4 and 4 x 2 visits.
        assert_eq!(phase_visits(16, 2, 4), 2);
        assert_eq!(phase_visits(16, 2, 2), 4);
        // m = 16, n = 32: log2 m = 4; 32 / 64 rounds to 0, so one visit each.
        assert_eq!(phase_visits(32, 4, 16), 1);
        assert_eq!(phase_visits(7, 0, 1), 7);
    }

    #[test]
    fn v_mix_matches_eq_33() {
        // Two visited children (priors .5, .2; Q .4, -.2; visits 3, 1), one unvisited (.3).
        // sum N = 4; weighted Q = (.5*.4 + .2*-.2) / (.5 + .2) = .16 / .7; v_mix = (raw + 4 *
        // .16/.7) / 5 with raw = .1: (.1 + .914286) / 5 = .202857.
        let views = [
            ChildView { prior: 0.5, n: 3.0, q: 0.4, d: 0.0 },
            ChildView { prior: 0.2, n: 1.0, q: -0.2, d: 0.0 },
            ChildView { prior: 0.3, n: 0.0, q: 0.0, d: 0.0 },
        ];
        assert!((v_mix(0.1, &views) - 0.202857).abs() < 1e-5);
        assert_eq!(v_mix(0.1, &views[2..]), 0.1);
    }

    #[test]
    fn improved_policy_is_the_softmax_of_log_prior_plus_sigma() {
        // The product form against the paper's formula, in f64, on random children: visited and
        // not, priors down to zero (clamped as `logit` clamps them) and up to one.
        let cfg = MctsConfig::default();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut out = Vec::new();
        for case in 0..500 {
            let k = rng.gen_range(1..40);
            let views: Vec<ChildView> = (0..k)
                .map(|i| ChildView {
                    prior: if i == 0 && case % 7 == 0 { 0.0 } else { rng.gen::<f32>().powi(3) },
                    n: if rng.gen_bool(0.5) { rng.gen_range(0..300) as f32 } else { 0.0 },
                    q: rng.gen_range(-1.0..1.0),
                    d: 0.0,
                })
                .collect();
            let raw = rng.gen_range(-1.0..1.0);
            improved_policy(&cfg, raw, &views, &mut out);
            let mn = max_n(&views);
            let z: Vec<f64> = completed_q(raw, &views).zip(&views).map(|(q, v)| logit(v.prior) as f64 + sigma(&cfg, q, mn) as f64).collect();
            let max = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = z.iter().map(|x| (x - max).exp()).sum();
            for (p, x) in out.iter().zip(&z) {
                let want = (x - max).exp() / total;
                assert!((*p as f64 - want).abs() <= 1e-5 * want.max(1e-3), "case {case}: {p} against {want}");
            }
            assert!((out.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
    }
}
