//! DXP messages and sessions: `Message::parse` / `encode`, the NUL framing of `Connection`, and
//! the `Follower` and `Initiator` roles refereeing a peer whose every byte is the input.
//!
//! Invariant: no panic and no hang on any bytes. Every frame either parses or is a typed
//! `MessageError`; a message that parses encodes back to the same characters and parse ->
//! encode -> parse is the identity. Both roles, playing a seeded random mover against the input
//! as the peer's side of the connection, end when the input does (at most one game per 3
//! input bytes), and every game they record replays legally from its start position.
#![no_main]

use draughts_core::{Game, Rules};
use draughts_protocol::dxp::{Connection, DxpError, Follower, Initiator, Message, MAX_MESSAGE};
use draughts_protocol::{ConnectOptions, GameRecord, PlayerOptions, RandomMover, SearchLimit};
use libfuzzer_sys::fuzz_target;

#[path = "common/mod.rs"]
mod common;

fn check_frame(frame: &[u8]) {
    match Message::parse(frame) {
        Ok(m) => {
            let bytes = m.encode();
            assert!(bytes.len() <= MAX_MESSAGE && bytes.iter().all(|b| (0x20..=0x7e).contains(b)));
            assert_eq!(
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(frame),
                "{m:?} encodes to other characters"
            );
            assert_eq!(Message::parse(&bytes).as_ref(), Ok(&m), "parse -> encode -> parse");
            assert_eq!(m.to_string().as_bytes(), bytes.as_slice());
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

fn check_records(records: &[GameRecord], input_len: usize) {
    assert!(records.len() <= input_len / 3 + 1, "{} games from {input_len} bytes", records.len());
    for r in records {
        let mut game = Game::from_position(r.start, Rules::FMJD);
        for &mv in &r.moves {
            game.play(mv).unwrap_or_else(|e| panic!("a recorded move is illegal: {e}"));
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 16 * 1024 {
        return;
    }
    // Messages, framed as the connection frames them, read a few bytes at a time.
    let chunk = 1 + data.first().map_or(0, |&b| b as usize % 16);
    let mut conn = Connection::new(common::Script::new(data, chunk));
    let mut frames = 0;
    loop {
        match conn.recv_frame() {
            Ok(frame) => {
                frames += 1;
                assert!(frames <= data.len());
                assert!(frame.len() <= MAX_MESSAGE);
                check_frame(&frame);
            }
            Err(DxpError::Closed { .. }) | Err(DxpError::Unterminated) => break,
            Err(e) => panic!("in-memory framing failed: {e}"),
        }
    }

    // The peer's side of whole sessions.
    let player = PlayerOptions { limit: Some(SearchLimit::depth(1)), ..PlayerOptions::default() };
    let mut searcher = RandomMover::new(1);
    let records = Follower::new(common::Script::new(data, chunk)).serve(&mut searcher, &player);
    check_records(&records, data.len());
    let opts = ConnectOptions { player, games: 3, ..ConnectOptions::default() };
    let records = Initiator::new(common::Script::new(data, chunk)).play(&mut searcher, &opts);
    check_records(&records, data.len());
});
