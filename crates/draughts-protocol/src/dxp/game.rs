//! DXP games: the [`Initiator`] asks for games, the [`Follower`] accepts them, and both play
//! through a [`Searcher`] while refereeing the peer with the full rules.
//!
//! Every move the peer sends is checked against [`Game`]; an illegal move, a malformed or
//! out-of-place message, a time-out or a dropped connection ends the game with a typed
//! [`EndCause`] (and a GAMEEND to the peer where the connection still works), never a panic.
//! When [`Game::outcome`] says the game is over, this side sends GAMEEND with the result from
//! its point of view, whoever moved last; a GAMEEND received while waiting for our own
//! confirmation counts as that confirmation, so two referees that end at once both finish.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use draughts_core::{Color, Game, Move, Outcome, Position, Rules};

use super::conn::{Connection, DxpError, Transport};
use super::message::{
    AcceptCode, BackCode, EndReason, GameAccept, GameEnd, GameRequest, Message, MoveMessage,
    StopCode, VERSION,
};
use crate::searcher::{Clock, SearchLimit, Searcher};

/// The IANA-registered DXP port.
pub const DEFAULT_PORT: u16 = 27531;

/// At most this many chat messages are kept per game.
const MAX_CHAT: usize = 100;
/// At most this many unexpected messages are skipped while waiting for a particular one.
const MAX_SKIPPED: usize = 100;

/// How this side plays, for both roles.
#[derive(Clone, Debug)]
pub struct PlayerOptions {
    /// Our name in GAMEREQ or GAMEACC (cut to 32 characters).
    pub name: String,
    /// The rules moves are checked under and the result is decided by.
    pub rules: Rules,
    /// A fixed limit for every move, instead of one derived from the GAMEREQ clock.
    pub limit: Option<SearchLimit>,
    /// The limit per move when the GAMEREQ sets no time (`000` minutes).
    pub untimed_limit: SearchLimit,
    /// How long to wait for the peer's move. `None`: the peer's whole clock plus a minute, or
    /// ten minutes in an untimed game.
    pub peer_timeout: Option<Duration>,
    /// How long to wait between games and for answers (GAMEACC, a confirming GAMEEND).
    pub idle_timeout: Duration,
}

impl Default for PlayerOptions {
    fn default() -> PlayerOptions {
        PlayerOptions {
            name: "draughts".to_owned(),
            rules: Rules::FMJD,
            limit: None,
            untimed_limit: SearchLimit::move_time(Duration::from_secs(1)),
            peer_timeout: None,
            idle_timeout: Duration::from_secs(120),
        }
    }
}

/// What the initiator asks for.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// How this side plays.
    pub player: PlayerOptions,
    /// Games to play; colours alternate, starting with `first_color` for us.
    pub games: u32,
    /// Thinking time per side per game, in minutes (0 to 999; 0 = untimed).
    pub time_minutes: u16,
    /// Moves to play in that time (0: the time is for the whole game).
    pub moves: u16,
    /// A start position other than the standard one.
    pub start: Option<Position>,
    /// Our colour in the first game.
    pub first_color: Color,
    /// How long to try to connect.
    pub connect_timeout: Duration,
}

impl Default for ConnectOptions {
    fn default() -> ConnectOptions {
        ConnectOptions {
            player: PlayerOptions::default(),
            games: 1,
            time_minutes: 5,
            moves: 0,
            start: None,
            first_color: Color::White,
            connect_timeout: Duration::from_secs(10),
        }
    }
}

/// How the follower serves.
#[derive(Clone, Debug)]
pub struct ListenOptions {
    /// How this side plays.
    pub player: PlayerOptions,
    /// Connections to serve, one after another, before returning.
    pub connections: usize,
}

impl Default for ListenOptions {
    fn default() -> ListenOptions {
        ListenOptions {
            player: PlayerOptions::default(),
            connections: 1,
        }
    }
}

/// A game's result from this side's point of view.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// We won.
    Win,
    /// Drawn.
    Draw,
    /// We lost.
    Loss,
}

/// Why a game ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EndCause {
    /// The rules ended it (no move, no pieces, a draw rule).
    Rules(Outcome),
    /// The peer sent GAMEEND with this reason (its own point of view) before the rules ended
    /// the game.
    PeerGameEnd(EndReason),
    /// The peer sent a move that is not legal.
    PeerIllegalMove {
        /// The move as sent.
        text: String,
        /// Why it is not legal.
        reason: String,
    },
    /// The peer sent a malformed or out-of-place message.
    PeerBadMessage(String),
    /// The peer did not move within the time-out.
    PeerTimeout,
    /// The connection broke.
    Disconnected(String),
    /// Our searcher produced no legal move.
    SearcherFailed(String),
    /// The follower did not accept the game request.
    Declined(AcceptCode),
}

/// One game as played.
#[derive(Clone, Debug)]
pub struct GameRecord {
    /// Our colour.
    pub our_color: Color,
    /// The peer's name.
    pub opponent: String,
    /// The start position.
    pub start: Position,
    /// The moves played, all checked legal.
    pub moves: Vec<Move>,
    /// Why the game ended.
    pub end: EndCause,
    /// The result for us, when known. The rules decide when they ended the game; a peer's
    /// resignation or draw claim is taken as stated; a peer's win claim the rules do not back,
    /// or an unknown reason, leaves it `None`. Illegal moves, bad messages, time-outs and
    /// dropped connections lose for the side responsible.
    pub verdict: Option<Verdict>,
    /// The stop code of the peer's GAMEEND, if one arrived.
    pub peer_stop: Option<StopCode>,
    /// Chat messages received during the game (the first 100).
    pub chat: Vec<String>,
}

impl GameRecord {
    /// The score for White (1, 0.5, 0), when the verdict is known.
    pub fn white_score(&self) -> Option<f64> {
        let ours = match self.verdict? {
            Verdict::Win => 1.0,
            Verdict::Draw => 0.5,
            Verdict::Loss => 0.0,
        };
        Some(if self.our_color == Color::White {
            ours
        } else {
            1.0 - ours
        })
    }
}

fn verdict_of(outcome: &Outcome, us: Color) -> Verdict {
    match outcome {
        Outcome::Win { winner, .. } if *winner == us => Verdict::Win,
        Outcome::Win { .. } => Verdict::Loss,
        Outcome::Draw(_) => Verdict::Draw,
    }
}

fn reason_of(v: Verdict) -> EndReason {
    match v {
        Verdict::Win => EndReason::IWin,
        Verdict::Draw => EndReason::Draw,
        Verdict::Loss => EndReason::ILose,
    }
}

/// The limit for our next move, given the time we used and the moves we played, and the hard
/// time limit at which the driver stops the search. `tc.moves` moves in `tc.minutes`, then the
/// same again (a repeating control), or the whole game in `tc.minutes` when `tc.moves` is 0.
fn our_limit(
    opts: &PlayerOptions,
    tc: TimeControl,
    used: Duration,
    played: u32,
) -> (SearchLimit, Option<Duration>) {
    if let Some(l) = &opts.limit {
        return (l.clone(), l.move_time);
    }
    if tc.minutes == 0 {
        let l = opts.untimed_limit.clone();
        let hard = l.move_time;
        return (l, hard);
    }
    let period = Duration::from_secs(u64::from(tc.minutes) * 60);
    let (available, to_go) = if tc.moves == 0 {
        (period, None)
    } else {
        let periods_done = played / u32::from(tc.moves);
        (
            period * (periods_done + 1),
            Some(u32::from(tc.moves) - played % u32::from(tc.moves)),
        )
    };
    let left = available.saturating_sub(used);
    (
        SearchLimit::clock(Clock {
            time: left,
            inc: Duration::ZERO,
            moves: to_go,
        }),
        Some(left),
    )
}

/// One connection's worth of games, for either role.
struct Session<'a, S, P: ?Sized> {
    conn: Connection<S>,
    searcher: &'a mut P,
    opts: &'a PlayerOptions,
    /// The connection can no longer carry messages.
    broken: bool,
}

/// The clock of one game, as the GAMEREQ set it.
#[derive(Copy, Clone, Debug)]
struct TimeControl {
    minutes: u16,
    moves: u16,
}

impl<S: Transport, P: Searcher + ?Sized> Session<'_, S, P> {
    fn send(&mut self, msg: &Message) -> Result<(), DxpError> {
        let r = self.conn.send(msg);
        if r.is_err() {
            self.broken = true;
        }
        r
    }

    fn set_timeout(&mut self, t: Duration) {
        if self.conn.set_read_timeout(Some(t)).is_err() {
            self.broken = true;
        }
    }

    /// Asks the searcher for a move, setting `stop` at the hard limit.
    fn think(&mut self, game: &Game, limit: &SearchLimit, hard: Option<Duration>) -> Option<Move> {
        let stop = AtomicBool::new(false);
        let searcher = &mut *self.searcher;
        thread::scope(|scope| {
            let (tx, rx) = mpsc::channel::<()>();
            if let Some(hard) = hard {
                let stop = &stop;
                scope.spawn(move || {
                    if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(hard) {
                        stop.store(true, Ordering::Relaxed);
                    }
                });
            }
            let mv = searcher.think(game, limit, &stop, &mut |_| {});
            // Dropping the sender wakes the watchdog at once.
            drop(tx);
            mv
        })
    }

    /// Plays one game from `start` with us as `us`; the connection is in game state.
    fn play(
        &mut self,
        start: Position,
        us: Color,
        opponent: String,
        tc: TimeControl,
        stop: StopCode,
    ) -> GameRecord {
        let mut game = Game::from_position(start, self.opts.rules);
        let mut rec = GameRecord {
            our_color: us,
            opponent,
            start,
            moves: Vec::new(),
            end: EndCause::PeerTimeout,
            verdict: None,
            peer_stop: None,
            chat: Vec::new(),
        };
        let peer_timeout = self.opts.peer_timeout.unwrap_or(if tc.minutes > 0 {
            Duration::from_secs(u64::from(tc.minutes) * 60 + 60)
        } else {
            Duration::from_secs(600)
        });
        self.set_timeout(peer_timeout);
        let mut used = Duration::ZERO;
        let mut played = 0u32;
        loop {
            rec.moves = game.moves().collect();
            if self.broken {
                rec.end = EndCause::Disconnected("the connection could not be used".to_owned());
                rec.verdict = None;
                return rec;
            }
            if let Some(outcome) = game.outcome() {
                let v = verdict_of(&outcome, us);
                return self.end_by_us(rec, EndCause::Rules(outcome), Some(v), reason_of(v), stop);
            }
            if game.position().side_to_move() == us {
                let (limit, hard) = our_limit(self.opts, tc, used, played);
                let t0 = Instant::now();
                let best = self.think(&game, &limit, hard);
                let spent = t0.elapsed();
                used += spent;
                played += 1;
                let mv = match best {
                    Some(m) if game.legal_moves().contains(&m) => m,
                    Some(m) => {
                        let why = format!(
                            "illegal move {} in {}",
                            m.to_hub(),
                            game.position().to_fen()
                        );
                        return self.end_by_us(
                            rec,
                            EndCause::SearcherFailed(why),
                            Some(Verdict::Loss),
                            EndReason::ILose,
                            stop,
                        );
                    }
                    None => {
                        let why = "no move".to_owned();
                        return self.end_by_us(
                            rec,
                            EndCause::SearcherFailed(why),
                            Some(Verdict::Loss),
                            EndReason::ILose,
                            stop,
                        );
                    }
                };
                let secs = spent.as_secs_f64().round().min(9999.0) as u16;
                if let Err(e) = self.send(&Message::Move(MoveMessage::from_move(&mv, secs))) {
                    rec.end = EndCause::Disconnected(e.to_string());
                    return rec;
                }
                game.play_unchecked(mv);
                continue;
            }
            match self.conn.recv() {
                Ok(Message::Move(m)) => match m.resolve(game.position(), &self.opts.rules) {
                    Ok(mv) => game.play_unchecked(mv),
                    Err(reason) => {
                        let cause = EndCause::PeerIllegalMove {
                            text: m.to_string(),
                            reason,
                        };
                        return self.end_by_us(
                            rec,
                            cause,
                            Some(Verdict::Win),
                            EndReason::IWin,
                            stop,
                        );
                    }
                },
                Ok(Message::GameEnd(e)) => {
                    rec.peer_stop = Some(e.stop);
                    rec.verdict = match e.reason {
                        EndReason::ILose => Some(Verdict::Win),
                        EndReason::Draw => Some(Verdict::Draw),
                        EndReason::IWin | EndReason::Unknown => None,
                    };
                    rec.end = EndCause::PeerGameEnd(e.reason);
                    let ours = rec.verdict.map_or(EndReason::Unknown, reason_of);
                    let _ = self.send(&Message::GameEnd(GameEnd { reason: ours, stop }));
                    return rec;
                }
                Ok(Message::Chat(text)) => {
                    if rec.chat.len() < MAX_CHAT {
                        rec.chat.push(text);
                    }
                }
                Ok(Message::BackRequest(_)) => {
                    if let Err(e) = self.send(&Message::BackAccept(BackCode::NotSupported)) {
                        rec.end = EndCause::Disconnected(e.to_string());
                        return rec;
                    }
                }
                Ok(other) => {
                    let cause = EndCause::PeerBadMessage(format!(
                        "unexpected {} `{other}` during the game",
                        other.kind()
                    ));
                    return self.end_by_us(rec, cause, Some(Verdict::Win), EndReason::IWin, stop);
                }
                Err(DxpError::Message(e)) => {
                    let cause = EndCause::PeerBadMessage(e.to_string());
                    return self.end_by_us(rec, cause, Some(Verdict::Win), EndReason::IWin, stop);
                }
                Err(DxpError::Unterminated) => {
                    // The stream is out of step: say so, but expect no sensible answer.
                    let _ = self.send(&Message::GameEnd(GameEnd {
                        reason: EndReason::IWin,
                        stop: StopCode::NoNextGame,
                    }));
                    self.broken = true;
                    rec.end = EndCause::PeerBadMessage(DxpError::Unterminated.to_string());
                    rec.verdict = Some(Verdict::Win);
                    return rec;
                }
                Err(DxpError::Timeout) => {
                    return self.end_by_us(
                        rec,
                        EndCause::PeerTimeout,
                        Some(Verdict::Win),
                        EndReason::IWin,
                        stop,
                    );
                }
                Err(e) => {
                    self.broken = true;
                    rec.end = EndCause::Disconnected(e.to_string());
                    rec.verdict = Some(Verdict::Win);
                    return rec;
                }
            }
        }
    }

    /// Sends our GAMEEND and waits for the peer's.
    fn end_by_us(
        &mut self,
        mut rec: GameRecord,
        cause: EndCause,
        verdict: Option<Verdict>,
        reason: EndReason,
        stop: StopCode,
    ) -> GameRecord {
        rec.end = cause;
        rec.verdict = verdict;
        if self
            .send(&Message::GameEnd(GameEnd { reason, stop }))
            .is_err()
        {
            return rec;
        }
        let idle = self.opts.idle_timeout;
        self.set_timeout(idle);
        for _ in 0..MAX_SKIPPED {
            match self.conn.recv() {
                Ok(Message::GameEnd(e)) => {
                    rec.peer_stop = Some(e.stop);
                    break;
                }
                Ok(Message::BackRequest(_)) => {
                    let _ = self.send(&Message::BackAccept(BackCode::NotSupported));
                }
                Ok(Message::Chat(text)) if rec.chat.len() < MAX_CHAT => rec.chat.push(text),
                // A move that crossed our GAMEEND, or garbage: the game is over either way.
                Ok(_) | Err(DxpError::Message(_)) => {}
                Err(DxpError::Timeout) => break,
                Err(_) => {
                    self.broken = true;
                    break;
                }
            }
        }
        rec
    }
}

/// The side that connects and asks for games.
#[derive(Debug)]
pub struct Initiator<S> {
    conn: Option<Connection<S>>,
}

impl<S: Transport> Initiator<S> {
    /// An initiator over a connected stream.
    pub fn new(stream: S) -> Initiator<S> {
        Initiator {
            conn: Some(Connection::new(stream)),
        }
    }

    /// Plays `opts.games` games (fewer if the follower declines, stops or the connection
    /// breaks) and returns them in order. A declined request is recorded as a game with no
    /// moves and [`EndCause::Declined`].
    pub fn play<P: Searcher + ?Sized>(
        &mut self,
        searcher: &mut P,
        opts: &ConnectOptions,
    ) -> Vec<GameRecord> {
        let Some(conn) = self.conn.take() else {
            return Vec::new();
        };
        let mut s = Session {
            conn,
            searcher,
            opts: &opts.player,
            broken: false,
        };
        let mut records = Vec::new();
        let start = opts.start.unwrap_or_else(Position::start);
        for i in 0..opts.games {
            let us = if i % 2 == 0 {
                opts.first_color
            } else {
                !opts.first_color
            };
            let req = GameRequest {
                version: VERSION,
                initiator: opts.player.name.clone(),
                follower_color: !us,
                minutes: opts.time_minutes.min(999),
                moves: opts.moves.min(999),
                position: opts.start,
            };
            let mut rec = GameRecord {
                our_color: us,
                opponent: String::new(),
                start,
                moves: Vec::new(),
                end: EndCause::PeerTimeout,
                verdict: None,
                peer_stop: None,
                chat: Vec::new(),
            };
            if let Err(e) = s.send(&Message::GameRequest(req)) {
                rec.end = EndCause::Disconnected(e.to_string());
                records.push(rec);
                break;
            }
            let idle = opts.player.idle_timeout;
            s.set_timeout(idle);
            let accept = loop {
                match s.conn.recv() {
                    Ok(Message::GameAccept(a)) => break Ok(a),
                    // Chat, or the tail of the previous game's GAMEEND exchange.
                    Ok(Message::Chat(_)) | Ok(Message::GameEnd(_)) => continue,
                    Ok(other) => {
                        break Err(EndCause::PeerBadMessage(format!(
                            "expected GAMEACC, got `{other}`"
                        )))
                    }
                    Err(DxpError::Message(e)) => {
                        break Err(EndCause::PeerBadMessage(e.to_string()))
                    }
                    Err(DxpError::Timeout) => break Err(EndCause::PeerTimeout),
                    Err(e) => break Err(EndCause::Disconnected(e.to_string())),
                }
            };
            let GameAccept { follower, code } = match accept {
                Ok(a) => a,
                Err(cause) => {
                    rec.end = cause;
                    records.push(rec);
                    break;
                }
            };
            rec.opponent = follower.clone();
            if code != AcceptCode::Accepted {
                rec.end = EndCause::Declined(code);
                records.push(rec);
                break;
            }
            s.searcher.new_game();
            let stop = if i + 1 == opts.games {
                StopCode::NoNextGame
            } else {
                StopCode::NextGame
            };
            let tc = TimeControl {
                minutes: opts.time_minutes.min(999),
                moves: opts.moves.min(999),
            };
            let rec = s.play(start, us, follower, tc, stop);
            let peer_stops = rec.peer_stop == Some(StopCode::NoNextGame);
            records.push(rec);
            if s.broken || peer_stops {
                break;
            }
        }
        records
    }
}

/// The side that waits for game requests and accepts them.
#[derive(Debug)]
pub struct Follower<S> {
    conn: Option<Connection<S>>,
}

impl<S: Transport> Follower<S> {
    /// A follower over a connected stream.
    pub fn new(stream: S) -> Follower<S> {
        Follower {
            conn: Some(Connection::new(stream)),
        }
    }

    /// Accepts and plays games until the peer closes the connection, falls silent for
    /// `idle_timeout` between games, or the connection breaks. GAMEREQs for another protocol
    /// version are answered with code `1`.
    pub fn serve<P: Searcher + ?Sized>(
        &mut self,
        searcher: &mut P,
        opts: &PlayerOptions,
    ) -> Vec<GameRecord> {
        let Some(conn) = self.conn.take() else {
            return Vec::new();
        };
        let mut s = Session {
            conn,
            searcher,
            opts,
            broken: false,
        };
        let mut records = Vec::new();
        let mut skipped = 0;
        while !s.broken && skipped < MAX_SKIPPED {
            s.set_timeout(opts.idle_timeout);
            match s.conn.recv() {
                Ok(Message::GameRequest(req)) => {
                    if req.version != VERSION {
                        let code = AcceptCode::VersionNotSupported;
                        let _ = s.send(&Message::GameAccept(GameAccept {
                            follower: opts.name.clone(),
                            code,
                        }));
                        continue;
                    }
                    let accept = GameAccept {
                        follower: opts.name.clone(),
                        code: AcceptCode::Accepted,
                    };
                    if s.send(&Message::GameAccept(accept)).is_err() {
                        break;
                    }
                    s.searcher.new_game();
                    let start = req.position.unwrap_or_else(Position::start);
                    let tc = TimeControl {
                        minutes: req.minutes,
                        moves: req.moves,
                    };
                    records.push(s.play(
                        start,
                        req.follower_color,
                        req.initiator,
                        tc,
                        StopCode::NextGame,
                    ));
                }
                // Between games only a GAMEREQ matters; anything else (a late GAMEEND, chat,
                // garbage) is skipped, a bounded number of times.
                Ok(_) | Err(DxpError::Message(_)) => skipped += 1,
                Err(_) => break,
            }
        }
        records
    }
}

/// The socket addresses for `text`: `PORT` (on the loopback address), `HOST:PORT`, `HOST` or
/// an IP address (on the default port); empty means the loopback address and the default port.
fn resolve(text: &str, what: &str) -> Result<Vec<SocketAddr>, DxpError> {
    let bad = |reason: String| DxpError::Address {
        addr: text.to_owned(),
        reason,
    };
    let t = text.trim();
    let full = if t.is_empty() {
        format!("127.0.0.1:{DEFAULT_PORT}")
    } else if t.bytes().all(|b| b.is_ascii_digit()) {
        let port: u16 = t
            .parse()
            .map_err(|_| bad(format!("{t} is not a port number (0 to 65535)")))?;
        format!("127.0.0.1:{port}")
    } else if let Ok(sa) = t.parse::<SocketAddr>() {
        sa.to_string()
    } else if let Ok(ip) = t.parse::<IpAddr>() {
        SocketAddr::new(ip, DEFAULT_PORT).to_string()
    } else if t.contains(':') {
        t.to_owned()
    } else {
        format!("{t}:{DEFAULT_PORT}")
    };
    let addrs: Vec<SocketAddr> = full
        .to_socket_addrs()
        .map_err(|e| bad(format!("cannot resolve {what}: {e}")))?
        .collect();
    if addrs.is_empty() {
        return Err(bad(format!("{what} resolves to no address")));
    }
    Ok(addrs)
}

/// A listening DXP follower.
#[derive(Debug)]
pub struct DxpListener {
    listener: TcpListener,
}

impl DxpListener {
    /// Listens on `addr`: a bare `PORT` binds the loopback address only; `HOST:PORT` binds
    /// what it names (`0.0.0.0:27531` to accept other machines); empty means loopback on the
    /// default port 27531.
    pub fn bind(addr: &str) -> Result<DxpListener, DxpError> {
        let addrs = resolve(addr, "the listen address")?;
        let listener = TcpListener::bind(&addrs[..]).map_err(|e| DxpError::Address {
            addr: addr.to_owned(),
            reason: format!("cannot listen: {e}"),
        })?;
        Ok(DxpListener { listener })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, DxpError> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves `opts.connections` connections one after another and returns every game played.
    pub fn serve<P: Searcher + ?Sized>(
        &self,
        searcher: &mut P,
        opts: &ListenOptions,
    ) -> Result<Vec<GameRecord>, DxpError> {
        let mut records = Vec::new();
        for _ in 0..opts.connections {
            let (stream, _) = self.listener.accept()?;
            // Small messages, strictly alternating: send each at once.
            let _ = stream.set_nodelay(true);
            records.extend(Follower::new(stream).serve(searcher, &opts.player));
        }
        Ok(records)
    }
}

/// Listens on `addr` (see [`DxpListener::bind`]) and serves games as a follower until the
/// peer stops, for `opts.connections` connections.
pub fn dxp_listen<P: Searcher + ?Sized>(
    addr: &str,
    searcher: &mut P,
    opts: &ListenOptions,
) -> Result<Vec<GameRecord>, DxpError> {
    DxpListener::bind(addr)?.serve(searcher, opts)
}

/// Connects to `addr` (`HOST:PORT`, `HOST` for the default port, or `PORT` on loopback) and
/// plays `opts.games` games as the initiator. Fails only if the connection cannot be made;
/// what happens afterwards is in the records.
pub fn dxp_connect<P: Searcher + ?Sized>(
    addr: &str,
    searcher: &mut P,
    opts: &ConnectOptions,
) -> Result<Vec<GameRecord>, DxpError> {
    let addrs = resolve(addr, "the peer address")?;
    let mut last = None;
    for a in &addrs {
        match TcpStream::connect_timeout(a, opts.connect_timeout) {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(Initiator::new(stream).play(searcher, opts));
            }
            Err(e) => last = Some(e),
        }
    }
    let reason = last.map_or_else(
        || "no address".to_owned(),
        |e| format!("cannot connect: {e}"),
    );
    Err(DxpError::Address {
        addr: addr.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_limits() {
        let opts = PlayerOptions::default();
        let secs = Duration::from_secs;
        let tc = TimeControl {
            minutes: 2,
            moves: 0,
        };
        let (l, hard) = our_limit(&opts, tc, secs(30), 10);
        assert_eq!(
            l.clock,
            Some(Clock {
                time: secs(90),
                inc: Duration::ZERO,
                moves: None
            })
        );
        assert_eq!(hard, Some(secs(90)));
        // 40 moves in 2 minutes, repeating: after 45 moves, 35 to go and a second period.
        let tc = TimeControl {
            minutes: 2,
            moves: 40,
        };
        let (l, _) = our_limit(&opts, tc, secs(150), 45);
        assert_eq!(
            l.clock,
            Some(Clock {
                time: secs(90),
                inc: Duration::ZERO,
                moves: Some(35)
            })
        );
        // Out of time: zero left, not an underflow.
        let (l, hard) = our_limit(
            &opts,
            TimeControl {
                minutes: 1,
                moves: 0,
            },
            secs(100),
            3,
        );
        assert_eq!(
            (l.clock.unwrap().time, hard),
            (Duration::ZERO, Some(Duration::ZERO))
        );
        // Untimed games and fixed limits.
        let (l, _) = our_limit(
            &opts,
            TimeControl {
                minutes: 0,
                moves: 0,
            },
            secs(0),
            0,
        );
        assert_eq!(l, opts.untimed_limit);
        let fixed = PlayerOptions {
            limit: Some(SearchLimit::depth(3)),
            ..PlayerOptions::default()
        };
        assert_eq!(
            our_limit(&fixed, tc, secs(0), 0),
            (SearchLimit::depth(3), None)
        );
    }

    #[test]
    fn addresses() {
        let a = resolve("27531", "x").unwrap();
        assert!(
            a.iter().all(|a| a.ip().is_loopback() && a.port() == 27531),
            "{a:?}"
        );
        let a = resolve("", "x").unwrap();
        assert_eq!(a[0].port(), DEFAULT_PORT);
        assert!(a[0].ip().is_loopback());
        let a = resolve("0.0.0.0:5000", "x").unwrap();
        assert!(a[0].ip().is_unspecified() && a[0].port() == 5000);
        let a = resolve("127.0.0.1", "x").unwrap();
        assert_eq!(a[0].port(), DEFAULT_PORT);
        let a = resolve("[::1]:7", "x").unwrap();
        assert_eq!(a[0].port(), 7);
        let a = resolve("::1", "x").unwrap();
        assert_eq!(a[0].port(), DEFAULT_PORT);
        assert!(resolve("70000", "x").is_err());
        assert!(resolve("localhost:notaport", "x").is_err());
    }
}
