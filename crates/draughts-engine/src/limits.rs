//! Search limits, clock handling and the playing levels offered to people.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// When a search stops. Every limit that is set applies; the first one reached ends the search.
/// With no limit at all the search runs until the stop flag is set (or the maximum depth).
///
/// A search with neither `movetime` nor `clock` is deterministic: the same game and limits give
/// the same move, score, principal variation and node count, on any machine, whatever the
/// engine searched before (see [`crate::Engine::search`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Iterations of iterative deepening, in plies (1 at least).
    pub depth: Option<u32>,
    /// Nodes (calls of the search function).
    pub nodes: Option<u64>,
    /// Time for this move.
    pub movetime: Option<Duration>,
    /// The game clock of the side to move; the engine decides how much of it to use.
    pub clock: Option<Clock>,
    /// Play a random move among those scoring close to the best (for weak levels).
    pub noise: Option<Noise>,
}

/// A game clock.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Time left on the clock.
    pub remaining: Duration,
    /// Time added after each move.
    pub increment: Duration,
    /// Moves until the next time control, if the control has one.
    pub moves_to_go: Option<u32>,
}

/// Randomness for weak levels and for variety: every root move within `margin` centi-men of the
/// best gets an exact score (the others only a bound below that), and the engine plays a move
/// chosen uniformly among those within the margin. The choice is a function of `seed` and the
/// position, so it is reproducible.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Noise {
    /// Centi-men below the best score that still count as near-equal.
    pub margin: i32,
    /// Seed of the choice.
    pub seed: u64,
}

/// Variety in the opening, for a strong level that should not replay the same game whenever its
/// opponent repeats its moves: the seeded near-best choice of [`Noise`] in the first `plies`
/// plies of a game only (counted from the game's start position), within a small margin.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variety {
    /// Centi-men below the best score that still count as near-equal.
    pub margin: i32,
    /// The choice is made while the game has had fewer plies than this.
    pub plies: u32,
}

impl Variety {
    /// The noise of a search at ply `ply` of a game whose choices take `seed`; `None` from ply
    /// `plies` on.
    pub fn noise(&self, ply: usize, seed: u64) -> Option<Noise> {
        (ply < self.plies as usize).then_some(Noise { margin: self.margin, seed })
    }
}

impl Limits {
    /// Search to `depth` plies.
    pub fn depth(depth: u32) -> Limits {
        Limits { depth: Some(depth), ..Limits::default() }
    }

    /// Search `nodes` nodes.
    pub fn nodes(nodes: u64) -> Limits {
        Limits { nodes: Some(nodes), ..Limits::default() }
    }

    /// Search for `movetime`.
    pub fn movetime(movetime: Duration) -> Limits {
        Limits { movetime: Some(movetime), ..Limits::default() }
    }

    /// Whether the result depends only on the inputs (no time limit).
    pub fn is_deterministic(&self) -> bool {
        self.movetime.is_none() && self.clock.is_none()
    }

    /// Whether any limit is set (without one the search runs until stopped).
    pub fn is_bounded(&self) -> bool {
        self.depth.is_some() || self.nodes.is_some() || self.movetime.is_some() || self.clock.is_some()
    }
}

/// Time the engine allows itself for one move.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct TimePlan {
    /// Do not start a new iteration after this much time.
    pub soft: Duration,
    /// Abort the search at this time.
    pub hard: Duration,
    /// The plan comes from a game clock (time saved now can be spent later).
    pub clock: bool,
}

/// How the search went so far, for [`TimePlan::soft_after`].
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub(crate) struct Stability {
    /// Changes of the best move, each halved at every later iteration (0: none lately).
    pub instability: f64,
    /// Iterations in a row that ended with the same best move.
    pub same_best: u32,
    /// How far the score fell in the last iteration (centi-men; 0 when it rose).
    pub drop: i32,
    /// The iteration just completed.
    pub depth: u32,
}

/// Time kept back for the move to reach the other side (GUI, network).
const OVERHEAD: Duration = Duration::from_millis(15);

impl TimePlan {
    /// The plan for `limits`, or `None` when no time limit is set.
    pub fn new(limits: &Limits) -> Option<TimePlan> {
        let from_movetime = limits.movetime.map(|t| {
            let hard = t.saturating_sub(OVERHEAD / 3).max(Duration::from_millis(1));
            TimePlan { soft: hard * 6 / 10, hard, clock: false }
        });
        let from_clock = limits.clock.map(|c| {
            let safe = c.remaining.saturating_sub(OVERHEAD);
            let mtg = c.moves_to_go.unwrap_or(25).clamp(1, 50);
            let target = (safe / mtg + c.increment * 3 / 4).min(safe);
            let cap = if mtg == 1 { safe * 9 / 10 } else { safe / 2 };
            let hard = (target * 3).min(cap).max(Duration::from_millis(1));
            TimePlan { soft: (target / 2).min(hard), hard, clock: true }
        });
        match (from_movetime, from_clock) {
            (Some(a), Some(b)) => Some(TimePlan { soft: a.soft.min(b.soft), hard: a.hard.min(b.hard), clock: true }),
            (a, b) => a.or(b),
        }
    }
}

impl TimePlan {
    /// The time after which no iteration starts, given how the search went (the `time_policy`
    /// option, with a game clock only): an unstable best move or a falling score earns up to
    /// three times the planned time (never past `hard`); a best move that has not changed for six
    /// iterations from depth 8 on, with a score that is not falling, stops at half of it (an
    /// "easy move": the time saved goes to later moves).
    pub fn soft_after(&self, s: &Stability) -> Duration {
        if !self.clock {
            return self.soft;
        }
        let mut factor = 1.0 + s.instability.min(1.5);
        if s.drop > 30 {
            factor += 0.5;
        }
        if s.same_best >= 6 && s.depth >= 8 && s.drop <= 0 && s.instability < 0.1 {
            factor *= 0.5;
        }
        self.soft.mul_f64(factor).min(self.hard)
    }
}

/// Playing strength offered to people.
///
/// | level  | limits                                                   | randomness                |
/// |--------|----------------------------------------------------------|---------------------------|
/// | easy   | depth 2                                                  | any move within 40 centi-men of the best, seeded |
/// | medium | depth 6, at most 200 ms per move                         | none                      |
/// | hard   | iterative deepening until the given move time or clock; 1 s per move when none is given | none |
///
/// Any tighter limit the caller gives (a shorter move time, a clock) still applies at every level.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// Shallow search with random choices among near-equal moves: beatable by beginners.
    Easy,
    /// A short fixed-depth search: solid club play, fast.
    Medium,
    /// The engine at full strength within the time given.
    Hard,
}

/// Easy level's margin of near-equal moves, in centi-men.
pub const EASY_NOISE_MARGIN: i32 = 40;

impl Level {
    /// All levels, weakest first.
    pub const ALL: [Level; 3] = [Level::Easy, Level::Medium, Level::Hard];

    /// The limits for this level, given the caller's limits `base` (a move time, a clock) and a
    /// seed for the easy level's random choices.
    pub fn limits(self, base: &Limits, seed: u64) -> Limits {
        let min_time = |t: Option<Duration>, cap: Duration| Some(t.map_or(cap, |t| t.min(cap)));
        match self {
            Level::Easy => Limits {
                depth: Some(base.depth.map_or(2, |d| d.min(2))),
                noise: Some(Noise { margin: EASY_NOISE_MARGIN, seed }),
                ..base.clone()
            },
            Level::Medium => Limits {
                depth: Some(base.depth.map_or(6, |d| d.min(6))),
                movetime: min_time(base.movetime, Duration::from_millis(200)),
                noise: None,
                ..base.clone()
            },
            Level::Hard => {
                let mut l = Limits { noise: None, ..base.clone() };
                if !l.is_bounded() {
                    l.movetime = Some(Duration::from_secs(1));
                }
                l
            }
        }
    }

    /// The level's name as the command line writes it.
    pub fn name(self) -> &'static str {
        match self {
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A level name that is not `easy`, `medium` or `hard`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown level `{0}` (known: easy, medium, hard)")]
pub struct UnknownLevel(pub String);

impl FromStr for Level {
    type Err = UnknownLevel;
    fn from_str(s: &str) -> Result<Level, UnknownLevel> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| UnknownLevel(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_by_name() {
        for l in Level::ALL {
            assert_eq!(l.name().parse::<Level>(), Ok(l));
            assert_eq!(l.to_string(), l.name());
        }
        assert!("grandmaster".parse::<Level>().unwrap_err().to_string().contains("grandmaster"));
    }

    #[test]
    fn level_limits() {
        let none = Limits::default();
        let easy = Level::Easy.limits(&none, 7);
        assert_eq!(easy.depth, Some(2));
        assert_eq!(easy.noise, Some(Noise { margin: EASY_NOISE_MARGIN, seed: 7 }));
        assert!(easy.is_deterministic());
        let medium = Level::Medium.limits(&Limits::movetime(Duration::from_millis(50)), 0);
        assert_eq!((medium.depth, medium.movetime), (Some(6), Some(Duration::from_millis(50))));
        assert_eq!(Level::Hard.limits(&none, 0).movetime, Some(Duration::from_secs(1)));
        let clock = Limits {
            clock: Some(Clock { remaining: Duration::from_secs(60), increment: Duration::ZERO, moves_to_go: None }),
            ..Limits::default()
        };
        assert_eq!(Level::Hard.limits(&clock, 0), clock);
    }

    #[test]
    fn time_plans() {
        assert_eq!(TimePlan::new(&Limits::depth(3)), None);
        let p = TimePlan::new(&Limits::movetime(Duration::from_millis(1000))).unwrap();
        assert!(p.hard <= Duration::from_millis(1000) && p.soft < p.hard);
        let clock = |ms, mtg| Limits {
            clock: Some(Clock { remaining: Duration::from_millis(ms), increment: Duration::ZERO, moves_to_go: mtg }),
            ..Limits::default()
        };
        let p = TimePlan::new(&clock(60_000, None)).unwrap();
        assert!(p.hard <= Duration::from_secs(30) && p.hard >= Duration::from_secs(2), "{p:?}");
        // Almost no time left: still a positive, tiny budget.
        let p = TimePlan::new(&clock(5, None)).unwrap();
        assert!(p.hard <= Duration::from_millis(5));
        // Last move before the control may use most of the time.
        let p = TimePlan::new(&clock(10_000, Some(1))).unwrap();
        assert!(p.hard > Duration::from_secs(5));
    }

    #[test]
    fn unstable_moves_get_more_time_and_easy_moves_less() {
        let clock = Limits {
            clock: Some(Clock { remaining: Duration::from_secs(60), increment: Duration::from_millis(500), moves_to_go: None }),
            ..Limits::default()
        };
        let p = TimePlan::new(&clock).unwrap();
        let calm = Stability { instability: 0.0, same_best: 2, drop: 0, depth: 10 };
        assert_eq!(p.soft_after(&calm), p.soft);
        let unstable = Stability { instability: 1.5, same_best: 0, ..calm };
        assert!(p.soft_after(&unstable) > p.soft.mul_f64(2.4) && p.soft_after(&unstable) <= p.hard);
        let falling = Stability { drop: 50, ..calm };
        assert!(p.soft_after(&falling) > p.soft);
        let easy = Stability { same_best: 6, ..calm };
        assert!(p.soft_after(&easy) < p.soft.mul_f64(0.6));
        // Never past the hard limit, whatever happens.
        let worst = Stability { instability: 9.0, same_best: 0, drop: 900, depth: 3 };
        assert!(p.soft_after(&worst) <= p.hard);
        // A fixed move time is not a clock: the plan does not move.
        let fixed = TimePlan::new(&Limits::movetime(Duration::from_millis(100))).unwrap();
        assert_eq!(fixed.soft_after(&unstable), fixed.soft);
    }
}
