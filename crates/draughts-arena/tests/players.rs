//! Built-in players through specs: the alpha-beta baseline and Hub engines (a real child
//! process: the `arena-hub-test-engine` binary of this crate).

use std::ops::ControlFlow;
use std::time::Duration;

use draughts_arena::{maker, run_match, Builtin, MatchConfig, MatchResult, PlayerFactory, PlayerSpec, TimeControl};

const ENGINE: &str = env!("CARGO_BIN_EXE_arena-hub-test-engine");

fn spec(s: &str) -> PlayerSpec {
    PlayerSpec::parse(s).unwrap_or_else(|e| panic!("{e}"))
}

fn hub(mode: &str, extra: &str) -> PlayerSpec {
    spec(&format!(r#"hub:cmd="{ENGINE} {mode} 5"{extra}"#))
}

fn play(config: &MatchConfig, a: &PlayerSpec, b: &PlayerSpec) -> MatchResult {
    let f = Builtin::new();
    let (make_a, make_b) = (maker(&f, a), maker(&f, b));
    run_match(config, &make_a, &make_b, |_| ControlFlow::Continue(())).unwrap()
}

#[test]
fn alphabeta_beats_random_reproducibly() {
    let (ab, rnd) = (spec("alphabeta:depth=2,name=AB2"), spec("random:seed=3"));
    let one = play(&MatchConfig { games: 4, concurrency: 1, seed: 1, ..MatchConfig::default() }, &ab, &rnd);
    let two = play(&MatchConfig { games: 4, concurrency: 2, seed: 1, ..MatchConfig::default() }, &ab, &rnd);
    assert_eq!(one.a, "AB2");
    assert!(one.score_a >= 0.75, "{}", one.progress_line());
    let moves = |r: &MatchResult| r.records.iter().map(|g| g.record.moves.clone()).collect::<Vec<_>>();
    assert_eq!(moves(&one), moves(&two));
}

#[test]
fn hub_engine_plays_whole_games() {
    let r = play(&MatchConfig { games: 2, seed: 2, ..MatchConfig::default() }, &hub("random", ",depth=1"), &spec("random"));
    assert_eq!(r.games, 2);
    assert_eq!(r.forfeits_a + r.forfeits_b, 0, "{:?}", r.terminations);
    assert!(r.records.iter().all(|g| g.record.plies > 10));
}

#[test]
fn hostile_hub_engines_lose_with_the_reason_and_the_match_goes_on() {
    let config = MatchConfig { games: 2, ..MatchConfig::default() };
    for (mode, says) in [
        ("flood", "a flood: 100000 lines without a move"),
        ("longline", "a line of 10485765 bytes (limit 65536)"),
        ("early", "a move sent before it was asked for"),
        ("badformat", "`32to28`"),
    ] {
        let r = play(&config, &hub(mode, ",depth=1"), &spec("random"));
        assert_eq!(r.records.len(), 2, "{mode}: the match stopped");
        assert_eq!((r.losses_a, r.forfeits_a), (2, 2), "{mode}: {:?}", r.terminations);
        let text = r.records[0].record.termination.to_string();
        assert!(text.contains(says), "{mode}: {text}");
    }
}

#[test]
fn hub_engine_failures_are_forfeits() {
    let config = MatchConfig { games: 2, ..MatchConfig::default() };
    let r = play(&config, &hub("crash", ",depth=1"), &spec("random"));
    assert_eq!((r.losses_a, r.forfeits_a), (2, 2));
    assert_eq!(r.terminations.get("crash"), Some(&2), "{:?}", r.terminations);

    let r = play(&config, &hub("illegal", ",depth=1"), &spec("random"));
    assert_eq!(r.terminations.get("illegal move"), Some(&2), "{:?}", r.terminations);
    assert!(r.records[0].record.termination.to_string().contains("`10-5`"));

    // An engine that never answers is killed by its client and loses on time.
    let timed = MatchConfig {
        time: TimeControl { move_limit: Some(Duration::from_millis(200)), ..TimeControl::NONE },
        ..config.clone()
    };
    let r = play(&timed, &hub("hang", ""), &spec("random"));
    assert_eq!(r.terminations.get("time"), Some(&2), "{:?}", r.terminations);

    // A hub spec without any limit cannot search.
    let r = play(&config, &hub("random", ""), &spec("random"));
    assert_eq!(r.terminations.get("crash"), Some(&2), "{:?}", r.terminations);
    assert!(r.records[0].record.termination.to_string().contains("needs depth="));

    // An engine that does not start fails the match before the first game.
    let f = Builtin::new();
    let e = f.build(&spec("hub:cmd=/nonexistent/engine,depth=1")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/engine"), "{e}");
}
