//! `train.extra_games`: a run trains on the games of another run, which it only reads.

use std::path::Path;
use std::process::{Command, Output};

const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../configs/quickstart.toml");

fn draughts(run: &Path, args: &[&str], sets: &[String]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_draughts"));
    cmd.args(args).args(["--config", CONFIG, "--run", run.to_str().unwrap()]);
    for s in sets {
        cmd.args(["--set", s]);
    }
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Checkpoints of trained steps (not the initial step 0) in a run.
fn trained_checkpoints(run: &Path) -> Vec<String> {
    let dir = run.join("checkpoints");
    if !dir.exists() {
        return Vec::new();
    }
    listing(&dir).into_iter().filter(|f| f.ends_with(".json") && !f.ends_with("-s00000000.json")).collect()
}

#[test]
fn a_run_trains_on_another_runs_games_and_leaves_them_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    let o = draughts(&old, &["selfplay", "--games", "3"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let before = listing(&old.join("games"));
    let extra = format!("train.extra_games=[{:?}]", old.join("games").to_str().unwrap());

    // Without a reuse for them they fill the window and owe no step: nothing to train yet.
    let o = draughts(&new, &["train"], &[extra.clone()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("extra games:") && stderr(&o).contains("from 1 shards"), "{}", stderr(&o));
    assert_eq!(trained_checkpoints(&new), Vec::<String>::new());

    // With a reuse they are trained on (a run keeps one config: this is another run); the other
    // run's directory is not written.
    let trained = dir.path().join("trained");
    let o = draughts(&trained, &["train"], &[extra.clone(), "train.extra_reuse=4".to_owned()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let steps = trained_checkpoints(&trained);
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert_eq!(listing(&old.join("games")), before);

    // A directory that is not there is bad input naming the key and the directory.
    let o = draughts(&dir.path().join("missing"), &["train", "--steps", "1"], &["train.extra_games=[\"/nonexistent/games\"]".to_owned()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("train.extra_games") && stderr(&o).contains("/nonexistent/games"), "{}", stderr(&o));
}
