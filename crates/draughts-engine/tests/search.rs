//! The search as a black box: legal results, limits, levels, reproducibility.

use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use draughts_core::{Game, Position, Rules};
use draughts_engine::{
    Clock, Engine, EngineConfig, Level, Limits, SearchInfo, SearchResult, BENCH_POSITIONS, EASY_NOISE_MARGIN,
};

fn engine() -> Engine {
    Engine::new(EngineConfig { tt_mib: 2, ..EngineConfig::default() }).unwrap()
}

fn run(engine: &mut Engine, fen: &str, limits: &Limits) -> SearchResult {
    let game = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
    engine.search(&game, limits, &AtomicBool::new(false), &mut |_| {})
}

fn same(a: &SearchResult, b: &SearchResult) -> bool {
    (a.best, a.score, a.depth, a.nodes, &a.pv) == (b.best, b.score, b.depth, b.nodes, &b.pv)
}

#[test]
fn node_limit_gives_the_same_result_every_time() {
    let limits = Limits::nodes(6_000);
    let mut shared = engine();
    for fen in BENCH_POSITIONS {
        let first = run(&mut shared, fen, &limits);
        let again = run(&mut shared, fen, &limits);
        let fresh = run(&mut engine(), fen, &limits);
        assert!(first.best.is_some(), "{fen}");
        assert!(first.nodes <= 6_000, "{fen}: {} nodes", first.nodes);
        assert!(same(&first, &again), "{fen}: {first:?} then {again:?}");
        assert!(same(&first, &fresh), "{fen}: {first:?} vs fresh {fresh:?}");
    }
}

#[test]
fn depth_limit_does_not_depend_on_earlier_searches() {
    let limits = Limits::depth(5);
    let mut shared = engine();
    // Searching everything once first fills the table and history with other positions.
    for fen in BENCH_POSITIONS {
        run(&mut shared, fen, &Limits::depth(4));
    }
    for fen in BENCH_POSITIONS.iter().rev() {
        let reused = run(&mut shared, fen, &limits);
        let fresh = run(&mut engine(), fen, &limits);
        assert!(same(&reused, &fresh), "{fen}: {reused:?} vs fresh {fresh:?}");
    }
}

/// A fixed pseudo-random stream (64-bit LCG), so the positions are the same on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as usize
    }
}

/// Checks `r` against `game`: a legal best move exactly when the game is on, and a principal
/// variation that can be played out.
fn check_result(game: &Game, r: &SearchResult) {
    let fen = game.position().to_fen();
    if game.outcome().is_some() {
        assert_eq!(r.best, None, "{fen}");
        return;
    }
    let best = r.best.unwrap_or_else(|| panic!("no move in {fen}"));
    assert!(game.legal_moves().contains(&best), "illegal {best} in {fen}");
    assert_eq!(r.pv.first(), Some(&best), "{fen}: pv {:?}", r.pv);
    let mut line = game.clone();
    for mv in &r.pv {
        assert!(line.outcome().is_none(), "{fen}: pv {:?} goes past the end of the game", r.pv);
        line.play(*mv).unwrap_or_else(|e| panic!("{fen}: pv {:?}: {e}", r.pv));
    }
}

#[test]
fn random_play_never_gets_an_illegal_move() {
    let mut rng = Lcg(2024);
    let mut engine = engine();
    let stop = AtomicBool::new(false);
    let mut searched = 0;
    for rules in [Rules::FMJD, Rules::PROMOTE_IN_CAPTURE, Rules::NO_CAPTURE_25] {
        for _ in 0..6 {
            let mut game = Game::new(rules);
            for ply in 0..200 {
                if ply % 3 == 0 {
                    let limits =
                        Limits { depth: Some(1 + (rng.next() % 3) as u32), nodes: Some(3_000), ..Limits::default() };
                    let r = engine.search(&game, &limits, &stop, &mut |_| {});
                    check_result(&game, &r);
                    searched += 1;
                }
                if game.outcome().is_some() {
                    break;
                }
                let moves = game.legal_moves();
                game.play(moves[rng.next() % moves.len()]).unwrap();
            }
        }
    }
    assert!(searched > 200);
}

#[test]
fn tiny_limits_still_give_a_legal_move() {
    let stop = AtomicBool::new(false);
    for fen in BENCH_POSITIONS {
        let game = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
        for nodes in [1, 2, 5, 50] {
            let r = engine().search(&game, &Limits::nodes(nodes), &stop, &mut |_| {});
            check_result(&game, &r);
            assert!(r.nodes <= nodes, "{fen}: {} nodes for a limit of {nodes}", r.nodes);
        }
    }
}

#[test]
fn time_limits_and_the_stop_flag() {
    let game = Game::new(Rules::FMJD);
    let mut engine = engine();
    // Move time.
    let start = Instant::now();
    let r = engine.search(&game, &Limits::movetime(Duration::from_millis(40)), &AtomicBool::new(false), &mut |_| {});
    // The bounds below catch a search that ignores its limit (it would run for minutes); they
    // leave room for a machine busy with other tests.
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    assert!(r.depth >= 1);
    check_result(&game, &r);
    // A clock with little time left.
    let clock = Limits {
        clock: Some(Clock { remaining: Duration::from_millis(300), increment: Duration::ZERO, moves_to_go: None }),
        ..Limits::default()
    };
    ends_soon_with_a_legal_move(&mut engine, &game, &clock, false);
    // Stopped before it starts: still a legal move, found quickly.
    ends_soon_with_a_legal_move(&mut engine, &game, &Limits::default(), true);
}

/// Searches `game` within `limits` (with the stop flag already set when `stopped`) and checks that
/// the search ends soon with a legal move. The bound catches a search that ignores its limit (it
/// would run for minutes) and leaves room for a machine busy with other tests.
fn ends_soon_with_a_legal_move(engine: &mut Engine, game: &Game, limits: &Limits, stopped: bool) {
    let start = Instant::now();
    let r = engine.search(game, limits, &AtomicBool::new(stopped), &mut |_| {});
    assert!(start.elapsed() < Duration::from_secs(2), "{limits:?}: {:?}", start.elapsed());
    check_result(game, &r);
}

#[test]
fn threads_keep_the_limits_and_give_legal_moves() {
    let options = draughts_engine::SearchOptions { threads: 3, ..draughts_engine::SearchOptions::default() };
    let mut engine = Engine::new(EngineConfig { tt_mib: 2, options, ..EngineConfig::default() }).unwrap();
    let stop = AtomicBool::new(false);
    // A node limit counts every thread's nodes: each thread adds its count every 1024 nodes and
    // looks at the stop flag as often, so a search ends within two such steps a thread.
    for fen in BENCH_POSITIONS {
        let game = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
        for nodes in [1, 500, 20_000] {
            let r = engine.search(&game, &Limits::nodes(nodes), &stop, &mut |_| {});
            check_result(&game, &r);
            assert!(r.nodes <= nodes + 3 * 2048, "{fen}: {} nodes for a limit of {nodes}", r.nodes);
        }
        let r = engine.search(&game, &Limits::depth(5), &stop, &mut |_| {});
        check_result(&game, &r);
        assert_eq!(r.depth, 5, "{fen}");
    }
    // Random games under every rules preset, searched between random moves.
    let mut rng = Lcg(7);
    for rules in [Rules::FMJD, Rules::PROMOTE_IN_CAPTURE, Rules::NO_CAPTURE_25] {
        let mut game = Game::new(rules);
        for ply in 0..160 {
            if game.outcome().is_some() {
                break;
            }
            if ply % 4 == 0 {
                let r = engine.search(&game, &Limits { depth: Some(4), nodes: Some(5_000), ..Limits::default() }, &stop, &mut |_| {});
                check_result(&game, &r);
            }
            let moves = game.legal_moves();
            game.play(moves[rng.next() % moves.len()]).unwrap();
        }
    }
    // Time and the stop flag end every thread.
    let game = Game::new(Rules::FMJD);
    ends_soon_with_a_legal_move(&mut engine, &game, &Limits::movetime(Duration::from_millis(40)), false);
    ends_soon_with_a_legal_move(&mut engine, &game, &Limits::default(), true);
}

#[test]
fn noise_picks_among_exactly_the_moves_within_its_margin() {
    // At depth 3 without options (no reductions or pruning below the root's children), each root
    // move's value is the child's depth-2 minimax value, which a separate search gives exactly:
    // the moves a noisy search may pick are those whose value is within the margin of the best.
    let options = draughts_engine::SearchOptions::BASELINE;
    let fresh = || Engine::new(EngineConfig { tt_mib: 2, options, ..EngineConfig::default() }).unwrap();
    let stop = AtomicBool::new(false);
    let mut varied = 0;
    for fen in BENCH_POSITIONS.iter().take(8) {
        let game = Game::from_position(Position::from_fen(fen).unwrap(), Rules::FMJD);
        let moves = game.legal_moves();
        let values: Vec<i32> = moves
            .iter()
            .map(|m| {
                let mut child = game.clone();
                child.play(*m).unwrap();
                if child.outcome().is_some() {
                    return -fresh().search(&child, &Limits::depth(1), &stop, &mut |_| {}).score;
                }
                -fresh().search(&child, &Limits::depth(2), &stop, &mut |_| {}).score
            })
            .collect();
        let top = *values.iter().max().unwrap();
        for margin in [0, 15, 60] {
            let within: BTreeSet<String> =
                moves.iter().zip(&values).filter(|(_, &v)| v >= top - margin).map(|(m, _)| m.to_string()).collect();
            let mut picked = BTreeSet::new();
            for seed in 0..48 {
                let limits = Limits { depth: Some(3), noise: Some(draughts_engine::Noise { margin, seed }), ..Limits::default() };
                let r = fresh().search(&game, &limits, &stop, &mut |_| {});
                picked.insert(r.best.unwrap().to_string());
            }
            if top.abs() < 20_000 {
                assert_eq!(picked, within, "{fen}, margin {margin}: values {values:?}");
            }
            varied += (picked.len() > 1) as usize;
        }
    }
    assert!(varied >= 4, "too few positions with a choice to test ({varied})");
}

#[test]
fn iterations_are_reported_in_order() {
    let game = Game::from_position(Position::from_fen(BENCH_POSITIONS[3]).unwrap(), Rules::FMJD);
    let mut infos: Vec<SearchInfo> = Vec::new();
    let r = engine().search(&game, &Limits::depth(6), &AtomicBool::new(false), &mut |i| infos.push(i.clone()));
    let depths: Vec<u32> = infos.iter().map(|i| i.depth).collect();
    assert_eq!(depths, (1..=6).collect::<Vec<_>>());
    assert!(infos.windows(2).all(|w| w[0].nodes <= w[1].nodes));
    let last = infos.last().unwrap();
    assert_eq!((last.score, &last.pv, last.depth), (r.score, &r.pv, r.depth));
    assert!(last.seldepth >= 6);
}

#[test]
fn levels() {
    let game = Game::new(Rules::FMJD);
    let stop = AtomicBool::new(false);
    let exact = engine().search(&game, &Limits::depth(2), &stop, &mut |_| {});
    let mut chosen = BTreeSet::new();
    for seed in 0..24 {
        let limits = Level::Easy.limits(&Limits::default(), seed);
        let a = engine().search(&game, &limits, &stop, &mut |_| {});
        let b = engine().search(&game, &limits, &stop, &mut |_| {});
        assert_eq!((a.best, a.score), (b.best, b.score), "seed {seed}");
        check_result(&game, &a);
        assert!(a.score <= exact.score && a.score >= exact.score - EASY_NOISE_MARGIN, "seed {seed}: {}", a.score);
        chosen.insert(a.best.unwrap().to_string());
    }
    assert!(chosen.len() >= 2, "easy always plays {chosen:?}");
    let medium = engine().search(&game, &Level::Medium.limits(&Limits::default(), 0), &stop, &mut |_| {});
    assert!(medium.depth >= 1 && medium.depth <= 6);
    check_result(&game, &medium);
}

#[test]
fn singular_extension_and_pruning_change_the_search_and_stay_reproducible() {
    // At depth 9 the PV nodes of depth >= 6 test their table move (`singular`), non-PV nodes of
    // depth >= 8 too (`singular_all`), `rfp` prunes quiet nodes of depth 1 to 3, `futility` their
    // quiet moves at depth 1 and 2, `lazy_eval` answers horizon nodes from their material, and
    // `qs_exchanges` searches exchange offers there:
    // with each switched on, some position must search a different tree, and each search must
    // still give the same result twice.
    let pairs = [
        ("singular=on", "singular=off"),
        ("singular_all=on", "singular_all=off"),
        ("rfp=on", "rfp=off"),
        ("futility=on", "futility=off"),
        ("lazy_eval=on", "lazy_eval=off"),
        ("qs_exchanges=on", "qs_exchanges=off"),
    ];
    for (on_text, off_text) in pairs {
        let search = |options: &str, fen: &str| {
            let mut o = draughts_engine::SearchOptions::default();
            o.parse_list(options).unwrap();
            let mut engine = Engine::new(EngineConfig { tt_mib: 2, options: o, ..EngineConfig::default() }).unwrap();
            run(&mut engine, fen, &Limits::depth(9))
        };
        let mut differ = 0;
        for fen in &BENCH_POSITIONS[..4] {
            let (on, off) = (search(on_text, fen), search(off_text, fen));
            assert!(same(&on, &search(on_text, fen)), "{on_text}: {fen}: not reproducible");
            assert!(on.best.is_some() && on.depth == 9, "{on_text}: {fen}: {on:?}");
            differ += (on.nodes != off.nodes) as usize;
        }
        assert!(differ > 0, "{on_text} searched the same trees as {off_text}");
    }
}
