//! Evaluation of draughts players: who is stronger, by how much, and how sure we are.
//!
//! - [`Player`]: the seam. [`RandomPlayer`] lives here; the alpha-beta engine and Hub engines
//!   are adapted in [`adapters`]; network players come from the program through a
//!   [`PlayerFactory`].
//! - [`PlayerSpec`]: `random`, `alphabeta:depth=6`, `mcts:model=DIR,sims=64`,
//!   `policy:model=DIR`, `hub:cmd="PATH ARGS"`, `dxp:addr=HOST:PORT`, parsed with clear errors.
//! - [`openings`]: the shipped balanced openings and user files (FEN list or PDN).
//! - [`Referee`]: one game under the full rules; illegal moves, crashes, time-outs and
//!   protocol errors lose, with the reason recorded.
//! - [`run_match`]: game pairs (each opening twice, colours swapped) on worker threads, results
//!   in a deterministic order, every game written as PDN; [`MatchResult`] serialises to JSON.
//! - [`stats`]: W/D/L, Elo with 95% intervals from pentanomial statistics, LOS, the GSPRT
//!   ([`Sprt`]) and maximum-likelihood ratings; [`run_tournament`] plays a round robin.
//!
//! The library prints nothing; progress reaches the caller through callbacks.
//!
//! ```
//! use std::ops::ControlFlow;
//! use draughts_arena::{maker, run_match, Builtin, MatchConfig, PlayerSpec, Sprt, SprtConfig};
//!
//! let factory = Builtin::new(); // `Builtin::with_external(f)` adds mcts/policy/dxp players
//! let a = PlayerSpec::parse("alphabeta:depth=1").unwrap();
//! let b = PlayerSpec::parse("random:seed=1").unwrap();
//! let config = MatchConfig { games: 4, concurrency: 2, seed: 7, ..MatchConfig::default() };
//! let (make_a, make_b) = (maker(&factory, &a), maker(&factory, &b));
//! let mut sprt = Sprt::new(SprtConfig::default()).unwrap();
//! let result = run_match(&config, &make_a, &make_b, |p| {
//!     let _line = p.summary.progress_line(); // "+2 =0 -0  score 100.0%  Elo +inf [...]"
//!     match p.pair {
//!         Some(pair) if sprt.add_pair(pair).is_decided() => ControlFlow::Break(()),
//!         _ => ControlFlow::Continue(()),
//!     }
//! })
//! .unwrap();
//! assert_eq!(result.games, 4);
//! assert_eq!(result.pairs, 2);
//! ```

pub mod adapters;
pub mod openings;
pub mod player;
pub mod referee;
pub mod runner;
pub mod spec;
pub mod stats;
pub mod tournament;

pub use adapters::{AlphaBetaPlayer, HubPlayer};
pub use openings::{Opening, OpeningError, OpeningErrorKind};
pub use player::{mix_seed, ClockState, Player, PlayerError, RandomPlayer};
pub use referee::{Forfeit, GameRecord, Referee, Termination, TimeControl};
pub use runner::{format_elo, run_match, run_match_into, MatchConfig, MatchError, MatchGame, MatchResult, Maker, PdnFile, Progress};
pub use spec::{
    maker, BuildError, Builtin, Named, NoFactory, PlayerFactory, PlayerKind, PlayerSpec, SearchLimits, SpecError,
    SpecErrorKind, KINDS,
};
pub use stats::{Estimate, PairScore, Pentanomial, Sprt, SprtConfig, SprtError, SprtStatus, Wdl};
pub use tournament::{run_tournament, Entrant, Pairing, TournamentResult};
