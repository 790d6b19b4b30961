//! The referee: plays one game between two players under a set of rules and records how it
//! ended.
//!
//! The referee trusts no player. It keeps the game itself ([`draughts_core::Game`]: legal
//! moves, history, every draw rule of the [`Rules`] preset) and adjudicates by those rules
//! alone, so engines that do not know the draw rules cannot stretch a game. A player loses at
//! once, with the reason recorded, when it
//! - returns a move that is not legal in the position (illegal move),
//! - fails or panics (crash),
//! - takes longer than its move limit or its remaining game time (time-out),
//! - breaks its protocol (protocol error).
//!
//! Time. An in-process player cannot be interrupted, so the referee measures each move's wall
//! time after the player returns and counts an overrun as a time-out, even if the move was
//! good. Out-of-process players (Hub engines) are also killed by their own client's time-out
//! and then report [`PlayerError::TimedOut`]. Give engines a move limit with some slack over the
//! time they are asked to use.
//!
//! Ply limit. As a safety net against players that shuffle forever under rules without a
//! draw rule, a game that reaches `max_plies` plies played by the players (opening moves not
//! counted) without a result is scored a draw with the reason "ply limit". With the FMJD rules
//! the 25-move rule ends such games long before any sensible cap.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use draughts_core::{Color, DrawReason, Game, Move, Outcome, Position, Rules, WinReason};
use draughts_pdn::GameResult;

use crate::openings::Opening;
use crate::player::{ClockState, Player, PlayerError};

/// Time limits of a match.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TimeControl {
    /// The most one move may take (hard: an overrun loses).
    pub move_limit: Option<Duration>,
    /// A game clock per player (Fischer): starting time...
    pub base: Option<Duration>,
    /// ...and the time added after each of the player's moves.
    pub increment: Duration,
}

impl TimeControl {
    /// No time limit (fixed-depth or fixed-node players).
    pub const NONE: TimeControl = TimeControl { move_limit: None, base: None, increment: Duration::ZERO };
}

/// Why a player lost by forfeit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Forfeit {
    /// It played a move that is not legal; `text` is the move as given (Hub notation for a
    /// [`Move`]).
    IllegalMove {
        /// The move.
        text: String,
    },
    /// It failed or panicked.
    Crashed {
        /// What happened.
        detail: String,
    },
    /// It took too long.
    TimedOut {
        /// Time the move took.
        elapsed: Duration,
        /// The limit it had (the move limit or the clock, whichever was smaller; zero if the
        /// player reported the time-out itself without a limit known here).
        limit: Duration,
    },
    /// It broke its protocol.
    Protocol {
        /// What was wrong.
        detail: String,
    },
}

impl Forfeit {
    fn from_error(error: PlayerError, elapsed: Duration, limit: Option<Duration>) -> Forfeit {
        match error {
            PlayerError::IllegalMove { text } => Forfeit::IllegalMove { text },
            PlayerError::Crashed { detail } => Forfeit::Crashed { detail },
            PlayerError::TimedOut => Forfeit::TimedOut { elapsed, limit: limit.unwrap_or_default() },
            PlayerError::Protocol { detail } => Forfeit::Protocol { detail },
        }
    }

    /// Whether the player should be rebuilt before its next game (its process or state may be
    /// broken): after a crash, a time-out or a protocol error.
    pub fn breaks_player(&self) -> bool {
        !matches!(self, Forfeit::IllegalMove { .. })
    }
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Termination {
    /// By the rules: a side without a legal move lost, or a draw rule applied.
    Rules(Outcome),
    /// The safety cap on plies was reached; scored a draw.
    PlyLimit {
        /// Plies played by the players.
        plies: usize,
    },
    /// A player forfeited.
    Forfeit {
        /// The side that forfeited (it loses).
        loser: Color,
        /// Why.
        reason: Forfeit,
    },
}

impl Termination {
    /// The winner, if any.
    pub fn winner(&self) -> Option<Color> {
        match self {
            Termination::Rules(Outcome::Win { winner, .. }) => Some(*winner),
            Termination::Rules(Outcome::Draw(_)) | Termination::PlyLimit { .. } => None,
            Termination::Forfeit { loser, .. } => Some(!*loser),
        }
    }

    /// The PDN result.
    pub fn result(&self) -> GameResult {
        match self.winner() {
            Some(Color::White) => GameResult::WhiteWins,
            Some(Color::Black) => GameResult::BlackWins,
            None => GameResult::Draw,
        }
    }

    /// A short class for tallies: `no pieces`, `no moves`, `repetition`, `no progress`,
    /// `no capture`, `16-move rule`, `5-move rule`, `ply limit`, `illegal move`, `crash`,
    /// `time`, `protocol`.
    pub fn kind(&self) -> &'static str {
        match self {
            Termination::Rules(Outcome::Win { reason: WinReason::NoPieces, .. }) => "no pieces",
            Termination::Rules(Outcome::Win { reason: WinReason::NoMoves, .. }) => "no moves",
            Termination::Rules(Outcome::Draw(r)) => match r {
                DrawReason::Repetition => "repetition",
                DrawReason::NoProgress => "no progress",
                DrawReason::NoCapture => "no capture",
                DrawReason::ThreeVsOne => "16-move rule",
                DrawReason::TwoVsOne => "5-move rule",
            },
            Termination::PlyLimit { .. } => "ply limit",
            Termination::Forfeit { reason, .. } => match reason {
                Forfeit::IllegalMove { .. } => "illegal move",
                Forfeit::Crashed { .. } => "crash",
                Forfeit::TimedOut { .. } => "time",
                Forfeit::Protocol { .. } => "protocol",
            },
        }
    }
}

impl fmt::Display for Termination {
    /// The reason in words, written to the PDN `Termination` tag.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Termination::Rules(outcome) => write!(f, "{outcome}"),
            Termination::PlyLimit { plies } => write!(f, "ply limit ({plies} plies without a result), scored a draw"),
            Termination::Forfeit { loser, reason } => {
                let who = loser.name();
                match reason {
                    Forfeit::IllegalMove { text } => write!(f, "{who} forfeits: illegal move `{text}`"),
                    Forfeit::Crashed { detail } => write!(f, "{who} forfeits: crashed: {detail}"),
                    Forfeit::TimedOut { elapsed, limit } => write!(
                        f,
                        "{who} forfeits: out of time ({:.3} s used, {:.3} s allowed)",
                        elapsed.as_secs_f64(),
                        limit.as_secs_f64()
                    ),
                    Forfeit::Protocol { detail } => write!(f, "{who} forfeits: protocol error: {detail}"),
                }
            }
        }
    }
}

/// One finished game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameRecord {
    /// The white player's name.
    pub white: String,
    /// The black player's name.
    pub black: String,
    /// Index of the opening in its set.
    pub opening: usize,
    /// The opening's first position.
    pub start: Position,
    /// Every move from `start`: the opening's moves, then the players'.
    pub moves: Vec<Move>,
    /// How many of `moves` belong to the opening.
    pub opening_plies: usize,
    /// The result.
    pub result: GameResult,
    /// Why the game ended.
    pub termination: Termination,
    /// Plies played by the players.
    pub plies: usize,
    /// Thinking time used by White and by Black (wall time of their `choose` calls).
    pub time_used: [Duration; 2],
}

impl GameRecord {
    /// The score of `color`'s player in half points: 2 win, 1 draw, 0 loss.
    pub fn half_points(&self, color: Color) -> u8 {
        match self.termination.winner() {
            None => 1,
            Some(w) if w == color => 2,
            Some(_) => 0,
        }
    }
}

/// Plays games between two players under fixed rules and time limits.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Referee {
    /// The rules every game is played and adjudicated under.
    pub rules: Rules,
    /// Safety cap on plies played by the players; reaching it is a draw ("ply limit").
    pub max_plies: usize,
    /// Time limits.
    pub time: TimeControl,
}

impl Default for Referee {
    fn default() -> Referee {
        Referee { rules: Rules::FMJD, max_plies: 600, time: TimeControl::NONE }
    }
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic".to_owned()
    }
}

impl Referee {
    /// Plays `opening` to the end with `white` and `black`, after telling each the seed of the
    /// game ([`Player::new_game`]).
    pub fn play(
        &self,
        white: &mut dyn Player,
        black: &mut dyn Player,
        opening: &Opening,
        seeds: [u64; 2],
    ) -> GameRecord {
        let names = [white.name(), black.name()];
        let players: [&mut dyn Player; 2] = [white, black];
        let mut game = opening.game(self.rules);
        let opening_plies = game.ply();
        let mut time_used = [Duration::ZERO; 2];
        let mut clocks = [self.time.base; 2];
        let finish = |game: &Game, termination: Termination, time_used: [Duration; 2]| GameRecord {
            white: names[0].clone(),
            black: names[1].clone(),
            opening: opening.index,
            start: opening.start,
            moves: game.moves().collect(),
            opening_plies,
            result: termination.result(),
            plies: game.ply() - opening_plies,
            termination,
            time_used,
        };

        for (i, color) in [Color::White, Color::Black].into_iter().enumerate() {
            let player = &mut *players[i];
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| player.new_game(seeds[i]))) {
                let detail = format!("panicked in new_game: {}", panic_text(&*payload));
                let termination = Termination::Forfeit { loser: color, reason: Forfeit::Crashed { detail } };
                return finish(&game, termination, time_used);
            }
        }

        loop {
            if let Some(outcome) = game.outcome() {
                return finish(&game, Termination::Rules(outcome), time_used);
            }
            let plies = game.ply() - opening_plies;
            if plies >= self.max_plies {
                return finish(&game, Termination::PlyLimit { plies }, time_used);
            }
            let color = game.position().side_to_move();
            let i = color as usize;
            debug_assert_eq!([Color::White, Color::Black][i], color);
            let clock = ClockState {
                move_limit: self.time.move_limit,
                remaining: clocks[i],
                increment: self.time.increment,
                opponent_remaining: clocks[1 - i],
            };
            let limit = clock.budget();
            let player = &mut *players[i];
            let started = Instant::now();
            let answer = catch_unwind(AssertUnwindSafe(|| player.choose(&game, &clock)));
            let elapsed = started.elapsed();
            time_used[i] += elapsed;
            let forfeit = |reason| Termination::Forfeit { loser: color, reason };
            let mv = match answer {
                Err(payload) => {
                    let detail = format!("panicked: {}", panic_text(&*payload));
                    return finish(&game, forfeit(Forfeit::Crashed { detail }), time_used);
                }
                Ok(Err(error)) => return finish(&game, forfeit(Forfeit::from_error(error, elapsed, limit)), time_used),
                Ok(Ok(mv)) => mv,
            };
            if let Some(limit) = limit {
                if elapsed > limit {
                    return finish(&game, forfeit(Forfeit::TimedOut { elapsed, limit }), time_used);
                }
            }
            if game.play(mv).is_err() {
                return finish(&game, forfeit(Forfeit::IllegalMove { text: mv.to_hub() }), time_used);
            }
            if let Some(left) = clocks[i].as_mut() {
                *left = left.saturating_sub(elapsed) + self.time.increment;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::player::RandomPlayer;

    /// Plays the first legal move.
    struct First;
    impl Player for First {
        fn name(&self) -> String {
            "first".into()
        }
        fn choose(&mut self, game: &Game, _: &ClockState) -> Result<Move, PlayerError> {
            Ok(game.legal_moves()[0])
        }
    }

    #[test]
    fn plays_to_a_rules_result() {
        let opening = crate::openings::start_position().remove(0);
        let referee = Referee::default();
        let (mut a, mut b) = (RandomPlayer::new(1), RandomPlayer::new(2));
        let record = referee.play(&mut a, &mut b, &opening, [10, 11]);
        assert!(matches!(record.termination, Termination::Rules(_)), "{}", record.termination);
        assert_eq!(record.plies, record.moves.len());
        assert_eq!(record.result, record.termination.result());
        // The record replays to the same outcome.
        let mut game = Game::new(Rules::FMJD);
        for &mv in &record.moves {
            game.play(mv).unwrap();
        }
        assert_eq!(Some(Termination::Rules(game.outcome().unwrap())), Some(record.termination.clone()));
        // And the same seeds give the same game.
        let again = referee.play(&mut RandomPlayer::new(1), &mut RandomPlayer::new(2), &opening, [10, 11]);
        assert_eq!(again.moves, record.moves);
    }

    #[test]
    fn ply_limit_is_a_draw() {
        let opening = crate::openings::start_position().remove(0);
        let referee = Referee { max_plies: 7, ..Referee::default() };
        let record = referee.play(&mut First, &mut First, &opening, [0, 0]);
        assert_eq!(record.termination, Termination::PlyLimit { plies: 7 });
        assert_eq!(record.result, GameResult::Draw);
        assert_eq!(record.moves.len(), 7);
        assert!(record.termination.to_string().starts_with("ply limit"));
    }

    #[test]
    fn king_endings_end_by_the_rules() {
        // Only kings: no man move ever resets the 25-move rule, so the draw rules (or a
        // capture that wins) end every game long before the ply cap.
        let start = Position::from_fen("W:WK46,K50:BK1,K5").unwrap();
        let opening = Opening::from_position(0, "kings", start);
        for seed in 0..8 {
            let record = Referee::default().play(&mut RandomPlayer::new(seed), &mut RandomPlayer::new(99), &opening, [seed, 1]);
            assert!(matches!(record.termination, Termination::Rules(_)), "{}", record.termination);
            assert!(record.plies < 300, "{}", record.plies);
        }
    }
}
