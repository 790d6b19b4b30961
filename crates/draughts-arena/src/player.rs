//! The player seam: anything that picks a move in a game.

use std::time::Duration;

use draughts_core::{Game, Move};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

/// A player: an engine, a network, an external program, or a test double.
///
/// The referee calls [`Player::new_game`] before every game and [`Player::choose`] whenever the
/// player is to move. A player never has to check the game for its end: `choose` is only called
/// while the game goes on, so there is at least one legal move.
pub trait Player {
    /// The name written in results and PDN `White`/`Black` tags.
    fn name(&self) -> String;

    /// A new game starts. `seed` is derived from the match seed and the game's number, so a
    /// player that makes random choices is reproducible however games are scheduled; players
    /// that keep state between games (hash tables, an external process) reset it here.
    fn new_game(&mut self, seed: u64) {
        let _ = seed;
    }

    /// The move to play in the current position of `game`. The game carries its history (for
    /// repetitions) and rules; `clock` says how much time the player has.
    fn choose(&mut self, game: &Game, clock: &ClockState) -> Result<Move, PlayerError>;
}

impl std::fmt::Debug for dyn Player {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Player({})", self.name())
    }
}

impl<P: Player + ?Sized> Player for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }
    fn new_game(&mut self, seed: u64) {
        (**self).new_game(seed)
    }
    fn choose(&mut self, game: &Game, clock: &ClockState) -> Result<Move, PlayerError> {
        (**self).choose(game, clock)
    }
}

/// Why a player produced no legal move. The referee scores each as a loss for the player.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum PlayerError {
    /// The player named a move that is not legal (or not a move): `text` is what it said.
    #[error("illegal move `{text}`")]
    IllegalMove {
        /// The move as the player gave it.
        text: String,
    },
    /// The player failed: an engine process died, a model could not be evaluated, a panic.
    #[error("crashed: {detail}")]
    Crashed {
        /// What happened.
        detail: String,
    },
    /// The player ran out of time (an out-of-process player killed by its client's time-out).
    #[error("out of time")]
    TimedOut,
    /// The player broke its protocol (an answer that cannot be parsed, a wrong message).
    #[error("protocol error: {detail}")]
    Protocol {
        /// What was wrong.
        detail: String,
    },
}

/// The time situation of the player to move.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ClockState {
    /// The hard limit for this move: a player that returns later loses on time.
    pub move_limit: Option<Duration>,
    /// Time left on the player's game clock, if the match uses one. Using more loses on time.
    pub remaining: Option<Duration>,
    /// Time added to the player's clock after each of its moves.
    pub increment: Duration,
    /// Time left on the opponent's game clock.
    pub opponent_remaining: Option<Duration>,
}

impl ClockState {
    /// No limit at all.
    pub const UNLIMITED: ClockState =
        ClockState { move_limit: None, remaining: None, increment: Duration::ZERO, opponent_remaining: None };

    /// The most this move may take: the smaller of the move limit and the time left; `None` when
    /// neither is set.
    pub fn budget(&self) -> Option<Duration> {
        match (self.move_limit, self.remaining) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Mixes a seed with a stream number (splitmix64 finaliser), so that related seeds give
/// unrelated random streams.
pub fn mix_seed(seed: u64, stream: u64) -> u64 {
    let mut x = seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0xD1B5_4A32_D192_ED03);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Plays a uniformly random legal move. Its choices depend only on its own seed and the seed of
/// the game ([`Player::new_game`]), so matches with it are reproducible.
#[derive(Clone, Debug)]
pub struct RandomPlayer {
    seed: u64,
    rng: ChaCha8Rng,
}

impl RandomPlayer {
    /// A random player with base seed `seed`.
    pub fn new(seed: u64) -> RandomPlayer {
        RandomPlayer { seed, rng: ChaCha8Rng::seed_from_u64(seed) }
    }
}

impl Player for RandomPlayer {
    fn name(&self) -> String {
        if self.seed == 0 {
            "random".to_owned()
        } else {
            format!("random:seed={}", self.seed)
        }
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(mix_seed(self.seed, seed));
    }

    fn choose(&mut self, game: &Game, _clock: &ClockState) -> Result<Move, PlayerError> {
        let moves = game.legal_moves();
        moves
            .choose(&mut self.rng)
            .copied()
            .ok_or_else(|| PlayerError::Crashed { detail: format!("no legal move in {}", game.position().to_fen()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use draughts_core::Rules;

    #[test]
    fn random_player_depends_on_seeds_only() {
        let game = Game::new(Rules::FMJD);
        let picks = |base, game_seed| {
            let mut p = RandomPlayer::new(base);
            p.new_game(game_seed);
            (0..8).map(|_| p.choose(&game, &ClockState::UNLIMITED).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(picks(1, 2), picks(1, 2));
        assert_ne!(picks(1, 2), picks(1, 3));
        assert_ne!(picks(1, 2), picks(7, 2));
        let legal = game.legal_moves();
        assert!(picks(5, 5).iter().all(|m| legal.contains(m)));
    }

    #[test]
    fn clock_budget() {
        let s = Duration::from_secs;
        assert_eq!(ClockState::UNLIMITED.budget(), None);
        let c = ClockState { move_limit: Some(s(3)), remaining: Some(s(2)), ..ClockState::UNLIMITED };
        assert_eq!(c.budget(), Some(s(2)));
        let c = ClockState { move_limit: Some(s(3)), ..ClockState::UNLIMITED };
        assert_eq!(c.budget(), Some(s(3)));
    }

    #[test]
    fn mixed_seeds_differ() {
        assert_ne!(mix_seed(0, 0), mix_seed(0, 1));
        assert_ne!(mix_seed(1, 0), mix_seed(0, 1));
        assert_eq!(mix_seed(42, 7), mix_seed(42, 7));
    }
}
