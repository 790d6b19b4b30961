//! Hub, engine side: the lines a GUI sends to our engine (`draughts_protocol::run_hub_with` over
//! the whole input, `HubLine::parse`, `hub::engine::parse_level`).
//!
//! Invariant: no panic and no hang on any bytes: `run_hub_with` (a seeded random mover as the
//! searcher) reads the input to its end and returns `Ok`, and everything it writes is lines that
//! parse as Hub lines with a known answer command (`id param wait ready pong info done error`).
//! Every input line that parses writes back (`Display`) to a line that parses to the same
//! `HubLine`; a `level` line that parses writes back (`level {SearchLimit}`, what the client
//! sends) to a line that parses to the same limit. A bad line is a typed `LineError`.
#![no_main]

use std::io::Cursor;

use draughts_protocol::hub::engine::parse_level;
use draughts_protocol::hub::line::{read_line, ReadLine};
use draughts_protocol::hub::{HubLine, MAX_LINE};
use draughts_protocol::{run_hub_with, HubConfig, RandomMover, SearchLimit};
use libfuzzer_sys::fuzz_target;

const ANSWERS: [&str; 8] = ["id", "param", "wait", "ready", "pong", "info", "done", "error"];

fn check_line(text: &str) {
    let line = match HubLine::parse(text) {
        Ok(Some(line)) => line,
        Ok(None) => return,
        Err(e) => {
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let written = line.to_string();
    assert_eq!(HubLine::parse(&written), Ok(Some(line.clone())), "`{text}` written back as `{written}`");
    if line.command == "level" {
        if let Ok(limit) = parse_level(&line) {
            let sent = format!("level {limit}");
            let back = HubLine::parse(&sent).expect("a level line parses").expect("not blank");
            assert_eq!(parse_level(&back), Ok(limit.clone()), "`{text}` -> {limit:?} -> `{sent}`");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.len() > 16 * 1024 {
        return;
    }
    let mut input = Cursor::new(data);
    while let Ok(line) = read_line(&mut input, MAX_LINE) {
        match line {
            ReadLine::Line(text) => check_line(&text),
            ReadLine::Eof => break,
            ReadLine::TooLong(_) | ReadLine::NotUtf8 => {}
        }
    }

    let config = HubConfig { default_limit: SearchLimit::depth(1), ..HubConfig::default() };
    let mut out = Vec::new();
    let mut searcher = RandomMover::new(0);
    run_hub_with(&mut searcher, Cursor::new(data), &mut out, &config).expect("in-memory input and output do not fail");
    let out = String::from_utf8(out).expect("the engine writes UTF-8");
    for text in out.lines() {
        let line = HubLine::parse(text)
            .unwrap_or_else(|e| panic!("the engine wrote `{text}`, which is not a Hub line: {e}"))
            .unwrap_or_else(|| panic!("the engine wrote a blank line"));
        assert!(ANSWERS.contains(&line.command.as_str()), "the engine wrote `{text}`");
        if line.command == "done" {
            let mv = line.get("move").expect("done has move=");
            draughts_core::MoveText::parse_hub(mv).expect("done's move is Hub move text");
        }
    }
});
