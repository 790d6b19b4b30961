//! Monte-Carlo tree search for international draughts.
//!
//! - [`Evaluator`]: the batched seam to a network ([`EvalRequest`] in, [`Evaluation`] out), with
//!   test implementations [`Uniform`], [`Material`] and [`ExactEndgame`], and the native sparse
//!   network ([`NnueEvaluator`], `draughts-nnue`).
//! - [`Search`]: one tree engine with two root policies ([`Algorithm::Puct`],
//!   [`Algorithm::Gumbel`]), terminal states and draw rules from [`draughts_core::Game`], tree
//!   reuse between moves ([`Search::advance`]), and a resumable interface
//!   ([`Search::step`] / [`Search::provide`]) so that a caller can drive many searches and
//!   evaluate all their leaves in one batch ([`search_many`] does that for a set of searches).
//! - [`MctsConfig`]: every knob, deserialisable with unknown keys refused.
//!
//! Values are `win - loss` in [-1, 1] from the point of view of the side to move at the node
//! they belong to, negated on the way up the tree. Terminal nodes (no legal move, or a draw rule
//! of the game's [`draughts_core::Rules`], repetition included) get their exact value and are
//! never sent to the evaluator.
//!
//! Choices worth knowing:
//! - Gumbel's `sigma(q) = (c_visit + max N) * c_scale * q` takes `q` rescaled to [0, 1] from the
//!   known value bounds [-1, 1] (not from the min and max seen in the tree): a value difference
//!   means the same thing in every position and at every visit count.
//! - A Gumbel search's `root_value` is the value of its improved policy (see
//!   [`SearchOutcome::root_value`]); a PUCT search's is the visit mean.
//! - The number of simulations does not count the evaluation of the root.
//! - Results depend only on the configuration (seed included) and on the evaluations received,
//!   never on how a caller batches searches together.
//!
//! ```
//! use draughts_core::{Game, Rules};
//! use draughts_mcts::{search_many, Budget, Material, MctsConfig, Search};
//!
//! let config = MctsConfig::default(); // Gumbel, 32 simulations
//! let mut search = Search::new(Game::new(Rules::FMJD), config)?;
//! let outcome = search.search(&Material::default(), config.full_budget())?;
//! search.advance(outcome.best)?; // keeps the subtree for the next move
//!
//! // Many games at once: one evaluator call per round for all of them.
//! let mut pool: Vec<Search> = (0..4)
//!     .map(|seed| Search::new(Game::new(Rules::FMJD), MctsConfig { seed, ..config }))
//!     .collect::<Result<_, _>>()?;
//! let outcomes = search_many(&mut pool, &[Budget::full(16)], &Material::default())?;
//! assert_eq!(outcomes.len(), 4);
//! # Ok::<(), draughts_mcts::SearchError>(())
//! ```
//!
//! This crate does no I/O and does not link libtorch.

mod config;
mod evaluator;
mod exact;
mod noise;
mod nnue;
mod search;
mod tree;

pub use config::{Algorithm, Budget, ConfigError, MctsConfig, SearchKind};
pub use evaluator::{EvalError, EvalRequest, Evaluation, Evaluator, Material, Uniform};
pub use exact::{ExactEndgame, ExactPolicy, Solved};
pub use nnue::NnueEvaluator;
pub use search::{search_many, ChildStats, Search, SearchError, SearchOutcome, Step, Ticket};
