//! The alpha-beta baseline engine for international draughts (10x10, FMJD rules).
//!
//! It is the yardstick every trained network is measured against: a fast, deterministic
//! iterative-deepening principal-variation search ([`Engine`]) over a cheap hand-made evaluation
//! ([`Weights`], [`evaluate`]), with a transposition table, exact handling of forced captures and
//! of every draw rule of [`draughts_core::Rules`].
//!
//! ```
//! use std::sync::atomic::AtomicBool;
//! use draughts_core::{Game, Rules};
//! use draughts_engine::{Engine, EngineConfig, Limits};
//!
//! let mut engine = Engine::new(EngineConfig::default()).unwrap();
//! let game = Game::new(Rules::FMJD);
//! let result = engine.search(&game, &Limits::depth(4), &AtomicBool::new(false), &mut |_| {});
//! assert!(result.best.is_some());
//! ```
//!
//! - The evaluation is a seam ([`Evaluation`]): the hand-made one ([`Weights`]) is the
//!   baseline; a sparse network from `draughts-nnue` ([`EngineConfig::network`]) is the learned
//!   one, its accumulator updated move by move inside the search ([`Learned`]).
//! - Limits: depth, nodes, move time, game clock and a stop flag ([`Limits`]); a search without a
//!   time limit is reproducible to the node.
//! - Levels for people: [`Level`] maps easy, medium and hard to limits.
//! - [`bench()`]: a fixed set of positions searched to a fixed depth; its node count is the
//!   regression check for search changes (Stockfish's `bench`).

mod bench;
mod endgames;
mod eval;
mod evaluation;
mod limits;
mod options;
mod search;
mod tt;

pub use bench::{bench, bench_with, BenchPosition, BenchResult, BENCH_DEPTH, BENCH_POSITIONS};
pub use endgames::{Endgames, RULE_MARGIN, TB_WIN};
pub use eval::{evaluate, Evaluator, Weights};
pub use evaluation::{one_step_moves, score_from_wdl, wdl_from_score, Evaluation, HandMade, Learned, LEARNED_SCORE_LIMIT};
pub use limits::{Clock, Level, Limits, Noise, UnknownLevel, Variety, EASY_NOISE_MARGIN};
pub use options::{OptionError, SearchOptions};
pub use search::{mate_distance, Engine, EngineConfig, SearchInfo, SearchResult, MATE, MATE_BOUND, MAX_DEPTH, MAX_PLY};
pub use tt::TtError;
