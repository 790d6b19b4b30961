//! The Hub protocol (version 2, as spoken by the Hub GUI and Scan 3): line-based, over an
//! engine's standard input and output.
//!
//! - [`line`](mod@line): the line grammar `command name=value name="quoted value" flag`, a bounded reader.
//! - [`engine`]: the engine side, [`run_hub`] over any reader and writer.
//! - [`client`]: the GUI side, [`HubClient`], which runs any Hub engine as a child process.

pub mod client;
pub mod engine;
pub mod line;

pub use client::{
    split_command, EngineId, History, HubClient, HubClientOptions, HubError, SearchResult,
};
pub use engine::{run_hub, run_hub_with, HubConfig};
pub use line::{HubLine, LineError, MAX_LINE};
