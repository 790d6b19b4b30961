//! Players backed by other crates of the workspace: the alpha-beta baseline
//! (`draughts-engine`) and external Hub engines (`draughts-protocol`'s [`HubClient`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use draughts_core::{Game, Move, Rules};
use draughts_engine::{Endgames, Engine, EngineConfig, Limits, Variety};
use draughts_nnue::Network;
use draughts_protocol::hub::History;
use draughts_protocol::{Clock, HubClient, HubClientOptions, HubError, SearchLimit};

use crate::player::{ClockState, Player, PlayerError};
use crate::spec::{BuildError, PlayerKind, PlayerSpec, SearchLimits};

/// Builds the kinds this crate links an implementation for (`alphabeta`, `hub`, `dxp`); `None`
/// for the others.
pub(crate) fn build(spec: &PlayerSpec) -> Option<Result<Box<dyn Player>, BuildError>> {
    let name = spec.to_string();
    match &spec.kind {
        PlayerKind::AlphaBeta { limits, model, hash, egtb, options, variety } => Some(
            engine_config(model.as_deref())
                .and_then(|config| Ok(EngineConfig { egtb: egtb.as_deref().map(load_egtb).transpose()?, ..config }))
                .map(|config| EngineConfig { tt_mib: hash.unwrap_or(config.tt_mib), options: *options, ..config })
                .and_then(|config| AlphaBetaPlayer::new(name.clone(), *limits, config))
                .map(|p| p.with_variety(*variety))
                .map(|p| Box::new(p) as Box<dyn Player>)
                .map_err(|detail| BuildError::Failed { spec: name, detail }),
        ),
        PlayerKind::Hub { cmd, limits, full_history } => Some(
            HubPlayer::spawn(name.clone(), cmd, *limits, HubClientOptions {
                history: if *full_history { History::All } else { History::SinceIrreversible },
                ..HubClientOptions::default()
            })
                .map(|p| Box::new(p) as Box<dyn Player>)
                .map_err(|e| BuildError::Failed { spec: name, detail: e.to_string() }),
        ),
        PlayerKind::Dxp { addr } => Some(Ok(Box::new(DxpPlayer::new(name, addr.clone())) as Box<dyn Player>)),
        _ => None,
    }
}

/// The engine config of an `alphabeta` player: the hand-made evaluation, or the sparse network
/// of `model`.
fn engine_config(model: Option<&Path>) -> Result<EngineConfig, String> {
    match model {
        None => Ok(EngineConfig::default()),
        Some(m) => Ok(EngineConfig::learned(load_network(m)?)),
    }
}

/// Opens the endgame databases in `dir`, once per directory for the whole process: the players
/// of all the games of a match share the tables they have read.
pub fn load_egtb(dir: &Path) -> Result<Endgames, String> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Endgames>>> = OnceLock::new();
    let mut loaded = LOADED.get_or_init(Default::default).lock().map_err(|_| "an endgame-table load panicked".to_owned())?;
    if let Some(e) = loaded.get(dir) {
        return Ok(e.clone());
    }
    let e = Endgames::open(dir).map_err(|e| format!("egtb={}: {e}", dir.display()))?;
    if e.pieces() < 2 {
        return Err(format!("egtb={}: no complete set of endgame tables (`draughts egtb build`)", dir.display()));
    }
    loaded.insert(dir.to_owned(), e.clone());
    Ok(e)
}

/// Loads the sparse network a model path names (a checkpoint file, or the newest checkpoint of
/// a model or run directory), once per checkpoint file for the whole process: the players of
/// all the games of a match share it.
pub fn load_network(model: &Path) -> Result<Arc<Network>, String> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<Network>>>> = OnceLock::new();
    let mut warnings = Vec::new();
    let path = draughts_model::resolve_model(model, &mut |w| warnings.push(w)).map_err(|e| e.to_string())?;
    let mut loaded = LOADED.get_or_init(Default::default).lock().map_err(|_| "a network load panicked".to_owned())?;
    if let Some(net) = loaded.get(&path) {
        return Ok(net.clone());
    }
    let net = Arc::new(Network::load(&path).map_err(|e| {
        let mut msg = e.to_string();
        for w in &warnings {
            msg.push_str(&format!("; {w}"));
        }
        msg
    })?);
    loaded.insert(path, net.clone());
    Ok(net)
}

/// Part of a time budget a player aims to use, leaving the rest for overhead, so that a
/// well-behaved engine does not lose on time by a hair.
const TIME_SAFETY: f64 = 0.8;

/// The alpha-beta baseline as a player.
///
/// Its limits come from the spec. When the match gives it a move limit or a game clock, it
/// also stops in time: the move time is capped at 80% of the move limit, and the engine's own
/// time manager plans with the clock. Without a time control a depth- or node-limited search
/// is deterministic.
#[derive(Debug)]
pub struct AlphaBetaPlayer {
    name: String,
    limits: SearchLimits,
    engine: Engine,
    stop: AtomicBool,
    variety: Option<Variety>,
    /// This game's seed (from the match seed and the game's number): the variety's choices.
    game_seed: u64,
}

impl AlphaBetaPlayer {
    /// An engine with `config` (hash size, weights) searching within `limits`.
    pub fn new(name: String, limits: SearchLimits, config: EngineConfig) -> Result<AlphaBetaPlayer, String> {
        let engine = Engine::new(config).map_err(|e| e.to_string())?;
        Ok(AlphaBetaPlayer { name, limits, engine, stop: AtomicBool::new(false), variety: None, game_seed: 0 })
    }

    /// The same player with variety in the opening (a seeded near-best choice, see [`Variety`]).
    pub fn with_variety(self, variety: Option<Variety>) -> AlphaBetaPlayer {
        AlphaBetaPlayer { variety, ..self }
    }

    fn engine_limits(&self, clock: &ClockState) -> Limits {
        let mut limits = Limits {
            depth: self.limits.depth,
            nodes: self.limits.nodes,
            movetime: self.limits.movetime,
            ..Limits::default()
        };
        if let Some(cap) = clock.move_limit.map(|l| l.mul_f64(TIME_SAFETY)) {
            limits.movetime = Some(limits.movetime.map_or(cap, |t| t.min(cap)));
        }
        if let Some(remaining) = clock.remaining {
            limits.clock = Some(draughts_engine::Clock {
                remaining: remaining.mul_f64(TIME_SAFETY),
                increment: clock.increment,
                moves_to_go: None,
            });
        }
        limits
    }
}

impl Player for AlphaBetaPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, seed: u64) {
        self.engine.new_game();
        self.game_seed = seed;
    }

    fn choose(&mut self, game: &Game, clock: &ClockState) -> Result<Move, PlayerError> {
        let mut limits = self.engine_limits(clock);
        limits.noise = self.variety.and_then(|v| v.noise(game.ply(), self.game_seed));
        let result = self.engine.search(game, &limits, &self.stop, &mut |_| {});
        result.best.ok_or_else(|| PlayerError::Crashed {
            detail: format!("the engine returned no move in {}", game.position().to_fen()),
        })
    }
}

/// How long the client waits for a Hub engine's move when the match sets no time limit:
/// twice the spec's move time plus 10 s, or 10 minutes for depth and node limits.
fn untimed_wait(limits: &SearchLimits) -> Duration {
    match limits.movetime {
        Some(t) => t * 2 + Duration::from_secs(10),
        None => Duration::from_secs(600),
    }
}

/// Grace beyond the referee's budget before the client kills a Hub engine that does not
/// answer: the referee scores any overrun as a time-out anyway, so this only bounds the wait.
const KILL_GRACE: Duration = Duration::from_millis(200);

/// An external engine speaking the Hub protocol, run as a child process by
/// [`HubClient`].
///
/// The client kills an engine that does not answer within the move's budget (plus a short
/// grace) and reports a time-out; a crash, a protocol error or an illegal move come back as
/// the matching [`PlayerError`]. After a failure the engine is restarted at the next
/// [`Player::new_game`]. The engine is (re)started under the rules of the game it plays, so
/// its moves are checked under those rules.
#[derive(Debug)]
pub struct HubPlayer {
    name: String,
    cmd: String,
    limits: SearchLimits,
    options: HubClientOptions,
    client: Option<HubClient>,
    /// A failure of `new-game`, reported at the next move.
    pending: Option<PlayerError>,
}

impl HubPlayer {
    /// Starts `cmd` and does the handshake.
    pub fn spawn(name: String, cmd: &str, limits: SearchLimits, options: HubClientOptions) -> Result<HubPlayer, HubError> {
        let client = HubClient::spawn(cmd, &options)?;
        Ok(HubPlayer { name, cmd: cmd.to_owned(), limits, options, client: Some(client), pending: None })
    }

    fn client(&mut self, rules: Rules) -> Result<&mut HubClient, PlayerError> {
        if self.options.rules != rules {
            self.options.rules = rules;
            self.client = None;
        }
        if self.client.is_none() {
            self.client = Some(HubClient::spawn(&self.cmd, &self.options).map_err(to_player_error)?);
        }
        // Set just above.
        Ok(self.client.as_mut().expect("client started"))
    }
}

/// A Hub client failure as a player error.
fn to_player_error(e: HubError) -> PlayerError {
    match e {
        HubError::Timeout { .. } => PlayerError::TimedOut,
        HubError::Protocol { .. } => PlayerError::Protocol { detail: e.to_string() },
        HubError::IllegalMove { ref text, .. } => PlayerError::IllegalMove { text: text.clone() },
        other => PlayerError::Crashed { detail: other.to_string() },
    }
}

impl Player for HubPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, _seed: u64) {
        self.pending = None;
        if let Some(client) = self.client.as_mut() {
            if let Err(e) = client.new_game() {
                self.client = None;
                // A dead engine is restarted at the next move; report nothing yet.
                if !matches!(e, HubError::Crashed { .. } | HubError::Dead { .. }) {
                    self.pending = Some(to_player_error(e));
                }
            }
        }
    }

    fn choose(&mut self, game: &Game, clock: &ClockState) -> Result<Move, PlayerError> {
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        let mut limit = SearchLimit {
            depth: self.limits.depth,
            nodes: self.limits.nodes,
            move_time: self.limits.movetime,
            clock: None,
        };
        if let Some(cap) = clock.move_limit.map(|l| l.mul_f64(TIME_SAFETY)) {
            limit.move_time = Some(limit.move_time.map_or(cap, |t| t.min(cap)));
        }
        if let Some(remaining) = clock.remaining {
            limit.clock = Some(Clock { time: remaining, inc: clock.increment, moves: None });
        }
        if limit.is_infinite() {
            return Err(PlayerError::Crashed {
                detail: "a hub player needs depth=, nodes= or movetime=, or a match time control".to_owned(),
            });
        }
        let wait = clock.budget().map_or_else(|| untimed_wait(&self.limits), |b| b + KILL_GRACE);
        let client = self.client(*game.rules())?;
        match client.best_move(game, &limit, wait) {
            Ok(mv) => Ok(mv),
            Err(e) => {
                if !matches!(e, HubError::IllegalMove { .. }) {
                    self.client = None;
                }
                Err(to_player_error(e))
            }
        }
    }
}

/// An engine reached over DXP (`dxp:addr=HOST:PORT`), as a player: this side is the DXP
/// initiator and the engine the follower.
///
/// DXP plays whole games, so the player opens a game at its first move: GAMEREQ with the
/// current position and the engine to move (the moves before it, the opening included, are not
/// sent, so the engine does not see repetitions from before that point). From then on each call
/// sends the other player's move and waits for the engine's. A new game first ends the one in
/// progress with GAMEEND ("unknown", next game preferred). One TCP connection serves all the
/// player's games. A silent engine times out after the move limit (or 60 s) and loses.
pub struct DxpPlayer {
    name: String,
    addr: String,
    conn: Option<draughts_protocol::dxp::Connection<std::net::TcpStream>>,
    /// Plies of the current game the engine knows about (None: no game open).
    synced: Option<usize>,
}

impl std::fmt::Debug for DxpPlayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DxpPlayer({})", self.addr)
    }
}

impl DxpPlayer {
    /// A player for the DXP engine at `addr`; connects at the first move.
    pub fn new(name: String, addr: String) -> DxpPlayer {
        DxpPlayer { name, addr, conn: None, synced: None }
    }

    fn connection(&mut self) -> Result<&mut draughts_protocol::dxp::Connection<std::net::TcpStream>, PlayerError> {
        if self.conn.is_none() {
            let stream = std::net::TcpStream::connect(&self.addr)
                .map_err(|e| PlayerError::Crashed { detail: format!("cannot connect to {}: {e}", self.addr) })?;
            let _ = stream.set_nodelay(true);
            self.conn = Some(draughts_protocol::dxp::Connection::new(stream));
        }
        Ok(self.conn.as_mut().expect("connected above"))
    }

    fn end_game(&mut self) {
        if self.synced.take().is_none() {
            return;
        }
        use draughts_protocol::dxp::{EndReason, GameEnd, Message, StopCode};
        if let Some(conn) = self.conn.as_mut() {
            let end = Message::GameEnd(GameEnd { reason: EndReason::Unknown, stop: StopCode::NextGame });
            if conn.send(&end).is_err() {
                self.conn = None;
                return;
            }
            // Wait for the confirming GAMEEND; anything else (a late move, chat) is skipped.
            for _ in 0..16 {
                match conn.recv() {
                    Ok(Message::GameEnd(_)) => return,
                    Ok(_) => continue,
                    Err(_) => break,
                }
            }
            self.conn = None;
        }
    }

    fn protocol(detail: impl std::fmt::Display) -> PlayerError {
        PlayerError::Protocol { detail: detail.to_string() }
    }
}

impl Drop for DxpPlayer {
    fn drop(&mut self) {
        self.end_game();
    }
}

impl Player for DxpPlayer {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn new_game(&mut self, _seed: u64) {
        self.end_game();
    }

    fn choose(&mut self, game: &Game, clock: &ClockState) -> Result<Move, PlayerError> {
        use draughts_protocol::dxp::{AcceptCode, DxpError, GameRequest, Message, MoveMessage, VERSION};
        let timeout = clock.move_limit.map_or(Duration::from_secs(60), |t| t + Duration::from_millis(500));
        let plies = game.ply();
        let moves: Vec<Move> = game.moves().collect();
        let synced = self.synced;
        let name = self.name.clone();
        let conn = self.connection()?;
        let _ = conn.get_mut().set_read_timeout(Some(timeout));
        match synced {
            None => {
                let req = GameRequest {
                    version: VERSION,
                    initiator: "draughts arena".to_owned(),
                    follower_color: game.position().side_to_move(),
                    minutes: 0,
                    moves: 0,
                    position: Some(*game.position()),
                };
                conn.send(&Message::GameRequest(req)).map_err(|e| PlayerError::Crashed { detail: e.to_string() })?;
                loop {
                    match conn.recv().map_err(DxpPlayer::protocol)? {
                        Message::GameAccept(a) if a.code == AcceptCode::Accepted => break,
                        Message::GameAccept(a) => return Err(DxpPlayer::protocol(format!("{name}: game declined ({:?})", a.code))),
                        Message::Chat(_) => continue,
                        other => return Err(DxpPlayer::protocol(format!("expected GAMEACC, got {other:?}"))),
                    }
                }
            }
            Some(known) => {
                // Send the moves played since the engine's last move (the opponent's reply).
                for mv in &moves[known.min(plies)..] {
                    conn.send(&Message::Move(MoveMessage::from_move(mv, 0))).map_err(|e| PlayerError::Crashed { detail: e.to_string() })?;
                }
            }
        }
        let reply = loop {
            match conn.recv() {
                Ok(Message::Move(m)) => break m,
                Ok(Message::Chat(_)) => continue,
                Ok(Message::GameEnd(e)) => {
                    self.synced = None;
                    return Err(DxpPlayer::protocol(format!("the engine ended the game ({:?})", e.reason)));
                }
                Ok(other) => return Err(DxpPlayer::protocol(format!("expected a MOVE, got {other:?}"))),
                Err(DxpError::Timeout) => return Err(PlayerError::TimedOut),
                Err(DxpError::Io(e)) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                    return Err(PlayerError::TimedOut)
                }
                Err(e) => {
                    self.conn = None;
                    self.synced = None;
                    return Err(PlayerError::Crashed { detail: e.to_string() });
                }
            }
        };
        let mv = reply
            .resolve(game.position(), game.rules())
            .map_err(|reason| PlayerError::IllegalMove { text: format!("{reply:?}: {reason}") })?;
        self.synced = Some(plies + 1);
        Ok(mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphabeta_is_deterministic_at_fixed_depth() {
        let limits = SearchLimits { depth: Some(3), ..SearchLimits::default() };
        let config = EngineConfig { tt_mib: 1, ..EngineConfig::default() };
        let mut a = AlphaBetaPlayer::new("ab".into(), limits, config.clone()).unwrap();
        let mut b = AlphaBetaPlayer::new("ab".into(), limits, config).unwrap();
        let game = Game::new(Rules::FMJD);
        let ma = a.choose(&game, &ClockState::UNLIMITED).unwrap();
        assert!(game.legal_moves().contains(&ma));
        // A second search of another position in between does not change the answer.
        let mut other = game.clone();
        other.play(game.legal_moves()[0]).unwrap();
        b.choose(&other, &ClockState::UNLIMITED).unwrap();
        assert_eq!(b.choose(&game, &ClockState::UNLIMITED).unwrap(), ma);
    }

    #[test]
    fn alphabeta_respects_the_move_limit() {
        let limits = SearchLimits { depth: Some(60), ..SearchLimits::default() };
        let p = AlphaBetaPlayer::new("ab".into(), limits, EngineConfig { tt_mib: 1, ..EngineConfig::default() }).unwrap();
        let clock = ClockState { move_limit: Some(Duration::from_millis(100)), ..ClockState::UNLIMITED };
        let l = p.engine_limits(&clock);
        assert_eq!((l.depth, l.movetime), (Some(60), Some(Duration::from_millis(80))));
        let l = p.engine_limits(&ClockState::UNLIMITED);
        assert_eq!(l.movetime, None);
    }

    #[test]
    fn hub_errors_map_to_player_errors() {
        let t = HubError::Timeout { engine: "e".into(), stage: "s".into(), after: Duration::from_secs(1), last_error: None };
        assert_eq!(to_player_error(t), PlayerError::TimedOut);
        let i = HubError::IllegalMove { engine: "e".into(), text: "1-2".into(), fen: "f".into(), reason: "r".into() };
        assert_eq!(to_player_error(i), PlayerError::IllegalMove { text: "1-2".into() });
        let c = HubError::Crashed { engine: "e".into(), stage: "s".into(), status: "exit 3".into() };
        assert!(matches!(to_player_error(c), PlayerError::Crashed { detail } if detail.contains("exit 3")));
        let p = HubError::Protocol { engine: "e".into(), stage: "s".into(), line: "x".into(), reason: "bad".into() };
        assert!(matches!(to_player_error(p), PlayerError::Protocol { .. }));
    }
}
