//! FEN and the 51-character Hub position (`Position::from_fen` / `to_fen`, `from_hub` / `to_hub`).
//!
//! Invariant: no panic on any text. A FEN that parses writes back (`to_fen`) to text that parses
//! to the same position, and writing that position again gives identical text; the same for the
//! Hub position form, and a parsed position survives the other form too. A text that does not
//! parse gives a `FenError` whose column lies within the text and whose message quotes it.
#![no_main]

use draughts_core::{fen::Fen, Position};
use libfuzzer_sys::fuzz_target;

fn check_round_trip(pos: &Position) {
    let fen = pos.to_fen();
    let back = Position::from_fen(&fen).unwrap_or_else(|e| panic!("to_fen wrote `{fen}`, which does not parse: {e}"));
    assert_eq!(back, *pos, "`{fen}` parses to another position");
    assert_eq!(back.to_fen(), fen, "to_fen is not stable");
    assert_eq!(Fen(pos).to_string(), fen);
    let hub = pos.to_hub();
    assert_eq!(hub.len(), 51);
    let back = Position::from_hub(&hub).unwrap_or_else(|e| panic!("to_hub wrote `{hub}`, which does not parse: {e}"));
    assert_eq!(back, *pos, "`{hub}` parses to another position");
}

fn check_error(text: &str, e: &draughts_core::FenError) {
    assert_eq!(e.text, text);
    assert!(e.column >= 1 && e.column <= text.chars().count() + 1, "column {} of `{text}`", e.column);
    let message = e.to_string();
    assert!(message.contains(text), "{message}");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    match Position::from_fen(text) {
        Ok(pos) => check_round_trip(&pos),
        Err(e) => check_error(text, &e),
    }
    match Position::from_hub(text) {
        Ok(pos) => check_round_trip(&pos),
        Err(e) => check_error(text, &e),
    }
});
