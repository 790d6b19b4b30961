//! Damaged files in a run, through the commands a user runs: a damaged shard is skipped with a
//! warning naming it and training goes on; a damaged checkpoint, sidecar or trainer state is an
//! error naming the file (exit 2), never loaded as if it were good.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/quickstart.toml");

fn draughts(run: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_draughts"));
    cmd.args(args);
    if matches!(args[0], "selfplay" | "train") {
        cmd.args(["--config", CONFIG, "--run", run.to_str().unwrap()]);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn flip(path: &Path, at: usize) {
    let mut b = std::fs::read(path).unwrap();
    let i = at.min(b.len() - 1);
    b[i] ^= 0x10;
    std::fs::write(path, b).unwrap();
}

fn files(dir: &Path, ends: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.to_string_lossy().ends_with(ends)).collect();
    v.sort();
    v
}

#[test]
fn damaged_run_files_are_named_skipped_or_refused() {
    let dir = std::env::temp_dir().join(format!("draughts-damaged-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = dir.join("run");
    for _ in 0..2 {
        let o = draughts(&run, &["selfplay", "--games", "3"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let shards = files(&run.join("games"), ".bin");
    assert_eq!(shards.len(), 2);

    // A bit flipped in one shard: skipped with a warning naming it, training goes on.
    let len = std::fs::metadata(&shards[0]).unwrap().len() as usize;
    flip(&shards[0], len / 2);
    let o = draughts(&run, &["train", "--steps", "2"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains(&*shards[0].to_string_lossy()) && err.contains("damaged"), "{err}");
    // A truncated one likewise.
    let bytes = std::fs::read(&shards[1]).unwrap();
    std::fs::write(&shards[1], &bytes[..bytes.len() - 7]).unwrap();
    let o = draughts(&run, &["train", "--steps", "2"]);
    let err = stderr(&o);
    assert!(err.contains(&*shards[1].to_string_lossy()) && err.contains("truncated"), "{err}");
    std::fs::write(&shards[1], &bytes).unwrap();

    let checkpoints = run.join("checkpoints");
    let newest = files(&checkpoints, ".json").pop().unwrap();
    let weights = newest.with_extension("safetensors");
    let model = newest.to_str().unwrap();
    let search = |model: &str| draughts(&run, &["search", "--model", model, "--depth", "1", "--fen", "W:W31-50:B1-20"]);
    assert!(search(model).status.success());

    // A bit flipped in the newest checkpoint's weights: training and play refuse it, naming it.
    let good = std::fs::read(&weights).unwrap();
    flip(&weights, good.len() / 3);
    for o in [draughts(&run, &["train", "--steps", "1"]), search(model), search(run.to_str().unwrap())] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains(&*weights.to_string_lossy()) && err.contains("damaged"), "{err}");
    }
    std::fs::write(&weights, &good).unwrap();

    // A bit flipped in its sidecar (inside the name, where the JSON stays valid).
    let sidecar = std::fs::read(&newest).unwrap();
    let at = String::from_utf8_lossy(&sidecar).find("\"name\": \"").unwrap() + 10;
    flip(&newest, at);
    let o = search(model);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(model) && stderr(&o).contains("damaged sidecar"), "{}", stderr(&o));
    std::fs::write(&newest, &sidecar).unwrap();

    // The trainer state cut short: the next training refuses to continue from it.
    let state = std::fs::read_dir(&checkpoints).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()).max().unwrap();
    let optimizer = state.join("optimizer.safetensors");
    let opt = std::fs::read(&optimizer).unwrap();
    std::fs::write(&optimizer, &opt[..opt.len() / 2]).unwrap();
    let o = draughts(&run, &["train", "--steps", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains(&*optimizer.to_string_lossy()), "{}", stderr(&o));
    std::fs::write(&optimizer, &opt).unwrap();
    let o = draughts(&run, &["train", "--steps", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
