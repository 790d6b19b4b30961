//! The Hub client against real child processes: the crate's own engine side (the
//! `hub-test-engine` binary in `normal` mode) and its misbehaving modes.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use draughts_core::{Game, Position, Rules};
use draughts_protocol::hub::History;
use draughts_protocol::{
    HubClient, HubClientOptions, HubError, ParamKind, RandomMover, SearchLimit, Searcher,
};

const ENGINE: &str = env!("CARGO_BIN_EXE_hub-test-engine");

fn spawn(mode: &str, options: &HubClientOptions) -> Result<HubClient, HubError> {
    HubClient::spawn_argv(&[ENGINE, mode], options)
}

fn quick() -> HubClientOptions {
    HubClientOptions {
        handshake_timeout: Duration::from_secs(10),
        ..HubClientOptions::default()
    }
}

#[test]
fn plays_a_whole_game_against_a_local_player() {
    // The engine plays White, a local random mover Black, to the end of the game. Every
    // position is sent as pos + moves since the last irreversible move, so a wrong position
    // would show up as an engine error and a time-out.
    for history in [History::SinceIrreversible, History::All] {
        let opts = HubClientOptions {
            params: vec![("seed".into(), "11".into())],
            history,
            ..quick()
        };
        let mut engine = spawn("normal", &opts).unwrap();
        assert_eq!(engine.id().name, "random");
        let seed = engine.params().iter().find(|p| p.name == "seed").unwrap();
        assert!(
            matches!(seed.kind, ParamKind::Int { min: 0, .. }),
            "{seed:?}"
        );
        assert_eq!(seed.value, "1", "params are announced before set-param");
        engine.new_game().unwrap();
        let mut local = RandomMover::new(99);
        let stop = AtomicBool::new(false);
        let mut game = Game::new(Rules::FMJD);
        while game.outcome().is_none() && game.ply() < 400 {
            let mv = if game.ply() % 2 == 0 {
                let r = engine
                    .search(&game, &SearchLimit::depth(1), Duration::from_secs(10))
                    .unwrap();
                assert!(r.errors.is_empty(), "{:?}", r.errors);
                assert_eq!(
                    r.info.as_ref().map(|i| i.pv.first().copied()),
                    Some(Some(r.mv))
                );
                r.mv
            } else {
                local
                    .think(&game, &SearchLimit::depth(1), &stop, &mut |_| {})
                    .unwrap()
            };
            game.play(mv).unwrap();
        }
        assert!(game.outcome().is_some() || game.ply() == 400);
        engine.ping(Duration::from_secs(5)).unwrap();
        engine.quit();
    }
}

#[test]
fn same_seed_same_moves() {
    let play = |seed: &str| {
        let opts = HubClientOptions {
            params: vec![("seed".into(), seed.into())],
            ..quick()
        };
        let mut engine = spawn("normal", &opts).unwrap();
        let mut game = Game::default();
        for _ in 0..10 {
            let mv = engine
                .best_move(&game, &SearchLimit::nodes(1), Duration::from_secs(10))
                .unwrap();
            game.play(mv).unwrap();
        }
        game.moves().collect::<Vec<_>>()
    };
    assert_eq!(play("5"), play("5"));
    assert_ne!(play("5"), play("6"));
}

#[test]
fn unknown_param_is_refused() {
    let opts = HubClientOptions {
        params: vec![("sede".into(), "1".into())],
        ..quick()
    };
    match spawn("normal", &opts) {
        Err(HubError::UnknownParam { name, known, .. }) => {
            assert_eq!((name.as_str(), known.as_str()), ("sede", "seed"))
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn illegal_and_garbage_moves() {
    let mut engine = spawn("illegal", &quick()).unwrap();
    let game = Game::default();
    match engine.best_move(&game, &SearchLimit::depth(1), Duration::from_secs(10)) {
        Err(HubError::IllegalMove {
            text, fen, reason, ..
        }) => {
            assert_eq!(text, "33-27");
            assert_eq!(fen, "W:W31-50:B1-20");
            assert!(reason.contains("not a legal move"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let mut engine = spawn("garbage", &quick()).unwrap();
    match engine.best_move(&game, &SearchLimit::depth(1), Duration::from_secs(10)) {
        Err(e @ HubError::IllegalMove { .. }) => assert!(e.to_string().contains("`hello`"), "{e}"),
        other => panic!("{other:?}"),
    }
    let mut engine = spawn("nomove", &quick()).unwrap();
    match engine.best_move(&game, &SearchLimit::depth(1), Duration::from_secs(10)) {
        Err(HubError::Protocol { reason, .. }) => {
            assert!(reason.contains("without move="), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn crash_is_told_apart_from_a_time_out() {
    let game = Game::default();
    let mut engine = spawn("crash", &quick()).unwrap();
    match engine.best_move(&game, &SearchLimit::depth(1), Duration::from_secs(10)) {
        Err(HubError::Crashed { status, stage, .. }) => {
            assert!(status.contains('3'), "{status}");
            assert!(stage.contains("searching"), "{stage}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(engine.new_game(), Err(HubError::Dead { .. })));

    let mut engine = spawn("hang", &quick()).unwrap();
    let pid = engine.pid();
    let t0 = Instant::now();
    match engine.best_move(&game, &SearchLimit::depth(1), Duration::from_millis(300)) {
        Err(e @ HubError::Timeout { .. }) => assert!(e.to_string().contains("killed"), "{e}"),
        other => panic!("{other:?}"),
    }
    let waited = t0.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    #[cfg(target_os = "linux")]
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "engine {pid} still running after the time-out"
    );
    let _ = pid;
    assert!(matches!(
        engine.best_move(&game, &SearchLimit::depth(1), Duration::from_secs(1)),
        Err(HubError::Dead { .. })
    ));
}

#[test]
fn handshake_time_out_and_spawn_failure() {
    let opts = HubClientOptions {
        // Each stage has its own deadline: it must be long enough for the program to start and
        // answer `hub` on a loaded machine, so that the stage that times out is `init`.
        handshake_timeout: Duration::from_secs(3),
        ..HubClientOptions::default()
    };
    match spawn("noready", &opts) {
        Err(HubError::Timeout { stage, .. }) => assert!(stage.contains("init"), "{stage}"),
        other => panic!("{other:?}"),
    }
    match HubClient::spawn("/nonexistent/engine --flag", &quick()) {
        Err(e @ HubError::Spawn { .. }) => {
            assert!(e.to_string().contains("/nonexistent/engine"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        HubClient::spawn("'unterminated", &quick()),
        Err(HubError::BadCommand { .. })
    ));
    // An engine that exits at once (here: an unknown mode) is a crash during the handshake.
    match spawn("no-such-mode", &quick()) {
        Err(HubError::Crashed { stage, .. }) => assert!(stage.contains("starting"), "{stage}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn no_search_in_a_finished_game() {
    let mut engine = spawn("normal", &quick()).unwrap();
    // White has no piece left: no legal move.
    let over = Game::from_position(Position::from_fen("W:W:B1").unwrap(), Rules::FMJD);
    assert!(matches!(
        engine.best_move(&over, &SearchLimit::depth(1), Duration::from_secs(5)),
        Err(HubError::GameOver(_))
    ));
    // The engine is still usable.
    assert!(engine
        .best_move(
            &Game::default(),
            &SearchLimit::depth(1),
            Duration::from_secs(5)
        )
        .is_ok());
}
