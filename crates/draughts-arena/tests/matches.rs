//! Matches end to end: determinism, forfeits, PDN output, early stops, tournaments, JSON.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use draughts_arena::{
    run_match, run_tournament, BuildError, ClockState, Entrant, MatchConfig, MatchResult, Player,
    PlayerError, RandomPlayer, Sprt, SprtConfig, Termination, TimeControl,
};
use draughts_core::{Game, Move, Position};
use draughts_pdn::{GameResult, Reader};

type Built = Result<Box<dyn Player>, BuildError>;

fn random(seed: u64) -> impl Fn() -> Built + Sync {
    move || Ok(Box::new(RandomPlayer::new(seed)) as Box<dyn Player>)
}

fn config(games: usize, concurrency: usize, seed: u64) -> MatchConfig {
    MatchConfig { games, concurrency, seed, ..MatchConfig::default() }
}

fn play(config: &MatchConfig, a: &(dyn Fn() -> Built + Sync), b: &(dyn Fn() -> Built + Sync)) -> MatchResult {
    run_match(config, &a, &b, |_| ControlFlow::Continue(())).unwrap()
}

/// What must not depend on scheduling: everything but thinking times.
fn fingerprint(r: &MatchResult) -> Vec<(usize, bool, usize, Vec<Move>, GameResult, Termination)> {
    r.records
        .iter()
        .map(|g| (g.index, g.a_white, g.record.opening, g.record.moves.clone(), g.record.result, g.record.termination.clone()))
        .collect()
}

#[test]
fn reproducible_and_independent_of_concurrency() {
    let (a, b) = (random(1), random(2));
    let one = play(&config(12, 1, 7), &a, &b);
    let four = play(&config(12, 4, 7), &a, &b);
    assert_eq!(one.games, 12);
    assert_eq!(fingerprint(&one), fingerprint(&four));
    assert_eq!(serde_json::to_string(&one).unwrap(), serde_json::to_string(&four).unwrap());
    // The same seed again gives the same match; another seed another one.
    assert_eq!(fingerprint(&play(&config(12, 3, 7), &a, &b)), fingerprint(&one));
    assert_ne!(fingerprint(&play(&config(12, 1, 8), &a, &b)), fingerprint(&one));
    // Pairs share an opening and swap colours.
    for pair in one.records.chunks(2) {
        assert_eq!(pair[0].record.opening, pair[1].record.opening);
        assert_eq!(pair[0].record.start, pair[1].record.start);
        assert!(pair[0].a_white && !pair[1].a_white);
        assert_eq!(pair[0].record.white, "random:seed=1");
        assert_eq!(pair[1].record.white, "random:seed=2");
    }
    // Counts add up.
    assert_eq!(one.wins_a + one.draws + one.losses_a, 12);
    assert_eq!(one.pairs, 6);
    assert_eq!(one.pentanomial.iter().sum::<u64>(), 6);
    assert_eq!(one.terminations.values().sum::<u64>(), 12);
    let points: u64 = one.records.iter().map(|g| u64::from(g.a_half_points())).sum();
    assert!((one.score_a - points as f64 / 24.0).abs() < 1e-12);
}

/// Returns a king move that no opening position allows.
struct Illegal;
impl Player for Illegal {
    fn name(&self) -> String {
        "illegal".into()
    }
    fn choose(&mut self, _: &Game, _: &ClockState) -> Result<Move, PlayerError> {
        let pos = Position::from_fen("W:WK46:B1").unwrap();
        Ok(pos.parse_pdn_move("46-5").unwrap())
    }
}

/// Fails in a given way.
struct Failing(PlayerError);
impl Player for Failing {
    fn name(&self) -> String {
        "failing".into()
    }
    fn choose(&mut self, _: &Game, _: &ClockState) -> Result<Move, PlayerError> {
        Err(self.0.clone())
    }
}

/// Panics.
struct Panicking;
impl Player for Panicking {
    fn name(&self) -> String {
        "panicking".into()
    }
    fn choose(&mut self, _: &Game, _: &ClockState) -> Result<Move, PlayerError> {
        panic!("deliberate test panic")
    }
}

/// Plays the first legal move after sleeping.
struct Slow(Duration);
impl Player for Slow {
    fn name(&self) -> String {
        "slow".into()
    }
    fn choose(&mut self, game: &Game, _: &ClockState) -> Result<Move, PlayerError> {
        std::thread::sleep(self.0);
        Ok(game.legal_moves()[0])
    }
}

/// Moves at once the first time, then sleeps 10 ms longer than its clock has left.
struct ClockEater {
    moves: u32,
}
impl Player for ClockEater {
    fn name(&self) -> String {
        "clock-eater".into()
    }
    fn new_game(&mut self, _seed: u64) {
        self.moves = 0;
    }
    fn choose(&mut self, game: &Game, clock: &ClockState) -> Result<Move, PlayerError> {
        self.moves += 1;
        if self.moves > 1 {
            std::thread::sleep(clock.remaining.unwrap_or_default() + Duration::from_millis(10));
        }
        Ok(game.legal_moves()[0])
    }
}

/// Plays a match of `bad` (player A) against random and checks that A lost every game by
/// forfeit of kind `kind`, with the reason in the termination text.
fn forfeits(config: &MatchConfig, bad: &(dyn Fn() -> Built + Sync), kind: &str, text: &str) -> MatchResult {
    let r = play(config, bad, &random(3));
    assert_eq!((r.games, r.wins_a, r.draws, r.losses_a), (config.games as u64, 0, 0, config.games as u64));
    assert_eq!(r.forfeits_a, config.games as u64);
    assert_eq!(r.terminations.get(kind), Some(&(config.games as u64)), "{:?}", r.terminations);
    for g in &r.records {
        let t = &g.record.termination;
        assert!(matches!(t, Termination::Forfeit { loser, .. } if *loser == g.a_color()), "{t}");
        assert!(t.to_string().contains(text), "{t}");
        assert_eq!(g.record.result.winner(), Some(!g.a_color()));
    }
    r
}

#[test]
fn faulty_players_lose_with_the_reason() {
    let c = config(4, 2, 1);
    forfeits(&c, &|| Ok(Box::new(Illegal) as Box<dyn Player>), "illegal move", "illegal move `46-5`");
    let crash = PlayerError::Crashed { detail: "engine exited with status 3".into() };
    forfeits(&c, &move || Ok(Box::new(Failing(crash.clone())) as Box<dyn Player>), "crash", "status 3");
    let proto = PlayerError::Protocol { detail: "unknown command `foo`".into() };
    forfeits(&c, &move || Ok(Box::new(Failing(proto.clone())) as Box<dyn Player>), "protocol", "`foo`");
    forfeits(&c, &|| Ok(Box::new(Failing(PlayerError::TimedOut)) as Box<dyn Player>), "time", "out of time");
    forfeits(&c, &|| Ok(Box::new(Panicking) as Box<dyn Player>), "crash", "deliberate test panic");
    // A player that overruns its move limit loses on time even though its move is legal.
    let timed = MatchConfig {
        time: TimeControl { move_limit: Some(Duration::from_millis(20)), ..TimeControl::NONE },
        ..config(2, 2, 1)
    };
    forfeits(&timed, &|| Ok(Box::new(Slow(Duration::from_millis(60))) as Box<dyn Player>), "time", "0.020 s allowed");
    // A game clock works the same way: a player whose first move is instant and whose second
    // takes what is left on its clock and more loses on time at its second move (the margins are
    // a second, not milliseconds, so a busy machine does not change the outcome).
    let clocked = MatchConfig {
        time: TimeControl { base: Some(Duration::from_secs(1)), ..TimeControl::NONE },
        ..config(2, 1, 1)
    };
    let r = forfeits(&clocked, &|| Ok(Box::new(ClockEater { moves: 0 }) as Box<dyn Player>), "time", "out of time");
    assert!(r.records.iter().all(|g| g.record.plies >= 2), "the first move fits in the clock");
}

#[test]
fn crashed_players_are_rebuilt_and_unbuildable_ones_forfeit() {
    let builds = AtomicUsize::new(0);
    let crash = || {
        builds.fetch_add(1, Ordering::SeqCst);
        Ok(Box::new(Failing(PlayerError::Crashed { detail: "x".into() })) as Box<dyn Player>)
    };
    let r = play(&config(6, 1, 0), &crash, &random(0));
    assert_eq!(r.losses_a, 6);
    // One probe at the start, then a fresh instance for each of the 6 games.
    assert_eq!(builds.load(Ordering::SeqCst), 7);

    // B crashes, and when rebuilt after its second crash cannot be built any more: it forfeits
    // every later game without a move, and the match ends.
    let n = AtomicUsize::new(0);
    let flaky = || {
        if n.fetch_add(1, Ordering::SeqCst) < 3 {
            Ok(Box::new(Failing(PlayerError::Crashed { detail: "x".into() })) as Box<dyn Player>)
        } else {
            Err(BuildError::Failed { spec: "hub:cmd=x".into(), detail: "no such file".into() })
        }
    };
    let r = play(&config(6, 1, 0), &random(0), &flaky);
    assert_eq!((r.games, r.forfeits_b), (6, 6));
    let texts: Vec<String> = r.records.iter().map(|g| g.record.termination.to_string()).collect();
    assert!(texts[..2].iter().all(|t| t.ends_with("crashed: x")), "{texts:?}");
    assert!(texts[2..].iter().all(|t| t.contains("could not be built") && t.contains("no such file")), "{texts:?}");
    assert!(r.records[2..].iter().all(|g| g.record.plies == 0));
    // A build failure at the start fails the match with a clear error.
    let never = || Err(BuildError::Failed { spec: "hub:cmd=x".into(), detail: "no such file".into() });
    let e = run_match(&config(2, 1, 0), &random(0), &never, |_| ControlFlow::Continue(())).unwrap_err();
    assert!(e.to_string().contains("player B") && e.to_string().contains("no such file"), "{e}");
}

#[test]
fn pdn_output_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.pdn");
    let c = MatchConfig { pdn: Some(path.clone()), event: "test match".into(), ..config(6, 2, 11) };
    let r = play(&c, &random(4), &|| Ok(Box::new(Illegal) as Box<dyn Player>));
    assert!(path.exists());
    assert!(!dir.path().join("games.pdn.partial").exists());
    let text = std::fs::read_to_string(&path).unwrap();
    let mut reader = Reader::new(text.as_bytes());
    let mut n = 0;
    while let Some(game) = reader.next_game() {
        let game = game.unwrap();
        let rec = &r.records[n];
        assert_eq!(game.result, rec.record.result);
        assert_eq!(game.moves, rec.record.moves);
        assert_eq!(game.start, rec.record.start);
        assert_eq!(game.white(), Some(rec.record.white.as_str()));
        assert_eq!(game.black(), Some(rec.record.black.as_str()));
        assert_eq!(game.event(), Some("test match"));
        assert_eq!(game.round(), Some(format!("{}.{}", n / 2 + 1, n % 2 + 1).as_str()));
        assert_eq!(game.tag("Termination"), Some(rec.record.termination.to_string().as_str()));
        assert_eq!(game.tag("Opening"), Some(rec.record.opening.to_string().as_str()));
        assert_eq!(game.tag("FEN"), Some(rec.record.start.to_fen().as_str()));
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
fn sprt_can_stop_a_match() {
    // Random against a player that always forfeits: H1 is accepted after the minimum pairs.
    let mut sprt = Sprt::new(SprtConfig::default()).unwrap();
    let mut seen = 0;
    let r = run_match(&config(200, 3, 0), &random(0), &|| Ok(Box::new(Illegal) as Box<dyn Player>), |p| {
        seen += 1;
        assert_eq!(p.games_done, seen);
        assert_eq!(p.summary.games as usize, seen);
        match p.pair {
            Some(pair) if sprt.add_pair(pair).is_decided() => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    })
    .unwrap();
    assert!(sprt.status() == draughts_arena::SprtStatus::AcceptH1);
    assert!(r.stopped);
    assert_eq!(r.games, 2 * SprtConfig::DEFAULT_MIN_PAIRS);
    assert_eq!(r.records.len() as u64, r.games);
}

#[test]
fn json_has_the_contract_fields() {
    let r = play(&config(4, 1, 3), &random(1), &random(2));
    let v = serde_json::to_value(&r).unwrap();
    for key in ["games", "wins_a", "draws", "losses_a", "score_a", "elo", "elo_low", "elo_high", "los", "pairs", "pentanomial"] {
        assert!(v.get(key).is_some(), "missing {key} in {v}");
    }
    assert_eq!(v["games"], 4);
    assert_eq!(v["pentanomial"].as_array().map(Vec::len), Some(5));
    let back: MatchResult = serde_json::from_value(v).unwrap();
    assert_eq!(back.games, 4);
    // A sweep has infinite Elo, written as null.
    let sweep = play(&config(2, 1, 3), &random(1), &|| Ok(Box::new(Illegal) as Box<dyn Player>));
    let v = serde_json::to_value(&sweep).unwrap();
    assert!(v["elo"].is_null(), "{v}");
    assert!(sweep.progress_line().starts_with("+2 =0 -0  score 100.0%  Elo +inf"), "{}", sweep.progress_line());
}

#[test]
fn bad_settings_are_errors() {
    let e = run_match(&config(3, 1, 0), &random(0), &random(1), |_| ControlFlow::Continue(())).unwrap_err();
    assert!(e.to_string().contains("even"), "{e}");
    let e = run_match(&config(2, 0, 0), &random(0), &random(1), |_| ControlFlow::Continue(())).unwrap_err();
    assert!(e.to_string().contains("concurrency"), "{e}");
    // An opening that is already over.
    let dead = draughts_arena::Opening::from_position(0, "dead", Position::from_fen("B:W31:B").unwrap());
    let c = MatchConfig { openings: vec![dead], ..config(2, 1, 0) };
    let e = run_match(&c, &random(0), &random(1), |_| ControlFlow::Continue(())).unwrap_err();
    assert!(e.to_string().contains("`dead`") && e.to_string().contains("already decided"), "{e}");
    let c = MatchConfig { openings: Vec::new(), ..config(2, 1, 0) };
    assert!(run_match(&c, &random(0), &random(1), |_| ControlFlow::Continue(())).is_err());
}

#[test]
fn round_robin_with_ratings() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.pdn");
    let (r1, r2) = (random(1), random(2));
    let illegal = || Ok(Box::new(Illegal) as Box<dyn Player>);
    let players = [
        Entrant { name: "r1".into(), make: &r1 },
        Entrant { name: "r2".into(), make: &r2 },
        Entrant { name: "bad".into(), make: &illegal },
    ];
    let c = MatchConfig { pdn: Some(path.clone()), ..config(4, 2, 5) };
    let mut calls = Vec::new();
    let rating = draughts_arena::stats::RatingOptions { anchor: 0, virtual_draws: 1.0, ..Default::default() };
    let t = run_tournament(&players, &c, &rating, |a, b, _| {
        calls.push((a, b));
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(t.pairings.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>(), vec![(0, 1), (0, 2), (1, 2)]);
    assert_eq!(calls.len(), 12);
    let fit = t.ratings.as_ref().expect("finite with virtual draws");
    assert_eq!(fit.ratings[0].elo, 0.0);
    assert!(fit.ratings[2].elo < fit.ratings[1].elo - 100.0, "{:?}", fit.ratings);
    assert_eq!(t.table().len(), 3);
    assert!(t.table()[2].contains("bad"), "{:?}", t.table());
    // Without a prior the player that lost everything has no finite rating.
    let t = run_tournament(&players, &MatchConfig { pdn: None, ..c }, &Default::default(), |_, _, _| ControlFlow::Continue(()))
        .unwrap();
    assert!(t.ratings.is_none() && t.rating_error.as_deref().is_some_and(|e| e.contains("[2]")), "{:?}", t.rating_error);
    // One PDN for the whole tournament, rounds prefixed with the pairing.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.matches("[Event ").count(), 12);
    assert!(text.contains("[Round \"3.2.2\"]"));
}
