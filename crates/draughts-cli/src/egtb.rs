//! `draughts egtb`: build, probe and verify endgame databases (crate `draughts-egtb`).

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use draughts_core::Position;
use draughts_egtb::{build, verify, Material, Tablebase};
use indicatif::{ProgressBar, ProgressStyle};

use crate::bad_input;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: EgtbCommand,
}

#[derive(Debug, clap::Subcommand)]
enum EgtbCommand {
    /// Solve every material of 2 to N pieces (both sides to move) by retrograde analysis and
    /// write one table per material to DIR. Tables already in DIR are kept, so a stopped build
    /// resumes where it stopped.
    Build {
        /// The largest number of pieces on the board.
        #[arg(long)]
        pieces: u32,
        /// The directory of the tables (created if missing).
        #[arg(long)]
        out: PathBuf,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Print one JSON object per material instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Print `win`, `draw` or `loss` for the side to move of --fen, or read one FEN per line on
    /// standard input and print `FEN<TAB>VALUE` per line.
    Probe {
        /// The directory of the tables.
        #[arg(long)]
        dir: PathBuf,
        /// One position (FEN); without it, FENs are read from standard input.
        #[arg(long)]
        fen: Option<String>,
    },
    /// Time probes: seeded random positions of every table in DIR (both sides to move), split
    /// into positions with a capture for the side to move and quiet ones; prints ns per probe.
    Bench {
        /// The directory of the tables.
        #[arg(long)]
        dir: PathBuf,
        /// Positions drawn per table.
        #[arg(long, default_value_t = 20_000)]
        positions: u64,
        /// Seed of the draw.
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Check every stored value against the values of its successors. Exit status 1 if any
    /// disagrees.
    Verify {
        /// The directory of the tables.
        #[arg(long)]
        dir: PathBuf,
        /// Only these materials (four digits: white men, white kings, black men, black kings).
        #[arg(long = "material")]
        materials: Vec<String>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
    },
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    match a.command {
        EgtbCommand::Build { pieces, out, threads, json } => run_build(pieces, &out, threads, json),
        EgtbCommand::Probe { dir, fen } => run_probe(&dir, fen.as_deref()),
        EgtbCommand::Verify { dir, materials, threads } => run_verify(&dir, &materials, threads),
        EgtbCommand::Bench { dir, positions, seed } => run_bench(&dir, positions, seed),
    }
}

fn pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if threads == 0 {
        return Err(bad_input("--threads must be at least 1"));
    }
    Ok(rayon::ThreadPoolBuilder::new().num_threads(threads).build()?)
}

fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{prefix:>5} {elapsed_precise} [{bar:30}] {percent:>3}%  {msg}").expect("valid template").progress_chars("=> "),
    );
    pb.set_prefix(what.to_owned());
    pb
}

/// The databases of `--egtb DIR` for the engine (none without the flag); bad input when DIR is
/// not a directory of tables or holds no complete piece count.
pub fn load(dir: Option<&Path>) -> anyhow::Result<Option<draughts_engine::Endgames>> {
    let Some(dir) = dir else { return Ok(None) };
    let eg = draughts_engine::Endgames::new(std::sync::Arc::new(open(dir)?));
    if eg.pieces() < 2 {
        return Err(bad_input(format!(
            "--egtb {}: no complete set of tables (build them with `draughts egtb build --pieces N --out {}`)",
            dir.display(),
            dir.display()
        )));
    }
    Ok(Some(eg))
}

fn open(dir: &Path) -> anyhow::Result<Tablebase> {
    if !dir.is_dir() {
        return Err(bad_input(format!("{} is not a directory of endgame tables", dir.display())));
    }
    Tablebase::open(dir).map_err(bad_input)
}

fn run_build(pieces: u32, out: &Path, threads: Option<usize>, json: bool) -> anyhow::Result<ExitCode> {
    if !(2..=7).contains(&pieces) {
        return Err(bad_input(format!("--pieces {pieces}: from 2 to 7 (7 pieces would take about 235 GB)")));
    }
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let mut tb = open(out)?;
    let pool = pool(threads)?;
    let started = Instant::now();
    let mut rows = Vec::new();
    for m in Material::all_up_to(pieces) {
        if m.swapped() < m {
            continue; // solved with its twin
        }
        let twin = m.swapped();
        if tb.has(m) && tb.has(twin) {
            for x in if twin == m { vec![m] } else { vec![m, twin] } {
                let t = tb.table(x).map_err(bad_input)?;
                rows.push(Row { material: x, counts: t.counts(), seconds: None, bytes: 64 + t.payload_bytes() as u64 });
            }
            continue;
        }
        let name = if twin == m { m.to_string() } else { format!("{m}+{twin}") };
        let pb = bar(build::work_units(m), &m.to_string());
        pb.set_message(format!("solving {name}"));
        let t0 = Instant::now();
        let solved = pool.install(|| build::solve(&tb, m, &|n| pb.inc(n)));
        let seconds = t0.elapsed().as_secs_f64() / solved.tables.len() as f64;
        pb.finish_and_clear();
        for table in solved.tables {
            let (_, bytes) = table.write(out).map_err(anyhow::Error::new)?;
            let row = Row { material: table.material(), counts: table.counts(), seconds: Some(seconds), bytes };
            if json {
                println!("{}", row.json());
            }
            rows.push(row);
            tb.insert(table);
        }
    }
    rows.sort_by_key(|r| (r.material.pieces(), r.material.men(), r.material));
    if json {
        for r in rows.iter().filter(|r| r.seconds.is_none()) {
            println!("{}", r.json());
        }
    } else {
        print_rows(&rows);
    }
    eprintln!("{} tables of up to {pieces} pieces in {} ({:.1} s this run)", rows.len(), out.display(), started.elapsed().as_secs_f64());
    Ok(ExitCode::SUCCESS)
}

struct Row {
    material: Material,
    counts: draughts_egtb::Counts,
    /// `None` for a table that was already there.
    seconds: Option<f64>,
    bytes: u64,
}

impl Row {
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "material": self.material.to_string(),
            "pieces": self.material.pieces(),
            "positions": self.counts.positions(),
            "wins": self.counts.wins,
            "draws": self.counts.draws,
            "losses": self.counts.losses,
            "seconds": self.seconds,
            "bytes": self.bytes,
        })
    }
}

fn print_rows(rows: &[Row]) {
    println!(
        "{:<8} {:>6} {:>14} {:>14} {:>14} {:>14} {:>9} {:>12}",
        "material", "pieces", "positions", "wins", "draws", "losses", "seconds", "bytes"
    );
    let mut total = (0u64, 0u64, 0u64, 0u64, 0f64, 0u64);
    for r in rows {
        let c = r.counts;
        let secs = r.seconds.map_or_else(|| "kept".to_owned(), |s| format!("{s:.1}"));
        println!(
            "{:<8} {:>6} {:>14} {:>14} {:>14} {:>14} {:>9} {:>12}",
            r.material.to_string(),
            r.material.pieces(),
            c.positions(),
            c.wins,
            c.draws,
            c.losses,
            secs,
            r.bytes
        );
        total.0 += c.positions();
        total.1 += c.wins;
        total.2 += c.draws;
        total.3 += c.losses;
        total.4 += r.seconds.unwrap_or(0.0);
        total.5 += r.bytes;
    }
    println!("{:<8} {:>6} {:>14} {:>14} {:>14} {:>14} {:>9.1} {:>12}", "total", "", total.0, total.1, total.2, total.3, total.4, total.5);
}

fn run_probe(dir: &Path, fen: Option<&str>) -> anyhow::Result<ExitCode> {
    let tb = open(dir)?;
    if let Some(fen) = fen {
        let pos = Position::from_fen(fen).map_err(|e| bad_input(format!("--fen: {e}")))?;
        let v = tb.probe(&pos).map_err(|e| bad_input(format!("--fen {fen}: {e}")))?;
        println!("{v}");
        return Ok(ExitCode::SUCCESS);
    }
    let mut failed = 0usize;
    let stdin = std::io::stdin();
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.context("reading standard input")?;
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let result = Position::from_fen(text).map_err(|e| e.to_string()).and_then(|p| tb.probe(&p).map_err(|e| e.to_string()));
        match result {
            Ok(v) => println!("{text}\t{v}"),
            Err(e) => {
                failed += 1;
                eprintln!("error: line {}: {text}: {e}", n + 1);
            }
        }
    }
    if failed > 0 {
        eprintln!("error: {failed} line(s) could not be probed");
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}

fn run_bench(dir: &Path, per_table: u64, seed: u64) -> anyhow::Result<ExitCode> {
    let tb = open(dir)?;
    if tb.materials().is_empty() {
        return Err(bad_input(format!("{} holds no endgame tables", dir.display())));
    }
    let mut rng = seed ^ 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (mut quiet, mut capture) = (Vec::new(), Vec::new());
    for m in tb.materials() {
        let table = tb.table(m).map_err(bad_input)?;
        let ix = table.indexer();
        let mut drawn = 0;
        while drawn < per_table {
            let Some(p) = ix.position(next() % ix.size()) else { continue };
            drawn += 1;
            let p = if next() & 1 == 0 { p } else { p.flipped() };
            if p.has_capture() { &mut capture } else { &mut quiet }.push(p);
        }
    }
    println!("# seed {seed}, {} tables, every table read into memory first", tb.materials().len());
    for (name, set) in [("quiet", &quiet), ("capture", &capture)] {
        if set.is_empty() {
            continue;
        }
        let mut best = f64::INFINITY;
        let mut sum = 0u64;
        for _ in 0..5 {
            let t0 = Instant::now();
            for p in set.iter() {
                sum += tb.probe(p).map_err(bad_input)?.code() as u64;
            }
            best = best.min(t0.elapsed().as_secs_f64() * 1e9 / set.len() as f64);
        }
        println!("{name:<8} {:>9} positions  {best:>7.1} ns per probe (best of 5 rounds; checksum {sum})", set.len());
    }
    Ok(ExitCode::SUCCESS)
}

fn run_verify(dir: &Path, materials: &[String], threads: Option<usize>) -> anyhow::Result<ExitCode> {
    let tb = open(dir)?;
    let list: Vec<Material> = if materials.is_empty() {
        tb.materials()
    } else {
        materials.iter().map(|s| s.parse::<Material>().map_err(|e| bad_input(format!("--material: {e}")))).collect::<Result<_, _>>()?
    };
    if list.is_empty() {
        return Err(bad_input(format!("{} holds no endgame tables", dir.display())));
    }
    let pool = pool(threads)?;
    let mut bad = 0u64;
    for m in list {
        let size = draughts_egtb::Indexer::new(m).size();
        let pb = bar(size, &m.to_string());
        pb.set_message("verifying");
        let r = pool.install(|| verify::verify(&tb, m, &|n| pb.inc(n))).map_err(bad_input)?;
        pb.finish_and_clear();
        let ok = r.wrong == 0 && r.counts_match;
        println!(
            "{m}  {} positions  {} wins  {} draws  {} losses  {}",
            r.positions,
            r.counts.wins,
            r.counts.draws,
            r.counts.losses,
            if ok { "ok".to_owned() } else { format!("{} WRONG, header counts match: {}", r.wrong, r.counts_match) }
        );
        for (pos, stored, expected) in &r.examples {
            println!("  {}  stored {stored}, successors give {expected}", pos.to_fen());
        }
        bad += r.wrong + u64::from(!r.counts_match);
    }
    Ok(if bad == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
