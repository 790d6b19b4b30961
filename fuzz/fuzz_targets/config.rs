//! Config files reachable without libtorch: the `[selfplay]` (`SelfplayConfig`), `[mcts]`
//! (`MctsConfig`) and `[net]` (`NetConfig`) sections of a training config, and the serve levels
//! file (`configs/levels.toml`, parsed by `draughts_cli::serve::levels::parse`).
//!
//! The levels parser lives in the draughts-cli package, whose dependencies pull libtorch (tch,
//! torch-sys, through draughts-nn) into any build that depends on it, so its source file is
//! compiled into this target instead (with the `bad_input` error of `draughts_cli::error`, also
//! compiled in): the code fuzzed is the code the program runs.
//!
//! Invariant: no panic on any text. Each type is read from the whole text and from its section
//! of a whole config file; a value that reads validates without panicking, and written back as
//! TOML it reads back to the same value (compared as written text, so NaN compares equal). A
//! bad file is a typed error: a TOML error with a message, for the levels file a `BadInput`.
#![no_main]

use draughts_mcts::MctsConfig;
use draughts_model::NetConfig;
use draughts_selfplay::SelfplayConfig;
use libfuzzer_sys::fuzz_target;
use serde::de::DeserializeOwned;
use serde::Serialize;

#[path = "../../crates/draughts-cli/src/error.rs"]
#[allow(dead_code)]
mod error;
#[path = "../../crates/draughts-cli/src/serve/levels.rs"]
#[allow(dead_code)]
mod levels;

use error::{bad_input, BadInput};

fn round_trip<T: Serialize + DeserializeOwned + std::fmt::Debug>(value: &T) {
    let Ok(text) = toml::to_string(value) else {
        // Only values TOML cannot hold fail to serialise (none of these types has one).
        panic!("{value:?} does not serialise as TOML");
    };
    let back: T = toml::from_str(&text).unwrap_or_else(|e| panic!("`{text}` does not read back: {e}"));
    let again = toml::to_string(&back).expect("serialises");
    assert_eq!(again, text, "{value:?} read back as {back:?}");
}

fn read<T: Serialize + DeserializeOwned + std::fmt::Debug>(text: &str, section: Option<&toml::Value>) -> Vec<T> {
    let mut out = Vec::new();
    match toml::from_str::<T>(text) {
        Ok(v) => out.push(v),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    if let Some(value) = section {
        match value.clone().try_into::<T>() {
            Ok(v) => out.push(v),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    for v in &out {
        round_trip(v);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if text.len() > 32 * 1024 {
        return;
    }
    let table = toml::from_str::<toml::Table>(text).ok();
    let section = |name: &str| table.as_ref().and_then(|t| t.get(name));

    for c in read::<SelfplayConfig>(text, section("selfplay")) {
        if let Ok(rules) = c.validate() {
            assert_eq!(rules.name(), Some(c.rules.as_str()));
        }
        let _ = c.temperature_at(usize::MAX);
    }
    for c in read::<MctsConfig>(text, section("mcts")) {
        let _ = c.validate();
    }
    for c in read::<NetConfig>(text, section("net")) {
        if c.validate().is_ok() {
            assert!(!c.short_name().is_empty());
        }
    }

    match levels::parse(text, "fuzz.toml") {
        Ok(levels) => {
            assert!(!levels.is_empty());
            for l in &levels {
                assert!(l.depth.is_some() || l.nodes.is_some() || l.movetime_ms.is_some());
                let _ = l.limits(Some(std::time::Duration::from_millis(1)), 0);
                assert!(!l.summary(Some("model")).is_empty());
            }
        }
        Err(e) => {
            assert!(e.chain().any(|c| c.is::<BadInput>()), "not a BadInput: {e:#}");
            assert!(e.to_string().contains("fuzz.toml"), "{e}");
        }
    }
    let _ = bad_input("unused");
});
