//! Writes (or rewrites) the file list of a model directory's card: the SHA-256 of every file in
//! the directory but the card, as `draughts export` writes it. For model directories made before
//! cards carried the list, or changed by hand on purpose (a file added).
//!
//!     cargo run -p draughts-model --example card_sums -- models/NAME ...

use std::path::Path;
use std::process::ExitCode;

fn seal(dir: &Path) -> Result<usize, String> {
    let card_path = dir.join(draughts_model::CARD_FILE);
    let card = std::fs::read_to_string(&card_path).map_err(|e| format!("{}: {e}", card_path.display()))?;
    let list = draughts_model::directory_files(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let text = draughts_model::with_sums_section(&card, &draughts_model::sums_section(&list));
    let tmp = card_path.with_extension("md.tmp");
    std::fs::write(&tmp, text).and_then(|()| std::fs::rename(&tmp, &card_path)).map_err(|e| format!("{}: {e}", card_path.display()))?;
    draughts_model::verify_card(dir).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let mut failed = false;
    for arg in std::env::args().skip(1) {
        match seal(Path::new(&arg)) {
            Ok(n) => println!("{arg}: {n} files listed"),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}
