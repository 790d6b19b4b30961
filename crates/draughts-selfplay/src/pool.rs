//! The game pool: many games in flight, each with its own search, all their leaves evaluated in
//! one batch per evaluator call.
//!
//! A round of the pool steps every game's search until it hands out a leaf or waits for one, so
//! that with `max_in_flight = 1` every game in flight has exactly one leaf in the queue. The
//! queue is then evaluated in chunks of exactly `max_batch`; what is left over waits for the next
//! round, when it is joined by the leaves of the games just served. Only when every game is
//! waiting and fewer than `max_batch` leaves are queued (the end of a run, or fewer games in
//! flight than `max_batch`) does the pool send a smaller batch. A search's result depends only on
//! its own seed and the evaluations it receives, never on how leaves are batched, so neither
//! `games_in_flight` nor `max_batch` changes the games a seed produces.

use std::collections::{BTreeSet, VecDeque};
use std::error::Error as StdError;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use draughts_core::{Color, Counters, Game, Position, Rules};
use draughts_mcts::{EvalError, EvalRequest, Evaluator, MctsConfig, Search, SearchError, SearchKind, Step, Ticket};
use draughts_pdn::PdnGame;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::{ConfigError, SelfplayConfig};
use crate::record::{quantise_policy, GameEnd, GameSummary, PolicyEntry, RecordFlags, ResignPoint, TrainingRecord, Wdl};

/// How a progress callback stops self-play (`ControlFlow::Break(Stop::...)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// At once: games in flight are dropped (finished ones were already handed to the sink).
    Now,
    /// Start no new game and return when the games in flight are finished (a self-play worker
    /// that switches to a newer model between games).
    AfterGamesInFlight,
}

/// What can stop self-play.
#[derive(Debug, thiserror::Error)]
pub enum SelfplayError {
    /// The self-play configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The search configuration is invalid.
    #[error(transparent)]
    Mcts(#[from] draughts_mcts::ConfigError),
    /// The evaluator failed.
    #[error("worker {worker}: {source}")]
    Eval {
        /// The worker whose evaluator failed.
        worker: usize,
        /// The evaluator's error.
        #[source]
        source: EvalError,
    },
    /// The evaluator answered a batch with the wrong number of evaluations.
    #[error("worker {worker}: the evaluator returned {got} evaluations for {want} positions")]
    EvalCount {
        /// The worker.
        worker: usize,
        /// Evaluations returned.
        got: usize,
        /// Positions sent.
        want: usize,
    },
    /// A search refused an evaluation or a move (a bad evaluation, or a bug).
    #[error("worker {worker}, game {game}: {source}")]
    Search {
        /// The worker.
        worker: usize,
        /// The game's index in the run.
        game: u64,
        /// What the search said.
        #[source]
        source: SearchError,
    },
    /// The sink that receives finished games failed (for example writing a shard).
    #[error("storing a finished game failed: {0}")]
    Sink(#[source] Box<dyn StdError + Send + Sync>),
    /// A worker thread panicked.
    #[error("self-play worker {0} panicked")]
    WorkerPanicked(usize),
    /// The alpha-beta generator's engine could not be built.
    #[error("self-play engine: {0}")]
    Engine(String),
}

/// A finished game with its training records.
#[derive(Clone, Debug)]
pub struct FinishedGame {
    /// Index, seed, length, how it ended, resignation facts.
    pub summary: GameSummary,
    /// The worker that played it.
    pub worker: usize,
    /// The game: start position, every move (random opening plies included).
    pub game: Game,
    /// One record per recorded search, in game order.
    pub records: Vec<TrainingRecord>,
    /// Searches run with the full budget.
    pub full_searches: u32,
    /// Searches run with the fast budget.
    pub fast_searches: u32,
}

impl FinishedGame {
    /// The game as PDN, with `player` (a model id) as both White and Black, or with `opponent`
    /// (of an alpha-beta game against another network) on [`opponent_side`](crate::opponent_side),
    /// the result, and tags `Termination`, `GameIndex`, `Seed`, `OpeningPlies` and `Rules`.
    pub fn to_pdn(&self, player: &str, opponent: Option<&str>) -> PdnGame {
        let mut pdn = PdnGame::from_game(&self.game);
        pdn.result = self.summary.end.pdn_result();
        let s = &self.summary;
        let mut sides = [player; 2];
        if let Some(o) = opponent {
            sides[crate::opponent_side(s.index) as usize] = o;
        }
        let tags = [
            ("Event", "draughts self-play".to_owned()),
            ("Site", "?".to_owned()),
            ("Date", "????.??.??".to_owned()),
            ("Round", s.index.to_string()),
            ("White", sides[0].to_owned()),
            ("Black", sides[1].to_owned()),
            ("Result", pdn.result.to_pdn().to_owned()),
            ("Termination", s.end.to_string()),
            ("GameIndex", s.index.to_string()),
            ("Seed", s.seed.to_string()),
            ("OpeningPlies", s.opening_plies.to_string()),
            ("Rules", self.game.rules().to_string()),
        ];
        for (name, value) in tags {
            pdn.set_tag(name, value);
        }
        if let Some(r) = s.resign {
            let what = if s.playthrough { "WouldResign" } else { "Resigned" };
            pdn.set_tag(what, format!("{} at ply {}", r.loser.name(), r.ply));
        }
        pdn
    }
}

/// Counters of one pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Evaluator calls.
    pub evaluator_calls: u64,
    /// Positions evaluated (the sum of the batch sizes).
    pub positions: u64,
    /// Evaluator calls with fewer than `max_batch` positions.
    pub short_batches: u64,
    /// Moves played after a search.
    pub moves: u64,
    /// Games finished.
    pub games: u64,
    /// Training records produced.
    pub records: u64,
}

impl PoolStats {
    /// Mean positions per evaluator call.
    pub fn mean_batch(&self) -> f64 {
        self.positions as f64 / self.evaluator_calls.max(1) as f64
    }
}

/// The seed of game `index` of a run with master seed `master`.
pub fn game_seed(master: u64, index: u64) -> u64 {
    splitmix(master ^ splitmix(index ^ 0x5EED_5EED_5EED_5EED))
}

/// A seed for one purpose (`stream`) of a game.
pub(crate) fn sub_seed(seed: u64, stream: u64) -> u64 {
    splitmix(seed.wrapping_add(stream.wrapping_mul(0x9E37_79B9_7F4A_7C15)))
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A new game after `plies` uniformly random plies (fewer if the game would end), and the
/// number played.
pub(crate) fn random_opening(start: Position, rules: Rules, plies: u32, rng: &mut ChaCha8Rng) -> (Game, u16) {
    let mut game = Game::from_position(start, rules);
    let mut played = 0;
    for _ in 0..plies {
        let moves = game.legal_moves();
        if moves.is_empty() {
            break;
        }
        game.play_unchecked(moves[rng.gen_range(0..moves.len())]);
        if game.outcome().is_some() {
            // Never hand the search a finished game.
            game.undo();
            break;
        }
        played += 1;
    }
    (game, played)
}

/// A searched position waiting for its game's result.
#[derive(Clone, Debug)]
pub(crate) struct PendingRecord {
    pub position: Position,
    pub counters: Counters,
    pub repetitions: u8,
    pub ply: u16,
    pub policy: Vec<PolicyEntry>,
    pub root_wdl: [f32; 3],
    pub full: bool,
    pub past_resignation: bool,
    /// The position's value from the endgame databases, for the side to move (`egtb_targets`).
    pub exact: Option<Wdl>,
}

impl PendingRecord {
    /// The record of the game's current position, before its move is played.
    pub fn of(game: &Game, policy: Vec<PolicyEntry>, root_wdl: [f32; 3], full: bool, past_resignation: bool) -> PendingRecord {
        PendingRecord {
            position: *game.position(),
            counters: game.counters(),
            repetitions: game.repetition_count().min(u8::MAX as u32) as u8,
            ply: game.ply() as u16,
            policy,
            root_wdl,
            full,
            past_resignation,
            exact: None,
        }
    }
}

/// What a finished game is made of, whichever generator played it.
#[derive(Debug)]
pub(crate) struct Played {
    pub index: u64,
    pub seed: u64,
    pub worker: usize,
    pub game: Game,
    pub end: GameEnd,
    pub opening_plies: u16,
    pub playthrough: bool,
    pub resign: Option<ResignPoint>,
    pub pending: Vec<PendingRecord>,
    pub full_searches: u32,
    pub fast_searches: u32,
}

impl Played {
    /// The finished game: results, moves left and flags filled in.
    pub fn finish(self) -> FinishedGame {
        let end_ply = self.game.ply();
        let end = self.end;
        let winner = end.winner();
        let game_flags = RecordFlags::default()
            .with(RecordFlags::PLAYTHROUGH, self.playthrough)
            .with(RecordFlags::MAX_PLIES, end == GameEnd::MaxPlies)
            .with(RecordFlags::RESIGNED, matches!(end, GameEnd::Resigned { .. }));
        let records: Vec<TrainingRecord> = self
            .pending
            .into_iter()
            .map(|p| TrainingRecord {
                result: p.exact.unwrap_or_else(|| Wdl::for_side(winner, p.position.side_to_move())),
                moves_left: (end_ply - p.ply as usize).min(u16::MAX as usize) as u16,
                flags: game_flags
                    .with(RecordFlags::FULL_SEARCH, p.full)
                    .with(RecordFlags::PAST_RESIGNATION, p.past_resignation)
                    .with(RecordFlags::QUIET, !p.position.has_capture()),
                position: p.position,
                counters: p.counters,
                repetitions: p.repetitions,
                ply: p.ply,
                policy: p.policy,
                root_wdl: p.exact.map_or(p.root_wdl, Wdl::one_hot),
            })
            .collect();
        FinishedGame {
            summary: GameSummary {
                index: self.index,
                seed: self.seed,
                plies: end_ply.min(u16::MAX as usize) as u16,
                opening_plies: self.opening_plies,
                records: records.len() as u32,
                end,
                playthrough: self.playthrough,
                resign: self.resign,
            },
            worker: self.worker,
            game: self.game,
            records,
            full_searches: self.full_searches,
            fast_searches: self.fast_searches,
        }
    }
}

/// One game in flight.
#[derive(Debug)]
struct Slot {
    index: u64,
    seed: u64,
    rng: ChaCha8Rng,
    search: Search,
    opening_plies: u16,
    playthrough: bool,
    /// The side that the last consecutive searches agree is lost, and for how many plies.
    streak: Option<(Color, u32)>,
    resign: Option<ResignPoint>,
    pending: Vec<PendingRecord>,
    full_searches: u32,
    fast_searches: u32,
}

/// Live counters shared by the pools of a run (read by the progress callback).
#[derive(Debug, Default)]
pub(crate) struct Live {
    pub positions: AtomicU64,
    pub calls: AtomicU64,
    pub moves: AtomicU64,
}

/// A worker's pool of games in flight over one evaluator.
#[derive(Debug)]
pub struct Pool<E> {
    config: SelfplayConfig,
    rules: Rules,
    mcts: MctsConfig,
    evaluator: E,
    worker: usize,
    slots: Vec<Option<Slot>>,
    /// Leaves waiting for the evaluator: the slot and ticket, and the request (kept apart so that
    /// a chunk of requests is one contiguous slice).
    waiting: VecDeque<(usize, Ticket)>,
    requests: Vec<EvalRequest>,
    batch: Vec<EvalRequest>,
    stats: PoolStats,
    stop: Option<Arc<AtomicBool>>,
    live: Option<Arc<Live>>,
}

impl<E: Evaluator> Pool<E> {
    /// A pool for worker `worker` (it only labels errors and finished games).
    pub fn new(config: &SelfplayConfig, mcts: &MctsConfig, evaluator: E, worker: usize) -> Result<Pool<E>, SelfplayError> {
        let rules = config.validate()?;
        mcts.validate()?;
        Ok(Pool {
            config: config.clone(),
            rules,
            mcts: *mcts,
            evaluator,
            worker,
            slots: (0..config.games_in_flight).map(|_| None).collect(),
            waiting: VecDeque::new(),
            requests: Vec::new(),
            batch: Vec::new(),
            stats: PoolStats::default(),
            stop: None,
            live: None,
        })
    }

    /// Makes [`Pool::run`] return (dropping the games in flight) once `flag` is set.
    pub fn with_stop_flag(mut self, flag: Arc<AtomicBool>) -> Pool<E> {
        self.stop = Some(flag);
        self
    }

    pub(crate) fn with_live(mut self, live: Arc<Live>) -> Pool<E> {
        self.live = Some(live);
        self
    }

    /// The counters so far.
    pub fn stats(&self) -> &PoolStats {
        &self.stats
    }

    /// The evaluator.
    pub fn evaluator(&self) -> &E {
        &self.evaluator
    }

    /// Plays games `0..games` and returns them in the order they finished.
    pub fn play(&mut self, games: u64) -> Result<Vec<FinishedGame>, SelfplayError> {
        let mut next = 0..games;
        let mut done = Vec::new();
        self.run(
            || next.next(),
            |g| {
                done.push(g);
                ControlFlow::Continue(())
            },
        )?;
        Ok(done)
    }

    /// Plays until `next_game` (which hands out game indices) runs dry and every game in flight
    /// is finished, handing each finished game to `emit`. Returns early, dropping the games in
    /// flight, when `emit` breaks or the stop flag is set.
    pub fn run<N, F>(&mut self, mut next_game: N, mut emit: F) -> Result<(), SelfplayError>
    where
        N: FnMut() -> Option<u64>,
        F: FnMut(FinishedGame) -> ControlFlow<()>,
    {
        let result = self.run_inner(&mut next_game, &mut emit);
        // Whatever happened, leave the pool empty so that a later run starts clean.
        self.slots.iter_mut().for_each(|s| *s = None);
        self.waiting.clear();
        self.requests.clear();
        match result {
            Ok(ControlFlow::Continue(())) | Ok(ControlFlow::Break(())) => Ok(()),
            Err(e) => Err(e),
        }
    }

    fn run_inner(
        &mut self,
        next_game: &mut dyn FnMut() -> Option<u64>,
        emit: &mut dyn FnMut(FinishedGame) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, SelfplayError> {
        let max_batch = self.config.max_batch;
        loop {
            if self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Ok(ControlFlow::Break(()));
            }
            for i in 0..self.slots.len() {
                if self.pump(i, next_game, emit)?.is_break() {
                    return Ok(ControlFlow::Break(()));
                }
            }
            if self.requests.is_empty() {
                // Every active search is either waiting for a queued leaf or has handed one out,
                // so an empty queue means no game is left.
                debug_assert!(self.slots.iter().all(Option::is_none));
                return Ok(ControlFlow::Continue(()));
            }
            if self.requests.len() < max_batch {
                self.evaluate(self.requests.len())?;
            } else {
                while self.requests.len() >= max_batch {
                    self.evaluate(max_batch)?;
                }
            }
        }
    }

    /// Steps slot `i` until its search hands out a leaf and waits, starting games and playing
    /// moves as needed.
    fn pump(
        &mut self,
        i: usize,
        next_game: &mut dyn FnMut() -> Option<u64>,
        emit: &mut dyn FnMut(FinishedGame) -> ControlFlow<()>,
    ) -> Result<ControlFlow<()>, SelfplayError> {
        loop {
            let Some(slot) = self.slots[i].as_mut() else {
                match next_game() {
                    Some(index) => {
                        let slot = self.new_slot(index)?;
                        self.slots[i] = Some(slot);
                        continue;
                    }
                    None => return Ok(ControlFlow::Continue(())),
                }
            };
            match slot.search.step() {
                Step::Eval { ticket, request } => {
                    self.waiting.push_back((i, ticket));
                    self.requests.push(request);
                }
                Step::Wait => return Ok(ControlFlow::Continue(())),
                Step::Done => {
                    if let Some(end) = self.play_move(i)? {
                        // Invariant: `play_move` was called on an occupied slot.
                        let slot = self.slots[i].take().expect("occupied slot");
                        let game = self.finish(slot, end);
                        if emit(game).is_break() {
                            return Ok(ControlFlow::Break(()));
                        }
                    }
                }
            }
        }
    }

    fn search_error(&self, game: u64, source: SearchError) -> SelfplayError {
        SelfplayError::Search { worker: self.worker, game, source }
    }

    /// A new game: random opening plies, the resignation playthrough draw, the first search.
    fn new_slot(&mut self, index: u64) -> Result<Slot, SelfplayError> {
        let seed = game_seed(self.config.seed, index);
        let mut rng = ChaCha8Rng::seed_from_u64(sub_seed(seed, 1));
        let playthrough = rng.gen::<f32>() < self.config.resign_playthrough_fraction;
        let start = self.config.start_position().expect("the config was validated");
        let (game, opening_plies) = random_opening(start, self.rules, self.config.random_opening_plies, &mut rng);
        let mcts = MctsConfig { seed: sub_seed(seed, 2), ..self.mcts };
        let mut search = Search::new(game, mcts).map_err(|e| self.search_error(index, e))?;
        let budget = self.mcts.draw_budget(&mut rng);
        search.start(budget).map_err(|e| self.search_error(index, e))?;
        Ok(Slot {
            index,
            seed,
            rng,
            search,
            opening_plies,
            playthrough,
            streak: None,
            resign: None,
            pending: Vec::new(),
            full_searches: 0,
            fast_searches: 0,
        })
    }

    /// The search of slot `i` is done: record it, decide on resignation, play the move and start
    /// the next search. Returns how the game ended, if it did.
    fn play_move(&mut self, i: usize) -> Result<Option<GameEnd>, SelfplayError> {
        let cfg = &self.config;
        // Invariant: only called for an occupied slot.
        let slot = self.slots[i].as_mut().expect("occupied slot");
        let index = slot.index;
        let worker = self.worker;
        let err = |source| SelfplayError::Search { worker, game: index, source };
        let out = slot.search.outcome().map_err(err)?;
        let game = slot.search.game();
        let ply = game.ply();
        let us = game.position().side_to_move();
        let full = out.kind == SearchKind::Full;
        if full {
            slot.full_searches += 1;
        } else {
            slot.fast_searches += 1;
        }

        // Resignation: consecutive searches (by either side) agreeing on the same loser.
        let mut resign_now = None;
        if cfg.resign_consecutive > 0 {
            let v = out.root_value;
            let loser = if v < cfg.resign_threshold {
                Some(us)
            } else if -v < cfg.resign_threshold {
                Some(!us)
            } else {
                None
            };
            slot.streak = match (loser, slot.streak) {
                (Some(l), Some((s, n))) if l == s => Some((l, n + 1)),
                (Some(l), _) => Some((l, 1)),
                (None, _) => None,
            };
            if let Some((loser, n)) = slot.streak {
                if n >= cfg.resign_consecutive && slot.resign.is_none() {
                    slot.resign = Some(ResignPoint { ply: ply as u16, loser });
                    if !slot.playthrough {
                        resign_now = Some(GameEnd::Resigned { loser });
                    }
                }
            }
        }

        if full || cfg.record_fast_searches {
            let past = slot.playthrough && slot.resign.is_some();
            slot.pending.push(PendingRecord::of(game, quantise_policy(&out.policy_target), out.root_wdl, full, past));
        }
        if resign_now.is_some() {
            return Ok(resign_now);
        }

        let mv = out.pick_move(cfg.temperature_at(ply), &mut slot.rng);
        slot.search.advance(mv).map_err(err)?;
        self.stats.moves += 1;
        if let Some(live) = &self.live {
            live.moves.fetch_add(1, Ordering::Relaxed);
        }
        let game = slot.search.game();
        if let Some(outcome) = game.outcome() {
            return Ok(Some(GameEnd::Rules(outcome)));
        }
        if game.ply() >= cfg.max_plies as usize {
            return Ok(Some(GameEnd::MaxPlies));
        }
        let budget = self.mcts.draw_budget(&mut slot.rng);
        slot.search.start(budget).map_err(err)?;
        Ok(None)
    }

    /// Turns a finished slot into a [`FinishedGame`]: results, moves left and flags.
    fn finish(&mut self, slot: Slot, end: GameEnd) -> FinishedGame {
        let g = Played {
            index: slot.index,
            seed: slot.seed,
            worker: self.worker,
            game: slot.search.game().clone(),
            end,
            opening_plies: slot.opening_plies,
            playthrough: slot.playthrough,
            resign: slot.resign,
            pending: slot.pending,
            full_searches: slot.full_searches,
            fast_searches: slot.fast_searches,
        }
        .finish();
        self.stats.games += 1;
        self.stats.records += g.records.len() as u64;
        g
    }

    /// Evaluates the first `n` queued leaves in one call and hands the answers back.
    fn evaluate(&mut self, n: usize) -> Result<(), SelfplayError> {
        self.batch.clear();
        self.batch.extend(self.requests.drain(..n));
        let evals = self
            .evaluator
            .evaluate(&self.batch)
            .map_err(|source| SelfplayError::Eval { worker: self.worker, source })?;
        if evals.len() != n {
            return Err(SelfplayError::EvalCount { worker: self.worker, got: evals.len(), want: n });
        }
        self.stats.evaluator_calls += 1;
        self.stats.positions += n as u64;
        if n < self.config.max_batch {
            self.stats.short_batches += 1;
        }
        if let Some(live) = &self.live {
            live.calls.fetch_add(1, Ordering::Relaxed);
            live.positions.fetch_add(n as u64, Ordering::Relaxed);
        }
        for ((i, ticket), eval) in self.waiting.drain(..n).zip(evals) {
            // Invariant: a slot with a queued leaf stays occupied until the leaf comes back.
            let slot = self.slots[i].as_mut().expect("occupied slot");
            if let Err(source) = slot.search.provide(ticket, eval) {
                return Err(SelfplayError::Search { worker: self.worker, game: slot.index, source });
            }
        }
        Ok(())
    }
}

/// Where a run stands, handed to the progress callback.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Games finished and handed to the sink.
    pub games: u64,
    /// Games requested.
    pub games_target: u64,
    /// Moves played after a search, all workers.
    pub moves: u64,
    /// Training records in finished games.
    pub records: u64,
    /// Positions evaluated, all workers.
    pub positions: u64,
    /// Evaluator calls, all workers.
    pub evaluator_calls: u64,
    /// Finished games won by White, won by Black, drawn.
    pub white_wins: u64,
    /// See `white_wins`.
    pub black_wins: u64,
    /// See `white_wins`.
    pub draws: u64,
    /// Games ended by resignation.
    pub resigned: u64,
    /// Games adjudicated at `max_plies`.
    pub max_plies: u64,
    /// Games adjudicated by the endgame databases (`egtb_adjudicate`).
    pub egtb: u64,
    /// Playthrough games in which a side would have resigned.
    pub playthrough_would_resign: u64,
    /// Of those, the games the would-be resigner did not lose (false resignations).
    pub playthrough_false_resign: u64,
    /// Time since the run started.
    pub elapsed: Duration,
}

impl Progress {
    /// Positions evaluated per second.
    pub fn positions_per_second(&self) -> f64 {
        self.positions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// Mean positions per evaluator call.
    pub fn mean_batch(&self) -> f64 {
        self.positions as f64 / self.evaluator_calls.max(1) as f64
    }

    fn add_game(&mut self, g: &FinishedGame) {
        let s = &g.summary;
        self.games += 1;
        self.records += g.records.len() as u64;
        match s.end.winner() {
            Some(Color::White) => self.white_wins += 1,
            Some(Color::Black) => self.black_wins += 1,
            None => self.draws += 1,
        }
        match s.end {
            GameEnd::Resigned { .. } => self.resigned += 1,
            GameEnd::MaxPlies => self.max_plies += 1,
            GameEnd::Egtb { .. } => self.egtb += 1,
            GameEnd::Rules(_) => {}
        }
        if let Some(correct) = s.resign_correct() {
            self.playthrough_would_resign += 1;
            if !correct {
                self.playthrough_false_resign += 1;
            }
        }
    }
}

/// The game indices a run plays: `0..count`, less those in `played` (games a stopped stage had
/// already written, so that its restart with the same seed neither plays them twice nor loses
/// them). A plain count converts into it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Games {
    /// Indices `0..count` are the run's games.
    pub count: u64,
    /// Indices already played, skipped.
    pub played: BTreeSet<u64>,
}

impl Games {
    /// `0..count` less `played`.
    pub fn resuming(count: u64, played: BTreeSet<u64>) -> Games {
        Games { count, played }
    }

    /// How many games are left to play.
    pub fn left(&self) -> u64 {
        self.count - self.played.range(..self.count).count() as u64
    }

    /// Whether game `index` is to be played.
    fn plays(&self, index: u64) -> bool {
        index < self.count && !self.played.contains(&index)
    }
}

impl From<u64> for Games {
    fn from(count: u64) -> Games {
        Games { count, played: BTreeSet::new() }
    }
}

/// How often the progress callback runs when no game finishes.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(500);

/// Runs `config.workers` pools on their own threads until `games` are finished, and hands
/// every finished game to `sink` on the calling thread (so the sink can own a writer and need not
/// be `Send`).
///
/// Each worker builds its evaluator with `factory(worker)` on its own thread, so the evaluator
/// need be neither `Send` nor `Sync`. Game indices are handed out from one counter, and a game's
/// seed depends only on the master seed and its index, so with a deterministic evaluator a run
/// plays the same games whatever the number of workers (they may finish in another order).
///
/// `progress` runs after every finished game and at least twice a second; returning
/// `ControlFlow::Break(Stop::Now)` stops the run (games in flight are dropped; finished ones were
/// already handed to the sink), `ControlFlow::Break(Stop::AfterGamesInFlight)` starts no new game
/// and lets the games in flight finish. A sink error also stops the run and is returned. Returns the final
/// counters.
pub fn run_workers<E, F, S, SE, P>(
    config: &SelfplayConfig,
    mcts: &MctsConfig,
    factory: F,
    games: impl Into<Games>,
    sink: S,
    progress: P,
) -> Result<Progress, SelfplayError>
where
    E: Evaluator,
    F: Fn(usize) -> E + Sync,
    S: FnMut(FinishedGame) -> Result<(), SE>,
    SE: Into<Box<dyn StdError + Send + Sync>>,
    P: FnMut(&Progress) -> ControlFlow<Stop>,
{
    config.validate()?;
    mcts.validate()?;
    drive(
        config,
        games.into(),
        |w, claim, emit, stop, live| {
            let evaluator = factory(w);
            let mut pool = Pool::new(config, mcts, evaluator, w)?.with_stop_flag(stop.clone()).with_live(live.clone());
            pool.run(claim, emit)
        },
        sink,
        progress,
    )
}

/// Runs `config.workers` workers on their own threads until `games` are finished, handing
/// every finished game to `sink` on the calling thread (see [`run_workers`]). A worker
/// (`work(worker, claim, emit, stop, live)`) plays the games that `claim` hands out until it
/// returns `None`, hands each finished game to `emit` (stopping when it breaks), watches `stop`
/// and counts its work in `live`.
pub(crate) fn drive<W, S, SE, P>(config: &SelfplayConfig, games: Games, work: W, mut sink: S, mut progress: P) -> Result<Progress, SelfplayError>
where
    W: Fn(
            usize,
            &mut dyn FnMut() -> Option<u64>,
            &mut dyn FnMut(FinishedGame) -> ControlFlow<()>,
            &Arc<AtomicBool>,
            &Arc<Live>,
        ) -> Result<(), SelfplayError>
        + Sync,
    S: FnMut(FinishedGame) -> Result<(), SE>,
    SE: Into<Box<dyn StdError + Send + Sync>>,
    P: FnMut(&Progress) -> ControlFlow<Stop>,
{
    let start = Instant::now();
    let next = AtomicU64::new(0);
    let stop = Arc::new(AtomicBool::new(false));
    // Set by `Stop::AfterGamesInFlight`: no game is handed out any more.
    let drain = AtomicBool::new(false);
    let live = Arc::new(Live::default());
    let mut state = Progress { games_target: games.left(), ..Progress::default() };
    let mut sink_error = None;
    let worker_results: Vec<Result<(), SelfplayError>> = std::thread::scope(|scope| {
        let (tx, rx) = mpsc::sync_channel::<FinishedGame>(config.games_in_flight * config.workers);
        let handles: Vec<_> = (0..config.workers)
            .map(|w| {
                let (tx, stop, live, next, work, drain, games) =
                    (tx.clone(), stop.clone(), live.clone(), &next, &work, &drain, &games);
                scope.spawn(move || -> Result<(), SelfplayError> {
                    let mut claim = || loop {
                        if drain.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                            return None;
                        }
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= games.count {
                            return None;
                        }
                        if games.plays(i) {
                            return Some(i);
                        }
                    };
                    let mut emit = |g| match tx.send(g) {
                        Ok(()) => ControlFlow::Continue(()),
                        Err(_) => ControlFlow::Break(()),
                    };
                    let result = work(w, &mut claim, &mut emit, &stop, &live);
                    if result.is_err() {
                        // One worker failing ends the run.
                        stop.store(true, Ordering::Relaxed);
                    }
                    result
                })
            })
            .collect();
        drop(tx);
        let refresh = |state: &mut Progress| {
            state.moves = live.moves.load(Ordering::Relaxed);
            state.positions = live.positions.load(Ordering::Relaxed);
            state.evaluator_calls = live.calls.load(Ordering::Relaxed);
            state.elapsed = start.elapsed();
        };
        loop {
            let tick = match rx.recv_timeout(PROGRESS_INTERVAL) {
                Ok(game) => {
                    if sink_error.is_none() {
                        state.add_game(&game);
                        if let Err(e) = sink(game) {
                            sink_error = Some(e.into());
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                    true
                }
                Err(mpsc::RecvTimeoutError::Timeout) => true,
                Err(mpsc::RecvTimeoutError::Disconnected) => false,
            };
            if !tick {
                break;
            }
            if sink_error.is_none() && !stop.load(Ordering::Relaxed) {
                refresh(&mut state);
                match progress(&state) {
                    ControlFlow::Continue(()) => {}
                    ControlFlow::Break(Stop::Now) => stop.store(true, Ordering::Relaxed),
                    ControlFlow::Break(Stop::AfterGamesInFlight) => drain.store(true, Ordering::Relaxed),
                }
            }
        }
        refresh(&mut state);
        handles
            .into_iter()
            .enumerate()
            .map(|(w, h)| h.join().unwrap_or(Err(SelfplayError::WorkerPanicked(w))))
            .collect()
    });
    if let Some(e) = sink_error {
        return Err(SelfplayError::Sink(e));
    }
    for r in worker_results {
        r?;
    }
    Ok(state)
}
