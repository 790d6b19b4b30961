//! Writes the report of an existing run directory: `cargo run -p draughts-report --example
//! report -- RUN_DIR [OUT_DIR]` (OUT_DIR defaults to RUN_DIR/report). The CLI's
//! `draughts report --run DIR` does the same.

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(run) = args.next().map(std::path::PathBuf::from) else {
        eprintln!("usage: report RUN_DIR [OUT_DIR]");
        std::process::exit(2);
    };
    let out = args
        .next()
        .map_or_else(|| run.join("report"), std::path::PathBuf::from);
    match draughts_report::write_report(&run, &out) {
        Ok(report) => {
            for w in &report.warnings {
                eprintln!("warning: {w}");
            }
            for p in &report.plots {
                println!("{}: {:?}", p.name, p.status);
            }
            println!("{}", report.summary_path.display());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
