//! The `draughts` command. It parses arguments, runs the commands that only play (the library,
//! without libtorch) and hands the ones that need libtorch to `draughts-train` (see
//! `draughts_cli::handoff`). Exit codes: 0 success, 1 failure, 2 bad input, always with a message
//! that names what is wrong and where.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use draughts_cli::handoff::{self, about};
use draughts_cli::{error, Cli, PlayCommand};

#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Play(PlayCommand),
    #[command(about = about::SELFPLAY)]
    Selfplay(Training),
    #[command(about = about::TRAIN)]
    Train(Training),
    #[command(about = about::LOOP)]
    Loop(Training),
    #[command(about = about::EXPORT)]
    Export(Training),
    #[command(about = about::BENCH)]
    Bench(Training),
}

/// The arguments of a training command, read by `draughts-train` (which also answers `--help`).
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
struct Training {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    args: Vec<OsString>,
}

fn main() -> ExitCode {
    let cli = Cli::<Command>::parse();
    let result = match cli.command {
        Command::Play(c) => {
            let models = c.models();
            match handoff::first_resnet(&models) {
                Some(m) => Err(handoff::exec_train(&format!("the ResNet model {}", m.display()))),
                None => c.run(),
            }
        }
        Command::Selfplay(_) | Command::Train(_) | Command::Loop(_) | Command::Export(_) | Command::Bench(_) => {
            Err(handoff::exec_train("this command"))
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => error::report(&e),
    }
}
