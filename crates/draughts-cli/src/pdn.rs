//! `draughts pdn`.

use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: PdnCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PdnCommand {
    /// Read every game of a PDN file, replay every move and report every error.
    Check {
        /// The PDN file.
        file: std::path::PathBuf,
    },
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        PdnCommand::Check { file } => {
            anyhow::bail!("pdn check {}: not wired yet", file.display())
        }
    }
}
