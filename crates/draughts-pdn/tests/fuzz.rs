//! The reader never panics and always terminates, on any bytes.

use std::io::BufReader;

use draughts_core::Rules;
use draughts_pdn::{PdnErrorKind, Reader};
use proptest::prelude::*;

const SAMPLE: &[u8] = include_bytes!("data/sample.pdn");

/// Reads everything and checks what must hold for any input: every item names the next game
/// number, lines are within the input, games that were read replay legally, and the number of
/// items is bounded by the input size (so the reader made progress on every call).
fn read_everything(bytes: &[u8], capacity: usize) -> Result<(), TestCaseError> {
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() + 1;
    let reader = Reader::new(BufReader::with_capacity(capacity, bytes));
    let mut items = 0usize;
    for item in reader {
        items += 1;
        prop_assert!(items <= bytes.len() + 1, "more games than bytes: the reader is stuck");
        match item {
            Ok(game) => {
                prop_assert_eq!(game.number, items);
                prop_assert!(game.replay(&Rules::FMJD).is_ok());
            }
            Err(e) => {
                prop_assert_eq!(e.game, items);
                prop_assert!(e.line >= 1 && e.line <= lines, "line {} of {}", e.line, lines);
                prop_assert!(!matches!(e.kind, PdnErrorKind::Io(_)));
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Edit {
    Delete { at: usize, len: usize },
    Insert { at: usize, bytes: Vec<u8> },
    Replace { at: usize, byte: u8 },
    Duplicate { at: usize, len: usize, to: usize },
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes that matter to the grammar, and some that do not.
    let interesting = prop_oneof![
        prop::sample::select(b"[]{}()\";$%*!?.-x:/\\ \n\r\t0123456789".to_vec()),
        any::<u8>(),
    ];
    prop_oneof![
        (any::<usize>(), 1usize..40).prop_map(|(at, len)| Edit::Delete { at, len }),
        (any::<usize>(), proptest::collection::vec(interesting.clone(), 1..6))
            .prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), interesting).prop_map(|(at, byte)| Edit::Replace { at, byte }),
        (any::<usize>(), 1usize..200, any::<usize>()).prop_map(|(at, len, to)| Edit::Duplicate { at, len, to }),
    ]
}

fn apply(text: &mut Vec<u8>, edit: &Edit) {
    let n = text.len();
    match *edit {
        Edit::Delete { at, len } if n > 0 => {
            let at = at % n;
            text.drain(at..(at + len).min(n));
        }
        Edit::Insert { at, ref bytes } => {
            let at = at % (n + 1);
            text.splice(at..at, bytes.iter().copied());
        }
        Edit::Replace { at, byte } if n > 0 => text[at % n] = byte,
        Edit::Duplicate { at, len, to } if n > 0 => {
            let at = at % n;
            let chunk = text[at..(at + len).min(n)].to_vec();
            let to = to % (n + 1);
            text.splice(to..to, chunk);
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600), capacity in 1usize..32) {
        read_everything(&bytes, capacity)?;
    }

    #[test]
    fn pdn_like_text(text in "[\\[\\]{}()\";$%*!?. \n0-9x/A-Za-z-]{0,400}", capacity in 1usize..32) {
        read_everything(text.as_bytes(), capacity)?;
    }

    #[test]
    fn mutated_sample(edits in proptest::collection::vec(edit(), 1..8), capacity in 1usize..64) {
        let mut text = SAMPLE.to_vec();
        for e in &edits {
            apply(&mut text, e);
        }
        read_everything(&text, capacity)?;
    }
}

#[test]
fn unmutated_sample_holds_the_invariants() {
    read_everything(SAMPLE, 3).unwrap();
}
