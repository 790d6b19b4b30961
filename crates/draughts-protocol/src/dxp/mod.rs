//! DXP, the DamExchange Protocol: two draughts programs play over TCP (default port 27531).
//!
//! - [`message`]: the seven message types and their fixed-width layouts.
//! - [`conn`]: NUL framing over any stream, with a bound on message size.
//! - [`game`]: the [`Initiator`] and [`Follower`] roles, refereed with the full rules, and the
//!   entry points [`dxp_listen`] and [`dxp_connect`].

pub mod conn;
pub mod game;
pub mod message;

pub use conn::{Connection, DxpError, Transport};
pub use game::{
    dxp_connect, dxp_listen, ConnectOptions, DxpListener, EndCause, Follower, GameRecord,
    Initiator, ListenOptions, PlayerOptions, Verdict, DEFAULT_PORT,
};
pub use message::{
    AcceptCode, BackCode, BackRequest, EndReason, GameAccept, GameEnd, GameRequest, Message,
    MessageError, MoveMessage, StopCode, MAX_MESSAGE, VERSION,
};
