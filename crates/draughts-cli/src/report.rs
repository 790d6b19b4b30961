//! `draughts report`.

use std::path::PathBuf;
use std::process::ExitCode;

use draughts_report::{write_report, PlotStatus};

use crate::bad_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run directory (holds metrics.jsonl).
    #[arg(long)]
    run: PathBuf,
    /// Where to write the plots and summary (default: RUN/report).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let out = a.out.clone().unwrap_or_else(|| a.run.join("report"));
    let summary = write_report(&a.run, &out).map_err(bad_input)?;
    for w in &summary.warnings {
        eprintln!("warning: {w}");
    }
    for p in &summary.plots {
        match &p.status {
            PlotStatus::Written(path) => println!("wrote {}", path.display()),
            PlotStatus::Skipped { reason } => println!("skipped {}: {reason}", p.name),
        }
    }
    println!("wrote {}", summary.summary_path.display());
    Ok(ExitCode::SUCCESS)
}
