//! `draughts moves`.

use std::io::{BufRead, BufWriter, Write};
use std::process::ExitCode;

use draughts_core::{Move, Position, Rules};

use crate::bad_input;

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum Notation {
    /// `32-28`, `28x19x23` (from, to, every captured square ascending).
    Hub,
    /// `32-28`, `28x19`; the landing path when two captures share from and to.
    Pdn,
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["fen", "stdin"])))]
pub struct Args {
    /// The position as FEN; prints one move per line.
    #[arg(long)]
    fen: Option<String>,
    /// Read one FEN per line and print `FEN<TAB>count<TAB>moves` for each, in order.
    #[arg(long)]
    stdin: bool,
    /// Move notation.
    #[arg(long, value_enum, default_value = "hub")]
    notation: Notation,
    /// Rules preset: fmjd, no-capture-25, promote-in-capture.
    #[arg(long, default_value = "fmjd")]
    rules: String,
}

fn write_move(out: &mut String, pos: &Position, mv: &Move, notation: Notation, rules: &Rules) {
    match notation {
        Notation::Hub => out.push_str(&mv.to_hub()),
        Notation::Pdn => out.push_str(&pos.to_pdn(mv, rules)),
    }
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let rules: Rules = a.rules.parse().map_err(bad_input)?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    if let Some(fen) = &a.fen {
        let pos = Position::from_fen(fen).map_err(bad_input)?;
        let mut line = String::new();
        for mv in pos.legal_moves_with(&rules) {
            line.clear();
            write_move(&mut line, &pos, &mv, a.notation, &rules);
            writeln!(out, "{line}")?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    // --stdin: one FEN per line. A bad line is reported on stderr with its line number and left
    // out of the output; the other lines are still answered, and the exit status is 2 at the end.
    let stdin = std::io::stdin();
    let mut bad = 0usize;
    let mut line = String::new();
    let mut text = String::new();
    let mut input = stdin.lock();
    let mut number = 0usize;
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            break;
        }
        number += 1;
        let fen = line.trim();
        if fen.is_empty() {
            continue;
        }
        match Position::from_fen(fen) {
            Ok(pos) => {
                let moves = pos.legal_moves_with(&rules);
                text.clear();
                text.push_str(fen);
                text.push('\t');
                text.push_str(&moves.len().to_string());
                text.push('\t');
                for (i, mv) in moves.iter().enumerate() {
                    if i > 0 {
                        text.push(' ');
                    }
                    write_move(&mut text, &pos, mv, a.notation, &rules);
                }
                text.push('\n');
                out.write_all(text.as_bytes())?;
            }
            Err(e) => {
                bad += 1;
                out.flush()?;
                eprintln!("error: line {number}: {e}");
            }
        }
    }
    out.flush()?;
    if bad > 0 {
        eprintln!("error: {bad} line(s) of {number} were not valid FEN");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
