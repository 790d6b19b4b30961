//! The Hub and DXP draughts protocols, both sides of each.
//!
//! - [`Searcher`] is the seam to the engine: the drivers here only ever call it, so this crate
//!   depends on the rules core alone. [`FirstMove`] and [`RandomMover`] are trivial players for
//!   tests.
//! - [`hub`]: the engine side ([`run_hub`]) reads GUI commands from any reader and answers on
//!   any writer, searching on a separate thread; the client side ([`HubClient`]) runs any Hub
//!   engine as a child process with time-outs and checks its moves.
//! - [`dxp`]: typed messages with exact layouts, bounded framing, and the initiator and follower
//!   roles over TCP ([`dxp_listen`], [`dxp_connect`]), refereed with the full rules.
//!
//! Every read is bounded (Hub lines at [`hub::MAX_LINE`], DXP messages at 127 bytes) and every
//! malformed input becomes a typed error or a protocol error answer, never a panic.

pub mod dxp;
pub mod hub;
mod searcher;

pub use dxp::{
    dxp_connect, dxp_listen, ConnectOptions, DxpError, GameRecord, ListenOptions, PlayerOptions,
};
pub use hub::{run_hub, run_hub_with, HubClient, HubClientOptions, HubConfig, HubError};
pub use searcher::{Clock, FirstMove, Info, Param, ParamKind, RandomMover, SearchLimit, Searcher};
