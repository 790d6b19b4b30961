//! Training-run reports: PNG plots and a Markdown summary from a run's `metrics.jsonl`.
//!
//! The stages of the training loop append one JSON object per line to `RUN/metrics.jsonl`
//! (see [`metrics`] for the stages and fields used). [`write_report`] reads that file as a
//! stream and writes into an output directory (usually `RUN/report`):
//!
//! - `losses.png`: the training losses against the optimiser step;
//! - `rating.png`: Elo against each ladder opponent, with 95% intervals as error bars;
//! - `learning.png`: the same against the hours of self-play and training before each
//!   evaluation (the learning curve per hour of work);
//! - `throughput.png`: self-play games per hour, network evaluations per second and training
//!   samples per second against elapsed time;
//! - `summary.md`: the numbers, links to the plots, and the lines that could not be read.
//!
//! A plot without data is not drawn (the summary says why). Bad lines never stop a report:
//! they are skipped and listed as [`LineWarning`]s. Every file is first written under a
//! temporary name in the output directory and then renamed, so a reader never sees half a
//! file.
//!
//! Text is drawn with DejaVu Sans embedded in the binary (crate `dejavu`) through plotters'
//! `ab_glyph` renderer: no system fonts, fontconfig or freetype are needed.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

pub mod metrics;
mod plots;
mod summary;

pub use metrics::{read_metrics, LineWarning, Metrics};

/// File name of the metrics log inside a run directory.
pub const METRICS_FILE: &str = "metrics.jsonl";
/// File name of the copy of the effective configuration inside a run directory.
pub const CONFIG_FILE: &str = "config.toml";
/// File name of the Markdown summary inside the output directory.
pub const SUMMARY_FILE: &str = "summary.md";
/// File name of the loss plot.
pub const LOSSES_PNG: &str = "losses.png";
/// File name of the rating plot.
pub const RATING_PNG: &str = "rating.png";
/// File name of the learning curve (ratings against hours of work).
pub const LEARNING_PNG: &str = "learning.png";
/// File name of the throughput plot.
pub const THROUGHPUT_PNG: &str = "throughput.png";

/// Why no report could be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The run directory does not exist or is not a directory.
    #[error("run directory {path} does not exist or is not a directory")]
    RunDirNotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The run directory has no metrics file.
    #[error(
        "no metrics file: {path} does not exist (has a training stage run in this directory?)"
    )]
    MissingMetrics {
        /// Where the file was expected.
        path: PathBuf,
    },
    /// The metrics file has no line the report can use.
    #[error(
        "metrics file {path} has no usable line ({lines} lines read, {skipped} skipped){}",
        first_problem.as_ref().map(|w| format!("; first problem: line {}: {}", w.line, w.message)).unwrap_or_default()
    )]
    EmptyMetrics {
        /// The metrics file.
        path: PathBuf,
        /// Lines read, blank ones included.
        lines: u64,
        /// Lines skipped as unusable.
        skipped: u64,
        /// The first unusable line, if any.
        first_problem: Option<LineWarning>,
    },
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// A file or directory could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        source: io::Error,
    },
    /// Drawing or encoding a plot failed.
    #[error("cannot draw {path}: {message}")]
    Plot {
        /// The plot file that was being drawn.
        path: PathBuf,
        /// What plotters or the PNG encoder said.
        message: String,
    },
    /// The embedded font was rejected by the text renderer (a packaging bug).
    #[error("the embedded DejaVu Sans font could not be loaded by plotters")]
    Font,
}

/// What happened to one plot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlotStatus {
    /// The plot was written to this path.
    Written(PathBuf),
    /// The plot was not drawn because its data are missing.
    Skipped {
        /// Which data are missing, e.g. "no evaluation line has an Elo".
        reason: String,
    },
}

/// One plot of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotOutcome {
    /// File name in the output directory, e.g. `losses.png`.
    pub name: &'static str,
    /// What the plot shows, in a few words.
    pub description: &'static str,
    /// Written or skipped.
    pub status: PlotStatus,
}

/// What [`write_report`] did.
#[derive(Debug, Clone)]
pub struct ReportSummary {
    /// Path of `summary.md`.
    pub summary_path: PathBuf,
    /// The plots, written or skipped, in the order of the summary.
    pub plots: Vec<PlotOutcome>,
    /// Lines in the metrics file, blank ones included.
    pub lines: u64,
    /// Lines used.
    pub records: u64,
    /// Lines skipped as unusable.
    pub skipped_lines: u64,
    /// Problems found, each naming its line (at most [`metrics::MAX_KEPT_WARNINGS`]).
    /// The library prints nothing: the caller shows these.
    pub warnings: Vec<LineWarning>,
    /// Number of problems, including those not kept in `warnings`.
    pub warning_count: u64,
}

/// Reads `run_dir/metrics.jsonl` and writes the plots and `summary.md` into `out_dir`
/// (created if needed).
///
/// A plot that has no data is not drawn, and a file of that name left by an earlier report is
/// removed so that the directory does not show stale data.
///
/// Errors: [`ReportError::RunDirNotFound`], [`ReportError::MissingMetrics`],
/// [`ReportError::EmptyMetrics`] (no usable line at all), and I/O or drawing failures.
pub fn write_report(run_dir: &Path, out_dir: &Path) -> Result<ReportSummary, ReportError> {
    if !run_dir.is_dir() {
        return Err(ReportError::RunDirNotFound {
            path: run_dir.to_path_buf(),
        });
    }
    let metrics_path = run_dir.join(METRICS_FILE);
    let metrics = read_metrics(&metrics_path)?;
    if metrics.is_empty() {
        return Err(ReportError::EmptyMetrics {
            path: metrics_path,
            lines: metrics.lines,
            skipped: metrics.skipped_lines,
            first_problem: metrics.warnings.first().cloned(),
        });
    }
    fs::create_dir_all(out_dir).map_err(|source| ReportError::Write {
        path: out_dir.to_path_buf(),
        source,
    })?;
    if !plots::register_fonts() {
        return Err(ReportError::Font);
    }

    type Draw = fn(&Metrics) -> Result<plots::Rendered, String>;
    let jobs: [(&'static str, &'static str, Draw); 4] = [
        (LOSSES_PNG, "training losses against step", plots::losses),
        (
            RATING_PNG,
            "Elo against each ladder opponent",
            plots::rating,
        ),
        (
            LEARNING_PNG,
            "Elo against each ladder opponent by hours of self-play and training",
            plots::learning,
        ),
        (
            THROUGHPUT_PNG,
            "self-play and training throughput over time",
            plots::throughput,
        ),
    ];
    let mut outcomes = Vec::with_capacity(jobs.len());
    for (name, description, draw) in jobs {
        let path = out_dir.join(name);
        let status = match draw(&metrics).map_err(|message| ReportError::Plot {
            path: path.clone(),
            message,
        })? {
            plots::Rendered::Png(bytes) => {
                PlotStatus::Written(write_atomically(out_dir, name, &bytes)?)
            }
            plots::Rendered::NoData(reason) => {
                remove_stale(&path)?;
                PlotStatus::Skipped { reason }
            }
        };
        outcomes.push(PlotOutcome {
            name,
            description,
            status,
        });
    }

    let ctx = summary::Context {
        run_dir,
        config_present: run_dir.join(CONFIG_FILE).is_file(),
        plots: &outcomes,
    };
    let text = summary::render(&metrics, &ctx);
    let summary_path = write_atomically(out_dir, SUMMARY_FILE, text.as_bytes())?;
    Ok(ReportSummary {
        summary_path,
        plots: outcomes,
        lines: metrics.lines,
        records: metrics.records,
        skipped_lines: metrics.skipped_lines,
        warnings: metrics.warnings,
        warning_count: metrics.warning_count,
    })
}

/// Writes `dir/.NAME.tmp-PID-N`, flushes it to disk, and renames it to `dir/NAME`.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, ReportError> {
    let final_path = dir.join(name);
    // Process id and a counter: two reports written at once never share a temporary file.
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
    let attempt = || -> io::Result<()> {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &final_path)
    };
    attempt().map_err(|source| {
        // Best effort: the temporary file may not even exist.
        let _ = fs::remove_file(&tmp);
        ReportError::Write {
            path: final_path.clone(),
            source,
        }
    })?;
    Ok(final_path)
}

fn remove_stale(path: &Path) -> Result<(), ReportError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(ReportError::Write {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}
