//! The JSON API of `draughts serve`, as a function from a request to a response (the HTTP
//! server around it is `super::run`), so that tests call it directly.
//!
//! The server keeps no games: a request carries the start position and the moves played since
//! (PDN move text), the server replays them with the rules core (so an illegal move is refused
//! and the draw rules see the whole history) and answers for the position they reach. Memory per
//! request is bounded by the body size limit and the level's hash table.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use draughts_core::{Game, Move, MoveText, Position, Rules};
use draughts_engine::{mate_distance, Clock, Endgames, Engine, EngineConfig, Limits, SearchOptions};
use draughts_nnue::Network;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::levels::LevelSpec;

/// The largest request body (bytes).
pub const MAX_BODY: usize = 64 * 1024;
/// The most moves a request may replay.
pub const MAX_MOVES: usize = 2_000;
/// Networks of a run's checkpoints kept loaded at once.
const MAX_CACHED_NETS: usize = 8;
/// The longest analysis (`POST /api/analyse`), and its length when the request names none.
pub const MAX_ANALYSIS_MS: u64 = 60_000;
/// The transposition table of an analysis (MiB).
const ANALYSIS_HASH_MIB: usize = 64;

/// An HTTP answer.
#[derive(Debug, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Reply {
    fn json(status: u16, value: &Value) -> Reply {
        Reply { status, content_type: "application/json", body: serde_json::to_vec(value).unwrap_or_default() }
    }

    pub fn error(status: u16, message: impl Into<String>) -> Reply {
        Reply::json(status, &json!({ "error": message.into() }))
    }

    fn page(html: &'static str) -> Reply {
        Reply { status: 200, content_type: "text/html; charset=utf-8", body: html.as_bytes().to_vec() }
    }
}

/// What the server serves.
#[derive(Debug)]
pub struct Service {
    levels: Vec<LevelSpec>,
    /// The served model (the evaluation of the `network` levels).
    model: Option<Arc<Network>>,
    /// A training run whose progress and checkpoints are shown.
    run: Option<PathBuf>,
    nets: Mutex<HashMap<PathBuf, Arc<Network>>>,
    /// Endgame tables for the levels that probe them.
    egtb: Option<Endgames>,
    /// The HTTP layer's bounds, shown in `/api/info` (none when the service is called directly).
    policy: Option<super::http::Policy>,
    /// Searches (moves and analyses) running now.
    running: AtomicUsize,
}

/// Counts a search as running while it lives.
struct Running<'a>(&'a AtomicUsize);

impl<'a> Running<'a> {
    fn new(n: &'a AtomicUsize) -> Running<'a> {
        n.fetch_add(1, Ordering::Relaxed);
        Running(n)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A position and the moves played from it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GameRequest {
    fen: Option<String>,
    rules: Option<String>,
    #[serde(default)]
    moves: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MoveRequest {
    fen: Option<String>,
    rules: Option<String>,
    #[serde(default)]
    moves: Vec<String>,
    level: String,
    /// Play with this checkpoint of the run as the evaluation.
    checkpoint: Option<String>,
    /// Shorter than the level's time per move.
    movetime_ms: Option<u64>,
    /// A clock game: the time left on the engine's clock, in milliseconds; the engine manages
    /// it (the level's time per move still caps each move).
    time_ms: Option<u64>,
    /// The clock's increment per move, in milliseconds (with `time_ms`).
    inc_ms: Option<u64>,
    /// Seed of the level's random choices (default: a fresh random one, sent back in the reply,
    /// so a person who repeats their moves does not get the same game again).
    seed: Option<u64>,
    /// Send the principal variation and search figures.
    #[serde(default)]
    analysis: bool,
}

/// A position to analyse.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalyseRequest {
    fen: Option<String>,
    rules: Option<String>,
    #[serde(default)]
    moves: Vec<String>,
    /// The most time the analysis runs (default and cap: [`MAX_ANALYSIS_MS`]).
    movetime_ms: Option<u64>,
    /// Analyse with this checkpoint of the run as the evaluation.
    checkpoint: Option<String>,
}

/// One server-sent event: its name and its data (one line of JSON).
pub fn sse(name: &str, data: &Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

/// One move, for the page and for sites.
#[derive(Debug, Serialize)]
struct MoveJson {
    pdn: String,
    hub: String,
    from: u8,
    to: u8,
    captured: Vec<u8>,
    /// Every landing square, `from` to `to`.
    path: Vec<u8>,
}

fn move_json(pos: &Position, mv: &Move, rules: &Rules) -> MoveJson {
    let path = pos.landing_paths(mv, rules).into_iter().next().unwrap_or_else(|| vec![mv.from(), mv.to()]);
    MoveJson {
        pdn: pos.to_pdn(mv, rules),
        hub: mv.to_hub(),
        from: mv.from().number(),
        to: mv.to().number(),
        captured: mv.captured().squares().map(|s| s.number()).collect(),
        path: path.iter().map(|s| s.number()).collect(),
    }
}

fn squares(b: draughts_core::Bitboard) -> Vec<u8> {
    b.squares().map(|s| s.number()).collect()
}

fn bad(msg: impl Into<String>) -> Reply {
    Reply::error(400, msg)
}

impl Service {
    pub fn new(levels: Vec<LevelSpec>, model: Option<Arc<Network>>, run: Option<PathBuf>) -> Service {
        Service { levels, model, run, nets: Mutex::new(HashMap::new()), egtb: None, policy: None, running: AtomicUsize::new(0) }
    }

    /// The same service with endgame tables for the levels with `egtb = true`.
    pub fn with_egtb(mut self, egtb: Option<Endgames>) -> Service {
        self.egtb = egtb;
        self
    }

    /// The same service, telling clients the HTTP layer's bounds.
    pub fn with_policy(mut self, policy: super::http::Policy) -> Service {
        self.policy = Some(policy);
        self
    }

    fn egtb_for(&self, level: &LevelSpec) -> Option<&Endgames> {
        self.egtb.as_ref().filter(|_| level.egtb)
    }

    pub fn levels(&self) -> &[LevelSpec] {
        &self.levels
    }

    /// Answers one request. `body` is at most [`MAX_BODY`] bytes (the server refuses longer ones).
    pub fn handle(&self, method: &str, url: &str, body: &[u8]) -> Reply {
        self.handle_until(method, url, body, &AtomicBool::new(false))
    }

    /// [`Service::handle`] with a stop flag: a search the request started ends soon after the
    /// flag is raised (the HTTP layer raises it when the client goes away), and answers its
    /// best move so far. An analysis comes back whole, as its event stream.
    pub fn handle_until(&self, method: &str, url: &str, body: &[u8], stop: &AtomicBool) -> Reply {
        // The query (`/?checkpoint=NAME`) is the page's business.
        let path = url.split_once('?').map_or(url, |(p, _)| p);
        match (method, path) {
            ("GET", "/") | ("GET", "/index.html") => Reply::page(super::PAGE),
            ("GET", "/run") => match &self.run {
                Some(_) => Reply::page(super::RUN_PAGE),
                None => Reply::error(404, "no training run is served (start the server with --run DIR)"),
            },
            ("GET", "/api/info") => Reply::json(200, &self.info()),
            ("GET", "/api/openapi.json") => Reply { status: 200, content_type: "application/json", body: super::OPENAPI.as_bytes().to_vec() },
            ("GET", "/api/run") => self.run_json(),
            ("POST", "/api/state") => match parse::<GameRequest>(body) {
                Ok(r) => match replay(r.fen.as_deref(), r.rules.as_deref(), &r.moves) {
                    Ok(game) => Reply::json(200, &state_json(&game)),
                    Err(e) => e,
                },
                Err(e) => e,
            },
            ("POST", "/api/move") => match parse::<MoveRequest>(body) {
                Ok(r) => {
                    let _running = Running::new(&self.running);
                    self.engine_move(&r, stop)
                }
                Err(e) => e,
            },
            ("POST", "/api/analyse") => {
                let mut text = String::new();
                match self.analyse(body, stop, &mut |name, data| {
                    text += &sse(name, &data);
                    true
                }) {
                    Ok(()) => Reply { status: 200, content_type: "text/event-stream", body: text.into_bytes() },
                    Err(e) => e,
                }
            }
            (_, "/" | "/run" | "/api/info" | "/api/openapi.json" | "/api/run" | "/api/state" | "/api/move" | "/api/analyse") => {
                Reply::error(405, format!("{method} is not allowed on {path}"))
            }
            _ => Reply::error(404, format!("no such page: {path}")),
        }
    }

    fn info(&self) -> Value {
        json!({
            "version": env!("CARGO_PKG_VERSION"),
            "levels": self.levels.iter().map(|l| json!({
                "name": l.name,
                "description": l.description,
                "player": l.summary(self.network_for(l).map(|n| n.model_id())),
                "network": self.network_for(l).map(|n| n.model_id()),
                "egtb_pieces": self.egtb_for(l).map(|e| e.pieces()),
                "rating": l.rating_for(self.network_for(l).map(|n| n.model_id())),
            })).collect::<Vec<_>>(),
            "rules": Rules::PRESETS.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
            "model": self.model.as_ref().map(|m| m.model_id().to_owned()),
            "run": self.run.as_ref().map(|r| r.display().to_string()),
            "start_fen": Position::start().to_fen(),
            "searches_running": self.running.load(Ordering::Relaxed),
            "analysis": {
                "network": self.model.as_ref().map(|m| m.model_id().to_owned()),
                "egtb_pieces": self.egtb.as_ref().map(|e| e.pieces()),
            },
            "limits": {
                "max_body_bytes": MAX_BODY,
                "max_moves": MAX_MOVES,
                "max_analysis_ms": MAX_ANALYSIS_MS,
                "server": self.policy,
            },
        })
    }

    fn network_for(&self, level: &LevelSpec) -> Option<&Arc<Network>> {
        if level.network {
            self.model.as_ref()
        } else {
            None
        }
    }

    fn run_json(&self) -> Reply {
        let Some(run) = &self.run else {
            return Reply::error(404, "no training run is served (start the server with --run DIR)");
        };
        // A line being written may be cut short: skip what does not parse.
        let metrics: Vec<Value> = std::fs::read_to_string(run.join("metrics.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let checkpoints: Vec<Value> = crate::models::checkpoints_in(&run.join("checkpoints"))
            .into_iter()
            .map(|(step, _, meta)| json!({ "name": meta.model_id, "step": step, "kind": format!("{:?}", meta.architecture.kind).to_lowercase() }))
            .collect();
        Reply::json(200, &json!({ "run": run.display().to_string(), "metrics": metrics, "checkpoints": checkpoints }))
    }

    /// The network of the run's checkpoint `name` (loaded once, a few kept).
    fn checkpoint_net(&self, name: &str) -> Result<Arc<Network>, Reply> {
        let Some(run) = &self.run else {
            return Err(bad("`checkpoint` needs a training run (start the server with --run DIR)"));
        };
        let found = crate::models::checkpoints_in(&run.join("checkpoints")).into_iter().find(|(_, _, m)| m.model_id == name);
        let Some((_, path, meta)) = found else {
            return Err(bad(format!("no checkpoint `{name}` in {}", run.display())));
        };
        if meta.architecture.kind != draughts_model::NetKind::Sparse {
            return Err(bad(format!("checkpoint `{name}` is a ResNet; the server plays sparse networks (inside alpha-beta)")));
        }
        let mut nets = self.nets.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = nets.get(&path) {
            return Ok(n.clone());
        }
        let net = draughts_arena::adapters::load_network(&path).map_err(|e| Reply::error(500, format!("checkpoint `{name}`: {e}")))?;
        if nets.len() >= MAX_CACHED_NETS {
            nets.clear();
        }
        nets.insert(path, net.clone());
        Ok(net)
    }

    fn engine_move(&self, r: &MoveRequest, stop: &AtomicBool) -> Reply {
        let Some(level) = self.levels.iter().find(|l| l.name == r.level) else {
            let names: Vec<_> = self.levels.iter().map(|l| l.name.as_str()).collect();
            return bad(format!("unknown level `{}` (levels: {})", r.level, names.join(", ")));
        };
        let game = match replay(r.fen.as_deref(), r.rules.as_deref(), &r.moves) {
            Ok(g) => g,
            Err(e) => return e,
        };
        if let Some(outcome) = game.outcome() {
            return bad(format!("the game is over: {outcome}"));
        }
        let network = match &r.checkpoint {
            Some(name) => match self.checkpoint_net(name) {
                Ok(n) => Some(n),
                Err(e) => return e,
            },
            None => self.network_for(level).cloned(),
        };
        if r.movetime_ms == Some(0) {
            return bad("`movetime_ms` is at least 1");
        }
        if r.time_ms == Some(0) {
            return bad("`time_ms` (the engine's clock) is at least 1");
        }
        if r.inc_ms.is_some() && r.time_ms.is_none() {
            return bad("`inc_ms` needs `time_ms` (the time left on the engine's clock)");
        }
        let seed = r.seed.unwrap_or_else(fresh_seed);
        let mut limits = level.limits(r.movetime_ms.map(Duration::from_millis), seed, game.ply());
        limits.clock = r.time_ms.map(|t| Clock {
            remaining: Duration::from_millis(t),
            increment: Duration::from_millis(r.inc_ms.unwrap_or(0)),
            moves_to_go: None,
        });
        let player = level.summary(network.as_ref().map(|n| n.model_id()));
        let egtb = self.egtb_for(level).cloned();
        let mut engine = match Engine::new(level.engine_config(network, egtb)) {
            Ok(e) => e,
            Err(e) => return Reply::error(500, format!("engine: {e}")),
        };
        let start = Instant::now();
        let result = engine.search(&game, &limits, stop, &mut |_| {});
        let elapsed = start.elapsed();
        let Some(best) = result.best else {
            return Reply::error(500, "the engine found no move");
        };
        let pos = *game.position();
        let rules = *game.rules();
        let mut after = game.clone();
        if after.play(best).is_err() {
            return Reply::error(500, format!("the engine chose an illegal move {best}"));
        }
        let mut reply = serde_json::to_value(move_json(&pos, &best, &rules)).unwrap_or_default();
        let obj = reply.as_object_mut().expect("a move is an object");
        obj.insert("score".into(), json!(result.score));
        obj.insert("mate_in_plies".into(), json!(mate_distance(result.score)));
        obj.insert("level".into(), json!(level.name));
        obj.insert("player".into(), json!(player));
        obj.insert("time_ms".into(), json!(elapsed.as_millis() as u64));
        obj.insert("seed".into(), json!(seed));
        if r.analysis {
            obj.insert("pv".into(), json!(pdn_line(&pos, &result.pv, &rules)));
            obj.insert("depth".into(), json!(result.depth));
            obj.insert("nodes".into(), json!(result.nodes));
        }
        obj.insert("state".into(), state_json(&after));
        Reply::json(200, &reply)
    }
}

impl Service {
    /// `POST /api/analyse`: searches the position until the time is up or `stop` is raised,
    /// telling `emit` each event: `start` (the position and the player), `info` after every
    /// completed iteration (depth, score, nodes, principal variation) and `done` (the best move).
    /// `emit` answers false when nobody listens any more, which stops the search. Bad input is
    /// the error, before any event.
    pub fn analyse(&self, body: &[u8], stop: &AtomicBool, emit: &mut dyn FnMut(&'static str, Value) -> bool) -> Result<(), Reply> {
        let _running = Running::new(&self.running);
        let r: AnalyseRequest = parse(body)?;
        let game = replay(r.fen.as_deref(), r.rules.as_deref(), &r.moves)?;
        if let Some(outcome) = game.outcome() {
            return Err(bad(format!("the game is over: {outcome}")));
        }
        let ms = match r.movetime_ms {
            Some(0) => return Err(bad("`movetime_ms` is at least 1")),
            Some(ms) if ms > MAX_ANALYSIS_MS => {
                return Err(bad(format!("`movetime_ms` {ms}: at most {MAX_ANALYSIS_MS} (the server's longest analysis)")))
            }
            Some(ms) => ms,
            None => MAX_ANALYSIS_MS,
        };
        let network = match &r.checkpoint {
            Some(name) => Some(self.checkpoint_net(name)?),
            None => self.model.clone(),
        };
        let player = match &network {
            Some(n) => format!("alpha-beta with network {}", n.model_id()),
            None => "alpha-beta with the hand-made evaluation".to_owned(),
        };
        let options = SearchOptions::defaults(network.is_some());
        let config = EngineConfig { tt_mib: ANALYSIS_HASH_MIB, network, options, egtb: self.egtb.clone(), ..EngineConfig::default() };
        let mut engine = Engine::new(config).map_err(|e| Reply::error(500, format!("engine: {e}")))?;
        let pos = *game.position();
        let rules = *game.rules();
        let turn = pos.side_to_move().name().to_lowercase();
        if !emit("start", json!({ "fen": pos.to_fen(), "turn": turn, "player": player, "movetime_ms": ms })) {
            return Ok(());
        }
        // No time plan: an analysis goes deeper until its time is up (a watchdog raises `stop`)
        // or it is stopped, even where a move would be played at once (a single legal move).
        let deadline = Instant::now() + Duration::from_millis(ms);
        let (finished, timed_out) = (AtomicBool::new(false), AtomicBool::new(false));
        let mut gone = false;
        let result = std::thread::scope(|scope| {
            let watchdog = scope.spawn(|| {
                while !finished.load(Ordering::Relaxed) {
                    let now = Instant::now();
                    if now >= deadline {
                        timed_out.store(true, Ordering::Relaxed);
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                    std::thread::park_timeout(deadline - now);
                }
            });
            let result = self.analysis_search(&mut engine, &game, stop, &mut gone, emit);
            finished.store(true, Ordering::Relaxed);
            watchdog.thread().unpark();
            result
        });
        if !gone {
            let reason = if timed_out.load(Ordering::Relaxed) {
                "time"
            } else if stop.load(Ordering::Relaxed) {
                "stopped"
            } else {
                "solved"
            };
            emit(
                "done",
                json!({
                    "best": result.best.map(|m| pos.to_pdn(&m, &rules)),
                    "score": result.score,
                    "mate_in_plies": mate_distance(result.score),
                    "depth": result.depth,
                    "nodes": result.nodes,
                    "pv": pdn_line(&pos, &result.pv, &rules),
                    "reason": reason,
                }),
            );
        }
        Ok(())
    }

    /// The search of an analysis, telling `emit` each iteration.
    fn analysis_search(
        &self,
        engine: &mut Engine,
        game: &Game,
        stop: &AtomicBool,
        gone: &mut bool,
        emit: &mut dyn FnMut(&'static str, Value) -> bool,
    ) -> draughts_engine::SearchResult {
        let (pos, rules) = (*game.position(), *game.rules());
        engine.search(game, &Limits::default(), stop, &mut |info| {
            if *gone {
                return;
            }
            let event = json!({
                "depth": info.depth,
                "seldepth": info.seldepth,
                "score": info.score,
                "mate_in_plies": mate_distance(info.score),
                "nodes": info.nodes,
                "nps": info.nps,
                "time_ms": info.time.as_millis() as u64,
                "tbhits": info.tbhits,
                "pv": pdn_line(&pos, &info.pv, &rules),
            });
            if !emit("info", event) {
                *gone = true;
                stop.store(true, Ordering::Relaxed);
            }
        })
    }
}

/// A line of moves from `pos`, in PDN.
fn pdn_line(pos: &Position, line: &[Move], rules: &Rules) -> Vec<String> {
    let mut p = *pos;
    let mut out = Vec::with_capacity(line.len());
    for mv in line {
        out.push(p.to_pdn(mv, rules));
        p = p.play(mv);
    }
    out
}

/// A seed for a request that gives none: the standard library's per-process random keys, stepped
/// for every call (no dependency for it).
fn fresh_seed() -> u64 {
    use std::hash::BuildHasher;
    std::collections::hash_map::RandomState::new().hash_one(0u8)
}

fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Reply> {
    if body.len() > MAX_BODY {
        return Err(Reply::error(413, format!("the body is larger than {MAX_BODY} bytes")));
    }
    let text = std::str::from_utf8(body).map_err(|e| bad(format!("the body is not UTF-8: {e}")))?;
    serde_json::from_str(text).map_err(|e| bad(format!("bad JSON body: {e}")))
}

/// The game that `fen` (default: the start) and `moves` reach under `rules` (default: fmjd).
fn replay(fen: Option<&str>, rules: Option<&str>, moves: &[String]) -> Result<Game, Reply> {
    let rules: Rules = match rules {
        None => Rules::FMJD,
        Some(name) => name.parse().map_err(|e| bad(format!("`rules`: {e}")))?,
    };
    let start = match fen {
        None => Position::start(),
        Some(text) => Position::from_fen(text).map_err(|e| bad(format!("`fen`: {e}")))?,
    };
    if moves.len() > MAX_MOVES {
        return Err(bad(format!("`moves`: {} moves, at most {MAX_MOVES}", moves.len())));
    }
    let mut game = Game::from_position(start, rules);
    for (i, text) in moves.iter().enumerate() {
        let at = |e: String| bad(format!("`moves`[{i}] `{text}`: {e}"));
        if let Some(outcome) = game.outcome() {
            return Err(at(format!("the game was already over ({outcome})")));
        }
        let mv = MoveText::parse_pdn(text)
            .map_err(|e| at(e.to_string()))?
            .resolve(game.position(), game.rules())
            .map_err(|e| at(e.to_string()))?;
        game.play(mv).map_err(|e| at(e.to_string()))?;
    }
    Ok(game)
}

/// Everything the page shows of a game.
fn state_json(game: &Game) -> Value {
    let rules = game.rules();
    let pos = game.position();
    let mut history = Vec::new();
    let mut text = String::new();
    let start = *game.start_position();
    let mut number = 1;
    let mut white = start.side_to_move() == draughts_core::Color::White;
    if !white {
        text.push_str("1...");
    }
    for (p, mv) in game.plies() {
        let m = move_json(p, &mv, rules);
        if white {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&format!("{number}. {}", m.pdn));
        } else {
            text.push(' ');
            text.push_str(&m.pdn);
            number += 1;
        }
        white = !white;
        history.push(m);
    }
    let outcome = game.outcome();
    if let Some(o) = &outcome {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(o.pdn_result());
    }
    let legal: Vec<MoveJson> =
        if outcome.is_some() { Vec::new() } else { game.legal_moves().iter().map(|m| move_json(pos, m, rules)).collect() };
    use draughts_core::Color::{Black, White};
    json!({
        "start_fen": start.to_fen(),
        "fen": pos.to_fen(),
        "rules": rules.name(),
        "turn": pos.side_to_move().name().to_lowercase(),
        "ply": game.ply(),
        "board": {
            "white_men": squares(pos.men(White)),
            "white_kings": squares(pos.kings(White)),
            "black_men": squares(pos.men(Black)),
            "black_kings": squares(pos.kings(Black)),
        },
        "moves": history,
        "legal": legal,
        "pdn": text,
        "over": outcome.is_some(),
        "result": outcome.map(|o| o.pdn_result()),
        "reason": outcome.map(|o| o.to_string()),
        "draw_rules": game.draw_counts().iter().map(|d| json!({
            "rule": d.rule.name(),
            "count": d.count,
            "limit": d.limit,
            "left": d.left(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn service() -> Service {
        Service::new(super::super::levels::load(None).unwrap(), None, None)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Whatever arrives, the answer is a status with a JSON body (an error names the
        /// problem), never a panic.
        #[test]
        fn any_body_gets_an_answer(body in proptest::collection::vec(any::<u8>(), 0..200), which in 0..4usize) {
            let path = ["/api/move", "/api/state", "/api/info", "/x"][which];
            let reply = service().handle("POST", path, &body);
            prop_assert!(matches!(reply.status, 200 | 400 | 404 | 405), "{}", reply.status);
            let v: Value = serde_json::from_slice(&reply.body).unwrap();
            if reply.status != 200 {
                prop_assert!(v["error"].as_str().is_some_and(|e| !e.is_empty()));
            }
        }

        /// Bodies that are JSON of the right shape with arbitrary values.
        #[test]
        fn any_game_request_gets_an_answer(
            fen in "[WB?]?:?[WBK0-9,\\-:]{0,30}",
            moves in proptest::collection::vec("[0-9x\\- ]{0,8}", 0..6),
            level in "(easy|medium|hard|[a-z]{0,6})",
            rules in proptest::option::of("(fmjd|no-capture-25|promote-in-capture|[a-z]{0,5})"),
        ) {
            let body = json!({"fen": fen, "moves": moves, "level": level, "rules": rules, "movetime_ms": 5});
            let reply = service().handle("POST", "/api/move", body.to_string().as_bytes());
            prop_assert!(matches!(reply.status, 200 | 400), "{}", reply.status);
        }
    }

    #[test]
    fn oversized_bodies_are_refused_before_parsing() {
        let reply = service().handle("POST", "/api/move", &vec![b'['; MAX_BODY + 1]);
        assert_eq!(reply.status, 413);
    }
}
