//! `draughts pdn`.

use std::fs::File;
use std::io::BufReader;
use std::process::ExitCode;

use anyhow::Context;
use draughts_core::Rules;

use crate::bad_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: PdnCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PdnCommand {
    /// Read every game of a PDN file, replay every move and report every error. Exit status 2
    /// when any game has an error.
    Check {
        /// The PDN file (`-` for standard input).
        file: std::path::PathBuf,
        /// Rules preset the games are replayed under: fmjd, no-capture-25, promote-in-capture.
        #[arg(long, default_value = "fmjd")]
        rules: String,
    },
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        PdnCommand::Check { file, rules } => {
            let rules: Rules = rules.parse().map_err(bad_input)?;
            let summary = if file.as_os_str() == "-" {
                draughts_pdn::check(std::io::stdin().lock(), &rules)
            } else {
                let f = File::open(&file)
                    .with_context(|| format!("cannot open {}", file.display()))
                    .map_err(bad_input)?;
                draughts_pdn::check(BufReader::new(f), &rules)
            };
            for e in &summary.errors {
                eprintln!("{}: {e}", file.display());
            }
            if summary.games_failed > summary.errors.len() {
                eprintln!("({} more errors not shown)", summary.games_failed - summary.errors.len());
            }
            println!("{}: {summary}", file.display());
            Ok(if summary.games_failed > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
        }
    }
}
