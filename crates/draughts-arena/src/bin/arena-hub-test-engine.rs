//! A Hub engine for the arena's tests: `arena-hub-test-engine [MODE] [SEED]`.
//!
//! Mode `random` (the default) plays seeded random moves through the real engine side of the
//! protocol crate. The other modes do the handshake and then misbehave at `go`: `crash` exits
//! with status 3, `hang` never answers, `illegal` plays a well-formed move that is not legal.
//! Hostile ones: `flood` sends `info` lines without end, `longline` a line of 10 MB before its
//! move, `early` a move before it is asked for (right after `ready`), `badformat` a move in a
//! format that is not Hub's (`32to28`).

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use draughts_protocol::{run_hub, RandomMover};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("random");
    let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let (stdin, stdout) = (io::stdin(), io::stdout());
    if mode == "random" {
        return match run_hub(&mut RandomMover::new(seed), stdin.lock(), stdout) {
            Ok(()) => ExitCode::SUCCESS,
            Err(_) => ExitCode::FAILURE,
        };
    }
    let mut out = stdout.lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let answer = match (line.split_whitespace().next().unwrap_or(""), mode) {
            ("hub", _) => "id name=misbehaving version=1\nwait",
            ("init", "early") => "ready\ndone move=32-28",
            ("init", _) => "ready",
            ("ping", _) => "pong",
            ("quit", _) => break,
            ("go", "crash") => return ExitCode::from(3),
            ("go", "illegal") => "done move=10-5",
            ("go", "badformat") => "done move=32to28",
            ("go", "early") => "done move=32-28",
            ("go", "flood") => loop {
                if writeln!(out, "info depth=1 score=0.1 nodes=1 pv=32-28").is_err() {
                    return ExitCode::SUCCESS;
                }
            },
            ("go", "longline") => {
                let long = "x".repeat(10 << 20);
                if writeln!(out, "info {long}").is_err() {
                    return ExitCode::SUCCESS;
                }
                "done move=32-28"
            }
            _ => continue,
        };
        if writeln!(out, "{answer}").and_then(|_| out.flush()).is_err() {
            break;
        }
    }
    ExitCode::SUCCESS
}
