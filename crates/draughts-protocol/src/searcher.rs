//! The engine seam: what the Hub and DXP drivers need from a player.
//!
//! The protocol crate does not depend on any search crate. The CLI adapts the alpha-beta engine
//! (or an MCTS player) to [`Searcher`]; the trivial [`FirstMove`] and [`RandomMover`] serve tests
//! and smoke runs.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use draughts_core::{Game, Move};

/// A player that chooses a move in a game, under a limit, until told to stop.
///
/// Only [`Searcher::name`] and [`Searcher::think`] are required; the rest have defaults for
/// searchers without parameters or state.
pub trait Searcher {
    /// The engine's name, as announced by the Hub `id` line and the DXP greeting.
    fn name(&self) -> String;

    /// The next search belongs to an unrelated game: forget what was learned (hash tables).
    fn new_game(&mut self) {}

    /// The parameters the engine exposes (the Hub `param` lines), with their current values.
    fn params(&self) -> Vec<Param> {
        Vec::new()
    }

    /// Sets parameter `name` to `value` (text as sent by the GUI). The error names what is wrong.
    fn set_param(&mut self, name: &str, _value: &str) -> Result<(), String> {
        Err(format!("unknown parameter `{name}`"))
    }

    /// Called once after the parameters are set and before the first search (the Hub `init`):
    /// the place to load a model or allocate a hash table of the requested size.
    fn init(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Chooses a move in the current position of `game`, which is not over.
    ///
    /// The searcher honours `limit` itself and returns as soon as it can once `stop` is set
    /// (the driver sets it for a Hub `stop`, at a hard time limit, or at the end of pondering).
    /// It reports progress through `info`, typically once per completed iteration. It returns
    /// `None` only when it has no move at all (the drivers then fall back or report an error).
    fn think(
        &mut self,
        game: &Game,
        limit: &SearchLimit,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&Info),
    ) -> Option<Move>;
}

impl<S: Searcher + ?Sized> Searcher for Box<S> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn new_game(&mut self) {
        (**self).new_game()
    }
    fn params(&self) -> Vec<Param> {
        (**self).params()
    }
    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        (**self).set_param(name, value)
    }
    fn init(&mut self) -> Result<(), String> {
        (**self).init()
    }
    fn think(
        &mut self,
        game: &Game,
        limit: &SearchLimit,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&Info),
    ) -> Option<Move> {
        (**self).think(game, limit, stop, info)
    }
}

/// How long to search. Every field that is set applies (the search stops at the first limit
/// reached); with none set the search is infinite and runs until stopped.
///
/// The Hub `level` forms map one to one: `depth=N`, `nodes=N`, `move-time=S`,
/// `[moves=N] time=S [inc=S]` ([`Clock`]) and `infinite` (nothing set).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchLimit {
    /// Maximum depth in plies.
    pub depth: Option<u32>,
    /// Maximum number of nodes.
    pub nodes: Option<u64>,
    /// Fixed time for this move.
    pub move_time: Option<Duration>,
    /// A game clock: the searcher budgets its own time.
    pub clock: Option<Clock>,
}

impl SearchLimit {
    /// No limit: search until stopped.
    pub fn infinite() -> SearchLimit {
        SearchLimit::default()
    }

    /// Search to `depth` plies.
    pub fn depth(depth: u32) -> SearchLimit {
        SearchLimit {
            depth: Some(depth),
            ..SearchLimit::default()
        }
    }

    /// Search `nodes` nodes.
    pub fn nodes(nodes: u64) -> SearchLimit {
        SearchLimit {
            nodes: Some(nodes),
            ..SearchLimit::default()
        }
    }

    /// Search for `time`.
    pub fn move_time(time: Duration) -> SearchLimit {
        SearchLimit {
            move_time: Some(time),
            ..SearchLimit::default()
        }
    }

    /// Play on a clock.
    pub fn clock(clock: Clock) -> SearchLimit {
        SearchLimit {
            clock: Some(clock),
            ..SearchLimit::default()
        }
    }

    /// Whether no limit is set (the search runs until stopped).
    pub fn is_infinite(&self) -> bool {
        self.depth.is_none()
            && self.nodes.is_none()
            && self.move_time.is_none()
            && self.clock.is_none()
    }

    /// The time this move may take at most, if the limit involves time: the move time, or the
    /// clock's [`Clock::budget`], whichever is smaller.
    pub fn time_budget(&self) -> Option<Duration> {
        match (self.move_time, self.clock.map(|c| c.budget())) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// The same limit without its time components (what a pondering search runs under until
    /// `ponder-hit` starts the clock).
    pub fn without_time(&self) -> SearchLimit {
        SearchLimit {
            move_time: None,
            clock: None,
            ..self.clone()
        }
    }
}

impl fmt::Display for SearchLimit {
    /// The Hub `level` arguments (`depth=6`, `moves=40 time=300 inc=0`, `infinite`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(d) = self.depth {
            parts.push(format!("depth={d}"));
        }
        if let Some(n) = self.nodes {
            parts.push(format!("nodes={n}"));
        }
        if let Some(t) = self.move_time {
            parts.push(format!("move-time={}", seconds(t)));
        }
        if let Some(c) = self.clock {
            if let Some(m) = c.moves {
                parts.push(format!("moves={m}"));
            }
            parts.push(format!("time={}", seconds(c.time)));
            if !c.inc.is_zero() {
                parts.push(format!("inc={}", seconds(c.inc)));
            }
        }
        if parts.is_empty() {
            parts.push("infinite".to_owned());
        }
        f.write_str(&parts.join(" "))
    }
}

/// Seconds as the shortest decimal text (`1`, `0.25`), as Hub lines carry them.
pub(crate) fn seconds(d: Duration) -> String {
    format!("{}", d.as_secs_f64())
}

/// A game clock as the side to move sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Time left on the clock.
    pub time: Duration,
    /// Time added after each move.
    pub inc: Duration,
    /// Moves left to the next time control (`None`: the time is for the rest of the game).
    pub moves: Option<u32>,
}

impl Clock {
    /// How long the next move may take: the time left spread over the moves to go (at most 30,
    /// the usual horizon for a sudden-death game), plus most of the increment, and never more
    /// than half the time left plus the increment. A simple, safe default for searchers that
    /// have no time manager of their own.
    pub fn budget(&self) -> Duration {
        let to_go = self.moves.unwrap_or(30).clamp(1, 30);
        let share = self.time / to_go;
        let inc = self.inc.mul_f64(0.8);
        let cap = self.time / 2 + inc;
        (share + inc).min(cap)
    }
}

/// One progress report from a search.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Info {
    /// Completed depth in plies.
    pub depth: u32,
    /// Score for the side to move, in centi-men (100 = one man).
    pub score: i32,
    /// Nodes searched so far.
    pub nodes: u64,
    /// Time spent so far.
    pub time: Duration,
    /// Principal variation, starting with the move the search would play.
    pub pv: Vec<Move>,
}

/// An engine parameter, as announced in a Hub `param` line.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Name, as used in `set-param name=...`.
    pub name: String,
    /// Current value, as text.
    pub value: String,
    /// Type and range.
    pub kind: ParamKind,
}

/// The type of an engine parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    /// `true` or `false`.
    Bool,
    /// An integer in `min..=max`.
    Int {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// A real number in `min..=max`.
    Real {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// Free text.
    String,
    /// One of a list of words.
    Enum {
        /// The allowed values.
        values: Vec<String>,
    },
}

impl ParamKind {
    /// The Hub `type=` word.
    pub fn type_name(&self) -> &'static str {
        match self {
            ParamKind::Bool => "bool",
            ParamKind::Int { .. } => "int",
            ParamKind::Real { .. } => "real",
            ParamKind::String => "string",
            ParamKind::Enum { .. } => "enum",
        }
    }

    /// Checks `value` against the type and range; the error says what is wrong.
    pub fn check(&self, value: &str) -> Result<(), String> {
        match self {
            ParamKind::Bool if value == "true" || value == "false" => Ok(()),
            ParamKind::Bool => Err(format!("`{value}` is not true or false")),
            ParamKind::Int { min, max } => match value.parse::<i64>() {
                Ok(v) if (*min..=*max).contains(&v) => Ok(()),
                Ok(v) => Err(format!("{v} is outside {min}..{max}")),
                Err(_) => Err(format!("`{value}` is not an integer")),
            },
            ParamKind::Real { min, max } => match value.parse::<f64>() {
                Ok(v) if v >= *min && v <= *max => Ok(()),
                Ok(v) => Err(format!("{v} is outside {min}..{max}")),
                Err(_) => Err(format!("`{value}` is not a number")),
            },
            ParamKind::String => Ok(()),
            ParamKind::Enum { values } if values.iter().any(|v| v == value) => Ok(()),
            ParamKind::Enum { values } => {
                Err(format!("`{value}` is not one of: {}", values.join(" ")))
            }
        }
    }
}

/// Waits until `stop` is set, checking every millisecond. Used by the trivial searchers for an
/// infinite limit.
fn wait_for_stop(stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Plays the first legal move in Hub notation order (by from square, then to square, then the
/// captured squares), so its choice does not depend on the order of move generation.
/// Deterministic, instant; with an infinite
/// limit it waits for `stop` (so tests can exercise `ping` and `stop` during a search). It
/// reports one [`Info`] line just before it returns: depth 1, score 0, nodes = the number of
/// legal moves, time 0, pv = the move.
#[derive(Clone, Debug, Default)]
pub struct FirstMove;

impl Searcher for FirstMove {
    fn name(&self) -> String {
        "first-move".to_owned()
    }

    fn think(
        &mut self,
        game: &Game,
        limit: &SearchLimit,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&Info),
    ) -> Option<Move> {
        if limit.is_infinite() {
            wait_for_stop(stop);
        }
        let legal = game.legal_moves();
        let mv = legal.iter().copied().min_by_key(hub_order)?;
        info(&Info {
            depth: 1,
            score: 0,
            nodes: legal.len() as u64,
            time: Duration::ZERO,
            pv: vec![mv],
        });
        Some(mv)
    }
}

/// The sort key of a move in Hub notation order.
fn hub_order(m: &Move) -> (u8, u8, Vec<u8>) {
    (
        m.from().number(),
        m.to().number(),
        m.captured().squares().map(|s| s.number()).collect(),
    )
}

/// Plays a uniformly random legal move from a seeded generator (SplitMix64), so a run can be
/// repeated exactly. Like [`FirstMove`] it waits for `stop` under an infinite limit. It has one
/// parameter, `seed`, which restarts the generator.
#[derive(Clone, Debug)]
pub struct RandomMover {
    seed: u64,
    state: u64,
}

impl RandomMover {
    /// A random mover whose choices are fixed by `seed`.
    pub fn new(seed: u64) -> RandomMover {
        RandomMover { seed, state: seed }
    }

    fn next_u64(&mut self) -> u64 {
        // SplitMix64 (Steele, Lea, Flood 2014): tiny, and good enough to pick moves.
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Searcher for RandomMover {
    fn name(&self) -> String {
        "random".to_owned()
    }

    fn params(&self) -> Vec<Param> {
        vec![Param {
            name: "seed".to_owned(),
            value: self.seed.to_string(),
            kind: ParamKind::Int {
                min: 0,
                max: i64::MAX,
            },
        }]
    }

    fn set_param(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "seed" => {
                let seed = value
                    .parse::<u64>()
                    .map_err(|_| format!("seed `{value}` is not a non-negative integer"))?;
                *self = RandomMover::new(seed);
                Ok(())
            }
            _ => Err(format!("unknown parameter `{name}`")),
        }
    }

    fn think(
        &mut self,
        game: &Game,
        limit: &SearchLimit,
        stop: &AtomicBool,
        info: &mut dyn FnMut(&Info),
    ) -> Option<Move> {
        let start = Instant::now();
        if limit.is_infinite() {
            wait_for_stop(stop);
        }
        let legal = game.legal_moves();
        if legal.is_empty() {
            return None;
        }
        let mv = legal[(self.next_u64() % legal.len() as u64) as usize];
        info(&Info {
            depth: 1,
            score: 0,
            nodes: legal.len() as u64,
            time: start.elapsed(),
            pv: vec![mv],
        });
        Some(mv)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_text() {
        assert_eq!(SearchLimit::depth(6).to_string(), "depth=6");
        assert_eq!(SearchLimit::infinite().to_string(), "infinite");
        assert_eq!(
            SearchLimit::move_time(Duration::from_millis(1500)).to_string(),
            "move-time=1.5"
        );
        let c = Clock {
            time: Duration::from_secs(300),
            inc: Duration::from_secs(2),
            moves: Some(40),
        };
        assert_eq!(SearchLimit::clock(c).to_string(), "moves=40 time=300 inc=2");
    }

    #[test]
    fn clock_budget_stays_inside_the_clock() {
        let c = Clock {
            time: Duration::from_secs(60),
            inc: Duration::ZERO,
            moves: None,
        };
        assert_eq!(c.budget(), Duration::from_secs(2));
        let last = Clock {
            time: Duration::from_secs(10),
            inc: Duration::ZERO,
            moves: Some(1),
        };
        assert_eq!(last.budget(), Duration::from_secs(5));
        let inc = Clock {
            time: Duration::ZERO,
            inc: Duration::from_secs(1),
            moves: None,
        };
        assert_eq!(inc.budget(), Duration::from_millis(800));
    }

    #[test]
    fn random_mover_is_repeatable_and_legal() {
        let stop = AtomicBool::new(false);
        let play = |seed| {
            let mut r = RandomMover::new(seed);
            let mut g = Game::default();
            for _ in 0..40 {
                if g.outcome().is_some() {
                    break;
                }
                let mv = r
                    .think(&g, &SearchLimit::depth(1), &stop, &mut |_| {})
                    .unwrap();
                g.play(mv).unwrap();
            }
            g.moves().collect::<Vec<_>>()
        };
        assert_eq!(play(7), play(7));
        assert_ne!(play(7), play(8));
    }

    #[test]
    fn param_checks() {
        assert!(ParamKind::Int { min: 0, max: 3 }.check("4").is_err());
        assert!(ParamKind::Int { min: 0, max: 3 }.check("3").is_ok());
        assert!(ParamKind::Bool.check("yes").is_err());
        assert!(ParamKind::Enum {
            values: vec!["a".into(), "b".into()]
        }
        .check("c")
        .is_err());
        let mut r = RandomMover::new(1);
        assert!(r.set_param("seed", "-1").is_err());
        assert!(r.set_param("speed", "1").is_err());
        assert!(r.set_param("seed", "9").is_ok());
        assert_eq!(r.params()[0].value, "9");
    }
}
