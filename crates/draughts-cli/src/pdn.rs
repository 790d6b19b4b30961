//! `draughts pdn`.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use draughts_core::Rules;
use draughts_pdn::CheckSummary;

use crate::bad_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: PdnCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PdnCommand {
    /// Read every game of a PDN file, replay every move and report every error and warning (what
    /// the reader had to assume to read a game). Exit status 2 when any game has an error;
    /// warnings alone do not fail.
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
            for line in report(&file, &summary) {
                eprintln!("{line}");
            }
            println!("{}: {summary}", file.display());
            Ok(if summary.games_failed > 0 { ExitCode::from(2) } else { ExitCode::SUCCESS })
        }
    }
}

/// The lines `draughts pdn check` prints to standard error: the errors and warnings it kept, in
/// file order, one line each (`FILE: game 3, line 12: ...`, `FILE: warning: game 4, line 20:
/// ...`), then how many were not kept.
fn report(file: &Path, summary: &CheckSummary) -> Vec<String> {
    let mut lines = Vec::with_capacity(summary.errors.len() + summary.warnings.len() + 2);
    let (mut errors, mut warnings) = (summary.errors.iter().peekable(), summary.warnings.iter().peekable());
    loop {
        let error_first = match (errors.peek(), warnings.peek()) {
            (Some(e), Some(w)) => (e.game, e.line) <= (w.game, w.line),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        if error_first {
            lines.push(format!("{}: {}", file.display(), errors.next().expect("peeked")));
        } else {
            lines.push(format!("{}: warning: {}", file.display(), warnings.next().expect("peeked")));
        }
    }
    if summary.games_failed > summary.errors.len() {
        lines.push(format!("({} more errors not shown)", summary.games_failed - summary.errors.len()));
    }
    if summary.warning_count > summary.warnings.len() {
        lines.push(format!("({} more warnings not shown)", summary.warning_count - summary.warnings.len()));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_report_interleaves_errors_and_warnings() {
        let text = "1. 32-28 19-23 2. 28-19 14x23 *\n\n1. 32-29 *\n\n[GameType \"20,W,10,10,N1,0\"]\n1. 32-28 *\n";
        let summary = draughts_pdn::check(text.as_bytes(), &Rules::FMJD);
        let lines = report(Path::new("f.pdn"), &summary);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!(
            lines[0],
            "f.pdn: warning: game 1, line 1: move 2 (white): `28-19` is written as a quiet move; read as 28x19, the \
             only legal move it fits"
        );
        assert!(lines[1].starts_with("f.pdn: game 2, move 1 (white), line 3: `32-29` is not a legal move"), "{lines:?}");
        assert_eq!(
            lines[2],
            "f.pdn: warning: game 3, line 5: game type `20,W,10,10,N1,0` is not the standard `20` or \
             `20,W,10,10,N2,0`; read as international draughts (the moves replay under the standard numbering)"
        );
        assert_eq!(summary.to_string(), "3 games read, 2 ok, 1 failed, 5 moves, 2 warnings");
    }
}
