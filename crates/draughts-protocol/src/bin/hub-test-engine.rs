//! A Hub engine for tests: `hub-test-engine [MODE] [SEED]`.
//!
//! Mode `normal` (the default) is the real engine side, [`run_hub`] over a seeded
//! [`RandomMover`]. The other modes answer the handshake and then misbehave at `go`, so the
//! client's error handling can be tested against a real child process:
//! `illegal` plays a well-formed illegal move, `garbage` plays text that is not a move,
//! `nomove` sends `done` without a move, `crash` exits with status 3, `hang` never answers,
//! and `noready` never answers `init`.

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use draughts_protocol::{run_hub, RandomMover};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("normal");
    let seed = match args.get(1).map(|s| s.parse::<u64>()) {
        None => 1,
        Some(Ok(s)) => s,
        Some(Err(_)) => {
            eprintln!("hub-test-engine: the seed must be a non-negative integer");
            return ExitCode::from(2);
        }
    };
    let stdin = io::stdin();
    let stdout = io::stdout();
    if mode == "normal" {
        return match run_hub(&mut RandomMover::new(seed), stdin.lock(), stdout) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("hub-test-engine: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if !["illegal", "garbage", "nomove", "crash", "hang", "noready"].contains(&mode) {
        eprintln!("hub-test-engine: unknown mode `{mode}`");
        return ExitCode::from(2);
    }
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let command = line.split_whitespace().next().unwrap_or("");
        let answer = match (command, mode) {
            ("hub", _) => {
                "id name=misbehaving version=1\nparam name=seed value=1 type=int min=0 max=9\nwait"
            }
            ("init", "noready") => continue,
            ("init", _) => "ready",
            ("ping", _) => "pong",
            ("quit", _) => break,
            ("go", "illegal") => "info depth=1 score=0.10\ndone move=33-27",
            ("go", "garbage") => "done move=hello",
            ("go", "nomove") => "done",
            ("go", "crash") => return ExitCode::from(3),
            _ => continue,
        };
        if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}
