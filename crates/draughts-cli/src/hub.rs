//! `draughts hub`: the Hub protocol engine on standard input and output.

use std::process::ExitCode;

use draughts_protocol::{run_hub_with, HubConfig};

use crate::nnplayers::EngineArgs;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    engine: EngineArgs,
}

impl Args {
    /// The model this engine plays with, if any.
    pub fn models(&self) -> Vec<std::path::PathBuf> {
        self.engine.models()
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let config = HubConfig { version: env!("CARGO_PKG_VERSION").to_owned(), ..HubConfig::default() };
    let stdin = std::io::stdin();
    let mut searcher = a.engine.engine()?;
    run_hub_with(searcher.as_mut(), stdin.lock(), std::io::stdout(), &config)?;
    Ok(ExitCode::SUCCESS)
}
