//! The game pool: batching, determinism, records, resignation, ply limit, workers.

mod common;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use common::{small_config, tiny_mcts, Counting};
use draughts_core::{Game, Rules};
use draughts_mcts::{EvalError, EvalRequest, Evaluation, Evaluator, Material, MctsConfig, Uniform};
use draughts_selfplay::{
    run_workers, FinishedGame, GameEnd, Pool, RecordFlags, SelfplayConfig, SelfplayError, Stop, TrainingRecord, Wdl,
};

fn play<E: Evaluator>(config: &SelfplayConfig, mcts: &MctsConfig, eval: E, games: u64) -> (Vec<FinishedGame>, Pool<E>) {
    let mut pool = Pool::new(config, mcts, eval, 0).unwrap();
    let done = pool.play(games).unwrap();
    (done, pool)
}

fn by_index(games: Vec<FinishedGame>) -> BTreeMap<u64, FinishedGame> {
    games.into_iter().map(|g| (g.summary.index, g)).collect()
}

/// Checks every invariant a finished game's records must satisfy.
fn check_game(g: &FinishedGame, rules: &Rules) {
    let s = &g.summary;
    assert_eq!(s.plies as usize, g.game.ply());
    assert_eq!(s.records as usize, g.records.len());
    // The positions before each ply, to check that records describe the game.
    let mut replay = Game::new(*rules);
    let mut states = Vec::new();
    for mv in g.game.moves() {
        states.push((*replay.position(), replay.counters(), replay.repetition_count()));
        replay.play(mv).unwrap();
    }
    match s.end {
        GameEnd::Rules(o) => assert_eq!(replay.outcome(), Some(o)),
        GameEnd::MaxPlies => assert_eq!(replay.outcome(), None),
        GameEnd::Resigned { .. } | GameEnd::Egtb { .. } => assert_eq!(replay.outcome(), None),
    }
    let winner = s.end.winner();
    let mut last_ply = None;
    for r in &g.records {
        assert!(last_ply < Some(r.ply), "records out of order");
        last_ply = Some(r.ply);
        let ply = r.ply as usize;
        // A resigning side's last search is recorded at the final position.
        let (pos, counters, reps) = if ply == states.len() {
            (*replay.position(), replay.counters(), replay.repetition_count())
        } else {
            states[ply]
        };
        assert_eq!((r.position, r.counters, r.repetitions as u32), (pos, counters, reps), "ply {ply}");
        assert_eq!(r.moves_left as usize, g.game.ply() - ply);
        assert_eq!(r.result, Wdl::for_side(winner, r.position.side_to_move()));
        let policy = r.policy_moves(rules).unwrap();
        assert_eq!(policy.len(), r.position.legal_moves_with(rules).len(), "policy covers every legal move");
        let total: f32 = policy.iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-3, "policy sums to {total}");
        assert!(r.root_wdl.iter().all(|x| x.is_finite() && *x >= 0.0));
        assert!((r.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-3, "{:?}", r.root_wdl);
        assert_eq!(r.flags.contains(RecordFlags::MAX_PLIES), s.end == GameEnd::MaxPlies);
        assert_eq!(r.flags.contains(RecordFlags::RESIGNED), matches!(s.end, GameEnd::Resigned { .. }));
        assert_eq!(r.flags.contains(RecordFlags::PLAYTHROUGH), s.playthrough);
    }
}

#[test]
fn batches_are_full_while_games_are_in_flight() {
    // 16 games in flight, a batch of 16: with one leaf per search, every round is one call of
    // exactly 16 until the last games finish.
    let config = small_config(16, 40);
    let (games, pool) = play(&config, &tiny_mcts(), Counting::new(Uniform), 48);
    assert_eq!(games.len(), 48);
    let eval = pool.evaluator();
    let batches = eval.batches.borrow();
    assert_eq!(pool.stats().evaluator_calls as usize, batches.len());
    assert_eq!(pool.stats().positions as usize, eval.positions());
    assert!(batches.iter().all(|&b| b <= 16));
    let mean = pool.stats().mean_batch();
    assert!(mean > 15.0, "mean batch {mean:.2} over {} calls", batches.len());
    // Short batches only happen while the run drains (at most 16 games finishing one by one).
    let short = batches.iter().filter(|&&b| b < 16).count();
    assert_eq!(short as u64, pool.stats().short_batches);
    let first_short = batches.iter().position(|&b| b < 16).unwrap_or(batches.len());
    assert!(batches[first_short..].iter().all(|&b| b < 16), "a short batch before the drain: {batches:?}");
    for g in &games {
        check_game(g, &Rules::FMJD);
    }
}

#[test]
fn max_batch_smaller_than_games_in_flight_gives_full_batches() {
    // 24 games in flight, batches of 16: leftovers wait for the next round, so every call but
    // the draining ones is full, and the games are the same as with any other batching.
    let config = SelfplayConfig { max_batch: 16, ..small_config(24, 30) };
    let (games, pool) = play(&config, &tiny_mcts(), Counting::new(Uniform), 24);
    let batches = pool.evaluator().batches.borrow().clone();
    let full = batches.iter().filter(|&&b| b == 16).count();
    assert!(batches.iter().all(|&b| b <= 16));
    assert!(full as f64 >= 0.9 * batches.len() as f64, "{batches:?}");
    let other = small_config(8, 30);
    let (again, _) = play(&other, &tiny_mcts(), Uniform, 24);
    let (a, b) = (by_index(games), by_index(again));
    for (i, g) in &a {
        assert_eq!(g.records, b[i].records, "game {i}");
        assert!(g.game.moves().eq(b[i].game.moves()));
    }
}

#[test]
fn several_leaves_per_search_fill_batches_too() {
    // Four leaves per search (virtual loss): 4 games fill batches of 16.
    let mcts = MctsConfig { max_in_flight: 4, simulations: 8, ..tiny_mcts() };
    let config = SelfplayConfig { max_batch: 16, ..small_config(4, 30) };
    let (games, pool) = play(&config, &mcts, Counting::new(Material::default()), 8);
    assert_eq!(games.len(), 8);
    let batches = pool.evaluator().batches.borrow().clone();
    assert!(batches.iter().all(|&b| b <= 16));
    assert!(pool.stats().mean_batch() > 8.0, "{batches:?}");
    for g in &games {
        check_game(g, &Rules::FMJD);
    }
}

#[test]
fn same_seed_same_records_other_seed_other_games() {
    let mut config = small_config(6, 60);
    config.random_opening_plies = 4;
    config.temperature_plies = 10;
    let mcts = tiny_mcts();
    let (a, _) = play(&config, &mcts, Material::default(), 8);
    let (b, _) = play(&config, &mcts, Material::default(), 8);
    let flat = |gs: &[FinishedGame]| -> Vec<TrainingRecord> { gs.iter().flat_map(|g| g.records.clone()).collect() };
    assert_eq!(flat(&a), flat(&b));
    assert!(a.iter().zip(&b).all(|(x, y)| x.summary == y.summary && x.game.moves().eq(y.game.moves())));
    config.seed += 1;
    let (c, _) = play(&config, &mcts, Material::default(), 8);
    assert_ne!(flat(&a), flat(&c));
    // Random openings differ between games of one run.
    let openings: std::collections::HashSet<Vec<String>> =
        a.iter().map(|g| g.game.moves().take(4).map(|m| m.to_hub()).collect()).collect();
    assert!(openings.len() > 4, "{openings:?}");
    assert!(a.iter().all(|g| g.summary.opening_plies == 4));
}

#[test]
fn max_plies_adjudicates_a_draw() {
    let config = small_config(4, 12);
    let (games, _) = play(&config, &tiny_mcts(), Uniform, 6);
    for g in &games {
        assert_eq!(g.summary.end, GameEnd::MaxPlies);
        assert_eq!(g.summary.plies, 12);
        assert_eq!(g.records.len(), 12);
        assert!(g.records.iter().all(|r| r.result == Wdl::Draw && r.flags.contains(RecordFlags::MAX_PLIES)));
        check_game(g, &Rules::FMJD);
        let pdn = g.to_pdn("test-model", None);
        assert_eq!(pdn.result, draughts_pdn::GameResult::Draw);
        assert_eq!(pdn.tag("Termination"), Some("draw adjudicated at the ply limit"));
    }
}

#[test]
fn games_play_to_the_end_under_the_rules() {
    // No ply limit to speak of: every game ends by the rules, and every record checks out.
    let config = SelfplayConfig { random_opening_plies: 2, ..small_config(8, 1000) };
    let (games, _) = play(&config, &tiny_mcts(), Material::default(), 8);
    for g in &games {
        assert!(matches!(g.summary.end, GameEnd::Rules(_)), "{:?}", g.summary.end);
        check_game(g, &Rules::FMJD);
        assert_eq!(g.full_searches as usize, g.records.len());
    }
}

#[test]
fn playout_cap_randomisation_records_full_searches_only() {
    let mcts = MctsConfig { full_search_prob: 0.25, ..tiny_mcts() };
    let config = small_config(8, 40);
    let (games, _) = play(&config, &mcts, Uniform, 8);
    let (full, fast): (u32, u32) = games.iter().fold((0, 0), |(a, b), g| (a + g.full_searches, b + g.fast_searches));
    assert!(full > 30 && fast > 3 * full / 2, "full {full} fast {fast}");
    for g in &games {
        assert_eq!(g.records.len(), g.full_searches as usize);
        assert!(g.records.iter().all(|r| r.flags.contains(RecordFlags::FULL_SEARCH)));
    }
    let config = SelfplayConfig { record_fast_searches: true, ..config };
    let (games, _) = play(&config, &mcts, Uniform, 8);
    for g in &games {
        assert_eq!(g.records.len(), (g.full_searches + g.fast_searches) as usize);
        let flagged = g.records.iter().filter(|r| r.flags.contains(RecordFlags::FULL_SEARCH)).count();
        assert_eq!(flagged, g.full_searches as usize);
        check_game(g, &Rules::FMJD);
    }
}

/// Material evaluation with a steep slope: one man up reads as almost won, so resignation
/// triggers after the first lasting exchange imbalance.
fn steep() -> Material {
    Material { scale: 2.0, ..Material::default() }
}

fn resign_config(fraction: f32) -> SelfplayConfig {
    SelfplayConfig {
        resign_threshold: -0.8,
        resign_consecutive: 2,
        resign_playthrough_fraction: fraction,
        random_opening_plies: 6,
        ..small_config(8, 300)
    }
}

#[test]
fn resignation_ends_games_and_flags_records() {
    let (games, _) = play(&resign_config(0.0), &tiny_mcts(), steep(), 16);
    let resigned: Vec<_> = games.iter().filter(|g| matches!(g.summary.end, GameEnd::Resigned { .. })).collect();
    assert!(resigned.len() >= 8, "only {} of 16 games resigned", resigned.len());
    for g in &resigned {
        let GameEnd::Resigned { loser } = g.summary.end else { unreachable!() };
        let point = g.summary.resign.unwrap();
        assert_eq!(point.loser, loser);
        assert_eq!(point.ply, g.summary.plies, "the game ends where the side resigns");
        assert!(!g.summary.playthrough);
        assert_eq!(g.summary.resign_correct(), None);
        // The losing side's last search was below the threshold.
        let last = g.records.last().unwrap();
        let v = if last.position.side_to_move() == loser { last.root_value() } else { -last.root_value() };
        assert!(v < -0.8, "{v}");
        for r in &g.records {
            assert!(r.flags.contains(RecordFlags::RESIGNED));
            assert_eq!(r.result == Wdl::Loss, r.position.side_to_move() == loser);
        }
        check_game(g, &Rules::FMJD);
    }
}

#[test]
fn playthrough_games_record_whether_resigning_was_right() {
    let (games, _) = play(&resign_config(1.0), &tiny_mcts(), steep(), 12);
    assert!(games.iter().all(|g| g.summary.playthrough && !matches!(g.summary.end, GameEnd::Resigned { .. })));
    let would: Vec<_> = games.iter().filter(|g| g.summary.resign.is_some()).collect();
    assert!(would.len() >= 6, "only {} of 12 would have resigned", would.len());
    for g in &would {
        let point = g.summary.resign.unwrap();
        let correct = g.summary.resign_correct().unwrap();
        assert_eq!(correct, g.summary.end.winner() == Some(!point.loser));
        for r in &g.records {
            assert!(r.flags.contains(RecordFlags::PLAYTHROUGH));
            assert_eq!(r.flags.contains(RecordFlags::PAST_RESIGNATION), r.ply >= point.ply, "ply {}", r.ply);
        }
        check_game(g, &Rules::FMJD);
    }
    // A fraction between: some games of each kind, decided per game by its seed.
    let (games, _) = play(&resign_config(0.5), &tiny_mcts(), steep(), 16);
    let n = games.iter().filter(|g| g.summary.playthrough).count();
    assert!((3..=13).contains(&n), "{n} of 16 playthroughs");
}

/// [`Material`] that waits, at its first evaluation, until every worker has reached its own: a
/// worker claims its games before it first evaluates, so with it every worker gets games however
/// late its thread starts (without it, a worker started late on a busy machine could find all
/// the games taken).
struct Gated {
    inner: Material,
    barrier: std::sync::Arc<std::sync::Barrier>,
    passed: std::sync::atomic::AtomicBool,
}

impl Evaluator for Gated {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        if !self.passed.swap(true, std::sync::atomic::Ordering::Relaxed) {
            self.barrier.wait();
        }
        self.inner.evaluate(batch)
    }
}

#[test]
fn workers_play_the_same_games_as_one_pool() {
    let config = SelfplayConfig { workers: 2, ..small_config(4, 30) };
    let mcts = tiny_mcts();
    let mut got = Vec::new();
    let mut ticks = 0;
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
    let summary = run_workers(
        &config,
        &mcts,
        |_| Gated { inner: Material::default(), barrier: barrier.clone(), passed: Default::default() },
        10,
        |g| -> Result<(), std::io::Error> {
            got.push(g);
            Ok(())
        },
        |p| {
            ticks += 1;
            assert!(p.games <= 10);
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert!(ticks >= 10);
    assert_eq!(summary.games, 10);
    assert_eq!(summary.records, got.iter().map(|g| g.records.len() as u64).sum::<u64>());
    assert!(summary.positions > 0 && summary.evaluator_calls > 0);
    assert_eq!(got.iter().map(|g| g.worker).collect::<std::collections::HashSet<_>>().len(), 2);
    let one = SelfplayConfig { workers: 1, ..config };
    let (alone, _) = play(&one, &mcts, Material::default(), 10);
    let (a, b) = (by_index(got), by_index(alone));
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (i, g) in &a {
        assert_eq!(g.records, b[i].records, "game {i}");
    }
}

#[test]
fn sink_errors_and_progress_breaks_stop_the_run() {
    let config = SelfplayConfig { workers: 2, ..small_config(4, 20) };
    let mut seen = 0;
    let err = run_workers(
        &config,
        &tiny_mcts(),
        |_| Uniform,
        100,
        |_| {
            seen += 1;
            if seen == 3 {
                Err(std::io::Error::other("disk full"))
            } else {
                Ok(())
            }
        },
        |_| ControlFlow::Continue(()),
    )
    .unwrap_err();
    assert!(matches!(err, SelfplayError::Sink(_)));
    assert!(err.to_string().contains("disk full"), "{err}");
    let summary = run_workers(
        &config,
        &tiny_mcts(),
        |_| Uniform,
        1000,
        |_| Ok::<(), std::io::Error>(()),
        |p| if p.games >= 2 { ControlFlow::Break(Stop::Now) } else { ControlFlow::Continue(()) },
    )
    .unwrap();
    assert!(summary.games >= 2 && summary.games < 20, "{}", summary.games);
}

/// A worker switching models stops handing out games and lets those in flight finish: every
/// game index handed out comes back as a finished game (none dropped), and no new one starts.
#[test]
fn stop_after_games_in_flight_finishes_every_game_it_started() {
    let config = SelfplayConfig { workers: 2, ..small_config(4, 20) };
    let mut indices = Vec::new();
    let summary = run_workers(
        &config,
        &tiny_mcts(),
        |_| Uniform,
        1000,
        |g| {
            indices.push(g.summary.index);
            Ok::<(), std::io::Error>(())
        },
        |p| if p.games >= 3 { ControlFlow::Break(Stop::AfterGamesInFlight) } else { ControlFlow::Continue(()) },
    )
    .unwrap();
    indices.sort_unstable();
    let n = indices.len() as u64;
    assert_eq!(summary.games, n);
    assert_eq!(indices, (0..n).collect::<Vec<_>>(), "a game handed out was dropped");
    // It stopped early: the games after the third are those handed out before the callback
    // (on the calling thread) saw the third, plus the ones then in flight.
    assert!((3..1000).contains(&n), "{n} games");
}

struct Failing;
impl Evaluator for Failing {
    fn evaluate(&self, _: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        Err(EvalError::new("the network is gone"))
    }
}

struct Short;
impl Evaluator for Short {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        Uniform.evaluate(&batch[1..])
    }
}

struct NegativePolicy;
impl Evaluator for NegativePolicy {
    fn evaluate(&self, batch: &[EvalRequest]) -> Result<Vec<Evaluation>, EvalError> {
        Ok(batch.iter().map(|r| Evaluation { policy: vec![-1.0; r.moves.len()], ..Evaluation::uniform_draw(0) }).collect())
    }
}

#[test]
fn evaluator_failures_are_errors_not_panics() {
    let config = small_config(4, 20);
    let mut pool = Pool::new(&config, &tiny_mcts(), Failing, 3).unwrap();
    let err = pool.play(4).unwrap_err();
    assert!(matches!(err, SelfplayError::Eval { worker: 3, .. }), "{err}");
    assert!(err.to_string().contains("the network is gone"), "{err}");
    let err = Pool::new(&config, &tiny_mcts(), Short, 0).unwrap().play(4).unwrap_err();
    assert!(matches!(err, SelfplayError::EvalCount { got: 3, want: 4, .. }), "{err}");
    let err = Pool::new(&config, &tiny_mcts(), NegativePolicy, 0).unwrap().play(4).unwrap_err();
    assert!(matches!(err, SelfplayError::Search { .. }), "{err}");
    // A pool is reusable after an error.
    let mut pool = Pool::new(&config, &tiny_mcts(), Uniform, 0).unwrap();
    assert_eq!(pool.play(2).unwrap().len(), 2);
    let err = Pool::new(&SelfplayConfig { max_batch: 0, ..config }, &tiny_mcts(), Uniform, 0).unwrap_err();
    assert!(err.to_string().contains("max_batch"), "{err}");
}
