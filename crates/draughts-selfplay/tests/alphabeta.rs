//! The alpha-beta generator: whole games with one record per searched position, quiet flags,
//! diverse openings, and games that depend only on the seed and the game index.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use draughts_core::{Game, Rules};
use draughts_engine::{Engine, EngineConfig, Limits, Weights};
use draughts_selfplay::{
    opponent_side, played_indices, run_alphabeta_workers, FinishedGame, Games, Generator, RecordFlags, SelfplayConfig,
    ShardWriter,
};

fn config(workers: usize) -> SelfplayConfig {
    SelfplayConfig {
        generator: Generator::Alphabeta,
        alphabeta_nodes: 300,
        alphabeta_margin: 30,
        alphabeta_hash_mib: 1,
        temperature_plies: 8,
        random_opening_plies: 2,
        max_plies: 150,
        workers,
        seed: 9,
        ..SelfplayConfig::default()
    }
}

fn play(workers: usize, games: u64) -> Vec<FinishedGame> {
    play_with(&config(workers), &EngineConfig::default(), games)
}

/// With an opponent, each side of a game is played by its own engine: the opponent's in White's
/// moves of even games and Black's of odd ones. After the seeded opening choices every move is
/// the one a fresh engine of that side's config finds (a search at a node limit depends only on
/// the game), each side's moves are recorded, and the other engine would have played otherwise.
#[test]
fn an_opponent_plays_one_side_of_every_game() {
    let cfg = config(2);
    let own = EngineConfig { tt_mib: 1, ..EngineConfig::default() };
    let other = EngineConfig { tt_mib: 1, weights: Weights { centre: -40, ..Weights::default() }, ..EngineConfig::default() };
    let mut games = Vec::new();
    let sink = |g| {
        games.push(g);
        Ok::<_, std::io::Error>(())
    };
    run_alphabeta_workers(&cfg, &own, Some(&other), 4u64, sink, |_| ControlFlow::Continue(())).unwrap();
    games.sort_by_key(|g| g.summary.index);
    assert_eq!(games.len(), 4);
    let (mut a, mut b) = (Engine::new(own).unwrap(), Engine::new(other).unwrap());
    let (stop, limits) = (AtomicBool::new(false), Limits { nodes: Some(cfg.alphabeta_nodes), ..Limits::default() });
    let (mut checked, mut differ) = ([0; 2], 0);
    for g in &games {
        assert_eq!(g.records.len(), g.game.ply() - g.summary.opening_plies as usize);
        let mut replay = Game::from_position(*g.game.start_position(), Rules::FMJD);
        for (ply, mv) in g.game.moves().enumerate() {
            if ply >= cfg.temperature_plies as usize {
                let theirs = replay.position().side_to_move() == opponent_side(g.summary.index);
                let (mover, idle) = if theirs { (&mut b, &mut a) } else { (&mut a, &mut b) };
                assert_eq!(mover.search(&replay, &limits, &stop, &mut |_| {}).best, Some(mv), "game {} ply {ply}", g.summary.index);
                differ += usize::from(idle.search(&replay, &limits, &stop, &mut |_| {}).best != Some(mv));
                checked[usize::from(theirs)] += 1;
            }
            replay.play_unchecked(mv);
        }
    }
    assert!(checked.iter().all(|&n| n > 20), "{checked:?}");
    assert!(differ > 0);
    // The PDN names the opponent on its side.
    for g in &games {
        let pdn = g.to_pdn("net-s00000010", Some("models/other"));
        let theirs = if g.summary.index % 2 == 0 { ("models/other", "net-s00000010") } else { ("net-s00000010", "models/other") };
        assert_eq!((pdn.tag("White"), pdn.tag("Black")), (Some(theirs.0), Some(theirs.1)), "game {}", g.summary.index);
    }
    // Without the opponent the same games go otherwise.
    let alone = play_with(&cfg, &EngineConfig { tt_mib: 1, ..EngineConfig::default() }, 4);
    assert!(alone.iter().zip(&games).any(|(x, y)| x.game.moves().ne(y.game.moves())));
}

#[test]
fn games_have_a_record_per_search_with_its_targets() {
    let games = play(1, 6);
    for g in &games {
        assert_eq!(g.records.len() as u32, g.summary.records);
        assert_eq!(g.records.len(), g.game.ply() - g.summary.opening_plies as usize);
        let moves: Vec<_> = g.game.moves().skip(g.summary.opening_plies as usize).collect();
        for (r, mv) in g.records.iter().zip(moves) {
            // The policy target is the move played.
            assert_eq!(r.policy.len(), 1);
            assert!(r.policy[0].mv.matches(&mv));
            assert_eq!(r.policy[0].weight, u16::MAX);
            assert!(r.flags.contains(RecordFlags::FULL_SEARCH));
            assert_eq!(r.flags.contains(RecordFlags::QUIET), !r.position.has_capture());
            assert!((r.root_wdl.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        }
        assert!(g.records.iter().any(|r| r.flags.contains(RecordFlags::QUIET)));
    }
}

#[test]
fn games_depend_on_the_seed_and_index_only_and_open_differently() {
    let one = play(1, 8);
    let two = play(2, 8);
    for (a, b) in one.iter().zip(&two) {
        assert_eq!(a.summary, b.summary);
        assert_eq!(a.game.moves().collect::<Vec<_>>(), b.game.moves().collect::<Vec<_>>());
    }
    // Positions after 10 plies: every game its own.
    let after: HashSet<_> = one.iter().map(|g| g.game.plies().nth(10).map(|(p, _)| *p)).collect();
    assert_eq!(after.len(), one.len());
    let mut ends: HashMap<String, usize> = HashMap::new();
    for g in &one {
        *ends.entry(g.summary.end.to_string()).or_default() += 1;
    }
    println!("{ends:?}");
}

/// A stage stopped after writing some games and restarted with the same seed plays the others
/// only: the games written (found in the shards by model and seed) are skipped, the rest come
/// out as they would have, and together they are the whole stage, each game once.
#[test]
fn a_restarted_stage_plays_only_the_games_its_shards_lack() {
    let config = SelfplayConfig { records_per_shard: 1, ..config(2) };
    let whole = play(1, 6);
    let dir = tempfile::tempdir().unwrap();
    // The first run wrote games 0, 2 and 5 (a shard each) before it was stopped; a run of
    // another model or seed wrote game 1 into the same directory.
    let mut writer = ShardWriter::new(dir.path(), "net-s00000010", &config).unwrap();
    for i in [0, 2, 5] {
        writer.add(&whole[i]).unwrap().expect("one record a shard: each game is written at once");
    }
    let other = SelfplayConfig { seed: 10, ..config.clone() };
    ShardWriter::new(dir.path(), "net-s00000010", &other).unwrap().add(&whole[1]).unwrap().unwrap();
    ShardWriter::new(dir.path(), "net-s00000020", &config).unwrap().add(&whole[3]).unwrap().unwrap();
    let played = played_indices(dir.path(), "net-s00000010", config.seed).unwrap();
    assert_eq!(played.iter().copied().collect::<Vec<_>>(), vec![0, 2, 5]);
    assert!(played_indices(dir.path().join("missing"), "net-s00000010", config.seed).unwrap().is_empty());

    let games = Games::resuming(6, played);
    assert_eq!(games.left(), 3);
    let mut rest = Vec::new();
    let p = run_alphabeta_workers(
        &config,
        &EngineConfig::default(),
        None,
        games,
        |g| {
            rest.push(g);
            Ok::<(), std::io::Error>(())
        },
        |p| {
            assert_eq!(p.games_target, 3);
            ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert_eq!(p.games, 3);
    rest.sort_by_key(|g| g.summary.index);
    assert_eq!(rest.iter().map(|g| g.summary.index).collect::<Vec<_>>(), vec![1, 3, 4]);
    for g in &rest {
        let i = g.summary.index as usize;
        assert_eq!(g.summary, whole[i].summary);
        assert_eq!(g.game.moves().collect::<Vec<_>>(), whole[i].game.moves().collect::<Vec<_>>());
    }
}

/// Every table of up to three pieces, solved in memory.
fn three_piece_tables() -> draughts_engine::Endgames {
    draughts_engine::Endgames::new(std::sync::Arc::new(draughts_egtb::build::solve_all(3)))
}

fn play_with(config: &SelfplayConfig, engine: &EngineConfig, games: u64) -> Vec<FinishedGame> {
    let mut out = Vec::new();
    let p = run_alphabeta_workers(
        config,
        engine,
        None,
        games,
        |g| {
            out.push(g);
            Ok::<(), std::io::Error>(())
        },
        |_| ControlFlow::Continue(()),
    )
    .unwrap();
    assert_eq!(p.games, games);
    assert!(p.positions > 0 && p.evaluator_calls > 0);
    out.sort_by_key(|g| g.summary.index);
    out
}

#[test]
fn endgame_tables_adjudicate_games_and_give_exact_targets() {
    use draughts_core::Game;
    use draughts_selfplay::{GameEnd, Wdl};
    let egtb = three_piece_tables();
    let engine = EngineConfig { egtb: Some(egtb.clone()), ..EngineConfig::default() };
    // Games from an ending of five men, which trades down into the three-piece tables.
    let config = SelfplayConfig {
        max_plies: 400,
        start_fen: "W:W31,32,38:B13,19".into(),
        random_opening_plies: 4,
        egtb: "set by the engine config in this test".into(),
        ..config(2)
    };
    let exact = |pos, counters, rules| {
        egtb.value_in_game(&Game::with_counters(pos, counters, rules)).map(|v| match v {
            draughts_egtb::Wdl::Win => Wdl::Win,
            draughts_egtb::Wdl::Draw => Wdl::Draw,
            draughts_egtb::Wdl::Loss => Wdl::Loss,
        })
    };
    let games = play_with(&config, &engine, 12);
    let rules = config.validate().unwrap();
    let adjudicated: Vec<&FinishedGame> = games.iter().filter(|g| matches!(g.summary.end, GameEnd::Egtb { .. })).collect();
    assert!(!adjudicated.is_empty(), "no game reached the tables: {:?}", games.iter().map(|g| g.summary.end.to_string()).collect::<Vec<_>>());
    let mut exact_records = 0;
    for g in &games {
        // The game ends at the first position the tables decide, with their result.
        let end = g.game.position();
        let at_end = exact(*end, g.game.counters(), rules);
        if let GameEnd::Egtb { winner } = g.summary.end {
            let v = at_end.expect("adjudicated at a position the tables decide");
            assert_eq!(Wdl::for_side(winner, end.side_to_move()), v);
        }
        for r in &g.records {
            assert!(exact(r.position, r.counters, rules).is_none(), "a record after the game should have ended");
        }
        exact_records += g.records.iter().filter(|r| r.root_wdl.iter().any(|&x| x == 1.0)).count();
    }
    // Without adjudication, games play on in the tables and their records take the exact values.
    let config = SelfplayConfig { egtb_adjudicate: false, ..config };
    let games = play_with(&config, &engine, 12);
    assert!(games.iter().all(|g| !matches!(g.summary.end, GameEnd::Egtb { .. })));
    let mut checked = 0;
    for g in &games {
        for r in &g.records {
            if let Some(v) = exact(r.position, r.counters, rules) {
                assert_eq!(r.result, v);
                assert_eq!(r.root_wdl, v.one_hot());
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no record in the tables ({exact_records} before)");
}
