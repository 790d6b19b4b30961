//! Self-play for international draughts.
//!
//! - [`Pool`] ([`pool`]): one worker's games in flight, each with its own
//!   [`draughts_mcts::Search`] (tree reuse between moves). Every round steps all searches, gathers
//!   their leaves and evaluates them in full batches of `max_batch`, so the network always sees
//!   full batches. Moves are picked with a temperature schedule from a seeded generator per game;
//!   playout-cap randomisation, resignation (with a playthrough fraction that checks it) and a
//!   ply limit decide what is recorded and when a game ends.
//! - [`alphabeta`]: the other generator, the alpha-beta engine at a fixed node budget with the
//!   learned (or hand-made) evaluation ([`run_alphabeta_workers`]).
//! - [`run_workers`]: several pools on threads, each with its own evaluator from a factory, and
//!   one sink on the calling thread that receives every [`FinishedGame`].
//! - [`TrainingRecord`] ([`record`]): a searched position (bitboards, side, counters, repetitions),
//!   its sparse policy target, the game result, the root value, moves left and flags.
//! - [`shard`]: the versioned, checksummed shard format; [`ShardWriter`] writes shards (and the
//!   PDN of their games) atomically; [`read_shard`] and [`read_all`] check them and skip damaged
//!   ones with a clear error.
//!
//! This crate never links libtorch: it takes an [`draughts_mcts::Evaluator`] or an engine
//! config, and the binary plugs the network in.

pub mod alphabeta;
mod codec;
mod config;
pub mod pool;
pub mod record;
pub mod shard;

pub use alphabeta::{opponent_side, run_alphabeta_workers};
pub use config::{ConfigError, Generator, SelfplayConfig};
pub use pool::{game_seed, run_workers, FinishedGame, Games, Pool, PoolStats, Progress, SelfplayError, Stop};
pub use record::{
    quantise_policy, GameEnd, GameSummary, MoveKey, NotLegal, PolicyEntry, RecordFlags, ResignPoint, TrainingRecord,
    Wdl, POLICY_SCALE,
};
pub use shard::{
    decode_shard, encode_shard, list_shards, played_indices, read_all, read_shard, write_shard, Shard, ShardError, ShardErrorKind,
    ShardHeader, ShardSet, ShardWriter,
};
