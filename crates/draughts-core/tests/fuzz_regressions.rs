//! Inputs the fuzz targets (fuzz/, `scripts/fuzz`) found to break an invariant, kept as tests.

use draughts_core::fen::FenErrorKind;
use draughts_core::Position;

/// fuzz target `fen`: a Hub position after leading whitespace of more than one byte (here two
/// no-break spaces) with a bad character. The error's offset was taken in the trimmed text and
/// then used to slice the whole text, inside the first no-break space: a panic instead of an
/// error.
#[test]
fn hub_position_after_multibyte_whitespace_is_an_error_not_a_panic() {
    let text = "\u{a0}\u{a0}W:W                           \u{a0}                K423";
    assert_eq!(text.trim().chars().count(), 51);
    let e = Position::from_hub(text).unwrap_err();
    assert_eq!(e.kind, FenErrorKind::HubChar(':'));
    // The `:` is the 4th character of the text.
    assert_eq!(e.column, 4);
    // The FEN reading of the same text is an error too (a bad item), never a panic.
    assert!(Position::from_fen(text).is_err());
    // Whitespace of any width before a good Hub position.
    let start = Position::start();
    assert_eq!(Position::from_hub(&format!("\u{3000}{}", start.to_hub())), Ok(start));
}
