//! The engine side of Hub: reads GUI commands, runs a [`Searcher`], writes answers.
//!
//! The search runs on its own thread so that `ping`, `ponder-hit` and `stop` are answered while
//! it thinks. A watchdog thread enforces `move-time` and, after `ponder-hit`, the time budget.
//!
//! This side is stricter than Scan: every line it cannot act on gets an
//! `error message="..."` answer that names the problem (an unknown command, a malformed line, a
//! bad position, an illegal move in `moves=`, `set-param` after `init`, `go` without a `pos`, a
//! line over [`MAX_LINE`] bytes), and the engine keeps running. Unknown *arguments* of known
//! commands are still ignored, as the protocol's extension rule asks.

use std::io::{self, BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use draughts_core::{Game, Move, MoveText, Position, Rules};

use super::line::{quote, read_line, HubLine, ReadLine, MAX_LINE};
use crate::searcher::{Clock, Info, SearchLimit, Searcher};

/// What the engine says about itself and how it treats a missing `level`.
#[derive(Clone, Debug)]
pub struct HubConfig {
    /// `version=` of the `id` line.
    pub version: String,
    /// `author=` of the `id` line (omitted when empty).
    pub author: String,
    /// `country=` of the `id` line (omitted when empty).
    pub country: String,
    /// The limit of a search for which no `level` was sent since the last `pos`.
    pub default_limit: SearchLimit,
    /// The rules `moves=` are checked under and the searcher plays under.
    pub rules: Rules,
}

impl Default for HubConfig {
    fn default() -> HubConfig {
        HubConfig {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            author: String::new(),
            country: String::new(),
            default_limit: SearchLimit::move_time(Duration::from_secs(1)),
            rules: Rules::FMJD,
        }
    }
}

/// Runs a Hub engine on `input` and `output` with the default [`HubConfig`] until `quit` or the
/// end of `input`. Returns an error only when reading `input` or writing `output` fails.
///
/// Stricter than Scan: unknown commands and malformed lines are answered with
/// `error message="..."` (Scan ignores what it does not know); see the module documentation.
pub fn run_hub<S, R, W>(searcher: &mut S, input: R, output: W) -> io::Result<()>
where
    S: Searcher + Send + ?Sized,
    R: BufRead,
    W: Write + Send,
{
    run_hub_with(searcher, input, output, &HubConfig::default())
}

/// [`run_hub`] with an explicit configuration.
pub fn run_hub_with<S, R, W>(
    searcher: &mut S,
    mut input: R,
    output: W,
    config: &HubConfig,
) -> io::Result<()>
where
    S: Searcher + Send + ?Sized,
    R: BufRead,
    W: Write + Send,
{
    let out = Mutex::new(output);
    thread::scope(|scope| {
        let mut engine = Engine {
            scope,
            out: &out,
            config,
            searcher: Some(searcher),
            running: None,
            initialised: false,
            game: None,
            limit: config.default_limit.clone(),
        };
        let result = engine.main_loop(&mut input);
        // Whatever ended the loop, a search still running is stopped and joined.
        engine.finish_search();
        result
    })
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks leaves nothing half-updated that matters here.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn emit<W: Write>(out: &Mutex<W>, line: &str) -> io::Result<()> {
    let mut w = lock(out);
    writeln!(w, "{line}")?;
    w.flush()
}

fn error_line(message: &str) -> String {
    format!("error message={}", quote(message))
}

/// The `info` line for one progress report.
pub fn info_line(info: &Info) -> String {
    let mut line = format!("info depth={}", info.depth);
    let abs = info.score.unsigned_abs();
    let sign = if info.score < 0 { "-" } else { "" };
    line.push_str(&format!(" score={sign}{}.{:02}", abs / 100, abs % 100));
    line.push_str(&format!(" nodes={}", info.nodes));
    let secs = info.time.as_secs_f64();
    line.push_str(&format!(" time={secs:.3}"));
    if info.time >= Duration::from_millis(1) {
        line.push_str(&format!(" nps={:.3}", info.nodes as f64 / secs / 1e6));
    }
    if !info.pv.is_empty() {
        let pv: Vec<String> = info.pv.iter().map(|m| m.to_hub()).collect();
        line.push_str(&format!(" pv={}", quote(&pv.join(" "))));
    }
    line
}

/// How a `go` asked to search.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Mode {
    Think,
    Ponder,
    Analyze,
}

/// State shared by the main loop, the search thread and the watchdog of one search.
#[derive(Debug)]
struct Shared {
    stop: AtomicBool,
    ctl: Mutex<Ctl>,
    cv: Condvar,
}

#[derive(Debug)]
struct Ctl {
    /// Pondering and no `ponder-hit` yet: a finished search holds its `done`.
    pondering: bool,
    /// `stop` (or `quit`) arrived.
    stop_requested: bool,
    /// When the watchdog sets `stop`.
    deadline: Option<Instant>,
    /// How long the search may go on after `ponder-hit`.
    budget_after_hit: Option<Duration>,
    /// `done` has been written.
    finished: bool,
}

struct Running<'scope, S: ?Sized> {
    shared: Arc<Shared>,
    search: ScopedJoinHandle<'scope, &'scope mut S>,
    watchdog: ScopedJoinHandle<'scope, ()>,
}

struct Engine<'scope, 'env, S: ?Sized, W> {
    scope: &'scope Scope<'scope, 'env>,
    out: &'env Mutex<W>,
    config: &'env HubConfig,
    /// The searcher, while no search holds it.
    searcher: Option<&'scope mut S>,
    running: Option<Running<'scope, S>>,
    initialised: bool,
    /// The position set by the last `pos`, consumed by `go`.
    game: Option<Game>,
    limit: SearchLimit,
}

/// What to do after a command.
enum Flow {
    Continue,
    Quit,
}

impl<'scope, 'env, S, W> Engine<'scope, 'env, S, W>
where
    S: Searcher + Send + ?Sized,
    W: Write + Send,
    'env: 'scope,
{
    fn say(&self, line: &str) -> io::Result<()> {
        emit(self.out, line)
    }

    fn error(&self, message: &str) -> io::Result<()> {
        self.say(&error_line(message))
    }

    fn main_loop<R: BufRead>(&mut self, input: &mut R) -> io::Result<()> {
        loop {
            let text = match read_line(input, MAX_LINE)? {
                ReadLine::Eof => return Ok(()),
                ReadLine::TooLong(n) => {
                    self.error(&format!(
                        "line too long: {n} bytes, the limit is {MAX_LINE}"
                    ))?;
                    continue;
                }
                ReadLine::NotUtf8 => {
                    self.error("line is not UTF-8 text")?;
                    continue;
                }
                ReadLine::Line(text) => text,
            };
            let line = match HubLine::parse(&text) {
                Ok(Some(line)) => line,
                Ok(None) => continue,
                Err(e) => {
                    self.error(&format!("malformed line: {e}"))?;
                    continue;
                }
            };
            if let Flow::Quit = self.command(&line)? {
                return Ok(());
            }
        }
    }

    /// Joins the search if it has written `done`; returns whether a search is still running.
    fn searching(&mut self) -> bool {
        let Some(run) = &self.running else {
            return false;
        };
        if !lock(&run.shared.ctl).finished {
            return true;
        }
        self.join();
        false
    }

    fn join(&mut self) {
        if let Some(run) = self.running.take() {
            let searcher = run
                .search
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            run.watchdog
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p));
            self.searcher = Some(searcher);
        }
    }

    fn request_stop(&self) {
        if let Some(run) = &self.running {
            let mut ctl = lock(&run.shared.ctl);
            ctl.stop_requested = true;
            ctl.pondering = false;
            run.shared.stop.store(true, Ordering::Relaxed);
            run.shared.cv.notify_all();
        }
    }

    fn finish_search(&mut self) {
        self.request_stop();
        self.join();
    }

    fn command(&mut self, line: &HubLine) -> io::Result<Flow> {
        let cmd = line.command.as_str();
        if self.searching() {
            match cmd {
                "ping" => self.say("pong")?,
                "stop" => self.request_stop(),
                "ponder-hit" => self.ponder_hit(),
                "quit" => return Ok(Flow::Quit),
                _ => self.error(&format!(
                    "`{cmd}` during a search: only ping, ponder-hit, stop and quit are accepted until done"
                ))?,
            }
            return Ok(Flow::Continue);
        }
        match cmd {
            "hub" => self.hub()?,
            "set-param" => self.set_param(line)?,
            "init" => self.init()?,
            "new-game" => {
                if let Some(s) = self.searcher.as_mut() {
                    s.new_game();
                }
            }
            "pos" => self.pos(line)?,
            "level" => self.level(line)?,
            "go" => self.go(line)?,
            "ping" => self.say("pong")?,
            // Late `stop` or `ponder-hit` after the search ended by itself: nothing to do.
            "stop" | "ponder-hit" => {}
            "quit" => return Ok(Flow::Quit),
            _ => self.error(&format!("unknown command `{cmd}`"))?,
        }
        Ok(Flow::Continue)
    }

    fn searcher(&mut self) -> &mut S {
        // Invariant: outside a search (checked by the caller) the searcher is home.
        self.searcher
            .as_mut()
            .expect("searcher is home when no search runs")
    }

    fn hub(&mut self) -> io::Result<()> {
        let mut id = HubLine::new("id")
            .arg("name", self.searcher().name())
            .arg("version", &self.config.version);
        if !self.config.author.is_empty() {
            id = id.arg("author", &self.config.author);
        }
        if !self.config.country.is_empty() {
            id = id.arg("country", &self.config.country);
        }
        self.say(&id.to_string())?;
        for p in self.searcher().params() {
            let mut l = HubLine::new("param")
                .arg("name", &p.name)
                .arg("value", &p.value)
                .arg("type", p.kind.type_name());
            match &p.kind {
                crate::ParamKind::Int { min, max } => l = l.arg("min", min).arg("max", max),
                crate::ParamKind::Real { min, max } => l = l.arg("min", min).arg("max", max),
                crate::ParamKind::Enum { values } => l = l.arg("values", values.join(" ")),
                crate::ParamKind::Bool | crate::ParamKind::String => {}
            }
            self.say(&l.to_string())?;
        }
        self.say("wait")
    }

    fn set_param(&mut self, line: &HubLine) -> io::Result<()> {
        if self.initialised {
            return self.error(
                "set-param after init: parameters are fixed once the engine is initialised",
            );
        }
        let (Some(name), Some(value)) = (line.get("name"), line.get("value")) else {
            return self.error("set-param needs name=NAME and value=VALUE");
        };
        let params = self.searcher().params();
        let Some(param) = params.iter().find(|p| p.name == name) else {
            let known: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            return self.error(&format!(
                "set-param: unknown parameter `{name}` (known: {})",
                known.join(" ")
            ));
        };
        if let Err(e) = param.kind.check(value) {
            return self.error(&format!("set-param {name}: {e}"));
        }
        if let Err(e) = self.searcher().set_param(name, value) {
            return self.error(&format!("set-param {name}: {e}"));
        }
        Ok(())
    }

    fn init(&mut self) -> io::Result<()> {
        if self.initialised {
            return self.error("init: already initialised");
        }
        match self.searcher().init() {
            Ok(()) => {
                self.initialised = true;
                self.say("ready")
            }
            Err(e) => self.error(&format!("init failed: {e}")),
        }
    }

    fn pos(&mut self, line: &HubLine) -> io::Result<()> {
        // A bad `pos` leaves no position, so a following `go` is refused rather than searching
        // a position the GUI did not mean.
        self.game = None;
        self.limit = self.config.default_limit.clone();
        // Hub 1 wrote the position as a bare 51-character word.
        let bare = line
            .args
            .iter()
            .find(|(a, v)| v.is_none() && a.chars().count() == 51)
            .map(|(a, _)| a.as_str());
        let text = match (line.get("pos"), line.has("start"), bare) {
            (Some(_), true, _) => return self.error("pos: both start and pos= given"),
            (None, true, _) | (None, false, None) => None,
            (Some(p), false, _) => Some(p),
            (None, false, Some(p)) => Some(p),
        };
        let start = match text {
            None => Position::start(),
            Some(t) => match Position::from_hub(t) {
                Ok(p) => p,
                Err(e) => return self.error(&format!("pos: bad position: {}", e.kind)),
            },
        };
        let rules = self.config.rules;
        let mut game = Game::from_position(start, rules);
        if let Some(moves) = line.get("moves") {
            for (i, text) in moves.split_whitespace().enumerate() {
                let mv = MoveText::parse_hub(text).and_then(|t| t.resolve(game.position(), &rules));
                match mv {
                    Ok(mv) => game.play_unchecked(mv),
                    Err(e) => return self.error(&format!("pos: move {} of moves=: {e}", i + 1)),
                }
            }
        }
        self.game = Some(game);
        Ok(())
    }

    fn level(&mut self, line: &HubLine) -> io::Result<()> {
        match parse_level(line) {
            Ok(limit) => {
                self.limit = limit;
                Ok(())
            }
            Err(e) => self.error(&format!("level: {e}")),
        }
    }

    fn ponder_hit(&self) {
        if let Some(run) = &self.running {
            let mut ctl = lock(&run.shared.ctl);
            if ctl.pondering {
                ctl.pondering = false;
                ctl.deadline = ctl.budget_after_hit.map(|b| Instant::now() + b);
                run.shared.cv.notify_all();
            }
        }
    }

    fn go(&mut self, line: &HubLine) -> io::Result<()> {
        let mode = if line.has("ponder") {
            Mode::Ponder
        } else if line.has("analyze") {
            Mode::Analyze
        } else {
            Mode::Think
        };
        if !self.initialised {
            return self.error("go before init");
        }
        let Some(game) = self.game.take() else {
            return self.error("go without pos: send pos (and level) before every search");
        };
        if game.legal_moves().is_empty() {
            return self.error("go: no legal move in this position, the game is over");
        }
        let limit = std::mem::replace(&mut self.limit, self.config.default_limit.clone());
        let now = Instant::now();
        let (search_limit, deadline, budget_after_hit) = match mode {
            Mode::Ponder => (limit.without_time(), None, limit.time_budget()),
            Mode::Think | Mode::Analyze => (limit.clone(), limit.move_time.map(|t| now + t), None),
        };
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            ctl: Mutex::new(Ctl {
                pondering: mode == Mode::Ponder,
                stop_requested: false,
                deadline,
                budget_after_hit,
                finished: false,
            }),
            cv: Condvar::new(),
        });
        let searcher = self
            .searcher
            .take()
            .expect("searcher is home when no search runs");
        let out = self.out;
        let sh = Arc::clone(&shared);
        let search = self.scope.spawn(move || {
            search_thread(searcher, &game, &search_limit, &sh, out);
            searcher
        });
        let sh = Arc::clone(&shared);
        let watchdog = self.scope.spawn(move || watchdog_thread(&sh));
        self.running = Some(Running {
            shared,
            search,
            watchdog,
        });
        Ok(())
    }
}

/// Runs one search and writes its `done` line (after `ponder-hit` or `stop` when pondering).
fn search_thread<S, W>(
    searcher: &mut S,
    game: &Game,
    limit: &SearchLimit,
    shared: &Shared,
    out: &Mutex<W>,
) where
    S: Searcher + ?Sized,
    W: Write,
{
    let mut last_pv: Vec<Move> = Vec::new();
    let best = searcher.think(game, limit, &shared.stop, &mut |info: &Info| {
        last_pv.clone_from(&info.pv);
        // A failed write means the GUI is gone; the main loop notices at its next read.
        let _ = emit(out, &info_line(info));
    });
    let legal = game.legal_moves();
    let (mv, complaint) = match best {
        Some(m) if legal.contains(&m) => (Some(m), None),
        Some(m) => (
            legal.first().copied(),
            Some(format!("searcher chose illegal move {}", m.to_hub())),
        ),
        None => (
            legal.first().copied(),
            Some("searcher returned no move".to_owned()),
        ),
    };
    let mut done = String::from("done");
    if let Some(mv) = mv {
        done.push_str(&format!(" move={}", mv.to_hub()));
        if last_pv.len() >= 2 && last_pv[0] == mv {
            let after = game.position().play(&mv);
            if after.legal_moves_with(game.rules()).contains(&last_pv[1]) {
                done.push_str(&format!(" ponder={}", last_pv[1].to_hub()));
            }
        }
    }
    let mut ctl = lock(&shared.ctl);
    while ctl.pondering && !ctl.stop_requested {
        ctl = shared.cv.wait(ctl).unwrap_or_else(|p| p.into_inner());
    }
    // Write while holding the lock: once the GUI can see `done`, the main loop sees `finished`.
    if let Some(c) = complaint {
        let _ = emit(
            out,
            &error_line(&format!("{c}; playing the first legal move")),
        );
    }
    let _ = emit(out, &done);
    ctl.finished = true;
    shared.cv.notify_all();
}

/// Sets `stop` when the deadline passes; returns once the search has finished.
fn watchdog_thread(shared: &Shared) {
    let mut ctl = lock(&shared.ctl);
    loop {
        if ctl.finished {
            return;
        }
        match ctl.deadline {
            Some(d) => {
                let now = Instant::now();
                if now >= d {
                    shared.stop.store(true, Ordering::Relaxed);
                    ctl.deadline = None;
                } else {
                    ctl = shared
                        .cv
                        .wait_timeout(ctl, d - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            }
            None => ctl = shared.cv.wait(ctl).unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// The longest time a `level` may name (a year), so that durations cannot overflow.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

fn parse_seconds(name: &str, text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=MAX_SECONDS).contains(&s) => {
            Ok(Duration::from_secs_f64(s))
        }
        _ => Err(format!(
            "{name}=`{text}` is not a number of seconds between 0 and {MAX_SECONDS}"
        )),
    }
}

fn parse_count<T: std::str::FromStr>(name: &str, text: &str) -> Result<T, String> {
    text.parse::<T>()
        .map_err(|_| format!("{name}=`{text}` is not a non-negative integer"))
}

/// Reads the arguments of a `level` line into a [`SearchLimit`].
pub fn parse_level(line: &HubLine) -> Result<SearchLimit, String> {
    let value = |name: &str| -> Result<Option<&str>, String> {
        match line.args.iter().find(|(a, _)| a == name) {
            None => Ok(None),
            Some((_, Some(v))) => Ok(Some(v.as_str())),
            Some((_, None)) => Err(format!("{name} needs a value ({name}=...)")),
        }
    };
    let mut limit = SearchLimit::default();
    if let Some(v) = value("depth")? {
        limit.depth = Some(parse_count("depth", v)?);
    }
    if let Some(v) = value("nodes")? {
        limit.nodes = Some(parse_count("nodes", v)?);
    }
    if let Some(v) = value("move-time")? {
        limit.move_time = Some(parse_seconds("move-time", v)?);
    }
    let time = value("time")?
        .map(|v| parse_seconds("time", v))
        .transpose()?;
    let inc = value("inc")?.map(|v| parse_seconds("inc", v)).transpose()?;
    let moves = value("moves")?
        .map(|v| parse_count::<u32>("moves", v))
        .transpose()?;
    match (time, inc, moves) {
        (None, None, None) => {}
        (None, _, _) => return Err("moves= and inc= need time=".to_owned()),
        (Some(time), inc, moves) => {
            limit.clock = Some(Clock {
                time,
                inc: inc.unwrap_or(Duration::ZERO),
                moves: moves.filter(|&m| m > 0),
            })
        }
    }
    let infinite = line.has("infinite");
    if infinite && !limit.is_infinite() {
        return Err("infinite with another limit".to_owned());
    }
    if !infinite && limit.is_infinite() {
        return Err(
            "expected depth=N, nodes=N, move-time=S, [moves=N] time=S [inc=S] or infinite"
                .to_owned(),
        );
    }
    Ok(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn level(text: &str) -> Result<SearchLimit, String> {
        parse_level(&HubLine::parse(text).unwrap().unwrap())
    }

    #[test]
    fn level_forms() {
        assert_eq!(level("level depth=5"), Ok(SearchLimit::depth(5)));
        assert_eq!(level("level nodes=1000"), Ok(SearchLimit::nodes(1000)));
        assert_eq!(
            level("level move-time=0.5"),
            Ok(SearchLimit::move_time(Duration::from_millis(500)))
        );
        assert_eq!(level("level infinite"), Ok(SearchLimit::infinite()));
        let c = Clock {
            time: Duration::from_secs(60),
            inc: Duration::from_secs(1),
            moves: Some(40),
        };
        assert_eq!(
            level("level moves=40 time=60 inc=1"),
            Ok(SearchLimit::clock(c))
        );
        let c = Clock {
            time: Duration::from_secs(60),
            inc: Duration::ZERO,
            moves: None,
        };
        assert_eq!(level("level time=60 moves=0"), Ok(SearchLimit::clock(c)));
        // Limits combine; unknown arguments are ignored.
        let l = level("level depth=3 move-time=2 ponder").unwrap();
        assert_eq!(
            (l.depth, l.move_time),
            (Some(3), Some(Duration::from_secs(2)))
        );
        for bad in [
            "level",
            "level depth=-1",
            "level depth=x",
            "level move-time=-1",
            "level move-time=nan",
            "level time=1e300",
            "level inc=1",
            "level depth",
            "level infinite depth=3",
        ] {
            assert!(level(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn info_text() {
        let mv = Position::start().parse_hub_move("32-28").unwrap();
        let info = Info {
            depth: 7,
            score: -150,
            nodes: 2_000_000,
            time: Duration::from_secs(2),
            pv: vec![mv],
        };
        assert_eq!(
            info_line(&info),
            "info depth=7 score=-1.50 nodes=2000000 time=2.000 nps=1.000 pv=32-28"
        );
        let info = Info {
            depth: 1,
            score: 5,
            nodes: 9,
            time: Duration::ZERO,
            pv: vec![],
        };
        assert_eq!(
            info_line(&info),
            "info depth=1 score=0.05 nodes=9 time=0.000"
        );
    }
}
