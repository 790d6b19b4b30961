//! Inputs the fuzz targets (fuzz/, `scripts/fuzz`) found to break an invariant, kept as tests.

use draughts_protocol::hub::HubLine;

/// fuzz target `hub_client`: an engine's `error message="..."` with a tab inside the quotes.
/// The parser keeps the tab (a line may hold tabs), but writing the line turned it into a space,
/// so a line read and written back read differently.
#[test]
fn a_tab_in_a_quoted_value_survives_writing_and_reading() {
    let text = "error message=\"`pos` duri\t .g a search\"";
    let line = HubLine::parse(text).unwrap().unwrap();
    assert_eq!(line.get("message"), Some("`pos` duri\t .g a search"));
    let written = line.to_string();
    assert_eq!(written, text);
    assert_eq!(HubLine::parse(&written), Ok(Some(line)));
    // Other control characters still become spaces: a written line is always one line.
    let l = HubLine::new("error").arg("message", "a\nb\rc\u{0}d\te");
    assert_eq!(l.to_string(), "error message=\"a b c d\te\"");
    assert!(HubLine::parse(&l.to_string()).unwrap().is_some());
}
