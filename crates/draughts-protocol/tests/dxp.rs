//! DXP: message layouts, parse errors, and games over loopback TCP between the crate's own
//! initiator and follower, and against scripted peers that misbehave.

use std::net::TcpStream;
use std::thread;
use std::time::Duration;

use draughts_core::{Color, Game, Outcome, Position, Rules, Square, WinReason};
use draughts_protocol::dxp::{
    AcceptCode, BackCode, BackRequest, Connection, DxpListener, EndCause, EndReason, GameAccept,
    GameEnd, GameRequest, Message, MessageError, MoveMessage, StopCode, Verdict,
};
use draughts_protocol::{
    dxp_connect, ConnectOptions, FirstMove, ListenOptions, PlayerOptions, RandomMover, SearchLimit,
};

fn sq(n: u8) -> Square {
    Square::new(n).unwrap()
}

fn name32(name: &str) -> String {
    format!("{name:<32}")
}

#[test]
fn layouts_round_trip() {
    let setup = Position::from_fen("B:W28,K44:BK7,20").unwrap();
    let cases: Vec<(String, Message)> = vec![
        (
            format!("R01{}Z090050A", name32("Scan 3.1")),
            Message::GameRequest(GameRequest {
                version: 1,
                initiator: "Scan 3.1".into(),
                follower_color: Color::Black,
                minutes: 90,
                moves: 50,
                position: None,
            }),
        ),
        (
            format!("R01{}W005000BZ{}", name32("x"), {
                let mut b = vec!['e'; 50];
                b[6] = 'Z';
                b[19] = 'z';
                b[27] = 'w';
                b[43] = 'W';
                b.into_iter().collect::<String>()
            }),
            Message::GameRequest(GameRequest {
                version: 1,
                initiator: "x".into(),
                follower_color: Color::White,
                minutes: 5,
                moves: 0,
                position: Some(setup),
            }),
        ),
        (
            format!("A{}0", name32("Kingsrow")),
            Message::GameAccept(GameAccept {
                follower: "Kingsrow".into(),
                code: AcceptCode::Accepted,
            }),
        ),
        (
            format!("A{}3", name32("")),
            Message::GameAccept(GameAccept {
                follower: String::new(),
                code: AcceptCode::NoGame,
            }),
        ),
        (
            "M0012061100".into(),
            Message::Move(MoveMessage {
                seconds: 12,
                from: sq(6),
                to: sq(11),
                captured: vec![],
            }),
        ),
        (
            "M001205250422122320".into(),
            Message::Move(MoveMessage {
                seconds: 12,
                from: sq(5),
                to: sq(25),
                captured: vec![sq(22), sq(12), sq(23), sq(20)],
            }),
        ),
        (
            "E21".into(),
            Message::GameEnd(GameEnd {
                reason: EndReason::Draw,
                stop: StopCode::NoNextGame,
            }),
        ),
        (
            "E30".into(),
            Message::GameEnd(GameEnd {
                reason: EndReason::IWin,
                stop: StopCode::NextGame,
            }),
        ),
        (
            "CWhat do you think about move 35?".into(),
            Message::Chat("What do you think about move 35?".into()),
        ),
        ("C".into(), Message::Chat(String::new())),
        (
            "B005Z".into(),
            Message::BackRequest(BackRequest {
                move_number: 5,
                color: Color::Black,
            }),
        ),
        ("K1".into(), Message::BackAccept(BackCode::NotSupported)),
        ("K2".into(), Message::BackAccept(BackCode::Declined)),
    ];
    for (text, msg) in cases {
        assert_eq!(Message::parse(text.as_bytes()).as_ref(), Ok(&msg), "{text}");
        assert_eq!(String::from_utf8(msg.encode()).unwrap(), text);
    }
}

#[test]
fn encoding_keeps_fields_in_their_width() {
    let long = Message::GameRequest(GameRequest {
        version: 1,
        initiator: "a name much longer than thirty-two characters, with ünicode".into(),
        follower_color: Color::White,
        minutes: 5000,
        moves: 0,
        position: None,
    });
    let bytes = long.encode();
    assert_eq!(bytes.len(), 43);
    let Message::GameRequest(back) = Message::parse(&bytes).unwrap() else {
        panic!()
    };
    assert_eq!(back.initiator, "a name much longer than thirty-t");
    assert_eq!(back.minutes, 999);
    let chat = Message::Chat("é".repeat(200));
    let bytes = chat.encode();
    assert_eq!(bytes.len(), 127);
    assert!(Message::parse(&bytes).is_ok());
}

#[test]
fn every_malformed_shape_is_a_typed_error() {
    let r_ok = format!("R01{}W005000A", name32("x"));
    let board = "e".repeat(50);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![], "empty"),
        (vec![b'C'; 128], "limit is 127"),
        (b"M0012\x011100".to_vec(), "not printable"),
        ("Cé".as_bytes().to_vec(), "not printable"),
        (b"X123".to_vec(), "unknown DXP message type `X`"),
        (b"m0012061100".to_vec(), "unknown DXP message type `m`"),
        // GAMEREQ
        (r_ok.as_bytes()[..42].to_vec(), "GAMEREQ message"),
        (
            format!("R0x{}W005000A", name32("x")).into_bytes(),
            "version",
        ),
        (
            format!("R01{}B005000A", name32("x")).into_bytes(),
            "follower colour",
        ),
        (
            format!("R01{}W0a5000A", name32("x")).into_bytes(),
            "thinking time",
        ),
        (
            format!("R01{}W005-01A", name32("x")).into_bytes(),
            "number of moves",
        ),
        (
            format!("R01{}W005000C", name32("x")).into_bytes(),
            "starting position",
        ),
        (
            format!("R01{}W005000B", name32("x")).into_bytes(),
            "43 with A, 94 with B",
        ),
        (
            format!("R01{}W005000A{board}W", name32("x")).into_bytes(),
            "43 with A, 94 with B",
        ),
        (
            format!("R01{}W005000BX{board}", name32("x")).into_bytes(),
            "colour to move",
        ),
        (
            format!("R01{}W005000BW{}", name32("x"), "b".repeat(50)).into_bytes(),
            "expected one of w z W Z e",
        ),
        (
            format!("R01{}W005000BW{}", name32("x"), "w".repeat(50)).into_bytes(),
            "promotion row",
        ),
        // GAMEACC
        (format!("A{}", name32("x")).into_bytes(), "GAMEACC message"),
        (format!("A{}4", name32("x")).into_bytes(), "acceptance code"),
        (
            format!("A{}00", name32("x")).into_bytes(),
            "GAMEACC message",
        ),
        // MOVE
        (b"M001206110".to_vec(), "MOVE message"),
        (b"M00120611000".to_vec(), "MOVE message"),
        (b"M0012061101".to_vec(), "for 1 captured pieces"),
        (b"M00120611011".to_vec(), "MOVE message"),
        (b"M00120611012233".to_vec(), "for 1 captured pieces"),
        (b"M00x2061100".to_vec(), "time"),
        (b"M0012001100".to_vec(), "not a square"),
        (b"M0012065100".to_vec(), "not a square"),
        (b"M0012 61100".to_vec(), "from"),
        (b"M00120611+1".to_vec(), "number captured"),
        (b"M00120611010x".to_vec(), "captured square"),
        (b"M00120611015x".to_vec(), "captured square"),
        (
            format!("M0012061121{}", "01".repeat(21)).into_bytes(),
            "more than 20",
        ),
        // GAMEEND
        (b"E2".to_vec(), "GAMEEND message"),
        (b"E210".to_vec(), "GAMEEND message"),
        (b"E41".to_vec(), "reason"),
        (b"E22".to_vec(), "stop code"),
        // BACKREQ, BACKACC
        (b"B05W".to_vec(), "BACKREQ message"),
        (b"B005X".to_vec(), "colour to move"),
        (b"B0a5W".to_vec(), "move number"),
        (b"K".to_vec(), "BACKACC message"),
        (b"K3".to_vec(), "acceptance code"),
        (b"K10".to_vec(), "BACKACC message"),
    ];
    for (bytes, what) in cases {
        match Message::parse(&bytes) {
            Err(e) => assert!(
                e.to_string().contains(what),
                "{:?}: `{e}` lacks `{what}`",
                String::from_utf8_lossy(&bytes)
            ),
            Ok(m) => panic!("{:?} parsed as {m:?}", String::from_utf8_lossy(&bytes)),
        }
    }
    assert_eq!(Message::parse(b""), Err(MessageError::Empty));
}

fn player(name: &str) -> PlayerOptions {
    PlayerOptions {
        name: name.into(),
        limit: Some(SearchLimit::depth(1)),
        peer_timeout: Some(Duration::from_secs(10)),
        idle_timeout: Duration::from_secs(10),
        ..PlayerOptions::default()
    }
}

#[test]
fn initiator_and_follower_play_whole_games() {
    let listener = DxpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    assert!(addr.ip().is_loopback());
    let follower = thread::spawn(move || {
        let opts = ListenOptions {
            player: player("follower"),
            connections: 1,
        };
        listener.serve(&mut RandomMover::new(2), &opts).unwrap()
    });
    let opts = ConnectOptions {
        player: player("initiator"),
        games: 3,
        time_minutes: 1,
        ..ConnectOptions::default()
    };
    let ours = dxp_connect(&addr.to_string(), &mut RandomMover::new(1), &opts).unwrap();
    let theirs = follower.join().unwrap();
    assert_eq!(ours.len(), 3);
    assert_eq!(theirs.len(), 3);
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            a.our_color,
            if i % 2 == 0 {
                Color::White
            } else {
                Color::Black
            }
        );
        assert_eq!(b.our_color, !a.our_color);
        assert_eq!(
            (a.opponent.as_str(), b.opponent.as_str()),
            ("follower", "initiator")
        );
        assert_eq!(
            a.moves, b.moves,
            "game {i}: the sides disagree on the moves"
        );
        assert!(!a.moves.is_empty());
        // Replaying the moves with the full rules gives the result both sides recorded.
        let mut g = Game::new(Rules::FMJD);
        for &m in &a.moves {
            assert_eq!(g.outcome(), None, "game {i} went on after its end");
            g.play(m).unwrap();
        }
        let outcome = g.outcome().expect("game ended by the rules");
        assert_eq!(a.end, EndCause::Rules(outcome));
        assert_eq!(b.end, EndCause::Rules(outcome));
        assert_eq!(a.white_score(), Some(outcome.white_score()));
        assert_eq!(b.white_score(), Some(outcome.white_score()));
        // Stop codes: the follower always offers another game; the initiator stops after the last.
        assert_eq!(a.peer_stop, Some(StopCode::NextGame));
        assert_eq!(
            b.peer_stop,
            Some(if i == 2 {
                StopCode::NoNextGame
            } else {
                StopCode::NextGame
            })
        );
    }
}

#[test]
fn set_up_position_and_a_quick_win() {
    let listener = DxpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let follower = thread::spawn(move || {
        listener
            .serve(
                &mut FirstMove,
                &ListenOptions {
                    player: player("f"),
                    connections: 1,
                },
            )
            .unwrap()
    });
    // White takes Black's last piece at once.
    let start = Position::from_fen("W:W28,45:B23").unwrap();
    let opts = ConnectOptions {
        player: player("i"),
        start: Some(start),
        games: 1,
        time_minutes: 0,
        ..ConnectOptions::default()
    };
    let ours = dxp_connect(&addr.to_string(), &mut FirstMove, &opts).unwrap();
    let theirs = follower.join().unwrap();
    let win = Outcome::Win {
        winner: Color::White,
        reason: WinReason::NoPieces,
    };
    assert_eq!(ours[0].end, EndCause::Rules(win));
    assert_eq!(theirs[0].end, EndCause::Rules(win));
    assert_eq!(
        (ours[0].verdict, theirs[0].verdict),
        (Some(Verdict::Win), Some(Verdict::Loss))
    );
    assert_eq!(theirs[0].start, start);
    assert_eq!(ours[0].moves.len(), 1);
    assert_eq!(ours[0].moves[0].to_hub(), "28x19x23");
}

/// Starts a follower on loopback with a short peer time-out and returns its address and thread.
fn follower_with(
    peer_timeout: Duration,
) -> (
    std::net::SocketAddr,
    thread::JoinHandle<Vec<draughts_protocol::GameRecord>>,
) {
    let listener = DxpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = thread::spawn(move || {
        let mut p = player("follower");
        p.peer_timeout = Some(peer_timeout);
        p.idle_timeout = Duration::from_secs(5);
        listener
            .serve(
                &mut FirstMove,
                &ListenOptions {
                    player: p,
                    connections: 1,
                },
            )
            .unwrap()
    });
    (addr, handle)
}

/// A scripted initiator: connects, asks for a game in which it plays White, and checks the
/// follower accepts.
fn scripted_initiator(addr: std::net::SocketAddr) -> Connection<TcpStream> {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut c = Connection::new(stream);
    c.send(&Message::GameRequest(GameRequest {
        version: 1,
        initiator: "script".into(),
        follower_color: Color::Black,
        minutes: 1,
        moves: 0,
        position: None,
    }))
    .unwrap();
    match c.recv().unwrap() {
        Message::GameAccept(GameAccept {
            follower,
            code: AcceptCode::Accepted,
        }) => assert_eq!(follower, "follower"),
        other => panic!("{other:?}"),
    }
    c
}

fn expect_game_end(c: &mut Connection<TcpStream>, reason: EndReason) {
    loop {
        match c.recv().unwrap() {
            Message::GameEnd(e) => {
                assert_eq!(e.reason, reason);
                return;
            }
            Message::Chat(_) => {}
            other => panic!("expected GAMEEND, got {other:?}"),
        }
    }
}

#[test]
fn illegal_move_from_the_peer_ends_the_game_with_the_reason() {
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let mut c = scripted_initiator(addr);
    // Chat and a take-back request are fine at any time.
    c.send(&Message::Chat("good luck".into())).unwrap();
    c.send(&Message::BackRequest(BackRequest {
        move_number: 1,
        color: Color::White,
    }))
    .unwrap();
    assert_eq!(
        c.recv().unwrap(),
        Message::BackAccept(BackCode::NotSupported)
    );
    // 33-27 is not a move (the squares are not neighbours).
    c.send(&Message::Move(MoveMessage {
        seconds: 1,
        from: sq(33),
        to: sq(27),
        captured: vec![],
    }))
    .unwrap();
    expect_game_end(&mut c, EndReason::IWin);
    c.send(&Message::GameEnd(GameEnd {
        reason: EndReason::Unknown,
        stop: StopCode::NoNextGame,
    }))
    .unwrap();
    drop(c);
    let records = follower.join().unwrap();
    assert_eq!(records.len(), 1);
    let r = &records[0];
    match &r.end {
        EndCause::PeerIllegalMove { text, reason } => {
            assert_eq!(text, "33-27");
            assert!(reason.contains("not legal in W:W31-50:B1-20"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(r.verdict, Some(Verdict::Win));
    assert_eq!(r.chat, ["good luck"]);
    assert_eq!(r.peer_stop, Some(StopCode::NoNextGame));
}

#[test]
fn bad_messages_time_outs_and_resignations() {
    // A malformed message during the game.
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let mut c = scripted_initiator(addr);
    c.send_raw(b"M12").unwrap();
    expect_game_end(&mut c, EndReason::IWin);
    drop(c);
    let r = follower.join().unwrap();
    assert!(
        matches!(&r[0].end, EndCause::PeerBadMessage(m) if m.contains("MOVE message")),
        "{:?}",
        r[0].end
    );

    // An out-of-place message (a second GAMEREQ) during the game.
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let mut c = scripted_initiator(addr);
    c.send(&Message::GameRequest(GameRequest {
        version: 1,
        initiator: "again".into(),
        follower_color: Color::White,
        minutes: 1,
        moves: 0,
        position: None,
    }))
    .unwrap();
    expect_game_end(&mut c, EndReason::IWin);
    drop(c);
    let r = follower.join().unwrap();
    assert!(
        matches!(&r[0].end, EndCause::PeerBadMessage(m) if m.contains("unexpected GAMEREQ")),
        "{:?}",
        r[0].end
    );

    // Bytes without a NUL: the follower gives up on the connection.
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let mut c = scripted_initiator(addr);
    use std::io::Write;
    c.get_mut().write_all(&[b'C'; 300]).unwrap();
    expect_game_end(&mut c, EndReason::IWin);
    let r = follower.join().unwrap();
    assert!(
        matches!(&r[0].end, EndCause::PeerBadMessage(m) if m.contains("without the NUL")),
        "{:?}",
        r[0].end
    );

    // A peer that never moves.
    let (addr, follower) = follower_with(Duration::from_millis(200));
    let mut c = scripted_initiator(addr);
    expect_game_end(&mut c, EndReason::IWin);
    c.send(&Message::GameEnd(GameEnd {
        reason: EndReason::Unknown,
        stop: StopCode::NoNextGame,
    }))
    .unwrap();
    drop(c);
    let r = follower.join().unwrap();
    assert_eq!(r[0].end, EndCause::PeerTimeout);
    assert_eq!(r[0].verdict, Some(Verdict::Win));

    // A peer that plays one move, gets an answer, then resigns.
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let mut c = scripted_initiator(addr);
    c.send(&Message::Move(MoveMessage {
        seconds: 0,
        from: sq(32),
        to: sq(28),
        captured: vec![],
    }))
    .unwrap();
    let Message::Move(answer) = c.recv().unwrap() else {
        panic!("no answer")
    };
    let after = Position::start().play(&Position::start().parse_hub_move("32-28").unwrap());
    assert!(answer.resolve(&after, &Rules::FMJD).is_ok(), "{answer}");
    c.send(&Message::GameEnd(GameEnd {
        reason: EndReason::ILose,
        stop: StopCode::NoNextGame,
    }))
    .unwrap();
    expect_game_end(&mut c, EndReason::IWin);
    drop(c);
    let r = follower.join().unwrap();
    assert_eq!(r[0].end, EndCause::PeerGameEnd(EndReason::ILose));
    assert_eq!(r[0].verdict, Some(Verdict::Win));
    assert_eq!(r[0].moves.len(), 2);

    // A peer that drops the connection mid-game.
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let c = scripted_initiator(addr);
    drop(c);
    let r = follower.join().unwrap();
    assert!(
        matches!(&r[0].end, EndCause::Disconnected(_)),
        "{:?}",
        r[0].end
    );
}

#[test]
fn the_initiator_referees_too() {
    // A scripted follower that accepts, lets the initiator (White) move, then answers with an
    // illegal capture claim; a second connection declines the game.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let script = thread::spawn(move || {
        let (s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut c = Connection::new(s);
        let Message::GameRequest(req) = c.recv().unwrap() else {
            panic!()
        };
        assert_eq!(
            (req.follower_color, req.minutes, req.moves, req.position),
            (Color::Black, 2, 40, None)
        );
        c.send(&Message::GameAccept(GameAccept {
            follower: "script".into(),
            code: AcceptCode::Accepted,
        }))
        .unwrap();
        let Message::Move(_) = c.recv().unwrap() else {
            panic!()
        };
        c.send(&Message::Move(MoveMessage {
            seconds: 0,
            from: sq(19),
            to: sq(28),
            captured: vec![sq(23)],
        }))
        .unwrap();
        let Message::GameEnd(e) = c.recv().unwrap() else {
            panic!()
        };
        assert_eq!(e.reason, EndReason::IWin);
        c.send(&Message::GameEnd(GameEnd {
            reason: EndReason::Unknown,
            stop: StopCode::NextGame,
        }))
        .unwrap();
        // Second game request: declined.
        let Message::GameRequest(req) = c.recv().unwrap() else {
            panic!()
        };
        assert_eq!(req.follower_color, Color::White);
        c.send(&Message::GameAccept(GameAccept {
            follower: "script".into(),
            code: AcceptCode::Declined,
        }))
        .unwrap();
    });
    let opts = ConnectOptions {
        player: player("i"),
        games: 2,
        time_minutes: 2,
        moves: 40,
        ..ConnectOptions::default()
    };
    let records = dxp_connect(&addr.to_string(), &mut FirstMove, &opts).unwrap();
    script.join().unwrap();
    assert_eq!(records.len(), 2);
    assert!(
        matches!(&records[0].end, EndCause::PeerIllegalMove { text, .. } if text == "19x28x23"),
        "{:?}",
        records[0].end
    );
    assert_eq!(records[0].verdict, Some(Verdict::Win));
    assert_eq!(records[1].end, EndCause::Declined(AcceptCode::Declined));
    assert_eq!(records[1].verdict, None);
}

#[test]
fn connect_failures_are_errors() {
    // Bind then drop to find a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let opts = ConnectOptions {
        connect_timeout: Duration::from_secs(2),
        ..ConnectOptions::default()
    };
    let e = dxp_connect(&format!("127.0.0.1:{port}"), &mut FirstMove, &opts).unwrap_err();
    assert!(e.to_string().contains("cannot connect"), "{e}");
    assert!(DxpListener::bind("not an address:x").is_err());
}

#[test]
fn hostile_peers_a_move_for_the_wrong_side_and_a_truncated_message() {
    // A move of the other side's man (White to move, 19-23 is Black's).
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let mut c = scripted_initiator(addr);
    c.send(&Message::Move(MoveMessage { seconds: 0, from: sq(19), to: sq(23), captured: vec![] })).unwrap();
    expect_game_end(&mut c, EndReason::IWin);
    drop(c);
    let r = follower.join().unwrap();
    assert!(
        matches!(&r[0].end, EndCause::PeerIllegalMove { text, .. } if text == "19-23"),
        "{:?}",
        r[0].end
    );
    assert_eq!(r[0].verdict, Some(Verdict::Win));

    // A truncated message: half a MOVE, then the peer goes away.
    let (addr, follower) = follower_with(Duration::from_secs(10));
    let mut c = scripted_initiator(addr);
    use std::io::Write;
    c.get_mut().write_all(b"M001").unwrap();
    drop(c);
    let r = follower.join().unwrap();
    assert!(matches!(&r[0].end, EndCause::Disconnected(_)), "{:?}", r[0].end);
}

#[test]
fn a_listener_survives_hundreds_of_dropped_connections_and_a_silent_one() {
    let listener = DxpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    const DROPPED: usize = 300;
    let handle = thread::spawn(move || {
        let mut p = player("follower");
        p.peer_timeout = Some(Duration::from_secs(10));
        // The silent client is given up after this.
        p.idle_timeout = Duration::from_millis(300);
        listener.serve(&mut FirstMove, &ListenOptions { player: p, connections: DROPPED + 2 }).unwrap()
    });
    // Hundreds opened and dropped, a hundred at once (the listen queue holds 128: beyond it the
    // kernel drops the connection requests and clients retry after seconds).
    for _ in 0..DROPPED / 100 {
        let conns: Vec<TcpStream> = (0..100).filter_map(|_| TcpStream::connect(addr).ok()).collect();
        assert_eq!(conns.len(), 100);
        drop(conns);
    }
    // One that connects and says nothing.
    let silent = TcpStream::connect(addr).unwrap();
    // Then a real game, which the listener still plays.
    let mut c = scripted_initiator(addr);
    c.send(&Message::GameEnd(GameEnd { reason: EndReason::ILose, stop: StopCode::NoNextGame })).unwrap();
    expect_game_end(&mut c, EndReason::IWin);
    drop(c);
    drop(silent);
    let records = handle.join().unwrap();
    // Connections without a game leave no record; the real one does.
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0].end, EndCause::PeerGameEnd(EndReason::ILose));
}
