//! Hub, client side: what an external engine sends to us (`HubClient::search` reading a real
//! engine process's output, `HubLine::parse`).
//!
//! Input: a position (FEN, or bytes decoded into pieces; see `common::position_and_rules`), a
//! newline, then the engine's output for one search.
//!
//! The engine is a relay process (`sh` and two `cat`s, started again only after the client
//! killed it): whatever the client writes comes back to this process through a FIFO, and a
//! helper thread answers `hub` with an `id`, two `param`s and `wait`, `init` with `ready`,
//! `ping` with `pong`, and each `go` with this input's engine output, so the input reaches the
//! client only after it asked for the move, as from a real engine. The output is cut after the
//! first line that ends a search (a `done` line, or a line that is not UTF-8, which the client
//! refuses), and a `done move=` with the first legal move is added when the input has no
//! `done`, so every search ends and nothing is left over for the next one. The client kills an
//! engine that sends a line that is not UTF-8, and starting the relay again costs milliseconds,
//! so such lines reach the client as they are only when the position starts with `#`; otherwise
//! they are made UTF-8 first (U+FFFD for each bad sequence).
//!
//! Invariant: no panic and no hang. The client's search ends with a legal move (and a `pv`, if
//! any, that replays legally from the position) or a typed `HubError` naming the protocol
//! breach or illegal move; it never times out or mistakes the relay for a crashed engine. Every
//! line that parses writes back (`Display`) to a line that parses to the same `HubLine`.
#![no_main]

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Cursor, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use draughts_core::{Game, Position};
use draughts_protocol::hub::line::{read_line, ReadLine};
use draughts_protocol::hub::{HubLine, MAX_LINE};
use draughts_protocol::{HubClient, HubClientOptions, HubError, SearchLimit};
use libfuzzer_sys::fuzz_target;

#[path = "common/mod.rs"]
mod common;

const HANDSHAKE: &[u8] = b"id name=relay version=1 author=\"fuzz harness\"\n\
param name=depth value=3 type=int min=1 max=9\n\
param name=book value=true type=bool\n\
wait\n";

/// What the helper thread hands out: the output of the next search.
fn pending() -> MutexGuard<'static, Option<Vec<u8>>> {
    static PENDING: Mutex<Option<Vec<u8>>> = Mutex::new(None);
    PENDING.lock().unwrap_or_else(|p| p.into_inner())
}

fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

/// The two FIFOs every relay uses, made once: the relay copies what the client sends into
/// `commands` and what arrives in `output` to the client. A helper thread reads `commands` and
/// answers into `output`. (A relay is replaced only after the client killed it, once it has read
/// all the output it was given, so nothing is left in `output` for the next one.)
fn fifos() -> &'static (PathBuf, PathBuf) {
    static FIFOS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    FIFOS.get_or_init(|| {
        let commands = common::scratch_dir().join("hub-commands");
        let output = common::scratch_dir().join("hub-output");
        mkfifo(&commands);
        mkfifo(&output);
        // Read-write opens do not wait for the other end, and never see an end of file.
        let cmd = OpenOptions::new().read(true).write(true).open(&commands).expect("open the command FIFO");
        let mut out: File = OpenOptions::new().read(true).write(true).open(&output).expect("open the output FIFO");
        std::thread::spawn(move || {
            let mut reader = BufReader::new(cmd);
            let mut line = Vec::new();
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                    return;
                }
                let answer: Option<Vec<u8>> = match line.split(|&b| b == b' ' || b == b'\n').next() {
                    Some(b"hub") => Some(HANDSHAKE.to_vec()),
                    Some(b"init") => Some(b"ready\n".to_vec()),
                    Some(b"ping") => Some(b"pong\n".to_vec()),
                    Some(b"go") => Some(pending().take().unwrap_or_default()),
                    _ => None,
                };
                if let Some(answer) = answer {
                    let _ = out.write_all(&answer);
                }
            }
        });
        (commands, output)
    })
}

fn spawn_relay() -> HubClient {
    let (commands, output) = fifos();
    // The child is the `cat` of the output (the client kills it); the `cat` of the commands ends
    // when the client closes the child's standard input. `3<&0`: a background job of `sh` would
    // otherwise read /dev/null.
    let script = "exec 3<&0; cat <&3 >\"$1\" & exec cat \"$0\"";
    let argv = ["sh", "-c", script, output.to_str().unwrap(), commands.to_str().unwrap()];
    let options = HubClientOptions { handshake_timeout: Duration::from_secs(30), ..HubClientOptions::default() };
    let client = HubClient::spawn_argv(&argv, &options).unwrap_or_else(|e| panic!("the relay does not start: {e}"));
    assert_eq!(client.id().name, "relay");
    assert_eq!(client.params().len(), 2);
    client
}

fn client() -> MutexGuard<'static, Option<HubClient>> {
    static CLIENT: Mutex<Option<HubClient>> = Mutex::new(None);
    CLIENT.lock().unwrap_or_else(|p| p.into_inner())
}

/// The part of `output` the client reads in one search, ending in a newline.
fn one_search(output: &[u8], fallback_move: &str) -> Vec<u8> {
    let mut cursor = Cursor::new(output);
    let mut ended = false;
    loop {
        match read_line(&mut cursor, MAX_LINE).expect("reading memory") {
            ReadLine::Eof => break,
            ReadLine::NotUtf8 | ReadLine::TooLong(_) => {
                ended = true;
                break;
            }
            ReadLine::Line(text) => {
                check_line(&text);
                if matches!(HubLine::parse(&text), Ok(Some(l)) if l.command == "done") {
                    ended = true;
                    break;
                }
            }
        }
    }
    let mut out = output[..cursor.position() as usize].to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    if !ended {
        out.extend_from_slice(format!("done move={fallback_move}\n").as_bytes());
    }
    out
}

/// `output` with every line that is not UTF-8 made UTF-8.
fn lossy_lines(output: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(output.len());
    for (i, line) in output.split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        out.extend_from_slice(String::from_utf8_lossy(line).as_bytes());
    }
    out
}

fn check_line(text: &str) {
    if let Ok(Some(line)) = HubLine::parse(text) {
        let written = line.to_string();
        assert_eq!(HubLine::parse(&written), Ok(Some(line)), "`{text}` written back as `{written}`");
    }
}

fuzz_target!(|data: &[u8]| {
    let (spec, output) = common::split_line(data);
    if output.len() > 8 * 1024 {
        return;
    }
    // Lines that are not UTF-8 go through as they are only after a `#` (see the top).
    let (spec, output) = match spec.strip_prefix(b"#") {
        Some(spec) => (spec, output.to_vec()),
        None => (spec, lossy_lines(output)),
    };
    let output = output.as_slice();
    // The client checks moves under its own rules (FMJD), so the position is read under them.
    let (mut pos, _) = common::position_and_rules(spec);
    if pos.legal_moves().is_empty() {
        pos = Position::start();
    }
    let legal = pos.legal_moves();
    let payload = one_search(output, &legal.first().expect("a legal move").to_hub());

    let mut slot = client();
    let client = slot.get_or_insert_with(spawn_relay);
    *pending() = Some(payload);
    let game = Game::from_position(pos, draughts_core::Rules::FMJD);
    let result = client.search(&game, &SearchLimit::depth(1), Duration::from_secs(60));
    match result {
        Ok(r) => {
            assert!(game.legal_moves().contains(&r.mv), "the client accepted an illegal move");
            if let Some(info) = &r.info {
                let mut p = pos;
                for mv in &info.pv {
                    assert!(p.legal_moves().contains(mv), "an illegal pv move was kept");
                    p = p.play(mv);
                }
            }
        }
        Err(HubError::IllegalMove { .. }) => {}
        Err(HubError::Protocol { .. }) => {
            // A client that killed its engine over a protocol breach is replaced.
            if client.new_game().is_err() {
                *slot = None;
            }
        }
        Err(e) => panic!("the relay engine is healthy, yet: {e}"),
    }
    *pending() = None;
});
