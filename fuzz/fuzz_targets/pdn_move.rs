//! PDN and Hub move text (`MoveText::parse_pdn`, `parse_hub`, `resolve`, `Position::to_pdn`,
//! `Move::to_hub`) against fuzzed positions.
//!
//! Input: a position, a newline, move text. The position is a FEN if it is one, otherwise bytes
//! decoded into pieces (`common::position_from_bytes`); a leading `!` plays under the
//! promote-in-capture rules instead of FMJD.
//!
//! Invariant: no panic. Move text that parses writes back (`Display`) to text that parses to
//! the same `MoveText`. A text that resolves names a legal move, and that move's `to_pdn` and
//! `to_hub` texts resolve back to the same move. Every legal move of the position (or, when it
//! has more than 8, 8 of them spread over the list) survives `to_pdn` -> `parse_pdn` ->
//! `resolve` and `to_hub` -> `parse_hub` -> `resolve`. A text that
//! does not parse or resolve gives a typed `MoveError` (syntax, illegal or ambiguous).
#![no_main]

use draughts_core::{Move, MoveError, MoveText, Position, Rules};
use libfuzzer_sys::fuzz_target;

#[path = "common/mod.rs"]
mod common;

fn resolves_to(pos: &Position, rules: &Rules, text: &str, hub: bool, mv: Move) {
    let parsed = if hub { MoveText::parse_hub(text) } else { MoveText::parse_pdn(text) };
    let parsed = parsed.unwrap_or_else(|e| panic!("`{text}` written for a legal move does not parse: {e}"));
    let back = parsed
        .resolve(pos, rules)
        .unwrap_or_else(|e| panic!("`{text}` written for {mv:?} in {} does not resolve: {e}", pos.to_fen()));
    assert_eq!(back, mv, "`{text}` resolves to another move in {}", pos.to_fen());
}

fn check_text(pos: &Position, rules: &Rules, text: &str, hub: bool) {
    let parsed = if hub { MoveText::parse_hub(text) } else { MoveText::parse_pdn(text) };
    let t = match parsed {
        Ok(t) => t,
        Err(e) => {
            assert!(matches!(e, MoveError::Syntax { .. }), "a parse error that is not a syntax error: {e:?}");
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let written = t.to_string();
    let again = if hub { MoveText::parse_hub(&written) } else { MoveText::parse_pdn(&written) };
    assert_eq!(again.as_ref(), Ok(&t), "`{text}` parsed, written as `{written}`, parses differently");
    match t.resolve(pos, rules) {
        Ok(mv) => {
            assert!(pos.legal_moves_with(rules).contains(&mv), "resolved to an illegal move");
            resolves_to(pos, rules, &pos.to_pdn(&mv, rules), false, mv);
            resolves_to(pos, rules, &mv.to_hub(), true, mv);
            let _ = pos.play(&mv);
        }
        Err(e) => {
            assert!(matches!(e, MoveError::Illegal { .. } | MoveError::Ambiguous { .. }), "{e:?}");
            assert!(!e.to_string().is_empty());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (spec, text) = common::split_line(data);
    let (pos, rules) = common::position_and_rules(spec);
    // Every legal move when there are few; otherwise 8 spread over the list, the first and the
    // last among them (each check generates the moves again: keep the target fast).
    let legal = pos.legal_moves_with(&rules);
    let step = legal.len().div_ceil(8).max(1);
    let picked = (0..legal.len()).step_by(step).chain(legal.len().checked_sub(1));
    for i in picked {
        let mv = legal.iter().copied().nth(i).expect("in range");
        resolves_to(&pos, &rules, &pos.to_pdn(&mv, &rules), false, mv);
        resolves_to(&pos, &rules, &mv.to_hub(), true, mv);
    }
    let Ok(text) = std::str::from_utf8(text) else { return };
    if text.len() > 512 {
        return;
    }
    check_text(&pos, &rules, text, false);
    check_text(&pos, &rules, text, true);
});
