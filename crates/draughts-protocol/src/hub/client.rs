//! The GUI side of Hub: run any Hub engine as a child process and ask it for moves.
//!
//! A reader thread turns the engine's output into lines on a channel, so every wait has a
//! deadline. The client tells apart an engine that exits (crash), one that does not answer in
//! time (time-out: the child is killed), one that breaks the protocol, and one that plays an
//! illegal move; each is a [`HubError`] variant.

use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use draughts_core::{Game, Move, MoveText, Position, Rules};

use super::line::{read_line, HubLine, ReadLine, MAX_LINE};

/// Lines read ahead of the client: a flooding engine then waits on its own output (its pipe
/// fills) instead of growing our memory.
const READ_AHEAD: usize = 256;
/// Lines an engine may send for one search without a move: more is a flood, and a loss.
pub const MAX_SEARCH_LINES: usize = 100_000;
/// Warnings kept per engine (the first ones; the rest are counted in the last).
const MAX_WARNINGS: usize = 32;
use crate::searcher::{Info, Param, ParamKind, SearchLimit};

/// Why a Hub engine could not be used.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The engine command line could not be split into words.
    #[error("bad engine command `{command}`: {reason}")]
    BadCommand {
        /// The command line.
        command: String,
        /// What is wrong.
        reason: String,
    },
    /// The engine could not be started.
    #[error("cannot start engine `{command}`: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// The engine exited or closed its output.
    #[error("engine `{engine}` stopped ({status}) while {stage}")]
    Crashed {
        /// The engine command.
        engine: String,
        /// What the client was waiting for.
        stage: String,
        /// The exit status, or why it is unknown.
        status: String,
    },
    /// The engine did not answer in time; it has been killed.
    #[error("engine `{engine}` did not answer within {after:?} while {stage}{}; it was killed",
        last_error.as_ref().map(|e| format!(" (its last error: {e})")).unwrap_or_default())]
    Timeout {
        /// The engine command.
        engine: String,
        /// What the client was waiting for.
        stage: String,
        /// The time-out.
        after: Duration,
        /// The last `error message=` the engine sent while the client waited, if any.
        last_error: Option<String>,
    },
    /// The engine sent something that breaks the protocol.
    #[error("engine `{engine}` broke the protocol while {stage}: {reason} (line `{line}`)")]
    Protocol {
        /// The engine command.
        engine: String,
        /// What the client was waiting for.
        stage: String,
        /// The offending line.
        line: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The engine's move is not legal (or not a move at all).
    #[error("engine `{engine}` played `{text}`, which is not a legal move in {fen}: {reason}")]
    IllegalMove {
        /// The engine command.
        engine: String,
        /// The move as the engine wrote it.
        text: String,
        /// The position, as FEN.
        fen: String,
        /// Why it is not legal.
        reason: String,
    },
    /// A parameter the engine does not announce.
    #[error("engine `{engine}` has no parameter `{name}` (it has: {known})")]
    UnknownParam {
        /// The engine command.
        engine: String,
        /// The parameter asked for.
        name: String,
        /// The parameters it announces, space separated.
        known: String,
    },
    /// An earlier failure killed the engine; start a new client.
    #[error("engine `{engine}` is no longer running after an earlier failure")]
    Dead {
        /// The engine command.
        engine: String,
    },
    /// The game is over: there is nothing to search.
    #[error("no move to search for: the game is over ({0})")]
    GameOver(String),
}

/// What the client sends as the position of a search.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum History {
    /// The position after the last capture or man move, and the king moves since (what the Hub
    /// GUI sends): enough for the engine to see repetitions, and short.
    #[default]
    SinceIrreversible,
    /// The game's start position and every move since.
    All,
}

/// How to start and talk to an engine.
#[derive(Clone, Debug)]
pub struct HubClientOptions {
    /// `set-param` pairs sent before `init`; each name must be one the engine announces.
    pub params: Vec<(String, String)>,
    /// Time allowed for each of `hub` -> `wait` and `init` -> `ready`.
    pub handshake_timeout: Duration,
    /// Rules the engine's moves are checked under.
    pub rules: Rules,
    /// Which part of the game goes into `pos`.
    pub history: History,
    /// Working directory of the engine (engines often look for their data files there).
    pub cwd: Option<PathBuf>,
    /// Pass the engine's standard error through to ours (otherwise it is discarded).
    pub inherit_stderr: bool,
}

impl Default for HubClientOptions {
    fn default() -> HubClientOptions {
        HubClientOptions {
            params: Vec::new(),
            handshake_timeout: Duration::from_secs(30),
            rules: Rules::FMJD,
            history: History::default(),
            cwd: None,
            inherit_stderr: false,
        }
    }
}

/// The `id` line of an engine.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineId {
    /// `name=`.
    pub name: String,
    /// `version=`.
    pub version: String,
    /// `author=`.
    pub author: String,
    /// `country=`.
    pub country: String,
}

/// The outcome of one search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move, checked legal.
    pub mv: Move,
    /// The `ponder=` move as the engine wrote it (not checked).
    pub ponder: Option<String>,
    /// The last `info` line, read as far as it could be (a `pv` is cut at its first move that
    /// does not resolve).
    pub info: Option<Info>,
    /// `error message=` lines the engine sent during the search.
    pub errors: Vec<String>,
}

enum Event {
    Line(String),
    Bad(String),
    Eof,
}

/// A running Hub engine.
#[derive(Debug)]
pub struct HubClient {
    command: String,
    child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<EventBox>,
    id: EngineId,
    params: Vec<Param>,
    warnings: Vec<String>,
    rules: Rules,
    history: History,
    dead: bool,
}

/// `Event` wrapped so that `HubClient` can derive `Debug` without printing channel contents.
struct EventBox(Event);

impl std::fmt::Debug for EventBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Event")
    }
}

/// Splits a command line into words the way a POSIX shell would for plain words: blanks
/// separate words, `'...'` quotes literally, `"..."` quotes with `\"` and `\\` escapes, and a
/// backslash outside quotes escapes the next character. No variables, globs or pipes.
pub fn split_command(command: &str) -> Result<Vec<String>, HubError> {
    let bad = |reason: &str| HubError::BadCommand {
        command: command.to_owned(),
        reason: reason.to_owned(),
    };
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err(bad("unterminated single quote")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err(bad("unterminated double quote")),
                        },
                        Some(c) => word.push(c),
                        None => return Err(bad("unterminated double quote")),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err(bad("backslash at the end")),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    if words.is_empty() {
        return Err(bad("empty command"));
    }
    Ok(words)
}

impl HubClient {
    /// Starts the engine `command` (split by [`split_command`], so `"scan hub"` runs `scan` with
    /// the argument `hub`) and does the handshake: `hub` .. `wait`, the `set-param`s, `init` ..
    /// `ready`.
    pub fn spawn(command: &str, options: &HubClientOptions) -> Result<HubClient, HubError> {
        let argv = split_command(command)?;
        HubClient::spawn_argv(&argv, options)
    }

    /// [`HubClient::spawn`] with the program and its arguments already split.
    pub fn spawn_argv<A: AsRef<str>>(
        argv: &[A],
        options: &HubClientOptions,
    ) -> Result<HubClient, HubError> {
        let words: Vec<&str> = argv.iter().map(|a| a.as_ref()).collect();
        let command = words.join(" ");
        let Some((program, args)) = words.split_first() else {
            return Err(HubError::BadCommand {
                command,
                reason: "empty command".to_owned(),
            });
        };
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if options.inherit_stderr {
                Stdio::inherit()
            } else {
                Stdio::null()
            });
        if let Some(dir) = &options.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().map_err(|source| HubError::Spawn {
            command: command.clone(),
            source,
        })?;
        // Invariant: both pipes were requested just above.
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::sync_channel(READ_AHEAD);
        thread::Builder::new()
            .name("hub-reader".to_owned())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                loop {
                    let event = match read_line(&mut reader, MAX_LINE) {
                        Ok(ReadLine::Line(l)) => Event::Line(l),
                        Ok(ReadLine::TooLong(n)) => {
                            Event::Bad(format!("a line of {n} bytes (limit {MAX_LINE})"))
                        }
                        Ok(ReadLine::NotUtf8) => Event::Bad("a line that is not UTF-8".to_owned()),
                        Ok(ReadLine::Eof) | Err(_) => Event::Eof,
                    };
                    let eof = matches!(event, Event::Eof);
                    if tx.send(EventBox(event)).is_err() || eof {
                        return;
                    }
                }
            })
            .map_err(|source| HubError::Spawn {
                command: command.clone(),
                source,
            })?;
        let mut client = HubClient {
            command,
            child,
            stdin: Some(stdin),
            events: rx,
            id: EngineId::default(),
            params: Vec::new(),
            warnings: Vec::new(),
            rules: options.rules,
            history: options.history,
            dead: false,
        };
        client.handshake(options)?;
        Ok(client)
    }

    fn handshake(&mut self, options: &HubClientOptions) -> Result<(), HubError> {
        let stage = "starting (hub .. wait)";
        self.send("hub", stage)?;
        let deadline = Instant::now() + options.handshake_timeout;
        loop {
            let text = self.next_line(deadline, options.handshake_timeout, stage, None, false)?;
            let Ok(Some(line)) = HubLine::parse(&text) else {
                self.warn(format!("ignored malformed line `{}`", clip(&text)));
                continue;
            };
            match line.command.as_str() {
                "wait" => break,
                "id" => {
                    let get = |k: &str| line.get(k).unwrap_or_default().to_owned();
                    self.id = EngineId {
                        name: get("name"),
                        version: get("version"),
                        author: get("author"),
                        country: get("country"),
                    };
                }
                "param" => match parse_param(&line) {
                    Some(p) if self.params.len() < 256 => self.params.push(p),
                    Some(_) => self.warn("ignored params beyond 256".to_owned()),
                    None => self.warn(format!("ignored param line without a name: `{}`", clip(&text))),
                },
                "error" => self.warn(clip(line.get("message").unwrap_or(&text)).to_owned()),
                _ => {}
            }
        }
        for (name, value) in &options.params {
            if !self.params.iter().any(|p| p.name == *name) {
                let known: Vec<&str> = self.params.iter().map(|p| p.name.as_str()).collect();
                return Err(HubError::UnknownParam {
                    engine: self.command.clone(),
                    name: name.clone(),
                    known: known.join(" "),
                });
            }
            let l = HubLine::new("set-param")
                .arg("name", name)
                .arg("value", value)
                .to_string();
            self.send(&l, "setting parameters")?;
        }
        let stage = "initialising (init .. ready)";
        self.send("init", stage)?;
        let deadline = Instant::now() + options.handshake_timeout;
        loop {
            let text = self.next_line(deadline, options.handshake_timeout, stage, None, false)?;
            // Lines before `ready` are ignored by the protocol; errors are kept as warnings.
            match HubLine::parse(&text) {
                Ok(Some(line)) if line.command == "ready" => return Ok(()),
                Ok(Some(line)) if line.command == "error" => {
                    self.warn(clip(line.get("message").unwrap_or(&text)).to_owned())
                }
                _ => {}
            }
        }
    }

    /// The engine's `id` line.
    pub fn id(&self) -> &EngineId {
        &self.id
    }

    /// The parameters the engine announced.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// Things the engine said during the handshake that were ignored (errors, malformed lines).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The command the engine was started with.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// The engine's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    fn check_alive(&self) -> Result<(), HubError> {
        if self.dead {
            Err(HubError::Dead {
                engine: self.command.clone(),
            })
        } else {
            Ok(())
        }
    }

    /// Tells the engine that the next search belongs to a new game.
    pub fn new_game(&mut self) -> Result<(), HubError> {
        self.check_alive()?;
        self.send("new-game", "starting a new game")
    }

    /// Sends `ping` and waits for `pong`.
    pub fn ping(&mut self, timeout: Duration) -> Result<(), HubError> {
        self.check_alive()?;
        let stage = "answering ping";
        self.send("ping", stage)?;
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.next_line(deadline, timeout, stage, None, false)?;
            if matches!(HubLine::parse(&text), Ok(Some(l)) if l.command == "pong") {
                return Ok(());
            }
        }
    }

    /// The engine's move in the current position of `game`, checked legal.
    pub fn best_move(
        &mut self,
        game: &Game,
        limit: &SearchLimit,
        timeout: Duration,
    ) -> Result<Move, HubError> {
        self.search(game, limit, timeout).map(|r| r.mv)
    }

    /// Like [`HubClient::best_move`], with the ponder move, the last `info` and any errors.
    pub fn search(
        &mut self,
        game: &Game,
        limit: &SearchLimit,
        timeout: Duration,
    ) -> Result<SearchResult, HubError> {
        self.check_alive()?;
        if let Some(outcome) = game.outcome().filter(|_| game.legal_moves().is_empty()) {
            return Err(HubError::GameOver(outcome.to_string()));
        }
        let stage = "searching (go think .. done)";
        // Anything left over from before (stray output) is not an answer to this search, but a
        // move sent before it was asked for breaks the protocol. A `ping` round trip makes the
        // line between the two exact: whatever comes before the `pong` was sent unasked.
        self.send("ping", stage)?;
        let deadline = Instant::now() + timeout;
        loop {
            let text = self.next_line(deadline, timeout, stage, None, false)?;
            match HubLine::parse(&text) {
                Ok(Some(l)) if l.command == "pong" => break,
                Ok(Some(l)) if l.command == "done" => {
                    self.kill();
                    return Err(HubError::Protocol {
                        engine: self.command.clone(),
                        stage: stage.to_owned(),
                        line: clip(&text).to_owned(),
                        reason: "a move sent before it was asked for".to_owned(),
                    });
                }
                _ => {}
            }
        }
        let (start, moves) = position_and_moves(game, self.history);
        let mut pos = HubLine::new("pos").arg("pos", start.to_hub());
        if !moves.is_empty() {
            let text: Vec<String> = moves.iter().map(|m| m.to_hub()).collect();
            pos = pos.arg("moves", text.join(" "));
        }
        self.send(&pos.to_string(), stage)?;
        self.send(&format!("level {limit}"), stage)?;
        self.send("go think", stage)?;
        let deadline = Instant::now() + timeout;
        let mut errors: Vec<String> = Vec::new();
        let mut info = None;
        let mut lines = 0usize;
        loop {
            let text = self.next_line(deadline, timeout, stage, errors.last().cloned(), true)?;
            lines += 1;
            if lines > MAX_SEARCH_LINES {
                self.kill();
                return Err(HubError::Protocol {
                    engine: self.command.clone(),
                    stage: stage.to_owned(),
                    line: clip(&text).to_owned(),
                    reason: format!("a flood: {MAX_SEARCH_LINES} lines without a move"),
                });
            }
            let Ok(Some(line)) = HubLine::parse(&text) else {
                continue;
            };
            match line.command.as_str() {
                "info" => info = Some(parse_info(&line, game.position(), &self.rules)),
                "error" if errors.len() < MAX_WARNINGS => errors.push(clip(line.get("message").unwrap_or(&text)).to_owned()),
                "done" => {
                    let Some(text) = line.get("move") else {
                        return Err(HubError::Protocol {
                            engine: self.command.clone(),
                            stage: stage.to_owned(),
                            line: text.clone(),
                            reason: "done without move=".to_owned(),
                        });
                    };
                    let mv = MoveText::parse_hub(text)
                        .and_then(|t| t.resolve(game.position(), &self.rules));
                    return match mv {
                        Ok(mv) => Ok(SearchResult {
                            mv,
                            ponder: line.get("ponder").map(str::to_owned),
                            info,
                            errors,
                        }),
                        Err(e) => Err(HubError::IllegalMove {
                            engine: self.command.clone(),
                            text: text.to_owned(),
                            fen: game.position().to_fen(),
                            reason: e.to_string(),
                        }),
                    };
                }
                _ => {}
            }
        }
    }

    /// Sends `quit` and waits briefly for the engine to exit, then kills it.
    pub fn quit(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if !self.dead {
            if let Some(mut stdin) = self.stdin.take() {
                let _ = writeln!(stdin, "quit").and_then(|_| stdin.flush());
            }
            let deadline = Instant::now() + Duration::from_millis(500);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    self.dead = true;
                    return;
                }
                thread::sleep(Duration::from_millis(5));
            }
        }
        self.kill();
    }

    fn kill(&mut self) {
        self.dead = true;
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn send(&mut self, line: &str, stage: &str) -> Result<(), HubError> {
        let ok = match self.stdin.as_mut() {
            Some(stdin) => writeln!(stdin, "{line}")
                .and_then(|_| stdin.flush())
                .is_ok(),
            None => false,
        };
        if ok {
            Ok(())
        } else {
            Err(self.crashed(stage))
        }
    }

    fn crashed(&mut self, stage: &str) -> HubError {
        // The output closed or a write failed: the engine has exited or is about to.
        let deadline = Instant::now() + Duration::from_secs(1);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status.to_string(),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                Ok(None) => break "closed its output but kept running".to_owned(),
                Err(e) => break format!("status unknown: {e}"),
            }
        };
        self.kill();
        HubError::Crashed {
            engine: self.command.clone(),
            stage: stage.to_owned(),
            status,
        }
    }

    /// Keeps a warning, up to [`MAX_WARNINGS`].
    fn warn(&mut self, w: String) {
        match self.warnings.len() {
            n if n < MAX_WARNINGS - 1 => self.warnings.push(w),
            n if n == MAX_WARNINGS - 1 => self.warnings.push("further warnings dropped".to_owned()),
            _ => {}
        }
    }

    /// The next line before `deadline`. A line that is too long or not UTF-8 is a warning,
    /// or with `strict` (during a search, where the engine owes a move) a protocol error.
    fn next_line(
        &mut self,
        deadline: Instant,
        timeout: Duration,
        stage: &str,
        last_error: Option<String>,
        strict: bool,
    ) -> Result<String, HubError> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok(EventBox(Event::Line(l))) => return Ok(l),
                Ok(EventBox(Event::Bad(what))) if strict => {
                    self.kill();
                    return Err(HubError::Protocol {
                        engine: self.command.clone(),
                        stage: stage.to_owned(),
                        line: String::new(),
                        reason: format!("sent {what}"),
                    })
                }
                Ok(EventBox(Event::Bad(what))) => self.warn(format!("ignored {what}")),
                Ok(EventBox(Event::Eof)) | Err(RecvTimeoutError::Disconnected) => {
                    return Err(self.crashed(stage))
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.kill();
                    return Err(HubError::Timeout {
                        engine: self.command.clone(),
                        stage: stage.to_owned(),
                        after: timeout,
                        last_error,
                    });
                }
            }
        }
    }
}

impl Drop for HubClient {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// At most 200 bytes of `text` (on a character boundary), for messages.
fn clip(text: &str) -> &str {
    let mut end = text.len().min(200);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The position and moves to send for `game`.
fn position_and_moves(game: &Game, history: History) -> (Position, Vec<Move>) {
    let moves: Vec<Move> = game.moves().collect();
    let cut = match history {
        History::All => 0,
        History::SinceIrreversible => moves
            .iter()
            .rposition(|m| m.is_irreversible())
            .map_or(0, |i| i + 1),
    };
    let start = if cut == 0 {
        *game.start_position()
    } else {
        game.plies().nth(cut).map_or(*game.position(), |(p, _)| *p)
    };
    (start, moves[cut..].to_vec())
}

fn parse_param(line: &HubLine) -> Option<Param> {
    let name = line.get("name")?.to_owned();
    let value = line.get("value").unwrap_or_default().to_owned();
    let kind = match line.get("type").unwrap_or("string") {
        "bool" => ParamKind::Bool,
        "int" => ParamKind::Int {
            min: line
                .get("min")
                .and_then(|v| v.parse().ok())
                .unwrap_or(i64::MIN),
            max: line
                .get("max")
                .and_then(|v| v.parse().ok())
                .unwrap_or(i64::MAX),
        },
        "real" => ParamKind::Real {
            min: line
                .get("min")
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::MIN),
            max: line
                .get("max")
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::MAX),
        },
        "enum" => ParamKind::Enum {
            values: line
                .get("values")
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect(),
        },
        _ => ParamKind::String,
    };
    Some(Param { name, value, kind })
}

/// Reads an `info` line; fields that are missing or unreadable stay at their defaults.
fn parse_info(line: &HubLine, pos: &Position, rules: &Rules) -> Info {
    let mut info = Info::default();
    if let Some(d) = line.get("depth").and_then(|v| v.parse().ok()) {
        info.depth = d;
    }
    if let Some(s) = line
        .get("score")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite())
    {
        info.score = (s * 100.0).round().clamp(i32::MIN as f64, i32::MAX as f64) as i32;
    }
    if let Some(n) = line.get("nodes").and_then(|v| v.parse().ok()) {
        info.nodes = n;
    }
    if let Some(t) = line.get("time").and_then(|v| v.parse::<f64>().ok()) {
        info.time = Duration::try_from_secs_f64(t).unwrap_or_default();
    }
    if let Some(pv) = line.get("pv") {
        let mut p = *pos;
        for text in pv.split_whitespace() {
            match MoveText::parse_hub(text).and_then(|t| t.resolve(&p, rules)) {
                Ok(mv) => {
                    info.pv.push(mv);
                    p = p.play(&mv);
                }
                Err(_) => break,
            }
        }
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(split_command("scan hub").unwrap(), ["scan", "hub"]);
        assert_eq!(
            split_command("  '/opt/my engine/scan'  \"a b\" c\\ d \"q\\\"x\"").unwrap(),
            ["/opt/my engine/scan", "a b", "c d", "q\"x"]
        );
        assert_eq!(split_command("x ''").unwrap(), ["x", ""]);
        for bad in ["", "   ", "'abc", "\"abc", "abc\\"] {
            assert!(
                matches!(split_command(bad), Err(HubError::BadCommand { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn sends_moves_since_the_last_irreversible_move() {
        let mut g =
            Game::from_position(Position::from_fen("W:WK50,33:BK1,20").unwrap(), Rules::FMJD);
        for t in ["50-44", "1-7", "33-28", "7-1", "44-50", "1-7"] {
            let mv = g.position().parse_pdn_move(t).unwrap();
            g.play(mv).unwrap();
        }
        let (start, moves) = position_and_moves(&g, History::SinceIrreversible);
        assert_eq!(start.to_fen(), "B:W28,K44:BK7,20");
        let text: Vec<String> = moves.iter().map(|m| m.to_hub()).collect();
        assert_eq!(text, ["7-1", "44-50", "1-7"]);
        let (start, moves) = position_and_moves(&g, History::All);
        assert_eq!(start, *g.start_position());
        assert_eq!(moves.len(), 6);
        // Replaying what is sent gives the current position.
        let (start, moves) = position_and_moves(&g, History::SinceIrreversible);
        let end = moves.iter().fold(start, |p, m| p.play(m));
        assert_eq!(end, *g.position());
    }

    #[test]
    fn reads_info_and_params() {
        let l = HubLine::parse(
            "info depth=12 score=-0.35 nodes=1000 time=0.5 pv=\"32-28 19-23 28x19x23 zz\"",
        )
        .unwrap()
        .unwrap();
        let info = parse_info(&l, &Position::start(), &Rules::FMJD);
        assert_eq!((info.depth, info.score, info.nodes), (12, -35, 1000));
        assert_eq!(info.time, Duration::from_millis(500));
        assert_eq!(info.pv.len(), 3);
        let l = HubLine::parse("param name=tt-size value=24 type=int min=16 max=30")
            .unwrap()
            .unwrap();
        let p = parse_param(&l).unwrap();
        assert_eq!(p.kind, ParamKind::Int { min: 16, max: 30 });
        let l = HubLine::parse("param name=variant value=normal type=enum values=\"normal bt\"")
            .unwrap()
            .unwrap();
        assert_eq!(
            parse_param(&l).unwrap().kind,
            ParamKind::Enum {
                values: vec!["normal".into(), "bt".into()]
            }
        );
    }
}
