//! The alpha-beta generator: whole games with one record per searched position, quiet flags,
//! diverse openings, and games that depend only on the seed and the game index.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use draughts_engine::EngineConfig;
use draughts_selfplay::{run_alphabeta_workers, FinishedGame, Generator, RecordFlags, SelfplayConfig};

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
    let mut out = Vec::new();
    let p = run_alphabeta_workers(
        &config(workers),
        &EngineConfig::default(),
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
