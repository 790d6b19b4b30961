//! Whole PDN files: `draughts_pdn::Reader`, `draughts_pdn::check` and the writer
//! (`Writer::write_game`).
//!
//! Invariant: no panic and no hang on any bytes; the reader makes progress (at most one item
//! per input byte, plus one) and numbers its items 1, 2, 3...; a bad game is a typed `PdnError`
//! (never `Io` on an in-memory input) with a line inside the input; `check` (under the other
//! capture rule) counts good and bad games and keeps their errors. A game that is read replays
//! legally, and written with the writer and read back it is one game that replays to the same
//! start position, moves and result.
#![no_main]

use std::io::BufReader;

use draughts_core::Rules;
use draughts_pdn::{check, PdnErrorKind, Reader, Writer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() > 64 * 1024 {
        return;
    }
    let lines = data.iter().filter(|&&b| b == b'\n').count() + 1;
    // A small buffer, so that tokens straddle refills.
    let capacity = 1 + data.first().map_or(0, |&b| b as usize % 64);
    let mut items = 0usize;
    for item in Reader::new(BufReader::with_capacity(capacity, data)) {
        items += 1;
        assert!(items <= data.len() + 1, "more games than bytes: the reader is stuck");
        match item {
            Ok(game) => {
                assert_eq!(game.number, items);
                let replayed = game.replay(&Rules::FMJD).expect("a game the reader returns replays");
                let mut writer = Writer::new(Vec::new());
                writer.write_game(&game).unwrap_or_else(|e| panic!("a game the reader returned does not write: {e}"));
                let text = writer.into_inner();
                let mut again = Reader::new(text.as_slice());
                let back = match again.next_game() {
                    Some(Ok(g)) => g,
                    other => panic!(
                        "the writer's text does not read back: {other:?}\n{}",
                        String::from_utf8_lossy(&text)
                    ),
                };
                assert!(again.next_game().is_none(), "the writer wrote more than one game");
                assert_eq!(back.start, game.start, "start position changed");
                assert_eq!(back.moves, game.moves, "moves changed");
                assert_eq!(back.result, game.result, "result changed");
                let replayed_back = back.replay(&Rules::FMJD).expect("the game read back replays");
                assert_eq!(replayed_back.position(), replayed.position());
            }
            Err(e) => {
                assert_eq!(e.game, items);
                assert!(e.line >= 1 && e.line <= lines, "line {} of {lines}", e.line);
                assert!(!matches!(e.kind, PdnErrorKind::Io(_)), "{e}");
                assert!(!e.to_string().is_empty());
            }
        }
    }
    // `check` under the other rules (the reader above ran under FMJD): the same games, another
    // capture rule for which moves are legal.
    let summary = check(data, &Rules::PROMOTE_IN_CAPTURE);
    assert_eq!(summary.games_ok + summary.games_failed, summary.games_read);
    assert!(summary.games_read <= data.len() + 1);
    assert!(summary.errors.len() == summary.games_failed.min(draughts_pdn::MAX_KEPT_ERRORS));
});
